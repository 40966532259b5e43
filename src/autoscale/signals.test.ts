import { describe, expect, it } from "vitest";
import { SIGNAL_NAMES } from "../api/constants.js";
import type { CapacityPolicySpec } from "../api/index.js";
import { DEFAULT_LADDERS, type SkuUnits } from "../capacity/skus.js";
import { windowSamples } from "./samples.js";
import { connectionsNeed } from "./signals/connections.js";
import { SIGNALS } from "./signals/index.js";
import { evaluateSignals, trafficDemand, trafficUtilization } from "./signals.js";
import { SizeList } from "./sizes.js";
import { NOW, samples, spec } from "./testing.js";

function run(
  s: CapacityPolicySpec,
  values: Parameters<typeof samples>[0],
  current: SkuUnits = { sku: "Premium_P1", units: 10 },
  unitsAt: (t: number) => number = () => current.units,
) {
  const window = windowSamples(samples(values), {
    nowMs: NOW,
    windowSeconds: 300,
    ingestionDelaySeconds: 180,
    maxSampleAgeSeconds: 600,
  });
  const sizes = new SizeList(s.skus, current, DEFAULT_LADDERS);
  return evaluateSignals({ spec: s, window, current, sizes, unitsAt });
}

describe("the signals", () => {
  it("are one file each for every name the API knows, in spec order", () => {
    expect(SIGNALS.map((s) => s.name)).toEqual([...SIGNAL_NAMES]);
  });
});

describe("serverLoad (proportional, HPA tolerance)", () => {
  // 10 units, target 70 %, tolerance 0.1: ratio = load / 70.
  it.each([
    [73.5, 1.05, true, 10],
    [77, 1.1, true, 10], // |ratio − 1| = 0.1 is inside the band (≤)
    [78.4, 1.12, false, 12],
    [63, 0.9, true, 10],
    [62.3, 0.89, false, 9],
    [35, 0.5, false, 5],
    [0, 0, false, 0],
    [98, 1.4, false, 14],
  ])("load %s percent → ratio %s, within tolerance: %s → %s units", (load, ratio, within, units) => {
    const { reports, needs } = run(spec(), { serverLoadPercent: load });
    const r = reports[0];
    expect(r?.ratio).toBeCloseTo(ratio, 9);
    expect(r?.withinTolerance).toBe(within);
    expect(r?.desiredUnits).toBe(units);
    expect(needs[0]?.minUnits).toBe(units);
  });

  it.each([
    [77, true, 10], // ratio 1.1: inside scaleUp's 0.1
    [78.4, false, 12], // ratio 1.12: outside it
    [52.5, true, 10], // ratio 0.75: inside scaleDown's 0.3
    [45.5, false, 7], // ratio 0.65: outside it
  ])(
    "per-direction tolerance (scaleUp 0.1, scaleDown 0.3): load %s → within %s → %s units",
    (load, within, units) => {
      const s = spec({
        behavior: { tolerance: 0.05, scaleUp: { tolerance: 0.1 }, scaleDown: { tolerance: 0.3 } },
      });
      const r = run(s, { serverLoadPercent: load }).reports[0];
      expect(r?.withinTolerance).toBe(within);
      expect(r?.desiredUnits).toBe(units);
      if (within) expect(r?.message).toMatch(load > 70 ? /within tolerance 0\.1:/ : /within tolerance 0\.3:/);
    },
  );

  it("uses the window's peak", () => {
    const s = samples({ serverLoadPercent: 20 });
    const window = windowSamples(
      s.map((x, i) => (i === 10 ? { ...x, serverLoadPercent: 91 } : x)),
      { nowMs: NOW, windowSeconds: 300, ingestionDelaySeconds: 180, maxSampleAgeSeconds: 600 },
    );
    const current = { sku: "Premium_P1", units: 10 } as const;
    const { reports } = evaluateSignals({
      spec: spec(),
      window,
      current,
      sizes: new SizeList(["Premium_P1"], current, DEFAULT_LADDERS),
      unitsAt: () => 10,
    });
    expect(reports[0]?.value).toBeCloseTo(91, 9);
    expect(reports[0]?.desiredUnits).toBe(13);
  });

  describe("a scale-in reads the level of a flat window, not the noise", () => {
    const p2 = { sku: "Premium_P2", units: 200 } as const;
    const both = spec({ skus: ["Premium_P1", "Premium_P2"], units: { min: 1, max: 1000 } });
    /** The window's five buckets take each of `loads` once (any five consecutive minutes do). */
    const cycling = (loads: readonly (number | null)[], current: SkuUnits, policy = both) => {
      const window = windowSamples(
        samples({}).map((x, i) => ({ ...x, serverLoadPercent: loads[i % loads.length] ?? null })),
        { nowMs: NOW, windowSeconds: 300, ingestionDelaySeconds: 180, maxSampleAgeSeconds: 600 },
      );
      return evaluateSignals({
        spec: policy,
        window,
        current,
        sizes: new SizeList(policy.skus, current, DEFAULT_LADDERS),
        unitsAt: () => current.units,
      }).reports[0];
    };

    it("every bucket within 10 % of the mean (34.4 %): 99 units, where the peak (36.6 %) asks 105", () => {
      const r = cycling([33.2, 36.6, 34.0, 34.4, 33.8], p2);
      expect(r?.value).toBeCloseTo(34.4, 9);
      expect(r?.desiredUnits).toBe(99);
      expect(r?.message).toBe(
        "server load 34.4 % at 200 units (the mean of a window within 10 % of it; peak 36.6 %) vs target 70 %, ratio 0.49: 99 units",
      );
    });

    it("a real peak in the window (36.6 % beside 30 %, 17 % above the mean): the peak, 105 units", () => {
      const r = cycling([30, 30, 30, 30, 36.6], p2);
      expect(r?.value).toBeCloseTo(36.6, 9);
      expect(r?.desiredUnits).toBe(105);
    });

    it("the band is the smaller of the two tolerances: with scaleUp 0.05 a window 6 % off its mean has a peak", () => {
      const tolerances = (up: number, down: number) =>
        spec({
          skus: ["Premium_P1", "Premium_P2"],
          units: { min: 1, max: 1000 },
          behavior: { scaleUp: { tolerance: up }, scaleDown: { tolerance: down } },
        });
      const loads = [33.2, 36.6, 34.0, 34.4, 33.8];
      // The mean's 99 units would read 36.6 × 200 / 99 = 73.9 %, 5.6 % above the target: a scale-out.
      expect(cycling(loads, p2, tolerances(0.05, 0.3))?.desiredUnits).toBe(105);
      expect(cycling(loads, p2, tolerances(0.1, 0.3))?.desiredUnits).toBe(99);
    });

    it("the tolerance band applies to the mean: a peak within it (ratio 0.92) does not hold a mean outside it (0.88)", () => {
      const r = cycling([60, 64.4, 61, 62, 61.5], { sku: "Premium_P1", units: 10 });
      expect(r?.withinTolerance).toBe(false);
      expect(r?.desiredUnits).toBe(9);
    });

    it("a bucket unknown: the peak", () => {
      expect(cycling([33.2, 36.6, null, 34.4, 33.8], p2)?.desiredUnits).toBe(105);
    });

    it("a scale-out reads the peak of a flat window too: 80 % of 10 units → 12 (the mean, 76 %, would ask 11)", () => {
      const r = cycling([72, 80, 76, 74, 78], { sku: "Premium_P1", units: 10 });
      expect(r?.value).toBeCloseTo(80, 9);
      expect(r?.desiredUnits).toBe(12);
    });
  });

  it("turns load into units of demand with the units the instance had then", () => {
    // 90 % measured at 10 units (before a scale to 20): 9 units of demand → 13 units at 70 %,
    // not 26 (which reading 90 % against the current 20 units would give).
    const { reports } = run(spec(), { serverLoadPercent: 90 }, { sku: "Premium_P1", units: 20 }, () => 10);
    expect(reports[0]?.value).toBe(45);
    expect(reports[0]?.desiredUnits).toBe(13);
  });
});

describe("connections (units × 1,000 × target)", () => {
  const s = spec({ metrics: { connections: { targetPercent: 80 } } });
  const noLoad = { ...s, metrics: { ...s.metrics } };
  delete noLoad.metrics.serverLoad;
  it.each([
    [8000, 1, true, 10],
    [8500, 1.0625, true, 10],
    [12000, 1.5, false, 15],
    [800, 0.1, false, 1],
  ])("%s connections at 10 units → ratio %s → %s units", (connections, ratio, within, units) => {
    const { reports } = run(noLoad, { connections });
    expect(reports).toHaveLength(1);
    expect(reports[0]?.ratio).toBeCloseTo(ratio, 9);
    expect(reports[0]?.withinTolerance).toBe(within);
    expect(reports[0]?.desiredUnits).toBe(units);
  });

  it("falls back to ConnectionQuotaUtilization when ConnectionCount is unknown", () => {
    const { reports } = run(noLoad, { connections: null, connectionQuotaUtilizationPercent: 96 });
    expect(reports[0]?.value).toBe(9600);
    expect(reports[0]?.desiredUnits).toBe(12);
  });
});

describe("connections with spareConnections (standing headroom at small sizes)", () => {
  const s = spec({ metrics: { connections: { targetPercent: 80, spareConnections: 1000 } } });
  delete s.metrics.serverLoad;
  const at2: SkuUnits = { sku: "Premium_P1", units: 2 };
  // 1,300 connections at 2 units: at 80 % they need 1,300 ÷ 800 = 1.63 units (ratio 0.81, a scale-in
  // without the spare); with 1,000 spare, (1,300 + 1,000) ÷ 1,000 = 2.3 units: ratio 1.15, above the
  // 10 % band → ceil(2.3) = 3 units.
  it("1,300 connections at 2 units keep 1,000 free: 3 units", () => {
    const { reports } = run(s, { connections: 1300 }, at2);
    expect(reports[0]?.ratio).toBeCloseTo(1.15, 9);
    expect(reports[0]?.desiredUnits).toBe(3);
    expect(reports[0]?.message).toContain("(2,300 with 1,000 spare)");
  });
  // 1,150 connections: (1,150 + 1,000) ÷ 1,000 = 2.15 units, ratio 1.075 — within the band: hold 2.
  it("a spare need within the tolerance band holds the size", () => {
    const { reports } = run(s, { connections: 1150 }, at2);
    expect(reports[0]?.withinTolerance).toBe(true);
    expect(reports[0]?.desiredUnits).toBe(2);
  });
  // 8,000 connections at 10 units: 8,000 ÷ 800 = 10 units at the target, (8,000 + 1,000) ÷ 1,000
  // = 9 with the spare: the target's 2,000 free connections are more, so the spare changes nothing.
  it("above 4,000 connections (5 units at 80 %) the target's headroom is the larger", () => {
    const { reports } = run(s, { connections: 8000 });
    expect(reports[0]?.ratio).toBeCloseTo(1, 9);
    expect(reports[0]?.desiredUnits).toBe(10);
    expect(reports[0]?.message).not.toContain("spare");
  });
  it("connectionsNeed: the larger of the target's need and peak + spare in units", () => {
    expect(connectionsNeed(1300, 80, 0)).toBeCloseTo(1.625, 9);
    expect(connectionsNeed(1300, 80, 1000)).toBeCloseTo(2.3, 9);
    expect(connectionsNeed(4000, 80, 1000)).toBeCloseTo(5, 9);
    expect(connectionsNeed(4800, 80, 1000)).toBeCloseTo(6, 9);
  });
});

describe("traffic (tier tables through the capacity model)", () => {
  const trafficSpec = (
    workload: { scenario: "broadcast" | "smallGroup" | "echo"; share: number }[],
    skus = ["Premium_P1"],
  ) => {
    const s = spec({
      skus: skus as CapacityPolicySpec["skus"],
      units: { max: 1000 },
      metrics: { traffic: { workload, messageSizeBytes: 2048, targetPercent: 80 } },
    });
    delete s.metrics.serverLoad;
    return s;
  };

  it("broadcast: 40 MB/s outbound at P1 10 (97.7 % of 40.96 MB/s) needs 20 units at 80 %", () => {
    const { reports } = run(trafficSpec([{ scenario: "broadcast", share: 1 }]), {
      inboundBytesPerSecond: 4096,
      outboundBytesPerSecond: 40_000_000,
    });
    const r = reports[0];
    expect(r?.status).toBe("Ok");
    expect(r?.value).toBeCloseTo((40_000_000 / 40_960_000) * 100, 6);
    expect(r?.dimension).toBe("outboundBandwidth");
    expect(r?.desiredUnits).toBe(20);
    expect(r?.desiredSku).toBe("Premium_P1");
  });

  it("within tolerance asks for the current size", () => {
    // 80 % of 40.96 MB/s = 32.768 MB/s → ratio 1.0.
    const { reports, needs } = run(trafficSpec([{ scenario: "broadcast", share: 1 }]), {
      inboundBytesPerSecond: 0,
      outboundBytesPerSecond: 32_768_000,
    });
    expect(reports[0]?.withinTolerance).toBe(true);
    expect(needs[0]?.minUnits).toBe(10);
  });

  it("small group beyond the P1 routing cap (10,000 msg/s inbound) needs Premium_P2", () => {
    // 15,000 msg/s in, 150,000 out, 2,048 B: P1 caps small-group inbound at 10,000 msg/s from 50
    // units; P2 gives 100 msg/s per unit → 200 units (75 %).
    const { reports, needs } = run(
      trafficSpec([{ scenario: "smallGroup", share: 1 }], ["Premium_P1", "Premium_P2"]),
      { inboundBytesPerSecond: 15_000 * 2048, outboundBytesPerSecond: 150_000 * 2048 },
      { sku: "Premium_P1", units: 50 },
    );
    expect(reports[0]?.desiredSku).toBe("Premium_P2");
    expect(reports[0]?.desiredUnits).toBe(200);
    expect(needs[0]?.fits?.({ sku: "Premium_P1", units: 100 })).toBe(false);
    expect(needs[0]?.fits?.({ sku: "Premium_P2", units: 200 })).toBe(true);
  });

  it("reports an Error for a scenario the service does not have", () => {
    const s = trafficSpec([{ scenario: "echo", share: 1 }]);
    s.target = { ...s.target, service: "WebPubSub" };
    const { reports, needs, reasons } = run(s, { inboundBytesPerSecond: 1, outboundBytesPerSecond: 1 });
    expect(reports[0]?.status).toBe("Error");
    expect(needs).toHaveLength(0);
    expect(reasons.map((r) => r.code)).toContain("SignalError");
  });

  it("trafficDemand splits both directions by share and bills ≥ 1,024 B a message", () => {
    const d = trafficDemand(
      "SignalR",
      [
        { scenario: "echo", share: 0.25 },
        { scenario: "broadcast", share: 0.75 },
      ],
      512,
      1000 * 512,
      4000 * 512,
    );
    expect(d[0]).toMatchObject({
      scenario: "echo",
      inboundMessagesPerSecond: 250,
      outboundMessagesPerSecond: 1000,
    });
    expect(d[0]?.inboundBytesPerSecond).toBe(250 * 1024);
    expect(d[1]).toMatchObject({
      scenario: "broadcast",
      inboundMessagesPerSecond: 750,
      outboundMessagesPerSecond: 3000,
    });
    expect(trafficUtilization("SignalR", d, { sku: "Premium_P1", units: 1 }).utilization).toBeGreaterThan(0);
  });
});

describe("unknown signals", () => {
  it("ask for nothing and say why", () => {
    const { reports, needs, reasons } = run(spec(), { serverLoadPercent: null });
    expect(reports[0]?.status).toBe("Unknown");
    expect(needs).toEqual([]);
    expect(reasons.map((r) => r.code)).toEqual(["SignalUnknown"]);
  });

  it("incomplete ones ask on their known values and are flagged", () => {
    const s = samples({ serverLoadPercent: 90 });
    const holes = s.map((x, i) => (i === 9 ? { ...x, serverLoadPercent: null } : x));
    const window = windowSamples(holes, {
      nowMs: NOW,
      windowSeconds: 300,
      ingestionDelaySeconds: 180,
      maxSampleAgeSeconds: 600,
    });
    const current = { sku: "Premium_P1", units: 10 } as const;
    const r = evaluateSignals({
      spec: spec(),
      window,
      current,
      sizes: new SizeList(["Premium_P1"], current, DEFAULT_LADDERS),
      unitsAt: () => 10,
    });
    expect(r.reports[0]?.status).toBe("Incomplete");
    expect(r.needs[0]?.minUnits).toBe(13);
    expect(r.reasons.map((x) => x.code)).toContain("SignalIncomplete");
  });
});

describe("saturated signals (measurements pinned at their ceiling)", () => {
  it.each([
    // server load at 100 % of 10 units: proportional would ask 15, saturation asks ≥ 20
    [{ serverLoadPercent: 100 }, 20],
    [{ serverLoadPercent: 99.5 }, 20],
    // just above the ceiling is the ceiling (far above is left out: plausibility.test.ts)
    [{ serverLoadPercent: 104 }, 20],
    // below the ceiling: proportional
    [{ serverLoadPercent: 90 }, 13],
  ])("server load %j at 10 units → %s units", (values, units) => {
    const { reports } = run(spec({ metrics: { serverLoad: { targetPercent: 70 } } }), values);
    expect(reports.find((r) => r.signal === "serverLoad")?.desiredUnits).toBe(units);
  });

  it("connections at the unit quota ask for at least double the units", () => {
    const { reports, reasons } = run(spec({ metrics: { connections: { targetPercent: 80 } } }), {
      connections: 10_000,
    });
    expect(reports.find((r) => r.signal === "connections")?.desiredUnits).toBe(20);
    expect(reasons.map((r) => r.code)).toContain("SignalSaturated");
    const below = run(spec({ metrics: { connections: { targetPercent: 80 } } }), { connections: 9_000 });
    expect(below.reports.find((r) => r.signal === "connections")?.desiredUnits).toBe(12);
    expect(below.reasons.map((r) => r.code)).not.toContain("SignalSaturated");
  });

  it("the demand series marks buckets at the quota saturated, never those overlapping a change", () => {
    const s = spec({ metrics: { connections: { targetPercent: 80 } } });
    const current = { sku: "Premium_P1", units: 10 } as const;
    const window = windowSamples(samples({ connections: 10_000 }), {
      nowMs: NOW,
      windowSeconds: 300,
      ingestionDelaySeconds: 180,
      maxSampleAgeSeconds: 600,
    });
    const evaluate = (overlapsChange?: (t: number) => boolean) =>
      evaluateSignals({
        spec: s,
        window,
        current,
        sizes: new SizeList(s.skus, current, DEFAULT_LADDERS),
        unitsAt: () => 10,
        ...(overlapsChange ? { overlapsChange } : {}),
      }).demand.find((d) => d.signal === "connections");
    const plain = evaluate();
    expect(plain?.saturated).toBe(true);
    expect(plain?.points.map((p) => p.units)).toEqual([12.5, 12.5, 12.5, 12.5, 12.5]);
    const newest = window.buckets.at(-1)?.start ?? 0;
    const overlapped = evaluate((t) => t >= newest - 60_000);
    expect(overlapped?.saturated).toBe(false);
    expect(overlapped?.points.map((p) => p.saturated)).toEqual([true, true, true, false, false]);
  });
});
