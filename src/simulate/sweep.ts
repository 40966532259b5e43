/**
 * A frontier sweep: on the same demand, seed and model, the comparison (`compare.ts`: the policy,
 * native autoscale, static, oracle) and variants of the policy's settings — the grid of the
 * {@link SweepKnob}s' values (`knobs.ts`) — each run through the same engine as the policy, then
 * placed on the cost-versus-refusals Pareto frontier (`frontier.ts`). Pure: the demand, mix,
 * timings and seed are arguments.
 *
 * Axes: x is the estimated cost, USD (unit-hours priced per SKU, `metrics.ts`); y is refused
 * connection-minutes (connections refused over the quota, summed over minutes); z is the clients
 * the run's own scale operations disconnected (`traffic/disconnections.ts`). All lower is better;
 * a point is on the frontier when no other is at most as high on all three and lower on one. The frontier is computed over the policy under test and its variants; native autoscale,
 * static and the oracle are reference points, shown beside it, never on it.
 *
 * Variants:
 * 1. The grid: every combination of the knobs' values that apply to the policy (mixed radix, the
 *    first knob varying slowest), each set on a copy of the policy's spec.
 * 2. A combination whose spec is invalid (`validatePolicy`: schema and cross-field rules) is
 *    skipped with the validator's first error; one whose spec equals the policy's is the policy
 *    itself, and one equal to an earlier one is dropped.
 * 3. At most `maxTrials` variants run (default {@link DEFAULT_MAX_TRIALS}); when there are more,
 *    an evenly spread subset of them in grid order (`sampled` says so).
 * Each variant starts as the policy does (`policyStart`: the instance's size, else the oracle's
 * first size within its own `units` bounds) and is summed up at the comparison's load target.
 */
import { API_VERSION, KIND, validatePolicy } from "../api/index.js";
import type { DecisionPolicy } from "../autoscale/decide.js";
import {
  type Comparison,
  type ComparisonInput,
  comparisonMinutes,
  comparisonSteps,
  policySizes,
  policyStart,
} from "./compare.js";
import { simulation, sizeAt } from "./engine.js";
import { frontierOffer, placeOnFrontier } from "./frontier.js";
import { type KnobValue, SWEEP_KNOBS, type SweepKnob } from "./knobs.js";
import { type StrategyMetrics, summarize } from "./metrics.js";
import { finish, finishAsync, type Progress, partOf } from "./steps.js";
import { PolicyStrategy } from "./strategies/policy.js";

/** Variants run when not told otherwise: 30 (about 2 to 5 s each on a 55-day trace). */
export const DEFAULT_MAX_TRIALS = 30;

/** Most combinations a grid may have before it is refused: 100,000. */
const MAX_COMBINATIONS = 100_000;

/** Settings of a sweep point: knob name → value. */
export type KnobSettings = Record<string, KnobValue>;

/** A policy variant to run. */
export interface SweepVariant {
  /** `v01`, `v02`, … in grid order. */
  name: string;
  settings: KnobSettings;
  policy: DecisionPolicy;
}

/** The variants of a policy, before any is run. */
export interface SweepPlan {
  /** The knobs that apply to the policy, with the values tried. */
  knobs: { name: string; values: KnobValue[] }[];
  /** The policy's own settings of those knobs. */
  policySettings: KnobSettings;
  /** Combinations of the grid. */
  combinations: number;
  /** The variants to run (at most `maxTrials`). */
  variants: SweepVariant[];
  /** Distinct valid variants before the cap. */
  candidates: number;
  /** Fewer variants run than the grid has: an evenly spread subset. */
  sampled: boolean;
  /** Combinations whose spec is not valid, and why. */
  skipped: { settings: KnobSettings; reason: string }[];
}

/** `count` indices spread evenly over `0 … n − 1`, first and last included (count ≤ n). */
export function spreadIndices(n: number, count: number): number[] {
  if (count >= n) return Array.from({ length: n }, (_, i) => i);
  if (count <= 0) return [];
  if (count === 1) return [0];
  return Array.from({ length: count }, (_, i) => Math.round((i * (n - 1)) / (count - 1)));
}

/**
 * The variants of `policy` for `knobs` (see the module comment, steps 1–3).
 * @throws RangeError when `maxTrials` is not a positive integer or the grid has more than
 *   100,000 combinations.
 */
export function planSweep(
  policy: DecisionPolicy,
  knobs: readonly SweepKnob[] = SWEEP_KNOBS,
  maxTrials = DEFAULT_MAX_TRIALS,
): SweepPlan {
  if (!Number.isInteger(maxTrials) || maxTrials < 1) {
    throw new RangeError(`the most variants to run must be a positive integer, got ${maxTrials}`);
  }
  const base = policy.spec;
  const used = knobs.map((knob) => ({ knob, values: [...knob.values(base)] })).filter((k) => k.values.length);
  const combinations = used.reduce((n, k) => n * k.values.length, used.length > 0 ? 1 : 0);
  if (combinations > MAX_COMBINATIONS) {
    throw new RangeError(`the sweep's grid has ${combinations} combinations, more than ${MAX_COMBINATIONS}`);
  }
  const policySettings: KnobSettings = {};
  for (const { knob } of used) {
    const own = knob.read(base);
    if (own !== undefined) policySettings[knob.name] = own;
  }
  const seen = new Set([JSON.stringify(base)]);
  const distinct: Omit<SweepVariant, "name">[] = [];
  const skipped: SweepPlan["skipped"] = [];
  for (let c = 0; c < combinations; c++) {
    const spec = structuredClone(base);
    const settings: KnobSettings = {};
    let rest = c;
    for (let k = used.length - 1; k >= 0; k--) {
      const { knob, values } = used[k] as (typeof used)[number];
      const value = values[rest % values.length] as KnobValue;
      rest = Math.floor(rest / values.length);
      settings[knob.name] = value;
      knob.apply(spec, value);
    }
    const ordered = Object.fromEntries(used.map(({ knob }) => [knob.name, settings[knob.name] as KnobValue]));
    const key = JSON.stringify(spec);
    if (seen.has(key)) continue;
    seen.add(key);
    const checked = validatePolicy({
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: {
        name: policy.metadata?.name ?? "sweep",
        namespace: policy.metadata?.namespace ?? "default",
      },
      spec,
    });
    if (!checked.ok) {
      skipped.push({ settings: ordered, reason: checked.errors[0] ?? "invalid" });
      continue;
    }
    distinct.push({ settings: ordered, policy: { ...policy, spec } });
  }
  const chosen = spreadIndices(distinct.length, maxTrials).map(
    (i) => distinct[i] as (typeof distinct)[number],
  );
  const digits = Math.max(2, String(chosen.length).length);
  return {
    knobs: used.map(({ knob, values }) => ({ name: knob.name, values })),
    policySettings,
    combinations,
    variants: chosen.map((v, i) => ({ name: `v${String(i + 1).padStart(digits, "0")}`, ...v })),
    candidates: distinct.length,
    sampled: chosen.length < distinct.length,
    skipped,
  };
}

/** One point of the sweep. */
export interface SweepPoint {
  /** `policy`, a variant's `v01` …, or a reference strategy's name. */
  name: string;
  role: "policy" | "variant" | "reference";
  /** The knobs' settings (empty for references). */
  settings: KnobSettings;
  /** Estimated cost, USD: the x axis. */
  costUsd: number;
  /** Refused connection-minutes: the y axis. */
  refusedConnectionMinutes: number;
  /** Clients disconnected by the run's scale operations: the z axis. */
  clientsDisconnected: number;
  /** On the Pareto frontier (always false for references, which are not placed on it). */
  onFrontier: boolean;
  /** A frontier point that dominates it (its name), when it is off the frontier. */
  dominatedBy?: string;
  metrics: StrategyMetrics;
}

/** A sweep's result. */
export interface Sweep {
  comparison: Comparison;
  plan: Omit<SweepPlan, "variants">;
  /** The policy, its variants in grid order, then the references (native, static, oracle). */
  points: SweepPoint[];
  /** The policy under test against the frontier: which point offers the same for less, or less for the same. */
  policy: { onFrontier: boolean; dominatedBy?: string; cheaper?: string; safer?: string };
}

/** Everything a sweep depends on: a comparison's input, the knobs and the cap on variants. */
export interface SweepInput extends ComparisonInput {
  /** Default {@link SWEEP_KNOBS}. */
  knobs?: readonly SweepKnob[];
  /** Default {@link DEFAULT_MAX_TRIALS}. */
  maxTrials?: number;
}

/** Strategy-minutes a sweep runs for `plan`: the comparison's, and one run per variant. */
export function sweepMinutes(input: SweepInput, plan: SweepPlan): number {
  return comparisonMinutes(input) + plan.variants.length * input.demand.length;
}

/** A point of a run's figures, off the frontier until placed. */
function point(
  name: string,
  role: SweepPoint["role"],
  settings: KnobSettings,
  metrics: StrategyMetrics,
): SweepPoint {
  return {
    name,
    role,
    settings,
    costUsd: metrics.cost,
    refusedConnectionMinutes: metrics.refusedConnectionMinutes,
    clientsDisconnected: metrics.clientsDisconnected,
    onFrontier: false,
    metrics,
  };
}

/** A comparison's strategies as points, without a sweep: the policy, then the references (none placed). */
export function comparisonPoints(comparison: Comparison): SweepPoint[] {
  const [policy, ...others] = comparison.metrics;
  if (!policy) throw new Error("the comparison has no policy run");
  return [point("policy", "policy", {}, policy), ...others.map((m) => point(m.name, "reference", {}, m))];
}

/** The sweep's points with their places on the frontier, and the policy's place. */
function placePoints(
  comparison: Comparison,
  plan: SweepPlan,
  variants: readonly StrategyMetrics[],
): Pick<Sweep, "points" | "policy"> {
  const [policyMetrics, ...others] = comparison.metrics;
  const candidates = [
    point("policy", "policy", plan.policySettings, policyMetrics as StrategyMetrics),
    ...plan.variants.map((v, i) => point(v.name, "variant", v.settings, variants[i] as StrategyMetrics)),
  ];
  const xy = candidates.map((p) => ({
    x: p.costUsd,
    y: p.refusedConnectionMinutes,
    z: p.clientsDisconnected,
  }));
  const places = placeOnFrontier(xy);
  candidates.forEach((p, i) => {
    const place = places[i];
    p.onFrontier = place?.onFrontier ?? false;
    if (place?.dominatedBy !== undefined) p.dominatedBy = candidates[place.dominatedBy]?.name as string;
  });
  const offer = frontierOffer(xy, places, 0);
  const policy = candidates[0] as SweepPoint;
  return {
    points: [...candidates, ...others.map((m) => point(m.name, "reference", {}, m))],
    policy: {
      onFrontier: policy.onFrontier,
      ...(policy.dominatedBy ? { dominatedBy: policy.dominatedBy } : {}),
      ...(offer.cheaper !== undefined ? { cheaper: candidates[offer.cheaper]?.name as string } : {}),
      ...(offer.safer !== undefined ? { safer: candidates[offer.safer]?.name as string } : {}),
    },
  };
}

/**
 * The sweep as steps: yields its progress (strategy-minutes done of {@link sweepMinutes}) every
 * few thousand minutes, returns the points. {@link sweep} runs it at once, {@link sweepAsync}
 * gives way to the event loop between steps and can be aborted.
 * @throws RangeError as {@link planSweep} and the comparison do.
 */
export function* sweepSteps(input: SweepInput): Generator<Progress, Sweep, void> {
  const plan = planSweep(input.policy, input.knobs, input.maxTrials);
  const total = sweepMinutes(input, plan);
  const comparison = yield* comparisonSteps(input, total);
  const oracle = comparison.runs[comparison.runs.length - 1];
  if (!oracle) throw new Error("the comparison has no oracle run");
  const oracleFirst = sizeAt(oracle, 0);
  const instance = comparison.start.from === "instance" ? comparison.initial.policy : undefined;
  const minutes = input.demand.length;
  let done = comparisonMinutes(input);
  const variants: StrategyMetrics[] = [];
  for (const v of plan.variants) {
    const initial = policyStart(v.policy, policySizes(v.policy), oracleFirst, instance);
    const strategy = new PolicyStrategy(v.policy, initial, {
      name: v.name,
      disconnection: input.disconnection,
    });
    const run = yield* partOf(simulation(strategy, input), done, total);
    variants.push(
      summarize(run, { loadTargetPercent: comparison.loadTargetPercent, prices: comparison.prices }),
    );
    done += minutes;
    yield { done, total };
  }
  const { variants: _, ...planInfo } = plan;
  return { comparison, plan: planInfo, ...placePoints(comparison, plan, variants) };
}

/** Runs the sweep at once. */
export function sweep(input: SweepInput): Sweep {
  return finish(sweepSteps(input), input.onProgress);
}

/** {@link sweep}, giving way to the event loop between steps; stops when the signal is aborted. */
export function sweepAsync(input: SweepInput, signal?: AbortSignal): Promise<Sweep> {
  return finishAsync(sweepSteps(input), input.onProgress, signal);
}
