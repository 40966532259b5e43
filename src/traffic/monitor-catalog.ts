/**
 * The platform metrics of each resource type, as Azure Monitor publishes them ("Supported metrics
 * for Microsoft.SignalRService/SignalR" and ".../WebPubSub"), and how each follows from a
 * {@link TrafficMinute}: what the emulator serves and what `simulate` feeds the strategies. Pure.
 *
 * Per minute: gauges (load, utilization, connection counts) have average = the minute's value,
 * minimum/maximum spread around it by a little within-minute noise; totals (messages, bytes) have
 * total = rate × 60 s. (Coarser grains are the emulator's: `emulator/monitor.ts`.)
 *
 * Each metric lists the aggregations the reference gives it (`aggregations`): ServerLoad and
 * ConnectionQuotaUtilization Minimum, Maximum, Average; SignalR's ConnectionCount Maximum; Web
 * PubSub's TotalConnectionCount Maximum, Average; MessageCount, InboundTraffic and
 * OutboundTraffic Total ("Supported metrics for Microsoft.SignalRService/SignalR" and
 * ".../WebPubSub", learn.microsoft.com/azure/azure-monitor/reference/supported-metrics/, and their
 * `/replicas` pages). The emulator refuses a query that asks a metric for any other.
 */
import type { ServiceKind } from "../capacity/index.js";
import type { TrafficMinute } from "./traffic.js";

export type AggregationName = "average" | "minimum" | "maximum" | "total" | "count";
export const AGGREGATIONS: readonly AggregationName[] = ["average", "minimum", "maximum", "total", "count"];

/** One data point's aggregations; a missing field means "no value". */
export type Aggregates = Partial<Record<AggregationName, number>>;

export interface EmulatedMetric {
  name: string;
  displayName: string;
  description: string;
  unit: "Percent" | "Count" | "Bytes";
  /** Dimensions the metric can be split or filtered by. */
  dimensions: readonly string[];
  /** The aggregation returned when the request names none. */
  primary: AggregationName;
  /** The aggregations Azure Monitor supports for the metric (the module comment's sources). */
  aggregations: readonly AggregationName[];
  kind: "gauge" | "total";
  /** Whether values are percentages (capped at 100). */
  percent: boolean;
  /** Largest within-minute swing of a gauge around its value, as a fraction (min/max). */
  swing: number;
  /** The minute's value (a rate per second for totals), for one dimension value or unsplit. */
  value(m: TrafficMinute, dimensionValue?: string): number;
  /** Values of its dimension when split. */
  dimensionValues?: readonly string[];
}

/** What the reference lists for the percentages. */
const MIN_MAX_AVG: readonly AggregationName[] = ["minimum", "maximum", "average"];

/**
 * A metric without dimensions: a gauge is read as its Maximum and swings by up to `swing` within
 * the minute; a total counts a rate per second over the minute and is read as its Total.
 */
function metric(
  kind: EmulatedMetric["kind"],
  name: string,
  displayName: string,
  description: string,
  unit: EmulatedMetric["unit"],
  value: EmulatedMetric["value"],
  swing = 0,
  aggregations: readonly AggregationName[] = kind === "gauge" ? MIN_MAX_AVG : ["total"],
): EmulatedMetric {
  const primary = kind === "gauge" ? "maximum" : "total";
  return {
    name,
    displayName,
    description,
    unit,
    dimensions: [],
    primary,
    aggregations,
    kind,
    percent: unit === "Percent",
    swing,
    value,
  };
}

const serverLoad = (description: string) =>
  metric("gauge", "ServerLoad", "Server Load", description, "Percent", (m) => m.serverLoadPercent, 0.1);

const quota = metric(
  "gauge",
  "ConnectionQuotaUtilization",
  "Connection Quota Utilization",
  "The percentage of connections relative to the connection quota.",
  "Percent",
  (m) => m.connectionQuotaUtilizationPercent,
  0.02,
);

const inbound = metric(
  "total",
  "InboundTraffic",
  "Inbound Traffic",
  "The inbound traffic of the service, in bytes.",
  "Bytes",
  (m) => m.inboundBytesPerSecond,
);

const outbound = metric(
  "total",
  "OutboundTraffic",
  "Outbound Traffic",
  "The outbound traffic of the service, in bytes.",
  "Bytes",
  (m) => m.outboundBytesPerSecond,
);

const SIGNALR: readonly EmulatedMetric[] = [
  serverLoad("The percentage of server load."),
  quota,
  {
    ...metric(
      "gauge",
      "ConnectionCount",
      "Connection Count",
      "The amount of user connection.",
      "Count",
      (m, endpoint) =>
        endpoint === "client"
          ? m.clientConnections
          : endpoint === "server"
            ? m.serverConnections
            : m.clientConnections + m.serverConnections,
      0.02,
      ["maximum"],
    ),
    dimensions: ["Endpoint"],
    dimensionValues: ["client", "server"],
  },
  metric(
    "total",
    "MessageCount",
    "Message Count",
    "The total amount of messages.",
    "Count",
    (m) => m.messageCountPerSecond,
  ),
  inbound,
  outbound,
];

const WEBPUBSUB: readonly EmulatedMetric[] = [
  serverLoad("WebPubSub server load."),
  quota,
  metric(
    "gauge",
    "TotalConnectionCount",
    "Connection Count",
    "The number of user connections established to the service.",
    "Count",
    (m) => m.clientConnections + m.serverConnections,
    0.02,
    ["maximum", "average"],
  ),
  inbound,
  outbound,
];

/** Metrics per service. */
export const EMULATED_METRICS: Readonly<Record<ServiceKind, readonly EmulatedMetric[]>> = {
  SignalR: SIGNALR,
  WebPubSub: WEBPUBSUB,
};

/** The metric of a service by REST name (case-insensitive). */
export function findEmulatedMetric(service: ServiceKind, name: string): EmulatedMetric | undefined {
  const n = name.toLowerCase();
  return EMULATED_METRICS[service].find((m) => m.name.toLowerCase() === n);
}

/**
 * One minute's aggregates of a metric. `spread` in [−1, 1] widens minimum/maximum of gauges
 * (by up to the metric's `swing` of the value); `fraction` in (0, 1] is how much of the minute is ingested
 * (partial buckets: totals and counts scale down).
 */
export function minuteAggregates(
  metric: EmulatedMetric,
  m: TrafficMinute,
  spread: number,
  fraction: number,
  dimensionValue?: string,
): Required<Aggregates> {
  const v = metric.value(m, dimensionValue);
  if (metric.kind === "total") {
    const total = v * 60 * fraction;
    return { average: total, minimum: total, maximum: total, total, count: 1 };
  }
  const width = Math.abs(spread) * metric.swing * v;
  const cap = (x: number) => (metric.percent ? Math.min(100, x) : x);
  const round = (x: number) => (metric.unit === "Count" ? Math.round(x) : x);
  const average = round(v);
  return {
    average,
    minimum: round(Math.max(0, v - width)),
    maximum: round(cap(v + width)),
    total: round(v) * Math.max(1, Math.round(60 * fraction)),
    count: Math.max(1, Math.round(60 * fraction)),
  };
}
