import { describe, expect, it } from "vitest";
import { bucketConnections, DISAGREEMENT_TOLERANCE, describeDisagreements } from "./connections.js";
import { decide } from "./decide.js";
import { input, samples, spec } from "./testing.js";

const T = Date.parse("2025-06-02T11:55:00Z");
const at = (connections: number | null, quota: number | null, units = 10, comparable = true) =>
  bucketConnections({ connections, connectionQuotaUtilizationPercent: quota }, T, units, comparable);

describe("bucketConnections: one quantity, two measures", () => {
  it("the tolerance is 1.5 % of the quota", () => {
    expect(DISAGREEMENT_TOLERANCE).toBe(0.015);
  });

  it.each<[string, number | null, number | null, number | null, string | undefined, boolean]>([
    ["only ConnectionCount", 4_000, null, 4_000, "ConnectionCount", false],
    ["only the quota: 42 % of 10 units", null, 42, 4_200, "ConnectionQuotaUtilization", false],
    ["neither", null, null, null, undefined, false],
    ["agreeing: 5,000 and 50.9 % (5,090, 90 apart)", 5_000, 50.9, 5_000, "ConnectionCount", false],
    ["at the tolerance: 5,000 and 51.5 % (150 apart)", 5_000, 51.5, 5_000, "ConnectionCount", false],
    ["just beyond: 5,000 and 51.6 % (160 apart)", 5_000, 51.6, 5_160, "ConnectionQuotaUtilization", true],
    ["the count lower: 2,000 and 50 % (5,000)", 2_000, 50, 5_000, "ConnectionQuotaUtilization", true],
    ["the count higher: 5,000 and 20 % (2,000)", 5_000, 20, 5_000, "ConnectionCount", true],
  ])("%s", (_name, count, quota, value, measure, disagree) => {
    const c = at(count, quota);
    if (value === null) expect(c.value).toBeNull();
    else expect(c.value).toBeCloseTo(value, 6);
    expect(c.measure).toBe(measure);
    expect(c.disagreement !== undefined).toBe(disagree);
  });

  it("reads the percentage against the units then", () => {
    expect(at(null, 50, 20).value).toBe(10_000);
    expect(at(2_000, 50, 20).disagreement).toEqual({
      start: T,
      count: 2_000,
      quotaPercent: 50,
      units: 20,
      fromQuota: 10_000,
      difference: 8_000,
    });
  });

  it("does not compare them in a bucket that overlaps a change or settles: ConnectionCount", () => {
    expect(at(2_000, 50, 10, false)).toEqual({ value: 2_000, measure: "ConnectionCount" });
  });

  it("says where, by how much and which was used", () => {
    const found = [at(2_000, 50), { ...at(4_000, 50) }].flatMap((c, i) =>
      c.disagreement ? [{ ...c.disagreement, start: T + i * 60_000 }] : [],
    );
    expect(describeDisagreements(found)).toBe(
      "ConnectionCount and ConnectionQuotaUtilization disagree at 11:55–11:56 UTC (tolerance 1.5 % of the quota): at most by 3,000 connections (30 % of 10,000) at 11:55, ConnectionCount 2,000 vs ConnectionQuotaUtilization 50 % × 10 units × 1,000 = 5,000; the higher of each minute is used (ConnectionQuotaUtilization), the lower is never trusted for a scale-in",
    );
    expect(describeDisagreements([])).toBeUndefined();
  });
});

describe("the decision never scales in on the lower of two disagreeing measures", () => {
  /** Connections alone at 80 %: the server load signal off. */
  function connectionsOnly(more: Parameters<typeof spec>[0] = {}) {
    const s = spec({ metrics: { connections: { targetPercent: 80 } }, ...more });
    delete s.metrics.serverLoad;
    return s;
  }

  it("ConnectionCount 2,000 but the quota 50 % full at 10 units: judged on 5,000 — 7 units, not 3", () => {
    const d = decide(
      input({
        spec: connectionsOnly(),
        samples: samples({ connections: 2_000, connectionQuotaUtilizationPercent: 50 }),
      }),
    );
    const report = d.signals.find((s) => s.signal === "connections");
    expect(report).toMatchObject({
      status: "Ok",
      value: 5_000,
      desiredUnits: 7,
      measure: "ConnectionQuotaUtilization",
    });
    expect(report?.message).toBe(
      "5,000 connections (from ConnectionQuotaUtilization) vs 8,000 (10 units × 1,000 × 80 %), ratio 0.63: 7 units",
    );
    expect(d.reasons.find((r) => r.code === "ConnectionsDisagree")?.message).toBe(
      "ConnectionCount and ConnectionQuotaUtilization disagree at 11:52–11:56 UTC (tolerance 1.5 % of the quota): at most by 3,000 connections (30 % of 10,000) at 11:52, ConnectionCount 2,000 vs ConnectionQuotaUtilization 50 % × 10 units × 1,000 = 5,000; the higher of each minute is used (ConnectionQuotaUtilization), the lower is never trusted for a scale-in",
    );
    expect(d.desired?.units).toBe(7);
    // The same window with the count alone would have gone to 3 units.
    const countOnly = decide(input({ spec: connectionsOnly(), samples: samples({ connections: 2_000 }) }));
    expect(countOnly.desired?.units).toBe(3);
  });

  it("the quota lower than the count: the count, 5,000 — the quota's 2,000 does not lower it", () => {
    const d = decide(
      input({
        spec: connectionsOnly(),
        samples: samples({ connections: 5_000, connectionQuotaUtilizationPercent: 20 }),
      }),
    );
    expect(d.signals.find((s) => s.signal === "connections")).toMatchObject({
      value: 5_000,
      measure: "ConnectionCount",
    });
    expect(d.desired?.units).toBe(7);
    expect(d.reasons.some((r) => r.code === "ConnectionsDisagree")).toBe(true);
  });

  it("agreeing measures: the count, and no word of a disagreement", () => {
    const d = decide(
      input({
        spec: connectionsOnly(),
        samples: samples({ connections: 2_000, connectionQuotaUtilizationPercent: 20.5 }),
      }),
    );
    expect(d.signals.find((s) => s.signal === "connections")).toMatchObject({
      value: 2_000,
      measure: "ConnectionCount",
    });
    expect(d.reasons.some((r) => r.code === "ConnectionsDisagree")).toBe(false);
    expect(d.desired?.units).toBe(3);
  });

  it("the app servers are sized on the same connections", () => {
    const withApp = connectionsOnly({
      appServer: { deploymentName: "hub", connectionsPerReplica: 1_000, replicas: { min: 1, max: 50 } },
    });
    const d = decide(
      input({
        spec: withApp,
        samples: samples({ connections: 2_000, connectionQuotaUtilizationPercent: 50 }),
        current: { sku: "Premium_P1", units: 10, replicas: 5 },
      }),
    );
    expect(d.appServer?.replicas).toBe(5); // 5,000 connections ÷ 1,000 a replica
    const countOnly = decide(
      input({
        spec: withApp,
        samples: samples({ connections: 2_000 }),
        current: { sku: "Premium_P1", units: 10, replicas: 5 },
      }),
    );
    expect(countOnly.appServer?.replicas).toBe(2);
  });
});
