/**
 * Demand history through the real `MetricsClient.queryResources` (metrics:getBatch) against the
 * emulator: past days at PT1H and PT5M follow the emulator's daily traffic model (a visible
 * cycle), two queries per batch and span (Maximum for the connections and the quota utilization,
 * Total for the traffic), the hourly refresh reads only the new buckets, and a failed or hanging
 * call is confined to its batch while the one-minute metrics still read.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { DemandPoint } from "../../src/autoscale/demand-history.js";
import { HistoryReader, type HistoryTarget } from "../../src/azure/index.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import { dailyPattern } from "../../src/traffic/index.js";
import { adaptersFor, resetEmulator, signalrId, startTestEmulator, T0, webPubSubId } from "./helpers.js";

const CHAT = signalrId("chat");
const WPS = webPubSubId("wps-chat");
const EAST = signalrId("east-chat");

describe("demand history against the emulator", { timeout: 60_000 }, () => {
  let emu: RunningEmulator;

  beforeAll(async () => {
    const daily = (peak: number) => ({
      kind: "pattern" as const,
      pattern: dailyPattern(14, 0.25),
      peakConnections: peak,
    });
    emu = await startTestEmulator({
      noiseAmplitude: 0,
      instances: [
        { resourceId: CHAT, location: "westeurope", units: 10, demand: daily(8_000) },
        { resourceId: WPS, location: "westeurope", sku: "Standard_S1", units: 10, demand: daily(4_000) },
        { resourceId: EAST, location: "eastus", units: 10, demand: daily(6_000) },
      ],
    });
  });
  afterAll(async () => {
    await emu?.stop();
  });
  beforeEach(() => resetEmulator(emu));

  const want = (grain: "5m" | "1h", days = 7): HistoryTarget[] => [
    { resourceId: CHAT, region: "westeurope", days, grain },
    { resourceId: WPS, region: "westeurope", days, grain },
    { resourceId: EAST, region: "eastus", days, grain },
  ];

  it("serves past days at PT1H: a daily cycle peaking at 14:00 UTC, connections and traffic", async () => {
    const reader = new HistoryReader(adaptersFor(emu).metrics);
    reader.want(want("1h"), T0.getTime());
    const report = await reader.refresh(T0.getTime());
    // Per service and region (SignalR westeurope, Web PubSub westeurope, SignalR eastus) one batch,
    // two queries each.
    expect(report.calls).toBe(6);
    expect(emu.control.calls().getBatch).toBe(6);
    expect(emu.control.requests().every((r) => r.status === 200)).toBe(true);
    for (const id of [CHAT, WPS, EAST]) {
      const h = reader.get(id, "1h");
      expect(h?.error).toBeUndefined();
      expect(h?.grainSeconds).toBe(3_600);
      expect(h?.points).toHaveLength(7 * 24);
    }
    const points = reader.get(CHAT, "1h")?.points as readonly DemandPoint[];
    // Clock 12:00:30: the newest hour complete for 10 minutes is 10:00–11:00.
    expect(new Date(points.at(-1)?.timeMs ?? 0).toISOString()).toBe("2025-03-03T10:00:00.000Z");
    expect(points[0]?.timeMs).toBe(Date.parse("2025-02-24T11:00:00Z"));
    for (let day = 0; day < 6; day++) {
      const of = points.slice(13 + day * 24, 13 + (day + 1) * 24); // midnight to midnight
      const peak = of.reduce((a, b) => ((b.connections ?? 0) > (a.connections ?? 0) ? b : a));
      const trough = of.reduce((a, b) => ((b.connections ?? 0) < (a.connections ?? 0) ? b : a));
      expect(new Date(peak.timeMs).getUTCHours()).toBeGreaterThanOrEqual(13);
      expect(new Date(peak.timeMs).getUTCHours()).toBeLessThanOrEqual(14);
      expect(new Date(trough.timeMs).getUTCHours()).toBeGreaterThanOrEqual(1);
      expect(new Date(trough.timeMs).getUTCHours()).toBeLessThanOrEqual(2);
      expect(peak.connections).toBeGreaterThan(7_900);
      expect(peak.connections).toBeLessThan(8_200);
      expect(trough.connections).toBeGreaterThan(1_900);
      expect(trough.connections).toBeLessThan(2_200);
      // The quota utilization beside them: 8,000 of 10 units' 10,000, 2,000 at the trough.
      expect(peak.quotaPercent).toBeGreaterThan(79);
      expect(peak.quotaPercent).toBeLessThan(83);
      expect(trough.quotaPercent).toBeGreaterThan(19);
      expect(trough.quotaPercent).toBeLessThan(23);
      // Traffic follows the connections.
      expect(peak.bytesPerSecond).toBeGreaterThan(3 * (trough.bytesPerSecond ?? 0));
    }
    const wps = reader.get(WPS, "1h")?.points ?? [];
    expect(Math.max(...wps.map((p) => p.connections ?? 0))).toBeGreaterThan(3_900);
  });

  it("serves PT5M over two weeks in calls of at most 2,016 buckets, then refreshes hourly with one call per batch", async () => {
    const reader = new HistoryReader(adaptersFor(emu).metrics);
    const targets = want("5m", 14).filter((t) => t.resourceId === CHAT);
    reader.want(targets, T0.getTime());
    const first = await reader.refresh(T0.getTime());
    expect(first.calls).toBe(4); // two spans × two queries
    const h1 = reader.get(CHAT, "5m");
    expect(h1?.points).toHaveLength(14 * 288);
    expect(h1?.points.every((p) => p.connections !== null && p.bytesPerSecond !== null)).toBe(true);

    // Read at 12:00:30, up to 11:50. Nothing is due until the next period (12:10); at 13:10 one
    // incremental call reads 11:50–13:00.
    emu.control.advance(5 * 60_000);
    reader.want(targets, emu.clock.nowMs());
    expect(reader.due(emu.clock.nowMs())).toBe(false);
    emu.control.advance(65 * 60_000);
    reader.want(targets, emu.clock.nowMs());
    emu.control.resetRequests();
    const second = await reader.refresh(emu.clock.nowMs());
    expect(second.calls).toBe(2); // one span × two queries
    expect(second.reads).toEqual([expect.objectContaining({ kind: "incremental", points: 14 })]);
    const h2 = reader.get(CHAT, "5m");
    expect(h2?.points).toHaveLength(14 * 288);
    expect(new Date(h2?.points.at(-1)?.timeMs ?? 0).toISOString()).toBe("2025-03-03T12:55:00.000Z");
    expect(h2?.points[0]).toBe(h1?.points[14]);
  });

  it("confines a failing call to its batch, and a hanging one to its deadline", async () => {
    const adapters = adaptersFor(emu, { requestTimeoutMs: 1_000 });
    const reader = new HistoryReader(adapters.metrics);
    emu.control.addFault({
      method: "POST",
      path: "/metrics/eastus/**",
      action: { kind: "status", status: 503, code: "ServiceUnavailable" },
    });
    emu.control.addFault({
      method: "POST",
      path: "/metrics/westeurope/**",
      resourceIds: [WPS],
      action: { kind: "hang" },
    });
    reader.want(want("1h"), T0.getTime());
    const started = performance.now();
    const report = await reader.refresh(T0.getTime());
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(report.failedCalls).toBe(4); // two batches × two queries
    expect(reader.get(EAST, "1h")).toMatchObject({ points: [], error: expect.any(String) });
    expect(reader.get(WPS, "1h")).toMatchObject({ points: [], error: expect.any(String) });
    expect(reader.get(CHAT, "1h")?.points).toHaveLength(7 * 24);

    // The one-minute metrics of the healthy instance still read.
    emu.control.clearFaults();
    const minutes = await adapters.metrics.read([{ resourceId: CHAT, region: "westeurope" }], {
      start: new Date(T0.getTime() - 10 * 60_000),
      end: T0,
    });
    expect(minutes.failures).toEqual([]);
    expect(minutes.samples.get(CHAT)?.length).toBeGreaterThan(5);
  });
});
