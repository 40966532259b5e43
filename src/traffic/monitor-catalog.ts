/**
 * The platform metrics of each resource type, as Azure Monitor publishes them ("Supported metrics
 * for Microsoft.SignalRService/SignalR" and ".../WebPubSub"), and how each follows from a
 * {@link TrafficMinute}: what the emulator serves and what `simulate` feeds the strategies. Pure.
 *
 * Per minute: gauges (load, utilization, connection counts) have average = the minute's value,
 * minimum/maximum spread around it by a little within-minute noise; totals (messages, bytes) have
 * total = rate × 60 s. (Coarser grains are the emulator's: `emulator/monitor.ts`.)
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

const serverLoad: EmulatedMetric = {
  name: "ServerLoad",
  displayName: "Server Load",
  description: "The percentage of server load.",
  unit: "Percent",
  dimensions: [],
  primary: "maximum",
  kind: "gauge",
  percent: true,
  swing: 0.1,
  value: (m) => m.serverLoadPercent,
};

const quota: EmulatedMetric = {
  name: "ConnectionQuotaUtilization",
  displayName: "Connection Quota Utilization",
  description: "The percentage of connections relative to the connection quota.",
  unit: "Percent",
  dimensions: [],
  primary: "maximum",
  kind: "gauge",
  percent: true,
  swing: 0.02,
  value: (m) => m.connectionQuotaUtilizationPercent,
};

const inbound: EmulatedMetric = {
  name: "InboundTraffic",
  displayName: "Inbound Traffic",
  description: "The inbound traffic of the service, in bytes.",
  unit: "Bytes",
  dimensions: [],
  primary: "total",
  kind: "total",
  percent: false,
  swing: 0,
  value: (m) => m.inboundBytesPerSecond,
};

const outbound: EmulatedMetric = {
  name: "OutboundTraffic",
  displayName: "Outbound Traffic",
  description: "The outbound traffic of the service, in bytes.",
  unit: "Bytes",
  dimensions: [],
  primary: "total",
  kind: "total",
  percent: false,
  swing: 0,
  value: (m) => m.outboundBytesPerSecond,
};

const SIGNALR: readonly EmulatedMetric[] = [
  serverLoad,
  quota,
  {
    name: "ConnectionCount",
    displayName: "Connection Count",
    description: "The amount of user connection.",
    unit: "Count",
    dimensions: ["Endpoint"],
    dimensionValues: ["client", "server"],
    primary: "maximum",
    kind: "gauge",
    percent: false,
    swing: 0.02,
    value: (m, endpoint) =>
      endpoint === "client"
        ? m.clientConnections
        : endpoint === "server"
          ? m.serverConnections
          : m.clientConnections + m.serverConnections,
  },
  {
    name: "MessageCount",
    displayName: "Message Count",
    description: "The total amount of messages.",
    unit: "Count",
    dimensions: [],
    primary: "total",
    kind: "total",
    percent: false,
    swing: 0,
    value: (m) => m.messageCountPerSecond,
  },
  inbound,
  outbound,
];

const WEBPUBSUB: readonly EmulatedMetric[] = [
  { ...serverLoad, description: "WebPubSub server load." },
  quota,
  {
    name: "TotalConnectionCount",
    displayName: "Connection Count",
    description: "The number of user connections established to the service.",
    unit: "Count",
    dimensions: [],
    primary: "maximum",
    kind: "gauge",
    percent: false,
    swing: 0.02,
    value: (m) => m.clientConnections + m.serverConnections,
  },
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
