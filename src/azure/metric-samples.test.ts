import { describe, expect, it } from "vitest";
import type { ServiceKind } from "../capacity/index.js";
import { METRIC_DEFINITIONS, type MetricDefinition, timeGrainSeconds } from "./metric-definitions.js";
import {
  addEndpointSplit,
  answerGrain,
  combineAnswers,
  type DataPointLike,
  MetricGrainError,
  type MetricLike,
  type MetricsResultLike,
  readMetricsAnswer,
  resultsByResource,
} from "./metric-samples.js";

const RID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/hub";
const t0 = new Date("2025-03-01T12:00:00Z");
const t1 = new Date("2025-03-01T12:01:00Z");
const t2 = new Date("2025-03-01T12:02:00Z");
const MINUTE = 60_000;

function metric(name: string, data: readonly DataPointLike[], displayName = name): MetricLike {
  return {
    id: `${RID}/providers/Microsoft.Insights/metrics/${name}`,
    name: displayName,
    errorCode: "Success",
    timeseries: [{ metadatavalues: [], data }],
  };
}

/** A metric with one series per entry of `series` (split by a dimension `Part`). */
function split(name: string, series: readonly (readonly DataPointLike[])[]): MetricLike {
  return {
    ...metric(name, []),
    timeseries: series.map((data, i) => ({ metadatavalues: [{ name: "Part", value: String(i) }], data })),
  };
}

/** A metric answered without error and without any series. */
function empty(name: string): MetricLike {
  return { ...metric(name, []), timeseries: [] };
}

const read = (service: ServiceKind, result: MetricsResultLike) => readMetricsAnswer(service, RID, result);

describe("readMetricsAnswer", () => {
  it("maps SignalR metrics to a typed sample per minute, converting per-minute totals to per second", () => {
    const answer = read("SignalR", {
      resourceId: RID,
      granularity: "PT1M",
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
    expect(answer).toMatchObject({ grainSeconds: 60, grainFrom: "interval", absent: [], failed: [] });
    expect(answer.samples).toEqual([
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
        // the counters' points carry only their timestamp while connections are known: nothing
        // was counted (the official example's layout of an empty bucket)
        resourceId: RID,
        time: t1,
        serverLoadPercent: null,
        connectionQuotaUtilizationPercent: null,
        connections: 5600,
        messagesPerSecond: 0,
        inboundBytesPerSecond: 0,
        outboundBytesPerSecond: 0,
        zeroFilled: ["messagesPerSecond", "inboundBytesPerSecond", "outboundBytesPerSecond"],
      },
    ]);
  });

  it("lists the service's metrics the answer lacks or answered with an error", () => {
    const answer = read("WebPubSub", {
      metrics: [
        metric("TotalConnectionCount", [{ timeStamp: t0, maximum: 10 }]),
        { ...metric("ServerLoad", [{ timeStamp: t0, maximum: 5 }]), errorCode: "InternalError" },
        metric("CpuPercentage", [{ timeStamp: t0, maximum: 99 }]),
      ],
    });
    expect(answer.absent).toEqual(["ConnectionQuotaUtilization", "InboundTraffic", "OutboundTraffic"]);
    expect(answer.failed).toEqual([{ metric: "ServerLoad", errorCode: "InternalError" }]);
    expect(answer.samples).toHaveLength(1);
    expect(answer.samples[0]).toMatchObject({
      connections: 10,
      serverLoadPercent: null,
      inboundBytesPerSecond: null,
      messagesPerSecond: null,
    });
  });

  describe("several series of one metric combine by the metric's documented rule", () => {
    // Pinned here, not read from METRIC_DEFINITIONS: percentages of the instance take the highest
    // series, counts and totals add up (see metric-definitions.ts for the sources).
    const RULES: Record<ServiceKind, Record<string, "max" | "sum">> = {
      SignalR: {
        ServerLoad: "max",
        ConnectionQuotaUtilization: "max",
        ConnectionCount: "sum",
        MessageCount: "sum",
        InboundTraffic: "sum",
        OutboundTraffic: "sum",
      },
      WebPubSub: {
        ServerLoad: "max",
        ConnectionQuotaUtilization: "max",
        TotalConnectionCount: "sum",
        InboundTraffic: "sum",
        OutboundTraffic: "sum",
      },
    };

    it("every metric read has a pinned rule", () => {
      for (const service of ["SignalR", "WebPubSub"] as const) {
        expect(METRIC_DEFINITIONS[service].map((d) => d.name).sort()).toEqual(
          Object.keys(RULES[service]).sort(),
        );
      }
    });

    const cases = (["SignalR", "WebPubSub"] as const).flatMap((service) =>
      METRIC_DEFINITIONS[service].map((def) => [service, def.name, def] as const),
    );
    it.each(cases)("%s %s", (service, name, def: MetricDefinition) => {
      const rule = RULES[service][name];
      const point = (v: number): DataPointLike => ({ timeStamp: t0, [def.aggregation]: v });
      const answer = read(service, {
        metrics: [split(name, [[point(60)], [point(60)], [{ timeStamp: t0 }]])],
      });
      const perSecond = def.kind === "counter" ? 1 / 60 : 1;
      expect(answer.samples[0]?.[def.field]).toBeCloseTo((rule === "max" ? 60 : 120) * perSecond, 9);
    });

    it("server load split in two series at 60 % each is 60 %, not 120 %", () => {
      const answer = read("SignalR", {
        metrics: [
          split("ServerLoad", [[{ timeStamp: t0, maximum: 60 }], [{ timeStamp: t0, maximum: 60 }]]),
          split("ConnectionCount", [[{ timeStamp: t0, maximum: 900 }], [{ timeStamp: t0, maximum: 100 }]]),
        ],
      });
      expect(answer.samples[0]).toMatchObject({ serverLoadPercent: 60, connections: 1000 });
    });

    it("a series without a value at a minute does not make the others unknown", () => {
      const answer = read("SignalR", {
        metrics: [split("ConnectionCount", [[{ timeStamp: t0, maximum: 900 }], [{ timeStamp: t0 }]])],
      });
      expect(answer.samples[0]?.connections).toBe(900);
    });
  });

  describe("counters answered empty on an idle instance", () => {
    const gauges = (load: number | undefined) => [
      metric("ServerLoad", [{ timeStamp: t0, ...(load === undefined ? {} : { maximum: load }) }]),
      metric("ConnectionQuotaUtilization", [{ timeStamp: t0 }]),
      metric("ConnectionCount", [{ timeStamp: t0 }]),
    ];

    it("an empty counter with a known gauge is 0, and says so", () => {
      const answer = read("SignalR", {
        metrics: [
          ...gauges(2),
          empty("MessageCount"),
          { ...metric("InboundTraffic", []), timeseries: [{ metadatavalues: [] }] },
          metric("OutboundTraffic", [{ timeStamp: t0, total: 600 }]),
        ],
      });
      expect(answer.samples).toEqual([
        expect.objectContaining({
          serverLoadPercent: 2,
          messagesPerSecond: 0,
          inboundBytesPerSecond: 0,
          outboundBytesPerSecond: 10,
          zeroFilled: ["messagesPerSecond", "inboundBytesPerSecond"],
        }),
      ]);
    });

    it.each<[string, DataPointLike[], number | null, string[] | undefined]>([
      ["no data point", [{ timeStamp: t0, total: 120 }], 0, ["messagesPerSecond"]],
      [
        "a point with only its timestamp",
        [{ timeStamp: t0, total: 120 }, { timeStamp: t1 }],
        0,
        ["messagesPerSecond"],
      ],
      [
        "a null total",
        [
          { timeStamp: t0, total: 120 },
          { timeStamp: t1, total: null as unknown as number },
        ],
        0,
        ["messagesPerSecond"],
      ],
      [
        "a value of 0",
        [
          { timeStamp: t0, total: 120 },
          { timeStamp: t1, total: 0 },
        ],
        0,
        undefined,
      ],
      [
        "a value",
        [
          { timeStamp: t0, total: 120 },
          { timeStamp: t1, total: 60 },
        ],
        1,
        undefined,
      ],
    ])("a counter series with %s at a minute where a gauge is known", (_n, data, value, zeroFilled) => {
      const answer = read("SignalR", {
        metrics: [
          metric("ConnectionCount", [
            { timeStamp: t0, maximum: 30 },
            { timeStamp: t1, maximum: 30 },
          ]),
          metric("MessageCount", data),
        ],
      });
      expect(answer.samples.map((s) => [s.messagesPerSecond, s.zeroFilled])).toEqual([
        [2, undefined],
        [value, zeroFilled],
      ]);
    });

    it("reads the official example's layout: each empty bucket a point with only its timestamp", () => {
      // MetricBatchExample.json (2024-02-01): a series whose buckets without data carry only
      // `timeStamp`, one bucket with values among them — here a quiet SignalR instance, its
      // counters answered that way, its gauges known in every bucket.
      const times = [0, 1, 2, 3, 4].map((m) => new Date(t0.getTime() + m * MINUTE));
      const answer = read("SignalR", {
        resourceId: RID,
        granularity: "PT1M",
        metrics: [
          metric(
            "ServerLoad",
            times.map((timeStamp) => ({ timeStamp, maximum: 1 })),
          ),
          metric(
            "ConnectionQuotaUtilization",
            times.map((timeStamp) => ({ timeStamp, maximum: 0 })),
          ),
          metric(
            "ConnectionCount",
            times.map((timeStamp) => ({ timeStamp, maximum: 2 })),
          ),
          metric(
            "MessageCount",
            times.map((timeStamp, i) => (i === 2 ? { timeStamp, total: 120 } : { timeStamp })),
          ),
          metric(
            "InboundTraffic",
            times.map((timeStamp) => ({ timeStamp })),
          ),
          metric(
            "OutboundTraffic",
            times.map((timeStamp) => ({ timeStamp })),
          ),
        ],
      });
      expect(
        answer.samples.map((s) => [s.messagesPerSecond, s.inboundBytesPerSecond, s.outboundBytesPerSecond]),
      ).toEqual([
        [0, 0, 0],
        [0, 0, 0],
        [2, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ]);
      expect(answer.samples[2]?.zeroFilled).toEqual(["inboundBytesPerSecond", "outboundBytesPerSecond"]);
      expect(answer.samples[0]?.zeroFilled).toEqual([
        "messagesPerSecond",
        "inboundBytesPerSecond",
        "outboundBytesPerSecond",
      ]);
    });

    it("a minute missing from the counter series inside the span, with the gauge known there, is 0", () => {
      const answer = read("SignalR", {
        granularity: "PT1M",
        metrics: [
          metric(
            "ConnectionCount",
            [t0, t1, t2].map((timeStamp) => ({ timeStamp, maximum: 10 })),
          ),
          metric("InboundTraffic", [
            { timeStamp: t0, total: 600 },
            { timeStamp: t2, total: 1200 },
          ]),
        ],
      });
      expect(answer.samples.map((s) => s.inboundBytesPerSecond)).toEqual([10, 0, 20]);
      expect(answer.samples.map((s) => s.zeroFilled)).toEqual([
        undefined,
        ["inboundBytesPerSecond"],
        undefined,
      ]);
    });

    it("connection quota utilization counts as a gauge too", () => {
      const answer = read("WebPubSub", {
        metrics: [
          metric("ConnectionQuotaUtilization", [{ timeStamp: t0, maximum: 3 }]),
          empty("InboundTraffic"),
        ],
      });
      expect(answer.samples[0]).toMatchObject({
        inboundBytesPerSecond: 0,
        zeroFilled: ["inboundBytesPerSecond"],
      });
    });

    it.each<[string, MetricLike[]]>([
      ["the gauges have only empty data points", [...gauges(undefined), empty("MessageCount")]],
      [
        "the gauges are absent",
        [metric("InboundTraffic", [{ timeStamp: t0, total: 60 }]), empty("MessageCount")],
      ],
      [
        "the gauge is not finite",
        [metric("ServerLoad", [{ timeStamp: t0, maximum: Number.NaN }]), empty("MessageCount")],
      ],
      [
        "the gauge is negative",
        [metric("ServerLoad", [{ timeStamp: t0, maximum: -1 }]), empty("MessageCount")],
      ],
    ])("an empty counter stays unknown when %s", (_n, metrics) => {
      const answer = read("SignalR", { metrics });
      expect(answer.samples[0]?.messagesPerSecond).toBeNull();
      expect(answer.samples[0]?.zeroFilled).toBeUndefined();
    });

    it("a failed or absent counter stays unknown, whatever the gauges say", () => {
      const answer = read("SignalR", {
        metrics: [
          ...gauges(2),
          { ...empty("MessageCount"), errorCode: "Throttled" },
          // InboundTraffic not in the answer at all
          empty("OutboundTraffic"),
        ],
      });
      expect(answer.samples[0]).toMatchObject({
        messagesPerSecond: null,
        inboundBytesPerSecond: null,
        outboundBytesPerSecond: 0,
        zeroFilled: ["outboundBytesPerSecond"],
      });
      expect(answer.failed).toEqual([{ metric: "MessageCount", errorCode: "Throttled" }]);
      expect(answer.absent).toEqual(["InboundTraffic"]);
    });

    it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
      "a counter value of %s is unknown, not zero",
      (v) => {
        const answer = read("SignalR", {
          metrics: [
            metric("ServerLoad", [{ timeStamp: t0, maximum: 2 }]),
            metric("InboundTraffic", [{ timeStamp: t0, total: v }]),
          ],
        });
        expect(answer.samples[0]?.inboundBytesPerSecond).toBeNull();
        expect(answer.samples[0]?.zeroFilled).toBeUndefined();
      },
    );

    it.each([Number.NaN, Number.POSITIVE_INFINITY])("a gauge value of %s is unknown", (v) => {
      const answer = read("SignalR", { metrics: [metric("ServerLoad", [{ timeStamp: t0, maximum: v }])] });
      expect(answer.samples[0]?.serverLoadPercent).toBeNull();
    });
  });

  describe("time grain", () => {
    const fiveMinutes = [0, 5, 10].map((m) => new Date(t0.getTime() + m * MINUTE));
    const body = (times: readonly Date[], granularity?: string): MetricsResultLike => ({
      ...(granularity ? { granularity } : {}),
      metrics: [
        metric(
          "ServerLoad",
          times.map((timeStamp) => ({ timeStamp, maximum: 40 })),
        ),
        metric(
          "InboundTraffic",
          times.map((timeStamp) => ({ timeStamp, total: 3_000_000 })),
        ),
      ],
    });

    it("divides totals by the interval's seconds", () => {
      const answer = read("SignalR", body(fiveMinutes, "PT5M"));
      expect(answer).toMatchObject({ grainSeconds: 300, grainFrom: "interval" });
      expect(answer.samples.map((s) => s.inboundBytesPerSecond)).toEqual([10_000, 10_000, 10_000]);
    });

    it("takes the grain from the timestamps when the answer has no interval", () => {
      const answer = read("SignalR", body(fiveMinutes));
      expect(answer).toMatchObject({ grainSeconds: 300, grainFrom: "timestamps" });
      expect(answer.samples.map((s) => s.inboundBytesPerSecond)).toEqual([10_000, 10_000, 10_000]);
      expect(answer.samples.map((s) => s.serverLoadPercent)).toEqual([40, 40, 40]);
    });

    it("accepts missing buckets under an interval, and assumes PT1M for a single timestamp", () => {
      const gap = [t0, t1, new Date(t0.getTime() + 4 * MINUTE)];
      expect(read("SignalR", body(gap, "PT1M")).grainSeconds).toBe(60);
      expect(read("SignalR", body([t0]))).toMatchObject({ grainSeconds: 60, grainFrom: "assumed" });
      expect(read("SignalR", body([t0], "PT5M"))).toMatchObject({ grainSeconds: 300, grainFrom: "interval" });
    });

    it.each<[string, MetricsResultLike, RegExp]>([
      [
        "irregular timestamps",
        body([t0, t2, new Date(t0.getTime() + 5 * MINUTE)]),
        /^timestamps are irregular \(gaps of 2 minutes, 3 minutes\) and no interval says which is one bucket$/,
      ],
      [
        "timestamps with a missing bucket and no interval",
        body([t0, t1, new Date(t0.getTime() + 4 * MINUTE)]),
        /^timestamps are irregular \(gaps of 1 minute, 3 minutes\)/,
      ],
      [
        "an interval that disagrees with the timestamps",
        body(fiveMinutes, "PT1M"),
        /^interval PT1M but the timestamps are 5 minutes apart$/,
      ],
      [
        "timestamps off the interval's grid",
        body([t0, new Date(t0.getTime() + 5 * MINUTE), new Date(t0.getTime() + 12 * MINUTE)], "PT5M"),
        /^interval PT5M but the timestamps are 5 minutes, 7 minutes apart$/,
      ],
      [
        "an unreadable interval",
        body([t0, t1], "5 minutes"),
        /^interval "5 minutes" is not an ISO 8601 time grain/,
      ],
      ["a sub-minute interval", body([t0], "PT30S"), /^interval PT30S is not a whole number of minutes$/],
      [
        "timestamps 30 seconds apart",
        body([t0, new Date(t0.getTime() + 30_000)]),
        /^timestamps are 30 seconds apart: not a whole number of minutes$/,
      ],
    ])("refuses %s", (_n, result, message) => {
      expect(() => read("SignalR", result)).toThrow(MetricGrainError);
      expect(() => read("SignalR", result)).toThrow(message);
    });

    it("answerGrain reads the grain of bare timestamps", () => {
      expect(answerGrain(undefined, [])).toEqual({ seconds: 60, from: "assumed" });
      expect(answerGrain("PT15M", [0, 15 * MINUTE, 45 * MINUTE])).toEqual({ seconds: 900, from: "interval" });
      expect(answerGrain(undefined, [0, 0, 60 * MINUTE])).toEqual({ seconds: 3600, from: "timestamps" });
      expect(() => answerGrain("PT1M", [0, 30_000])).toThrow(
        "interval PT1M but the timestamps are 30 seconds apart",
      );
    });

    it.each<[string, number | undefined]>([
      ["PT1M", 60],
      ["pt5m", 300],
      ["PT1H", 3600],
      ["PT1H30M", 5400],
      ["P1D", 86_400],
      ["PT30S", 30],
      ["PT0M", undefined],
      ["P", undefined],
      ["PT", undefined],
      ["P1W", undefined],
      ["PT1.5M", undefined],
      ["1m", undefined],
    ])("timeGrainSeconds(%s) = %s", (text, seconds) => {
      expect(timeGrainSeconds(text)).toBe(seconds);
    });
  });
});

describe("combineAnswers: the gauges and the counters from separate queries", () => {
  const gauges: MetricsResultLike = {
    resourceId: RID,
    granularity: "PT1M",
    metrics: [
      metric("ServerLoad", [{ timeStamp: t0, maximum: 3 }, { timeStamp: t1 }]),
      metric("ConnectionCount", [{ timeStamp: t0, maximum: 40 }, { timeStamp: t1 }]),
    ],
  };
  const counters: MetricsResultLike = {
    resourceId: RID,
    granularity: "PT1M",
    metrics: [
      metric("MessageCount", [{ timeStamp: t0 }, { timeStamp: t1 }]),
      metric("InboundTraffic", [{ timeStamp: t0, total: 60 }, { timeStamp: t1 }]),
      metric("OutboundTraffic", [{ timeStamp: t0 }, { timeStamp: t1 }]),
    ],
  };

  it("reads an idle counter as 0 where the gauges' answer is known, unknown where it is not", () => {
    const { samples } = read("SignalR", combineAnswers([gauges, counters]));
    expect(
      samples.map((s) => [s.messagesPerSecond, s.inboundBytesPerSecond, s.outboundBytesPerSecond]),
    ).toEqual([
      [0, 1, 0],
      [null, null, null],
    ]);
    expect(samples.map((s) => s.zeroFilled)).toEqual([
      ["messagesPerSecond", "outboundBytesPerSecond"],
      undefined,
    ]);
  });

  it("the counters' query failed: counters unknown, never 0, the gauges kept", () => {
    const answer = read("SignalR", combineAnswers([gauges]));
    expect(answer.samples[0]).toMatchObject({
      serverLoadPercent: 3,
      connections: 40,
      messagesPerSecond: null,
      inboundBytesPerSecond: null,
      outboundBytesPerSecond: null,
    });
    expect(answer.samples[0]?.zeroFilled).toBeUndefined();
    expect(answer.absent).toEqual([
      "ConnectionQuotaUtilization",
      "MessageCount",
      "InboundTraffic",
      "OutboundTraffic",
    ]);
  });

  it("the gauges' query failed: gauges unknown, the counters' values kept, their empty buckets unknown", () => {
    const { samples } = read("SignalR", combineAnswers([counters]));
    expect(
      samples.map((s) => [s.serverLoadPercent, s.connections, s.messagesPerSecond, s.inboundBytesPerSecond]),
    ).toEqual([
      [null, null, null, 1],
      [null, null, null, null],
    ]);
  });

  it("refuses answers that state different intervals", () => {
    expect(() => combineAnswers([gauges, { ...counters, granularity: "PT5M" }])).toThrow(
      "the answers of one span state different intervals: PT1M, PT5M",
    );
  });
});

describe("addEndpointSplit", () => {
  it("adds client and server connections from the split by Endpoint", () => {
    const byEndpoint: MetricLike = {
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
    const { samples } = read("SignalR", { metrics: [byEndpoint] });
    expect(samples.map((s) => s.connections)).toEqual([1000, null]);
    addEndpointSplit(samples, { metrics: [byEndpoint] });
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
