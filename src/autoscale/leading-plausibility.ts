/**
 * What Azure's own connection count makes plausible of the leading signal's arrivals, as the
 * suspect-signal rule (suspect.ts) judges server load by the absolute measures. Pure.
 *
 * With a mean lifetime `W`, a connection count moves as `dD/dt = λ − D/W` (Little's law, the
 * traffic model's `traffic/arrivals.ts`): between two buckets Azure measured (not censored:
 * `DemandPoint.censored`), at `D₁` and `D₂` a span `Δt` apart, new clients explain at most
 *
 *     explained = max(0, D₂ − D₁) + (D₁ + D₂) / 2 · Δt / W
 *
 * arrivals — the growth, plus the departures they replaced. The rates the app servers reported
 * over the same span (with reconnects already discounted) counted `counted = mean rate · Δt`. When
 * they counted more than {@link IMPLAUSIBLE_RATIO} times what Azure's count explains, most of
 * those negotiations never became connections (reconnects no discount caught, retries, a query
 * that counts other calls, a lifetime set too long): the newest rate is scaled by
 * `explained ÷ counted` for the projection, and the ask says so. Judged only when the two buckets
 * are at least {@link MIN_SPAN_MS} apart with at least two readings between their ends, and the
 * newest bucket measures the demand; otherwise (a full quota, above all: what the leading signal
 * is for) nothing is capped.
 */
import type { DemandSeries } from "./signals.js";
import { censoredAt, fmt } from "./signals.js";

/** Counted arrivals beyond this multiple of those Azure's count explains are implausible. */
export const IMPLAUSIBLE_RATIO = 2;
/** The shortest span between the two Azure buckets that are compared, ms. */
const MIN_SPAN_MS = 3 * 60_000;
const MINUTE_MS = 60_000;

/** How far the leading signal's newest rate is plausible, and why not. */
export interface ArrivalPlausibility {
  /** `explained ÷ counted`, < 1 / {@link IMPLAUSIBLE_RATIO}: the share of the rate to project. */
  share: number;
  message: string;
}

/**
 * The plausibility of the app servers' arrival rates against Azure's connection count (see the
 * module comment), or undefined when they agree or cannot be compared. `rates` are
 * `[timeMs, perSecond]`, oldest first; `connectionsPerUnit` turns the series' units into
 * connections; `lifetimeSeconds` is `W`.
 */
export function arrivalPlausibility(
  rates: readonly (readonly [number, number])[],
  connections: DemandSeries | undefined,
  connectionsPerUnit: number,
  lifetimeSeconds: number,
): ArrivalPlausibility | undefined {
  const newest = connections?.points.at(-1);
  if (!connections || !newest || censoredAt(newest) || !(lifetimeSeconds > 0)) return undefined;
  const first = connections.points.find((p) => !censoredAt(p));
  if (!first || newest.start - first.start < MIN_SPAN_MS) return undefined;
  const from = first.start + MINUTE_MS;
  const to = newest.start + MINUTE_MS;
  const inSpan = rates.filter(([t]) => t > from && t <= to).map(([, r]) => r);
  if (inSpan.length < 2) return undefined;
  const seconds = (to - from) / 1000;
  const d1 = first.units * connectionsPerUnit;
  const d2 = newest.units * connectionsPerUnit;
  const counted = (inSpan.reduce((a, b) => a + b, 0) / inSpan.length) * seconds;
  const explained = Math.max(0, d2 - d1) + (((d1 + d2) / 2) * seconds) / lifetimeSeconds;
  if (!(counted > IMPLAUSIBLE_RATIO * explained)) return undefined;
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  return {
    share: explained / counted,
    message: `of the ${fmt(Math.round(counted))} arrivals counted ${hhmm(from)}–${hhmm(to)} UTC, Azure's ConnectionCount (${fmt(Math.round(d1))} → ${fmt(Math.round(d2))}) explains ${fmt(Math.round(explained))}: the rate is held to that share (${fmt(explained / counted)})`,
  };
}
