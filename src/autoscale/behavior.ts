/**
 * Behavior shaped like the HorizontalPodAutoscaler's (`spec.behavior`): stabilization windows and
 * rate policies, on unit ladders instead of pod counts.
 *
 * Pinned semantics:
 * - Stabilization (HPA algorithm): with `rec` the fresh recommendation and the stored ones newer
 *   than each window (`time > now − window`), `up = min(rec, scale-up window)`,
 *   `down = max(rec, scale-down window)`; the result is `current`, raised to `up` when `up` is
 *   above it, lowered to `down` when `down` is below it. So scale-in goes to the highest
 *   recommendation of the scale-down window, scale-out to the lowest of the scale-up window.
 *   Sizes compare by units, then tier. With a partial hold (`minStabilizationWindowSeconds`,
 *   recurrence.ts) `down` is the larger of the highest recommendation of its last `afterSeconds`
 *   and the smallest size of at least `fraction` × the window's highest's units (never above it).
 * - Rate policies: for each policy the units at the start of its period are
 *   `current − added + removed` over the scale events sent after `now − periodSeconds`: like the
 *   HPA, which records a scale event when it changes the replicas (not when the pods are ready),
 *   a change counts from when its update was sent (`startedAt`; `time`, when it was seen complete,
 *   for a change found on the instance without a record of it). A policy whose period is the scale
 *   duration then allows one change per operation, the next sent as soon as the last completes;
 *   counted from the completion it would allow one per two operations' time. Limits:
 *   Units `start ± value`; Percent up `ceil(start · (1 + value/100))`, down
 *   `floor(start · (1 − value/100))`; Steps: `value` rungs of the ladder (the union of the allowed
 *   SKUs' unit counts) up or down from the start. selectPolicy Max takes the policy allowing the
 *   largest change, Min the smallest, Disabled forbids the direction.
 * - Per operation: the HPA applies a policy at every sync, so over one period it may change the
 *   replicas by its value and over five periods five times over. An Azure scale operation takes
 *   minutes (`operationSeconds`: measured, else `spec.anticipation.scaleDuration`, 5 min by
 *   default) and no other runs meanwhile, so a policy whose period is shorter than one operation
 *   allows, per operation, what it allows over that operation's duration applied once per period:
 *   with `k = operationSeconds / periodSeconds` periods (at least 1), Units `start ± k · value`,
 *   Percent up `ceil(start · (1 + value/100)^k)`, down `floor(start · (1 − value/100)^k)`, Steps
 *   `floor(k · value)` rungs. `Percent 100 per 60s` on a 5-minute scale allows 2⁵ = 32 × per
 *   operation, as the HPA would reach in those 5 minutes; a period as long as the operation or
 *   longer is unchanged (k = 1).
 * - A limit between two rungs snaps toward the current size, but never blocks the next rung: a
 *   policy that allows any change allows at least one ladder step.
 * - A SKU change at the same unit count (e.g. Premium_P1 100 → Premium_P2 100) is not a unit
 *   change and no rate policy limits it.
 */
import type { Recommendation, ScaleEvent, ScalingPolicy, ScalingRules } from "../api/index.js";
import type { SkuUnits } from "../capacity/skus.js";
import type { LimitCode } from "./reasons.js";
import { compareSizes, type SizeList } from "./sizes.js";
import { parseTime } from "./time.js";

const EPS = 1e-9;
/** ceil that ignores binary noise: ceilSafe(12.000000000001) = 12. */
export const ceilSafe = (x: number): number => Math.ceil(x - EPS);
/** floor that ignores binary noise: floorSafe(11.999999999999) = 12. */
export const floorSafe = (x: number): number => Math.floor(x + EPS);

const timeMs = parseTime;

/** Input of {@link stabilize}. */
export interface StabilizeInput {
  current: SkuUnits;
  /** This pass's recommendation (from the metrics). */
  recommendation: SkuUnits;
  /** Stored recommendations of earlier passes (any order). */
  history: readonly Recommendation[];
  nowMs: number;
  scaleUpWindowSeconds: number;
  scaleDownWindowSeconds: number;
  /**
   * A peak let go in part (`behavior.scaleDown.minStabilizationWindowSeconds`, recurrence.ts):
   * the scale-down window's highest recommendation counts at `fraction` (0..1) of its units,
   * rounded up to a size by `round` (a size list's `firstAtLeast`; the whole when undefined), and
   * the highest of the last `afterSeconds` counts whole.
   */
  scaleDownPartial?: {
    afterSeconds: number;
    fraction: number;
    round: (units: number) => SkuUnits | undefined;
  };
}

/** Result of {@link stabilize}. */
export interface StabilizeResult {
  size: SkuUnits;
  /** Set when stabilization held back the recommendation. */
  code?: "StabilizedUp" | "StabilizedDown";
  /** Lowest recommendation of the scale-up window (including this pass's). */
  up: SkuUnits;
  /** Highest recommendation of the scale-down window (including this pass's), as held. */
  down: SkuUnits;
  /** With a partial hold that lowered it: the window's highest recommendation, whole. */
  whole?: SkuUnits;
  /**
   * With a partial hold that could not lower it: the fraction of the window's highest
   * recommendation, units (un-rounded), which no size smaller than it holds (e.g. 58 % of
   * Premium_P2 200 is 116 units, above Premium_P2 100: the peak is held whole).
   */
  roundedUp?: number;
}

/**
 * The scale-down window's highest recommendation `down` as a partial hold keeps it: `fraction` of
 * its units rounded up to a size, never above it, never below `recent` (the highest of the last
 * `afterSeconds`). `roundedUp`: that fraction (units, un-rounded) when rounding it up to a size
 * gives `down` itself (no smaller size holds it), so the peak is held whole.
 */
function heldInPart(
  down: SkuUnits,
  recent: SkuUnits,
  partial: NonNullable<StabilizeInput["scaleDownPartial"]>,
): { held: SkuUnits; roundedUp?: number } {
  const units = partial.fraction * down.units;
  const part = partial.round(ceilSafe(units)) ?? down;
  const held = compareSizes(part, down) < 0 ? part : down;
  if (compareSizes(recent, held) >= 0) return { held: recent };
  return held === down ? { held, roundedUp: units } : { held };
}

/** The window's highest recommendation as held, with `whole` and `roundedUp` as in the result. */
function scaleDownHeld(
  down: SkuUnits,
  recent: SkuUnits,
  partial: StabilizeInput["scaleDownPartial"],
): Pick<StabilizeResult, "down" | "whole" | "roundedUp"> {
  if (!partial) return { down };
  const { held, roundedUp } = heldInPart(down, recent, partial);
  return {
    down: held,
    ...(compareSizes(held, down) < 0 ? { whole: down } : {}),
    ...(roundedUp !== undefined ? { roundedUp } : {}),
  };
}

/** Applies the stabilization windows (see the module comment). Pure. */
export function stabilize(input: StabilizeInput): StabilizeResult {
  const { current, recommendation: rec, nowMs } = input;
  const partial = input.scaleDownPartial;
  let up: SkuUnits = rec;
  let down: SkuUnits = rec;
  let recent: SkuUnits = rec;
  for (const r of input.history) {
    const t = timeMs(r.time);
    if (!Number.isFinite(t)) continue;
    if (t > nowMs - input.scaleUpWindowSeconds * 1000 && compareSizes(r, up) < 0) up = r;
    if (t > nowMs - input.scaleDownWindowSeconds * 1000 && compareSizes(r, down) > 0) down = r;
    if (partial && t > nowMs - partial.afterSeconds * 1000 && compareSizes(r, recent) > 0) recent = r;
  }
  const held = scaleDownHeld(down, recent, partial);
  down = held.down;
  let size: SkuUnits = current;
  if (compareSizes(size, up) < 0) size = up;
  if (compareSizes(size, down) > 0) size = down;
  size = { sku: size.sku, units: size.units };
  const result: StabilizeResult = { size, up, ...held };
  const wantUp = compareSizes(rec, current) > 0;
  const wantDown = compareSizes(rec, current) < 0;
  if (wantUp && compareSizes(size, rec) < 0) result.code = "StabilizedUp";
  if (wantDown && compareSizes(size, rec) > 0) result.code = "StabilizedDown";
  if (!wantUp && !wantDown && compareSizes(size, rec) !== 0) {
    result.code = compareSizes(size, rec) < 0 ? "StabilizedUp" : "StabilizedDown";
  }
  return result;
}

/**
 * Units added and removed by the scale events sent after `now − periodSeconds` (each counts from
 * its `startedAt`, else its `time`; see the module comment).
 */
export function changesInPeriod(
  events: readonly ScaleEvent[],
  nowMs: number,
  periodSeconds: number,
): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const e of events) {
    const t = timeMs(e.startedAt ?? e.time);
    if (!(t > nowMs - periodSeconds * 1000) || t > nowMs) continue;
    const delta = e.toUnits - e.fromUnits;
    if (delta > 0) added += delta;
    else removed -= delta;
  }
  return { added, removed };
}

/**
 * The periods of `policy` one scale operation of `operationSeconds` spans: at least 1 (see the
 * module comment, "Per operation").
 */
export function periodsPerOperation(policy: ScalingPolicy, operationSeconds: number): number {
  if (!(operationSeconds > 0) || !(policy.periodSeconds > 0)) return 1;
  return Math.max(1, operationSeconds / policy.periodSeconds);
}

/**
 * The unit limit one policy allows in one direction, from `periodStart` units, applied `periods`
 * times (at least 1; {@link periodsPerOperation}).
 */
export function policyLimit(
  policy: ScalingPolicy,
  direction: "up" | "down",
  periodStart: number,
  rungs: readonly number[],
  periods = 1,
): number {
  const sign = direction === "up" ? 1 : -1;
  const k = Math.max(1, periods);
  switch (policy.type) {
    case "Units":
      return periodStart + sign * floorSafe(k * policy.value);
    case "Percent":
      return direction === "up"
        ? ceilSafe(periodStart * (1 + policy.value / 100) ** k)
        : floorSafe(periodStart * Math.max(0, 1 - policy.value / 100) ** k);
    case "Steps": {
      if (rungs.length === 0) return periodStart;
      const steps = floorSafe(k * policy.value);
      if (direction === "up") {
        let idx = -1;
        for (let i = 0; i < rungs.length; i++) if ((rungs[i] as number) <= periodStart) idx = i;
        return rungs[Math.min(idx + steps, rungs.length - 1)] as number;
      }
      let idx = rungs.findIndex((u) => u >= periodStart);
      if (idx === -1) idx = rungs.length;
      return rungs[Math.max(idx - steps, 0)] as number;
    }
  }
}

/** Input of {@link rateLimit}. */
export interface RateLimitInput {
  current: SkuUnits;
  /** The size after stabilization. */
  proposed: SkuUnits;
  sizes: SizeList;
  /** Stored scale events (any order). */
  events: readonly ScaleEvent[];
  nowMs: number;
  scaleUp: ScalingRules;
  scaleDown: ScalingRules;
  /**
   * How long one scale operation takes, seconds (the measured scale duration, else the declared
   * one): a policy with a shorter period applies per operation (see the module comment). Unset: 0,
   * each policy applied once.
   */
  operationSeconds?: number;
}

/** Result of {@link rateLimit}. */
export interface RateLimitResult {
  size: SkuUnits;
  code?: Extract<LimitCode, "RateLimitedUp" | "RateLimitedDown" | "ScaleUpDisabled" | "ScaleDownDisabled">;
  /** The unit limit the policies allow (set when a direction has policies). */
  limitUnits?: number;
  /** "Steps 2 per 60s" — the policy that set the limit ("… × 5 per operation" when compounded). */
  policy?: string;
}

const describe = (p: ScalingPolicy, periods: number) => {
  const k = Math.round(periods * 10) / 10;
  return `${p.type} ${p.value} per ${p.periodSeconds}s${k > 1 ? ` (× ${k} per operation)` : ""}`;
};

/**
 * The policy of `rules` that sets the limit in `direction` and the limit it allows, units: for
 * each policy the limit from the units at the start of its period (see the module comment), the
 * highest or lowest as `selectPolicy` says. Undefined when `rules` has no policy.
 */
function selectedLimit(
  rules: ScalingRules,
  direction: "up" | "down",
  input: Pick<RateLimitInput, "current" | "sizes" | "events" | "nowMs" | "operationSeconds">,
): { limit: number; chosen: ScalingPolicy; periods: number } | undefined {
  let best: { limit: number; chosen: ScalingPolicy; periods: number } | undefined;
  // Up + Max: the highest limit; up + Min: the lowest. Down + Max: the lowest limit (the largest
  // change); down + Min: the highest.
  const wantHigher = (direction === "up") === (rules.selectPolicy === "Max");
  for (const p of rules.policies) {
    const { added, removed } = changesInPeriod(input.events, input.nowMs, p.periodSeconds);
    const start = input.current.units - added + removed;
    const periods = periodsPerOperation(p, input.operationSeconds ?? 0);
    const l = policyLimit(p, direction, start, input.sizes.rungs, periods);
    if (best === undefined || (wantHigher ? l > best.limit : l < best.limit))
      best = { limit: l, chosen: p, periods };
  }
  return best;
}

/**
 * The size a limit of `limit` units allows in `direction` from `current`: the rung at the limit
 * snapped toward `current`, but at least one rung of the ladder when the limit allows any change.
 */
function limitedSize(direction: "up" | "down", current: SkuUnits, sizes: SizeList, limit: number): SkuUnits {
  if (direction === "up") {
    const size = sizes.largestAtMost(limit);
    if (size && size.units > current.units) return size;
    return limit > current.units ? (sizes.nextUp(current.units) ?? current) : current;
  }
  const size = sizes.firstAtLeast(limit);
  if (size && size.units < current.units) return size;
  return limit < current.units ? (sizes.nextDown(current.units) ?? current) : current;
}

/** Applies the rate policies of the direction `proposed` moves in (see the module comment). Pure. */
export function rateLimit(input: RateLimitInput): RateLimitResult {
  const { current, proposed, sizes } = input;
  const cmp = compareSizes(proposed, current);
  if (cmp === 0) return { size: proposed };
  const direction = cmp > 0 ? "up" : "down";
  const rules = direction === "up" ? input.scaleUp : input.scaleDown;
  if (rules.selectPolicy === "Disabled") {
    return { size: current, code: direction === "up" ? "ScaleUpDisabled" : "ScaleDownDisabled" };
  }
  const selected = selectedLimit(rules, direction, input);
  if (selected === undefined) return { size: proposed };
  const { limit } = selected;
  const policy = describe(selected.chosen, selected.periods);
  const within =
    direction === "up"
      ? proposed.units <= Math.max(limit, current.units)
      : proposed.units >= Math.min(limit, current.units);
  if (within) return { size: proposed, limitUnits: limit, policy };
  return {
    size: limitedSize(direction, current, sizes, limit),
    code: direction === "up" ? "RateLimitedUp" : "RateLimitedDown",
    limitUnits: limit,
    policy,
  };
}

/** The tolerance of each direction, fractions of the current capacity. */
export interface ToleranceBand {
  up: number;
  down: number;
}

/**
 * `behavior.scaleUp.tolerance` and `behavior.scaleDown.tolerance`, each `behavior.tolerance` when
 * unset (the HorizontalPodAutoscaler's per-direction tolerance).
 */
export function toleranceBand(behavior: {
  tolerance: number;
  scaleUp: { tolerance?: number | undefined };
  scaleDown: { tolerance?: number | undefined };
}): ToleranceBand {
  return {
    up: behavior.scaleUp.tolerance ?? behavior.tolerance,
    down: behavior.scaleDown.tolerance ?? behavior.tolerance,
  };
}
