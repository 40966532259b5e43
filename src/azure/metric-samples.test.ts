import { describe, expect, it } from "vitest";
import {
  addEndpointSplit,
  type DataPointLike,
  type MetricLike,
  resultsByResource,
  samplesOf,
} from "./metric-samples.js";

const RID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/hub";
const t0 = new Date("2025-03-01T12:00:00Z");
const t1 = new Date("2025-03-01T12:01:00Z");

function metric(name: string, data: readonly DataPointLike[], displayName = name): MetricLike {
  return {
    id: `${RID}/providers/Microsoft.Insights/metrics/${name}`,
    name: displayName,
    errorCode: "Success",
    timeseries: [{ metadatavalues: [], data }],
  };
}

describe("samplesOf", () => {
  it("maps SignalR metrics to a typed sample per minute, converting per-minute totals to per second", () => {
    const samples = samplesOf("SignalR", RID, {
      resourceId: RID,
      metrics: [
        metric("ServerLoad", [{ timeStamp: t0, maximum: 42, average: 30 }, { timeStamp: t1 }], "Server Load"),
        metric("ConnectionQuotaUtilization", [{ timeStamp: t0, maximum: 55 }, { timeStamp: t1 }]),
        metric("ConnectionCount", [
          { timeStamp: t0, maximum: 5500 },
          { timeStamp: t1, maximum: 5600 },
        ]),
        metric("MessageCount", [{ timeStamp: t0, total: 6000 }, { timeStamp: t1 }]),
        metric("InboundTraffic", [{ timeStamp: t0, total: 120_000 }, { timeStamp: t1 }]),
        metric("OutboundTraffic", [{ timeStamp: t0, total: 0 }, { timeStamp: t1 }]),
      ],
    });
    expect(samples).toEqual([
      {
        resourceId: RID,
        time: t0,
        serverLoadPercent: 42,
        connectionQuotaUtilizationPercent: 55,
        connections: 5500,
        messagesPerSecond: 100,
        inboundBytesPerSecond: 2000,
        outboundBytesPerSecond: 0,
      },
      {
        resourceId: RID,
        time: t1,
        serverLoadPercent: null,
        connectionQuotaUtilizationPercent: null,
        connections: 5600,
        messagesPerSecond: null,
        inboundBytesPerSecond: null,
        outboundBytesPerSecond: null,
      },
    ]);
  });

  it("keeps null for missing metrics, empty series and metric errors — never 0", () => {
    const samples = samplesOf("WebPubSub", RID, {
      metrics: [
        metric("TotalConnectionCount", [{ timeStamp: t0, maximum: 10 }]),
        { ...metric("ServerLoad", [{ timeStamp: t0, maximum: 5 }]), errorCode: "InternalError" },
        { ...metric("InboundTraffic", []), timeseries: [] },
      ],
    });
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({
      connections: 10,
      serverLoadPercent: null,
      inboundBytesPerSecond: null,
      messagesPerSecond: null,
    });
  });

  it("adds up several series of one metric", () => {
    const split: MetricLike = {
      id: `${RID}/providers/Microsoft.Insights/metrics/ConnectionCount`,
      name: "Connection Count",
      timeseries: [
        { metadatavalues: [{ name: "endpoint", value: "client" }], data: [{ timeStamp: t0, maximum: 900 }] },
        {
          metadatavalues: [{ name: "endpoint", value: "server" }],
          data: [{ timeStamp: t0, maximum: 100 }, { timeStamp: t1 }],
        },
      ],
    };
    const samples = samplesOf("SignalR", RID, { metrics: [split] });
    expect(samples.map((s) => s.connections)).toEqual([1000, null]);
    addEndpointSplit(samples, { metrics: [split] });
    expect(samples.map((s) => [s.clientConnections, s.serverConnections])).toEqual([
      [900, 100],
      [null, null],
    ]);
  });
});

describe("resultsByResource", () => {
  it("matches results case-insensitively and by position when the ID is absent", () => {
    const a = `${RID}-a`;
    const b = `${RID}-b`;
    const m = resultsByResource([a, b], [{ metrics: [] }, { resourceId: b.toLowerCase(), metrics: [] }]);
    expect([...m.keys()].sort()).toEqual([a, b].sort());
  });
});
