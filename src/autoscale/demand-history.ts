/**
 * An instance's demand over past days, at a coarse grain: the seasonal forecast's input
 * (`forecast.ts`). Read from Azure Monitor (`azure/history.ts`: one batched `metrics:getBatch`
 * per region and grain, refreshed at most hourly) or, in `simulate`, from the replayed minutes.
 *
 * Only absolute measures of demand are kept — connection counts and message traffic — because
 * percentages (ServerLoad, ConnectionQuotaUtilization) depend on the units the instance had then,
 * which the history does not say.
 */

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
