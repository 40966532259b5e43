import { describe, expect, it } from "vitest";
import { parseQuotaHeaders, QuotaRecorder } from "./quota.js";

describe("parseQuotaHeaders", () => {
  it("reads ARM's remaining-quota headers", () => {
    const r = parseQuotaHeaders([
      ["x-ms-ratelimit-remaining-subscription-reads", "11999"],
      ["X-Ms-Ratelimit-Remaining-Subscription-Writes", "1199"],
      [
        "x-ms-ratelimit-remaining-resource",
        "Microsoft.SignalRService/Get;99, Microsoft.SignalRService/Put;9",
      ],
      ["x-ms-routing-request-id", "WESTEUROPE:20250301T120000Z:abc"],
      ["content-type", "application/json"],
    ]);
    expect(r).toEqual({
      remaining: { "subscription-reads": 11999, "subscription-writes": 1199 },
      resource: { "Microsoft.SignalRService/Get": 99, "Microsoft.SignalRService/Put": 9 },
      servedBy: "westeurope",
    });
  });

  it("returns undefined without quota headers", () => {
    expect(parseQuotaHeaders([["x-ms-routing-request-id", "EASTUS:x:y"]])).toBeUndefined();
  });

  it("records the latest reading per scope", () => {
    const q = new QuotaRecorder();
    const scope = { subscriptionId: "s", region: "westeurope" };
    q.record(
      scope,
      { remaining: { "subscription-reads": 10, "subscription-writes": 5 }, resource: {} },
      new Date(1),
    );
    q.record(scope, { remaining: { "subscription-reads": 9 }, resource: {} }, new Date(2));
    expect(q.get(scope)?.remaining).toEqual({ "subscription-reads": 9, "subscription-writes": 5 });
    expect(q.snapshot()).toHaveLength(1);
  });
});
