import { describe, expect, it } from "vitest";
import { demandFunction, parsePattern, patternFraction } from "./demand.js";
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
