/**
 * Reads SignalR / Web PubSub metrics with `MetricsClient.queryResources` (Azure Monitor
 * `metrics:getBatch`, `@azure/monitor-query-metrics`).
 *
 * Per batch of at most 50 resources of one subscription, region and resource type (see
 * `batching.ts`; a replica's type, `…/replicas`, is its own metric namespace),
 * against that region's metrics endpoint, PT1M grain: the queries of the query plan
 * (`query-plan.ts`) — one per aggregation, each metric asked only for the aggregation it is read
 * as and Azure Monitor supports (SignalR and Web PubSub: `Maximum` for the gauges, `Total` for the
 * counters), and with `connectionsByEndpoint` one more for SignalR's `ConnectionCount` split by
 * `Endpoint`. Calls = queries × ceil(resources / 50) per scope. The queries of a batch go one after
 * the other (batches run in parallel): a query Azure throttles gates the scope before the next
 * one leaves, so no call of a throttled scope is sent after its 429.
 *
 * Each resource's answers are joined (`combineAnswers`) and read by `readMetricsAnswer`
 * (metric-samples.ts); one whose time grain cannot be read fails alone (a {@link TransientError}
 * for that resource in `failures`).
 *
 * Failures: a batch's query that fails does not fail the others, nor the batch's other queries.
 * - A query rejected as invalid (400) is split in halves until the rejection is confined to the
 *   resources that cause it, so the others in it still get their data.
 * - A throttled query gates its scope (subscription + region) in the throttle gate; later queries
 *   of that scope fail fast until the wait is over, without a request.
 * - A resource whose every metrics query failed has no samples (it is in `failures` only).
 * - A resource for which one query failed and another answered keeps the samples of the answered
 *   one: the fields of the failed query are `null` (unknown, never 0 — a counter of a failed
 *   query is not read as idle however known the gauges are), and the failure is in `failures`
 *   with the `fields` it left unknown.
 */
import { MetricsClient, type MetricsQueryResourcesOptions } from "@azure/monitor-query-metrics";
import { SAMPLE_FIELDS, type SampleField } from "../autoscale/samples.js";
import { batchResourceType, type MetricsBatch, type MetricsTarget, planBatches } from "./batching.js";
import {
  type AzureConnection,
  commonClientOptions,
  type ResolvedConnection,
  resolveConnection,
} from "./connection.js";
import type { AzureApiError } from "./errors.js";
import { ThrottledError, TransientError } from "./errors.js";
import { failedCall } from "./gated-call.js";
import { type AggregationType, METRIC_GRAIN, metricNamespace } from "./metric-definitions.js";
import {
  addEndpointSplit,
  combineAnswers,
  MetricGrainError,
  type MetricSample,
  type MetricsResultLike,
  readMetricsAnswer,
  resultsByResource,
} from "./metric-samples.js";
import { type MetricQuery, type MetricQueryPart, metricQueries } from "./query-plan.js";
import { formatResourceId, parseResourceId } from "./resource-id.js";
import { normalizeRegion } from "./scope.js";
import { ThrottleGate } from "./throttle.js";

/** What to read. */
export interface MetricsReadOptions {
  /** Start of the first minute wanted (inclusive). */
  start: Date;
  /** End of the span (exclusive). */
  end: Date;
  /** Also read SignalR connections split into client and server (one more call per SignalR batch). */
  connectionsByEndpoint?: boolean;
  /** Aborts every call still running. */
  signal?: AbortSignal;
  /**
   * Told as soon as each batch is done, with that batch's samples and failures (the same entries
   * `read` returns): a caller can use one region's metrics while another region is still being
   * read. Must not throw.
   */
  onBatch?: (
    batch: MetricsBatch,
    samples: ReadonlyMap<string, MetricSample[]>,
    failures: readonly MetricsFailure[],
  ) => void;
}

/** A query of a batch (or of part of it, or of one resource as a batch of one) that could not be read. */
export interface MetricsFailure {
  batch: MetricsBatch;
  /**
   * `metrics` for a query of metric values (`aggregation` says which), `endpointSplit` for the
   * extra ConnectionCount call (the samples are kept, without the split).
   */
  part: MetricQueryPart;
  /** The aggregation of the failed query; absent for an answer that could not be read at all (its grain). */
  aggregation?: AggregationType;
  /** Sample fields the failure leaves unknown for the batch's resources (every field for an unreadable answer). */
  fields: readonly SampleField[];
  error: AzureApiError;
}

/** What {@link AzureMetrics.read} returns. */
export interface MetricsReadResult {
  /**
   * Samples per requested resource ID (spelled as requested), sorted by time. A resource of a
   * served batch that Azure returned nothing for maps to `[]`; resources of failed batches, and
   * resources whose answer's time grain cannot be read, are absent (and in `failures`).
   */
  samples: Map<string, MetricSample[]>;
  failures: MetricsFailure[];
  /** getBatch requests sent (gated batches send none). */
  calls: number;
}

/** One getBatch query, as {@link AzureMetrics.queryBatch} sends it. */
export interface BatchQuery {
  /** Adapter operation for errors and the gate, e.g. `metrics.queryResources`. */
  operation: string;
  /** Metric names (REST names), all of the batch's service. */
  metricNames: readonly string[];
  /** Start of the span (inclusive). */
  start: Date;
  /** End of the span (exclusive). */
  end: Date;
  /** ISO 8601 time grain: `PT1M`, `PT5M`, `PT1H`. */
  interval: string;
  /**
   * The `aggregation` parameter: aggregation types, comma separated, every one supported by every
   * metric of the query — Azure may refuse the query whole otherwise. The operator's queries carry
   * one each, from the query plan (`query-plan.ts`), e.g. `Maximum`.
   */
  aggregation: AggregationType | (string & {});
  /** Dimension filter, e.g. `Endpoint eq '*'`. */
  filter?: string;
  /** Aborts the call. */
  signal?: AbortSignal;
}

/** What one getBatch call gave: the results, or the typed error; `sent` false when the gate refused it. */
export type BatchAnswer =
  | { results: readonly MetricsResultLike[]; sent: boolean }
  | { error: AzureApiError; sent: boolean };

/** Sends getBatch calls: {@link AzureMetrics}, or a stand-in in tests. */
export interface BatchQuerier {
  queryBatch(batch: MetricsBatch, query: BatchQuery): Promise<BatchAnswer>;
}

/** Options of {@link AzureMetrics}. */
export interface AzureMetricsOptions {
  /** Gate shared with other adapters of the same scope set (default: a new one). */
  gate?: ThrottleGate;
  /** Batches in flight at once (default 4). */
  concurrency?: number;
}

/** Runs `fn` over `items` with at most `limit` calls in flight. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

export class AzureMetrics implements BatchQuerier {
  readonly gate: ThrottleGate;
  readonly #conn: ResolvedConnection;
  readonly #concurrency: number;
  readonly #clients = new Map<string, MetricsClient>();

  constructor(connection: AzureConnection, options: AzureMetricsOptions = {}) {
    this.#conn = resolveConnection(connection);
    this.gate = options.gate ?? new ThrottleGate(this.#conn.now);
    this.#concurrency = options.concurrency ?? 4;
  }

  #client(region: string): MetricsClient {
    const key = normalizeRegion(region);
    let client = this.#clients.get(key);
    if (!client) {
      client = new MetricsClient(this.#conn.metricsEndpoint(key), this.#conn.credential, {
        ...commonClientOptions(this.#conn),
        ...(this.#conn.metricsScope !== undefined ? { audience: this.#conn.metricsScope } : {}),
      });
      this.#clients.set(key, client);
    }
    return client;
  }

  /**
   * Reads the metrics of `targets` between `options.start` and `options.end`.
   * @throws ResourceIdError for a malformed resource ID (before any call);
   *   rethrows the caller's abort and errors that are not Azure failures. Azure failures are
   *   returned per batch in `failures`.
   */
  async read(targets: readonly MetricsTarget[], options: MetricsReadOptions): Promise<MetricsReadResult> {
    const batches = planBatches(targets);
    const result: MetricsReadResult = { samples: new Map(), failures: [], calls: 0 };
    await forEachLimited(batches, this.#concurrency, async (whole) => {
      const mine: MetricsReadResult = { samples: new Map(), failures: [], calls: 0 };
      await this.#readBatch(whole, options, mine);
      for (const [id, samples] of mine.samples) result.samples.set(id, samples);
      result.failures.push(...mine.failures);
      result.calls += mine.calls;
      try {
        options.onBatch?.(whole, mine.samples, mine.failures);
      } catch {
        // A listener's failure does not fail the read.
      }
    });
    return result;
  }

  /** Every query of one batch (in order), then each resource's answers read into `result`. */
  async #readBatch(
    batch: MetricsBatch,
    options: MetricsReadOptions,
    result: MetricsReadResult,
  ): Promise<void> {
    const queries = metricQueries(batch.service, {
      ...(options.connectionsByEndpoint ? { connectionsByEndpoint: true } : {}),
    });
    /** Per resource, the results of the metrics queries that answered. */
    const answered = new Map<string, MetricsResultLike[]>();
    let split: Map<string, MetricsResultLike> | undefined;
    for (const query of queries) {
      if (query.part === "endpointSplit") {
        const answer = await this.#query(batch, query, options, result);
        if ("error" in answer) result.failures.push(failure(batch, query, answer.error));
        else split = resultsByResource(batch.resourceIds, answer.results);
        continue;
      }
      for (const { batch: part, answer } of await this.#queryConfined(batch, query, options, result)) {
        if ("error" in answer) {
          result.failures.push(failure(part, query, answer.error));
          continue;
        }
        addAnswered(answered, part.resourceIds, answer.results);
      }
    }
    readSamples(batch, answered, split, result);
  }

  /**
   * One query of `batch`; a batch Azure rejects as invalid (400: kind `Invalid`) is split in
   * halves and each half asked again, so the rejection is confined to the resources that cause it
   * and the others still get their data — at most 2n − 1 calls for n resources, only when a
   * request is rejected.
   */
  async #queryConfined(
    batch: MetricsBatch,
    query: MetricQuery,
    options: MetricsReadOptions,
    result: MetricsReadResult,
  ): Promise<{ batch: MetricsBatch; answer: BatchAnswer }[]> {
    const answer = await this.#query(batch, query, options, result);
    if (!("error" in answer) || answer.error.kind !== "Invalid" || batch.resourceIds.length < 2) {
      return [{ batch, answer }];
    }
    const half = Math.ceil(batch.resourceIds.length / 2);
    const parts = [batch.resourceIds.slice(0, half), batch.resourceIds.slice(half)];
    const out: { batch: MetricsBatch; answer: BatchAnswer }[] = [];
    for (const resourceIds of parts)
      out.push(...(await this.#queryConfined({ ...batch, resourceIds }, query, options, result)));
    return out;
  }

  async #query(
    batch: MetricsBatch,
    query: MetricQuery,
    options: MetricsReadOptions,
    result: MetricsReadResult,
  ): Promise<BatchAnswer> {
    const answer = await this.queryBatch(batch, {
      operation:
        query.part === "endpointSplit"
          ? "metrics.queryResources(endpointSplit)"
          : `metrics.queryResources(${query.aggregation})`,
      metricNames: query.metricNames,
      start: options.start,
      end: options.end,
      interval: METRIC_GRAIN,
      aggregation: query.aggregation,
      ...(query.filter !== undefined ? { filter: query.filter } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (answer.sent) result.calls++;
    return answer;
  }

  /**
   * One `metrics:getBatch` call for `batch` (≤ 50 resources of one subscription, region and
   * resource type, whose metric namespace it asks) through the scope's throttle gate, with the connection's request timeout: the one
   * call both the one-minute reader ({@link read}) and the history reader (`history.ts`) make.
   * @returns the SDK's results, or the typed error of a failed or gated call (`sent` false when
   *   the gate refused it without a request).
   * @throws the caller's abort, and errors that are not Azure failures.
   */
  async queryBatch(batch: MetricsBatch, query: BatchQuery): Promise<BatchAnswer> {
    try {
      this.gate.check(batch.scope, query.operation);
    } catch (err) {
      if (err instanceof ThrottledError) return { error: err, sent: false };
      throw err;
    }
    try {
      // The SDK passes `abortSignal` through to the request although its options type omits it.
      const options: MetricsQueryResourcesOptions & { abortSignal?: AbortSignal } = {
        startTime: query.start,
        endTime: query.end,
        interval: query.interval,
        aggregation: query.aggregation,
        ...(query.filter !== undefined ? { filter: query.filter } : {}),
        ...(query.signal ? { abortSignal: query.signal } : {}),
      };
      const results = await this.#client(batch.scope.region).queryResources(
        batch.resourceIds.map(canonicalResourceId),
        [...query.metricNames],
        metricNamespace(batchResourceType(batch)),
        options,
      );
      return { results, sent: true };
    } catch (err) {
      const typed = failedCall(err, {
        gate: this.gate,
        conn: this.#conn,
        operation: query.operation,
        scope: batch.scope,
        signal: query.signal,
      });
      if (!typed) throw err;
      return { error: typed, sent: true };
    }
  }
}

/**
 * A resource ID with its fixed segments spelled as ARM writes them (`/subscriptions/…/resourceGroups/
 * …/providers/Microsoft.SignalRService/SignalR/…`), names as given. ARM IDs are case-insensitive,
 * but `MetricsClient.queryResources` finds the subscription of the getBatch URL by looking for
 * `subscriptions/` case-sensitively: `/SUBSCRIPTIONS/…` would send a wrong one (400). Answers are
 * matched back case-insensitively (`resultsByResource`). An ID that does not parse is sent as is.
 */
export function canonicalResourceId(resourceId: string): string {
  try {
    return formatResourceId(parseResourceId(resourceId));
  } catch {
    return resourceId;
  }
}

/** The failure of `query` for the resources of `batch`. */
function failure(batch: MetricsBatch, query: MetricQuery, error: AzureApiError): MetricsFailure {
  return { batch, part: query.part, aggregation: query.aggregation, fields: query.fields, error };
}

/** Adds each resource's result of one answered query of `resourceIds` to `answered` (none when it is missing). */
function addAnswered(
  answered: Map<string, MetricsResultLike[]>,
  resourceIds: readonly string[],
  results: Parameters<typeof resultsByResource>[1],
): void {
  const byResource = resultsByResource(resourceIds, results);
  for (const id of resourceIds) {
    const found = byResource.get(id);
    answered.set(id, [...(answered.get(id) ?? []), ...(found ? [found] : [])]);
  }
}

/**
 * Each resource's samples from the answers of its metrics queries (with the per-endpoint split
 * when it was read) into `result.samples`; a resource whose answer has an unreadable time grain
 * lands in `result.failures`. A resource every metrics query failed for is skipped (its failures
 * are already in `result.failures`).
 */
function readSamples(
  batch: MetricsBatch,
  answered: ReadonlyMap<string, MetricsResultLike[]>,
  split: ReadonlyMap<string, MetricsResultLike> | undefined,
  result: MetricsReadResult,
): void {
  for (const id of batch.resourceIds) {
    const parts = answered.get(id);
    if (parts === undefined) continue; // every metrics query failed: in `failures`
    try {
      const samples =
        parts.length > 0 ? readMetricsAnswer(batch.service, id, combineAnswers(parts)).samples : [];
      if (split) addEndpointSplit(samples, split.get(id));
      result.samples.set(id, samples);
    } catch (err) {
      if (!(err instanceof MetricGrainError)) throw err;
      result.failures.push({
        batch: { ...batch, resourceIds: [id] },
        part: "metrics",
        fields: SAMPLE_FIELDS,
        error: new TransientError(`metrics of ${id}: ${err.message}`, {
          operation: "metrics.queryResources",
          scope: batch.scope,
          code: "UnreadableTimeGrain",
        }),
      });
    }
  }
}
