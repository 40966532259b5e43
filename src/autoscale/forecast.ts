/**
 * The seasonal forecast: how much demand grows over the next lead time, judged by what the same
 * hours of past cycles did. Pure.
 *
 * Rule: for each past cycle `k` (a day, or a week with 21 days of history or more), with `P` the
 * cycle and `ref` the end of the newest complete minute the decision reads:
 *   base_k   = the highest demand of the history buckets overlapping `[ref − kP − level, ref − kP)`
 *   ahead_k  = the highest demand of the buckets overlapping `[ref − kP, ref − kP + horizon)`
 *   ratio_k  = ahead_k ÷ base_k
 * and the forecast is `median(ratio_k)` — the growth the past cycles saw over the same span,
 * applied to today's level (a seasonal-ratio forecast: it follows a level that moved since, which
 * a forecast of absolute values would not), with its upper quartile beside it (`upperRatio`, for
 * the recommendation's rounding to a rung). Demand is the peak connection count, or the message
 * traffic where connections are unknown. Buckets below 1 % of the history's peak are too small to
 * divide by and are left out.
 *
 * Too little history (less than `MIN_HISTORY_DAYS` days between the oldest and newest bucket, or
 * fewer than 3 usable cycles) gives `InsufficientHistory`: the decision stays reactive and says why.
 */
import { median, quantile } from "simple-statistics";
import { MIN_HISTORY_DAYS } from "../api/constants.js";
import type { DemandHistory, DemandPoint } from "./demand-history.js";

const DAY_MS = 86_400_000;
/** How much shorter than the days asked for a history may be, days (two hours: the newest buckets are read hourly). */
const HISTORY_MARGIN_DAYS = 2 / 24;
/** Fewest usable past cycles for a forecast. */
export const MIN_CYCLES = 3;
/** Weekly cycles from this much history on, days. */
const WEEKLY_FROM_DAYS = 21;

/** What the forecast says. */
export interface SeasonalForecast {
  state: "Ok" | "InsufficientHistory" | "Unavailable";
  cycle?: "Daily" | "Weekly";
  /** Past cycles used. */
  cycles?: number;
  /** Demand one horizon ahead ÷ demand now (median over the cycles). */
  ratio?: number;
  /** The same ratio's upper quartile over the cycles: the growth one past cycle in four exceeded. */
  upperRatio?: number;
  /** Oldest history bucket, ms. */
  historyFromMs?: number;
  message: string;
}

/** Where the forecast stands and how far it looks. */
export interface ForecastWindow {
  /** End of the newest complete minute the decision reads, ms. */
  refMs: number;
  /** How far ahead of `refMs` capacity must be sized (the lead time), ms. */
  horizonMs: number;
  /** Span of today's level (the metrics window), ms. */
  levelMs: number;
}

export function demandOf(p: DemandPoint, useConnections: boolean): number | null {
  const v = useConnections ? p.connections : p.bytesPerSecond;
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
}

/** The highest demand of the buckets overlapping `[from, to)`, or undefined. */
export function highest(
  points: readonly DemandPoint[],
  grainMs: number,
  from: number,
  to: number,
  useConnections: boolean,
): number | undefined {
  let best: number | undefined;
  // Points are oldest first: a binary search finds the first bucket ending after `from`.
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((points[mid] as DemandPoint).timeMs + grainMs <= from) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < points.length; i++) {
    const p = points[i] as DemandPoint;
    if (p.timeMs >= to) break;
    const v = demandOf(p, useConnections);
    if (v !== null && (best === undefined || v > best)) best = v;
  }
  return best;
}

/** A history that can be forecast from: its points, grain, measure and cycle. */
export interface SeasonalBasis {
  points: readonly DemandPoint[];
  grainMs: number;
  /** Connections are the measure (else traffic): whichever more buckets know. */
  useConnections: boolean;
  /** Buckets below this demand are too small to divide by (1 % of the history's peak). */
  floor: number;
  weekly: boolean;
  /** The cycle, ms: a day, or a week with {@link WEEKLY_FROM_DAYS} days of history or more. */
  periodMs: number;
  historyFromMs: number;
}

/** The basis of a forecast from `history`, or why there is none (Unavailable, InsufficientHistory). */
export function seasonalBasis(history: DemandHistory | undefined): SeasonalBasis | SeasonalForecast {
  if (!history) return { state: "Unavailable", message: "history not read yet" };
  if (history.error !== undefined) {
    return { state: "Unavailable", message: `history could not be read: ${history.error}` };
  }
  const points = history.points;
  const grainMs = history.grainSeconds * 1000;
  const first = points[0];
  const last = points.at(-1);
  if (!first || !last) {
    return { state: "InsufficientHistory", message: `no history yet: ${MIN_HISTORY_DAYS} days needed` };
  }
  const days = (last.timeMs + grainMs - first.timeMs) / DAY_MS;
  const historyFromMs = first.timeMs;
  // A history of N days read now ends at the newest complete bucket read, up to an hour ago: a
  // margin keeps `historyDays: 7` (the minimum) from never being enough.
  if (days + HISTORY_MARGIN_DAYS < MIN_HISTORY_DAYS) {
    return {
      state: "InsufficientHistory",
      historyFromMs,
      message: `${days.toFixed(1)} days of history, ${MIN_HISTORY_DAYS} needed: reactive only`,
    };
  }
  const known = (c: boolean) => points.reduce((n, p) => n + (demandOf(p, c) !== null ? 1 : 0), 0);
  const useConnections = known(true) >= known(false);
  const floor = 0.01 * points.reduce((m, p) => Math.max(m, demandOf(p, useConnections) ?? 0), 0);
  const weekly = days >= WEEKLY_FROM_DAYS;
  const periodMs = weekly ? 7 * DAY_MS : DAY_MS;
  return { points, grainMs, useConnections, floor, weekly, periodMs, historyFromMs };
}

/**
 * The seasonal forecast of `history` at `window` (see the module comment).
 * @returns state Unavailable with the read error, InsufficientHistory with what is missing, or Ok
 *   with the ratio.
 */
export function seasonalForecast(
  history: DemandHistory | undefined,
  window: ForecastWindow,
): SeasonalForecast {
  const basis = seasonalBasis(history);
  if ("state" in basis) return basis;
  const { points, grainMs, useConnections, floor, weekly, periodMs, historyFromMs } = basis;
  const firstMs = historyFromMs;
  const ratios: number[] = [];
  for (let k = 1; window.refMs - k * periodMs - window.levelMs >= firstMs; k++) {
    const at = window.refMs - k * periodMs;
    const base = highest(points, grainMs, at - window.levelMs, at, useConnections);
    const ahead = highest(points, grainMs, at, at + window.horizonMs, useConnections);
    if (base === undefined || ahead === undefined || base <= floor || !(base > 0)) continue;
    ratios.push(ahead / base);
  }
  const cycle = weekly ? "Weekly" : "Daily";
  if (ratios.length < MIN_CYCLES) {
    return {
      state: "InsufficientHistory",
      cycle,
      cycles: ratios.length,
      historyFromMs,
      message: `${ratios.length} usable ${weekly ? "weeks" : "days"} of history at this hour, ${MIN_CYCLES} needed: reactive only`,
    };
  }
  const ratio = median(ratios);
  const upperRatio = quantile(ratios, 0.75);
  const what = useConnections ? "connections" : "traffic";
  return {
    state: "Ok",
    cycle,
    cycles: ratios.length,
    ratio,
    upperRatio,
    historyFromMs,
    message: `${cycle.toLowerCase()} cycle, ${ratios.length} past ${weekly ? "weeks" : "days"}: ${what} ×${ratio.toFixed(2)} over the next ${Math.round(window.horizonMs / 60_000)} min (median)`,
  };
}
