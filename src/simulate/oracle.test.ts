import { describe, expect, it } from "vitest";
import { candidates } from "../capacity/index.js";
import { sizeAt } from "./engine.js";
import { oracleRun, peakSize } from "./oracle.js";
import { CONNECTIONS_ONLY, steps } from "./testing.js";

const P1 = candidates(["Premium_P1"]);
const P1_P2 = candidates(["Premium_P1", "Premium_P2"]);

/** The oracle on connections-only demand: a series, or runs of `[minutes, connections]`. */
const oracle = (
  sizes: typeof P1,
  targetPercent: number,
  demand: Float64Array | Parameters<typeof steps>[0],
) =>
  oracleRun({
    demand: demand instanceof Float64Array ? demand : steps(demand),
    mix: CONNECTIONS_ONLY,
    sizes,
    targetPercent,
  });

/** One minute each of 0, 15,000 and 3,000 connections. */
const RISE_AND_FALL = [
  [1, 0],
  [1, 15_000],
  [1, 3_000],
] as const;

describe("oracle", () => {
  it("takes the fewest ladder units that keep load at or below target, minute by minute", () => {
    // 0 → 1 unit (the smallest); 15,000 → 15.0 units of need at 100 % → at 75 %: 20 units (exactly 75 %);
    // 3,000 → 4 units (exactly 75 %).
    const run = oracle(P1, 75, RISE_AND_FALL);
    expect([...run.units]).toEqual([1, 20, 4]);
    expect([...run.loadPercent]).toEqual([0, 75, 75]);
  });

  it("snaps up the ladder: at 70 % 15,000 needs 21.4 units → 30, and 3,000 needs 4.3 → 5", () => {
    const run = oracle(P1, 70, RISE_AND_FALL);
    expect([...run.units]).toEqual([1, 30, 5]);
    expect(run.loadPercent[1]).toBeCloseTo(50, 5);
    expect(run.loadPercent[2]).toBeCloseTo(60, 5);
    expect(run.operations.map((o) => [o.from.units, o.to.units])).toEqual([
      [1, 30],
      [30, 5],
    ]);
  });

  it("goes to Premium_P2 above 100 units when allowed, and back", () => {
    const run = oracle(P1_P2, 75, [
      [1, 70_000],
      [1, 150_000],
      [1, 1_000],
    ]);
    expect([0, 1, 2].map((m) => sizeAt(run, m))).toEqual([
      { sku: "Premium_P1", units: 100 },
      { sku: "Premium_P2", units: 200 },
      { sku: "Premium_P1", units: 2 },
    ]);
  });

  it("takes the largest size when nothing is enough, and counts the refused connections", () => {
    const run = oracle(P1, 70, [[1, 120_000]]);
    expect(sizeAt(run, 0)).toEqual({ sku: "Premium_P1", units: 100 });
    expect(run.refused[0]).toBe(20_000);
    expect(run.loadPercent[0]).toBe(100);
  });

  it("is the same walking up and down as scanning from the bottom each minute", () => {
    const demand = Float64Array.from({ length: 300 }, (_, m) =>
      Math.round(50_000 + 49_000 * Math.sin(m / 7)),
    );
    const walked = oracle(P1, 80, demand);
    for (let m = 0; m < demand.length; m++) {
      const scanned = oracle(P1, 80, demand.slice(m, m + 1));
      expect(walked.units[m]).toBe(scanned.units[0]);
    }
  });

  it("static at peak is the oracle's largest size", () => {
    const run = oracle(P1, 75, [
      [2, 3_000],
      [1, 15_000],
      [2, 100],
    ]);
    expect(peakSize(run)).toEqual({ sku: "Premium_P1", units: 20 });
  });
});
