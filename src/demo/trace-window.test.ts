import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../localcluster/paths.js";
import { parseTrace, traceDemand } from "../traffic/index.js";
import {
  DEFAULT_TRACE,
  DEFAULT_TRACE_FOCUS_MS,
  defaultWindowStart,
  peakTime,
  traceWindow,
} from "./trace-window.js";

const H = 3_600_000;
const csv = (rows: [string, number][]) =>
  `timestamp,value\n${rows.map(([t, v]) => `${t},${v}`).join("\n")}\n`;
const SMALL = parseTrace(
  csv([
    ["2015-01-01 00:00:00", 10],
    ["2015-01-01 01:00:00", 20],
    ["2015-01-01 02:00:00", 80],
    ["2015-01-01 03:00:00", 40],
    ["2015-01-01 04:00:00", 100],
    ["2015-01-01 05:00:00", 30],
  ]),
  "small.csv",
);
const AT = (h: number) => Date.UTC(2015, 0, 1, h);

describe("traceWindow", () => {
  it("keeps the rows of the window plus one on each side, and the largest value inside it", () => {
    const w = traceWindow(SMALL, AT(1) + 30 * 60_000, 2 * H);
    expect(w.startMs).toBe(AT(1) + 30 * 60_000);
    expect(w.durationMs).toBe(2 * H);
    expect(w.trace.points.map((p) => p.value)).toEqual([20, 80, 40, 100]);
    expect(w.trace.max).toBe(80);
    expect(w.replayStartMs).toBe(AT(1));
  });

  it("replays in trace time: the demand at a virtual time is the trace's value then, scaled", () => {
    const w = traceWindow(SMALL, AT(1), 3 * H);
    const demand = traceDemand(w.trace, new Date(w.replayStartMs), 1000);
    expect(demand(new Date(AT(2)))).toBeCloseTo(1000); // 80 is the window's largest value
    expect(demand(new Date(AT(2) + 30 * 60_000))).toBeCloseTo(750); // halfway from 80 to 40
  });

  it("rejects a window outside the trace", () => {
    expect(() => traceWindow(SMALL, AT(9), H)).toThrow(RangeError);
    expect(() => traceWindow(SMALL, AT(-5), H)).toThrow(/holds no row/);
  });
});

describe("defaultWindowStart", () => {
  it("puts a little under half of the window before the focus, on 5 minutes", () => {
    expect(peakTime(SMALL)).toBe(AT(4));
    const start = defaultWindowStart(SMALL, 2 * H, AT(2));
    expect(start).toBe(AT(1)); // 2 h × 0.47 = 56.4 min before 02:00 is 01:03:36, floored
  });

  it("stays inside a trace long enough for the window", () => {
    expect(defaultWindowStart(SMALL, 2 * H)).toBe(AT(3)); // focus 04:00, but the trace ends at 05:00
    expect(defaultWindowStart(SMALL, 10 * H)).toBe(AT(0));
  });

  it("puts the shipped trace's 14 April flash crowd in a day window starting about noon", () => {
    const trace = parseTrace(readFileSync(join(repoRoot(), DEFAULT_TRACE), "utf8"), DEFAULT_TRACE);
    const start = defaultWindowStart(trace, 24 * H, DEFAULT_TRACE_FOCUS_MS);
    expect(new Date(start).toISOString()).toBe("2015-04-14T12:00:00.000Z");
    const w = traceWindow(trace, start, 24 * H);
    expect(w.trace.max).toBe(11_899); // the crowd's top, 23:22
    expect(w.trace.points.length).toBeGreaterThan(280);
  });
});
