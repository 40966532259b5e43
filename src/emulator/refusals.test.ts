import { describe, expect, it } from "vitest";
import { quotaExceededError, RefusalRules, RuleSpecError } from "./refusals.js";

const SUB = "/subscriptions/sub-a";
const RG = `${SUB}/resourceGroups/rg`;
const ID = `${RG}/providers/Microsoft.SignalRService/SignalR/chat`;

describe("RefusalRules", () => {
  it("a lock covers its scope and what is under it, case-insensitively, on segment boundaries", () => {
    const rules = new RefusalRules();
    rules.addLock({ scope: `${RG}/`, level: "ReadOnly" });
    rules.addLock({ scope: `${SUB}/resourceGroups/rg2`, level: "ReadOnly", name: "other" });
    rules.addLock({ scope: ID, level: "CanNotDelete" });
    expect(rules.writeLocksOn(ID.toUpperCase()).map((l) => l.scope)).toEqual([RG]);
    expect(
      rules.writeLocksOn(`${SUB}/resourceGroups/rg22/providers/Microsoft.SignalRService/SignalR/x`),
    ).toEqual([]);
    expect(rules.removeLocks(RG.toUpperCase())).toBe(1);
    expect(rules.writeLocksOn(ID)).toEqual([]);
    rules.addLock({ scope: SUB, level: "ReadOnly" });
    expect(rules.writeLocksOn(ID).map((l) => l.name)).toEqual(["emulator-ReadOnly"]);
    expect(rules.locks()).toHaveLength(3);
  });

  it.each([
    [{ scope: "rg", level: "ReadOnly" }, "scope"],
    [{ scope: "/subscriptions/", level: "ReadOnly" }, "scope"],
    [{ scope: `${SUB}/providers/x`, level: "ReadOnly" }, "scope"],
    [{ scope: RG, level: "Frozen" }, "level"],
    [{ scope: RG, level: "ReadOnly", name: "a/b" }, "name"],
  ])("refuses the lock %j", (spec, field) => {
    expect(() => new RefusalRules().addLock(spec)).toThrow(RuleSpecError);
    expect(() => new RefusalRules().addLock(spec)).toThrow(field);
  });

  it("a policy denies its SKUs (any case) or more units than maxUnits, within its scope", () => {
    const rules = new RefusalRules();
    rules.setPolicy({ name: "no-p2", deny: { skus: ["PREMIUM_P2"] } });
    rules.setPolicy({ name: "small", scope: `${SUB}/resourceGroups/other`, deny: { maxUnits: 10 } });
    const target = { resourceId: ID, name: "chat", subscriptionId: "sub-a", sku: "Premium_P2", units: 200 };
    expect(rules.denyingPolicies(target).map((p) => p.name)).toEqual(["no-p2"]);
    expect(rules.denyingPolicies({ ...target, sku: "Premium_P1", units: 100 })).toEqual([]);
    rules.setPolicy({ name: "small", deny: { maxUnits: 10 } });
    expect(rules.denyingPolicies({ ...target, sku: "Premium_P1", units: 11 }).map((p) => p.name)).toEqual([
      "small",
    ]);
    expect(rules.denyingPolicies({ ...target, sku: "Premium_P1", units: 10 })).toEqual([]);
    expect(rules.removePolicy("SMALL")).toBe(true);
    expect(rules.policies().map((p) => p.name)).toEqual(["no-p2"]);
  });

  it.each([
    [{ name: "", deny: { maxUnits: 1 } }, "name"],
    [{ name: "p", deny: {} }, "skus or maxUnits"],
    [{ name: "p", deny: { skus: "Premium_P2" } }, "deny.skus"],
    [{ name: "p", deny: { maxUnits: -1 } }, "deny.maxUnits"],
    [{ name: "p", deny: [] }, "deny must be an object"],
  ])("refuses the policy %j", (spec, field) => {
    expect(() => new RefusalRules().setPolicy(spec)).toThrow(field);
  });

  it("the most specific quota applies; none is unlimited", () => {
    const rules = new RefusalRules();
    expect(rules.quotaFor("sub-a", "westeurope", "SignalR")).toBeUndefined();
    rules.setQuota({ units: 150 });
    rules.setQuota({ subscriptionId: "SUB-A", region: "West Europe", units: 300 });
    rules.setQuota({ subscriptionId: "sub-a", region: "westeurope", service: "WebPubSub", units: 10 });
    expect(rules.quotaFor("sub-a", "westeurope", "SignalR")?.units).toBe(300);
    expect(rules.quotaFor("sub-a", "westeurope", "WebPubSub")?.units).toBe(10);
    expect(rules.quotaFor("sub-a", "eastus", "SignalR")?.units).toBe(150);
    expect(rules.removeQuota({ subscriptionId: "sub-a", region: "westeurope" })).toBe(true);
    expect(rules.quotaFor("sub-a", "westeurope", "SignalR")?.units).toBe(150);
    expect(() => rules.setQuota({ units: 1.5 })).toThrow("units");
    expect(() => rules.setQuota({ service: "Redis", units: 1 })).toThrow("service");
  });

  it("a quota refuses only what adds units over it", () => {
    const use = { service: "SignalR" as const, region: "westeurope", inUse: 140, requested: 10 };
    expect(quotaExceededError({ units: 150 }, use)).toBeUndefined();
    expect(quotaExceededError(undefined, { ...use, requested: 1000 })).toBeUndefined();
    expect(quotaExceededError({ units: 100 }, { ...use, requested: -40 })).toBeUndefined();
    expect(quotaExceededError({ units: 149 }, use)?.status).toBe(409);
  });
});
