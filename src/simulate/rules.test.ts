import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { candidates } from "../capacity/index.js";
import { parseTrace, traceDemand, type WorkloadMix } from "../traffic/index.js";
import { demandSeries, simulate } from "./engine.js";
import { DEFAULT_PRICES, summarize } from "./metrics.js";
import { gridRules } from "./reference.js";
import { describeRule, RuleDecision, ruleSetup, runRule, type SimpleRule } from "./rules.js";
import { RuleStrategy } from "./strategies/rule.js";
import { CONNECTIONS_ONLY, steps, testSetup } from "./testing.js";

const P1 = candidates(["Premium_P1"]);
const SIMPLE: SimpleRule = {
  multiplier: 1,
  spareConnections: 0,
  holdHalfLifeMinutes: 0,
  saturationJump: 2,
  scaleDownStabilizationMinutes: 0,
  scaleDownPercent: 100,
};

/** 40 minutes of Web PubSub connections only (no app servers): 10 at 1,500, 10 at 4,500, 20 at 1,500. */
function small(rule: SimpleRule) {
  const demand = steps([
    [10, 1500],
    [10, 4500],
    [20, 1500],
  ]);
  const setup = ruleSetup({
    demand,
    mix: CONNECTIONS_ONLY,
    seed: "t",
    scaleDurationMs: 5 * 60_000,
    metricDelayMs: 3 * 60_000,
    sizes: P1,
    initial: { sku: "Premium_P1", units: 2 },
    prices: DEFAULT_PRICES,
  });
  return { demand, setup, score: runRule(rule, setup) };
}

describe("simple rules on a small trace, by hand", () => {
  // Premium_P1 from 2 units (quota = clients = units × 1,000); a poll at minute m sees bucket
  // m − 4 (3-minute ingestion delay); scales take 5 minutes. The connection count a bucket shows
  // is the minute's connections plus at most 2 % (the catalog's spread): 1,500 shows 1,500–1,530,
  // which needs 2 units; a saturated bucket shows at least its quota.
  //
  // Demand × 1, no spare, no hold, 2× the quota when saturated, scale in at once:
  // - m 0–9 at 2 units, 1,500 wanted: nothing refused.
  // - m 10: 4,500 wanted, 2,000 accepted, 2,500 refused. The poll at m 14 sees bucket 10
  //   saturated: 2 × 2,000 = 4,000 → 4 units; the scale starts at 14 and completes at 19.
  //   m 10–18 refuse 9 × 2,500 = 22,500 connection-minutes.
  // - m 19 at 4 units: 4,500 − 4,000 = 500 refused (10 minutes, 23,000 connection-minutes).
  //   Polls at 19–22 see buckets 15–18 (2 units, saturated): 4 units, the current size.
  // - m 23 sees bucket 19 (4 units, saturated): 2 × 4,000 → 8 units, 23 → 28.
  // - m 28 sees bucket 24 (1,500 at 4 units): 2 units; the scale-in starts at 28, completes at 33
  //   and disconnects the 1,500 clients of m 32 × (8 − 2) ÷ 8 = 1,125.
  // Unit-minutes: 19 × 2 (m 0–18) + 9 × 4 (m 19–27) + 5 × 8 (m 28–32) + 7 × 2 (m 33–39) = 128,
  // 2.1333 unit-hours; 3 scales (2 → 4 → 8 → 2). The load is connections ÷ quota: above the 70 %
  // target at 1,500 on 2 units (75 %: m 0–9, 33–39) and when saturated (m 10–19): 27 minutes.
  it("pins refusals, unit-hours, scales and disconnections", () => {
    const { score } = small(SIMPLE);
    expect(score.minutesAboveTarget).toBe(27);
    expect(score.minutesThrottled).toBe(0);
    expect(score.refusedMinutes).toBe(10);
    expect(score.refusedConnectionMinutes).toBe(23_000);
    expect(score.unitHours).toBeCloseTo(128 / 60, 9);
    expect(score.costUsd).toBeCloseTo((128 / 60 / 24) * 2, 9);
    expect(score.scaleOperations).toBe(3);
    expect(score.clientsDisconnected).toBeCloseTo(1125, 9);
  });

  // With a 10-minute scale-down stabilization: the target of 8 units (m 23) holds the scale-in
  // until the window m 24–33 has only 2s: 8 → 2 at 33, completed at 38 (1,500 × 6 ÷ 8 = 1,125
  // disconnected). Unit-minutes 38 + 36 + 10 × 8 (m 28–37) + 2 × 2 (m 38–39) = 158.
  it("holds a scale-in for the stabilization window", () => {
    const { score } = small({ ...SIMPLE, scaleDownStabilizationMinutes: 10 });
    expect(score.unitHours).toBeCloseTo(158 / 60, 9);
    expect(score.scaleOperations).toBe(3);
    expect(score.clientsDisconnected).toBeCloseTo(1125, 9);
    expect(score.refusedMinutes).toBe(10);
  });

  // At most 50 % of the units a scale-in: 8 → 4 at 28 (done at 33, 1,500 × 4 ÷ 8 = 750
  // disconnected), then 4 → 2 at 33 (done at 38, 1,500 × 2 ÷ 4 = 750). Unit-minutes
  // 38 + 36 + 5 × 8 + 5 × 4 + 2 × 2 = 138.
  it("removes at most the scale-down rate's share of the units a scale-in", () => {
    const { score } = small({ ...SIMPLE, scaleDownPercent: 50 });
    expect(score.unitHours).toBeCloseTo(138 / 60, 9);
    expect(score.scaleOperations).toBe(4);
    expect(score.clientsDisconnected).toBeCloseTo(1500, 9);
  });

  // Without the jump, the saturated bucket shows the quota (plus at most its 2 % spread): the rule
  // asks for 3 units at most (or stays at 2), so m 19 refuses 1,500 (or 2,500), not 500.
  it("refuses more without the jump on saturation", () => {
    expect(small({ ...SIMPLE, saturationJump: 0 }).score.refusedConnectionMinutes).toBeGreaterThanOrEqual(
      24_000,
    );
  });

  it("holds a peak that halves every half-life", () => {
    const { setup } = small(SIMPLE);
    const hold = new RuleDecision({ ...SIMPLE, saturationJump: 0, holdHalfLifeMinutes: 10 }, setup);
    const ten = 9; // index of Premium_P1 × 10 (1–10, 20 …)
    expect(hold.want(0, 7900, ten, ten)).toBe(7); // 7,900 → 8 units (index 7)
    let want = 0;
    for (let m = 1; m <= 10; m++) want = hold.want(m, 1000, ten, 7);
    // 7,900 × ½ = 3,950 after ten minutes: 4 units (index 3).
    expect(want).toBe(3);
  });

  it("says what a rule does", () => {
    expect(describeRule({ ...SIMPLE, spareConnections: 1000, scaleDownPercent: 50 })).toBe(
      "demand × 1 + 1,000, no hold, 2× the quota when saturated, scale-in at once, at most 50 % of the units a scale-in",
    );
  });
});

describe("the tight engine is the engine", () => {
  // A day of the Twitter trace (its first flash crowd) as SignalR broadcast and echo, with app-
  // server connections, noise, and the policy's ladders: every figure of the rule's run through
  // engine.ts itself equals the tight engine's.
  const root = join(import.meta.dirname, "../..");
  const file = "traces/twitter_volume_aapl.csv";
  const trace = parseTrace(readFileSync(join(root, file), "utf8"), file);
  const startMs = Date.parse("2015-03-02T00:00:00Z");
  const demand = demandSeries(traceDemand(trace, new Date(trace.points[0]?.t ?? 0), 120_000), startMs, 1440);
  const mix: WorkloadMix = {
    service: "SignalR",
    entries: [
      { scenario: "broadcast", share: 0.3 },
      { scenario: "echo", share: 0.7 },
    ],
    messageSizeBytes: 1024,
  };
  const setup = ruleSetup({
    demand,
    mix,
    seed: "simulate",
    scaleDurationMs: 5 * 60_000,
    metricDelayMs: 3 * 60_000,
    sizes: candidates(["Premium_P1", "Premium_P2"]),
    initial: { sku: "Premium_P1", units: 2 },
    prices: DEFAULT_PRICES,
  });
  const rules = gridRules();

  it.each([0, 77, 300, 555, 640, 931, 1079])("rule %i", (i) => {
    const rule = rules[i] as SimpleRule;
    const fast = runRule(rule, setup);
    const run = simulate(new RuleStrategy(rule, setup), {
      ...testSetup(demand, { startMs, mix, seed: "simulate", noiseAmplitude: 0.05 }),
    });
    const m = summarize(run, { loadTargetPercent: 70, prices: DEFAULT_PRICES });
    expect(fast).toEqual({
      refusedMinutes: m.minutesRefused,
      refusedConnectionMinutes: m.refusedConnectionMinutes,
      unitHours: m.totalUnitHours,
      costUsd: m.cost,
      clientsDisconnected: m.clientsDisconnected,
      scaleOperations: m.scaleOperations,
      minutesAboveTarget: m.minutesAboveTarget,
      minutesThrottled: m.minutesThrottled,
    });
    expect(fast.scaleOperations).toBeGreaterThan(0);
  });

  it("starts at the smallest size at least the start, and refuses sizes that hold fewer clients", () => {
    const at = (units: number) =>
      ruleSetup({
        demand: new Float64Array(1),
        mix: CONNECTIONS_ONLY,
        seed: "t",
        scaleDurationMs: 0,
        metricDelayMs: 0,
        sizes: P1,
        initial: { sku: "Premium_P1", units },
        prices: DEFAULT_PRICES,
      });
    expect(at(15).sizes[at(15).initial]).toEqual({ sku: "Premium_P1", units: 20 });
    expect(at(500).sizes[at(500).initial]).toEqual({ sku: "Premium_P1", units: 100 });
    expect(at(1).lagMinutes).toBe(1);
    expect(() =>
      ruleSetup({
        ...testSetup(new Float64Array(1)),
        sizes: [],
        initial: P1[0] as never,
        prices: DEFAULT_PRICES,
      }),
    ).toThrow(RangeError);
  });
});
