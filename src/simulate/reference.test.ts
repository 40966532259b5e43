import { describe, expect, it } from "vitest";
import { candidates } from "../capacity/index.js";
import { dominatesVector } from "./frontier.js";
import { DEFAULT_PRICES } from "./metrics.js";
import {
  gridRules,
  type PolicyFigures,
  REFERENCE_GRID,
  type ReferenceGrid,
  type ReferencePoint,
  reference,
  referenceDistance,
} from "./reference.js";
import { ruleSetup, runRule, type SimpleRule } from "./rules.js";
import { CONNECTIONS_ONLY, steps } from "./testing.js";

const RULE: SimpleRule = {
  multiplier: 1,
  spareConnections: 0,
  holdHalfLifeMinutes: 0,
  saturationJump: 0,
  scaleDownStabilizationMinutes: 0,
  scaleDownPercent: 100,
};

/** A kept rule with figures (refused minutes, refused connection-minutes, unit-hours, disconnected). */
const pt = (name: string, rm: number, rcm: number, uh: number, disc: number): ReferencePoint => ({
  name,
  rule: RULE,
  refusedMinutes: rm,
  refusedConnectionMinutes: rcm,
  unitHours: uh,
  costUsd: (uh / 24) * 2,
  clientsDisconnected: disc,
  scaleOperations: 1,
  minutesAboveTarget: 0,
  minutesThrottled: 0,
});

const figures = (p: PolicyFigures) => [
  p.refusedMinutes,
  p.refusedConnectionMinutes,
  p.unitHours,
  p.clientsDisconnected,
];

describe("the grid of simple rules", () => {
  it("has 1,080 rules, the first family varying slowest", () => {
    const rules = gridRules();
    expect(rules).toHaveLength(5 * 4 * 3 * 3 * 3 * 2);
    expect(rules[0]).toEqual({ ...RULE, scaleDownPercent: 100 });
    expect(rules[1]).toEqual({ ...RULE, scaleDownPercent: 50 });
    expect(rules.at(-1)).toEqual({
      multiplier: 2,
      spareConnections: 5000,
      holdHalfLifeMinutes: 180,
      saturationJump: 3,
      scaleDownStabilizationMinutes: 60,
      scaleDownPercent: 50,
    });
    expect(new Set(rules.map((r) => JSON.stringify(r))).size).toBe(rules.length);
    expect(() => gridRules({ ...REFERENCE_GRID, multiplier: [] })).toThrow(RangeError);
  });
});

describe("the policy's distance to the reference", () => {
  // The policy: 900 refused minutes, 6 M connection-minutes, 4,000 unit-hours, 200,000 disconnected.
  const policy: PolicyFigures = {
    refusedMinutes: 900,
    refusedConnectionMinutes: 6e6,
    unitHours: 4000,
    clientsDisconnected: 200_000,
  };

  it("names the fewest refused minutes at no more unit-hours and disconnections, and the cheapest no worse", () => {
    const points = [
      pt("a", 950, 5e6, 3900, 150_000), // cheap and gentle, refuses more
      pt("b", 850, 7e6, 4000, 199_999), // as cheap, gentler, refuses fewer minutes (more conn-min)
      pt("c", 700, 3e6, 3990, 700_000), // refuses least at the cost, but disconnects 3.5 ×
      pt("d", 900, 6e6, 3500, 100_000), // cheaper and gentler, refuses as many: dominates the policy
      pt("e", 0, 0, 9000, 10_000), // refuses nothing, dear
    ];
    expect(referenceDistance(points, policy)).toEqual({
      atPolicyCost: "b",
      cheapestNoWorse: "d",
      atPolicyCostAnyDisconnections: "c",
      dominated: true,
    });
  });

  it("says when no rule is as cheap within the policy's disconnections, and when nothing disconnects as few", () => {
    const points = [
      pt("a", 950, 5e6, 4100, 150_000),
      pt("b", 700, 3e6, 4500, 190_000),
      pt("c", 600, 2e6, 3000, 9e5),
    ];
    // No rule at ≤ 4,000 unit-hours with ≤ 200,000 disconnected: the cheapest gentle one is a.
    expect(referenceDistance(points, policy)).toEqual({
      cheapestWithinDisconnections: "a",
      cheapestNoWorse: "b",
      atPolicyCostAnyDisconnections: "c",
      dominated: false,
    });
    expect(referenceDistance([pt("x", 0, 0, 100, 300_000)], policy)).toEqual({
      atPolicyCostAnyDisconnections: "x",
      dominated: false,
    });
  });

  it("allows float noise in 'no more'", () => {
    const points = [pt("a", 900, 6e6, 4000 * (1 + 1e-12), 200_000)];
    expect(referenceDistance(points, policy).atPolicyCost).toBe("a");
    expect(referenceDistance(points, policy).dominated).toBe(false);
  });
});

describe("the reference on a small trace", () => {
  // Two bursts over flat demand, Web PubSub connections only, on Premium_P1 from 2 units; a grid
  // of 3 × 2 × 2 × 2 × 2 × 2 = 96 rules.
  const demand = steps([
    [30, 1500],
    [15, 6000],
    [40, 1500],
    [20, 9000],
    [40, 2500],
  ]);
  const grid: ReferenceGrid = {
    multiplier: [1, 1.3, 2],
    spareConnections: [0, 1000],
    holdHalfLifeMinutes: [0, 30],
    saturationJump: [0, 3],
    scaleDownStabilizationMinutes: [0, 15],
    scaleDownPercent: [100, 50],
  };
  const input = {
    demand,
    mix: CONNECTIONS_ONLY,
    seed: "t",
    scaleDurationMs: 5 * 60_000,
    metricDelayMs: 3 * 60_000,
    sizes: candidates(["Premium_P1"]),
    initial: { sku: "Premium_P1" as const, units: 2 },
    prices: DEFAULT_PRICES,
    policy: { refusedMinutes: 20, refusedConnectionMinutes: 60_000, unitHours: 8, clientsDisconnected: 5000 },
    grid,
  };
  const ref = reference(input);
  const setup = ruleSetup(input);
  const all = gridRules(grid).map((r) => runRule(r, setup));

  it("keeps exactly the rules no other dominates on the four axes, one per distinct place", () => {
    expect(ref.configurations).toBe(96);
    expect(ref.points.length).toBeGreaterThan(1);
    expect(ref.points.length).toBeLessThan(96);
    for (const p of ref.points) {
      for (const q of all) expect(dominatesVector(figures(q), figures(p))).toBe(false);
    }
    // Every rule is dominated by a kept one or has the figures of one.
    for (const q of all) {
      const covered = ref.points.some(
        (p) => dominatesVector(figures(p), figures(q)) || figures(p).every((v, i) => v === figures(q)[i]),
      );
      expect(covered).toBe(true);
    }
    const places = new Set(ref.points.map((p) => figures(p).join(" ")));
    expect(places.size).toBe(ref.points.length);
    // By unit-hours.
    const hours = ref.points.map((p) => p.unitHours);
    expect(hours).toEqual([...hours].sort((a, b) => a - b));
  });

  it("names kept rules, and the best at the policy's cost is the best of all rules", () => {
    const best = ref.points.find((p) => p.name === ref.policy.atPolicyCost);
    const feasible = all.filter(
      (q) =>
        q.unitHours <= input.policy.unitHours && q.clientsDisconnected <= input.policy.clientsDisconnected,
    );
    if (feasible.length === 0) expect(best).toBeUndefined();
    else expect(best?.refusedMinutes).toBe(Math.min(...feasible.map((q) => q.refusedMinutes)));
    expect(ref.lagMinutes).toBe(4);
    expect(ref.scaleMinutes).toBe(5);
    expect(ref.policy.unitHours).toBe(8);
  });
});
