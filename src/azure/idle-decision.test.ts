/**
 * The decision on a quiet instance, from Azure Monitor answers as Azure writes them: the gauges'
 * query (Maximum) and the counters' query (Total) of one span, the counters' empty buckets as
 * points with only a timestamp (the official getBatch example's layout), read by the adapter and
 * decided on. An idle counter beside known gauges is 0 and the instance scales in, exactly as
 * with `total: 0`; with the gauges unknown, the counters stay unknown and nothing scales in.
 */
import { describe, expect, it } from "vitest";
import { decide } from "../autoscale/decide.js";
import { input, NOW, spec } from "../autoscale/testing.js";
import {
  combineAnswers,
  type DataPointLike,
  type MetricsResultLike,
  readMetricsAnswer,
} from "./metric-samples.js";

const RID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/quiet";
const MINUTE = 60_000;
/** The 15 minutes before now (11:45–11:59), as a one-minute poll reads them. */
const TIMES = Array.from({ length: 15 }, (_, i) => new Date(NOW - (15 - i) * MINUTE));

function metric(name: string, point: (t: Date) => DataPointLike) {
  return {
    id: `${RID}/providers/Microsoft.Insights/metrics/${name}`,
    name,
    errorCode: "Success",
    timeseries: [{ metadatavalues: [], data: TIMES.map(point) }],
  };
}

/** The gauges' answer: known until the ingestion delay, then points with only a timestamp. */
function gauges(known: boolean): MetricsResultLike {
  const ingested = (t: Date) => known && t.getTime() < NOW - 3 * MINUTE;
  return {
    resourceId: RID,
    granularity: "PT1M",
    metrics: [
      metric("ServerLoad", (t) => (ingested(t) ? { timeStamp: t, maximum: 2 } : { timeStamp: t })),
      metric("ConnectionQuotaUtilization", (t) =>
        ingested(t) ? { timeStamp: t, maximum: 0 } : { timeStamp: t },
      ),
      metric("ConnectionCount", (t) => (ingested(t) ? { timeStamp: t, maximum: 30 } : { timeStamp: t })),
    ],
  };
}

/** The counters' answer of a quiet instance: every bucket without a value, or `total: 0`. */
function counters(layout: "timestampOnly" | "zero" | "null"): MetricsResultLike {
  const point = (t: Date): DataPointLike =>
    layout === "timestampOnly"
      ? { timeStamp: t }
      : { timeStamp: t, total: layout === "zero" ? 0 : (null as unknown as number) };
  return {
    resourceId: RID,
    granularity: "PT1M",
    metrics: ["MessageCount", "InboundTraffic", "OutboundTraffic"].map((name) => metric(name, point)),
  };
}

const trafficSpec = spec({
  metrics: {
    connections: { targetPercent: 80 },
    traffic: { workload: [{ scenario: "echo", share: 1 }], messageSizeBytes: 2048, targetPercent: 80 },
  },
});

function decideOn(parts: MetricsResultLike[]) {
  const { samples } = readMetricsAnswer("SignalR", RID, combineAnswers(parts));
  return decide(input({ spec: trafficSpec, samples }));
}

describe("a quiet instance answered as Azure writes empty buckets", () => {
  it.each(["timestampOnly", "null"] as const)(
    "counters as %s points beside known gauges: 0, said so, and it scales in as with total: 0",
    (layout) => {
      const d = decideOn([gauges(true), counters(layout)]);
      const withZero = decideOn([gauges(true), counters("zero")]);
      expect(d.signals.find((s) => s.signal === "traffic")).toMatchObject({ status: "Ok", value: 0 });
      expect(d.reasons.find((r) => r.code === "CounterIdleZero")?.message).toBe(
        "MessageCount, InboundTraffic, OutboundTraffic at 11:52–11:56 UTC: answered with no data while server load or connections were reported — read as 0 (idle), not unknown",
      );
      expect(d.scaleIn).toEqual({ allowed: true, blockedBy: [] });
      expect(d.action).toBe("Scale");
      expect(d.desired).toEqual({ sku: "Premium_P1", units: 1 });
      expect(withZero.desired).toEqual(d.desired);
      expect(withZero.reasons.some((r) => r.code === "CounterIdleZero")).toBe(false);
    },
  );

  it("the same counters with the gauges unknown stay unknown: no scale-in", () => {
    const d = decideOn([gauges(false), counters("timestampOnly")]);
    expect(d.signals.map((s) => [s.signal, s.status])).toEqual([
      ["serverLoad", "Unknown"],
      ["connections", "Unknown"],
      ["traffic", "Unknown"],
    ]);
    expect(d.reasons.some((r) => r.code === "CounterIdleZero")).toBe(false);
    expect(d.desired?.units).toBe(10);
    expect(d.action).toBe("None");
  });

  it("the gauges' query failed: the counters of its buckets stay unknown, never 0", () => {
    const d = decideOn([counters("timestampOnly")]);
    expect(d.signals.find((s) => s.signal === "traffic")?.status).toBe("Unknown");
    expect(d.desired?.units).toBe(10);
  });

  it("the counters' query failed: traffic unknown beside known gauges, no scale-in, said why", () => {
    const { samples } = readMetricsAnswer("SignalR", RID, combineAnswers([gauges(true)]));
    const d = decide(
      input({
        spec: trafficSpec,
        samples,
        partialFailures: [
          {
            kind: "Network",
            message: "metrics.queryResources: service error (503 ServiceUnavailable)",
            fields: ["messagesPerSecond", "inboundBytesPerSecond", "outboundBytesPerSecond"],
          },
        ],
      }),
    );
    expect(d.signals.find((s) => s.signal === "traffic")?.status).toBe("Unknown");
    expect(d.scaleIn.blockedBy).toContain("MetricsIncomplete");
    expect(d.desired?.units).toBe(10);
    expect(d.reasons.find((r) => r.code === "MetricsPartial")?.message).toBe(
      "messagesPerSecond, inboundBytesPerSecond, outboundBytesPerSecond unknown this pass, not zero: their query failed (Network): metrics.queryResources: service error (503 ServiceUnavailable)",
    );
  });
});
