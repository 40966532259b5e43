/**
 * The Trend rule, two readings of the window (each signal's need per bucket, signals.ts
 * `DemandSeries`, fitted with a Theil–Sen line, trend.ts):
 *
 * - **Each signal's own rise.** When a need rises consistently (Kendall's tau ≥ 0.6 over ≥ 3
 *   buckets) and by more than twice the tolerance band and 3 × the points' scatter around the line
 *   across the window (`lower-quartile slope · span ≥ max(2 · tolerance · peak, 3 · 1.4826 ·
 *   MAD(residuals))`: noise on a flat signal does neither), the line is read at the target time,
 *   capped at 4 × the window's peak.
 * - **The clients' growth.** Server load and traffic follow the clients, and the connection count
 *   is a count, not a noisy load measurement: a steady rise of it is seen before it has risen by
 *   two bands. When the connections need rises consistently (tau ≥ 0.6, rise across the window ≥ 3
 *   × the scatter) and its lower-quartile slope, kept up until the target time, takes it out of
 *   the tolerance band (`lower · (target − newest) ≥ tolerance · peak`: a scale is due before the
 *   capacity would land), every signal's peak need is raised by the same growth,
 *   `g = (line at the newest bucket + lower · (target − newest)) ÷ peak` (at most 4), and the
 *   largest is asked for. A ramp of 160 connections a minute at 8,000 (2 % a minute) rises 8 %
 *   across a 5-bucket window, short of two 10 % bands, but 17 % by a target 8.5 minutes past the
 *   newest bucket: at 85 % server load the quota is reached before a scale decided on the
 *   measured need lands.
 *
 * A series whose newest bucket is at its ceiling is left to the CensoredDemand rule, and only
 * buckets that measure the demand itself are fitted (censored ones — a full quota, the old ceiling
 * during a change — are lower bounds: a fixed demand let in as our capacity rises is not a trend).
 * Pure.
 */
import { fmt } from "../format.js";
import { measuredPoints } from "../signals/common.js";
import type { DemandPoint, DemandSeries } from "../signals/types.js";
import { beyondTolerance, type ConsistentRise, consistentRise, type Trend } from "../trend.js";
import {
  iso,
  MAX_PROJECTION,
  MINUTE_MS,
  mid,
  minutes,
  type Rule,
  type RuleAsk,
  type RuleContext,
  type RuleResult,
} from "./rule.js";

/** A need that rises: its line and the window's peak need (units). */
export interface Rise {
  trend: Trend;
  level: number;
}

/** A need's line over the window: fitted on the buckets that measure the demand itself. */
interface Fit extends Rise, ConsistentRise {
  /** The newest measured bucket. */
  newest: DemandPoint;
}

/**
 * The consistent line of `d` (Kendall's tau ≥ 0.6, a lower-quartile slope above 0, a rise across
 * the window of at least 3 × the scatter), fitted on the buckets that measure the demand itself
 * (`measuredPoints`): a censored bucket (quota full, or at the old ceiling during a change) is a
 * lower bound, and a rise out of it is our capacity uncovering clients, not demand growing.
 * Undefined with fewer than 3 such buckets or without a consistent rise.
 */
function consistentFit(d: DemandSeries): Fit | undefined {
  const measured = measuredPoints(d);
  const newest = measured.at(-1);
  if (!newest) return undefined;
  const rise = consistentRise(measured.map((p) => ({ timeMs: mid(p.start), value: p.units })));
  const level = Math.max(...d.points.map((p) => p.units));
  return rise ? { ...rise, newest, level } : undefined;
}

/**
 * The rise of a need over the window, or undefined when it does not rise (see the module
 * comment) or has too few measured buckets: a consistent rise ({@link consistentFit}) larger,
 * across the window, than twice the tolerance band — noise on a flat signal does neither.
 * `tolerance` is the scale-up tolerance (a share of the level).
 */
export function riseOf(d: DemandSeries, tolerance: number): Rise | undefined {
  const fit = consistentFit(d);
  const rising = fit && beyondTolerance(fit, fit.level, tolerance);
  return rising ? fit : undefined;
}

/** The Trend ask of one signal's need, when it rises above the window's peak by the target time. */
function trendAsk(d: DemandSeries, tolerance: number, targetMs: number): RuleAsk | undefined {
  const newest = d.points.at(-1);
  const rise = riseOf(d, tolerance);
  if (!newest || !rise || d.saturated) return undefined;
  const { trend, level } = rise;
  const projected = Math.min(trend.at(targetMs), level * MAX_PROJECTION);
  if (!(projected > level)) return undefined;
  return {
    rule: "Trend",
    units: projected,
    message: `${d.signal} need rising ${fmt(trend.perMinute)} units/min over ${d.points.length} buckets (tau ${fmt(trend.tau)}): ${fmt(projected)} units at ${iso(targetMs).slice(11, 16)} UTC, ${minutes(targetMs - mid(newest.start))} past the newest bucket`,
  };
}

export const trendRule: Rule = { rule: "Trend", evaluate: evaluateTrend };

/**
 * The clients' growth (see the module comment): the connections need's conservative line read at
 * the target time, as a factor of its window's peak, when it rises consistently and leaves the
 * tolerance band by then; undefined otherwise (no connections signal, a full quota, too few
 * measured buckets, no such rise).
 */
function clientsGrowth(
  connections: DemandSeries | undefined,
  tolerance: number,
  targetMs: number,
): { factor: number; trend: Trend } | undefined {
  const fit = connections && !connections.saturated ? consistentFit(connections) : undefined;
  if (!fit || !(fit.level > 0)) return undefined;
  const { trend, newest, level } = fit;
  const rise = trend.lowerPerMinute * ((targetMs - mid(newest.start)) / MINUTE_MS);
  if (rise < tolerance * level) return undefined;
  const projected = Math.min(trend.at(mid(newest.start)) + rise, level * MAX_PROJECTION);
  return projected > level ? { factor: projected / level, trend } : undefined;
}

/** The Trend ask of the clients' growth: every signal's peak need × the growth, the largest. */
function growthAsk(ctx: RuleContext): RuleAsk | undefined {
  const connections = ctx.demand.find((d) => d.signal === "connections");
  const growth = clientsGrowth(connections, ctx.tolerance, ctx.targetMs);
  if (!growth) return undefined;
  let top: { signal: string; units: number } | undefined;
  for (const d of ctx.demand) {
    const units = Math.max(...d.points.map((p) => p.units));
    if (top === undefined || units > top.units) top = { signal: d.signal, units };
  }
  if (!top) return undefined;
  const units = top.units * growth.factor;
  const perMinute = growth.trend.lowerPerMinute * ctx.connectionsPerUnit;
  return {
    rule: "Trend",
    units,
    message: `connections rising at least ${fmt(Math.round(perMinute))}/min over ${growth.trend.points} buckets (tau ${fmt(growth.trend.tau)}): × ${fmt(growth.factor)} by ${iso(ctx.targetMs).slice(11, 16)} UTC, the ${top.signal} need of ${fmt(top.units)} units with them: ${fmt(units)} units`,
  };
}

/** The Trend rule (see the module comment): no asks and no status when the spec turns it off. */
function evaluateTrend(ctx: RuleContext): RuleResult {
  const asks: RuleAsk[] = [];
  for (const d of ctx.demand) {
    const ask = trendAsk(d, ctx.tolerance, ctx.targetMs);
    if (ask) asks.push(ask);
  }
  const growth = growthAsk(ctx);
  if (growth) asks.push(growth);
  return { asks };
}
