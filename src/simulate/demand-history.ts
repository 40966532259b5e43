/**
 * The demand history a simulated policy's seasonal forecast reads (`spec.anticipation.seasonal`),
 * built from the replayed minutes as the operator reads it from Azure Monitor (`azure/history.ts`):
 * one point per bucket of the grain (`5m` or `1h`, on the clock's grid), with the bucket's peak
 * connections (the Maximum of its minutes' connection counts), its highest quota utilization (the
 * Maximum of its minutes' ConnectionQuotaUtilization) and its traffic (inbound + outbound:
 * the minutes' totals ÷ the grain's seconds, bytes/s), over the last `historyDays` days; only
 * buckets complete by the poll (their last minute fully ingested) are in it.
 *
 * Cost: each minute is aggregated once, when its bucket completes; the history handed out is
 * rebuilt at most once an hour of virtual time (as the operator refreshes its own), so a poll
 * costs O(1) between rebuilds and a rebuild copies at most one window of points (8,064 at 28 days
 * of `5m`). Pure: time comes from the poll.
 */
import { HISTORY_GRAIN_SECONDS, type HistoryGrain } from "../api/constants.js";
import type { DemandHistory, DemandPoint } from "../autoscale/demand-history.js";
import { type MetricHistory, MINUTE_MS } from "./engine.js";

const DAY_MS = 86_400_000;
/** How often the history handed out is rebuilt, ms of virtual time (hourly, like the operator's refresh). */
const REBUILD_MS = 3_600_000;

export class ReplayedDemandHistory {
  readonly #grainMs: number;
  readonly #windowMs: number;
  /** Complete buckets so far, oldest first (older than the window are dropped now and then). */
  #points: DemandPoint[] = [];
  /** Start of the next bucket to aggregate, ms; undefined before the first poll. */
  #next: number | undefined;
  /** Index of the oldest point in the window at the last rebuild (the window only moves on). */
  #first = 0;
  #served: DemandHistory | undefined;

  /** @param days days of history handed out (`historyDays`, 7–28). */
  constructor(grain: HistoryGrain, days: number) {
    this.#grainMs = HISTORY_GRAIN_SECONDS[grain] * 1000;
    this.#windowMs = days * DAY_MS;
  }

  /**
   * The history at a poll at `nowMs` (the same object until the next hourly rebuild): the buckets
   * of `metrics` complete by then, over the last `days` days.
   */
  at(nowMs: number, metrics: MetricHistory): DemandHistory {
    this.#aggregate(nowMs, metrics);
    if (this.#served && nowMs - this.#served.readAtMs < REBUILD_MS) return this.#served;
    const from = nowMs - this.#windowMs;
    while (this.#first < this.#points.length && (this.#points[this.#first] as DemandPoint).timeMs < from)
      this.#first++;
    if (this.#first > 4096) {
      this.#points = this.#points.slice(this.#first);
      this.#first = 0;
    }
    this.#served = {
      grainSeconds: this.#grainMs / 1000,
      readAtMs: nowMs,
      points: this.#points.slice(this.#first),
    };
    return this.#served;
  }

  /** Appends every bucket whose last minute is fully ingested at `nowMs`. */
  #aggregate(nowMs: number, metrics: MetricHistory): void {
    const grain = this.#grainMs;
    let start = this.#next ?? Math.floor(metrics.startMs / grain) * grain;
    const minutesPerBucket = grain / MINUTE_MS;
    while (start + grain <= nowMs - metrics.delayMs) {
      const from = Math.max(0, metrics.minuteOf(start));
      const to = Math.min(metrics.length, metrics.minuteOf(start + grain));
      if (to < metrics.minuteOf(start + grain)) break; // not recorded yet
      if (to > from) {
        let peak = 0;
        let quota = 0;
        let bytes = 0;
        for (let k = from; k < to; k++) {
          peak = Math.max(peak, metrics.peakConnections(k));
          quota = Math.max(quota, metrics.peakQuotaPercent(k));
          bytes += metrics.bytesPerSecond(k);
        }
        this.#points.push({
          timeMs: start,
          connections: peak,
          quotaPercent: quota,
          bytesPerSecond: bytes / minutesPerBucket,
        });
      }
      start += grain;
    }
    this.#next = start;
  }
}
