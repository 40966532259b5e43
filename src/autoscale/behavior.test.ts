import { describe, expect, it } from "vitest";
import type { ScaleEvent, ScalingRules } from "../api/index.js";
import { DEFAULT_LADDERS, type ScalableSku, type SkuUnits } from "../capacity/skus.js";
import {
  ceilSafe,
  changesInPeriod,
  floorSafe,
  periodsPerOperation,
  policyLimit,
  rateLimit,
  stabilize,
} from "./behavior.js";
import { SizeList } from "./sizes.js";

const NOW = Date.parse("2025-06-02T12:00:00Z");
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const P1 = (units: number): SkuUnits => ({ sku: "Premium_P1", units });
const P2 = (units: number): SkuUnits => ({ sku: "Premium_P2", units });
const rec = (secondsAgo: number, units: number, sku: ScalableSku = "Premium_P1") => ({
  time: ago(secondsAgo),
  units,
  sku,
});

describe("stabilize (HPA algorithm)", () => {
  it.each<[string, number, [number, number][], number, number, number, string | undefined]>([
    // name, current, stored [secondsAgo, units], fresh rec, downWindow, → result, code
    [
      "scale-in takes the max over the window",
      20,
      [
        [100, 30],
        [50, 10],
      ],
      10,
      300,
      20,
      "StabilizedDown",
    ],
    [
      "scale-in to the window's max when below current",
      20,
      [
        [100, 10],
        [50, 8],
      ],
      5,
      300,
      10,
      "StabilizedDown",
    ],
    ["no window: straight to the recommendation", 20, [[100, 30]], 5, 0, 5, undefined],
    ["a recommendation exactly window-old is outside", 20, [[300, 30]], 5, 300, 5, undefined],
    ["one second younger is inside", 20, [[299, 30]], 5, 300, 20, "StabilizedDown"],
    ["scale-out ignores the scale-down window", 10, [[100, 5]], 30, 300, 30, undefined],
  ])("%s", (_n, current, stored, fresh, down, result, code) => {
    const r = stabilize({
      current: P1(current),
      recommendation: P1(fresh),
      history: stored.map(([s, u]) => rec(s, u)),
      nowMs: NOW,
      scaleUpWindowSeconds: 0,
      scaleDownWindowSeconds: down,
    });
    expect(r.size.units).toBe(result);
    expect(r.code).toBe(code);
  });

  it("scale-out takes the lowest recommendation of the scale-up window", () => {
    const r = stabilize({
      current: P1(10),
      recommendation: P1(40),
      history: [rec(30, 30), rec(10, 20), rec(120, 9)],
      nowMs: NOW,
      scaleUpWindowSeconds: 60,
      scaleDownWindowSeconds: 0,
    });
    expect(r.size.units).toBe(20);
    expect(r.code).toBe("StabilizedUp");
    expect(r.up.units).toBe(20);
  });

  it.each<[string, [number, number][], number, number, number | undefined, number | undefined]>([
    // name, stored [secondsAgo, units], fraction → held units, whole, roundedUp
    // (current 30, fresh 3, window 1800 s, after 300 s)
    [
      "holds the fraction of the window's highest, rounded up to the ladder",
      [[1000, 30]],
      0.45,
      20,
      30,
      undefined,
    ],
    [
      "the highest of the last afterSeconds counts whole",
      [
        [1000, 30],
        [100, 25],
      ],
      0.45,
      25,
      30,
      undefined,
    ],
    ["never above the window's highest", [[1000, 30]], 1, 30, undefined, 30],
    ["a fraction that rounds under this pass lets the peak go", [[1000, 30]], 0.05, 3, 30, undefined],
    [
      "holds whole where no smaller size holds the share (60 % of 20 is 12)",
      [[1000, 20]],
      0.6,
      20,
      undefined,
      12,
    ],
    ["holds in part where one does (50 % of 20 is 10)", [[1000, 20]], 0.5, 10, 20, undefined],
    [
      "a peak of the last afterSeconds is whole, not rounded",
      [
        [1000, 20],
        [100, 20],
      ],
      0.6,
      20,
      undefined,
      undefined,
    ],
  ])("a partial hold %s", (_n, stored, fraction, result, whole, roundedUp) => {
    const ladder = new SizeList(["Premium_P1"], P1(30), DEFAULT_LADDERS);
    const r = stabilize({
      current: P1(30),
      recommendation: P1(3),
      history: stored.map(([s, u]) => rec(s, u)),
      nowMs: NOW,
      scaleUpWindowSeconds: 0,
      scaleDownWindowSeconds: 1800,
      scaleDownPartial: { afterSeconds: 300, fraction, round: (units) => ladder.firstAtLeast(units) },
    });
    expect(r.size.units).toBe(result);
    expect(r.code).toBe(result === 3 ? undefined : "StabilizedDown");
    expect(r.whole?.units).toBe(whole);
    if (roundedUp === undefined) expect(r.roundedUp).toBeUndefined();
    else expect(r.roundedUp).toBeCloseTo(roundedUp);
  });

  it("compares SKUs at equal units by tier", () => {
    const r = stabilize({
      current: P1(100),
      recommendation: P2(100),
      history: [],
      nowMs: NOW,
      scaleUpWindowSeconds: 0,
      scaleDownWindowSeconds: 600,
    });
    expect(r.size).toEqual(P2(100));
  });
});

const rules = (
  policies: ScalingRules["policies"],
  selectPolicy: ScalingRules["selectPolicy"] = "Max",
): ScalingRules => ({
  stabilizationWindowSeconds: 0,
  selectPolicy,
  policies,
});
const NONE = rules([{ type: "Units", value: 1000, periodSeconds: 60 }]);
const sizes = (current: SkuUnits, skus: ScalableSku[] = ["Premium_P1"]) =>
  new SizeList(skus, current, DEFAULT_LADDERS);

describe("policyLimit", () => {
  const rungs = sizes(P1(10)).rungs;
  it.each<[string, "up" | "down", number, number]>([
    ["Units", "up", 10, 15],
    ["Units", "down", 10, 5],
    ["Percent", "up", 10, 15], // ceil(10 · 1.5)
    ["Percent", "down", 10, 5], // floor(10 · 0.5)
    ["Steps", "up", 10, 60], // 10 → 20, 30, 40, 50, 60
    ["Steps", "down", 10, 5],
  ])("%s 5 %s from %s → %s", (type, dir, start, limit) => {
    expect(
      policyLimit(
        { type: type as "Units", value: type === "Percent" ? 50 : 5, periodSeconds: 60 },
        dir,
        start,
        rungs,
      ),
    ).toBe(limit);
  });

  it("Percent rounds up going up and down going down, without binary noise", () => {
    expect(policyLimit({ type: "Percent", value: 10, periodSeconds: 60 }, "up", 30, rungs)).toBe(33);
    expect(policyLimit({ type: "Percent", value: 10, periodSeconds: 60 }, "up", 7, rungs)).toBe(8);
    expect(policyLimit({ type: "Percent", value: 30, periodSeconds: 60 }, "down", 10, rungs)).toBe(7);
    expect(ceilSafe(1.1 * 10)).toBe(11);
    expect(floorSafe(0.7 * 10)).toBe(7);
  });

  it("per operation: a period shorter than one scale applies once per period of it", () => {
    // A 5-minute scale spans 5 periods of 60 s; a 600 s period is applied once (k ≥ 1).
    const up = (p: Parameters<typeof policyLimit>[0], start: number, seconds: number) =>
      policyLimit(p, "up", start, rungs, periodsPerOperation(p, seconds));
    expect(periodsPerOperation({ type: "Percent", value: 100, periodSeconds: 60 }, 300)).toBe(5);
    expect(periodsPerOperation({ type: "Percent", value: 50, periodSeconds: 600 }, 300)).toBe(1);
    expect(periodsPerOperation({ type: "Percent", value: 50, periodSeconds: 60 }, 0)).toBe(1);
    // Percent 100 per 60 s: 2⁵ = 32 × per operation, as the HPA doubles every minute.
    expect(up({ type: "Percent", value: 100, periodSeconds: 60 }, 5, 300)).toBe(160);
    expect(up({ type: "Percent", value: 100, periodSeconds: 60 }, 5, 60)).toBe(10);
    // Percent 10 per 60 s: ceil(30 · 1.1⁵ = 48.3) = 49.
    expect(up({ type: "Percent", value: 10, periodSeconds: 60 }, 30, 300)).toBe(49);
    // Units 2 per 60 s over a 3-minute scale: 6 units; Steps 1 per 120 s over 5 minutes: 2 rungs.
    expect(up({ type: "Units", value: 2, periodSeconds: 60 }, 5, 180)).toBe(11);
    expect(up({ type: "Steps", value: 1, periodSeconds: 120 }, 9, 300)).toBe(20);
    // Going down compounds the same way: Percent 50 per 60 s over 3 periods keeps 1/8.
    const down = { type: "Percent", value: 50, periodSeconds: 60 } as const;
    expect(policyLimit(down, "down", 80, rungs, periodsPerOperation(down, 180))).toBe(10);
  });

  it("Steps count rungs of the union ladder and stop at its ends", () => {
    const both = sizes(P1(100), ["Premium_P1", "Premium_P2"]).rungs;
    expect(policyLimit({ type: "Steps", value: 1, periodSeconds: 60 }, "up", 100, both)).toBe(200);
    expect(policyLimit({ type: "Steps", value: 50, periodSeconds: 60 }, "up", 100, both)).toBe(1000);
    expect(policyLimit({ type: "Steps", value: 1, periodSeconds: 60 }, "down", 200, both)).toBe(100);
    expect(policyLimit({ type: "Steps", value: 50, periodSeconds: 60 }, "down", 200, both)).toBe(1);
  });
});

describe("rateLimit", () => {
  const ev = (secondsAgo: number, from: number, to: number): ScaleEvent => ({
    time: ago(secondsAgo),
    fromSku: "Premium_P1",
    fromUnits: from,
    toSku: "Premium_P1",
    toUnits: to,
  });
  it.each<["up" | "down", string, number, number, ScalingRules, ScaleEvent[], number, string | undefined]>([
    [
      "up",
      "Units 10/60s caps 10 → 50 at 20",
      10,
      50,
      rules([{ type: "Units", value: 10, periodSeconds: 60 }]),
      [],
      20,
      "RateLimitedUp",
    ],
    [
      "up",
      "Percent 100 caps 10 → 50 at 20",
      10,
      50,
      rules([{ type: "Percent", value: 100, periodSeconds: 60 }]),
      [],
      20,
      "RateLimitedUp",
    ],
    [
      "up",
      "Steps 2 caps 10 → 50 at 30",
      10,
      50,
      rules([{ type: "Steps", value: 2, periodSeconds: 60 }]),
      [],
      30,
      "RateLimitedUp",
    ],
    [
      "up",
      "within the limit passes",
      10,
      20,
      rules([{ type: "Steps", value: 2, periodSeconds: 60 }]),
      [],
      20,
      undefined,
    ],
    [
      "up",
      "Max picks the policy allowing more",
      10,
      100,
      rules([
        { type: "Units", value: 10, periodSeconds: 60 },
        { type: "Steps", value: 3, periodSeconds: 60 },
      ]),
      [],
      40,
      "RateLimitedUp",
    ],
    [
      "up",
      "Min picks the policy allowing less",
      10,
      100,
      rules(
        [
          { type: "Units", value: 10, periodSeconds: 60 },
          { type: "Steps", value: 3, periodSeconds: 60 },
        ],
        "Min",
      ),
      [],
      20,
      "RateLimitedUp",
    ],
    [
      "up",
      "a limit between rungs still allows the next rung",
      10,
      50,
      rules([{ type: "Units", value: 5, periodSeconds: 60 }]),
      [],
      20,
      "RateLimitedUp",
    ],
    [
      "up",
      "a change in the period uses up the allowance",
      20,
      50,
      rules([{ type: "Units", value: 10, periodSeconds: 60 }]),
      [ev(30, 10, 20)],
      20,
      "RateLimitedUp",
    ],
    [
      "up",
      "an older change does not count",
      20,
      50,
      rules([{ type: "Units", value: 10, periodSeconds: 60 }]),
      [ev(60, 10, 20)],
      30,
      "RateLimitedUp",
    ],
    [
      "up",
      "Disabled forbids scaling up",
      10,
      50,
      rules([{ type: "Units", value: 10, periodSeconds: 60 }], "Disabled"),
      [],
      10,
      "ScaleUpDisabled",
    ],
    [
      "down",
      "Percent 50 caps 40 → 5 at 20",
      40,
      5,
      rules([{ type: "Percent", value: 50, periodSeconds: 600 }]),
      [],
      20,
      "RateLimitedDown",
    ],
    [
      "down",
      "Units 10 caps 40 → 5 at 30",
      40,
      5,
      rules([{ type: "Units", value: 10, periodSeconds: 600 }]),
      [],
      30,
      "RateLimitedDown",
    ],
    [
      "down",
      "Steps 1 caps 40 → 5 at 30",
      40,
      5,
      rules([{ type: "Steps", value: 1, periodSeconds: 600 }]),
      [],
      30,
      "RateLimitedDown",
    ],
    [
      "down",
      "Percent 10 from 20 still allows one rung (10)",
      20,
      5,
      rules([{ type: "Percent", value: 10, periodSeconds: 600 }]),
      [],
      10,
      "RateLimitedDown",
    ],
    [
      "down",
      "Max (down) picks the larger change",
      40,
      1,
      rules([
        { type: "Units", value: 10, periodSeconds: 600 },
        { type: "Percent", value: 75, periodSeconds: 600 },
      ]),
      [],
      10,
      "RateLimitedDown",
    ],
    [
      "down",
      "a scale-in earlier in the period counts",
      20,
      5,
      rules([{ type: "Percent", value: 50, periodSeconds: 600 }]),
      [ev(300, 40, 20)],
      20,
      "RateLimitedDown",
    ],
    [
      "down",
      "Disabled forbids scaling down",
      40,
      5,
      rules([{ type: "Percent", value: 50, periodSeconds: 600 }], "Disabled"),
      [],
      40,
      "ScaleDownDisabled",
    ],
  ])("%s: %s", (dir, _n, current, proposed, limits, events, result, code) => {
    const r = rateLimit({
      current: P1(current),
      proposed: P1(proposed),
      sizes: sizes(P1(current)),
      events,
      nowMs: NOW,
      scaleUp: dir === "up" ? limits : NONE,
      scaleDown: dir === "down" ? limits : NONE,
    });
    expect(r.size.units).toBe(result);
    expect(r.code).toBe(code);
  });

  it("a SKU change at the same units is not rate limited", () => {
    const r = rateLimit({
      current: P1(100),
      proposed: P2(100),
      sizes: sizes(P1(100), ["Premium_P1", "Premium_P2"]),
      events: [],
      nowMs: NOW,
      scaleUp: rules([{ type: "Units", value: 1, periodSeconds: 60 }]),
      scaleDown: NONE,
    });
    expect(r.size).toEqual(P2(100));
    expect(r.code).toBeUndefined();
  });

  it("changesInPeriod adds up units added and removed in the period", () => {
    expect(changesInPeriod([ev(10, 10, 20), ev(20, 30, 10), ev(700, 1, 100)], NOW, 600)).toEqual({
      added: 10,
      removed: 20,
    });
  });

  it("a change counts from when its update was sent, as the HPA counts a rescale from when it made it", () => {
    // Percent 100 per 300 s on 5-minute scales: 5 → 10 sent 330 s ago, seen complete 30 s ago.
    // Its period has passed: the next doubling may go now (counted from the completion it would
    // wait 270 s more, one doubling per two operations' time).
    const rules: ScalingRules = {
      stabilizationWindowSeconds: 0,
      selectPolicy: "Max",
      policies: [{ type: "Percent", value: 100, periodSeconds: 300 }],
    };
    const sent = { ...ev(30, 5, 10), startedAt: ago(330) };
    const input = {
      current: P1(10),
      proposed: P1(40),
      sizes: sizes(P1(10)),
      nowMs: NOW,
      scaleUp: rules,
      scaleDown: rules,
    };
    expect(rateLimit({ ...input, events: [sent], operationSeconds: 300 })).toMatchObject({
      size: P1(20),
      limitUnits: 20,
    });
    // Sent 200 s ago: still within its period, the limit is twice the 5 units before it.
    const recent = { ...ev(30, 5, 10), startedAt: ago(200) };
    expect(rateLimit({ ...input, events: [recent], operationSeconds: 300 })).toMatchObject({
      size: P1(10),
      code: "RateLimitedUp",
      limitUnits: 10,
    });
    // A change found on the instance without a record of its update counts from when it was seen.
    expect(changesInPeriod([ev(30, 5, 10)], NOW, 300)).toEqual({ added: 5, removed: 0 });
    expect(changesInPeriod([sent], NOW, 300)).toEqual({ added: 0, removed: 0 });
  });
});
