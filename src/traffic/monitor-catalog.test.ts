import { describe, expect, it } from "vitest";
import { EMULATED_METRICS, findEmulatedMetric, minuteAggregates } from "./monitor-catalog.js";
import { trafficAt } from "./traffic.js";

describe("metric catalog", () => {
  const minute = trafficAt({
    mix: { service: "SignalR", entries: [{ scenario: "echo", share: 1 }], messageSizeBytes: 2048 },
    offeredConnections: 500,
    sku: "Premium_P1",
    units: 1,
    noise: 0,
  });

  it("names the metrics Azure publishes per service", () => {
    expect(EMULATED_METRICS.SignalR.map((m) => m.name)).toEqual([
      "ServerLoad",
      "ConnectionQuotaUtilization",
      "ConnectionCount",
      "MessageCount",
      "InboundTraffic",
      "OutboundTraffic",
    ]);
    expect(EMULATED_METRICS.WebPubSub.map((m) => m.name)).not.toContain("MessageCount");
    expect(findEmulatedMetric("WebPubSub", "totalconnectioncount")?.name).toBe("TotalConnectionCount");
  });

  it("turns a minute into aggregates: totals per minute, gauges around their value", () => {
    const messages = findEmulatedMetric("SignalR", "MessageCount");
    const count = findEmulatedMetric("SignalR", "ConnectionCount");
    if (!messages || !count) throw new Error("missing metric");
    expect(minuteAggregates(messages, minute, 0, 1).total).toBe(1000 * 60);
    expect(minuteAggregates(messages, minute, 0, 0.25).total).toBe(1000 * 15);
    const c = minuteAggregates(count, minute, 1, 1);
    expect(c.average).toBe(505);
    expect(c.maximum).toBeGreaterThan(c.average);
    expect(c.minimum).toBeLessThan(c.average);
    expect(minuteAggregates(count, minute, 0, 1, "client").average).toBe(500);
    expect(minuteAggregates(count, minute, 0, 1, "server").average).toBe(5);
  });
});
