/**
 * The demand history of a simulated policy: per-grain points from the replayed minutes (peak
 * connections, highest quota utilization, mean traffic), complete buckets only, the last
 * `historyDays`, rebuilt hourly; and the policy strategy hands it to the planner only for a
 * seasonal forecast.
 */
import { describe, expect, it } from "vitest";
import { parsePolicyYaml } from "../api/index.js";
import { noise, trafficAt } from "../traffic/index.js";
import { ReplayedDemandHistory } from "./demand-history.js";
import { MetricHistory, simulate } from "./engine.js";
import { PolicyStrategy } from "./strategies/policy.js";
import { CONNECTIONS_ONLY, START, testSetup, webPubSubPolicyYaml } from "./testing.js";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** `minutes` of replayed metrics from START, demand rising by one connection a minute. */
function replayed(minutes: number, delayMs = 3 * MIN): MetricHistory {
  const h = new MetricHistory("WebPubSub", START, minutes, delayMs);
  for (let m = 0; m < minutes; m++) {
    const t = trafficAt({
      mix: CONNECTIONS_ONLY,
      offeredConnections: 1_000 + m,
      sku: "Premium_P1",
      units: 10,
      noise: noise("t", m, 0),
      noiseAmplitude: 0,
    });
    h.push(t, noise("t", m, 1));
  }
  return h;
}

describe("ReplayedDemandHistory", () => {
  it("has one point per complete bucket: the minutes' peak connections and mean traffic", () => {
    const metrics = replayed(60);
    const history = new ReplayedDemandHistory("5m", 7);
    // At 00:33 with a 3-minute delay, buckets up to 00:30 are complete: 00:00 … 00:25.
    const h = history.at(START + 33 * MIN, metrics);
    expect(h.grainSeconds).toBe(300);
    expect(h.readAtMs).toBe(START + 33 * MIN);
    expect(h.points.map((p) => (p.timeMs - START) / MIN)).toEqual([0, 5, 10, 15, 20, 25]);
    const second = h.points[1];
    const minutes = [5, 6, 7, 8, 9];
    expect(second?.connections).toBe(Math.max(...minutes.map((k) => metrics.peakConnections(k))));
    const mean = minutes.reduce((a, k) => a + metrics.bytesPerSecond(k), 0) / 5;
    expect(second?.bytesPerSecond).toBeCloseTo(mean, 6);
    // The highest quota utilization of its minutes: about 1,009 of 10 units' 10,000 connections.
    expect(second?.quotaPercent).toBe(Math.max(...minutes.map((k) => metrics.peakQuotaPercent(k))));
    expect(second?.quotaPercent).toBeGreaterThan(9.5);
    expect(second?.quotaPercent).toBeLessThan(11);
  });

  it("hands out the same history until an hour has passed, then the buckets completed since", () => {
    const metrics = replayed(3 * 60);
    const history = new ReplayedDemandHistory("5m", 7);
    const first = history.at(START + 33 * MIN, metrics);
    expect(history.at(START + 60 * MIN, metrics)).toBe(first);
    const later = history.at(START + 93 * MIN, metrics);
    expect(later).not.toBe(first);
    expect(later.points).toHaveLength(18); // 00:00 … 01:25
    expect(later.points[0]).toBe(first.points[0]);
  });

  it("keeps the last historyDays days only", () => {
    const metrics = replayed(9 * 24 * 60);
    const history = new ReplayedDemandHistory("1h", 7);
    const now = START + 9 * DAY;
    const h = history.at(now, metrics);
    expect(h.points).toHaveLength(7 * 24 - 1); // the last hour is not complete (3-minute delay)
    expect(h.points[0]?.timeMs).toBe(now - 7 * DAY);
  });
});

describe("policy strategy: demand history", () => {
  const policy = (anticipation: string) =>
    parsePolicyYaml(
      webPubSubPolicyYaml(
        "seasonal",
        `  units: { min: 1, max: 100 }
  skus: [Premium_P1]
  metrics:
    serverLoad: { targetPercent: 70 }
  pollIntervalSeconds: 60
${anticipation}`,
      ),
    );
  const demand = new Float64Array(2 * 24 * 60).fill(3_000);

  it("passes the replayed history to the planner for a seasonal forecast", () => {
    const strategy = new PolicyStrategy(
      policy("  anticipation: { mode: ForecastOnly, seasonal: { historyDays: 7, grain: 1h } }\n"),
      { sku: "Premium_P1", units: 5 },
    );
    simulate(strategy, testSetup(demand));
    const h = strategy.lastDemandHistory;
    expect(h?.grainSeconds).toBe(3_600);
    // Last poll at 47:59: hours 0 … 46 are complete and the rebuild is at most an hour old.
    expect(h?.points.length).toBeGreaterThanOrEqual(46);
    expect(h?.points.length).toBeLessThanOrEqual(47);
    expect(h?.points[0]?.connections).toBeGreaterThan(2_900);
  });

  it("passes none without a seasonal forecast, or with anticipation Off", () => {
    for (const anticipation of ["", "  anticipation: { mode: Off, seasonal: { historyDays: 7 } }\n"]) {
      const strategy = new PolicyStrategy(policy(anticipation), { sku: "Premium_P1", units: 5 });
      simulate(strategy, testSetup(demand.subarray(0, 120)));
      expect(strategy.lastDemandHistory).toBeUndefined();
    }
  });
});
