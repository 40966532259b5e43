/**
 * Anticipation end to end, on the real API server and the HTTPS emulator: instances whose demand
 * follows the emulator's `daily` cycle (28 past days of it in Azure Monitor), policies with a
 * seasonal forecast read from that history.
 *
 * - `ForecastOnly` shows the forecast in status (the ratio, the units it would ask for, the
 *   `Anticipating` condition) while the rise approaches, and changes nothing: no ARM update, no
 *   scale Event, the instance keeps its units.
 * - `Enabled` scales out ahead of the rise, driven by the seasonal forecast, while the measured
 *   connections are still within the current capacity's tolerance band; the same demand on a
 *   policy without anticipation scales out only later, once the metrics show the rise.
 *
 * The set-up: Premium_P1 × 5 (5,000 connections), a daily cosine peaking at 4,750 connections
 * at 14:00 UTC with a trough of 10 % — the history is never above the quota, so it is uncensored.
 * Five units, where the ladder's rungs are one unit apart: a forecast just above the tolerance
 * band is a rung of its own (at 10 units the next rung is 20, and a forecast of 12 keeps 10, the
 * nearer rung: docs/anticipation.md). Connections target 50 %, tolerance 10 %: the metrics ask
 * for more than 5 units once a minute's connection count exceeds 2,750, which the steep morning
 * side of the cycle reaches a little after 08:00 UTC (the "rise" below: the first minute whose
 * count could exceed it, the within-minute swing of the Maximum included, computed from the same
 * traffic model the emulator serves). The virtual clock starts at 07:45 and runs 60 times faster
 * than real time; a scale is said to take 10 minutes, so the lead time is 3 min ingestion delay
 * + 10 min scale + 15 s poll = 795 s. The forecast asks for 6 units (×1.05 over the next 14 min)
 * before the rise, and the anticipated update to 6 units is sent then.
 */
import { describe, expect, it } from "vitest";
import type { CapacityPolicy } from "../../src/api/index.js";
import type { PassReport } from "../../src/controller/operator.js";
import type { InstanceSpec } from "../../src/emulator/index.js";
import {
  dailyPattern,
  defaultMix,
  findEmulatedMetric,
  patternFraction,
  trafficAt,
} from "../../src/traffic/index.js";
import { operatorPerTest, signalrId } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  eventsFor,
  eventsOnce,
  getPolicy,
  policyManifest,
} from "./helpers.js";

const START = new Date("2025-03-03T07:45:00Z");
const PEAK_CONNECTIONS = 4_750;
const DAILY = dailyPattern(14, 0.1);
const UNITS = 5;
const TARGET_PERCENT = 50;
const TOLERANCE = 0.1;
const SCALE_MINUTES = 10;
const MINUTE_MS = 60_000;
/** Connections the metrics must exceed to ask for more than UNITS units (target and tolerance). */
const REACTIVE_THRESHOLD = UNITS * 1000 * (TARGET_PERCENT / 100) * (1 + TOLERANCE);

const ops = operatorPerTest({ stepped: true });

const start = (prefix: string) =>
  ops.start(prefix, { start: START, scaleDurationMs: SCALE_MINUTES * MINUTE_MS });

/** Connections only (server load would add a second signal to reason about). */
const METRICS = {
  connections: { targetPercent: TARGET_PERCENT },
  window: "5m",
  ingestionDelay: "3m",
};

const anticipation = (mode: "ForecastOnly" | "Enabled") => ({
  mode,
  scaleDuration: `${SCALE_MINUTES}m`,
  seasonal: { historyDays: 7, grain: "5m" },
});

/** How far a minute's ConnectionCount Maximum may lie above its value (the emulator's swing). */
const SWING = findEmulatedMetric("SignalR", "ConnectionCount")?.swing ?? 0;

/**
 * The rise: the first minute from START whose connection count (client and server at UNITS
 * units, as the emulator's traffic model serves it, plus the most its Maximum swings) exceeds
 * what the metrics tolerate at UNITS units — no reactive decision can ask for more before it.
 */
function riseMinute(): number {
  for (let t = START.getTime(); t < START.getTime() + 6 * 60 * MINUTE_MS; t += MINUTE_MS) {
    const mid = new Date(t + MINUTE_MS / 2);
    const m = trafficAt({
      mix: defaultMix("SignalR"),
      offeredConnections: Math.round(PEAK_CONNECTIONS * patternFraction(DAILY, START, mid)),
      sku: "Premium_P1",
      units: UNITS,
      noise: 0,
    });
    if ((m.clientConnections + m.serverConnections) * (1 + SWING) > REACTIVE_THRESHOLD) return t;
  }
  throw new Error("the daily cycle never rises above the threshold");
}

/** An instance of UNITS units whose demand (its past days included) follows DAILY. */
const dailyInstance = (resourceId: string): InstanceSpec => ({
  resourceId,
  sku: "Premium_P1",
  units: UNITS,
  demand: { kind: "pattern", pattern: DAILY, peakConnections: PEAK_CONNECTIONS },
});

describe("anticipation with a seasonal forecast", () => {
  it("ForecastOnly shows the forecast ahead of the daily rise and changes nothing", async () => {
    const { kube, ns, requests, harness } = await start("forecast");
    const id = signalrId("forecast-hub");
    harness.emulator.control.addInstance(dailyInstance(id));
    await createPolicy(
      kube,
      policyManifest(ns, "forecast", id, { metrics: METRICS, anticipation: anticipation("ForecastOnly") }),
    );

    // The forecast asks beyond the tolerance band of 10 units: an Enabled policy would scale now.
    const shown = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "forecast");
        const a = p.status?.anticipation;
        expect(a?.forecast).toMatchObject({ state: "Ok", cycle: "Daily" });
        expect(a?.forecast?.ratio).toBeGreaterThan(1);
        expect(a?.units).toBeGreaterThan(UNITS * (1 + TOLERANCE));
        expect(p.status?.lastReasons).toContain("Anticipated");
        return p;
      },
      45_000,
      250,
    );
    const shownAt = harness.emulator.clock.nowMs();
    const a = shown.status?.anticipation;
    expect(a).toMatchObject({
      mode: "ForecastOnly",
      drivenBy: "Seasonal",
      applied: false,
      leadTimeSeconds: 180 + SCALE_MINUTES * 60 + 15,
      scaleDurationSeconds: SCALE_MINUTES * 60,
      scaleDurationSource: "Default",
    });
    expect(a?.forecast?.cycles).toBeGreaterThanOrEqual(3);
    expect(a?.forecast?.readAt).toBeDefined();
    expect(Date.parse(a?.forecast?.historyFrom ?? "")).toBeLessThanOrEqual(START.getTime() - 7 * 86_400_000);
    expect(a?.rules?.map((r) => r.rule)).toEqual(["Seasonal"]);
    expect(condition(shown, "Anticipating")).toMatchObject({ status: "True", reason: "ForecastOnly" });
    expect(condition(shown, "Anticipating")?.message).toMatch(/^Seasonal: daily cycle/);
    // Ahead of the rise: the measured need is still 10 units.
    expect(shownAt).toBeLessThan(riseMinute());
    expect(shown.status?.lastSample?.connections).toBeLessThanOrEqual(REACTIVE_THRESHOLD);
    expect(shown.status?.desired).toMatchObject({ sku: "Premium_P1", units: UNITS });

    // A few more passes that each see the same ask (still before the rise): nothing changes.
    const passes = harness.reports.length;
    await harness.eventually(() => expect(harness.reports.length).toBeGreaterThan(passes + 8), 10_000, 100);
    const after = await getPolicy(kube, ns, "forecast");
    expect(after.status?.anticipation?.forecast?.ratio).toBeGreaterThan(1);
    expect(after.status?.anticipation?.units).toBeGreaterThan(UNITS);
    expect(after.status?.current).toMatchObject({ sku: "Premium_P1", units: UNITS });
    expect(after.status?.desired).toMatchObject({ sku: "Premium_P1", units: UNITS });
    expect(after.status?.operation).toBeUndefined();
    expect(harness.emulator.control.instance(id)).toMatchObject({
      sku: "Premium_P1",
      units: UNITS,
      provisioningState: "Succeeded",
    });
    expect(armWritesFor(requests.all, id)).toHaveLength(0);
    const reasons = (await eventsFor(kube, ns, "forecast")).map((e) => e.reason);
    expect(reasons).not.toContain("ScalingOut");
    expect(reasons).not.toContain("AnticipatedScaleOut");
    expect(harness.emulator.clock.nowMs()).toBeLessThan(riseMinute());
  });

  it("Enabled scales out before the daily rise, ahead of a reactive policy on the same demand", async () => {
    const { kube, ns, requests, harness } = await start("anticipate");
    const ahead = signalrId("ahead-hub");
    const reactive = signalrId("reactive-hub");
    for (const id of [ahead, reactive]) harness.emulator.control.addInstance(dailyInstance(id));
    await createPolicy(
      kube,
      policyManifest(ns, "ahead", ahead, { metrics: METRICS, anticipation: anticipation("Enabled") }),
    );
    await createPolicy(kube, policyManifest(ns, "reactive", reactive, { metrics: METRICS }));

    /** Virtual time (ms) of the instance's one ARM update, once it is sent. */
    const updateSent = (id: string, timeoutMs: number) =>
      harness.eventually(
        () => {
          const w = armWritesFor(requests.all, id);
          expect(w).toHaveLength(1);
          return Date.parse(w[0]?.at ?? "");
        },
        timeoutMs,
        100,
      );

    // The anticipating policy's update.
    const sentAt = await updateSent(ahead, 45_000);
    const rise = riseMinute();
    expect(sentAt).toBeLessThan(rise);

    // The pass that sent it: the forecast asked, the metrics alone did not.
    const decision = await harness.eventually(
      () => {
        const scaled = harness.reports.find(
          (r: PassReport) => r.policy.metadata.name === "ahead" && r.result?.outcome === "scaled",
        );
        expect(scaled?.result?.decision).toBeDefined();
        return scaled?.result?.decision;
      },
      5_000,
      50,
    );
    expect(decision?.desired).toMatchObject({ sku: "Premium_P1", units: 6 });
    expect(decision?.anticipation).toMatchObject({ applied: true, drivenBy: "Seasonal", mode: "Enabled" });
    expect(decision?.anticipation?.units).toBeGreaterThan(UNITS * (1 + TOLERANCE));
    expect(decision?.reasons.find((r) => r.code === "Anticipated")).toMatchObject({ name: "Seasonal" });
    const connections = decision?.signals.find((s) => s.signal === "connections");
    expect(connections?.desiredUnits).toBe(UNITS);
    expect(connections?.value).toBeLessThanOrEqual(REACTIVE_THRESHOLD);
    // Nor did the instance's own connections in the minute the update was sent (the metrics of
    // that minute were still to come): within what 10 units carry at target and tolerance.
    const minute = harness.emulator.control.traffic(ahead, new Date(sentAt));
    expect(minute).toBeDefined();
    expect((minute?.clientConnections ?? 0) + (minute?.serverConnections ?? 0)).toBeLessThanOrEqual(
      REACTIVE_THRESHOLD,
    );

    // Status and Events: the update in flight, anticipation applied, an AnticipatedScaleOut Event.
    const inFlight = await harness.eventually(
      async () => {
        const p: CapacityPolicy = await getPolicy(kube, ns, "ahead");
        expect(p.status?.operation?.to).toEqual({ sku: "Premium_P1", units: 6 });
        expect(p.status?.anticipation).toMatchObject({ applied: true, drivenBy: "Seasonal" });
        return p;
      },
      10_000,
      100,
    );
    expect(condition(inFlight, "Anticipating")).toMatchObject({ status: "True", reason: "Enabled" });
    const events = await harness.eventually(
      async () => {
        const e = await eventsFor(kube, ns, "ahead");
        expect(e.map((x) => x.reason)).toEqual(expect.arrayContaining(["ScalingOut", "AnticipatedScaleOut"]));
        return e;
      },
      10_000,
      100,
    );
    expect(events.find((e) => e.reason === "AnticipatedScaleOut")?.message).toMatch(
      /^Premium_P1 × 5 → Premium_P1 × 6 units ahead of the demand: Seasonal asks for \d+ units \(measured need 5,/,
    );

    // The same demand without anticipation: scaled only once the metrics showed the rise.
    const reactiveAt = await updateSent(reactive, 30_000);
    expect(reactiveAt - sentAt).toBeGreaterThanOrEqual(5 * MINUTE_MS);
    expect(reactiveAt).toBeGreaterThanOrEqual(rise);
    const reactiveReasons = (
      await eventsOnce(kube, ns, "reactive", (es) => es.some((e) => e.reason === "ScalingOut"))
    ).map((e) => e.reason);
    expect(reactiveReasons).not.toContain("AnticipatedScaleOut");
  });
});
