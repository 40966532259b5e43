import { describe, expect, it } from "vitest";
import { decide } from "./decide.js";
import { lostMembers, type ReplicaGroupObservation, type ReplicaMember, servesAgain } from "./failover.js";
import type { DecisionHistory } from "./history.js";
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
    let history: DecisionHistory | undefined;
    for (let pass = 0; pass < 6; pass++) {
      const d = decide(
        input({
          spec: spec(),
          samples: empty,
          replicaGroup: stopped,
          ...(history ? { history } : {}),
          now: NOW + pass * 30_000,
        }),
      );
      expect(d.desired?.units).toBe(10);
      expect(d.limitedBy).toBe("NotServing");
      expect(d.history.consecutiveFailures ?? 0).toBe(0);
      expect(d.conditions.find((c) => c.type === "Fallback")?.status ?? "False").toBe("False");
      expect(d.conditions.find((c) => c.type === "Ready")?.status).toBe("True");
      expect(d.reasons.find((r) => r.code === "MetricsUnavailable")?.message).toContain("not serving");
      ({ history } = d);
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

describe("a member whose metrics stop while the others' rise (an outage ARM does not show)", () => {
  /** Buckets of `values` at the minutes `fromMinute`… before NOW's newest complete one (4 min ago). */
  const series = (values: readonly number[]) =>
    values.map((value, i) => ({ startMs: NOW - 4 * MIN - (values.length - 1 - i) * MIN, value }));
  const completeBefore = NOW - 3 * MIN;
  // West carried 4,000 until 3 buckets ago, then nothing at all; the primary rose by 3,000 then.
  const silentWest = member(WEST, {
    connections: series([4000, 4000, 4000, 4000, 4000]).slice(0, 4).slice(0, 2),
  });
  const primary = member(PRIMARY, { connections: series([6000, 6000, 6000, 9000, 9000]) });

  it("is lost (ConnectionsVanished) once two buckets are silent, its level the one before", () => {
    const west = member(WEST, { connections: series([4000, 4000, 4000, 4000, 4000]).slice(0, 3) });
    const found = lostMembers({ self: PRIMARY, members: [primary, west] }, NOW, completeBefore);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ resourceId: WEST, cause: "ConnectionsVanished", connections: 4000 });
    expect(found[0]?.reason).toContain("metrics stopped");
    expect(servesAgain({ self: PRIMARY, members: [primary, west] }, found[0] as never, completeBefore)).toBe(
      false,
    );
  });

  it("is not lost when the others did not rise (its metrics alone are missing)", () => {
    const flat = member(PRIMARY, { connections: series([6000, 6000, 6000, 6000, 6000]) });
    expect(lostMembers({ self: PRIMARY, members: [flat, silentWest] }, NOW, completeBefore)).toEqual([]);
  });

  it("serves again when its metrics come back at its level", () => {
    const back = member(WEST, { connections: series([4000, 4000, 4000, 0, 3800]) });
    const lost = { resourceId: WEST, cause: "ConnectionsVanished" as const, connections: 4000 };
    expect(servesAgain({ self: PRIMARY, members: [primary, back] }, lost, completeBefore)).toBe(true);
  });
});

describe("a member found lost by its metrics, after its level has left the window", () => {
  const previous = {
    since: new Date(NOW - 20 * MIN).toISOString(),
    reason: "its metrics stopped at 11:40 UTC",
  };
  const quiet: ReplicaGroupObservation = { self: WEST, members: [member(PRIMARY), member(WEST)] };

  it("stays NotServing while it has no bucket with clients, counting no failure", () => {
    const d = decide(
      input({ spec: spec(), samples: empty, replicaGroup: quiet, history: historyWith(previous) }),
    );
    expect(d.limitedBy).toBe("NotServing");
    expect(d.history.consecutiveFailures ?? 0).toBe(0);
    expect(d.history.notServing).toMatchObject({ since: previous.since });
    expect(d.history.notServing?.until).toBeUndefined();
  });

  it("serves again from its first bucket with clients, and the hold after it begins", () => {
    const back = {
      self: WEST,
      members: [member(PRIMARY), member(WEST, { connections: [{ startMs: NOW - 4 * MIN, value: 2500 }] })],
    };
    const d = decide(
      input({ spec: spec(), samples: empty, replicaGroup: back, history: historyWith(previous) }),
    );
    expect(d.history.notServing?.until).toBeDefined();
  });
});

function historyWith(notServing: { since: string; reason: string }): DecisionHistory {
  return { recommendations: [], scaleEvents: [], consecutiveFailures: 0, notServing } as DecisionHistory;
}
