import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { CapacityPolicy } from "../api/index.js";
import { parsePolicyYaml } from "../api/index.js";
import { parseResourceId } from "../api/resource-id.js";
import { demoMembers, replicaName } from "./group.js";

const POLICY: CapacityPolicy = parsePolicyYaml(
  readFileSync(resolve(import.meta.dirname, "../../examples/demo.yaml"), "utf8"),
);
const PRIMARY = POLICY.spec.target.resourceId;

describe("the demo's replica group", () => {
  const members = demoMembers(POLICY, [
    { name: "eastus", share: 0.5 },
    { name: "westus", share: 0.3 },
    { name: "westeurope", share: 0.2 },
  ]);

  it("makes the policy's instance the primary in the first region and a replica of it in each other", () => {
    expect(members.map((m) => [m.name, m.role, m.location, m.share])).toEqual([
      ["eastus", "Primary", "eastus", 0.5],
      ["westus", "Replica", "westus", 0.3],
      ["westeurope", "Replica", "westeurope", 0.2],
    ]);
    expect(members[0]?.resourceId).toBe(PRIMARY);
    expect(members[1]?.resourceId).toBe(`${PRIMARY}/replicas/chat-signalr-westus`);
    const ref = parseResourceId(members[2]?.resourceId ?? "");
    expect(ref).toMatchObject({
      replica: "chat-signalr-westeurope",
      primaryId: PRIMARY,
      name: "chat-signalr",
    });
    expect(members.map((m) => m.appServerName)).toEqual([
      "chat-signalr",
      "chat-signalr-westus",
      "chat-signalr-westeurope",
    ]);
  });

  it("gives each member a policy of its own: named after it, its target the member, its own app servers and their job", () => {
    expect(members.map((m) => m.policy.metadata.name)).toEqual([
      "chat-eastus",
      "chat-westus",
      "chat-westeurope",
    ]);
    for (const m of members) {
      expect(m.policy.spec.target.resourceId).toBe(m.resourceId);
      expect(m.policy.metadata.namespace).toBe(POLICY.metadata.namespace);
      expect(m.policy.spec.units).toEqual(POLICY.spec.units);
      expect(m.policy.spec.behavior).toEqual(POLICY.spec.behavior);
    }
    expect(members[1]?.policy.spec.appServer?.deploymentName).toBe("chat-hub-westus");
    const query = members[1]?.policy.spec.anticipation?.leadingSignal?.prometheus.query ?? "";
    expect(query).toContain('job="chat-hub-westus"');
    expect(query).not.toContain('job="chat-hub"');
    // The demo's own policy is left as it was.
    expect(POLICY.metadata.name).toBe("chat");
    expect(POLICY.spec.appServer?.deploymentName).toBe("chat-hub");
  });

  it("turns the Failover rule off in every member's policy on request, and only then", () => {
    expect(members.every((m) => m.policy.spec.anticipation?.failover?.enabled !== false)).toBe(true);
    const off = demoMembers(
      POLICY,
      [
        { name: "eastus", share: 0.5 },
        { name: "westus", share: 0.5 },
      ],
      { failoverRule: false },
    );
    expect(off.map((m) => m.policy.spec.anticipation?.failover)).toEqual([
      { enabled: false },
      { enabled: false },
    ]);
    expect(off[1]?.policy.spec.anticipation?.mode).toBe("Enabled");
  });

  it("names a replica by its member alone when instance and member pass 63 characters", () => {
    expect(replicaName("chat", "westus")).toBe("chat-westus");
    expect(replicaName("c".repeat(60), "westus")).toBe("westus");
  });

  it("refuses a replica as the policy's target and SKUs other than Premium", () => {
    const onReplica = {
      ...POLICY,
      spec: { ...POLICY.spec, target: { ...POLICY.spec.target, resourceId: `${PRIMARY}/replicas/r-westus` } },
    };
    expect(() => demoMembers(onReplica, [{ name: "eastus", share: 1 }])).toThrow(/target is a replica/);
    const standard = {
      ...POLICY,
      spec: { ...POLICY.spec, skus: ["Standard_S1", "Premium_P1"] },
    } as CapacityPolicy;
    expect(() => demoMembers(standard, [{ name: "eastus", share: 1 }])).toThrow(
      /Premium feature: the policy allows Standard_S1/,
    );
  });
});
