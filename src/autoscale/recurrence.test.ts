import { describe, expect, it } from "vitest";
import { validatePolicy } from "../api/validate.js";
import { decide } from "./decide.js";
import type { DemandHistory, DemandPoint } from "./demand-history.js";
import { emptyHistory } from "./history.js";
import { peakRecurrence, type Recurrence, scaleDownWindow } from "./recurrence.js";
import { input, NOW, samples, spec } from "./testing.js";

const GRAIN = 300_000;
const START = Math.floor(NOW / GRAIN) * GRAIN - 2 * 86_400_000;

/** Buckets of 5 minutes from two days before NOW; `level(i)` connections in bucket `i`. */
function history(buckets: number, level: (i: number) => number, grainSeconds = 300): DemandHistory {
  const points: DemandPoint[] = [];
  for (let i = 0; i < buckets; i++) {
    points.push({ timeMs: START + i * grainSeconds * 1000, connections: level(i), bytesPerSecond: null });
  }
  return { grainSeconds, readAtMs: NOW, points };
}

// Every 3 hours (36 buckets) a 10-minute peak of 10,000 connections over 1,000.
const lone = (i: number) => (i % 36 < 2 ? 10_000 : 1_000);
// The same, and a second peak 20 minutes after each: the first drop comes back within 30 minutes.
const twin = (i: number) => (i % 36 < 2 || (i % 36 >= 6 && i % 36 < 8) ? 10_000 : 1_000);
const TWO_DAYS = 576;

describe("peakRecurrence", () => {
  it("counts each drop from a peak and whether the peak came back within the window", () => {
    // 16 peaks in two days, each dropping once; none comes back within 30 minutes (6 buckets).
    expect(peakRecurrence(history(TWO_DAYS, lone), 1800)).toEqual({
      state: "Ok",
      drops: 16,
      recurred: 0,
      share: 0,
    });
    // Twins: 32 drops, the first of each pair comes back 4 buckets later.
    expect(peakRecurrence(history(TWO_DAYS, twin), 1800)).toEqual({
      state: "Ok",
      drops: 32,
      recurred: 16,
      share: 0.5,
    });
    // Within 15 minutes (3 buckets) the second peak, 20 minutes on, is too late.
    expect(peakRecurrence(history(TWO_DAYS, twin), 900)).toMatchObject({ drops: 32, recurred: 0 });
  });

  it("leaves out a drop whose window runs past the history, and a bucket that is missing", () => {
    // A 17th peak in the last three buckets: its drop's outcome is not known yet.
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
  const ok = (share: number) => () => ({ state: "Ok" as const, drops: 20, recurred: share * 20, share });

  it.each([
    [0.1, 600],
    [0.4, 600],
    [0.45, 1650],
    [0.5, 2700],
    [0.8, 2700],
  ])("a share of %s recurred gives a window of %s s between 600 and 2700", (share, seconds) => {
    expect(scaleDownWindow(2700, 600, ok(share)).seconds).toBe(seconds);
  });

  it("keeps the policy's window when the history cannot say, or no minimum is set", () => {
    const unknown = () => ({ state: "InsufficientHistory" as const, message: "less than a day of history" });
    expect(scaleDownWindow(2700, 600, unknown)).toEqual({
      seconds: 2700,
      maxSeconds: 2700,
      basis: "kept whole: less than a day of history",
    });
    expect(scaleDownWindow(2700, undefined, ok(0))).toEqual({ seconds: 2700, maxSeconds: 2700 });
  });
});

describe("an adaptive scale-down window in the decision", () => {
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
    const d = run(history(TWO_DAYS, lone));
    expect(d.desired?.units).toBe(3);
  });

  it("keeps it the whole window where they did, and says why", () => {
    const d = run(history(TWO_DAYS, twin));
    expect(d.desired?.units).toBe(10);
    expect(d.limitedBy).toBe("StabilizedDown");
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toBe(
      "scale-down stabilization (1800s: 50 % of 32 drops from a peak came back within 1800s in the history): the highest recommendation of the window is Premium_P1 10",
    );
  });

  it("keeps it the whole window while the history is not read", () => {
    const d = run(undefined);
    expect(d.desired?.units).toBe(10);
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toContain(
      "kept whole: history not read yet",
    );
  });

  it("keeps it the whole window in ForecastOnly, saying what the history would make it", () => {
    const d = run(history(TWO_DAYS, lone), withMode("ForecastOnly"));
    expect(d.desired?.units).toBe(10);
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toContain(
      "1800s: kept whole: anticipation is ForecastOnly (shown, not acted on); by the history it would be 300s (0 % of 16 drops",
    );
  });

  it("keeps it the whole window with anticipation Off, which reads no history", () => {
    const d = run(undefined, withMode("Off"));
    expect(d.desired?.units).toBe(10);
    expect(d.reasons.find((r) => r.code === "StabilizedDown")?.message).toContain(
      "kept whole: anticipation is Off: no seasonal history is read",
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
