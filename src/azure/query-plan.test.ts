import { describe, expect, it } from "vitest";
import { aggregationType, METRIC_DEFINITIONS } from "./metric-definitions.js";
import { metricQueries } from "./query-plan.js";

describe("metricQueries: one query per aggregation, each metric only with one it supports", () => {
  it("SignalR: Maximum for the gauges, Total for the counters", () => {
    expect(metricQueries("SignalR")).toEqual([
      {
        part: "metrics",
        metricNames: ["ServerLoad", "ConnectionQuotaUtilization", "ConnectionCount"],
        aggregation: "Maximum",
        fields: ["serverLoadPercent", "connectionQuotaUtilizationPercent", "connections"],
      },
      {
        part: "metrics",
        metricNames: ["MessageCount", "InboundTraffic", "OutboundTraffic"],
        aggregation: "Total",
        fields: ["messagesPerSecond", "inboundBytesPerSecond", "outboundBytesPerSecond"],
      },
    ]);
  });

  it("SignalR with the Endpoint split: a third query, ConnectionCount alone with its filter", () => {
    const queries = metricQueries("SignalR", { connectionsByEndpoint: true });
    expect(queries).toHaveLength(3);
    expect(queries[2]).toEqual({
      part: "endpointSplit",
      metricNames: ["ConnectionCount"],
      aggregation: "Maximum",
      filter: "Endpoint eq '*'",
      fields: [],
    });
  });

  it("Web PubSub: TotalConnectionCount with the gauges, no MessageCount, no split", () => {
    const queries = metricQueries("WebPubSub", { connectionsByEndpoint: true });
    expect(queries.map((q) => [q.aggregation, q.metricNames])).toEqual([
      ["Maximum", ["ServerLoad", "ConnectionQuotaUtilization", "TotalConnectionCount"]],
      ["Total", ["InboundTraffic", "OutboundTraffic"]],
    ]);
  });

  it("reads only the metrics of the fields asked for (the demand history)", () => {
    const fields = ["connections", "inboundBytesPerSecond", "outboundBytesPerSecond"] as const;
    expect(metricQueries("SignalR", { fields }).map((q) => [q.aggregation, q.metricNames])).toEqual([
      ["Maximum", ["ConnectionCount"]],
      ["Total", ["InboundTraffic", "OutboundTraffic"]],
    ]);
    expect(metricQueries("WebPubSub", { fields: ["connections"] }).map((q) => q.metricNames)).toEqual([
      ["TotalConnectionCount"],
    ]);
    expect(() => metricQueries("WebPubSub", { fields: ["messagesPerSecond"] })).toThrow(RangeError);
  });

  it.each(["SignalR", "WebPubSub"] as const)(
    "%s: no query asks a metric for an aggregation the metric reference does not list for it",
    (service) => {
      const supported = new Map(METRIC_DEFINITIONS[service].map((d) => [d.name, d.supportedAggregations]));
      for (const q of metricQueries(service, { connectionsByEndpoint: true })) {
        for (const name of q.metricNames) expect(supported.get(name)).toContain(q.aggregation);
      }
    },
  );

  it("pins the supported aggregations of the metric reference", () => {
    const table = Object.fromEntries(
      (["SignalR", "WebPubSub"] as const).flatMap((service) =>
        METRIC_DEFINITIONS[service].map((d) => [`${service}/${d.name}`, d.supportedAggregations]),
      ),
    );
    expect(table).toEqual({
      "SignalR/ServerLoad": ["Minimum", "Maximum", "Average"],
      "SignalR/ConnectionQuotaUtilization": ["Minimum", "Maximum", "Average"],
      "SignalR/ConnectionCount": ["Maximum"],
      "SignalR/MessageCount": ["Total"],
      "SignalR/InboundTraffic": ["Total"],
      "SignalR/OutboundTraffic": ["Total"],
      "WebPubSub/ServerLoad": ["Minimum", "Maximum", "Average"],
      "WebPubSub/ConnectionQuotaUtilization": ["Minimum", "Maximum", "Average"],
      "WebPubSub/TotalConnectionCount": ["Maximum", "Average"],
      "WebPubSub/InboundTraffic": ["Total"],
      "WebPubSub/OutboundTraffic": ["Total"],
    });
    expect(aggregationType("maximum")).toBe("Maximum");
  });
});
