import { describe, expect, it } from "vitest";
import { dailyPattern, demandFunction, describeDemand, parsePattern, patternFraction } from "./demand.js";
import { parseTrace } from "./trace.js";

const start = new Date("2025-01-01T00:00:00Z");

describe("patterns", () => {
  it("daily peaks at the peak hour and bottoms out twelve hours later", () => {
    const p = parsePattern("daily");
    expect(patternFraction(p, start, new Date("2025-01-05T14:00:00Z"))).toBeCloseTo(1, 9);
    expect(patternFraction(p, start, new Date("2025-01-05T02:00:00Z"))).toBeCloseTo(0.2, 9);
    expect(patternFraction(p, start, new Date("2025-01-05T08:00:00Z"))).toBeCloseTo(0.6, 9);
  });

  it("ramp climbs to the peak and holds", () => {
    const p = { kind: "ramp", minutes: 10 } as const;
    expect(patternFraction(p, start, new Date(start.getTime() - 60_000))).toBe(0);
    expect(patternFraction(p, start, new Date(start.getTime() + 5 * 60_000))).toBe(0.5);
    expect(patternFraction(p, start, new Date(start.getTime() + 60 * 60_000))).toBe(1);
  });

  it("rejects unknown names", () => {
    expect(() => parsePattern("weekly")).toThrow(
      'unknown demand pattern "weekly" (known: constant, daily, ramp)',
    );
  });
});

describe("dailyPattern", () => {
  const at = (iso: string) => new Date(iso);
  it("peaks at its hour and bottoms at its trough, every day alike", () => {
    const p = dailyPattern(9, 0.5);
    const start = at("2025-03-01T00:00:00Z");
    expect(patternFraction(p, start, at("2025-02-20T09:00:00Z"))).toBeCloseTo(1, 9);
    expect(patternFraction(p, start, at("2025-03-03T09:00:00Z"))).toBeCloseTo(1, 9);
    expect(patternFraction(p, start, at("2025-03-03T21:00:00Z"))).toBeCloseTo(0.5, 9);
    expect(describeDemand({ kind: "pattern", pattern: p, peakConnections: 8000 })).toBe(
      "daily (peak at 9:00 UTC, trough 50 %), peak 8,000",
    );
  });

  it("refuses an hour outside the day and a trough outside [0, 1]", () => {
    expect(() => dailyPattern(24)).toThrow(RangeError);
    expect(() => dailyPattern(-1)).toThrow(RangeError);
    expect(() => dailyPattern(12, 1.5)).toThrow(/trough/);
    expect(dailyPattern()).toEqual({ kind: "daily" });
  });
});

describe("demandFunction", () => {
  it("scales patterns and traces to the peak", () => {
    expect(
      demandFunction({ kind: "pattern", pattern: { kind: "constant" }, peakConnections: 500 }, start)(start),
    ).toBe(500);
    const trace = parseTrace("timestamp,value\n2014-01-01 00:00:00,5\n2014-01-01 00:30:00,10\n");
    const f = demandFunction({ kind: "trace", trace, peakConnections: 1000 }, start);
    expect(f(start)).toBe(500);
    expect(f(new Date(start.getTime() + 30 * 60_000))).toBe(1000);
    expect(() =>
      demandFunction({ kind: "pattern", pattern: { kind: "constant" }, peakConnections: Number.NaN }, start),
    ).toThrow(RangeError);
  });
});
