import { describe, expect, it } from "vitest";
import { validatePolicy } from "../api/validate.js";
import { decide } from "./decide.js";
import type { DemandHistory, DemandPoint } from "./demand-history.js";
import { emptyHistory } from "./history.js";
import { peakRecurrence, type Recurrence, scaleDownWindow } from "./recurrence.js";
import { input, NOW, samples, spec } from "./testing.js";

const GRAIN = 300_000;
const START = Math.floor(NOW / GRAIN) * GRAIN - 2 * 86_400_000;

/** Buckets of 5 minutes from two days before NOW; `level(i)` connections in bucket `i`, `filled(i)` at a full quota. */
function history(
  buckets: number,
  level: (i: number) => number,
  grainSeconds = 300,
  filled: (i: number) => boolean = () => false,
): DemandHistory {
  const points: DemandPoint[] = [];
  for (let i = 0; i < buckets; i++) {
    points.push({
      timeMs: START + i * grainSeconds * 1000,
      connections: level(i),
      quotaPercent: filled(i) ? 100 : 40,
      bytesPerSecond: null,
    });
  }
  return { grainSeconds, readAtMs: NOW, points };
}

// Every 3 hours (36 buckets) a 10-minute peak of 10,000 connections over 1,000.
const lone = (i: number) => (i % 36 < 2 ? 10_000 : 1_000);
// The same, and a second peak 20 minutes after each: the first drop comes back within 30 minutes.
const twin = (i: number) => (i % 36 < 2 || (i % 36 >= 6 && i % 36 < 8) ? 10_000 : 1_000);
// Peaks of 4,000 over 400, and 10 minutes after each drop a bump (under 3,000: no peak of its
// own) of 400, 1,000, 2,000, 2,400 or 2,800 in turn: returns 0.1, 0.25, 0.5, 0.6, 0.7.
const BUMPS = [400, 1_000, 2_000, 2_400, 2_800];
const bumps = (i: number) =>
  i % 36 < 2 ? 4_000 : i % 36 === 4 ? (BUMPS[Math.floor(i / 36) % 5] as number) : 400;
const TWO_DAYS = 576;

describe("peakRecurrence", () => {
  it("takes the level 60 % of the drops came back to at most, within the window", () => {
    // 16 peaks in two days, each dropping once to 10 % of it; none comes back within 30 minutes.
    expect(peakRecurrence(history(TWO_DAYS, lone), 1800)).toEqual({ state: "Ok", drops: 16, level: 0.1 });
    // Twins: 32 drops; the first of each pair comes back whole 4 buckets later, the second does
    // not: 16 returns of 0.1 and 16 of 1, the 60 % quantile (the 20th of 32) is 1.
    expect(peakRecurrence(history(TWO_DAYS, twin), 1800)).toEqual({ state: "Ok", drops: 32, level: 1 });
    // Within 15 minutes (3 buckets) the second peak, 20 minutes on, is too late.
    expect(peakRecurrence(history(TWO_DAYS, twin), 900)).toEqual({ state: "Ok", drops: 32, level: 0.1 });
    // 16 drops, returns 4 × 0.1, 3 × 0.25, 3 × 0.5, 3 × 0.6, 3 × 0.7: the 10th of 16 is 0.5.
    expect(peakRecurrence(history(TWO_DAYS, bumps), 1800)).toEqual({ state: "Ok", drops: 16, level: 0.5 });
  });

  it("reads a bucket at a full quota as a return of unknown height", () => {
    // The lone peaks, and 10 minutes after each drop a bucket of 2,000 connections at a full
    // quota (ConnectionQuotaUtilization 100 %): the count hides how high the demand rose.
    const capped = history(
      TWO_DAYS,
      (i) => (i % 36 === 4 ? 2_000 : lone(i)),
      300,
      (i) => i % 36 === 4,
    );
    expect(peakRecurrence(capped, 1800)).toEqual({ state: "Ok", drops: 16, level: Number.POSITIVE_INFINITY });
    // 99 % is full; 98 % is not.
    const at = (percent: number): DemandHistory => {
      const h = history(TWO_DAYS, (i) => (i % 36 === 4 ? 2_000 : lone(i)));
      return {
        ...h,
        points: h.points.map((p, i) => (i % 36 === 4 ? { ...p, quotaPercent: percent } : p)),
      };
    };
    expect(peakRecurrence(at(99), 1800)).toMatchObject({ level: Number.POSITIVE_INFINITY });
    expect(peakRecurrence(at(98), 1800)).toMatchObject({ level: 0.2 });
  });

  it("leaves out a drop whose window runs past the history, and a bucket that is missing", () => {
    // A 17th peak in the last three buckets: its drop's return is not known yet.
    expect(peakRecurrence(history(TWO_DAYS + 3, lone), 1800)).toMatchObject({ drops: 16 });
    const h = history(TWO_DAYS, lone);
    const gap = { ...h, points: h.points.filter((_, i) => i !== 38) };
    expect(peakRecurrence(gap, 1800)).toMatchObject({ drops: 15 });
  });

  it("counts no peak under 3,000 connections", () => {
    const small = history(TWO_DAYS, (i) => (i % 36 < 2 ? 2_900 : 100));
    expect(peakRecurrence(small, 1800)).toEqual({
      state: "InsufficientHistory",
      message: "0 drops from a peak of 3,000 connections or more in the history, 5 needed",
    });
  });

  it.each<[string, DemandHistory | undefined, Recurrence["state"], string]>([
    ["not read", undefined, "Unavailable", "history not read yet"],
    ["hourly", history(48, lone, 3600), "Unavailable", "history at 3600s buckets"],
    ["under a day", history(287, lone), "InsufficientHistory", "less than a day of history"],
    ["unreadable", { grainSeconds: 300, readAtMs: NOW, points: [], error: "403" }, "Unavailable", "403"],
  ])("says nothing from a history %s", (_n, h, state, message) => {
    const r = peakRecurrence(h, 1800);
    expect(r.state).toBe(state);
    expect(r.state !== "Ok" && r.message).toContain(message);
  });
});

describe("scaleDownWindow", () => {
  const ok = (level: number) => () => ({ state: "Ok" as const, drops: 20, level });

  it.each([
    [0, 0],
    [0.49, 0.49],
    [0.999, 0.999],
  ])("a level of %s holds that fraction of the peak after the minimum", (level, fraction) => {
    expect(scaleDownWindow(2700, 600, ok(level))).toEqual({
      seconds: 2700,
      partial: { afterSeconds: 600, fraction },
      basis: `holding ${Math.round(fraction * 100)} % after 600s: 60 % of 20 drops from a peak came back to at most ${Math.round(fraction * 100)} % of it within 2700s in the history`,
    });
  });

  it.each([
    [1, "to 100 % of it or more"],
    [1.7, "to 170 % of it or more"],
    [Number.POSITIVE_INFINITY, "to a full quota"],
  ])("a level of %s holds the whole peak", (level, how) => {
    expect(scaleDownWindow(2700, 600, ok(level))).toEqual({
      seconds: 2700,
      basis: `whole: 40 % or more of 20 drops from a peak came back ${how} within 2700s in the history`,
    });
  });

  it("holds the whole peak when the history cannot say, or no minimum is set", () => {
    const unknown = () => ({ state: "InsufficientHistory" as const, message: "less than a day of history" });
    expect(scaleDownWindow(2700, 600, unknown)).toEqual({
      seconds: 2700,
      basis: "whole: less than a day of history",
    });
    expect(scaleDownWindow(2700, undefined, ok(0))).toEqual({ seconds: 2700 });
    expect(scaleDownWindow(2700, 2700, ok(0))).toEqual({ seconds: 2700 });
  });
});

describe("a peak let go in part by the history, in the decision", () => {
  const withMode = (mode: "Enabled" | "ForecastOnly" | "Off") =>
    spec({
      behavior: { scaleDown: { stabilizationWindowSeconds: 1800, minStabilizationWindowSeconds: 300 } },
      anticipation: { mode, seasonal: { historyDays: 7, grain: "5m" } },
    });
  const adaptive = withMode("Enabled");
  // A peak of 10 units 400 s ago; the need now is 3.
  const recommendations = [
    { time: new Date(NOW - 400_000).toISOString(), units: 10, sku: "Premium_P1" as const },
  ];
  const load = samples({ serverLoadPercent: 20 });
  const run = (demandHistory?: DemandHistory, policy = adaptive) =>
    decide(
      input({
        spec: policy,
        samples: load,
        history: { ...emptyHistory(), recommendations },
        ...(demandHistory ? { demandHistory } : {}),
      }),
    );

  it("lets a peak go after the minimum where the instance's peaks did not come back", () => {
    // Level 0.1: 10 % of 10 units is 1, under this pass's 3.
    const d = run(history(TWO_DAYS, lone));
    expect(d.desired?.units).toBe(3);
  });

  it.each<[string, (i: number) => number, number, string]>([
    [
      "holds the level the peaks came back to, and says so",
      bumps,
      5,
      "scale-down stabilization (1800s, holding 50 % after 300s: 60 % of 16 drops from a peak came back to at most 50 % of it within 1800s in the history): the highest recommendation of the window is Premium_P1 10, held as Premium_P1 5",
    ],
    [
      "holds the whole peak where they came back, and says why",
      twin,
      10,
      "scale-down stabilization (1800s, whole: 40 % or more of 32 drops from a peak came back to 100 % of it or more within 1800s in the history): the highest recommendation of the window is Premium_P1 10",
    ],
  ])("%s", (_n, level, units, message) => {
    const d = run(history(TWO_DAYS, level));
    expect(d.desired?.units).toBe(units);
    expect(d.limitedBy).toBe("StabilizedDown");
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toBe(message);
  });

  it("says when the share held rounds up to the whole peak", () => {
    // Every drop comes back to 60 % of its peak (a bump of 2,400 after each peak of 4,000): 60 %
    // of a peak of 20 units is 12, and no size under 20 holds 12.
    const sixty = (i: number) => (i % 36 < 2 ? 4_000 : i % 36 === 4 ? 2_400 : 400);
    const peak = [{ time: new Date(NOW - 400_000).toISOString(), units: 20, sku: "Premium_P1" as const }];
    const d = decide(
      input({
        spec: adaptive,
        samples: load,
        current: { sku: "Premium_P1", units: 20 },
        history: { ...emptyHistory(), recommendations: peak },
        demandHistory: history(TWO_DAYS, sixty),
      }),
    );
    expect(d.desired?.units).toBe(20);
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toBe(
      "scale-down stabilization (1800s, holding 60 % after 300s: 60 % of 16 drops from a peak came back to at most 60 % of it within 1800s in the history): the highest recommendation of the window is Premium_P1 20, held whole: 60 % of it is 12 units, more than the next size down (Premium_P1 10)",
    );
  });

  it("holds the whole peak while the history is not read", () => {
    const d = run(undefined);
    expect(d.desired?.units).toBe(10);
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toContain(
      "1800s, whole: history not read yet",
    );
  });

  it("holds the whole peak in ForecastOnly, saying what the history would hold", () => {
    const d = run(history(TWO_DAYS, lone), withMode("ForecastOnly"));
    expect(d.desired?.units).toBe(10);
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toContain(
      "1800s, whole: anticipation is ForecastOnly (shown, not acted on); by the history it would hold 10 % after 300s: 60 % of 16 drops",
    );
  });

  it("holds the whole peak with anticipation Off, which reads no history", () => {
    const d = run(undefined, withMode("Off"));
    expect(d.desired?.units).toBe(10);
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toContain(
      "whole: anticipation is Off: no seasonal history is read",
    );
  });

  it("rejects a minimum above the window", () => {
    const bad = {
      apiVersion: "autoscaling.signalr.dev/v1alpha1",
      kind: "CapacityPolicy",
      metadata: { name: "p", namespace: "n" },
      spec: {
        ...adaptive,
        behavior: {
          ...adaptive.behavior,
          scaleDown: { ...adaptive.behavior.scaleDown, minStabilizationWindowSeconds: 2000 },
        },
      },
    };
    const r = validatePolicy(bad);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors).toContain(
      "spec.behavior.scaleDown: minStabilizationWindowSeconds (2000) must be <= stabilizationWindowSeconds (1800)",
    );
  });
});
