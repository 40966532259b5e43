/**
 * Metrics through the real `MetricsClient.queryResources` (metrics:getBatch) against the
 * emulator: one query per aggregation (Maximum for the gauges, Total for the counters), batching
 * (calls = queries × ceil(resources / 50) per scope, counted at the emulator), names and
 * aggregations per service, typed samples with null kept null, idle counters written as
 * timestamp-only points, the ingestion delay, the Endpoint split, one query's failure not
 * discarding the other's data, throttling on the metrics plane, and faults on the series.
 */
import { MetricsClient } from "@azure/monitor-query-metrics";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  InvalidRequestError,
  type MetricSample,
  metricQueries,
  ThrottledError,
  TransientError,
} from "../../src/azure/index.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import { recordFault } from "../reliability/record.js";
import {
  adaptersFor,
  caught,
  resetEmulator,
  SUB_A,
  SUB_B,
  signalrId,
  startTestEmulator,
  staticCredential,
  webPubSubId,
} from "./helpers.js";

const MINUTE = 60_000;
/** The clock stands at 12:00:30; with a 3-minute ingestion delay, 11:56 is the newest complete minute. */
const START = new Date("2025-03-03T11:50:00Z");
const END = new Date("2025-03-03T12:01:00Z");

describe("metrics:getBatch against the emulator", { timeout: 30_000 }, () => {
  let emu: RunningEmulator;
  const many = Array.from({ length: 120 }, (_, i) => signalrId(`hub-${String(i).padStart(3, "0")}`));

  beforeAll(async () => {
    emu = await startTestEmulator({
      instances: [
        ...many.map((resourceId) => ({
          resourceId,
          location: "westeurope",
          sku: "Premium_P1" as const,
          units: 10,
          connections: 5_000,
        })),
        {
          resourceId: signalrId("east-1"),
          location: "eastus",
          sku: "Premium_P1",
          units: 2,
          connections: 1_500,
        },
        { resourceId: signalrId("other-sub", SUB_B), location: "westeurope", units: 1, connections: 300 },
        {
          resourceId: webPubSubId("wps-1"),
          location: "westeurope",
          sku: "Standard_S1",
          units: 1,
          connections: 400,
        },
        ...Array.from({ length: 51 }, (_, i) => ({
          resourceId: webPubSubId(`wps-east-${String(i).padStart(2, "0")}`),
          location: "eastus",
          sku: "Standard_S1" as const,
          units: 1,
          connections: 100,
        })),
        {
          resourceId: signalrId("quiet"),
          location: "westeurope",
          sku: "Premium_P1",
          units: 1,
          connections: 0,
        },
      ],
    });
  });
  afterAll(async () => {
    await emu?.stop();
  });
  beforeEach(() => resetEmulator(emu));

  it("answers in the published getBatch shape, read by the SDK itself", async () => {
    const client = new MetricsClient(emu.metricsEndpoint("westeurope"), staticCredential(), {
      tlsOptions: { ca: emu.caPem },
    });
    const [result] = await client.queryResources(
      [many[0] as string],
      ["ServerLoad", "ConnectionCount"],
      "Microsoft.SignalRService/SignalR",
      { startTime: START, endTime: END, interval: "PT1M", aggregation: "Maximum" },
    );
    expect(result?.resourceId).toBe(many[0]);
    expect(result?.resourceRegion).toBe("westeurope");
    expect(result?.granularity).toBe("PT1M");
    expect(result?.namespace).toBe("Microsoft.SignalRService/SignalR");
    expect(result?.timespan).toEqual({ startTime: START, endTime: END });
    const load = result?.metrics[0];
    expect(load?.id).toBe(`${many[0]}/providers/Microsoft.Insights/metrics/ServerLoad`);
    expect(load?.name).toBe("Server Load");
    expect(load?.unit).toBe("Percent");
    expect(load?.errorCode).toBe("Success");
    const data = load?.timeseries[0]?.data ?? [];
    expect(data).toHaveLength(11);
    expect(data[0]?.timeStamp).toEqual(START);
    expect(typeof data[0]?.maximum).toBe("number");
    expect(data[0]?.total).toBeUndefined(); // only the aggregation asked for
    expect(data[10]?.maximum).toBeUndefined();
  });

  it("refuses, as Azure may, a query asking a metric for an aggregation it does not support", async () => {
    const client = new MetricsClient(emu.metricsEndpoint("westeurope"), staticCredential(), {
      tlsOptions: { ca: emu.caPem },
    });
    const err = await caught(() =>
      client.queryResources(
        [many[0] as string],
        ["ServerLoad", "MessageCount"],
        "Microsoft.SignalRService/SignalR",
        {
          startTime: START,
          endTime: END,
          aggregation: "Maximum,Total",
        },
      ),
    );
    expect((err as { statusCode?: number }).statusCode).toBe(400);
    expect((err as { code?: string }).code).toBe("BadRequest");
    expect((err as Error).message).toContain(
      "Sampling type is not found. Metric: Microsoft.SignalRService/SignalR, ServerLoad, SamplingType: Total",
    );
  });

  it.each<[string, number, number]>([
    ["1 SignalR instance", 1, 1],
    ["50 SignalR instances", 50, 1],
    ["51 Web PubSub instances", 51, 2],
    ["120 SignalR instances", 120, 3],
  ])("reads %s with queries × ceil(n / 50) calls, counted at the emulator", async (_name, n, batches) => {
    const { metrics } = adaptersFor(emu);
    const webPubSub = _name.includes("Web PubSub");
    const ids = webPubSub
      ? Array.from({ length: n }, (_, i) => webPubSubId(`wps-east-${String(i).padStart(2, "0")}`))
      : many.slice(0, n);
    const region = webPubSub ? "eastus" : "westeurope";
    const result = await metrics.read(
      ids.map((resourceId) => ({ resourceId, region })),
      { start: START, end: END },
    );
    const queries = metricQueries(webPubSub ? "WebPubSub" : "SignalR");
    expect(queries).toHaveLength(2);
    const served = emu.control.requests().filter((r) => r.kind === "getBatch");
    expect(served).toHaveLength(queries.length * batches);
    expect(result.calls).toBe(queries.length * batches);
    expect(served.every((r) => r.status === 200)).toBe(true);
    const sizes = served.map((r) => r.resourceIds?.length ?? 0).sort((a, b) => b - a);
    const expected = Array.from({ length: batches }, (_, i) => Math.min(50, n - 50 * i)).flatMap((k) => [
      k,
      k,
    ]);
    expect(sizes).toEqual(expected.sort((a, b) => b - a));
    expect(result.failures).toEqual([]);
    expect(result.samples.size).toBe(n);
    for (const id of ids) expect(result.samples.get(id)).toHaveLength(11);
  });

  it("reads 120 resources across two regions and both services: calls per scope", async () => {
    const { metrics } = adaptersFor(emu);
    const targets = [
      ...many.slice(0, 60).map((resourceId) => ({ resourceId, region: "westeurope" })),
      { resourceId: signalrId("east-1"), region: "eastus" },
      ...Array.from({ length: 51 }, (_, i) => ({
        resourceId: webPubSubId(`wps-east-${String(i).padStart(2, "0")}`),
        region: "eastus",
      })),
      { resourceId: webPubSubId("wps-1"), region: "westeurope" },
      { resourceId: signalrId("other-sub", SUB_B), region: "westeurope" },
    ];
    const result = await metrics.read(targets, { start: START, end: END });
    expect(result.failures).toEqual([]);
    // SignalR westeurope: 60 → 2 batches; SignalR eastus: 1; Web PubSub eastus: 51 → 2;
    // Web PubSub westeurope: 1; SignalR in the other subscription: 1. Two queries each.
    const perScope = new Map<string, number>();
    for (const r of emu.control.requests().filter((x) => x.kind === "getBatch")) {
      const service = r.resourceIds?.[0]?.includes("/WebPubSub/") ? "WebPubSub" : "SignalR";
      const key = `${r.subscriptionId}/${r.region}/${service}`;
      perScope.set(key, (perScope.get(key) ?? 0) + 1);
    }
    expect(Object.fromEntries(perScope)).toEqual({
      [`${SUB_A}/westeurope/SignalR`]: 4,
      [`${SUB_A}/eastus/SignalR`]: 2,
      [`${SUB_A}/eastus/WebPubSub`]: 4,
      [`${SUB_A}/westeurope/WebPubSub`]: 2,
      [`${SUB_B}/westeurope/SignalR`]: 2,
    });
    expect(result.calls).toBe(14);
    expect(result.samples.size).toBe(targets.length);
  });

  it("reads a quiet instance's counters, written as points with only their timestamp, as 0 beside known gauges", async () => {
    const { metrics } = adaptersFor(emu);
    const id = signalrId("quiet");
    const result = await metrics.read([{ resourceId: id, region: "westeurope" }], { start: START, end: END });
    const samples = result.samples.get(id) as MetricSample[];
    const complete = samples.filter((s) => s.time.getTime() <= Date.parse("2025-03-03T11:56:00Z"));
    expect(complete).toHaveLength(7);
    for (const s of complete) {
      expect(s.connections).toBeGreaterThanOrEqual(0);
      expect([s.messagesPerSecond, s.inboundBytesPerSecond, s.outboundBytesPerSecond]).toEqual([0, 0, 0]);
      expect(s.zeroFilled).toEqual(["messagesPerSecond", "inboundBytesPerSecond", "outboundBytesPerSecond"]);
    }
    // Not yet ingested: the gauges have no value either, so the counters stay unknown.
    for (const s of samples.slice(-3)) {
      expect([s.connections, s.messagesPerSecond]).toEqual([null, null]);
      expect(s.zeroFilled).toBeUndefined();
    }
  });

  it("returns typed SignalR samples per minute, nulls for what is not ingested yet", async () => {
    const { metrics } = adaptersFor(emu);
    const id = many[7] as string;
    const result = await metrics.read([{ resourceId: id, region: "westeurope" }], { start: START, end: END });
    const samples = result.samples.get(id) as MetricSample[];
    expect(samples.map((s) => s.time.getTime() - START.getTime())).toEqual(
      Array.from({ length: 11 }, (_, i) => i * MINUTE),
    );
    const complete = samples.find((s) => s.time.toISOString() === "2025-03-03T11:56:00.000Z") as MetricSample;
    // 5,000 clients + 5 server connections on 10 units; echo: a message each way per client per second.
    expect(complete.connections).toBeGreaterThanOrEqual(5_005);
    expect(complete.connections).toBeLessThanOrEqual(5_005 * 1.02 + 1);
    expect(complete.connectionQuotaUtilizationPercent).toBeCloseTo(50, 0);
    expect(complete.serverLoadPercent).toBeGreaterThan(45);
    expect(complete.serverLoadPercent).toBeLessThan(60);
    expect(complete.messagesPerSecond).toBeCloseTo(10_000, 6);
    expect(complete.inboundBytesPerSecond).toBeCloseTo(5_000 * 2048, 3);
    expect(complete.outboundBytesPerSecond).toBeCloseTo(5_000 * 2048, 3);

    const partial = samples.find((s) => s.time.toISOString() === "2025-03-03T11:57:00.000Z") as MetricSample;
    expect(partial.messagesPerSecond).toBeCloseTo(5_000, 6); // half of the minute is ingested
    const newest = samples.slice(-3);
    for (const s of newest) {
      expect(s).toMatchObject({
        serverLoadPercent: null,
        connections: null,
        messagesPerSecond: null,
        inboundBytesPerSecond: null,
        outboundBytesPerSecond: null,
        connectionQuotaUtilizationPercent: null,
      });
    }
  });

  it("reads an instance whose resource ID is spelled in other cases (ARM IDs are case-insensitive)", async () => {
    const { metrics } = adaptersFor(emu);
    const id = many[8] as string;
    const spellings = [
      id.toUpperCase(),
      id.replace("/subscriptions/", "/Subscriptions/").replace("/resourceGroups/", "/RESOURCEGROUPS/"),
      id.replace("Microsoft.SignalRService/SignalR", "microsoft.signalrservice/signalr"),
    ];
    for (const spelled of spellings) {
      const result = await metrics.read([{ resourceId: spelled, region: "westeurope" }], {
        start: START,
        end: END,
      });
      expect(result.failures, spelled).toEqual([]);
      const complete = result.samples
        .get(spelled)
        ?.find((s) => s.time.toISOString() === "2025-03-03T11:56:00.000Z");
      expect(complete?.connections, spelled).toBeGreaterThanOrEqual(5_005);
    }
  });

  it("asks Web PubSub for TotalConnectionCount and no MessageCount", async () => {
    const { metrics } = adaptersFor(emu);
    const id = webPubSubId("wps-1");
    const result = await metrics.read([{ resourceId: id, region: "westeurope" }], { start: START, end: END });
    const request = emu.control.requests().find((r) => r.kind === "getBatch");
    expect(request?.resourceIds).toEqual([id]);
    const s = (result.samples.get(id) as MetricSample[])[6] as MetricSample;
    expect(s.connections).toBeGreaterThanOrEqual(400);
    expect(s.messagesPerSecond).toBeNull();
    expect(s.inboundBytesPerSecond).toBeCloseTo(200 * 2048, 3); // CloudEvents echo, a message every 2 s
  });

  it("groups by subscription, region and service", async () => {
    const { metrics } = adaptersFor(emu);
    const result = await metrics.read(
      [
        { resourceId: many[0] as string, region: "westeurope" },
        { resourceId: signalrId("east-1"), region: "eastus" },
        { resourceId: signalrId("other-sub", SUB_B), region: "westeurope" },
        { resourceId: webPubSubId("wps-1"), region: "westeurope" },
      ],
      { start: START, end: END },
    );
    expect(result.calls).toBe(8); // 4 batches × 2 queries
    expect(result.failures).toEqual([]);
    const regions = emu.control
      .requests()
      .map((r) => `${r.subscriptionId}/${r.region}`)
      .sort();
    expect(regions).toEqual([
      `${SUB_A}/eastus`,
      `${SUB_A}/eastus`,
      `${SUB_A}/westeurope`,
      `${SUB_A}/westeurope`,
      `${SUB_A}/westeurope`,
      `${SUB_A}/westeurope`,
      `${SUB_B}/westeurope`,
      `${SUB_B}/westeurope`,
    ]);
    for (const s of result.samples.values()) expect(s.some((x) => x.connections !== null)).toBe(true);
  });

  it("splits SignalR connections by Endpoint on request, with one more call", async () => {
    const { metrics } = adaptersFor(emu);
    const id = signalrId("east-1");
    const result = await metrics.read([{ resourceId: id, region: "eastus" }], {
      start: START,
      end: END,
      connectionsByEndpoint: true,
    });
    expect(result.calls).toBe(3);
    const s = (result.samples.get(id) as MetricSample[])[6] as MetricSample;
    expect(s.clientConnections).toBeGreaterThanOrEqual(1_500);
    expect(s.serverConnections).toBeGreaterThanOrEqual(5);
    expect((result.samples.get(id) as MetricSample[]).at(-1)?.clientConnections).toBeNull();
  });

  it("gives a resource queried in the wrong region empty series, as Azure does", async () => {
    const { metrics } = adaptersFor(emu);
    const id = signalrId("east-1");
    const result = await metrics.read([{ resourceId: id, region: "westeurope" }], { start: START, end: END });
    expect(result.failures).toEqual([]);
    expect(result.samples.get(id)).toEqual([]);
  });

  it("keeps all-null series null and empty timeseries empty", async () => {
    const { metrics } = adaptersFor(emu);
    const id = many[3] as string;
    // Both queries of the batch (Maximum, Total) answer that way.
    emu.control.addFault({ path: "**/metrics:getBatch", action: { kind: "nullSeries" }, times: 2 });
    const nulls = await metrics.read([{ resourceId: id, region: "westeurope" }], { start: START, end: END });
    const samples = nulls.samples.get(id) as MetricSample[];
    expect(samples).toHaveLength(11);
    for (const s of samples) {
      expect([s.serverLoadPercent, s.connections, s.messagesPerSecond, s.inboundBytesPerSecond]).toEqual([
        null,
        null,
        null,
        null,
      ]);
    }
    emu.control.addFault({ path: "**/metrics:getBatch", action: { kind: "emptyTimeseries" }, times: 2 });
    const empty = await metrics.read([{ resourceId: id, region: "westeurope" }], { start: START, end: END });
    expect(empty.samples.get(id)).toEqual([]);
  });

  it("rejects, like Azure, a dimension filter that a requested metric lacks", async () => {
    const client = new MetricsClient(emu.metricsEndpoint("westeurope"), staticCredential(), {
      tlsOptions: { ca: emu.caPem },
    });
    const err = await caught(() =>
      client.queryResources(
        [many[0] as string],
        ["ServerLoad", "ConnectionCount"],
        "Microsoft.SignalRService/SignalR",
        {
          filter: "Endpoint eq '*'",
        },
      ),
    );
    expect((err as { statusCode?: number }).statusCode).toBe(400);
    expect((err as Error).message).toContain("does not support requested dimension combination");
  });

  it("rejects more than 50 resources and mixed subscriptions", async () => {
    const client = new MetricsClient(emu.metricsEndpoint("westeurope"), staticCredential(), {
      tlsOptions: { ca: emu.caPem },
    });
    const tooMany = await caught(() =>
      client.queryResources(many.slice(0, 51), ["ServerLoad"], "Microsoft.SignalRService/SignalR"),
    );
    expect((tooMany as Error).message).toContain("At most 50");
    const mixed = await caught(() =>
      client.queryResources(
        [many[0] as string, signalrId("other-sub", SUB_B)],
        ["ServerLoad"],
        "Microsoft.SignalRService/SignalR",
      ),
    );
    expect((mixed as { statusCode?: number }).statusCode).toBe(400);
  });

  it("turns a 400 into an InvalidRequestError for the batch, not a crash", async () => {
    const { metrics } = adaptersFor(emu);
    emu.control.addFault({
      path: "**/metrics:getBatch",
      action: { kind: "status", status: 400, code: "BadRequest", message: "bad" },
      times: 2,
    });
    const result = await metrics.read([{ resourceId: many[0] as string, region: "westeurope" }], {
      start: START,
      end: END,
    });
    expect(result.failures.map((f) => f.aggregation).sort()).toEqual(["Maximum", "Total"]);
    for (const f of result.failures) expect(f.error).toBeInstanceOf(InvalidRequestError);
    expect(result.samples.size).toBe(0);
  });

  it.each<["Maximum" | "Total", string[], string[]]>([
    [
      "Total",
      ["serverLoadPercent", "connectionQuotaUtilizationPercent", "connections"],
      ["messagesPerSecond", "inboundBytesPerSecond", "outboundBytesPerSecond"],
    ],
    [
      "Maximum",
      ["messagesPerSecond", "inboundBytesPerSecond", "outboundBytesPerSecond"],
      ["serverLoadPercent", "connectionQuotaUtilizationPercent", "connections"],
    ],
  ])(
    "a failed %s query keeps the other query's data; its own fields unknown, never 0",
    async (aggregation, kept, lost) => {
      const { metrics } = adaptersFor(emu);
      const id = many[11] as string;
      emu.control.addFault({
        path: "**/metrics:getBatch",
        query: { aggregation },
        action: { kind: "status", status: 503, code: "ServiceUnavailable", message: "try later" },
      });
      const result = await metrics.read([{ resourceId: id, region: "westeurope" }], {
        start: START,
        end: END,
      });
      expect(result.calls).toBe(2);
      expect(result.failures).toHaveLength(1);
      expect(result.failures[0]).toMatchObject({ part: "metrics", aggregation, fields: lost });
      expect(result.failures[0]?.error).toBeInstanceOf(TransientError);
      const complete = (result.samples.get(id) as MetricSample[]).find(
        (s) => s.time.toISOString() === "2025-03-03T11:56:00.000Z",
      ) as MetricSample;
      for (const f of kept) expect(complete[f as keyof MetricSample]).toEqual(expect.any(Number));
      for (const f of lost) expect(complete[f as keyof MetricSample]).toBeNull();
      expect(complete.zeroFilled).toBeUndefined();
    },
  );

  it("a counter answered with an error code stays unknown beside known gauges (errorCode per metric)", async () => {
    const { metrics } = adaptersFor(emu);
    const id = signalrId("quiet");
    emu.control.addFault({
      path: "**/metrics:getBatch",
      query: { aggregation: "Total" },
      action: { kind: "metricError", metrics: ["InboundTraffic"], code: "InternalError", message: "oops" },
    });
    const result = await metrics.read([{ resourceId: id, region: "westeurope" }], { start: START, end: END });
    expect(result.failures).toEqual([]);
    const s = (result.samples.get(id) as MetricSample[])[3] as MetricSample;
    expect(s.connections).toEqual(expect.any(Number));
    expect([s.messagesPerSecond, s.inboundBytesPerSecond, s.outboundBytesPerSecond]).toEqual([0, null, 0]);
    expect(s.zeroFilled).toEqual(["messagesPerSecond", "outboundBytesPerSecond"]);
  });

  it("throttles getBatch per subscription once switched on: 429 with Retry-After, the scope gated", async () => {
    const { metrics } = adaptersFor(emu);
    emu.control.setMetricsRateLimit({ capacity: 3, refillPerSecond: 0.05 });
    try {
      const id = many[12] as string;
      const first = await metrics.read([{ resourceId: id, region: "westeurope" }], {
        start: START,
        end: END,
      });
      expect(first.failures).toEqual([]);
      const second = await metrics.read([{ resourceId: id, region: "westeurope" }], {
        start: START,
        end: END,
      });
      // The subscription's bucket had one token left: one of the two queries is refused (429),
      // the other answers — its data is kept.
      const served = emu.control.requests().filter((r) => r.kind === "getBatch");
      expect(served.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
      expect(emu.control.calls().rateLimited).toBe(1);
      expect(second.calls).toBe(2);
      expect(second.failures).toHaveLength(1);
      const throttled = second.failures[0]?.error as ThrottledError;
      expect(throttled).toBeInstanceOf(ThrottledError);
      expect(throttled.notBefore.getTime() - emu.clock.now().getTime()).toBe(20_000); // 1 token at 0.05/s
      expect(second.samples.get(id)).toHaveLength(11);
      // Then the scope is gated: no request until the asked time.
      const third = await metrics.read([{ resourceId: id, region: "westeurope" }], {
        start: START,
        end: END,
      });
      expect(third.calls).toBe(0);
      expect(third.failures.map((f) => (f.error as ThrottledError).fromGate)).toEqual([true, true]);
      // Another subscription has its own bucket.
      const other = await metrics.read(
        [{ resourceId: signalrId("other-sub", SUB_B), region: "westeurope" }],
        {
          start: START,
          end: END,
        },
      );
      expect(other.failures).toEqual([]);
    } finally {
      emu.control.setMetricsRateLimit(undefined);
    }
  });

  it("splits a batch Azure rejects with a 400 until only the resource that causes it fails", async () => {
    const { metrics } = adaptersFor(emu);
    const ids = many.slice(20, 28);
    const bad = ids[5] as string;
    emu.control.addFault({
      path: "**/metrics:getBatch",
      resourceIds: [bad],
      action: { kind: "status", status: 400, code: "BadRequest", message: "rejected" },
    });
    try {
      const result = await metrics.read(
        ids.map((resourceId) => ({ resourceId, region: "westeurope" })),
        { start: START, end: END },
      );
      // 8 resources, per query (Maximum, Total): the batch, then halves of 4, 2 and 1 along the
      // rejected one's path.
      expect(result.calls).toBe(14);
      expect(result.failures.map((f) => f.batch.resourceIds)).toEqual([[bad], [bad]]);
      expect(result.failures[0]?.error).toBeInstanceOf(InvalidRequestError);
      expect([...result.samples.keys()].sort()).toEqual(ids.filter((id) => id !== bad).sort());
      for (const [, samples] of result.samples) expect(samples.length).toBeGreaterThan(0);
      recordFault({
        id: "monitor-400-one-resource-of-batch",
        endpoint: "Azure Monitor",
        fault: "getBatch answers 400 whenever one given resource of a batch of 8 is in the request",
        outcome:
          "the batch is split until only that resource fails (InvalidRequestError); the other 7 get their samples",
        test: "test/azure/metrics.test.ts > splits a batch Azure rejects with a 400 until only the resource that causes it fails",
        figures: {
          getBatchCalls: result.calls,
          resourcesFailed: new Set(result.failures.flatMap((f) => f.batch.resourceIds)).size,
          resourcesServed: result.samples.size,
        },
      });
    } finally {
      emu.control.clearFaults();
    }
  });

  it("moves with the virtual clock: later minutes fill in", async () => {
    const { metrics } = adaptersFor(emu);
    const id = many[9] as string;
    emu.control.advance(5 * MINUTE);
    const result = await metrics.read([{ resourceId: id, region: "westeurope" }], { start: START, end: END });
    const samples = result.samples.get(id) as MetricSample[];
    expect(samples.every((s) => s.connections !== null)).toBe(true);
  });
});
