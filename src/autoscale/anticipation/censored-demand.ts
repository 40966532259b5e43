/**
 * The CensoredDemand rule: while the connection quota is full the count stops telling demand.
 * The growth measured on the last unsaturated buckets (kept in `status.anticipation.growth`, for
 * up to 15 minutes) — or, when larger, the climb into the ceiling (ceiling − the last unsaturated
 * bucket, per minute: a lower bound of the growth) — is extended to the target time, at most
 * 4 × the ceiling: one step to the estimate instead of doubling per round trip. A bucket that
 * overlaps a capacity change is never read as saturated (its ceiling is not known). Growth is
 * read only from buckets that measure the demand: a censored bucket (the quota full, or the old
 * ceiling reached during a change) is a lower bound, and the rise out of it as the quota grows is
 * our own change uncovering clients — a fixed demand is never extrapolated from its own
 * uncensoring. Pure.
 */
import type { AnticipationStatus } from "../../api/index.js";
import { fmt } from "../format.js";
import { censoredAt } from "../signals/common.js";
import type { DemandPoint, DemandSeries } from "../signals/types.js";
import { parseTime } from "../time.js";
import { iso, MAX_PROJECTION, MINUTE_MS, mid, type Rule, type RuleContext, type RuleResult } from "./rule.js";
import { riseOf } from "./trend.js";

/** How long a growth measured before saturation is extended, ms. */
const GROWTH_TTL_MS = 15 * MINUTE_MS;

type Growth = NonNullable<AnticipationStatus["growth"]>;

/**
 * The growth of the connections need while its newest bucket measures the demand (not censored):
 * the rising line of the measured buckets at its newest (units, units/min), or none when they do
 * not rise; the stored growth while it is censored (quota full, or at the old ceiling during a
 * change) or not read.
 */
function measuredGrowth(
  demand: readonly DemandSeries[],
  stored: Growth | undefined,
  tolerance: number,
): Growth | undefined {
  let growth = stored;
  for (const d of demand) {
    const newest = d.points.at(-1);
    if (d.signal !== "connections" || !newest || censoredAt(newest)) continue;
    const rise = riseOf(d, tolerance);
    growth = rise
      ? {
          time: iso(mid(newest.start)),
          units: Math.max(0, rise.trend.at(mid(newest.start))),
          perMinute: rise.trend.lowerPerMinute,
        }
      : undefined;
  }
  return growth;
}

/**
 * The climb into the ceiling is a lower bound of the growth: at least (the first bucket of the
 * newest censored run − the bucket before it) over the minutes between them. The bucket before
 * must measure the demand: from a censored one (a full quota, the old ceiling during a change) a
 * climb is our capacity letting in clients that were there. The larger of it and `growth`.
 */
function withClimb(connections: DemandSeries, growth: Growth | undefined): Growth | undefined {
  const pts = connections.points;
  let first = pts.length - 1;
  while (first > 0 && censoredAt(pts[first - 1] as DemandPoint)) first--;
  const before = pts[first - 1];
  const into = pts[first];
  if (!before || !into || !(into.units > before.units)) return growth;
  const perMinute = ((into.units - before.units) * MINUTE_MS) / (into.start - before.start);
  if (!growth || perMinute > growth.perMinute)
    return { time: iso(mid(into.start)), units: into.units, perMinute };
  return growth;
}

/** The ask of a full quota: `growth` extended to the target time, when still fresh and positive. */
function censoredAsk(ctx: RuleContext, connections: DemandSeries, growth: Growth): RuleResult | undefined {
  const since = parseTime(growth.time);
  if (!(Number.isFinite(since) && ctx.nowMs - since <= GROWTH_TTL_MS && growth.perMinute > 0))
    return undefined;
  const ceiling = Math.max(...connections.points.map((p) => p.units));
  const estimate = Math.min(
    growth.units + (growth.perMinute * (ctx.targetMs - since)) / MINUTE_MS,
    ceiling * MAX_PROJECTION,
  );
  return {
    asks: [
      {
        rule: "CensoredDemand",
        units: estimate,
        message: `connection quota full since ${growth.time.slice(11, 16)} UTC; the need grew ${fmt(growth.perMinute)} units/min before: ${fmt(estimate)} units by ${iso(ctx.targetMs).slice(11, 16)} UTC`,
      },
    ],
    status: { growth },
  };
}

export const censoredDemandRule: Rule = { rule: "CensoredDemand", evaluate: evaluateCensoredDemand };

/** The CensoredDemand rule (see the module comment): no asks and no status when the spec turns it off. */
function evaluateCensoredDemand(ctx: RuleContext): RuleResult {
  const growth = measuredGrowth(ctx.demand, ctx.previous?.growth, ctx.tolerance);
  const connections = ctx.demand.find((d) => d.signal === "connections");
  if (!connections?.saturated) return growth ? { asks: [], status: { growth } } : { asks: [] };
  // While the quota is full, a growth too old (or none) is dropped.
  const climbed = withClimb(connections, growth);
  return (climbed && censoredAsk(ctx, connections, climbed)) ?? { asks: [] };
}
