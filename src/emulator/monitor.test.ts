import { describe, expect, it } from "vitest";
import { parseDimensionFilter } from "./monitor.js";
import {
  combineAggregates,
  EMULATED_METRICS,
  findEmulatedMetric,
  minuteAggregates,
} from "./monitor-catalog.js";
import { trafficAt } from "./traffic.js";

describe("parseDimensionFilter", () => {
  it("reads one dimension's values", () => {
    expect(parseDimensionFilter("Endpoint eq '*'")).toEqual({ dimension: "Endpoint", values: ["*"] });
    expect(parseDimensionFilter("endpoint eq 'client' or Endpoint eq 'server'")).toEqual({
      dimension: "endpoint",
      values: ["client", "server"],
    });
    expect(parseDimensionFilter("Endpoint eq 'a' or Other eq 'b'")).toBeUndefined();
    expect(parseDimensionFilter("Endpoint = client")).toBeUndefined();
  });
});

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

  it("combines minutes into coarser grains, skipping missing ones", () => {
    const a = { average: 1, minimum: 0, maximum: 2, total: 10, count: 1 };
    const b = { average: 3, minimum: 1, maximum: 5, total: 20, count: 2 };
    expect(combineAggregates([a, undefined, b])).toEqual({
      average: 2,
      minimum: 0,
      maximum: 5,
      total: 30,
      count: 3,
    });
    expect(combineAggregates([undefined])).toBeUndefined();
  });
});
