/**
 * Which Azure Monitor platform metrics are read per service, with which aggregation, and how each
 * becomes a field of a {@link MetricSample}. Pure data.
 *
 * Source: "Supported metrics for Microsoft.SignalRService/SignalR" and ".../WebPubSub" (Azure
 * Monitor reference). All at PT1M grain.
 *
 * | sample field                        | SignalR                      | Web PubSub                   | aggregation | unit → field unit      |
 * |-------------------------------------|------------------------------|------------------------------|-------------|------------------------|
 * | `serverLoadPercent`                 | ServerLoad                   | ServerLoad                   | Maximum     | %                      |
 * | `connectionQuotaUtilizationPercent` | ConnectionQuotaUtilization   | ConnectionQuotaUtilization   | Maximum     | %                      |
 * | `connections`                       | ConnectionCount (Endpoint)   | TotalConnectionCount         | Maximum     | count                  |
 * | `messagesPerSecond`                 | MessageCount                 | — (no such metric)           | Total       | per minute → per second |
 * | `inboundBytesPerSecond`             | InboundTraffic               | InboundTraffic               | Total       | bytes/min → bytes/s    |
 * | `outboundBytesPerSecond`            | OutboundTraffic              | OutboundTraffic              | Total       | bytes/min → bytes/s    |
 *
 * Why Maximum for the gauges: a minute's average hides the peaks that raise latency, and the
 * decision already aggregates over its own window; the services' docs recommend Max (or Avg) for
 * these metrics. ConnectionCount unsplit is the total over its `Endpoint` dimension (client and
 * server connections), which is what the unit quota counts; the split by `Endpoint` needs its own
 * request, because Azure rejects a dimension filter that one of the requested metrics lacks
 * ("Metric: X does not support requested dimension combination").
 */
import type { ServiceKind } from "../capacity/index.js";
import { RESOURCE_TYPES } from "./resource-id.js";

export type SampleField =
  | "serverLoadPercent"
  | "connectionQuotaUtilizationPercent"
  | "connections"
  | "messagesPerSecond"
  | "inboundBytesPerSecond"
  | "outboundBytesPerSecond";

/** Aggregation field of a data point as the REST API names it. */
export type AggregationField = "average" | "minimum" | "maximum" | "total" | "count";

/** One metric read for a sample field. */
export interface MetricDefinition {
  /** Metric name in the REST API. */
  name: string;
  /** Display name Azure returns as `name.localizedValue` (the SDK exposes that one as `metric.name`). */
  displayName: string;
  field: SampleField;
  aggregation: AggregationField;
  /** Factor from the aggregated value to the sample field's unit (1/60 for per-minute totals). */
  scale: number;
}

const PER_MINUTE = 1 / 60;

const SIGNALR: readonly MetricDefinition[] = [
  {
    name: "ServerLoad",
    displayName: "Server Load",
    field: "serverLoadPercent",
    aggregation: "maximum",
    scale: 1,
  },
  {
    name: "ConnectionQuotaUtilization",
    displayName: "Connection Quota Utilization",
    field: "connectionQuotaUtilizationPercent",
    aggregation: "maximum",
    scale: 1,
  },
  {
    name: "ConnectionCount",
    displayName: "Connection Count",
    field: "connections",
    aggregation: "maximum",
    scale: 1,
  },
  {
    name: "MessageCount",
    displayName: "Message Count",
    field: "messagesPerSecond",
    aggregation: "total",
    scale: PER_MINUTE,
  },
  {
    name: "InboundTraffic",
    displayName: "Inbound Traffic",
    field: "inboundBytesPerSecond",
    aggregation: "total",
    scale: PER_MINUTE,
  },
  {
    name: "OutboundTraffic",
    displayName: "Outbound Traffic",
    field: "outboundBytesPerSecond",
    aggregation: "total",
    scale: PER_MINUTE,
  },
];

const WEBPUBSUB: readonly MetricDefinition[] = [
  {
    name: "ServerLoad",
    displayName: "Server Load",
    field: "serverLoadPercent",
    aggregation: "maximum",
    scale: 1,
  },
  {
    name: "ConnectionQuotaUtilization",
    displayName: "Connection Quota Utilization",
    field: "connectionQuotaUtilizationPercent",
    aggregation: "maximum",
    scale: 1,
  },
  {
    name: "TotalConnectionCount",
    displayName: "Connection Count",
    field: "connections",
    aggregation: "maximum",
    scale: 1,
  },
  {
    name: "InboundTraffic",
    displayName: "Inbound Traffic",
    field: "inboundBytesPerSecond",
    aggregation: "total",
    scale: PER_MINUTE,
  },
  {
    name: "OutboundTraffic",
    displayName: "Outbound Traffic",
    field: "outboundBytesPerSecond",
    aggregation: "total",
    scale: PER_MINUTE,
  },
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

/** The metric namespace of a service (its ARM resource type). */
export function metricNamespace(service: ServiceKind): string {
  return RESOURCE_TYPES[service];
}

/** The `aggregation` query value covering every metric of a service, e.g. `Maximum,Total`. */
export function aggregationParameter(service: ServiceKind): string {
  const names = [...new Set(METRIC_DEFINITIONS[service].map((d) => d.aggregation))];
  return names.map((n) => n[0]?.toUpperCase() + n.slice(1)).join(",");
}
