/**
 * The Trend rule: each signal's need per bucket of the window (signals.ts `DemandSeries`) gets a
 * Theil–Sen line (trend.ts); when it rises consistently (Kendall's tau ≥ 0.6 over ≥ 3 buckets)
 * and by more than twice the tolerance band and 3 × the points' scatter around the line across
 * the window (`lower-quartile slope · span ≥ max(2 · tolerance · peak, 3 · 1.4826 ·
 * MAD(residuals))`: noise on a flat signal does neither), the line is read at the target time,
 * capped at 4 × the window's peak. A series whose newest bucket is at its ceiling is left to the
 * CensoredDemand rule, and only buckets that measure the demand itself are fitted (censored ones —
 * a full quota, the old ceiling during a change — are lower bounds: a fixed demand let in as our
 * capacity rises is not a trend). Pure.
 */
import { fmt } from "../format.js";
import { measuredPoints } from "../signals/common.js";
import type { DemandSeries } from "../signals/types.js";
import { type Trend, theilSen } from "../trend.js";
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

/** Kendall's tau from which a rise counts as a trend. */
const TREND_TAU = 0.6;
/**
 * Across the window a rise must exceed this many tolerance bands of the level: by chance, five
 * noisy buckets in a row do rise (1 in 120 windows), but hardly by twice the band.
 */
const RISE_BANDS = 2;
/** A rise must exceed this many times the points' scatter around the line. */
const NOISE_RISE = 3;
/** Fewest buckets a trend is fitted on. */
const TREND_POINTS = 3;

/** A need that rises: its line and the window's peak need (units). */
export interface Rise {
  trend: Trend;
  level: number;
}

/**
 * The rise of a need over the window, or undefined when it does not rise (see the module
 * comment) or has no points. The line is fitted on the buckets that measure the demand itself
 * (`measuredPoints`): a censored bucket (quota full, or at the old ceiling during a change) is a
 * lower bound, and a rise out of it is our capacity uncovering clients, not demand growing.
 * `tolerance` is the scale-up tolerance (a share of the level).
 */
export function riseOf(d: DemandSeries, tolerance: number): Rise | undefined {
  const measured = measuredPoints(d);
  const newest = measured.at(-1);
  if (!newest) return undefined;
  const trend =
    measured.length >= TREND_POINTS
      ? theilSen(measured.map((p) => ({ timeMs: mid(p.start), value: p.units })))
      : undefined;
  const spanMinutes = (newest.start - (measured[0]?.start ?? newest.start)) / MINUTE_MS;
  const level = Math.max(...d.points.map((p) => p.units));
  // A rise counts when it is consistent (tau) and larger, across the window, than twice the
  // tolerance band and the scatter: noise on a flat signal does neither.
  const rising =
    trend !== undefined &&
    trend.lowerPerMinute > 0 &&
    trend.tau >= TREND_TAU &&
    trend.lowerPerMinute * spanMinutes >= Math.max(RISE_BANDS * tolerance * level, NOISE_RISE * trend.noise);
  return rising ? { trend, level } : undefined;
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

/** The Trend rule (see the module comment): no asks and no status when the spec turns it off. */
function evaluateTrend(ctx: RuleContext): RuleResult {
  const asks: RuleAsk[] = [];
  for (const d of ctx.demand) {
    const ask = trendAsk(d, ctx.tolerance, ctx.targetMs);
    if (ask) asks.push(ask);
  }
  return { asks };
}
