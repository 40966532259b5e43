import { describe, expect, it } from "vitest";
import { checkTenancy, parseTenancy } from "./tenancy.js";

describe("tenancy", () => {
  const map = parseTenancy(
    "namespaces:\n  chat:\n    - subscriptionId: SUB-A\n      resourceGroup: chat-prod\n  '*':\n    - subscriptionId: sub-b\n",
  );
  it("allows matching scopes, case-insensitively", () => {
    expect(checkTenancy(map, "chat", { subscriptionId: "sub-a", resourceGroup: "CHAT-PROD" }).allowed).toBe(
      true,
    );
    expect(checkTenancy(map, "other", { subscriptionId: "sub-b", resourceGroup: "x" }).allowed).toBe(true);
  });
  it("refuses other scopes with a reason", () => {
    const r = checkTenancy(map, "chat", { subscriptionId: "sub-a", resourceGroup: "billing" });
    expect(r).toMatchObject({ allowed: false });
    expect(r.allowed ? "" : r.message).toContain(
      "may only target /subscriptions/SUB-A/resourceGroups/chat-prod",
    );
    expect(checkTenancy(map, "chat", { subscriptionId: "sub-b", resourceGroup: "chat-prod" }).allowed).toBe(
      false,
    );
  });
  it("allows everything without a map and rejects malformed files", () => {
    expect(checkTenancy(undefined, "x", { subscriptionId: "s", resourceGroup: "r" }).allowed).toBe(true);
    expect(() => parseTenancy("namespaces: { a: [ { resourceGroup: x } ] }")).toThrow(
      /subscriptionId|expected/,
    );
    expect(() => parseTenancy("{{")).toThrow(/not valid YAML/);
  });
});
