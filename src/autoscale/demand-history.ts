/**
 * An instance's demand over past days, at a coarse grain: the seasonal forecast's input
 * (`forecast.ts`). Read from Azure Monitor (`azure/history.ts`: one batched `metrics:getBatch`
 * per region and grain, refreshed at most hourly) or, in `simulate`, from the replayed minutes.
 *
 * Demand is kept as absolute measures — connection counts and message traffic — because
 * percentages (ServerLoad, ConnectionQuotaUtilization) depend on the units the instance had then,
 * which the history does not say. The quota utilization is kept beside them for one thing only:
 * whether a bucket's connection count was capped by the quota ({@link quotaFilled}), so the count
 * is a lower bound of the demand there, not the demand.
 */
import { SATURATION } from "./signals/common.js";

/** One bucket of history. */
export interface DemandPoint {
  /** Bucket start, ms since the epoch. */
  timeMs: number;
  /**
   * Peak concurrent connections in the bucket (Azure Monitor `ConnectionCount` /
   * `TotalConnectionCount`, aggregation Maximum), connections; null when unknown.
   */
  connections: number | null;
  /**
   * Inbound + outbound traffic in the bucket (`InboundTraffic` + `OutboundTraffic`, aggregation
   * Total ÷ the grain's seconds), bytes/s; null when unknown.
   */
  bytesPerSecond: number | null;
  /**
   * Highest connection quota utilization in the bucket (Azure Monitor `ConnectionQuotaUtilization`,
   * aggregation Maximum: connections ÷ the units' connection quota), %; null or absent when
   * unknown.
   */
  quotaPercent?: number | null;
}

/**
 * Utilization at which a bucket's connections filled the quota, %: the one-minute signals'
 * saturation (`signals/common.ts` SATURATION, 99 %). New clients were refused there.
 */
export const QUOTA_FILLED_PERCENT = SATURATION * 100;

/** The bucket's connections were capped by the quota: the demand was at least its count, maybe more. */
export function quotaFilled(point: DemandPoint): boolean {
  return point.quotaPercent != null && point.quotaPercent >= QUOTA_FILLED_PERCENT;
}

/** The history as read. */
export interface DemandHistory {
  /** Grain of the buckets, seconds (300 for `PT5M`, 3,600 for `PT1H`). */
  grainSeconds: number;
  /** When it was read, ms since the epoch. */
  readAtMs: number;
  /** Buckets, oldest first, one per grain (missing buckets may be absent). */
  points: readonly DemandPoint[];
  /** Why it could not be read (the points are then empty): shown in status, never a scale-in. */
  error?: string;
}
