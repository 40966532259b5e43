import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextPollTime } from "./schedule.js";

const S = 1000;

describe("nextPollTime", () => {
  it("keeps a policy read just after its due time on the grid: one interval later", () => {
    expect(nextPollTime(1_800_000 + 40, 30 * S)).toBe(1_830_000);
    expect(nextPollTime(1_800_000, 30 * S)).toBe(1_830_000);
    expect(nextPollTime(1_800_000 + 14 * S, 30 * S)).toBe(1_830_000);
  });

  it("puts a policy off the grid on it, within half to one and a half intervals", () => {
    expect(nextPollTime(1_800_000 + 15 * S, 30 * S)).toBe(1_830_000);
    expect(nextPollTime(1_800_000 + 16 * S, 30 * S)).toBe(1_860_000);
  });

  it("makes policies read at different moments of one cycle due together", () => {
    const reads = [1_800_000 + 120, 1_800_000 + 950, 1_800_000 + 4_200];
    expect(new Set(reads.map((t) => nextPollTime(t, 30 * S)))).toEqual(new Set([1_830_000]));
  });

  it("lines up intervals that divide each other (15 s in-flight polls meet 30 s cycles)", () => {
    const at = nextPollTime(1_800_000 + 300, 15 * S);
    expect(at % (15 * S)).toBe(0);
    expect(at).toBe(1_815_000);
  });

  it("is on the grid and between half and one and a half intervals ahead", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 42 }), fc.integer({ min: 1, max: 3_600_000 }), (t, i) => {
        const next = nextPollTime(t, i);
        expect(next % i).toBe(0);
        expect(next - t).toBeGreaterThanOrEqual(i / 2);
        expect(next - t).toBeLessThanOrEqual(1.5 * i);
      }),
    );
  });

  it("is readAt itself for an interval that is not positive", () => {
    expect(nextPollTime(1000, 0)).toBe(1000);
    expect(nextPollTime(1000, -5)).toBe(1000);
  });
});
