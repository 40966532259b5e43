import { describe, expect, it } from "vitest";
import { failoverShares, groupOffered, memberAway, memberDown } from "./failover.js";

const M = 60_000;

describe("where a replica group's clients go", () => {
  it("a member is down from the minute it stops to the minute it serves again", () => {
    const gaps = [{ fromMs: 10 * M + 20_000, toMs: 20 * M + 5_000 }];
    expect([9, 10, 19, 20].map((m) => memberDown(gaps, m * M))).toEqual([false, true, true, false]);
    expect(memberDown([{ fromMs: 10 * M }], 500 * M)).toBe(true);
    expect(memberAway([], 5 * M, 1_200)).toBe(0);
    expect(memberAway(gaps, 15 * M, 1_200)).toBe(1);
    // After it serves again, exp(−t/W) of its clients are still away, t to the minute's middle.
    expect(memberAway(gaps, 30 * M, 1_200)).toBeCloseTo(Math.exp(-(10 * 60 + 25) / 1_200), 12);
    expect(() => memberAway(gaps, 0, 0)).toThrow(RangeError);
  });

  it("splits the away clients over the serving members by their own demand, and keeps the total", () => {
    const out = groupOffered([
      { own: 6_000, down: true, away: 1 },
      { own: 3_000, down: false, away: 0 },
      { own: 1_000, down: false, away: 0 },
    ]);
    expect(out).toEqual([0, 7_500, 2_500]);
    // Drifting back: a quarter still away, on the others by their demand.
    const back = groupOffered([
      { own: 6_000, down: false, away: 0.25 },
      { own: 3_000, down: false, away: 0 },
      { own: 1_000, down: false, away: 0 },
    ]);
    expect(back).toEqual([4_500, 3_000 + 1_125, 1_000 + 375]);
    // Receivers without demand share equally; nobody serving: lost.
    expect(
      groupOffered([
        { own: 900, down: true, away: 1 },
        { own: 0, down: false, away: 0 },
        { own: 0, down: false, away: 0 },
      ]),
    ).toEqual([0, 450, 450]);
    expect(
      groupOffered([
        { own: 900, down: true, away: 1 },
        { own: 10, down: true, away: 1 },
      ]),
    ).toEqual([0, 0]);
  });

  it("failover shares exclude the stopped member and those down", () => {
    const members = [
      { own: 6_000, down: false },
      { own: 3_000, down: false },
      { own: 1_000, down: true },
    ];
    expect(failoverShares(members, 0)).toEqual([0, 1, 0]);
    expect(failoverShares(members, 2)).toEqual([6 / 9, 3 / 9, 0]);
  });

  it("a drain is not down: its clients leave as their connections end, and come back the same way", () => {
    const drain = [{ fromMs: 10 * M, toMs: 30 * M, drain: true }];
    expect(memberDown(drain, 15 * M)).toBe(false);
    expect(memberAway(drain, 10 * M, 1_200)).toBeCloseTo(1 - Math.exp(-30 / 1_200), 12);
    expect(memberAway(drain, 29 * M, 1_200)).toBeCloseTo(1 - Math.exp(-(19 * 60 + 30) / 1_200), 12);
    // Enabled at 30 min: the share away then, 1 − e^(−1), decays.
    expect(memberAway(drain, 40 * M, 1_200)).toBeCloseTo(
      (1 - Math.exp(-1)) * Math.exp(-(10 * 60 + 30) / 1_200),
      12,
    );
  });
});
