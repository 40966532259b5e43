import { describe, expect, it } from "vitest";
import { parsePolicyYaml } from "../api/index.js";
import type { SkuUnits } from "../capacity/index.js";
import { renderSvg } from "../chart/index.js";
import { chartSpec } from "./chart.js";
import {
  compare,
  compareAsync,
  describeLadder,
  type NativeOptions,
  nativeSettingFor,
  startingSize,
} from "./compare.js";
import { START, steps, testSetup, webPubSubPolicyYaml } from "./testing.js";
import { TIMELINE_HEADER, timelineCsv } from "./timeline.js";

const POLICY = parsePolicyYaml(
  webPubSubPolicyYaml(
    "cmp",
    `  units: { min: 1, max: 300 }
  skus: [Premium_P1, Premium_P2]
  metrics: { serverLoad: { targetPercent: 75 } }
`,
  ),
);

const demand = steps([
  [60, 3_000],
  [60, 15_000],
  [60, 3_000],
]);
const comparison = () => compare({ policy: POLICY, ...testSetup(demand) });

describe("compare", () => {
  it("runs the policy, native autoscale on both Premium SKUs, static at peak and the oracle on the same demand", () => {
    const c = comparison();
    expect(c.runs.map((r) => r.name)).toEqual(["policy", "native-p1", "native-p2", "static", "oracle"]);
    expect(c.loadTargetPercent).toBe(75);
    expect(c.staticSize).toEqual({ sku: "Premium_P1", units: 20 });
    expect(c.initial).toEqual({
      policy: { sku: "Premium_P1", units: 4 },
      native: [
        { name: "native-p1", sku: "Premium_P1", units: 4 },
        // Premium_P2 never goes below 100 units.
        { name: "native-p2", sku: "Premium_P2", units: 100 },
      ],
    });
    expect(c.native.map((n) => [n.name, n.sku, n.minimum, n.maximum])).toEqual([
      ["native-p1", "Premium_P1", 1, 100],
      ["native-p2", "Premium_P2", 100, 300],
    ]);
    const [policy, nativeP1, nativeP2, fixed, oracle] = c.metrics;
    expect(fixed?.totalUnitHours).toBe(60);
    expect(oracle?.minutesAboveTarget).toBe(0);
    expect(oracle?.totalUnitHours).toBe((60 * 4 + 60 * 20 + 60 * 4) / 60);
    // 15,000 connections fit in 100 units: Premium_P2 idles at its floor, never hot, never scaling.
    expect(nativeP2).toMatchObject({ totalUnitHours: 300, minutesAboveTarget: 0, scaleOperations: 0 });
    // Reacting takes time: the adaptive strategies run hot for a while, and cost more than the oracle.
    for (const m of [policy, nativeP1]) {
      expect(m?.minutesAboveTarget).toBeGreaterThan(0);
      expect(m?.totalUnitHours).toBeGreaterThan(oracle?.totalUnitHours ?? 0);
      expect(m?.scaleOperations).toBeGreaterThan(0);
    }
  });

  it("runs the same step by step, reports progress, and stops when aborted", {
    timeout: 30_000,
  }, async () => {
    const long = Float64Array.from({ length: 3 * 4096 }, (_, m) => 5_000 + 4_000 * Math.sin(m / 300));
    const input = { policy: POLICY, ...testSetup(long, { noiseAmplitude: 0.05 }) };
    const progress: number[] = [];
    const sync = compare({ ...input, onProgress: (done) => progress.push(done) });
    expect(progress.at(-1)).toBe(5 * long.length);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const stepped = await compareAsync(input);
    expect(stepped.metrics).toEqual(sync.metrics);
    const abort = new AbortController();
    const stopped = compareAsync(
      { ...input, onProgress: (done) => done > long.length && abort.abort(new Error("stop")) },
      abort.signal,
    );
    await expect(stopped).rejects.toThrow("stop");
  });

  it("snaps the policy's units onto each native SKU's ladder", () => {
    expect(nativeSettingFor(POLICY, "Premium_P2")).toMatchObject({
      sku: "Premium_P2",
      minimum: 100,
      maximum: 300,
    });
    expect(nativeSettingFor(POLICY, "Premium_P1")).toMatchObject({
      sku: "Premium_P1",
      minimum: 1,
      maximum: 100,
    });
  });

  it("models native autoscale on the SKUs given only, and says when one cannot reach the peak", () => {
    const peak = steps([
      [30, 3_000],
      [60, 150_000],
      [30, 3_000],
    ]);
    const c = compare({ policy: POLICY, ...testSetup(peak) });
    expect(c.staticSize).toEqual({ sku: "Premium_P2", units: 200 });
    const [, p1, p2] = c.metrics;
    expect(p1?.description).toMatch(
      /^Azure autoscale on Premium_P1 1–100: .*; at most 100 units \(100,000 connections\), below the peak need of Premium_P2 × 200$/,
    );
    expect(p2?.description).not.toContain("below the peak need");
    // Premium_P1 stops at 100 units: it refuses the crowd's connections for as long as it lasts.
    expect(p1?.peakUnits).toBe(100);
    expect(p1?.minutesRefused).toBeGreaterThanOrEqual(50);
    expect(p2?.minutesRefused).toBeLessThan(p1?.minutesRefused ?? 0);
    const only = compare({ policy: POLICY, ...testSetup(peak), native: { skus: ["Premium_P1"] } });
    expect(only.runs.map((r) => r.name)).toEqual(["policy", "native-p1", "static", "oracle"]);
    expect(only.metrics[1]).toEqual(p1);
  });

  it("starts the policy at the instance's size, and native autoscale when it runs on that SKU", () => {
    const from = (initial: SkuUnits, native: NativeOptions = {}) =>
      compare({ policy: POLICY, ...testSetup(demand.subarray(0, 10)), initial, native });
    const P1_ONLY: NativeOptions = { skus: ["Premium_P1"] };
    const p1 = from({ sku: "Premium_P1", units: 20 }, P1_ONLY);
    expect(p1.initial).toEqual({
      policy: { sku: "Premium_P1", units: 20 },
      native: [{ name: "native-p1", sku: "Premium_P1", units: 20 }],
    });
    expect(p1.start).toEqual({ from: "instance", notes: [] });
    expect(p1.runs[0]?.units[0]).toBe(20);
    expect(p1.runs[1]?.units[0]).toBe(20);
    // A SKU the policy does not allow: the policy starts there all the same; native autoscale
    // (Premium only, never changing the SKU) keeps its own start.
    const s1 = from({ sku: "Standard_S1", units: 2 });
    expect(s1.initial).toEqual({
      policy: { sku: "Standard_S1", units: 2 },
      native: [
        { name: "native-p1", sku: "Premium_P1", units: 4 },
        { name: "native-p2", sku: "Premium_P2", units: 100 },
      ],
    });
    expect(s1.start.notes).toEqual([
      "Standard_S1 is not among the policy's SKUs (Premium_P1, Premium_P2): its first decision moves the instance",
      "native-p1 runs on Premium_P1 and never changes the SKU: it starts at Premium_P1 × 4, not at Standard_S1 × 2",
      "native-p2 runs on Premium_P2 and never changes the SKU: it starts at Premium_P2 × 100, not at Standard_S1 × 2",
    ]);
    expect(s1.runs[0]?.sku[0]).toBe(0);
    // Outside the policy's units, and outside native autoscale's limits on Premium_P2.
    const p2 = from({ sku: "Premium_P2", units: 400 });
    expect(p2.initial.native).toEqual([
      { name: "native-p1", sku: "Premium_P1", units: 4 },
      { name: "native-p2", sku: "Premium_P2", units: 300 },
    ]);
    expect(p2.start.notes).toEqual([
      "Premium_P2 × 400 is outside the policy's units 1–300: its first decision moves the instance",
      "native-p1 runs on Premium_P1 and never changes the SKU: it starts at Premium_P1 × 4, not at Premium_P2 × 400",
      "native-p2 starts at Premium_P2 × 300: Premium_P2 × 400 brought within its limits 100–300",
    ]);
    expect(() => from({ sku: "Premium_P1", units: 15 })).toThrow(RangeError);
  });

  it("takes a starting size only on its SKU's ladder", () => {
    expect(startingSize("Premium_P2", 200)).toEqual({ sku: "Premium_P2", units: 200 });
    expect(() => startingSize("Premium_P1", 15)).toThrow(
      "15 is not a unit count of Premium_P1 (1–10, 20, 30 … 100)",
    );
    expect(() => startingSize("Premium_P2", 50)).toThrow(
      "50 is not a unit count of Premium_P2 (100, 200 … 1000)",
    );
    expect(() => startingSize("Free_F1", 1)).toThrow(
      "Free_F1 is not a SKU the operator scales (Standard_S1, Premium_P1, Premium_P2)",
    );
    expect(describeLadder([1, 2, 4, 8])).toBe("1, 2, 4, 8");
    expect(describeLadder([5])).toBe("5");
  });

  it("writes one timeline row per minute per strategy", () => {
    const c = comparison();
    const lines = timelineCsv(START, demand, c.runs).trimEnd().split("\n");
    expect(lines[0]).toBe(TIMELINE_HEADER);
    expect(lines).toHaveLength(1 + 180 * 5);
    expect(lines[5]).toBe("2025-06-02T00:00:00Z,oracle,3000,Premium_P1,4,75.0,0,0");
  });

  it("draws the chart as SVG", async () => {
    const c = comparison();
    const svg = await renderSvg(chartSpec(START, demand, c.runs, { title: "test", loadTargetPercent: 75 }));
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("load % (target 75)");
  });
});
