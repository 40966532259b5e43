/**
 * Reads SignalR / Web PubSub metrics with `MetricsClient.queryResources` (Azure Monitor
 * `metrics:getBatch`, `@azure/monitor-query-metrics`).
 *
 * One call per batch of at most 50 resources of one subscription, region and service (see
 * `batching.ts`), against that region's metrics endpoint; every metric of the service in the same
 * call, PT1M grain, `Maximum,Total` aggregations (see `metric-definitions.ts`). With
 * `connectionsByEndpoint`, SignalR batches get one more call for `ConnectionCount` split by
 * `Endpoint`.
 *
 * Each resource's answer is read by `readMetricsAnswer` (metric-samples.ts); one whose time grain
 * cannot be read fails alone (a {@link TransientError} for that resource in `failures`).
 *
 * A batch that fails does not fail the others: its typed error is returned in `failures`; a batch
 * rejected as invalid (400) is split until the rejection is confined to the resources that cause
 * it, so the others in it still get their data. A
 * throttled batch gates its scope (subscription + region) in the throttle gate; later batches of
 * that scope fail fast until the wait is over, without a request.
 */
import { MetricsClient, type MetricsQueryResourcesOptions } from "@azure/monitor-query-metrics";
import type { ServiceKind } from "../capacity/index.js";
import { type MetricsBatch, type MetricsTarget, planBatches } from "./batching.js";
import {
  type AzureConnection,
  commonClientOptions,
  type ResolvedConnection,
  resolveConnection,
} from "./connection.js";
import type { AzureApiError } from "./errors.js";
import { ThrottledError, TransientError } from "./errors.js";
import { failedCall } from "./gated-call.js";
import {
  aggregationParameter,
  ENDPOINT_SPLIT,
  METRIC_DEFINITIONS,
  METRIC_GRAIN,
  metricNamespace,
} from "./metric-definitions.js";
import {
  addEndpointSplit,
  MetricGrainError,
  type MetricSample,
  type MetricsResultLike,
  readMetricsAnswer,
  resultsByResource,
} from "./metric-samples.js";
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

/** A batch (or one resource of it, as a batch of one) that could not be read. */
export interface MetricsFailure {
  batch: MetricsBatch;
  /** `main` for the metrics call, `endpointSplit` for the extra ConnectionCount call (samples are then kept). */
  part: "main" | "endpointSplit";
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
  /** Aggregations, e.g. `Maximum,Total`. */
  aggregation: string;
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
      for (const { batch, answer: main } of await this.#queryConfined(whole, options, mine)) {
        if ("error" in main) mine.failures.push({ batch, part: "main", error: main.error });
        else await this.#readAnswered(batch, main.results, options, mine);
      }
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

  /**
   * The main query of `batch`; a batch Azure rejects as invalid (400: kind `Invalid`) is split in
   * halves and each half asked again, so the rejection is confined to the resources that cause it
   * and the others still get their data — at most 2n − 1 calls for n resources, only when a
   * request is rejected.
   */
  async #queryConfined(
    batch: MetricsBatch,
    options: MetricsReadOptions,
    result: MetricsReadResult,
  ): Promise<{ batch: MetricsBatch; answer: BatchAnswer }[]> {
    const answer = await this.#query(batch, options, false, result);
    if (!("error" in answer) || answer.error.kind !== "Invalid" || batch.resourceIds.length < 2) {
      return [{ batch, answer }];
    }
    const half = Math.ceil(batch.resourceIds.length / 2);
    const parts = [batch.resourceIds.slice(0, half), batch.resourceIds.slice(half)];
    const out: { batch: MetricsBatch; answer: BatchAnswer }[] = [];
    for (const resourceIds of parts)
      out.push(...(await this.#queryConfined({ ...batch, resourceIds }, options, result)));
    return out;
  }

  /** Reads one answered batch into `result` (and its Endpoint split, when asked for). */
  async #readAnswered(
    batch: MetricsBatch,
    results: readonly MetricsResultLike[],
    options: MetricsReadOptions,
    result: MetricsReadResult,
  ): Promise<void> {
    const byResource = resultsByResource(batch.resourceIds, results);
    const perResource = new Map<string, MetricSample[]>();
    for (const id of batch.resourceIds) {
      const r = byResource.get(id);
      try {
        perResource.set(id, r ? readMetricsAnswer(batch.service, id, r).samples : []);
      } catch (err) {
        if (!(err instanceof MetricGrainError)) throw err;
        result.failures.push({
          batch: { ...batch, resourceIds: [id] },
          part: "main",
          error: new TransientError(`metrics of ${id}: ${err.message}`, {
            operation: "metrics.queryResources",
            scope: batch.scope,
            code: "UnreadableTimeGrain",
          }),
        });
      }
    }
    if (options.connectionsByEndpoint && batch.service === "SignalR") {
      const split = await this.#query(batch, options, true, result);
      if ("error" in split) {
        result.failures.push({ batch, part: "endpointSplit", error: split.error });
      } else {
        const splitBy = resultsByResource(batch.resourceIds, split.results);
        for (const [id, samples] of perResource) addEndpointSplit(samples, splitBy.get(id));
      }
    }
    for (const [id, samples] of perResource) result.samples.set(id, samples);
  }

  async #query(
    batch: MetricsBatch,
    options: MetricsReadOptions,
    endpointSplit: boolean,
    result: MetricsReadResult,
  ): Promise<BatchAnswer> {
    const service: ServiceKind = batch.service;
    const answer = await this.queryBatch(batch, {
      operation: endpointSplit ? "metrics.queryResources(endpointSplit)" : "metrics.queryResources",
      metricNames: endpointSplit ? [ENDPOINT_SPLIT.metric] : METRIC_DEFINITIONS[service].map((d) => d.name),
      start: options.start,
      end: options.end,
      interval: METRIC_GRAIN,
      aggregation: endpointSplit ? "Maximum" : aggregationParameter(service),
      ...(endpointSplit ? { filter: ENDPOINT_SPLIT.filter } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (answer.sent) result.calls++;
    return answer;
  }

  /**
   * One `metrics:getBatch` call for `batch` (≤ 50 resources of one subscription, region and
   * service) through the scope's throttle gate, with the connection's request timeout: the one
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
        [...batch.resourceIds],
        [...query.metricNames],
        metricNamespace(batch.service),
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
