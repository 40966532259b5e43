/**
 * Which Azure Monitor platform metrics are read per service, with which aggregation, which
 * aggregations Azure Monitor supports for each, and how each becomes a field of a
 * {@link MetricSample}. Pure data.
 *
 * Sources — for names, units, supported aggregations, dimensions and the PT1M grain:
 * - SignalR: "Azure SignalR Service monitoring data reference" ("Supported metrics for
 *   Microsoft.SignalRService/SignalR"), https://learn.microsoft.com/azure/azure-signalr/monitor-signalr-reference,
 *   with the same rows in "Supported metrics for Microsoft.SignalRService/SignalR/replicas",
 *   https://learn.microsoft.com/azure/azure-monitor/reference/supported-metrics/microsoft-signalrservice-signalr-replicas-metrics
 *   (ConnectionCount: Maximum, dimension `Endpoint`; ServerLoad and ConnectionQuotaUtilization:
 *   Minimum, Maximum, Average; MessageCount, InboundTraffic, OutboundTraffic: Total), and "Metrics
 *   in Azure SignalR Service" (recommended aggregation: Max or Avg for Connection Count,
 *   Connection Quota Utilization and Server Load, Sum for Message Count and the traffic; dimension
 *   `Endpoint` on Connection Count only), https://learn.microsoft.com/azure/azure-signalr/concept-metrics;
 * - Web PubSub: "Supported metrics for Microsoft.SignalRService/WebPubSub",
 *   https://learn.microsoft.com/azure/azure-monitor/reference/supported-metrics/microsoft-signalrservice-webpubsub-metrics,
 *   and its `/replicas` page (TotalConnectionCount: Maximum, Average; ServerLoad and
 *   ConnectionQuotaUtilization: Minimum, Maximum, Average; InboundTraffic, OutboundTraffic:
 *   Total), and "Metrics in Azure Web PubSub Service" (the same recommendations; no dimension on
 *   any metric read here), https://learn.microsoft.com/azure/azure-web-pubsub/concept-metrics.
 *
 * | sample field                        | SignalR                      | Web PubSub                   | kind    | read as | supported (reference)      | across series | unit → field unit       |
 * |-------------------------------------|------------------------------|------------------------------|---------|---------|----------------------------|---------------|-------------------------|
 * | `serverLoadPercent`                 | ServerLoad                   | ServerLoad                   | gauge   | Maximum | Minimum, Maximum, Average  | max           | %                       |
 * | `connectionQuotaUtilizationPercent` | ConnectionQuotaUtilization   | ConnectionQuotaUtilization   | gauge   | Maximum | Minimum, Maximum, Average  | max           | %                       |
 * | `connections`                       | ConnectionCount (Endpoint)   | TotalConnectionCount         | gauge   | Maximum | SignalR: Maximum; Web PubSub: Maximum, Average | sum | count           |
 * | `messagesPerSecond`                 | MessageCount                 | — (no such metric)           | counter | Total   | Total                      | sum           | per bucket → per second |
 * | `inboundBytesPerSecond`             | InboundTraffic               | InboundTraffic               | counter | Total   | Total                      | sum           | bytes/bucket → bytes/s  |
 * | `outboundBytesPerSecond`            | OutboundTraffic              | OutboundTraffic              | counter | Total   | Total                      | sum           | bytes/bucket → bytes/s  |
 *
 * No aggregation is supported by every metric of a service, so one getBatch query cannot carry
 * them all: Azure Monitor may refuse a query that asks a metric for an aggregation it does not
 * support (reported as 400, 501 "Sampling type is not found", or an `InternalError` per metric).
 * Each metric is therefore asked only for the aggregation it is read as, and metrics read as the
 * same aggregation share a query (`query-plan.ts`).
 *
 * Why Maximum for the gauges: a minute's average hides the peaks that raise latency, and the
 * decision already aggregates over its own window; the services' docs recommend Max (or Avg) for
 * these metrics. ConnectionCount unsplit is the total over its `Endpoint` dimension (client and
 * server connections), which is what the unit quota counts; the split by `Endpoint` needs its own
 * request, because Azure rejects a dimension filter that one of the requested metrics lacks
 * ("Metric: X does not support requested dimension combination").
 *
 * Across series (an answer that splits a metric into several time series, by a dimension): the
 * documented dimensions are `Endpoint` on SignalR's ConnectionCount and none on the others, but a
 * body may carry any split. A percentage of the whole instance does not add up — two series at
 * 60 % are an instance at 60 %, so the percentages take the highest series. Connections of
 * disjoint dimension values (client, server) and counted messages and bytes add up, so they are
 * summed.
 *
 * Counters (`Total` per bucket) have no value in a bucket in which nothing was counted: the
 * official getBatch example writes such a bucket as a point with only `timeStamp`. A counter
 * answered without error with no value for a bucket, while a gauge has a value there, counted
 * nothing (see `readMetricsAnswer` in metric-samples.ts).
 */
import type { SampleField } from "../autoscale/samples.js";
import type { ServiceKind } from "../capacity/index.js";
import { RESOURCE_TYPES, type ResourceType } from "./resource-id.js";

/** Aggregation field of a data point as the REST API names it. */
export type AggregationField = "average" | "minimum" | "maximum" | "total" | "count";

/**
 * An aggregation type as the `aggregation` query parameter and the metric reference name it
 * ("Valid values: Average, Minimum, Maximum, Total, Count").
 */
export type AggregationType = "Average" | "Minimum" | "Maximum" | "Total" | "Count";

/** The aggregation type of a data point field: `maximum` → `Maximum`. */
export function aggregationType(field: AggregationField): AggregationType {
  return (field[0]?.toUpperCase() + field.slice(1)) as AggregationType;
}

/** How the time series of one metric (a dimension split) combine into one value per bucket. */
export type AcrossSeries = "max" | "sum";

/**
 * `gauge`: a level measured in the bucket (its Maximum); `counter`: what was counted during the
 * bucket (its Total), turned into a rate per second over the bucket.
 */
export type MetricKind = "gauge" | "counter";

/** One metric read for a sample field. */
export interface MetricDefinition {
  /** Metric name in the REST API. */
  name: string;
  /** Display name Azure returns as `name.localizedValue` (the SDK exposes that one as `metric.name`). */
  displayName: string;
  field: SampleField;
  /** The data point field read (the aggregation asked for). */
  aggregation: AggregationField;
  /** The aggregations Azure Monitor supports for this metric, from the metric reference (module comment). */
  supportedAggregations: readonly AggregationType[];
  kind: MetricKind;
  /** How several series of the metric in one answer combine per bucket (see the module comment). */
  acrossSeries: AcrossSeries;
}

/** Minimum, Maximum, Average: what the reference lists for the percentages. */
const MIN_MAX_AVG: readonly AggregationType[] = ["Minimum", "Maximum", "Average"];

/** A gauge: its Maximum per bucket; percentages take the highest series, counts their sum. */
function gauge(
  name: string,
  displayName: string,
  field: SampleField,
  acrossSeries: AcrossSeries,
  supportedAggregations: readonly AggregationType[],
): MetricDefinition {
  return {
    name,
    displayName,
    field,
    aggregation: "maximum",
    supportedAggregations,
    kind: "gauge",
    acrossSeries,
  };
}

/** A counter: its Total per bucket, summed across series; the reference lists Total only. */
function counter(name: string, displayName: string, field: SampleField): MetricDefinition {
  return {
    name,
    displayName,
    field,
    aggregation: "total",
    supportedAggregations: ["Total"],
    kind: "counter",
    acrossSeries: "sum",
  };
}

const serverLoad = gauge("ServerLoad", "Server Load", "serverLoadPercent", "max", MIN_MAX_AVG);
const quota = gauge(
  "ConnectionQuotaUtilization",
  "Connection Quota Utilization",
  "connectionQuotaUtilizationPercent",
  "max",
  MIN_MAX_AVG,
);
const inbound = counter("InboundTraffic", "Inbound Traffic", "inboundBytesPerSecond");
const outbound = counter("OutboundTraffic", "Outbound Traffic", "outboundBytesPerSecond");

const SIGNALR: readonly MetricDefinition[] = [
  serverLoad,
  quota,
  gauge("ConnectionCount", "Connection Count", "connections", "sum", ["Maximum"]),
  counter("MessageCount", "Message Count", "messagesPerSecond"),
  inbound,
  outbound,
];

const WEBPUBSUB: readonly MetricDefinition[] = [
  serverLoad,
  quota,
  gauge("TotalConnectionCount", "Connection Count", "connections", "sum", ["Maximum", "Average"]),
  inbound,
  outbound,
];

/** The metrics read per service. */
export const METRIC_DEFINITIONS: Readonly<Record<ServiceKind, readonly MetricDefinition[]>> = {
  SignalR: SIGNALR,
  WebPubSub: WEBPUBSUB,
};

/** The SignalR metric split by its `Endpoint` dimension (values `client` and `server`). */
export const ENDPOINT_SPLIT = {
  metric: "ConnectionCount",
  dimension: "Endpoint",
  filter: "Endpoint eq '*'",
} as const;

/** Grain of every query. */
export const METRIC_GRAIN = "PT1M";

const ISO_DURATION =
  /^P(?=[0-9]|T[0-9])(?:([0-9]+)D)?(?:T(?=[0-9])(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+)S)?)?$/i;

/**
 * Seconds in an ISO 8601 time grain as Azure Monitor writes it (`PT1M`, `PT5M`, `PT1H`, `P1D`);
 * `undefined` for anything else (years, months, weeks, fractions, zero).
 */
export function timeGrainSeconds(text: string): number | undefined {
  const m = ISO_DURATION.exec(text.trim());
  if (!m) return undefined;
  const [d, h, min, sec] = [m[1], m[2], m[3], m[4]].map((x) => Number(x ?? 0)) as [
    number,
    number,
    number,
    number,
  ];
  const seconds = ((d * 24 + h) * 60 + min) * 60 + sec;
  return seconds > 0 ? seconds : undefined;
}

/**
 * The metric namespace of a service's instances, or of a resource type: its ARM resource type
 * (`Microsoft.SignalRService/SignalR`; a replica's is `Microsoft.SignalRService/SignalR/replicas`,
 * "Supported metrics for Microsoft.SignalRService/SignalR/replicas", with the same metrics as the
 * instance's, so {@link METRIC_DEFINITIONS} serve both).
 */
export function metricNamespace(of: ServiceKind | ResourceType): string {
  return of === "SignalR" || of === "WebPubSub" ? RESOURCE_TYPES[of] : of;
}
