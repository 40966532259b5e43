import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseTrace, parseTraceTimestamp, TraceFormatError, traceDemand, traceValueAt } from "./trace.js";

const repo = new URL("../..", import.meta.url);
const read = (name: string) => readFileSync(new URL(`traces/${name}`, repo), "utf8");

describe("parseTrace", () => {
  it("reads the shipped traces", () => {
    const taxi = parseTrace(read("nyc_taxi.csv"), "nyc_taxi.csv");
    expect(taxi.points).toHaveLength(10_320);
    expect(taxi.stepMs).toBe(30 * 60_000);
    expect(taxi.points[0]).toEqual({ t: Date.UTC(2014, 6, 1), value: 10_844 });
    const twitter = parseTrace(read("twitter_volume_aapl.csv"));
    expect(twitter.points).toHaveLength(15_902);
    expect(twitter.stepMs).toBe(5 * 60_000);
    expect(twitter.max).toBe(13_479);
  });

  it("accepts CRLF, a BOM, blank lines and ISO timestamps with a zone", () => {
    const t = parseTrace("\uFEFFtimestamp,value\r\n2025-01-01T00:00:00Z,1\r\n\r\n2025-01-01 00:10:00,3\r\n");
    expect(t.points.map((p) => p.value)).toEqual([1, 3]);
  });

  it.each([
    ["", "the file is empty"],
    [
      "time,value\n2025-01-01 00:00:00,1\n2025-01-01 00:01:00,2",
      'line 1: expected the header "timestamp,value", got "time,value"',
    ],
    ["timestamp,value,extra\n", 'expected the header "timestamp,value"'],
    ["timestamp,value\n2025-01-01 00:00:00,1,2\n", "line 2: expected 2 fields"],
    ["timestamp,value\n2014-02-30 00:00:00,1\n", 'line 2: "2014-02-30 00:00:00" is not a timestamp'],
    ["timestamp,value\nyesterday,1\n", 'line 2: "yesterday" is not a timestamp'],
    ["timestamp,value\n2025-01-01 00:00:00,-1\n", 'line 2: "-1" is not a finite, non-negative number'],
    ["timestamp,value\n2025-01-01 00:00:00,abc\n", 'line 2: "abc" is not a finite'],
    [
      "timestamp,value\n2025-01-01 00:01:00,1\n2025-01-01 00:00:00,1\n",
      "line 3: timestamp 2025-01-01 00:00:00 does not come after",
    ],
    ["timestamp,value\n2025-01-01 00:00:00,1\n", "at least 2 rows, got 1"],
  ])("rejects %j: %s", (text, message) => {
    expect(() => parseTrace(text, "t.csv")).toThrow(TraceFormatError);
    expect(() => parseTrace(text, "t.csv")).toThrow(message);
  });

  it("parses timestamps as UTC", () => {
    expect(parseTraceTimestamp("2015-02-26 21:42:53")).toBe(Date.UTC(2015, 1, 26, 21, 42, 53));
    expect(parseTraceTimestamp("2015-02-26T21:42:53+01:00")).toBe(Date.UTC(2015, 1, 26, 20, 42, 53));
    expect(parseTraceTimestamp("26/02/2015")).toBeUndefined();
  });
});

describe("replay", () => {
  const t = parseTrace(
    "timestamp,value\n2025-01-01 00:00:00,0\n2025-01-01 00:10:00,100\n2025-01-01 00:20:00,50\n",
  );

  it("interpolates linearly between rows and loops", () => {
    expect(t.durationMs).toBe(30 * 60_000);
    expect(traceValueAt(t, 0)).toBe(0);
    expect(traceValueAt(t, 5 * 60_000)).toBe(50);
    expect(traceValueAt(t, 15 * 60_000)).toBe(75);
    expect(traceValueAt(t, 25 * 60_000)).toBe(25); // last row back to the first over one step
    expect(traceValueAt(t, 35 * 60_000)).toBe(50);
    expect(traceValueAt(t, -25 * 60_000)).toBe(50);
  });

  it("scales the largest value to the peak", () => {
    const start = new Date("2030-01-01T00:00:00Z");
    const demand = traceDemand(t, start, 120_000);
    expect(demand(new Date(start.getTime() + 10 * 60_000))).toBe(120_000);
    expect(demand(new Date(start.getTime() + 20 * 60_000))).toBe(60_000);
    expect(() => traceDemand(t, start, -1)).toThrow(RangeError);
  });
});
