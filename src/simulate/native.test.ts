import { describe, expect, it } from "vitest";
import { simulate } from "./engine.js";
import {
  defaultNativeRules,
  evaluateNative,
  NativeAutoscaleStrategy,
  type NativeSetting,
} from "./strategies/native.js";
import { minuteOf, steps, testSetup } from "./testing.js";

const P1: NativeSetting = {
  sku: "Premium_P1",
  minimum: 1,
  maximum: 100,
  default: 1,
  rules: defaultNativeRules(70, 30),
  timeWindowMinutes: 10,
  cooldownMinutes: 5,
};

const ops = (run: ReturnType<typeof simulate>) =>
  run.operations.map((o) => ({
    at: minuteOf(o.startedMs),
    from: o.from.units,
    to: o.to.units,
    sku: o.to.sku,
  }));

describe("native autoscale: the documented rules on hand-made traces", () => {
  // Connections-only load at 10 units: 5,000 → 50 %, 8,000 → 80 %; at 20 units 8,000 → 40 %, 5,000 → 25 %.
  // A poll at minute m averages the window [m−10, m) of which the buckets up to m−4 are ingested
  // (3-minute delay): 7 buckets.
  const demand = steps([
    [20, 5_000],
    [15, 8_000], // minutes 20–34 at 80 %
    [15, 5_000],
  ]);

  it("80 % for 15 minutes: one scale-out to the next allowed value once the window average passes 70 %, nothing in the cooldown", () => {
    // Poll at 28: buckets 18–24 ingested, 5 of them hot: (5·80 + 2·50)/7 = 71.4 > 70 → 10 → 20.
    // (At 27: (4·80 + 3·50)/7 = 67.1.) Cooldown 10 min: nothing until 38; at 38 the window 28–34
    // averages (5·80 + 2·40)/7 = 68.6; scale-in needs both metrics < 30: at 43, (2·40 + 5·25)/7 = 29.3
    // → 20 → 10 (estimate after: 58.6 %, under 70: no flapping).
    const strategy = new NativeAutoscaleStrategy({ ...P1, cooldownMinutes: 10 }, 10, { keepLog: true });
    const run = simulate(strategy, testSetup(demand));
    expect(ops(run)).toEqual([
      { at: 28, from: 10, to: 20, sku: "Premium_P1" },
      { at: 43, from: 20, to: 10, sku: "Premium_P1" },
    ]);
    const log = strategy.log.filter((e) => minuteOf(e.nowMs) >= 29 && minuteOf(e.nowMs) < 38);
    expect(log.every((e) => e.reason === "cooldown")).toBe(true);
    // The scale takes 5 minutes: 10 units until minute 32, 20 from 33.
    expect(run.units[32]).toBe(10);
    expect(run.units[33]).toBe(20);
  });

  it("with a 5-minute cooldown the window still holds the hot minutes measured at 10 units: a second scale-out at 33", () => {
    const run = simulate(new NativeAutoscaleStrategy(P1, 10), testSetup(demand));
    expect(ops(run).slice(0, 2)).toEqual([
      { at: 28, from: 10, to: 20, sku: "Premium_P1" },
      { at: 33, from: 20, to: 30, sku: "Premium_P1" },
    ]);
  });

  it("never changes the SKU; Premium_P1 at 100 units stays at 100 however hot", () => {
    const strategy = new NativeAutoscaleStrategy(P1, 100, { keepLog: true });
    const run = simulate(strategy, testSetup(steps([[30, 100_000]])));
    expect(run.operations).toEqual([]);
    expect(new Set(run.units)).toEqual(new Set([100]));
    expect(strategy.log.at(-1)?.reason).toBe("scale-out wanted, already at the maximum");
    expect(run.refused[29]).toBe(0);
    const over = simulate(new NativeAutoscaleStrategy(P1, 100), testSetup(steps([[30, 120_000]])));
    expect(over.operations).toEqual([]);
    expect(over.refused[29]).toBe(20_000);
  });

  it("on Premium_P2 moves along the P2 ladder: 100 → 200", () => {
    const p2: NativeSetting = { ...P1, sku: "Premium_P2", minimum: 100, maximum: 1000, default: 100 };
    const run = simulate(new NativeAutoscaleStrategy(p2, 100), testSetup(steps([[20, 90_000]])));
    expect(ops(run)[0]).toEqual({ at: 4, from: 100, to: 200, sku: "Premium_P2" });
  });
});

describe("native autoscale: one evaluation", () => {
  it("scales out if any scale-out rule fires", () => {
    expect(evaluateNative(P1, 10, { ServerLoad: 75, ConnectionQuotaUtilization: 10 }, false)).toMatchObject({
      action: "ScaleOut",
      units: 20,
    });
    expect(evaluateNative(P1, 10, { ServerLoad: 10, ConnectionQuotaUtilization: 71 }, false)).toMatchObject({
      action: "ScaleOut",
      units: 20,
    });
    expect(evaluateNative(P1, 9, { ServerLoad: 70, ConnectionQuotaUtilization: 70 }, false)).toMatchObject({
      action: "None",
    });
  });

  it("scales in only when every scale-in rule fires", () => {
    expect(evaluateNative(P1, 20, { ServerLoad: 25, ConnectionQuotaUtilization: 40 }, false)).toMatchObject({
      action: "None",
      reason: "not every scale-in rule fired",
    });
    expect(evaluateNative(P1, 20, { ServerLoad: 40, ConnectionQuotaUtilization: 25 }, false)).toMatchObject({
      action: "None",
    });
    expect(evaluateNative(P1, 20, { ServerLoad: 25 }, false)).toMatchObject({ action: "None" });
    expect(evaluateNative(P1, 20, { ServerLoad: 25, ConnectionQuotaUtilization: 29 }, false)).toMatchObject({
      action: "ScaleIn",
      units: 10,
    });
  });

  it("does nothing in the cooldown", () => {
    expect(evaluateNative(P1, 10, { ServerLoad: 99, ConnectionQuotaUtilization: 99 }, true)).toMatchObject({
      action: "None",
      reason: "cooldown",
    });
  });

  it("skips a scale-in whose estimated result would trigger a scale-out (flapping)", () => {
    const tight: NativeSetting = { ...P1, rules: defaultNativeRules(40, 30) };
    // 2 → 1 unit at 25 %: estimated 50 % after, above 40 %.
    expect(evaluateNative(tight, 2, { ServerLoad: 25, ConnectionQuotaUtilization: 25 }, false)).toMatchObject(
      { action: "None", reason: expect.stringContaining("flapping") },
    );
    // 10 → 9 at 29 %: estimated 32.2 %, fine.
    expect(
      evaluateNative(tight, 10, { ServerLoad: 29, ConnectionQuotaUtilization: 29 }, false),
    ).toMatchObject({ action: "ScaleIn", units: 9 });
  });

  it("respects the instance limits", () => {
    const bounded: NativeSetting = { ...P1, minimum: 5, maximum: 30 };
    expect(
      evaluateNative(bounded, 30, { ServerLoad: 90, ConnectionQuotaUtilization: 90 }, false),
    ).toMatchObject({ action: "None" });
    expect(evaluateNative(bounded, 5, { ServerLoad: 1, ConnectionQuotaUtilization: 1 }, false)).toMatchObject(
      { action: "None" },
    );
  });

  it("scales out to the default count when no metric can be read", () => {
    const withDefault: NativeSetting = { ...P1, default: 5 };
    expect(evaluateNative(withDefault, 2, {}, false)).toMatchObject({ action: "ScaleToDefault", units: 5 });
    expect(evaluateNative(withDefault, 8, {}, false)).toMatchObject({ action: "None" });
  });
});
