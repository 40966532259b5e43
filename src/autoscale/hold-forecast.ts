/**
 * How long a smaller size is expected to hold, by the seasonal history (`forecast.ts`'s basis):
 * until the need, following the shape of the same span of past cycles, rises above its units.
 * Pure.
 *
 * Rule: for each past cycle `k` (a day, or a week with 21 days of history or more), `base_k` is
 * the highest demand of the buckets overlapping `[ref − kP − level, ref − kP)` — today's level then
 * — and the hold of cycle `k` is the time from `ref − kP` to the start of the first bucket within
 * the horizon whose demand × `need ÷ base_k` is above `units` (the whole horizon when none is).
 * The expected hold is the median over the cycles (at least `MIN_CYCLES`, else InsufficientHistory).
 * Demand is the measure the forecast uses (peak connections, or traffic where those are unknown);
 * buckets below 1 % of the history's peak are too small to divide by.
 */
import { median } from "simple-statistics";
import type { DemandHistory, DemandPoint } from "./demand-history.js";
import { demandOf, highest, MIN_CYCLES, seasonalBasis } from "./forecast.js";

/** What the forecast expects of a smaller size. */
export type ForecastHold =
  | { state: "Ok"; seconds: number; cycles: number; cycle: "Daily" | "Weekly" }
  | { state: "InsufficientHistory" | "Unavailable"; message: string };

/** Where the forecast stands and what it is asked. */
export interface HoldQuery {
  /** End of the newest complete minute the decision reads, ms. */
  refMs: number;
  /** Span of today's level (the metrics window), ms. */
  levelMs: number;
  /** How far ahead to look, ms (a hold that reaches it counts as the whole horizon). */
  horizonMs: number;
  /** The need now, units (un-snapped). */
  needUnits: number;
  /** The smaller size's units. */
  units: number;
}

/** Index of the first point whose bucket ends after `fromMs` (points oldest first). */
function firstEndingAfter(points: readonly DemandPoint[], grainMs: number, fromMs: number): number {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((points[mid] as DemandPoint).timeMs + grainMs <= fromMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The expected hold of `query.units` (see the module comment). */
export function forecastHold(history: DemandHistory | undefined, query: HoldQuery): ForecastHold {
  const basis = seasonalBasis(history);
  if ("state" in basis)
    return { state: basis.state === "Ok" ? "Unavailable" : basis.state, message: basis.message };
  const { points, grainMs, useConnections, floor, periodMs, weekly, historyFromMs } = basis;
  const holds: number[] = [];
  for (let k = 1; query.refMs - k * periodMs - query.levelMs >= historyFromMs; k++) {
    const at = query.refMs - k * periodMs;
    const base = highest(points, grainMs, at - query.levelMs, at, useConnections);
    if (base === undefined || base <= floor || !(base > 0)) continue;
    // Demand above this in cycle k puts the need above the smaller size.
    const limit = (query.units * base) / Math.max(query.needUnits, Number.MIN_VALUE);
    let hold = query.horizonMs;
    for (let i = firstEndingAfter(points, grainMs, at); i < points.length; i++) {
      const p = points[i] as DemandPoint;
      if (p.timeMs >= at + query.horizonMs) break;
      const v = demandOf(p, useConnections);
      if (v !== null && v > limit) {
        hold = Math.max(0, p.timeMs - at);
        break;
      }
    }
    holds.push(hold);
  }
  if (holds.length < MIN_CYCLES) {
    return {
      state: "InsufficientHistory",
      message: `${holds.length} usable ${weekly ? "weeks" : "days"} of history at this hour, ${MIN_CYCLES} needed`,
    };
  }
  return {
    state: "Ok",
    seconds: Math.round(median(holds) / 1000),
    cycles: holds.length,
    cycle: weekly ? "Weekly" : "Daily",
  };
}
