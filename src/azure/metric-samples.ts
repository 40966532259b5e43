/**
 * An Azure Monitor metrics answer → one typed sample per resource and bucket. Pure. The one
 * mapping of an answer for both readers: the Azure adapter (`metrics.ts`, what
 * `MetricsClient.queryResources` returned) and `recommend`'s metrics file (`cli/metrics-file.ts`,
 * a raw getBatch or single-resource body turned into the same shape).
 *
 * - Metrics are recognised by the last segment of their `id` (`…/metrics/ServerLoad`), else by
 *   name or display name — the SDK returns the localized display name as `metric.name`.
 * - A value Azure did not give (field absent, `null`, NaN, ±Infinity, the metric missing or with an
 *   error code) stays `null`: missing is not zero.
 * - Several time series of one metric (a dimension split) combine per timestamp by the metric's
 *   `acrossSeries` rule (`metric-definitions.ts`): percentages take the highest series, counts
 *   and totals are summed; the result is `null` only when no series has a value there.
 * - The grain: the answer's `granularity` (the body's `interval`) when given, else the even
 *   spacing of its timestamps (PT1M when there is a single timestamp). Both must agree, in whole
 *   minutes; otherwise {@link MetricGrainError} (see {@link answerGrain}). Counters (`Total` per
 *   bucket) become rates per second: `Total ÷ grain seconds`.
 * - Idle counters: a bucket in which nothing was counted has no value — the official getBatch
 *   example (`MetricBatchExample.json`, api-version 2024-02-01) writes it as a point carrying only
 *   `timeStamp`; a body may also leave the point out, give the field as `null`, or answer the
 *   counter with no series at all. So a counter the answer carries without error, with no value
 *   for a bucket (no data point, a point without the field, or `null`) in which a gauge of the
 *   answer (server load, quota utilization or connections) has a value, is 0 there, and its field
 *   is listed in the sample's `zeroFilled`. A counter absent from the answer or with an error code
 *   stays unknown; a value that is not a finite number (NaN, ±Infinity) stays unknown; a bucket
 *   without any gauge value stays unknown. The decision reads a bucket only once it is older than
 *   the ingestion delay (`autoscale/samples.ts`), so only complete buckets are read this way.
 * - Several queries, one answer: the operator asks the gauges and the counters in separate
 *   queries (one aggregation each, `query-plan.ts`); {@link combineAnswers} joins one resource's
 *   answers to them before they are read, so the rule above holds across them. A query that
 *   failed contributes nothing: its metrics are absent, so their fields are unknown, never 0
 *   (counters included: their gauges may be known, but they were not answered).
 */
import { type MetricSample as BucketSample, emptySample } from "../autoscale/samples.js";
import type { ServiceKind } from "../capacity/index.js";
import {
  type AcrossSeries,
  type AggregationField,
  ENDPOINT_SPLIT,
  METRIC_DEFINITIONS,
  type MetricDefinition,
  timeGrainSeconds,
} from "./metric-definitions.js";
import { resourceKey } from "./resource-id.js";

/**
 * One bucket (one minute at PT1M) of one instance's metrics: a {@link BucketSample} with the
 * resource and, when asked for, the connections split by endpoint.
 */
export interface MetricSample extends BucketSample {
  resourceId: string;
  /** Start of the bucket. */
  time: Date;
  /** Client connections (`Endpoint = client`), only when the split was asked for. */
  clientConnections?: number | null;
  /** Server connections (`Endpoint = server`), only when the split was asked for. */
  serverConnections?: number | null;
}

/** A data point as the SDK returns it. */
export interface DataPointLike {
  timeStamp: Date;
  average?: number;
  minimum?: number;
  maximum?: number;
  total?: number;
  count?: number;
}

/** A metric as the SDK returns it (`Metric` of `@azure/monitor-query-metrics`). */
export interface MetricLike {
  id: string;
  name: string;
  errorCode?: string;
  timeseries: readonly {
    metadatavalues?: readonly { name?: string; value?: string }[];
    data?: readonly DataPointLike[];
  }[];
}

/** One resource's result as the SDK returns it (`MetricsQueryResult`). */
export interface MetricsResultLike {
  resourceId?: string;
  /** The answer's interval (ISO 8601, `PT1M`), when it says. */
  granularity?: string;
  metrics: readonly MetricLike[];
}

/** The answer's time grain cannot be read: an unreadable interval, or irregular or disagreeing timestamps. */
export class MetricGrainError extends Error {
  override readonly name = "MetricGrainError";
}

/** What {@link readMetricsAnswer} found in one resource's answer. */
export interface MetricsAnswer {
  /** One sample per bucket any metric of the service has a data point for, sorted by time. */
  samples: MetricSample[];
  /** Length of a bucket, seconds. */
  grainSeconds: number;
  /** Where the grain came from: the answer's interval, its timestamps, or assumed (a single timestamp, no interval). */
  grainFrom: "interval" | "timestamps" | "assumed";
  /** Metrics of the service the answer does not have (their values are unknown). */
  absent: string[];
  /** Metrics of the service answered with an error code (their values are unknown). */
  failed: { metric: string; errorCode: string }[];
}

function finite(v: number | null | undefined): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** A value the decision can use: finite and not negative. */
function measured(v: number | null | undefined): boolean {
  return typeof v === "number" && Number.isFinite(v) && v >= 0;
}

function metricNameOf(metric: MetricLike): string {
  const last = metric.id.split("/").pop();
  return last && last !== "" ? last : metric.name;
}

/**
 * True when `metric` is the metric of `def`: by the last segment of its ID, or by its name — the
 * REST name, or the display name the SDK gives as `name` (case-insensitive).
 */
export function isMetricOf(metric: MetricLike, def: MetricDefinition): boolean {
  const names = [def.name.toLowerCase(), def.displayName.toLowerCase()];
  return names.includes(metricNameOf(metric).toLowerCase()) || names.includes(metric.name.toLowerCase());
}

/** Finds the metric of `def` in `metrics`: one whose ID names it first, else one whose name does. */
export function findMetric(metrics: readonly MetricLike[], def: MetricDefinition): MetricLike | undefined {
  const wanted = def.name.toLowerCase();
  return (
    metrics.find((m) => metricNameOf(m).toLowerCase() === wanted) ?? metrics.find((m) => isMetricOf(m, def))
  );
}

function usable(metric: MetricLike | undefined): metric is MetricLike {
  return metric !== undefined && (metric.errorCode === undefined || metric.errorCode === "Success");
}

/** The values of one metric per bucket, combined over its series. */
interface MetricColumn {
  /** Per timestamp (ms) with a value in some series: the combined value. */
  values: Map<number, number>;
  /** Timestamps where a series had a value that is no measurement (NaN, ±Infinity, not a number). */
  invalid: Set<number>;
  /** Every timestamp a data point was given for, with or without a value. */
  times: Set<number>;
}

/**
 * The metric's `aggregation` per timestamp, combined over the series by `across` (`max` or `sum`
 * of the series with a value). A point whose field is absent or `null` has no value; one whose
 * field is not a finite number marks the timestamp invalid.
 */
function seriesValues(
  metric: MetricLike | undefined,
  aggregation: AggregationField,
  across: AcrossSeries,
  keep: (metadata: readonly { name?: string; value?: string }[]) => boolean = () => true,
): MetricColumn {
  const out: MetricColumn = { values: new Map(), invalid: new Set(), times: new Set() };
  if (!usable(metric)) return out;
  for (const series of metric.timeseries) {
    if (!keep(series.metadatavalues ?? [])) continue;
    for (const point of series.data ?? []) {
      const t = point.timeStamp.getTime();
      if (!Number.isFinite(t)) continue;
      out.times.add(t);
      const raw: unknown = point[aggregation];
      if (raw === undefined || raw === null) continue;
      const v = finite(raw as number);
      if (v === null) {
        out.invalid.add(t);
        continue;
      }
      const prev = out.values.get(t);
      out.values.set(t, prev === undefined ? v : across === "max" ? Math.max(prev, v) : prev + v);
    }
  }
  return out;
}

function span(ms: number): string {
  if (ms % 60_000 !== 0) return `${ms / 1000} seconds`;
  const minutes = ms / 60_000;
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}

/**
 * The grain of an answer, seconds, from its interval and the distinct timestamps of its data
 * points:
 * - with an interval: it must be whole minutes, the timestamps at most that far apart at the
 *   closest, and every gap a multiple of it (buckets may be missing);
 * - without: the timestamps must be evenly spaced, whole minutes apart, and the spacing is the
 *   grain — a body whose gaps differ cannot say which of them is one bucket;
 * - a single timestamp and no interval: one minute, assumed.
 * @throws MetricGrainError otherwise, with one line saying why.
 */
export function answerGrain(
  granularity: string | undefined,
  timestamps: Iterable<number>,
): { seconds: number; from: MetricsAnswer["grainFrom"] } {
  const times = [...new Set(timestamps)].sort((a, b) => a - b);
  const gaps = [...new Set(times.slice(1).map((t, i) => t - (times[i] as number)))].sort((a, b) => a - b);
  const step = gaps[0];
  if (granularity !== undefined) {
    const stated = timeGrainSeconds(granularity);
    if (stated === undefined) {
      throw new MetricGrainError(`interval "${granularity}" is not an ISO 8601 time grain such as PT1M`);
    }
    if (stated % 60 !== 0) {
      throw new MetricGrainError(`interval ${granularity} is not a whole number of minutes`);
    }
    if (step !== undefined && (step !== stated * 1000 || gaps.some((g) => g % step !== 0))) {
      throw new MetricGrainError(
        `interval ${granularity} but the timestamps are ${gaps.map(span).join(", ")} apart`,
      );
    }
    return { seconds: stated, from: "interval" };
  }
  if (step === undefined) return { seconds: 60, from: "assumed" };
  if (gaps.length > 1) {
    throw new MetricGrainError(
      `timestamps are irregular (gaps of ${gaps.map(span).join(", ")}) and no interval says which is one bucket`,
    );
  }
  if (step % 60_000 !== 0) {
    throw new MetricGrainError(`timestamps are ${span(step)} apart: not a whole number of minutes`);
  }
  return { seconds: step / 1000, from: "timestamps" };
}

/**
 * Reads one resource's answer (see the module comment for every rule). Pure.
 * @throws MetricGrainError when the answer's grain cannot be read (see {@link answerGrain}).
 */
export function readMetricsAnswer(
  service: ServiceKind,
  resourceId: string,
  result: MetricsResultLike,
): MetricsAnswer {
  const absent: string[] = [];
  const failed: MetricsAnswer["failed"] = [];
  const columns = METRIC_DEFINITIONS[service].map((def) => {
    const metric = findMetric(result.metrics, def);
    const errorCode = String(metric?.errorCode);
    const answered = usable(metric);
    if (!metric) absent.push(def.name);
    else if (!answered) failed.push({ metric: def.name, errorCode });
    return { def, answered, column: seriesValues(metric, def.aggregation, def.acrossSeries) };
  });
  const times = new Set(columns.flatMap((c) => [...c.column.times]));
  const grain = answerGrain(result.granularity, times);
  const samples = [...times]
    .sort((a, b) => a - b)
    .map((t) => {
      const sample: MetricSample = { ...emptySample(new Date(t)), resourceId };
      for (const { def, column } of columns) {
        const v = column.invalid.has(t) ? undefined : column.values.get(t);
        sample[def.field] = v === undefined ? null : def.kind === "counter" ? v / grain.seconds : v;
      }
      const gaugeKnown = columns.some(({ def }) => def.kind === "gauge" && measured(sample[def.field]));
      const idle = gaugeKnown
        ? columns.filter(
            ({ def, answered, column }) =>
              def.kind === "counter" && answered && !column.values.has(t) && !column.invalid.has(t),
          )
        : [];
      for (const { def } of idle) sample[def.field] = 0;
      if (idle.length > 0) sample.zeroFilled = idle.map(({ def }) => def.field);
      return sample;
    });
  return { samples, grainSeconds: grain.seconds, grainFrom: grain.from, absent, failed };
}

/**
 * One resource's answers to several queries of one span (the metrics of each aggregation), as one
 * answer: their metrics side by side. Answers to queries that failed are left out by the caller;
 * their metrics are then absent (unknown).
 * @throws MetricGrainError when the answers state different intervals.
 */
export function combineAnswers(parts: readonly MetricsResultLike[]): MetricsResultLike {
  const grains = [...new Set(parts.flatMap((p) => (p.granularity === undefined ? [] : [p.granularity])))];
  if (grains.length > 1) {
    throw new MetricGrainError(`the answers of one span state different intervals: ${grains.join(", ")}`);
  }
  const resourceId = parts.find((p) => p.resourceId !== undefined)?.resourceId;
  return {
    ...(resourceId !== undefined ? { resourceId } : {}),
    ...(grains[0] !== undefined ? { granularity: grains[0] } : {}),
    metrics: parts.flatMap((p) => p.metrics),
  };
}

function endpointIs(value: string) {
  return (metadata: readonly { name?: string; value?: string }[]) =>
    metadata.some((m) => m.name?.toLowerCase() === "endpoint" && m.value?.toLowerCase() === value);
}

/**
 * Adds `clientConnections` / `serverConnections` from a ConnectionCount result split by `Endpoint`
 * to `samples` (in place; timestamps the samples lack are ignored). Samples without a value get
 * `null`.
 */
export function addEndpointSplit(samples: MetricSample[], split: MetricsResultLike | undefined): void {
  const def = METRIC_DEFINITIONS.SignalR.find((d) => d.name === ENDPOINT_SPLIT.metric) as MetricDefinition;
  const metric = split ? findMetric(split.metrics, def) : undefined;
  const client = seriesValues(metric, def.aggregation, def.acrossSeries, endpointIs("client"));
  const server = seriesValues(metric, def.aggregation, def.acrossSeries, endpointIs("server"));
  const at = (c: MetricColumn, t: number) => (c.invalid.has(t) ? null : (c.values.get(t) ?? null));
  for (const s of samples) {
    const t = s.time.getTime();
    s.clientConnections = at(client, t);
    s.serverConnections = at(server, t);
  }
}

/**
 * Matches results to the requested resource IDs (Azure may change the case of an ID, and returns
 * results in request order). A requested resource without a result is absent from the map.
 */
export function resultsByResource<T extends MetricsResultLike>(
  requested: readonly string[],
  results: readonly T[],
): Map<string, T> {
  const wanted = new Map(requested.map((id) => [resourceKey(id), id]));
  const out = new Map<string, T>();
  results.forEach((r, i) => {
    const id = r.resourceId !== undefined ? wanted.get(resourceKey(r.resourceId)) : requested[i];
    if (id !== undefined && !out.has(id)) out.set(id, r);
  });
  return out;
}
