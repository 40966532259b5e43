/**
 * The comparison `simulate` prints: on the same demand, the policy, Azure's native autoscale (on
 * Premium_P1 and on Premium_P2), a static allocation at peak and the oracle — each run, then
 * summed up. Pure: the demand, mix, timings and seed are arguments.
 *
 * Set-up, in order:
 * 1. The oracle (`oracle.ts`) over the policy's allowed sizes at the load target (the policy's
 *    serverLoad target, else 70 %, unless given).
 * 2. Static: the oracle's peak size.
 * 3. Native autoscale, one run per Premium SKU (`native-p1`, `native-p2`; or only the SKUs given):
 *    an autoscale setting never changes the SKU, so a user picks one — Premium_P1, which stops at
 *    100 units and refuses connections beyond them, or Premium_P2, which never goes below 100.
 *    Instance limits are the policy's `units` bounds snapped onto that SKU's ladder (Premium_P1 at
 *    most 100, Premium_P2 at least 100); the default count is its starting count. A setting whose
 *    maximum is below the static size says so in its description.
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
  CONNECTIONS_PER_UNIT,
  candidates,
  DEFAULT_LADDERS,
  isScalableSku,
  SCALABLE_SKUS,
  type SkuUnits,
} from "../capacity/index.js";
import { type SimulationSetup, type StrategyRun, simulation, sizeAt } from "./engine.js";
import { DEFAULT_PRICES, type StrategyMetrics, summarize, type UnitPrices } from "./metrics.js";
import { oracleRun, peakSize } from "./oracle.js";
import { finish, finishAsync, type Progress, partOf } from "./steps.js";
import { defaultNativeRules, NativeAutoscaleStrategy, type NativeSetting } from "./strategies/native.js";
import { PolicyStrategy } from "./strategies/policy.js";
import { StaticStrategy } from "./strategies/static.js";

/** The SKUs Azure's native autoscale exists on (Premium only). */
export const NATIVE_SKUS = ["Premium_P1", "Premium_P2"] as const;
export type NativeSku = (typeof NATIVE_SKUS)[number];

/** The name of native autoscale's run on a SKU: `native-p1`, `native-p2`. */
export function nativeName(sku: NativeSku): string {
  return sku === "Premium_P1" ? "native-p1" : "native-p2";
}

/** Settings of the native autoscale model. */
export interface NativeOptions {
  /** SKUs to model it on, one run each, in this order (default: Premium_P1 and Premium_P2). */
  skus?: readonly NativeSku[];
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

/** A native autoscale setting with the name of its run. */
export type NamedNativeSetting = NativeSetting & { name: string };

/** The comparison's result. */
export interface Comparison {
  loadTargetPercent: number;
  prices: UnitPrices;
  /** policy, native-p1, native-p2 (or the native SKUs given), static, oracle — in that order. */
  runs: StrategyRun[];
  metrics: StrategyMetrics[];
  /** One setting per native autoscale run, in run order. */
  native: NamedNativeSetting[];
  staticSize: SkuUnits;
  /** What was changed to simulate the policy. */
  policyOverrides: string[];
  /**
   * spec.anticipation's mode (Off when unset) and the policy's scale-outs it sent ahead of the
   * measured need, by rule (ForecastOnly computes but never sends one, as in the cluster).
   */
  anticipation: { mode: string; scaleOuts: number; byRule: Record<string, number> };
  initial: { policy: SkuUnits; native: (SkuUnits & { name: string })[] };
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
  natives: readonly { setting: NamedNativeSetting; initial: SkuUnits }[],
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
  for (const { setting, initial } of natives) {
    if (setting.sku !== instance.sku) {
      notes.push(
        `${setting.name} runs on ${setting.sku} and never changes the SKU: it starts at ${shown(initial)}, not at ${shown(instance)}`,
      );
    } else if (initial.units !== instance.units) {
      notes.push(
        `${setting.name} starts at ${shown(initial)}: ${shown(instance)} brought within its limits ${setting.minimum}–${setting.maximum}`,
      );
    }
  }
  return notes;
}

/** The policy's allowed sizes, ascending. */
export function policySizes(policy: DecisionPolicy): SkuUnits[] {
  return candidates(policy.spec.skus.filter(isScalableSku));
}

/** The smallest of `sizes` within [min, max] units that is at least `want`; else the nearest bound. */
function within(sizes: readonly SkuUnits[], want: SkuUnits, min: number, max: number): SkuUnits {
  const inRange = sizes.filter((s) => s.units >= min && s.units <= max);
  const pool = inRange.length > 0 ? inRange : sizes;
  return pool.find((s) => compareSizes(s, want) >= 0) ?? (pool[pool.length - 1] as SkuUnits);
}

/**
 * Where the policy (or a variant of it) starts: at the instance's size when given, else at the
 * first of its allowed `sizes` that is at least the oracle's first size, within its `units` bounds.
 */
export function policyStart(
  policy: DecisionPolicy,
  sizes: readonly SkuUnits[],
  oracleFirst: SkuUnits,
  instance?: SkuUnits,
): SkuUnits {
  return instance ?? within(sizes, oracleFirst, policy.spec.units.min, policy.spec.units.max);
}

/** The native autoscale setting on `sku` for a comparison (see the module comment, step 3). */
export function nativeSettingFor(
  policy: DecisionPolicy,
  sku: NativeSku,
  options: Omit<NativeOptions, "skus"> = {},
): NativeSetting {
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
export type ComparisonProgress = Progress;

/** The capacity the static run is above native autoscale's reach, for its description. */
function limitNote(setting: NativeSetting, staticSize: SkuUnits): string | undefined {
  if (staticSize.units <= setting.maximum) return undefined;
  return `at most ${setting.maximum} units (${(setting.maximum * CONNECTIONS_PER_UNIT).toLocaleString("en-US")} connections), below the peak need of ${shown(staticSize)}`;
}

/** Strategy-minutes of a comparison: every strategy run, plus the oracle's computation. */
export function comparisonMinutes(input: ComparisonInput): number {
  return input.demand.length * (3 + (input.native?.skus ?? NATIVE_SKUS).length);
}

/**
 * The comparison as steps (see the module comment): yields its progress every few thousand
 * minutes — strategy-minutes done of `total` (default: its own, {@link comparisonMinutes}; a
 * larger computation that starts with it passes its own) — and returns the result. {@link compare} runs it at once, {@link compareAsync} gives way to
 * the event loop between steps and can be aborted.
 * @throws RangeError when the demand has no minutes, or the native SKUs given are none.
 */
export function* comparisonSteps(
  input: ComparisonInput,
  total = comparisonMinutes(input),
): Generator<Progress, Comparison, void> {
  const minutes = input.demand.length;
  if (minutes === 0) throw new RangeError("nothing to simulate: the demand has no minutes");
  const nativeSkus = input.native?.skus ?? NATIVE_SKUS;
  if (nativeSkus.length === 0) throw new RangeError("native autoscale needs at least one SKU");
  const spec = input.policy.spec;
  const loadTargetPercent = input.loadTargetPercent ?? spec.metrics.serverLoad?.targetPercent ?? 70;
  const prices = input.prices ?? DEFAULT_PRICES;
  const sizes = policySizes(input.policy);
  const oracle = oracleRun({
    demand: input.demand,
    mix: input.mix,
    sizes,
    targetPercent: loadTargetPercent,
    startMs: input.startMs,
    ...(input.disconnection ? { disconnection: input.disconnection } : {}),
  });
  yield { done: minutes, total };
  const staticSize = peakSize(oracle);
  const oracleFirst = sizeAt(oracle, 0);
  const instance = input.initial && startingSize(input.initial.sku, input.initial.units);
  const policyInitial = policyStart(input.policy, sizes, oracleFirst, instance);
  const natives = nativeSkus.map((sku) => {
    const name = nativeName(sku);
    const setting: NamedNativeSetting = { name, ...nativeSettingFor(input.policy, sku, input.native ?? {}) };
    const from = instance?.sku === sku ? instance.units : oracleFirst.units;
    const note = limitNote(setting, staticSize);
    const strategy = new NativeAutoscaleStrategy(setting, from, { name, ...(note ? { note } : {}) });
    setting.default = strategy.initial.units;
    return { setting, strategy, initial: strategy.initial };
  });
  const start: Comparison["start"] = instance
    ? { from: "instance", notes: startNotes(input.policy, instance, natives) }
    : { from: "oracle", notes: [] };
  const policy = new PolicyStrategy(input.policy, policyInitial, { disconnection: input.disconnection });
  const strategies = [policy, ...natives.map((n) => n.strategy), new StaticStrategy(staticSize)];
  const runs: StrategyRun[] = [];
  for (const [i, strategy] of strategies.entries()) {
    runs.push(yield* partOf(simulation(strategy, input), minutes * (i + 1), total));
    yield { done: minutes * (i + 2), total };
  }
  runs.push(oracle);
  return {
    loadTargetPercent,
    prices,
    runs,
    metrics: runs.map((r) => summarize(r, { loadTargetPercent, prices })),
    native: natives.map((n) => n.setting),
    staticSize,
    policyOverrides: policy.overrides,
    anticipation: {
      mode: spec.anticipation?.mode ?? "Off",
      scaleOuts: Object.values(policy.anticipated).reduce((a, b) => a + b, 0),
      byRule: { ...policy.anticipated },
    },
    initial: {
      policy: policyInitial,
      native: natives.map((n) => ({ name: n.setting.name, ...n.initial })),
    },
    start,
  };
}

/** Runs the strategies and sums them up, at once. */
export function compare(input: ComparisonInput): Comparison {
  return finish(comparisonSteps(input), input.onProgress);
}

/**
 * {@link compare}, giving way to the event loop between steps (so signals and timers run during a
 * long run); stops with the signal's reason when it is aborted.
 */
export function compareAsync(input: ComparisonInput, signal?: AbortSignal): Promise<Comparison> {
  return finishAsync(comparisonSteps(input), input.onProgress, signal);
}
