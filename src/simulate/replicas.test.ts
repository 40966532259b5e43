import { describe, expect, it } from "vitest";
import { spec } from "../autoscale/testing.js";
import { defaultMix } from "../traffic/index.js";
import { MINUTE_MS } from "./engine.js";
import { DEFAULT_PRICES } from "./metrics.js";
import {
  type MemberFigures,
  memberDemands,
  normalizedShares,
  type ReplicaComparison,
  replicaComparisonSteps,
  replicaGroupSimulation,
} from "./replicas.js";
import { finish } from "./steps.js";

const START = Date.parse("2025-06-02T00:00:00Z");

describe("memberDemands", () => {
  it("splits the demand by shares, moves the failed member's clients to the others by theirs, and brings them back as they reconnect", () => {
    const demand = new Float64Array(9).fill(1000);
    const members = [
      { name: "eastus", share: 0.5 },
      { name: "westus", share: 0.3 },
      { name: "westeurope", share: 0.2 },
    ];
    const failover = { member: "westus", startMs: START + 3 * MINUTE_MS, durationMs: 4 * MINUTE_MS };
    const [east, west, europe] = memberDemands(demand, START, members, failover, MINUTE_MS).map((d) => [
      ...d,
    ]);
    expect(east?.slice(0, 3)).toEqual([500, 500, 500]);
    expect(west?.slice(0, 3)).toEqual([300, 300, 300]);
    // Down for minutes 3–6: 300 × 0.5 ÷ 0.7 = 214.3 to eastus, 300 × 0.2 ÷ 0.7 = 85.7 to westeurope.
    expect(east?.slice(3, 7)).toEqual([714, 714, 714, 714]);
    expect(west?.slice(3, 7)).toEqual([0, 0, 0, 0]);
    expect(europe?.slice(3, 7)).toEqual([286, 286, 286, 286]);
    // Minute 7, half a minute after it serves again with a 1-minute lifetime: e^−0.5 = 60.7 % still away.
    expect(west?.[7]).toBe(Math.round(300 * (1 - Math.exp(-0.5))));
    expect(east?.[7]).toBe(Math.round(500 + (Math.exp(-0.5) * 300 * 0.5) / 0.7));
    // Nobody is lost: every minute sums to the demand (within rounding).
    for (let m = 0; m < 9; m++)
      expect((east?.[m] ?? 0) + (west?.[m] ?? 0) + (europe?.[m] ?? 0)).toBeCloseTo(1000, -1);
  });

  it("normalizes shares and refuses a group of one or a share that is not > 0", () => {
    expect(
      normalizedShares([
        { name: "a", share: 2 },
        { name: "b", share: 6 },
      ]).map((m) => m.share),
    ).toEqual([0.25, 0.75]);
    expect(() => normalizedShares([{ name: "a", share: 1 }])).toThrow(/at least 2/);
    expect(() =>
      normalizedShares([
        { name: "a", share: 1 },
        { name: "b", share: 0 },
      ]),
    ).toThrow(/share of b/);
  });
});

/**
 * Two members of 1,500 connections each at 2 units (80 % target: 3,000 connections need 3.75
 * units); westus stops at minute 30 for 20 minutes, so eastus gets 3,000 on a 2,000 quota.
 * Scale 5 min, metrics 3 min late, polls every minute, no noise; no failover reserve unless given.
 */
function twoMembers(reservePercent = 0) {
  const s = spec({
    metrics: { connections: { targetPercent: 80 } },
    anticipation: {
      mode: "Enabled",
      scaleDuration: "5m",
      headroom: { peakPercent: 0, horizon: "1h" },
      failover: { enabled: true, reservePercent },
    },
    behavior: { scaleDown: { stabilizationWindowSeconds: 600 } },
    pollIntervalSeconds: 60,
  });
  delete s.metrics.serverLoad;
  const minutes = 80;
  return {
    policy: { spec: s },
    startMs: START,
    demand: new Float64Array(minutes).fill(3000),
    mix: defaultMix("SignalR"),
    scaleDurationMs: 5 * MINUTE_MS,
    metricDelayMs: 3 * MINUTE_MS,
    seed: "replicas",
    noiseAmplitude: 0,
    members: [
      { name: "eastus", share: 0.5 },
      { name: "westus", share: 0.5 },
    ],
    failover: { member: "westus", startMs: START + 30 * MINUTE_MS, durationMs: 20 * MINUTE_MS },
    lifetimeMs: 5 * MINUTE_MS,
    prices: DEFAULT_PRICES,
    loadTargetPercent: 70,
    initial: [
      { sku: "Premium_P1" as const, units: 2 },
      { sku: "Premium_P1" as const, units: 2 },
    ],
  };
}

const row = (figures: readonly MemberFigures[], name: string) =>
  figures.find((f) => f.name === name) as MemberFigures;

describe("replicaComparisonSteps", () => {
  const c: ReplicaComparison = finish(replicaComparisonSteps(twoMembers()));
  const [on, off] = c.runs;

  it("with the Failover rule the survivor scales out at the poll that sees the failure, and refuses only while it runs", () => {
    const east = row(on.figures, "eastus");
    expect(east.firstScaleOutMinutes).toBe(0);
    // The scale sent at minute 30 completes at 35: minutes 30–34 refuse.
    expect(east.failoverMinutesRefused).toBe(5);
    const op = on.members[0]?.run.operations.find((o) => o.startedMs === START + 30 * MINUTE_MS);
    expect(op?.to.units).toBeGreaterThanOrEqual(4);
  });

  it("without it the survivor waits for the metrics: the bucket of minute 30 is read at 34, the scale completes at 39", () => {
    const east = row(off.figures, "eastus");
    expect(east.firstScaleOutMinutes).toBe(4);
    expect(east.failoverMinutesRefused).toBe(9);
    expect(row(on.figures, "total").failoverRefusedConnectionMinutes).toBeLessThan(
      row(off.figures, "total").failoverRefusedConnectionMinutes,
    );
  });

  it("the failed member is not scaled in while it does not serve nor as its clients come back, and the baseline refuses nothing", () => {
    for (const run of [on, off]) {
      const west = run.members[1]?.run;
      const during = west?.operations.filter(
        (o) => o.startedMs >= START + 30 * MINUTE_MS && o.startedMs < START + 50 * MINUTE_MS,
      );
      expect(during).toEqual([]);
      expect(west?.units[45]).toBe(2);
    }
    expect(row(c.baseline?.figures ?? [], "total").minutesRefused).toBe(0);
    // Nor after it serves again (minute 50): its clients come back to the size it kept.
    for (const run of [on, off]) expect(row(run.figures, "westus").minutesRefused).toBe(0);
  });

  it("counts the group's refused minutes once per minute and sums the rest", () => {
    const total = row(off.figures, "total");
    const east = row(off.figures, "eastus");
    const west = row(off.figures, "westus");
    expect(total.minutesRefused).toBe(Math.max(east.minutesRefused, west.minutesRefused));
    expect(total.unitHours).toBeCloseTo(east.unitHours + west.unitHours, 9);
    expect(total.refusedConnectionMinutes).toBeCloseTo(
      east.refusedConnectionMinutes + west.refusedConnectionMinutes,
      9,
    );
  });
});

describe("replicaGroupSimulation", () => {
  it("lets each member see the others' ARM serving flag at once: the survivor's first scale-out is the failure's minute", () => {
    const steps = replicaGroupSimulation(twoMembers());
    let step = steps.next();
    while (!step.done) step = steps.next();
    const [east, west] = step.value;
    expect(east?.run.operations[0]?.startedMs).toBe(START + 30 * MINUTE_MS);
    expect(west?.resourceId).toBe(`${east?.resourceId}/replicas/westus`);
    expect(east?.role).toBe("Primary");
  });
});

describe("replicaComparisonSteps with a failover reserve", () => {
  const c: ReplicaComparison = finish(replicaComparisonSteps(twoMembers(100)));
  const plain: ReplicaComparison = finish(replicaComparisonSteps(twoMembers()));

  it("holds each member's sibling's clients before the failure: the survivor refuses nothing", () => {
    // eastus 1,500 + 100 % × 1,500 of westus = 3,000 connections at 800 a unit: 3.75 → 4 units, a
    // quota of 4,000 for the 3,000 it carries from minute 30.
    const east = c.runs[0].members[0]?.run;
    expect(east?.units[29]).toBe(4);
    expect(row(c.runs[0].figures, "eastus").failoverMinutesRefused).toBe(0);
    expect(row(c.runs[0].figures, "total").failoverMinutesRefused).toBe(0);
  });

  it("keeps the reserve off with the rule: the run without it is the same as without a reserve", () => {
    expect(c.runs[1].figures).toEqual(plain.runs[1].figures);
    // And it costs: the reserve's run holds more units than the rule's run without one.
    expect(row(c.runs[0].figures, "total").unitHours).toBeGreaterThan(
      row(plain.runs[0].figures, "total").unitHours,
    );
  });
});
