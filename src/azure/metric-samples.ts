/**
 * Metric query results → one typed sample per resource and minute. Pure.
 *
 * - A value Azure did not return (field absent, `null`, NaN, the metric missing or with an error
 *   code, an empty `timeseries`) stays `null`: missing is not zero.
 * - Several time series of one metric (a dimension split) are added up per timestamp; the sum is
 *   `null` only when every series is.
 * - Metrics are recognised by the last segment of their `id` (`…/metrics/ServerLoad`), else by
 *   name or display name — the SDK returns the localized display name as `metric.name`.
 */
import type { ServiceKind } from "../capacity/index.js";
import {
  type AggregationField,
  METRIC_DEFINITIONS,
  type MetricDefinition,
  type SampleField,
} from "./metric-definitions.js";
import { resourceKey } from "./resource-id.js";

/** One minute of one instance's metrics. Units: %, connections, messages/s, bytes/s. */
export interface MetricSample {
  resourceId: string;
  /** Start of the one-minute bucket. */
  time: Date;
  serverLoadPercent: number | null;
  connectionQuotaUtilizationPercent: number | null;
  /** Concurrent connections, client and server (what the unit quota counts). */
  connections: number | null;
  /** Messages/s (SignalR `MessageCount`); always `null` for Web PubSub, which has no such metric. */
  messagesPerSecond: number | null;
  inboundBytesPerSecond: number | null;
  outboundBytesPerSecond: number | null;
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
  metrics: readonly MetricLike[];
}

function finite(v: number | null | undefined): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function metricNameOf(metric: MetricLike): string {
  const last = metric.id.split("/").pop();
  return last && last !== "" ? last : metric.name;
}

/** Finds the metric of `def` in `metrics`. */
export function findMetric(metrics: readonly MetricLike[], def: MetricDefinition): MetricLike | undefined {
  const wanted = def.name.toLowerCase();
  return (
    metrics.find((m) => metricNameOf(m).toLowerCase() === wanted) ??
    metrics.find(
      (m) => m.name.toLowerCase() === wanted || m.name.toLowerCase() === def.displayName.toLowerCase(),
    )
  );
}

function usable(metric: MetricLike | undefined): metric is MetricLike {
  return metric !== undefined && (metric.errorCode === undefined || metric.errorCode === "Success");
}

/** Per timestamp (ms), the sum of `aggregation` over the series, `null` when no series has a value. */
export function seriesValues(
  metric: MetricLike | undefined,
  aggregation: AggregationField,
  keep: (metadata: readonly { name?: string; value?: string }[]) => boolean = () => true,
): Map<number, number | null> {
  const out = new Map<number, number | null>();
  if (!usable(metric)) return out;
  for (const series of metric.timeseries) {
    if (!keep(series.metadatavalues ?? [])) continue;
    for (const point of series.data ?? []) {
      const t = point.timeStamp.getTime();
      if (!Number.isFinite(t)) continue;
      const v = finite(point[aggregation]);
      const prev = out.get(t);
      out.set(t, v === null ? (prev ?? null) : (prev ?? 0) + v);
    }
  }
  return out;
}

function emptySample(resourceId: string, t: number): MetricSample {
  return {
    resourceId,
    time: new Date(t),
    serverLoadPercent: null,
    connectionQuotaUtilizationPercent: null,
    connections: null,
    messagesPerSecond: null,
    inboundBytesPerSecond: null,
    outboundBytesPerSecond: null,
  };
}

/** Samples of one resource, sorted by time, one per timestamp any metric returned. */
export function samplesOf(
  service: ServiceKind,
  resourceId: string,
  result: MetricsResultLike,
): MetricSample[] {
  const byTime = new Map<number, MetricSample>();
  for (const def of METRIC_DEFINITIONS[service]) {
    const values = seriesValues(findMetric(result.metrics, def), def.aggregation);
    for (const [t, v] of values) {
      const sample = byTime.get(t) ?? emptySample(resourceId, t);
      const field: SampleField = def.field;
      sample[field] = v === null ? null : v * def.scale;
      byTime.set(t, sample);
    }
  }
  return [...byTime.values()].sort((a, b) => a.time.getTime() - b.time.getTime());
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
  const def = METRIC_DEFINITIONS.SignalR.find((d) => d.name === "ConnectionCount");
  const metric = split && def ? findMetric(split.metrics, def) : undefined;
  const client = seriesValues(metric, "maximum", endpointIs("client"));
  const server = seriesValues(metric, "maximum", endpointIs("server"));
  for (const s of samples) {
    const t = s.time.getTime();
    s.clientConnections = client.get(t) ?? null;
    s.serverConnections = server.get(t) ?? null;
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
