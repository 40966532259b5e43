import { describe, expect, it } from "vitest";
import type { ScaleEvent } from "../api/index.js";
import { catchUp, catchUpPeriods, runGapSeconds } from "./catch-up.js";

const NOW = Date.parse("2025-06-02T12:00:00Z");
const ago = (minutes: number) => new Date(NOW - minutes * 60_000).toISOString();
/** A scale event sent `sentMinutesAgo` and observed complete 5 minutes later. */
const scale = (sentMinutesAgo: number, fromUnits: number, toUnits: number): ScaleEvent => ({
  time: ago(sentMinutesAgo - 5),
  startedAt: ago(sentMinutesAgo),
  fromUnits,
  toUnits,
  fromSku: "Premium_P1",
  toSku: "Premium_P1",
});
// The defaults: a 300 s scale, a 300 s window, a 180 s ingestion delay, a 30 s poll: 810 s.
const GAP = runGapSeconds({
  scaleSeconds: 300,
  windowSeconds: 300,
  ingestionDelaySeconds: 180,
  pollSeconds: 30,
});
const run = (events: ScaleEvent[], saturated = true) =>
  catchUp({ saturated, events, nowMs: NOW, gapSeconds: GAP, scaleSeconds: 300 });

describe("catch-up", () => {
  it("one step of a run is a scale, a window at the new size after the ingestion delay, and a poll", () => {
    expect(GAP).toBe(810);
  });

  it("no signal at its ceiling: no catch-up, the policies apply once", () => {
    expect(run([scale(9, 3, 6)], false)).toBeUndefined();
    expect(catchUpPeriods(undefined, 60)).toBe(1);
  });

  it("counts the scale-outs sent within a step of each other, newest first", () => {
    // Sent 9, 18 and 27 minutes ago: each within 13.5 minutes of the next (and of now).
    expect(run([scale(27, 1, 2), scale(18, 2, 3), scale(9, 3, 6)])).toEqual({
      scaleOuts: 3,
      scaleSeconds: 300,
    });
    // The first of a crowd: none before it.
    expect(run([])).toEqual({ scaleOuts: 0, scaleSeconds: 300 });
  });

  it("a gap longer than a step, or a scale-in, ends the run", () => {
    // 14 minutes since the newest: the saturation now is a new crowd.
    expect(run([scale(23, 3, 6), scale(14, 6, 10)])?.scaleOuts).toBe(0);
    // 9 → 30 minutes apart: only the newest counts.
    expect(run([scale(30, 2, 3), scale(9, 3, 6)])?.scaleOuts).toBe(1);
    expect(run([scale(18, 3, 6), scale(12, 6, 4), scale(6, 4, 8)])?.scaleOuts).toBe(1);
  });

  it("periods: one more per scale-out of the run, at most one per period of a scale, at least one", () => {
    expect(catchUpPeriods({ scaleOuts: 0, scaleSeconds: 300 }, 60)).toBe(1);
    expect(catchUpPeriods({ scaleOuts: 2, scaleSeconds: 300 }, 60)).toBe(3);
    expect(catchUpPeriods({ scaleOuts: 7, scaleSeconds: 300 }, 60)).toBe(5);
    expect(catchUpPeriods({ scaleOuts: 7, scaleSeconds: 300 }, 120)).toBe(2);
    expect(catchUpPeriods({ scaleOuts: 7, scaleSeconds: 300 }, 600)).toBe(1);
  });
});
