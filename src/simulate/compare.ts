/**
 * The comparison `simulate` prints: on the same demand, the policy, Azure's native autoscale, a
 * static allocation at peak and the oracle — each run, then summed up. Pure: the demand, mix,
 * timings and seed are arguments.
 *
 * Set-up, in order:
 * 1. The oracle (`oracle.ts`) over the policy's allowed sizes at the load target (the policy's
 *    serverLoad target, else 70 %, unless given).
 * 2. Static: the oracle's peak size.
 * 3. Native autoscale: on Premium_P2 when the static size needs it (above 100 units), else
 *    Premium_P1 (or the SKU given); instance limits are the policy's `units` bounds snapped onto
 *    that SKU's ladder (Premium_P1 at most 100, Premium_P2 at least 100); the default count is its
 *    starting count.
 * 4. Starting capacity of the policy and native autoscale: the oracle's size of the first minute,
 *    brought within their own bounds — every strategy starts right-sized. With `initial` (the
 *    instance's real size) the policy starts there as the operator would find it, whatever its
 *    SKU and units (a size the policy does not allow is moved by its first decision), and native
 *    autoscale starts there too when it runs on that SKU (brought within its instance limits); an
 *    autoscale setting never changes the SKU, so on another SKU it keeps its own start. `start`
 *    says which, with a note for each of these cases.
 */
import type { DecisionPolicy } from "../autoscale/decide.js";
import { compareSizes } from "../autoscale/sizes.js";
import {
  candidates,
  DEFAULT_LADDERS,
  isScalableSku,
  SCALABLE_SKUS,
  type SkuUnits,
} from "../capacity/index.js";
import { type SimulationSetup, type StrategyRun, simulation, sizeAt } from "./engine.js";
import { DEFAULT_PRICES, type StrategyMetrics, summarize, type UnitPrices } from "./metrics.js";
import { oracleRun, peakSize } from "./oracle.js";
import { defaultNativeRules, NativeAutoscaleStrategy, type NativeSetting } from "./strategies/native.js";
import { PolicyStrategy } from "./strategies/policy.js";
import { StaticStrategy } from "./strategies/static.js";

/** Settings of the native autoscale model. */
export interface NativeOptions {
  sku?: "Premium_P1" | "Premium_P2";
  /** Scale-out threshold on both metrics, % (default 70). */
  outPercent?: number;
  /** Scale-in threshold on both metrics, % (default 30). */
  inPercent?: number;
  /** Rules' time window, minutes (default 10). */
  timeWindowMinutes?: number;
  /** Cooldown, minutes (default 5). */
  cooldownMinutes?: number;
}

/** Everything a comparison depends on: the policy, and the traffic every strategy runs on. */
export interface ComparisonInput extends SimulationSetup {
  policy: DecisionPolicy;
  /** Load target, % (default: the policy's serverLoad target, else 70). */
  loadTargetPercent?: number;
  prices?: UnitPrices;
  native?: NativeOptions;
  /**
   * The instance's size at the start, as the operator would find it (see {@link startingSize});
   * default: the oracle's size of the first minute within the policy's bounds.
   */
  initial?: SkuUnits;
  /** Progress over all strategies: minutes done of `total`. */
  onProgress?: (done: number, total: number) => void;
}

/** The comparison's result. */
export interface Comparison {
  loadTargetPercent: number;
  prices: UnitPrices;
  /** policy, native, static, oracle — in that order. */
  runs: StrategyRun[];
  metrics: StrategyMetrics[];
  native: NativeSetting;
  staticSize: SkuUnits;
  /** What was changed to simulate the policy. */
  policyOverrides: string[];
  initial: { policy: SkuUnits; native: SkuUnits };
  /** Where the starting sizes come from, and what is worth knowing about them. */
  start: { from: "instance" | "oracle"; notes: string[] };
}

/** `1–10, 20, 30 … 100`: a unit ladder as people read it. */
export function describeLadder(ladder: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < ladder.length) {
    const a = ladder[i] as number;
    const step = (ladder[i + 1] ?? a) - a;
    let j = i + 1;
    while (j + 1 < ladder.length && (ladder[j + 1] as number) - (ladder[j] as number) === step) j++;
    if (j - i >= 2) {
      const b = ladder[j] as number;
      parts.push(step === 1 ? `${a}–${b}` : `${a}, ${a + step} … ${b}`);
      i = j + 1;
    } else {
      parts.push(String(a));
      i++;
    }
  }
  return parts.join(", ");
}

/**
 * The size an instance can have when a run starts: a SKU the operator scales (not Free_F1) and a
 * unit count on that SKU's ladder.
 * @throws RangeError naming the SKU or the unit count and the ladder.
 */
export function startingSize(sku: string, units: number): SkuUnits {
  if (!isScalableSku(sku)) {
    throw new RangeError(`${sku} is not a SKU the operator scales (${SCALABLE_SKUS.join(", ")})`);
  }
  const ladder = DEFAULT_LADDERS[sku];
  if (!ladder.includes(units)) {
    throw new RangeError(`${units} is not a unit count of ${sku} (${describeLadder(ladder)})`);
  }
  return { sku, units };
}

const shown = (s: SkuUnits) => `${s.sku} × ${s.units}`;

/** What is worth knowing about starting the policy and native autoscale at the instance's size. */
function startNotes(
  policy: DecisionPolicy,
  instance: SkuUnits,
  native: NativeSetting,
  nativeStart: SkuUnits,
) {
  const spec = policy.spec;
  const notes: string[] = [];
  if (!spec.skus.includes(instance.sku)) {
    notes.push(
      `${instance.sku} is not among the policy's SKUs (${spec.skus.join(", ")}): its first decision moves the instance`,
    );
  } else if (instance.units < spec.units.min || instance.units > spec.units.max) {
    notes.push(
      `${shown(instance)} is outside the policy's units ${spec.units.min}–${spec.units.max}: its first decision moves the instance`,
    );
  }
  if (native.sku !== instance.sku) {
    notes.push(
      `native autoscale runs on ${native.sku} and never changes the SKU: it starts at ${shown(nativeStart)}, not at ${shown(instance)}`,
    );
  } else if (nativeStart.units !== instance.units) {
    notes.push(
      `native autoscale starts at ${shown(nativeStart)}: ${shown(instance)} brought within its limits ${native.minimum}–${native.maximum}`,
    );
  }
  return notes;
}

/** The policy's allowed sizes, ascending. */
function policySizes(policy: DecisionPolicy): SkuUnits[] {
  return candidates(policy.spec.skus.filter(isScalableSku));
}

/** The smallest of `sizes` within [min, max] units that is at least `want`; else the nearest bound. */
function within(sizes: readonly SkuUnits[], want: SkuUnits, min: number, max: number): SkuUnits {
  const inRange = sizes.filter((s) => s.units >= min && s.units <= max);
  const pool = inRange.length > 0 ? inRange : sizes;
  return pool.find((s) => compareSizes(s, want) >= 0) ?? (pool[pool.length - 1] as SkuUnits);
}

/** The native autoscale setting for a comparison (see the module comment, step 3). */
export function nativeSettingFor(
  policy: DecisionPolicy,
  staticSize: SkuUnits,
  options: NativeOptions = {},
): NativeSetting {
  const sku =
    options.sku ?? (staticSize.sku === "Premium_P2" || staticSize.units > 100 ? "Premium_P2" : "Premium_P1");
  const ladder = DEFAULT_LADDERS[sku];
  const lo = ladder[0] as number;
  const hi = ladder[ladder.length - 1] as number;
  const minimum = ladder.find((u) => u >= policy.spec.units.min) ?? hi;
  let maximum = lo;
  for (const u of ladder) if (u <= policy.spec.units.max) maximum = u;
  return {
    sku,
    minimum,
    maximum: Math.max(minimum, maximum),
    default: minimum,
    rules: defaultNativeRules(options.outPercent ?? 70, options.inPercent ?? 30),
    timeWindowMinutes: options.timeWindowMinutes ?? 10,
    cooldownMinutes: options.cooldownMinutes ?? 5,
  };
}

/** Progress of a comparison: strategy-minutes done of `total`. */
export interface ComparisonProgress {
  done: number;
  total: number;
}

/**
 * The comparison as steps (see the module comment): yields its progress every few thousand
 * minutes, returns the result. {@link compare} runs it at once, {@link compareAsync} gives way to
 * the event loop between steps and can be aborted.
 */
function* comparison(input: ComparisonInput): Generator<ComparisonProgress, Comparison, void> {
  const minutes = input.demand.length;
  if (minutes === 0) throw new RangeError("nothing to simulate: the demand has no minutes");
  const spec = input.policy.spec;
  const loadTargetPercent = input.loadTargetPercent ?? spec.metrics.serverLoad?.targetPercent ?? 70;
  const prices = input.prices ?? DEFAULT_PRICES;
  const sizes = policySizes(input.policy);
  const total = minutes * 4;
  const oracle = oracleRun({
    demand: input.demand,
    mix: input.mix,
    sizes,
    targetPercent: loadTargetPercent,
    startMs: input.startMs,
  });
  yield { done: minutes, total };
  const staticSize = peakSize(oracle);
  const oracleFirst = sizeAt(oracle, 0);
  const instance = input.initial && startingSize(input.initial.sku, input.initial.units);
  const policyInitial = instance ?? within(sizes, oracleFirst, spec.units.min, spec.units.max);
  const nativeSetting = { ...nativeSettingFor(input.policy, staticSize, input.native ?? {}) };
  const nativeFrom = instance?.sku === nativeSetting.sku ? instance.units : oracleFirst.units;
  const native = new NativeAutoscaleStrategy(nativeSetting, nativeFrom);
  nativeSetting.default = native.initial.units;
  const start: Comparison["start"] = instance
    ? { from: "instance", notes: startNotes(input.policy, instance, nativeSetting, native.initial) }
    : { from: "oracle", notes: [] };
  const policy = new PolicyStrategy(input.policy, policyInitial);
  const strategies = [policy, native, new StaticStrategy(staticSize)];
  const runs: StrategyRun[] = [];
  for (const [i, strategy] of strategies.entries()) {
    const steps = simulation(strategy, input);
    let step = steps.next();
    while (!step.done) {
      yield { done: minutes * (i + 1) + step.value, total };
      step = steps.next();
    }
    runs.push(step.value);
    yield { done: minutes * (i + 2), total };
  }
  runs.push(oracle);
  return {
    loadTargetPercent,
    prices,
    runs,
    metrics: runs.map((r) => summarize(r, { loadTargetPercent, prices })),
    native: nativeSetting,
    staticSize,
    policyOverrides: policy.overrides,
    initial: { policy: policyInitial, native: native.initial },
    start,
  };
}

/** Runs the four strategies and sums them up, at once. */
export function compare(input: ComparisonInput): Comparison {
  const steps = comparison(input);
  let step = steps.next();
  while (!step.done) {
    input.onProgress?.(step.value.done, step.value.total);
    step = steps.next();
  }
  return step.value;
}

/**
 * {@link compare}, giving way to the event loop between steps (so signals and timers run during a
 * long run); stops with the signal's reason when it is aborted.
 */
export async function compareAsync(input: ComparisonInput, signal?: AbortSignal): Promise<Comparison> {
  const steps = comparison(input);
  let step = steps.next();
  while (!step.done) {
    input.onProgress?.(step.value.done, step.value.total);
    await new Promise<void>((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
    step = steps.next();
  }
  return step.value;
}
