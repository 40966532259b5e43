import { describe, expect, it } from "vitest";
import { emptyRun } from "./engine.js";
import { DEFAULT_PRICES, parsePrices, summarize } from "./metrics.js";

function handRun() {
  // 120 minutes: 60 on Premium_P1 × 10 units, then 60 on Premium_P2 × 100 units.
  const run = emptyRun("x", "hand-made", 120);
  for (let m = 0; m < 120; m++) {
    run.sku[m] = m < 60 ? 1 : 2;
    run.units[m] = m < 60 ? 10 : 100;
    run.loadPercent[m] = m < 3 ? 95 : m < 10 ? 90 : m < 20 ? 70 : 40;
    run.refused[m] = m < 5 ? 1_000 : 0;
    run.throttled[m] = m >= 100 && m < 103 ? 1 : 0;
  }
  run.operations.push({
    startedMs: 0,
    completedMs: 0,
    from: { sku: "Premium_P1", units: 10 },
    to: { sku: "Premium_P2", units: 100 },
  });
  return run;
}

describe("metrics", () => {
  it("counts minutes above target, above high load, refused and throttled minutes", () => {
    expect(summarize(handRun(), { loadTargetPercent: 70, prices: DEFAULT_PRICES })).toMatchObject({
      minutesAboveTarget: 10, // 70 % exactly is not above
      minutesAboveHighLoad: 3, // 90 % exactly is not above
      minutesRefused: 5,
      refusedConnectionMinutes: 5_000,
      peakRefused: 1_000,
      minutesThrottled: 3,
      peakLoadPercent: 95,
    });
    // High load does not follow the target: at a 95 % target, the 95 % minutes are not above it.
    expect(summarize(handRun(), { loadTargetPercent: 95, prices: DEFAULT_PRICES })).toMatchObject({
      minutesAboveTarget: 0,
      minutesAboveHighLoad: 3,
    });
  });

  it("sums unit-hours per SKU and prices them per unit-day", () => {
    const prices = { Standard_S1: 1, Premium_P1: 2.4, Premium_P2: 4.8 };
    const m = summarize(handRun(), { loadTargetPercent: 70, prices });
    // 10 unit-hours × 2.4/24 + 100 unit-hours × 4.8/24 = 1 + 20
    expect(m.cost).toBeCloseTo(21, 10);
    expect(m.unitHours).toEqual({ Premium_P1: 10, Premium_P2: 100 });
    expect(m).toMatchObject({
      totalUnitHours: 110,
      p2Minutes: 60,
      p2UnitHours: 100,
      meanUnits: 55,
      peakUnits: 100,
      scaleOperations: 1,
    });
  });

  it("a day at one unit costs one unit-day's price", () => {
    const run = emptyRun("d", "a day", 1440);
    run.sku.fill(0);
    run.units.fill(1);
    expect(summarize(run, { loadTargetPercent: 70, prices: DEFAULT_PRICES }).cost).toBeCloseTo(
      DEFAULT_PRICES.Standard_S1,
      10,
    );
  });

  it("parses SKU=price entries onto the defaults", () => {
    expect(parsePrices(["Premium_P1=1.9", "Standard_S1=1,Premium_P2=3"])).toEqual({
      Standard_S1: 1,
      Premium_P1: 1.9,
      Premium_P2: 3,
    });
    expect(parsePrices([])).toEqual(DEFAULT_PRICES);
    expect(() => parsePrices(["Free_F1=0"])).toThrow(/SKU=USD/);
    expect(() => parsePrices(["Premium_P1=-1"])).toThrow(/non-negative/);
    expect(() => parsePrices(["Premium_P1="])).toThrow(/non-negative/);
  });
});
