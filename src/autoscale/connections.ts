/**
 * Connections of a bucket from its two measures: the rule every reader of connections uses (the
 * connections signal, the app servers' sizing, the levels kept with a scale). Pure.
 *
 * Azure Monitor measures one quantity twice: `ConnectionCount` (Web PubSub:
 * `TotalConnectionCount`), and `ConnectionQuotaUtilization` — the same connections as a
 * percentage of the quota, units × 1,000 ("Metrics in Azure SignalR Service": "The percentage of
 * connections to the server relative to the available quota"). Pinned semantics, per bucket:
 * - from the quota: `ConnectionQuotaUtilization % / 100 × units then × 1,000` (units then:
 *   `capacity-timeline.ts`);
 * - only one measure known: that one;
 * - both known and within {@link DISAGREEMENT_TOLERANCE} of the quota of each other
 *   (1 % of the quota, for two maxima of a minute sampled at different instants, plus 0.5 % for a
 *   percentage rounded to a whole number): ConnectionCount, the exact count;
 * - both known and further apart: they **disagree**, and the higher is used. A lower measure is
 *   never trusted: a scale-in is judged on the higher, and a scale-out follows the higher as the
 *   HPA follows the highest of its metrics. The decision says which measure was used and by how
 *   much they differ (`ConnectionsDisagree`);
 * - in a bucket that may have been served by two sizes (it overlaps a capacity change) or that is
 *   settling after one, the quota then is not known — the percentage may still be computed against
 *   the previous quota — so the two are not compared: ConnectionCount when known (else the quota
 *   measure at the smaller size). Such a bucket never justifies a scale-in anyway (samples.ts).
 */
import { CONNECTIONS_PER_UNIT } from "../capacity/skus.js";
import { known, type MetricSample, type SampleWindow } from "./samples.js";
import { minuteRuns } from "./time.js";

/**
 * How far apart, as a fraction of the quota (units × 1,000), the two measures may be and still
 * agree: 1.5 % (1 % for sampling within the minute, 0.5 % for a whole-number percentage).
 */
export const DISAGREEMENT_TOLERANCE = 0.015;

/** The measure a connections value came from. */
export type ConnectionMeasure = "ConnectionCount" | "ConnectionQuotaUtilization";

/** Two measures of one bucket that disagree. */
export interface ConnectionsDisagreement {
  /** Bucket start, ms. */
  start: number;
  /** ConnectionCount, connections. */
  count: number;
  /** ConnectionQuotaUtilization, %. */
  quotaPercent: number;
  /** The units the percentage was read against. */
  units: number;
  /** ConnectionQuotaUtilization × units × 1,000, connections. */
  fromQuota: number;
  /** |count − fromQuota|, connections. */
  difference: number;
}

/** The connections of one bucket (see the module comment). */
export interface BucketConnections {
  /** Connections the decision uses; `null` when neither measure is known. */
  value: number | null;
  measure?: ConnectionMeasure;
  disagreement?: ConnectionsDisagreement;
}

/**
 * The connections of a bucket's sample.
 * @param units the units its percentage is read against (`unitsAt`), units.
 * @param comparable false for a bucket that overlaps a capacity change or is settling: the two
 *   measures are not compared there.
 */
export function bucketConnections(
  sample: Pick<MetricSample, "connections" | "connectionQuotaUtilizationPercent"> | undefined,
  start: number,
  units: number,
  comparable: boolean,
): BucketConnections {
  const count = sample?.connections;
  const percent = sample?.connectionQuotaUtilizationPercent;
  const fromQuota = known(percent) ? (percent / 100) * units * CONNECTIONS_PER_UNIT : undefined;
  if (!known(count)) {
    return fromQuota === undefined
      ? { value: null }
      : { value: fromQuota, measure: "ConnectionQuotaUtilization" };
  }
  if (fromQuota === undefined || !comparable || !known(percent)) {
    return { value: count, measure: "ConnectionCount" };
  }
  const difference = Math.abs(count - fromQuota);
  if (difference <= units * CONNECTIONS_PER_UNIT * DISAGREEMENT_TOLERANCE) {
    return { value: count, measure: "ConnectionCount" };
  }
  const disagreement = { start, count, quotaPercent: percent, units, fromQuota, difference };
  return fromQuota > count
    ? { value: fromQuota, measure: "ConnectionQuotaUtilization", disagreement }
    : { value: count, measure: "ConnectionCount", disagreement };
}

const NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

/**
 * One line for a `ConnectionsDisagree` reason: the minutes, the largest difference with both
 * values, and which measure the decision used (the higher of each bucket); `undefined` for none.
 */
export function describeDisagreements(found: readonly ConnectionsDisagreement[]): string | undefined {
  if (found.length === 0) return undefined;
  const worst = found.reduce((a, b) => (b.difference > a.difference ? b : a));
  const quota = worst.units * CONNECTIONS_PER_UNIT;
  const higher = worst.fromQuota > worst.count ? "ConnectionQuotaUtilization" : "ConnectionCount";
  const allHigher = found.every(
    (d) => (d.fromQuota > d.count ? "ConnectionQuotaUtilization" : "ConnectionCount") === higher,
  );
  const at = new Date(worst.start).toISOString().slice(11, 16);
  return (
    `ConnectionCount and ConnectionQuotaUtilization disagree at ${minuteRuns(found.map((d) => d.start))} UTC ` +
    `(tolerance ${NUMBER.format(DISAGREEMENT_TOLERANCE * 100)} % of the quota): at most by ${NUMBER.format(worst.difference)} connections ` +
    `(${NUMBER.format((worst.difference / quota) * 100)} % of ${NUMBER.format(quota)}) at ${at}, ConnectionCount ${NUMBER.format(worst.count)} vs ` +
    `ConnectionQuotaUtilization ${NUMBER.format(worst.quotaPercent)} % × ${worst.units} units × 1,000 = ${NUMBER.format(worst.fromQuota)}; ` +
    `the higher of each minute is used (${allHigher ? higher : "either"}), the lower is never trusted for a scale-in`
  );
}

/** The connections of every bucket of a window, by bucket start (ms). */
export type WindowConnections = ReadonlyMap<number, BucketConnections>;

/**
 * {@link bucketConnections} of each bucket of `window`: read against `unitsAt(start)`, compared
 * only where the bucket neither settles nor overlaps a change (`overlapsChange`).
 */
export function windowConnections(
  window: SampleWindow,
  unitsAt: (startMs: number) => number,
  overlapsChange: (startMs: number) => boolean = () => false,
): WindowConnections {
  const out = new Map<number, BucketConnections>();
  for (const b of window.buckets) {
    out.set(
      b.start,
      bucketConnections(b.sample, b.start, unitsAt(b.start), !b.settling && !overlapsChange(b.start)),
    );
  }
  return out;
}

/** The disagreements of a window's buckets, oldest first. */
export function disagreements(connections: WindowConnections): ConnectionsDisagreement[] {
  return [...connections.values()].flatMap((c) => (c.disagreement ? [c.disagreement] : []));
}
