/**
 * Constant demand, an instance found too large: the policy reaches the right size in one scale and
 * stays there, whatever the scale takes (1 to 10 minutes) and with or without noise — one scale
 * operation, no reversal. The case and why its figures work: `STEADY` in testing.ts.
 */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { compare } from "./compare.js";
import { STEADY, steadyCase } from "./testing.js";

const ROOT = resolve(import.meta.dirname, "../..");
const steady = steadyCase(ROOT);

const run = (scaleMinutes: number, noiseAmplitude: number) =>
  compare({
    ...steady,
    scaleDurationMs: scaleMinutes * 60_000,
    metricDelayMs: 3 * 60_000,
    seed: "simulate",
    noiseAmplitude,
    initial: STEADY.initial,
  });

const DURATIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

describe("simulate on constant demand from Premium_P1 × 20", () => {
  it("is a day of one value, 6,000 connections", () => {
    expect(steady.demand).toHaveLength(1440);
    expect(new Set(steady.demand)).toEqual(new Set([STEADY.peakConnections]));
  });

  describe.each([0, 0.05])("noise %s", (noise) => {
    it.each(DURATIONS)("scale takes %i min: one scale to Premium_P1 × 10, no reversal", (minutes) => {
      const c = run(minutes, noise);
      expect(c.initial.policy).toEqual(STEADY.initial);
      expect(c.start).toEqual({
        from: "instance",
        notes: [
          "native-p2 runs on Premium_P2 and never changes the SKU: it starts at Premium_P2 × 100, not at Premium_P1 × 20",
        ],
      });
      const [policy] = c.runs;
      const [figures] = c.metrics;
      expect(policy?.operations.map((o) => ({ from: o.from, to: o.to }))).toEqual([
        { from: STEADY.initial, to: STEADY.right },
      ]);
      expect(figures?.scaleOperations).toBe(1);
      expect(figures?.reversals).toBe(0);
      // Not before the 30-minute scale-down stabilization has seen only asks for 10 or fewer units
      // (it opens at the first decision with metrics, 3–4 minutes in), and not much later.
      const startedMin = ((policy?.operations[0]?.startedMs ?? 0) - steady.startMs) / 60_000;
      expect(startedMin).toBeGreaterThanOrEqual(30);
      expect(startedMin).toBeLessThanOrEqual(40);
      // Never hot, never refusing: the right size is under the target.
      expect(figures?.minutesAboveTarget).toBe(0);
      expect(figures?.minutesRefused).toBe(0);
      expect(policy?.units.at(-1)).toBe(10);
    });
  });
});
