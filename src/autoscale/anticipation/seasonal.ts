/**
 * The Seasonal rule: `forecast.ts` on the instance's history: the window's peak need × the growth
 * the same span of past cycles saw (only when above 1), over the whole span a size decided now
 * serves: from the newest bucket read until the next scale could complete (`servedUntilMs`, one
 * scale duration past the target time). A forecast read only until this scale lands sized the
 * first step of a morning rise and left its top to a scale sent 5 minutes later; on a daily step
 * of ×3.7 in 5 minutes (`traces/art_daily_small_noise.csv`, `simulate` with a 30-minute scale-down
 * window and 80 % / 88 % targets) that refused 163 minutes in 14 days where the whole span refuses
 * 114. Its state is kept in `status.anticipation.forecast` whether or not it asks. Pure.
 */
import type { AnticipationStatus } from "../../api/index.js";
import { type SeasonalForecast, seasonalForecast } from "../forecast.js";
import { fmt } from "../format.js";
import type { DemandSeries } from "../signals/types.js";
import { iso, type Rule, type RuleContext, type RuleResult } from "./rule.js";

/** The window's peak need over all signals, units (0 when none). */
function peakNeed(demand: readonly DemandSeries[]): number {
  let best = 0;
  for (const d of demand) for (const p of d.points) best = Math.max(best, p.units);
  return best;
}

/** The forecast as `status.anticipation.forecast` shows it (ratio to 3 decimals, times RFC 3339). */
function forecastStatus(f: SeasonalForecast, ctx: RuleContext): NonNullable<AnticipationStatus["forecast"]> {
  const forecast: NonNullable<AnticipationStatus["forecast"]> = { state: f.state, message: f.message };
  if (f.cycle) forecast.cycle = f.cycle;
  if (f.cycles !== undefined) forecast.cycles = f.cycles;
  if (f.ratio !== undefined) forecast.ratio = Math.round(f.ratio * 1000) / 1000;
  if (f.historyFromMs !== undefined) forecast.historyFrom = iso(f.historyFromMs);
  if (ctx.demandHistory) forecast.readAt = iso(ctx.demandHistory.readAtMs);
  return forecast;
}

export const seasonalRule: Rule = { rule: "Seasonal", evaluate: evaluateSeasonal };

/** The Seasonal rule (see the module comment): no asks and no status when the spec turns it off. */
function evaluateSeasonal(ctx: RuleContext): RuleResult {
  if (!ctx.spec.seasonal) return { asks: [] };
  const f = seasonalForecast(ctx.demandHistory, {
    refMs: ctx.windowToMs,
    horizonMs: Math.max(0, ctx.servedUntilMs - ctx.windowToMs),
    levelMs: ctx.windowSeconds * 1000,
  });
  const status = { forecast: forecastStatus(f, ctx) };
  const level = peakNeed(ctx.demand);
  if (!(f.state === "Ok" && f.ratio !== undefined && f.ratio > 1 && level > 0)) return { asks: [], status };
  const ask = {
    rule: "Seasonal" as const,
    units: level * f.ratio,
    ...(f.upperRatio !== undefined ? { upperUnits: level * f.upperRatio } : {}),
    message: `${f.message}: ${fmt(level)} → ${fmt(level * f.ratio)} units`,
  };
  return { asks: [ask], status };
}
