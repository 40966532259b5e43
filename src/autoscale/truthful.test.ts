/**
 * Properties of the pass planner on metrics read truthfully:
 * - on constant demand, after any single scale (any ladder step, any update duration up to 10
 *   minutes, applied at any second of a minute), the passes that follow plan no other update;
 * - no value of one sample (finite or not) moves the recommendation beyond what that sample at
 *   its ceiling (saturation) asks for.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import { DEFAULT_LADDERS, type ScalableSku } from "../capacity/skus.js";
import { decide } from "./decide.js";
import type { InstanceView } from "./operation.js";
import { completePass, mergeStatus, planPass } from "./pass.js";
import type { MetricSample, SampleField } from "./samples.js";
import { blank, NOW, policy, samples, spec } from "./testing.js";

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Every size of the P1 and P2 ladders. */
const SIZES: { sku: ScalableSku; units: number }[] = [
  ...DEFAULT_LADDERS.Premium_P1.map((units) => ({ sku: "Premium_P1" as const, units })),
  ...DEFAULT_LADDERS.Premium_P2.filter((u) => u > 100).map((units) => ({
    sku: "Premium_P2" as const,
    units,
  })),
];

interface Case {
  from: { sku: ScalableSku; units: number };
  to: { sku: ScalableSku; units: number };
  /** Demand as a share of the target at `to` (within the tolerance band). */
  fit: number;
  /** How long the update takes, ms (0–10 minutes). */
  durationMs: number;
  /** When the first pass runs, ms after a whole minute. */
  phaseMs: number;
  settleSeconds: number;
}

/**
 * Runs passes every 30 s (15 s while the update runs) for three hours after a scale `from → to`
 * was sent at NOW + phase, on constant demand; returns the updates the passes planned.
 */
function afterOneScale(c: Case): number[] {
  const s = spec({
    skus: ["Premium_P1", "Premium_P2"],
    units: { min: 1, max: 1000 },
    metrics: { serverLoad: { targetPercent: 70 }, connections: { targetPercent: 80 } },
    behavior: { settleSeconds: c.settleSeconds },
  });
  const demandUnits = 0.7 * c.to.units * c.fit;
  const sentMs = NOW + c.phaseMs;
  const appliedMs = sentMs + c.durationMs;
  const loadAt = (units: number) => Math.min(100, (demandUnits / units) * 100);
  const connectionsAt = (units: number) => Math.min(units * 1000, demandUnits * 1000 * (0.8 / 0.7));
  /** A bucket's maximum over the parts each size served. */
  const bucket = (start: number): MetricSample => {
    const parts = [];
    if (start < appliedMs) parts.push(c.from.units);
    if (start + MIN > appliedMs) parts.push(c.to.units);
    return {
      ...blank(start),
      serverLoadPercent: Math.max(...parts.map(loadAt)),
      connections: Math.max(...parts.map(connectionsAt)),
    };
  };
  let status: Partial<CapacityPolicyStatus> = {
    current: { ...c.from },
    operation: { startedAt: iso(sentMs), from: { ...c.from }, to: { ...c.to } },
  };
  const updates: number[] = [];
  let now = sentMs + 1000;
  while (now < sentMs + 3 * 3_600_000) {
    const done = now >= appliedMs;
    const instance: InstanceView = {
      ...(done ? c.to : c.from),
      provisioningState: done ? "Succeeded" : "Updating",
      terminal: done,
    };
    const buckets: MetricSample[] = [];
    for (let t = Math.floor(now / MIN) * MIN - 20 * MIN; t < now - MIN; t += MIN) buckets.push(bucket(t));
    const plan = planPass({ policy: policy(s), status, instance, samples: buckets, now });
    if (plan.update) updates.push(plan.update.to.units);
    const write = completePass(
      plan,
      plan.update ? { update: { kind: "accepted", startedAt: iso(now) } } : {},
    );
    status = mergeStatus(status, write.patch);
    now += status.operation ? 15_000 : 30_000;
  }
  return updates;
}

describe("constant demand after any single scale: no other update", () => {
  const size = fc.constantFrom(...SIZES);
  const scale = fc
    .record({
      from: size,
      to: size,
      fit: fc.double({ min: 0.93, max: 1.0, noNaN: true }),
      durationMs: fc.integer({ min: 0, max: 600 }).map((s) => s * 1000),
      phaseMs: fc.integer({ min: 0, max: 59 }).map((s) => s * 1000),
      settleSeconds: fc.constantFrom(0, 300),
    })
    .filter((c) => c.from.units !== c.to.units);

  // A property over many simulated scales: seconds of CPU, more on a loaded machine.
  it("for every ladder step and update duration up to 10 minutes", { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(scale, (c) => {
        expect(afterOneScale(c)).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it.each([
    ["20 → 10 applied 4 s into a minute", 20, 10, 184_000],
    ["10 → 20 in 10 minutes", 10, 20, 600_000],
    ["100 → 200 (Premium_P2)", 100, 200, 300_000],
    ["300 → 30, at once", 300, 30, 0],
  ])("%s", (_name, from, to, durationMs) => {
    const sku = (u: number) => (u > 100 ? ("Premium_P2" as const) : ("Premium_P1" as const));
    const c: Case = {
      from: { sku: sku(from), units: from },
      to: { sku: sku(to), units: to },
      fit: 0.95,
      durationMs,
      phaseMs: 0,
      settleSeconds: 300,
    };
    expect(afterOneScale(c)).toEqual([]);
    expect(afterOneScale({ ...c, settleSeconds: 0 })).toEqual([]);
  });
});

describe("one sample's value moves the recommendation at most as far as saturation does", () => {
  const s = spec({
    skus: ["Premium_P1", "Premium_P2"],
    units: { min: 1, max: 1000 },
    metrics: {
      serverLoad: { targetPercent: 70 },
      connections: { targetPercent: 80 },
      traffic: { workload: [{ scenario: "echo", share: 1 }], messageSizeBytes: 1024, targetPercent: 80 },
    },
  });
  const CEILING: Partial<Record<SampleField, (units: number) => number>> = {
    serverLoadPercent: () => 100,
    connectionQuotaUtilizationPercent: () => 100,
    connections: (units) => units * 1000,
  };
  const fields: SampleField[] = [
    "serverLoadPercent",
    "connectionQuotaUtilizationPercent",
    "connections",
    "inboundBytesPerSecond",
    "outboundBytesPerSecond",
    "messagesPerSecond",
  ];
  const anyValue = fc.oneof(
    fc.double({ noNaN: false }),
    fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 4000, 1e12, -1),
    fc.integer({ min: 0, max: 10_000_000 }),
  );

  it("for every field, value and bucket", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SIZES.filter((x) => x.units <= 500)),
        fc.double({ min: 5, max: 90, noNaN: true }),
        fc.constantFrom(...fields),
        // The window: the buckets 8 to 4 minutes before NOW (indices 7–11 of the 15).
        fc.integer({ min: 7, max: 11 }),
        anyValue,
        (current, load, field, index, value) => {
          const base = samples({
            serverLoadPercent: load,
            connectionQuotaUtilizationPercent: load,
            connections: load * current.units * 10,
            inboundBytesPerSecond: load * current.units * 100,
            outboundBytesPerSecond: load * current.units * 100,
            messagesPerSecond: load,
          });
          const recommend = (xs: MetricSample[]) =>
            decide({ policy: policy(s), samples: xs, current, now: NOW }).recommendation?.units ?? 0;
          const withValue = (v: number) => base.map((x, i) => (i === index ? { ...x, [field]: v } : x));
          const got = recommend(withValue(value));
          const ceiling = CEILING[field];
          // Traffic fields: their ceiling is what the current size carries; a saturated traffic
          // signal asks for at least double the units, and never more than the size for that.
          const bound = ceiling
            ? recommend(withValue(ceiling(current.units)))
            : recommend(withValue(Number.MAX_VALUE));
          expect(got).toBeLessThanOrEqual(Math.max(bound, recommend(base)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("ServerLoad 4000 % in one bucket is left out, named in the reasons, and asks for nothing", () => {
    const current = { sku: "Premium_P1" as const, units: 20 };
    const base = samples({ serverLoadPercent: 30 });
    const bad = base.map((x, i) => (i === 10 ? { ...x, serverLoadPercent: 4000 } : x));
    const d = decide({ policy: policy(spec()), samples: bad, current, now: NOW });
    expect(d.recommendation?.units).toBe(9);
    const why = d.reasons.find((r) => r.code === "SampleInvalid");
    expect(why?.message).toContain("ServerLoad 4,000 % at 11:55 UTC");
    // Unknown for its bucket: no scale-in on it.
    expect(d.scaleIn.blockedBy).toContain("MetricsIncomplete");
  });

  it("a percentage just above 100 is read as saturation; connections above the quota likewise", () => {
    const current = { sku: "Premium_P1" as const, units: 10 };
    const connectionsOnly = spec({ metrics: { connections: { targetPercent: 80 } } });
    delete connectionsOnly.metrics.serverLoad;
    const load = decide({
      policy: policy(spec()),
      samples: samples({ serverLoadPercent: 103 }),
      current,
      now: NOW,
    });
    expect(load.recommendation?.units).toBe(20);
    expect(load.reasons.map((r) => r.code)).toEqual(
      expect.arrayContaining(["SampleAtCeiling", "SignalSaturated"]),
    );
    const conns = decide({
      policy: policy(connectionsOnly),
      samples: samples({ connections: 10_700 }),
      current,
      now: NOW,
    });
    expect(conns.recommendation?.units).toBe(20);
    const far = decide({
      policy: policy(connectionsOnly),
      samples: samples({ connections: 57_000 }),
      current,
      now: NOW,
    });
    expect(far.signals[0]?.status).toBe("Unknown");
    expect(far.reasons.find((r) => r.code === "SampleInvalid")?.message).toContain("10 units × 1,000");
  });
});
