import { describe, expect, it } from "vitest";
import { METRIC_DEFINITIONS } from "../azure/metric-definitions.js";
import { EMULATED_METRICS } from "../traffic/monitor-catalog.js";
import { createVirtualClock } from "./clock.js";
import type { EmulatorRequest } from "./http.js";
import {
  combineAggregates,
  handleGetBatch,
  type MonitorFaultFlags,
  parseDimensionFilter,
} from "./monitor.js";
import { EmulatorState } from "./state.js";

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

describe("grains", () => {
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

describe("handleGetBatch: strict, as the published contract says", () => {
  const SUB = "11111111-1111-1111-1111-111111111111";
  const ID = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/hub`;
  const T0 = new Date("2025-03-03T12:00:30Z");

  function setup(connections: number) {
    const clock = createVirtualClock({ start: T0, speed: 0 });
    const state = new EmulatorState({ clock, ingestionDelayMs: 180_000, noiseAmplitude: 0 });
    state.addInstance({ resourceId: ID, location: "westeurope", sku: "Premium_P1", units: 2, connections });
    return state;
  }

  function request(query: Record<string, string>): EmulatorRequest {
    return {
      method: "POST",
      path: `/metrics/westeurope/subscriptions/${SUB}/metrics:getBatch`,
      query: new URLSearchParams({
        "api-version": "2024-02-01",
        metricnamespace: "Microsoft.SignalRService/SignalR",
        starttime: "2025-03-03T11:50:00Z",
        endtime: "2025-03-03T12:00:00Z",
        interval: "PT1M",
        ...query,
      }),
      headers: {},
      body: { resourceids: [ID] },
      baseUrl: "https://127.0.0.1",
    };
  }

  interface Point {
    timeStamp: string;
    [aggregation: string]: unknown;
  }
  interface Body {
    values: {
      value: {
        name: { value: string };
        errorCode: string;
        errorMessage?: string;
        timeseries: { data: Point[] }[];
      }[];
    }[];
    error?: { code: string; message: string };
  }
  const answer = (state: EmulatorState, query: Record<string, string>, flags: MonitorFaultFlags = {}) => {
    const r = handleGetBatch(request(query), state, flags);
    return { status: r?.status, body: r?.body as Body };
  };

  it("serves api-version 2024-02-01 only", () => {
    const state = setup(500);
    const ok = answer(state, { metricnames: "ServerLoad", aggregation: "Maximum" });
    expect(ok.status).toBe(200);
    for (const version of ["2023-10-01", "2018-01-01", "2024-02-01-preview"]) {
      const refused = answer(state, {
        metricnames: "ServerLoad",
        aggregation: "Maximum",
        "api-version": version,
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toEqual({
        code: "InvalidApiVersionParameter",
        message: `The api-version '${version}' is invalid. The supported versions are '2024-02-01'.`,
      });
    }
  });

  it.each<[string, string, string]>([
    ["ServerLoad", "Total", "Minimum, Maximum, Average"],
    ["ConnectionQuotaUtilization", "Total", "Minimum, Maximum, Average"],
    ["ConnectionCount", "Average", "Maximum"],
    ["MessageCount", "Maximum", "Total"],
    ["InboundTraffic", "Average", "Total"],
    ["OutboundTraffic", "Minimum", "Total"],
  ])(
    "refuses %s asked for %s (it supports %s): 400 for the whole query",
    (metric, aggregation, supported) => {
      const state = setup(500);
      const refused = answer(state, { metricnames: metric, aggregation });
      expect(refused.status).toBe(400);
      expect(refused.body.error?.code).toBe("BadRequest");
      expect(refused.body.error?.message).toBe(
        `Sampling type is not found. Metric: Microsoft.SignalRService/SignalR, ${metric}, SamplingType: ${aggregation}. Supported aggregation types of ${metric}: ${supported}.`,
      );
    },
  );

  it("refuses one query mixing the aggregations of gauges and counters (Maximum,Total)", () => {
    const state = setup(500);
    const all =
      "ServerLoad,ConnectionQuotaUtilization,ConnectionCount,MessageCount,InboundTraffic,OutboundTraffic";
    const refused = answer(state, { metricnames: all, aggregation: "Maximum,Total" });
    expect(refused.status).toBe(400);
    expect(refused.body.error?.message).toMatch(
      /^Sampling type is not found\. Metric: Microsoft\.SignalRService\/SignalR, ServerLoad, SamplingType: Total\./,
    );
  });

  it("the operator's query plan is accepted: Maximum for the gauges, Total for the counters", () => {
    const state = setup(500);
    expect(
      answer(state, {
        metricnames: "ServerLoad,ConnectionQuotaUtilization,ConnectionCount",
        aggregation: "Maximum",
      }).status,
    ).toBe(200);
    expect(
      answer(state, { metricnames: "MessageCount,InboundTraffic,OutboundTraffic", aggregation: "Total" })
        .status,
    ).toBe(200);
    expect(
      answer(state, { metricnames: "ConnectionCount", aggregation: "Maximum", filter: "Endpoint eq '*'" })
        .status,
    ).toBe(200);
  });

  it("writes a bucket without data as a point with only its timestamp: not yet ingested, or nothing counted", () => {
    const quiet = setup(0);
    const { body } = answer(quiet, {
      metricnames: "MessageCount,InboundTraffic,OutboundTraffic",
      aggregation: "Total",
    });
    for (const metric of body.values[0]?.value ?? []) {
      expect(metric.errorCode).toBe("Success");
      expect(metric.errorMessage).toBeUndefined();
      const points = metric.timeseries[0]?.data ?? [];
      expect(points).toHaveLength(10);
      for (const p of points) expect(Object.keys(p)).toEqual(["timeStamp"]);
    }
    const busy = setup(500);
    const counted = answer(busy, { metricnames: "MessageCount", aggregation: "Total" }).body.values[0]
      ?.value[0];
    const data = counted?.timeseries[0]?.data ?? [];
    // 11:50–11:56 complete (3-minute ingestion delay at 12:00:30), 11:57 partial, 11:58–11:59 not yet.
    expect(data.slice(0, 8).every((p) => typeof p["total"] === "number" && (p["total"] as number) > 0)).toBe(
      true,
    );
    expect(data.slice(8).map((p) => Object.keys(p))).toEqual([["timeStamp"], ["timeStamp"]]);
    const gauges = answer(quiet, { metricnames: "ServerLoad,ConnectionCount", aggregation: "Maximum" }).body;
    for (const metric of gauges.values[0]?.value ?? []) {
      const points = metric.timeseries[0]?.data ?? [];
      expect(points.slice(0, 8).every((p) => typeof p["maximum"] === "number")).toBe(true);
      expect(points.every((p) => !Object.values(p).includes(null))).toBe(true);
    }
  });

  it("fault metricError: the named metric with its error code and message and no series, the others Success", () => {
    const state = setup(500);
    const { status, body } = answer(
      state,
      { metricnames: "ServerLoad,ConnectionCount", aggregation: "Maximum" },
      { metricError: { metrics: ["ConnectionCount"], code: "Throttled", message: "too many series" } },
    );
    expect(status).toBe(200);
    expect(
      body.values[0]?.value.map((m) => [m.name.value, m.errorCode, m.errorMessage, m.timeseries.length]),
    ).toEqual([
      ["ServerLoad", "Success", undefined, 1],
      ["ConnectionCount", "Throttled", "too many series", 0],
    ]);
  });
});

describe("one table of Azure's facts, read twice", () => {
  it("the emulator's catalog and the operator's definitions agree on every metric's supported aggregations", () => {
    for (const service of ["SignalR", "WebPubSub"] as const) {
      const emulated = Object.fromEntries(
        EMULATED_METRICS[service].map((m) => [
          m.name,
          m.aggregations.map((a) => a[0]?.toUpperCase() + a.slice(1)),
        ]),
      );
      const read = Object.fromEntries(
        METRIC_DEFINITIONS[service].map((d) => [d.name, [...d.supportedAggregations]]),
      );
      expect(read).toEqual(emulated);
    }
  });
});
