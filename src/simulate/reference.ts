/**
 * The reachable frontier: what simple causal autoscalers reach on the same traffic, with the same
 * information and mechanics as the policy — and how far the policy is from them. Pure.
 *
 * A grid of simple rules (`rules.ts`: lagged demand with multiplicative and constant headroom, a
 * peak hold with decay, a jump on saturation, scale-down stabilization and rate; the cartesian
 * product of {@link REFERENCE_GRID}, 1,080 rules) is scored on the comparison's demand, noise,
 * scale duration, ingestion delay and disconnection model, from the policy's starting size over
 * its allowed sizes. Each rule gets four figures, all lower is better: refused minutes, refused
 * connection-minutes, unit-hours and clients disconnected by its scale-ins (and, beside them, its
 * minutes above the comparison's load target: the rules size on connections alone, so they may
 * run hotter than the policy's targets allow). The rules no other
 * rule dominates on all four (`frontier.ts` `nonDominated`) are kept: the reference (of rules with
 * the same four figures, the first in grid order stands for all).
 *
 * The policy's distance to it ({@link ReferenceDistance}):
 * - at the policy's unit-hours and disconnections: the kept rule refusing the fewest minutes
 *   among those with no more unit-hours and no more disconnected clients (ties: fewer refused
 *   connection-minutes, then fewer unit-hours);
 * - when no rule is that cheap within the policy's disconnections: the cheapest rule that
 *   disconnects no more;
 * - the cheapest rule that refuses no more minutes and disconnects no more clients;
 * - on refusals and cost alone: the fewest refused minutes at no more unit-hours, whatever it
 *   disconnects.
 * Every answer is a kept rule: a rule that dominates another meets every bound the other meets
 * and does at least as well, so the best of all rules is among the kept ones. "No more" allows
 * float noise ({@link atMost}).
 *
 * Cost: one pass over the demand per rule, about 0.1 µs a minute (`rules.ts`); on 55 days
 * at one minute, 1,080 rules take seconds — less than one run of the policy.
 */
import type { SkuUnits } from "../capacity/index.js";
import type { Comparison, ComparisonInput } from "./compare.js";
import { policySizes } from "./compare.js";
import { atMost, dominatesVector, nonDominated } from "./frontier.js";
import {
  type RuleScore,
  type RuleSetup,
  type RuleSetupInput,
  ruleSetup,
  runRule,
  type SimpleRule,
} from "./rules.js";
import { finish, type Progress } from "./steps.js";

/** The values tried of each family of rules. */
export type ReferenceGrid = { readonly [K in keyof SimpleRule]: readonly number[] };

/**
 * The rules of the reference: 5 multipliers × 4 spares × 3 holds × 3 jumps × 3 stabilization
 * windows × 2 scale-down rates = 1,080 rules. The values span what simple autoscalers use: no
 * headroom to twice the demand, up to five units (5,000 connections) spare, a peak held for half
 * an hour or three hours, two or three times the quota assumed when saturated, the HPA's
 * immediate scale-in to an hour's stabilization, any scale-in or at most half the units at once.
 */
export const REFERENCE_GRID: ReferenceGrid = {
  multiplier: [1, 1.15, 1.3, 1.5, 2],
  spareConnections: [0, 1000, 2500, 5000],
  holdHalfLifeMinutes: [0, 30, 180],
  saturationJump: [0, 2, 3],
  scaleDownStabilizationMinutes: [0, 15, 60],
  scaleDownPercent: [100, 50],
};

const FAMILIES = Object.keys(REFERENCE_GRID) as (keyof SimpleRule)[];

/** Every rule of `grid`, the first family varying slowest. @throws RangeError for an empty family. */
export function gridRules(grid: ReferenceGrid = REFERENCE_GRID): SimpleRule[] {
  for (const f of FAMILIES) {
    if (grid[f].length === 0) throw new RangeError(`the reference grid has no value of ${f}`);
  }
  const total = FAMILIES.reduce((n, f) => n * grid[f].length, 1);
  const rules: SimpleRule[] = [];
  for (let c = 0; c < total; c++) {
    let rest = c;
    const rule = {} as Record<keyof SimpleRule, number>;
    for (let i = FAMILIES.length - 1; i >= 0; i--) {
      const f = FAMILIES[i] as keyof SimpleRule;
      const values = grid[f];
      rule[f] = values[rest % values.length] as number;
      rest = Math.floor(rest / values.length);
    }
    rules.push(rule);
  }
  return rules;
}

/** A rule of the reference, named `r0001` … in grid order, with its figures. */
export interface ReferencePoint extends RuleScore {
  name: string;
  rule: SimpleRule;
}

/** The policy's figures on the reference's four axes. */
export interface PolicyFigures {
  refusedMinutes: number;
  refusedConnectionMinutes: number;
  unitHours: number;
  clientsDisconnected: number;
  /** Minutes with the true load above the load target (shown beside the rules', not an axis). */
  minutesAboveTarget?: number;
}

/** Where the policy stands against the reference (names of kept rules; see the module comment). */
export interface ReferenceDistance {
  /** The fewest refused minutes at no more unit-hours and no more disconnections. */
  atPolicyCost?: string;
  /** The cheapest rule disconnecting no more, when none reaches the policy's unit-hours so. */
  cheapestWithinDisconnections?: string;
  /** The cheapest rule refusing no more minutes and disconnecting no more clients. */
  cheapestNoWorse?: string;
  /** The fewest refused minutes at no more unit-hours, disconnections not counted. */
  atPolicyCostAnyDisconnections?: string;
  /** A kept rule is at most as high as the policy on all four axes and lower on one. */
  dominated: boolean;
}

/** The reference of a run. */
export interface Reference {
  grid: ReferenceGrid;
  /** Rules scored. */
  configurations: number;
  /** Minutes from a bucket to the first poll that sees it; minutes a scale takes. */
  lagMinutes: number;
  scaleMinutes: number;
  /** The kept (non-dominated) rules, by unit-hours, then refused minutes. */
  points: ReferencePoint[];
  policy: PolicyFigures & ReferenceDistance;
}

/** Everything the reference depends on. */
export interface ReferenceInput extends RuleSetupInput {
  policy: PolicyFigures;
  /** Default {@link REFERENCE_GRID}. */
  grid?: ReferenceGrid;
}

/** The reference's input for a comparison: its demand and model, the policy's sizes, start and figures. */
export function referenceInput(input: ComparisonInput, comparison: Comparison): ReferenceInput {
  const { min, max } = input.policy.spec.units;
  const sizes = policySizes(input.policy).filter((s) => s.units >= min && s.units <= max);
  const policy = comparison.metrics[0];
  if (!policy) throw new Error("the comparison has no policy run");
  return {
    demand: input.demand,
    mix: input.mix,
    seed: input.seed,
    scaleDurationMs: input.scaleDurationMs,
    metricDelayMs: input.metricDelayMs,
    sizes: sizes.length > 0 ? sizes : policySizes(input.policy),
    initial: comparison.initial.policy as SkuUnits,
    prices: comparison.prices,
    loadTargetPercent: comparison.loadTargetPercent,
    ...(input.disconnection ? { disconnection: input.disconnection } : {}),
    policy: {
      refusedMinutes: policy.minutesRefused,
      refusedConnectionMinutes: policy.refusedConnectionMinutes,
      unitHours: policy.totalUnitHours,
      clientsDisconnected: policy.clientsDisconnected,
      minutesAboveTarget: policy.minutesAboveTarget,
    },
  };
}

/** A point's four axes, in the order refused minutes, refused connection-minutes, unit-hours, disconnections. */
const axes = (p: PolicyFigures) => [
  p.refusedMinutes,
  p.refusedConnectionMinutes,
  p.unitHours,
  p.clientsDisconnected,
];

/** The first of `points` passing `ok`, by `order`. */
function best<T>(points: readonly T[], ok: (p: T) => boolean, order: (a: T, b: T) => number): T | undefined {
  let out: T | undefined;
  for (const p of points) if (ok(p) && (out === undefined || order(p, out) < 0)) out = p;
  return out;
}

const byRefusals = (a: RuleScore, b: RuleScore) =>
  a.refusedMinutes - b.refusedMinutes ||
  a.refusedConnectionMinutes - b.refusedConnectionMinutes ||
  a.unitHours - b.unitHours;
const byCost = (a: RuleScore, b: RuleScore) =>
  a.unitHours - b.unitHours ||
  a.refusedMinutes - b.refusedMinutes ||
  a.clientsDisconnected - b.clientsDisconnected;

/** The policy's distance to the kept rules `points` (see the module comment). */
export function referenceDistance(
  points: readonly ReferencePoint[],
  policy: PolicyFigures,
): ReferenceDistance {
  const cheap = (p: RuleScore) => atMost(p.unitHours, policy.unitHours);
  const gentle = (p: RuleScore) => atMost(p.clientsDisconnected, policy.clientsDisconnected);
  const atCost = best(points, (p) => cheap(p) && gentle(p), byRefusals);
  const within = atCost ? undefined : best(points, gentle, byCost);
  const noWorse = best(points, (p) => gentle(p) && p.refusedMinutes <= policy.refusedMinutes, byCost);
  const anyDisconnections = best(points, cheap, byRefusals);
  const mine = axes(policy);
  const dominated = points.some((p) => dominatesVector(axes(p), mine));
  return {
    ...(atCost ? { atPolicyCost: atCost.name } : {}),
    ...(within ? { cheapestWithinDisconnections: within.name } : {}),
    ...(noWorse ? { cheapestNoWorse: noWorse.name } : {}),
    ...(anyDisconnections ? { atPolicyCostAnyDisconnections: anyDisconnections.name } : {}),
    dominated,
  };
}

/** Rule-minutes one strategy-minute of the engine is worth, for progress: 25 (measured, roughly). */
export const RULE_MINUTES_PER_STRATEGY_MINUTE = 25;

/** The reference's work, in strategy-minutes (see {@link RULE_MINUTES_PER_STRATEGY_MINUTE}). */
export function referenceMinutes(input: ReferenceInput): number {
  const rules = FAMILIES.reduce((n, f) => n * (input.grid ?? REFERENCE_GRID)[f].length, 1);
  return Math.ceil((rules * input.demand.length) / RULE_MINUTES_PER_STRATEGY_MINUTE);
}

/**
 * The reference as steps: yields its progress (strategy-minutes done of {@link referenceMinutes})
 * after every few rules, returns the kept rules and the policy's distance.
 * @throws RangeError as {@link ruleSetup} and {@link gridRules} do.
 */
export function* referenceSteps(input: ReferenceInput): Generator<Progress, Reference, void> {
  const grid = input.grid ?? REFERENCE_GRID;
  const rules = gridRules(grid);
  const setup: RuleSetup = ruleSetup(input);
  const total = referenceMinutes(input);
  const digits = Math.max(4, String(rules.length).length);
  const scored: ReferencePoint[] = [];
  const every = Math.max(1, Math.floor(200_000 / Math.max(1, input.demand.length)));
  for (const [i, rule] of rules.entries()) {
    scored.push({ name: `r${String(i + 1).padStart(digits, "0")}`, rule, ...runRule(rule, setup) });
    if ((i + 1) % every === 0 && i + 1 < rules.length) {
      yield { done: Math.floor((total * (i + 1)) / rules.length), total };
    }
  }
  const figures = scored.map(axes);
  const kept = nonDominated(figures);
  // Rules with the same four figures as an earlier kept one add nothing: the first stands for them.
  const same = (a: readonly number[], b: readonly number[]) => a.every((v, k) => atMost(v, b[k] as number));
  const distinct = (i: number) =>
    !figures.some((f, j) => j < i && kept[j] && same(f, figures[i] as number[]));
  const points = scored.filter((_, i) => kept[i] && distinct(i)).sort(byCost);
  return {
    grid,
    configurations: rules.length,
    lagMinutes: setup.lagMinutes,
    scaleMinutes: setup.scaleMinutes,
    points,
    policy: { ...input.policy, ...referenceDistance(points, input.policy) },
  };
}

/** The reference, at once. */
export function reference(input: ReferenceInput): Reference {
  return finish(referenceSteps(input));
}
