import { describe, expect, it } from "vitest";
import { decide } from "./decide.js";
import type { ReplicaGroupObservation, ReplicaMember } from "./failover.js";
import { blank, input, NOW, spec } from "./testing.js";

const MIN = 60_000;
const PRIMARY =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat";
const WEST = `${PRIMARY}/replicas/westus`;

function member(resourceId: string, extra: Partial<ReplicaMember> = {}): ReplicaMember {
  return {
    resourceId,
    role: resourceId === PRIMARY ? "Primary" : "Replica",
    location: resourceId === PRIMARY ? "eastus" : "westus",
    serving: true,
    sku: "Premium_P1",
    units: 10,
    connections: [],
    ...extra,
  };
}

/** West is stopped (ARM says so); the policy on it reads no metrics at all. */
const stopped: ReplicaGroupObservation = {
  self: WEST,
  members: [member(PRIMARY), member(WEST, { serving: false, notServingReason: 'resourceStopped is "true"' })],
};
const empty = Array.from({ length: 15 }, (_, i) => blank(NOW - (15 - i) * MIN));

describe("a member that does not serve and so has no metrics", () => {
  it("holds its size as NotServing, without counting the pass as a failure or reaching the fallback", () => {
    let history = {};
    for (let pass = 0; pass < 6; pass++) {
      const d = decide(
        input({ spec: spec(), samples: empty, replicaGroup: stopped, history, now: NOW + pass * 30_000 }),
      );
      expect(d.desired?.units).toBe(10);
      expect(d.limitedBy).toBe("NotServing");
      expect(d.history.consecutiveFailures ?? 0).toBe(0);
      expect(d.conditions.find((c) => c.type === "Fallback")?.status ?? "False").toBe("False");
      expect(d.conditions.find((c) => c.type === "Ready")?.status).toBe("True");
      expect(d.reasons.find((r) => r.code === "MetricsUnavailable")?.message).toContain("not serving");
      history = d.history;
    }
  });

  it("still counts a failed fetch (not mere absence) towards the fallback", () => {
    const d = decide(
      input({
        spec: spec(),
        samples: [],
        failure: { kind: "Network", message: "connect ECONNREFUSED" },
        replicaGroup: stopped,
      }),
    );
    expect(d.history.consecutiveFailures).toBe(1);
    expect(d.limitedBy).toBe("FailureCounted");
  });

  it("a member that serves with no metrics fails as before", () => {
    const serving = { ...stopped, members: [member(PRIMARY), member(WEST)] };
    const d = decide(input({ spec: spec(), samples: empty, replicaGroup: serving }));
    expect(d.history.consecutiveFailures).toBe(1);
    expect(d.limitedBy).toBe("FailureCounted");
  });
});
