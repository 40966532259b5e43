/**
 * Reads instances' demand over past days — a {@link DemandHistory} per instance, the seasonal
 * forecast's input — from Azure Monitor, through the same `metrics:getBatch` call as the
 * one-minute metrics ({@link AzureMetrics.queryBatch}: at most 50 resources of one subscription,
 * region and service per call, the scope's throttle gate, the connection's request timeout) and
 * the same query plan (`query-plan.ts`: one query per aggregation — `Maximum` for the connection
 * count and the quota utilization, `Total` for the traffic — so two calls per batch and span), at
 * the policy's grain (`spec.anticipation.seasonal.grain`: `5m` → `PT5M`, `1h` → `PT1H`):
 *
 * | DemandPoint field | SignalR                          | Web PubSub                       | aggregation, unit                  |
 * |-------------------|----------------------------------|----------------------------------|------------------------------------|
 * | `connections`     | ConnectionCount                  | TotalConnectionCount             | Maximum (series summed), connections |
 * | `quotaPercent`    | ConnectionQuotaUtilization       | ConnectionQuotaUtilization       | Maximum, %                         |
 * | `bytesPerSecond`  | InboundTraffic + OutboundTraffic | InboundTraffic + OutboundTraffic | Total ÷ grain seconds, bytes/s     |
 *
 * Each answer is read by `readMetricsAnswer` (metric-samples.ts), as the one-minute metrics are:
 * missing stays `null`, an idle counter next to a known connection count is 0, an answer whose
 * grain is not the one asked for fails that resource alone. `bytesPerSecond` is `null` when either
 * direction is unknown.
 *
 * Cost, bounded:
 * - A cache per resource and grain. A resource is read in full once (its `days`, in calls of at
 *   most {@link HistoryReaderOptions.maxPointsPerCall} points per series: 2,016, 7 days at
 *   `PT5M`), then refreshed once per refresh period (default one hour), incrementally: the buckets
 *   since the newest one read.
 * - Refresh periods are the same for every resource (they start `settleMs` after each clock hour),
 *   so the first {@link refresh} of a period reads every cached resource of a grain at once, in one
 *   call per ≤ 50 resources of one subscription, region and resource type: at steady state one call per
 *   50 resources per hour (resources read in full since the period began are refreshed with them).
 * - A bucket is read once it is complete: `settleMs` (default 10 minutes) after its end; newer
 *   buckets are still being ingested and are left for the next refresh.
 *
 * Failures are confined to the resources of the failed call (or to one resource, for an answer
 * that cannot be read); nothing throws for an Azure failure. A span whose connection query
 * answered but whose traffic query failed (or the other way round) is a failure of its resources,
 * not a history with holes: a history is a cache read incrementally, so a span taken as read with
 * one half missing would never be read again; the whole span is asked again at the retry. A resource never read successfully
 * gets a history with `error` and no points; one read before keeps its last history (its `readAtMs`
 * says how old) until that is older than `maxStaleMs` (default 3 hours), then gets the error. A
 * failed resource is tried again after `retryMs` (default 5 minutes), doubling per failure up to
 * the refresh period.
 *
 * Time is passed in (`nowMs`); nothing here reads the clock.
 */
import { HISTORY_GRAIN_SECONDS, type HistoryGrain } from "../api/constants.js";
import type { DemandHistory, DemandPoint } from "../autoscale/demand-history.js";
import type { ServiceKind } from "../capacity/index.js";
import { type MetricsBatch, planBatches } from "./batching.js";
import { type AzureApiError, TransientError } from "./errors.js";
import {
  combineAnswers,
  MetricGrainError,
  type MetricsResultLike,
  readMetricsAnswer,
  resultsByResource,
} from "./metric-samples.js";
import { type BatchQuerier, forEachLimited } from "./metrics.js";
import { metricQueries } from "./query-plan.js";
import { resourceKey } from "./resource-id.js";

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** The history one instance's policy wants. */
export interface HistoryTarget {
  /** ARM resource ID of the instance. */
  resourceId: string;
  /** Its region (ARM `location`): the metrics endpoint to ask. */
  region: string;
  /** Days of history, days (`spec.anticipation.seasonal.historyDays`, 7–28). */
  days: number;
  /** Grain of the buckets (`spec.anticipation.seasonal.grain`). */
  grain: HistoryGrain;
}

/** Settings of {@link HistoryReader}; every figure has a default. */
export interface HistoryReaderOptions {
  /** How often a resource's history is refreshed, ms (default 3,600,000: hourly). */
  refreshMs?: number;
  /** How long after its end a bucket is taken as complete, ms (default 600,000: 10 minutes). */
  settleMs?: number;
  /** First wait before a failed resource is tried again, ms; doubles per failure up to `refreshMs` (default 300,000). */
  retryMs?: number;
  /** How long a history read before is still served after refreshes fail, ms (default 10,800,000: 3 hours). */
  maxStaleMs?: number;
  /** A resource nobody asked for over this long is dropped from the cache, ms (default 10,800,000). */
  forgetAfterMs?: number;
  /** An incremental refresh reaches back at most this far; a resource read longer ago is read in full, ms (default 21,600,000: 6 hours). */
  maxIncrementalMs?: number;
  /** Most buckets per series one call asks for (default 2,016: 7 days at PT5M); longer spans are cut into several calls. */
  maxPointsPerCall?: number;
  /** Calls in flight at once (default 2). */
  concurrency?: number;
}

/** One resource's read in a refresh. */
export interface HistoryRead {
  resourceId: string;
  grain: HistoryGrain;
  /** `full`: every day asked for; `incremental`: the buckets since the last read. */
  kind: "full" | "incremental";
  /** `success`, or `failure` (its `error` says why). */
  result: "success" | "failure";
  /** Buckets the read returned. */
  points: number;
  error?: string;
}

/** What one {@link HistoryReader.refresh} did. */
export interface HistoryRefreshReport {
  /** getBatch requests sent (calls refused by the throttle gate send none). */
  calls: number;
  /** getBatch calls that failed (sent or refused by the gate). */
  failedCalls: number;
  reads: HistoryRead[];
}

interface Entry {
  resourceId: string;
  region: string;
  grain: HistoryGrain;
  days: number;
  wantedAtMs: number;
  /** Buckets read so far, oldest first (shared, never mutated: each refresh builds a new array). */
  points: readonly DemandPoint[];
  /** End (exclusive) of the complete buckets read, ms; undefined until a full read succeeded. */
  coveredToMs?: number;
  lastSuccessMs?: number;
  lastAttemptMs?: number;
  failures: number;
  error?: string;
  /** The days asked for grew: the next read is a full one. */
  needsFull: boolean;
  /** What {@link HistoryReader.get} returns (rebuilt when the entry changes). */
  served?: DemandHistory;
}

/** One getBatch call of a refresh. */
interface PlannedCall {
  batch: MetricsBatch;
  grain: HistoryGrain;
  kind: HistoryRead["kind"];
  startMs: number;
  endMs: number;
}

/**
 * The fields a history reads for a service: the connection count, the quota utilization (whether
 * the count was capped) and both traffic directions.
 */
const HISTORY_FIELDS = [
  "connections",
  "connectionQuotaUtilizationPercent",
  "inboundBytesPerSecond",
  "outboundBytesPerSecond",
] as const;

/** The queries of one history call (one per aggregation). */
function historyQueries(service: ServiceKind) {
  return metricQueries(service, { fields: HISTORY_FIELDS });
}

/** Index of the first point at or after `timeMs` (points sorted by time). */
function firstAtOrAfter(points: readonly DemandPoint[], timeMs: number): number {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((points[mid] as DemandPoint).timeMs < timeMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The ISO 8601 interval of a grain. */
function interval(grain: HistoryGrain): string {
  return grain === "5m" ? "PT5M" : "PT1H";
}

export class HistoryReader {
  readonly #querier: BatchQuerier;
  readonly #refreshMs: number;
  readonly #settleMs: number;
  readonly #retryMs: number;
  readonly #maxStaleMs: number;
  readonly #forgetAfterMs: number;
  readonly #maxIncrementalMs: number;
  readonly #maxPoints: number;
  readonly #concurrency: number;
  readonly #entries = new Map<string, Entry>();

  /**
   * @param querier sends the getBatch calls: the operator's {@link AzureMetrics} (sharing its
   *   clients and throttle gate), a stand-in in tests.
   * @throws RangeError for a figure that is not positive.
   */
  constructor(querier: BatchQuerier, options: HistoryReaderOptions = {}) {
    this.#querier = querier;
    this.#refreshMs = options.refreshMs ?? HOUR_MS;
    this.#settleMs = options.settleMs ?? 10 * MINUTE_MS;
    this.#retryMs = options.retryMs ?? 5 * MINUTE_MS;
    this.#maxStaleMs = options.maxStaleMs ?? 3 * HOUR_MS;
    this.#forgetAfterMs = options.forgetAfterMs ?? 3 * HOUR_MS;
    this.#maxIncrementalMs = options.maxIncrementalMs ?? 6 * HOUR_MS;
    this.#maxPoints = options.maxPointsPerCall ?? 2_016;
    this.#concurrency = options.concurrency ?? 2;
    for (const [name, v] of Object.entries({
      refreshMs: this.#refreshMs,
      retryMs: this.#retryMs,
      maxPointsPerCall: this.#maxPoints,
      concurrency: this.#concurrency,
    })) {
      if (!(v > 0)) throw new RangeError(`${name} must be positive, got ${v}`);
    }
  }

  /**
   * Says which histories are wanted now (the policies of a poll cycle). New resources are read at
   * the next {@link refresh}; a resource asking for more days than it has gets a full read.
   * @throws ResourceIdError for a malformed resource ID.
   */
  want(targets: readonly HistoryTarget[], nowMs: number): void {
    for (const t of targets) {
      const key = `${resourceKey(t.resourceId)}|${t.grain}`;
      const entry = this.#entries.get(key);
      if (!entry) {
        this.#entries.set(key, {
          resourceId: t.resourceId,
          region: t.region,
          grain: t.grain,
          days: t.days,
          wantedAtMs: nowMs,
          points: [],
          failures: 0,
          needsFull: false,
        });
        continue;
      }
      entry.wantedAtMs = nowMs;
      entry.region = t.region;
      if (t.days > entry.days && entry.coveredToMs !== undefined) entry.needsFull = true;
      entry.days = t.days;
    }
  }

  /**
   * The history of a resource at a grain as last read: points over the wanted days, oldest first;
   * with `error` and no points when it could not be read (see the module comment);
   * `undefined` before the first read.
   */
  get(resourceId: string, grain: HistoryGrain): DemandHistory | undefined {
    return this.#entries.get(`${resourceKey(resourceId)}|${grain}`)?.served;
  }

  /** Forgets a resource (its policy was deleted or retargeted). */
  forget(resourceId: string): void {
    const k = resourceKey(resourceId);
    for (const key of [...this.#entries.keys()]) if (key.startsWith(`${k}|`)) this.#entries.delete(key);
  }

  /** Resources (per grain) in the cache. */
  get size(): number {
    return this.#entries.size;
  }

  /** True when a {@link refresh} at `nowMs` would read something. */
  due(nowMs: number): boolean {
    for (const e of this.#entries.values()) if (this.#isDue(e, nowMs)) return true;
    return false;
  }

  #period(ms: number): number {
    return Math.floor((ms - this.#settleMs) / this.#refreshMs);
  }

  #isDue(e: Entry, nowMs: number): boolean {
    if (nowMs - e.wantedAtMs > this.#forgetAfterMs) return false;
    if (e.lastAttemptMs === undefined || e.needsFull) return true;
    if (e.error !== undefined) {
      const wait = Math.min(this.#refreshMs, this.#retryMs * 2 ** Math.max(0, e.failures - 1));
      return nowMs >= e.lastAttemptMs + wait;
    }
    return this.#period(nowMs) > this.#period(e.lastSuccessMs ?? e.lastAttemptMs);
  }

  /** End (exclusive) of the complete buckets of a grain at `nowMs`, ms. */
  #completeEnd(grain: HistoryGrain, nowMs: number): number {
    const grainMs = HISTORY_GRAIN_SECONDS[grain] * 1000;
    return Math.floor((nowMs - this.#settleMs) / grainMs) * grainMs;
  }

  /**
   * Reads what is due at `nowMs`: new resources and those whose refresh period turned in full or
   * incrementally, with every other cached resource of the same grain whose period turned.
   * Resources nobody asked for in `forgetAfterMs` are dropped first.
   * @throws ResourceIdError for a malformed resource ID; the caller's abort; errors that are not
   *   Azure failures. Azure failures land in the report and in the resources' histories.
   */
  async refresh(nowMs: number, options: { signal?: AbortSignal } = {}): Promise<HistoryRefreshReport> {
    for (const [key, e] of this.#entries) {
      if (nowMs - e.wantedAtMs > this.#forgetAfterMs) this.#entries.delete(key);
    }
    const due = [...this.#entries.values()].filter((e) => this.#isDue(e, nowMs));
    const calls = this.#plan(due, nowMs);
    const report: HistoryRefreshReport = { calls: 0, failedCalls: 0, reads: [] };
    const answers = await this.#query(calls, report, options.signal);
    const got = resourceReads(calls, answers, due);
    for (const [e, s] of got) {
      this.#apply(e, s, nowMs);
      report.reads.push({
        resourceId: e.resourceId,
        grain: e.grain,
        kind: s.kind,
        result: s.error === undefined ? "success" : "failure",
        points: s.points.length,
        ...(s.error !== undefined ? { error: s.error } : {}),
      });
    }
    // Due resources that needed no call (nothing new is complete yet) count as refreshed.
    for (const e of due) {
      if (got.has(e)) continue;
      e.lastAttemptMs = nowMs;
      if (e.error === undefined) e.lastSuccessMs = nowMs;
    }
    return report;
  }

  /**
   * Sends every history query of every planned call, `#concurrency` at a time, counting calls
   * sent and failed in `report`: per call, the results per resource, or the first error.
   */
  async #query(
    calls: readonly PlannedCall[],
    report: HistoryRefreshReport,
    signal: AbortSignal | undefined,
  ): Promise<Map<PlannedCall, CallAnswers>> {
    const queries = calls.flatMap((call) =>
      historyQueries(call.batch.service).map((query) => ({ call, query })),
    );
    const answers = new Map<PlannedCall, CallAnswers>();
    await forEachLimited(queries, this.#concurrency, async ({ call, query }) => {
      const answer = await this.#querier.queryBatch(call.batch, {
        operation: "metrics.queryResources(history)",
        metricNames: query.metricNames,
        start: new Date(call.startMs),
        end: new Date(call.endMs),
        interval: interval(call.grain),
        aggregation: query.aggregation,
        ...(signal ? { signal } : {}),
      });
      if (answer.sent) report.calls++;
      let got = answers.get(call);
      if (!got) {
        got = { results: new Map() };
        answers.set(call, got);
      }
      if ("error" in answer) {
        report.failedCalls++;
        got.error ??= answer.error.message;
        return;
      }
      const byResource = resultsByResource(call.batch.resourceIds, answer.results);
      for (const [id, r] of byResource) got.results.set(id, [...(got.results.get(id) ?? []), r]);
    });
    return answers;
  }

  /** The calls of a refresh: per grain, one span for incremental reads, one (cut) for full reads. */
  #plan(due: readonly Entry[], nowMs: number): PlannedCall[] {
    const calls: PlannedCall[] = [];
    for (const grain of new Set(due.map((e) => e.grain))) {
      const grainMs = HISTORY_GRAIN_SECONDS[grain] * 1000;
      const endMs = this.#completeEnd(grain, nowMs);
      const ofGrain = due.filter((e) => e.grain === grain);
      const incremental = ofGrain.filter(
        (e) => !e.needsFull && e.coveredToMs !== undefined && e.coveredToMs >= endMs - this.#maxIncrementalMs,
      );
      const full = ofGrain.filter((e) => !incremental.includes(e));
      if (incremental.length > 0) {
        const startMs = Math.min(...incremental.map((e) => e.coveredToMs as number));
        if (startMs < endMs) calls.push(...this.#calls(incremental, grain, "incremental", startMs, endMs));
      }
      if (full.length > 0) {
        const startMs = endMs - Math.max(...full.map((e) => e.days)) * DAY_MS;
        const spanMs = this.#maxPoints * grainMs;
        for (let from = startMs; from < endMs; from += spanMs) {
          calls.push(...this.#calls(full, grain, "full", from, Math.min(endMs, from + spanMs)));
        }
      }
    }
    return calls;
  }

  #calls(
    entries: readonly Entry[],
    grain: HistoryGrain,
    kind: HistoryRead["kind"],
    startMs: number,
    endMs: number,
  ): PlannedCall[] {
    const batches = planBatches(entries.map((e) => ({ resourceId: e.resourceId, region: e.region })));
    return batches.map((batch) => ({ batch, grain, kind, startMs, endMs }));
  }

  /** Merges one resource's read into its entry and rebuilds what {@link get} serves. */
  #apply(e: Entry, read: ResourceRead, nowMs: number) {
    e.lastAttemptMs = nowMs;
    const endMs = this.#completeEnd(e.grain, nowMs);
    const grainSeconds = HISTORY_GRAIN_SECONDS[e.grain];
    if (read.error !== undefined) {
      e.failures++;
      e.error = read.error;
      const fresh = e.lastSuccessMs !== undefined && nowMs - e.lastSuccessMs <= this.#maxStaleMs;
      if (!fresh) e.served = { grainSeconds, readAtMs: nowMs, points: [], error: read.error };
      return;
    }
    const fromMs = endMs - e.days * DAY_MS;
    const incoming = read.points.filter((p) => p.timeMs >= fromMs && p.timeMs < endMs);
    incoming.sort((a, b) => a.timeMs - b.timeMs);
    const firstNew = incoming[0]?.timeMs ?? endMs;
    const kept =
      read.kind === "full"
        ? []
        : e.points.slice(firstAtOrAfter(e.points, fromMs), firstAtOrAfter(e.points, firstNew));
    e.points = kept.length === 0 ? incoming : kept.concat(incoming);
    e.coveredToMs = endMs;
    e.lastSuccessMs = nowMs;
    e.failures = 0;
    e.needsFull = false;
    delete e.error;
    e.served = { grainSeconds, readAtMs: nowMs, points: e.points };
  }
}

/** One planned call's answers: per resource, the results of the queries that answered, or the first error. */
interface CallAnswers {
  results: Map<string, MetricsResultLike[]>;
  error?: string;
}

/** One resource's read in a refresh: its points, or the first error of its calls. */
interface ResourceRead {
  points: DemandPoint[];
  error?: string;
  kind: HistoryRead["kind"];
}

/**
 * Each due resource's read, in the order of the calls that covered it: the points of every
 * answer (checked against the grain), or the first error of its calls.
 * @throws errors other than MetricGrainError from reading an answer.
 */
function resourceReads(
  calls: readonly PlannedCall[],
  answers: ReadonlyMap<PlannedCall, CallAnswers>,
  due: readonly Entry[],
): Map<Entry, ResourceRead> {
  const got = new Map<Entry, ResourceRead>();
  const byKey = new Map(due.map((e) => [`${resourceKey(e.resourceId)}|${e.grain}`, e]));
  for (const call of calls) {
    const answer = answers.get(call);
    for (const id of call.batch.resourceIds) {
      const e = byKey.get(`${resourceKey(id)}|${call.grain}`) as Entry;
      let s = got.get(e);
      if (!s) {
        s = { points: [], kind: call.kind };
        got.set(e, s);
      }
      addAnswer(s, call, e, answer);
    }
  }
  return got;
}

/** Adds one call's answer for resource `e` to its read `s`: the points, or the first error. */
function addAnswer(s: ResourceRead, call: PlannedCall, e: Entry, answer: CallAnswers | undefined): void {
  if (answer?.error !== undefined) {
    s.error ??= answer.error;
    return;
  }
  const parts = answer?.results.get(e.resourceId);
  if (!parts) return;
  try {
    s.points.push(...answerPoints(call, e, combineAnswers(parts)));
  } catch (err) {
    if (!(err instanceof MetricGrainError)) throw err;
    s.error ??= grainError(e, call, err).message;
  }
}

/** The points of one resource's answer, checked against the grain asked for. */
function answerPoints(call: PlannedCall, e: Entry, result: MetricsResultLike): DemandPoint[] {
  const answer = readMetricsAnswer(call.batch.service, e.resourceId, result);
  const wanted = HISTORY_GRAIN_SECONDS[call.grain];
  if (answer.grainFrom !== "assumed" && answer.grainSeconds !== wanted) {
    throw new MetricGrainError(`asked for ${interval(call.grain)}, got buckets of ${answer.grainSeconds} s`);
  }
  return answer.samples
    .filter((s) => {
      const t = s.time.getTime();
      return t >= call.startMs && t < call.endMs;
    })
    .map((s) => ({
      timeMs: s.time.getTime(),
      connections: s.connections,
      quotaPercent: s.connectionQuotaUtilizationPercent,
      bytesPerSecond:
        s.inboundBytesPerSecond === null || s.outboundBytesPerSecond === null
          ? null
          : s.inboundBytesPerSecond + s.outboundBytesPerSecond,
    }));
}

function grainError(e: Entry, call: PlannedCall, err: MetricGrainError): AzureApiError {
  return new TransientError(`history of ${e.resourceId}: ${err.message}`, {
    operation: "metrics.queryResources(history)",
    scope: call.batch.scope,
    code: "UnreadableTimeGrain",
  });
}
