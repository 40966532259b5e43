/**
 * Metrics through the real `MetricsClient.queryResources` (metrics:getBatch) against the
 * emulator: batching (120 resources of one region in 3 calls), names and aggregations per service,
 * typed samples with null kept null, the ingestion delay, the Endpoint split, and faults on the
 * series.
 */
import { MetricsClient } from "@azure/monitor-query-metrics";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InvalidRequestError, type MetricSample } from "../../src/azure/index.js";
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
      ["ServerLoad", "MessageCount"],
      "Microsoft.SignalRService/SignalR",
      { startTime: START, endTime: END, interval: "PT1M", aggregation: "Maximum,Total" },
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
    expect(typeof data[0]?.total).toBe("number");
    expect(data[10]?.maximum).toBeUndefined();
  });

  it("reads 120 resources of one region in 3 calls", async () => {
    const { metrics } = adaptersFor(emu);
    const result = await metrics.read(
      many.map((resourceId) => ({ resourceId, region: "westeurope" })),
      { start: START, end: END },
    );
    expect(result.failures).toEqual([]);
    expect(result.calls).toBe(3);
    const batches = emu.control.requests().filter((r) => r.kind === "getBatch");
    expect(batches.map((r) => r.resourceIds?.length)).toEqual([50, 50, 20]);
    expect(result.samples.size).toBe(120);
    for (const id of many) expect(result.samples.get(id)).toHaveLength(11);
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
    expect(result.calls).toBe(4);
    expect(result.failures).toEqual([]);
    const regions = emu.control
      .requests()
      .map((r) => `${r.subscriptionId}/${r.region}`)
      .sort();
    expect(regions).toEqual([
      `${SUB_A}/eastus`,
      `${SUB_A}/westeurope`,
      `${SUB_A}/westeurope`,
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
    expect(result.calls).toBe(2);
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
    emu.control.addFault({ path: "**/metrics:getBatch", action: { kind: "nullSeries" }, times: 1 });
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
    emu.control.addFault({ path: "**/metrics:getBatch", action: { kind: "emptyTimeseries" }, times: 1 });
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
      times: 1,
    });
    const result = await metrics.read([{ resourceId: many[0] as string, region: "westeurope" }], {
      start: START,
      end: END,
    });
    expect(result.failures[0]?.error).toBeInstanceOf(InvalidRequestError);
    expect(result.samples.size).toBe(0);
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
      // 8 resources: the batch, then halves of 4, 2 and 1 along the rejected one's path.
      expect(result.calls).toBe(7);
      expect(result.failures.map((f) => f.batch.resourceIds)).toEqual([[bad]]);
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
          resourcesFailed: result.failures.length,
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
