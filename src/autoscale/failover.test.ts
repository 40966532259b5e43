import { describe, expect, it } from "vitest";
import type { AnticipationSpec, AnticipationStatus } from "../api/index.js";
import { type AnticipationInput, anticipate } from "./anticipation.js";
import { decide } from "./decide.js";
import {
  lostMembers,
  notServingHold,
  type ReplicaGroupObservation,
  type ReplicaMember,
  selfLost,
  servesAgain,
} from "./failover.js";
import { input, NOW, samples, spec } from "./testing.js";

const MIN = 60_000;
const DELAY_MS = 3 * MIN;
/** The newest complete bucket at NOW with a 3-minute ingestion delay starts 4 minutes before. */
const NEWEST = NOW - 4 * MIN;
const PRIMARY =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat";
const id = (name: string) => (name === "eastus" ? PRIMARY : `${PRIMARY}/replicas/${name}`);

/** Buckets of `values`, the last starting at NEWEST (oldest first). */
function buckets(values: readonly number[], newest = NEWEST) {
  return values.map((value, i) => ({ startMs: newest - (values.length - 1 - i) * MIN, value }));
}

function member(name: string, values: readonly number[], extra: Partial<ReplicaMember> = {}): ReplicaMember {
  return {
    resourceId: id(name),
    role: name === "eastus" ? "Primary" : "Replica",
    location: name,
    serving: true,
    sku: "Premium_P1",
    units: 10,
    connections: buckets(values),
    ...extra,
  };
}

function group(self: string, ...members: ReplicaMember[]): ReplicaGroupObservation {
  return { self: id(self), members };
}

const lost = (g: ReplicaGroupObservation) => lostMembers(g, NOW, NOW - DELAY_MS);

describe("lostMembers", () => {
  it("finds a member ARM says is not serving, with its level from the buckets before ARM showed it", () => {
    const g = group(
      "eastus",
      member("eastus", [6000, 6000, 6000, 6000, 6000, 6000, 6000]),
      member("westus", [3800, 3900, 4000, 4000, 3950, 4000, 4000], {
        serving: false,
        notServingReason: 'resourceStopped is "true"',
      }),
    );
    const found = lost(g);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      resourceId: id("westus"),
      cause: "NotServing",
      reason: 'ARM: resourceStopped is "true"',
      sinceMs: NOW,
      connections: 4000,
    });
  });

  it("finds a member whose connections vanished while the others rose", () => {
    const g = group(
      "eastus",
      member("eastus", [6000, 6000, 6000, 6000, 6000, 8800, 8900]),
      member("westus", [4000, 4000, 4000, 4000, 4000, 12, 8], { serving: undefined }),
      member("westeurope", [2000, 2000, 2000, 2000, 2000, 3100, 3100]),
    );
    const found = lost(g);
    expect(found.map((l) => [l.location, l.cause])).toEqual([["westus", "ConnectionsVanished"]]);
    expect(found[0]?.connections).toBe(4000);
    expect(found[0]?.sinceMs).toBe(NEWEST - MIN);
    expect(found[0]?.reason).toContain("fell from 4,000");
  });

  it("reads only complete buckets: two low buckets still filling are no loss", () => {
    // The two low buckets start after NEWEST: they end after now − the ingestion delay.
    const late = (values: number[]) => buckets(values, NEWEST + 2 * MIN);
    const g = group(
      "eastus",
      member("eastus", [], { connections: late([6000, 6000, 6000, 6000, 6000, 9000, 9000]) }),
      member("westus", [], { connections: late([4000, 4000, 4000, 4000, 4000, 0, 0]) }),
    );
    expect(lost(g)).toEqual([]);
  });

  it("does not take a normal dip of one member for a loss", () => {
    const g = group(
      "eastus",
      member("eastus", [6000, 6000, 6000, 6000, 6000, 6000, 6000]),
      member("westus", [4000, 4000, 4000, 4000, 4000, 2200, 1900]),
    );
    expect(lost(g)).toEqual([]);
  });

  it("does not take clients that left (nobody else rose) for a loss, even to zero", () => {
    const g = group(
      "eastus",
      member("eastus", [6000, 6000, 6000, 6000, 6000, 6050, 5990]),
      member("westus", [4000, 4000, 4000, 4000, 4000, 0, 0]),
    );
    expect(lost(g)).toEqual([]);
  });

  it("does not take a sibling's scale-in for a loss: its removed units' clients reconnect to it", () => {
    // westus went from 10 to 5 units: one bucket dips as the removed units' clients reconnect.
    const g = group(
      "eastus",
      member("eastus", [6000, 6000, 6000, 6000, 6000, 6100, 6000]),
      member("westus", [4000, 4000, 4000, 4000, 4000, 2600, 3950], { units: 5 }),
    );
    expect(lost(g)).toEqual([]);
  });

  it("ignores a member with too few connections to matter", () => {
    const g = group(
      "eastus",
      member("eastus", [6000, 6000, 6000, 6000, 6000, 6080, 6080]),
      member("westus", [80, 80, 80, 80, 80, 0, 0]),
    );
    expect(lost(g)).toEqual([]);
  });
});

describe("selfLost and servesAgain", () => {
  it("says the target itself is not serving, by ARM or by its metrics", () => {
    const byArm = group("westus", member("eastus", [6000]), member("westus", [4000], { serving: false }));
    expect(selfLost(byArm, NOW, NOW - DELAY_MS)?.cause).toBe("NotServing");
    const byMetrics = group(
      "westus",
      member("eastus", [6000, 6000, 6000, 6000, 6000, 9000, 9000]),
      member("westus", [4000, 4000, 4000, 4000, 4000, 0, 0]),
    );
    expect(selfLost(byMetrics, NOW, NOW - DELAY_MS)?.cause).toBe("ConnectionsVanished");
    expect(selfLost(undefined, NOW, NOW - DELAY_MS)).toBeUndefined();
  });

  it("a NotServing member serves again when ARM says so; unread keeps it lost", () => {
    const rec = { resourceId: id("westus"), cause: "NotServing" as const, connections: 4000 };
    const at = (serving: boolean | undefined) =>
      servesAgain(group("eastus", member("eastus", [6000]), member("westus", [0], { serving })), rec, NOW);
    expect(at(true)).toBe(true);
    expect(at(undefined)).toBe(false);
    expect(at(false)).toBe(false);
  });

  it("a vanished member serves again when its connections come back above a tenth of its level", () => {
    const rec = { resourceId: id("westus"), cause: "ConnectionsVanished" as const, connections: 4000 };
    const at = (v: number) =>
      servesAgain(group("eastus", member("eastus", [6000]), member("westus", [0, v])), rec, NOW);
    expect(at(300)).toBe(false);
    expect(at(900)).toBe(true);
    // A replica deleted from the group: its clients stay where they are, measured.
    expect(servesAgain(group("eastus", member("eastus", [6000])), rec, NOW)).toBe(true);
  });
});

/** Anticipation on; the loss ask alone (no reserve) unless `extra` sets one. */
const enabled = (extra: Partial<AnticipationSpec> = {}): AnticipationSpec => ({
  mode: "Enabled",
  scaleDuration: "4m",
  headroom: { peakPercent: 0, horizon: "1h" },
  failover: { enabled: true, reservePercent: 0 },
  ...extra,
});

function anticipation(
  replicaGroup: ReplicaGroupObservation | undefined,
  extra: Partial<AnticipationInput> = {},
) {
  return anticipate({
    spec: enabled(),
    nowMs: NOW,
    pollSeconds: 30,
    ingestionDelaySeconds: 180,
    windowSeconds: 300,
    windowToMs: NEWEST + MIN,
    tolerance: 0.1,
    demand: [],
    scaleEvents: [],
    connectionsPerUnit: 800,
    ...(replicaGroup ? { replicaGroup } : {}),
    ...extra,
  });
}

const failoverAsk = (a: ReturnType<typeof anticipate>) => a?.asks.find((x) => x.rule === "Failover");

/** eastus 6,000 and westeurope 2,000 serving; westus (4,000) stopped, as ARM shows it at once. */
function westusDown(westus: number[] = [4000, 4000, 4000, 4000, 4000]): ReplicaGroupObservation {
  return group(
    "eastus",
    member("eastus", [6000, 6000, 6000, 6000, 6000]),
    member("westus", westus, { serving: false, notServingReason: 'resourceStopped is "true"' }),
    member("westeurope", [2000, 2000, 2000, 2000, 2000]),
  );
}

describe("the Failover rule", () => {
  it("asks for its own connections plus its share of the lost member's, by the survivors' connections", () => {
    const a = anticipation(westusDown());
    const ask = failoverAsk(a);
    // share 6,000 ÷ (6,000 + 2,000) = 0.75: 6,000 + 0.75 × 4,000 = 9,000 connections at 800 a unit.
    expect(ask?.units).toBeCloseTo(9000 / 800, 6);
    expect(a?.status.failover).toMatchObject({
      ownConnections: 6000,
      share: 0.75,
      expectedConnections: 9000,
    });
    expect(a?.status.failover?.lost).toEqual([
      expect.objectContaining({ resourceId: id("westus"), cause: "NotServing", connections: 4000 }),
    ]);
    expect(ask?.message).toContain("westus (westus) not serving since 12:00 UTC");
    expect(ask?.message).toContain("expects 9,000 connections");
    expect(a?.status.drivenBy).toBe("Failover");
  });

  it("the other survivor asks for its own share", () => {
    const g = { ...westusDown(), self: id("westeurope") };
    // 2,000 + 0.25 × 4,000 = 3,000 connections.
    expect(failoverAsk(anticipation(g))?.units).toBeCloseTo(3000 / 800, 6);
  });

  it("splits by units when a survivor's connections are unknown", () => {
    const g = group(
      "eastus",
      member("eastus", [6000, 6000, 6000], { units: 30 }),
      member("westus", [4000, 4000, 4000], { serving: false }),
      member("westeurope", [], { units: 10 }),
    );
    const a = anticipation(g);
    expect(a?.status.failover?.share).toBe(0.75);
    expect(failoverAsk(a)?.units).toBeCloseTo((6000 + 3000) / 800, 6);
  });

  it("keeps the ask while the member is down after the window has moved past its drop", () => {
    const first = anticipation(westusDown());
    const later = NOW + 20 * MIN;
    // Twenty minutes on: every bucket of westus is 0 and the survivors carry its clients.
    const g = group(
      "eastus",
      member("eastus", [], { connections: buckets([9000, 9000, 9000, 9000, 9000], later - 4 * MIN) }),
      member("westus", [], { serving: false, connections: buckets([0, 0, 0, 0, 0], later - 4 * MIN) }),
      member("westeurope", [], { connections: buckets([3000, 3000, 3000, 3000, 3000], later - 4 * MIN) }),
    );
    const a = anticipation(g, { nowMs: later, previous: first?.status as AnticipationStatus });
    expect(failoverAsk(a)?.units).toBeCloseTo(9000 / 800, 6);
    expect(a?.status.failover?.lost[0]?.since).toBe(new Date(NOW).toISOString());
  });

  it("keeps a loss found by the metrics while its connections stay vanished, and ends it when they return", () => {
    const g = group(
      "eastus",
      member("eastus", [6000, 6000, 6000, 6000, 6000, 8800, 8900]),
      member("westus", [4000, 4000, 4000, 4000, 4000, 0, 0], { serving: undefined }),
      member("westeurope", [2000, 2000, 2000, 2000, 2000, 3100, 3100]),
    );
    const first = anticipation(g);
    expect(first?.status.failover).toMatchObject({
      ownConnections: 6000,
      share: 0.75,
      expectedConnections: 9000,
    });
    const later = NOW + 15 * MIN;
    const at = (westus: number) =>
      anticipation(
        group(
          "eastus",
          member("eastus", [], { connections: buckets([8900, 8900, 8900], later - 4 * MIN) }),
          member("westus", [], { serving: true, connections: buckets([0, 0, westus], later - 4 * MIN) }),
          member("westeurope", [], { connections: buckets([3100, 3100, 3100], later - 4 * MIN) }),
        ),
        { nowMs: later, previous: first?.status as AnticipationStatus },
      );
    expect(failoverAsk(at(0))?.units).toBeCloseTo(9000 / 800, 6);
    const back = at(1500);
    expect(failoverAsk(back)).toBeUndefined();
    expect(back?.status.failover).toBeUndefined();
  });

  it("reads the measured need only before the window sees the loss, and keeps it", () => {
    // Before: the window ends before the loss (NOW); 16 units measured → × 9,000 ÷ 6,000.
    const first = anticipation(westusDown(), { measuredNeedUnits: 16 });
    expect(first?.status.failover?.ownUnits).toBe(16);
    expect(failoverAsk(first)?.units).toBeCloseTo(24, 6);
    // Later the window holds the arrivals (30 units measured): the need before them is kept.
    const later = anticipation(westusDown(), {
      nowMs: NOW + 10 * MIN,
      windowToMs: NOW + 6 * MIN,
      measuredNeedUnits: 30,
      previous: first?.status as AnticipationStatus,
    });
    expect(later?.status.failover?.ownUnits).toBe(16);
    expect(failoverAsk(later)?.units).toBeCloseTo(24, 6);
  });

  it("ends when the member serves again", () => {
    const first = anticipation(westusDown());
    const recovered = {
      ...westusDown(),
      members: westusDown().members.map((m) => ({ ...m, serving: true })),
    };
    const a = anticipation(recovered, {
      nowMs: NOW + 30 * MIN,
      previous: first?.status as AnticipationStatus,
    });
    expect(failoverAsk(a)).toBeUndefined();
    expect(a?.status.failover).toBeUndefined();
  });

  it("asks nothing without a replica group, when turned off, or for a member that is itself not serving", () => {
    expect(failoverAsk(anticipation(undefined))).toBeUndefined();
    expect(
      failoverAsk(anticipation(westusDown(), { spec: enabled({ failover: { enabled: false } }) })),
    ).toBeUndefined();
    const selfDown = { ...westusDown(), self: id("westus") };
    expect(failoverAsk(anticipation(selfDown))).toBeUndefined();
  });
});

/** Every member serving, flat: eastus 6,000, westus 4,000, westeurope 2,000. */
function allServing(
  self = "eastus",
  eastus: number[] = [6000, 6000, 6000, 6000, 6000],
): ReplicaGroupObservation {
  return group(
    self,
    member("eastus", eastus),
    member("westus", [4000, 4000, 4000, 4000, 4000]),
    member("westeurope", [2000, 2000, 2000, 2000, 2000]),
  );
}

const reserve = (percent: number) => enabled({ failover: { enabled: true, reservePercent: percent } });

describe("the failover reserve", () => {
  it("holds its part of the clients of the sibling whose loss would send it the most", () => {
    const a = anticipation(allServing(), { spec: reserve(50) });
    const ask = failoverAsk(a);
    // westus lost: 6,000 ÷ (6,000 + 2,000) = 75 % of 4,000 = 3,000; westeurope lost: 60 % of
    // 2,000 = 1,200. For westus: 6,000 + 50 % × 3,000 = 7,500 connections at 800 a unit.
    expect(ask?.units).toBeCloseTo(7500 / 800, 6);
    expect(ask?.message).toContain("failover reserve: if westus (westus) stopped serving (4,000 connections");
    expect(ask?.message).toContain("75 % of them (3,000)");
    expect(ask?.message).toContain("7,500 connections");
    // Nothing is lost: no failover status.
    expect(a?.status.failover).toBeUndefined();
  });

  it("the smaller member reserves for the larger sibling", () => {
    const a = anticipation(allServing("westeurope"), { spec: reserve(50) });
    // eastus lost: 2,000 ÷ (2,000 + 4,000) of 6,000 = 2,000; westus lost: 2,000 ÷ 8,000 of 4,000 =
    // 1,000. 2,000 + 50 % × 2,000 = 3,000 connections.
    expect(failoverAsk(a)?.units).toBeCloseTo(3000 / 800, 6);
    expect(failoverAsk(a)?.message).toContain("if chat (eastus) stopped serving");
  });

  it("reads a rising member at the time capacity asked now lands", () => {
    // eastus rises 100 connections a minute; its newest complete bucket's middle is 3.5 minutes
    // before now, and capacity lands 4.5 minutes after (scale 4 min + poll 30 s): 8 minutes of
    // rise on its level of 6,000 → 6,800. The share is read on the levels now (75 %).
    const ramp = Array.from({ length: 10 }, (_, i) => 5100 + 100 * i);
    const a = anticipation(allServing("eastus", ramp), { spec: reserve(50) });
    expect(failoverAsk(a)?.units).toBeCloseTo((6800 + 0.5 * 3000) / 800, 6);
    // Noise around a flat level is no rise.
    const noisy = [6000, 5800, 6100, 5900, 6050, 5950, 6000, 5850, 6100, 5900];
    expect(failoverAsk(anticipation(allServing("eastus", noisy), { spec: reserve(50) }))?.units).toBeCloseTo(
      // its level is the highest of the newest 5 (6,100), and its share 6,100 ÷ 8,100.
      (6100 + 0.5 * (6100 / 8100) * 4000) / 800,
      6,
    );
  });

  it("holds 50 % without the setting; nothing at 0 %, with the rule off, or without a group", () => {
    // 6,000 + 50 % × 3,000 = 7,500 connections.
    const unset = enabled({ failover: { enabled: true } });
    expect(failoverAsk(anticipation(allServing(), { spec: unset }))?.units).toBeCloseTo(7500 / 800, 6);
    expect(failoverAsk(anticipation(allServing(), { spec: reserve(0) }))).toBeUndefined();
    expect(
      failoverAsk(
        anticipation(allServing(), { spec: enabled({ failover: { enabled: false, reservePercent: 100 } }) }),
      ),
    ).toBeUndefined();
    expect(failoverAsk(anticipation(undefined, { spec: reserve(100) }))).toBeUndefined();
  });

  it("gives way to the loss ask once a member stops serving", () => {
    const ask = failoverAsk(anticipation(westusDown(), { spec: reserve(100) }));
    // The loss ask of the Failover rule: 9,000 connections, not a reserve on top of them.
    expect(ask?.units).toBeCloseTo(9000 / 800, 6);
    expect(ask?.message).toMatch(/^failover: /);
  });

  it("scales out through the planner, and units.max holds", () => {
    const connectionsSpec = (max: number) => {
      const s = spec({
        units: { min: 1, max },
        metrics: { connections: { targetPercent: 80 } },
        anticipation: reserve(100),
        behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
      });
      delete s.metrics.serverLoad;
      return s;
    };
    const at = (max: number) =>
      decide(
        input({
          spec: connectionsSpec(max),
          samples: samples(
            { connections: 6000, connectionQuotaUtilizationPercent: 60 },
            { newestMinutesAgo: 4 },
          ),
          replicaGroup: allServing(),
        }),
      );
    // 6,000 + 100 % × 3,000 = 9,000 connections at 800 a unit: 11.25 → 20 units on the P1 ladder.
    const d = at(100);
    expect(d.desired?.units).toBe(20);
    expect(d.reasons.find((r) => r.code === "Anticipated")?.name).toBe("Failover");
    expect(d.anticipation?.failover).toBeUndefined();
    // At units.max 10 the reserve asks for more than may be: the current 10 units hold.
    expect(at(10).desired?.units).toBe(10);
  });
});

describe("decide with a replica group", () => {
  const connectionsSpec = () => {
    const s = spec({
      metrics: { connections: { targetPercent: 80 } },
      anticipation: enabled(),
      behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
    });
    delete s.metrics.serverLoad;
    return s;
  };

  it("a survivor scales out for its share at the first pass that sees the loss (Anticipated, Failover)", () => {
    const d = decide(
      input({
        spec: connectionsSpec(),
        samples: samples(
          { connections: 6000, connectionQuotaUtilizationPercent: 60 },
          { newestMinutesAgo: 4 },
        ),
        replicaGroup: westusDown(),
      }),
    );
    // 9,000 connections at 800 a unit: 11.25 → 20 units on the Premium_P1 ladder.
    expect(d.desired?.units).toBe(20);
    expect(d.action).toBe("Scale");
    expect(d.reasons.find((r) => r.code === "Anticipated")?.name).toBe("Failover");
    expect(d.anticipation?.failover?.expectedConnections).toBe(9000);
  });

  it("a member that is itself not serving is not scaled in on its vanished connections (NotServing)", () => {
    const westus = member("westus", [0, 0, 0, 0, 0], {
      serving: false,
      notServingReason: 'resourceStopped is "true"',
    });
    const d = decide(
      input({
        spec: connectionsSpec(),
        samples: samples({ connections: 0, connectionQuotaUtilizationPercent: 0 }, { newestMinutesAgo: 4 }),
        replicaGroup: { self: id("westus"), members: [member("eastus", [9000, 9000]), westus] },
      }),
    );
    expect(d.desired?.units).toBe(10);
    expect(d.limitedBy).toBe("NotServing");
    expect(d.scaleIn.blockedBy).toContain("NotServing");
    expect(d.reasons.find((r) => r.code === "NotServing")?.message).toContain('resourceStopped is "true"');
    // The same member serving: the idle instance scales in.
    const serving = decide(
      input({
        spec: connectionsSpec(),
        samples: samples({ connections: 0, connectionQuotaUtilizationPercent: 0 }, { newestMinutesAgo: 4 }),
        replicaGroup: {
          self: id("westus"),
          members: [member("eastus", [9000, 9000]), { ...westus, serving: true }],
        },
      }),
    );
    expect(serving.desired?.units).toBeLessThan(10);
    // Serving again five minutes ago after an outage: still held (its clients come back as they reconnect).
    const after = decide(
      input({
        spec: connectionsSpec(),
        samples: samples({ connections: 0, connectionQuotaUtilizationPercent: 0 }, { newestMinutesAgo: 4 }),
        replicaGroup: {
          self: id("westus"),
          members: [member("eastus", [9000, 9000]), { ...westus, serving: true }],
        },
        history: {
          recommendations: [],
          scaleEvents: [],
          consecutiveFailures: 0,
          notServing: {
            since: "2025-06-02T11:00:00.000Z",
            until: "2025-06-02T11:55:00.000Z",
            reason: "ARM: stopped",
          },
        },
      }),
    );
    expect(after.limitedBy).toBe("NotServing");
    expect(after.history.notServing?.until).toBe("2025-06-02T11:55:00.000Z");
  });

  it("scales the measured need read before the arrivals like the connections (a full quota's doubling included)", () => {
    // eastus's quota is full at 6 units (6,000 connections): the saturated signal asks for double.
    const d = decide(
      input({
        spec: connectionsSpec(),
        current: { sku: "Premium_P1", units: 6 },
        samples: samples(
          { connections: 6000, connectionQuotaUtilizationPercent: 100 },
          { newestMinutesAgo: 4 },
        ),
        replicaGroup: westusDown(),
      }),
    );
    const failover = d.anticipation?.rules?.find((r) => r.rule === "Failover");
    const measured = Math.max(
      ...d.signals.flatMap((s) => (s.desiredUnits !== undefined ? [s.desiredUnits] : [])),
    );
    // The measured need × 9,000 ÷ 6,000 (own + 0.75 × 4,000 over own), above the 11.25 of the levels.
    expect(measured).toBeGreaterThanOrEqual(12);
    expect(failover?.units).toBe(Math.ceil(measured * 1.5));
    expect(d.anticipation?.failover?.ownUnits).toBe(measured);
  });
});

describe("notServingHold", () => {
  const down = {
    resourceId: id("westus"),
    location: "westus",
    cause: "NotServing" as const,
    reason: "ARM: stopped",
    sinceMs: NOW - 10 * MIN,
    connections: 4000,
  };

  it("holds while the instance does not serve, keeping when it was first seen", () => {
    const first = notServingHold(undefined, down, NOW, 1800);
    expect(first.record).toEqual({ since: new Date(NOW - 10 * MIN).toISOString(), reason: "ARM: stopped" });
    expect(first.message).toContain("not serving clients since");
    const later = notServingHold(first.record, { ...down, sinceMs: NOW + 5 * MIN }, NOW + 5 * MIN, 1800);
    expect(later.record?.since).toBe(first.record?.since);
  });

  it("holds for the hold after it serves again, then forgets", () => {
    const record = notServingHold(undefined, down, NOW, 1800).record;
    const back = notServingHold(record, undefined, NOW + MIN, 1800);
    expect(back.record?.until).toBe(new Date(NOW + MIN).toISOString());
    expect(back.message).toContain("serves again since");
    const still = notServingHold(back.record, undefined, NOW + 30 * MIN, 1800);
    expect(still.message).toBeDefined();
    const over = notServingHold(back.record, undefined, NOW + 31 * MIN, 1800);
    expect(over).toEqual({});
    expect(notServingHold(undefined, undefined, NOW, 1800)).toEqual({});
  });
});
