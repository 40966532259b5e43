import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { candidates, DEFAULT_LADDERS, isOnlineChange, skuForUnits, snapDown, snapUp } from "./skus.js";

describe("unit ladders", () => {
  it("are the documented ones", () => {
    expect(DEFAULT_LADDERS.Standard_S1).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100,
    ]);
    expect(DEFAULT_LADDERS.Premium_P1).toEqual(DEFAULT_LADDERS.Standard_S1);
    expect(DEFAULT_LADDERS.Premium_P2).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  });

  it.each([
    [0.5, 1, undefined],
    [1, 1, 1],
    [10, 10, 10],
    [11, 20, 10],
    [13, 20, 10],
    [99.5, 100, 90],
    [100, 100, 100],
    [101, undefined, 100],
  ])("S1: %s snaps up to %s and down to %s", (n, up, down) => {
    expect(snapUp(DEFAULT_LADDERS.Standard_S1, n)).toBe(up);
    expect(snapDown(DEFAULT_LADDERS.Standard_S1, n)).toBe(down);
  });

  it("P2 starts at 100", () => {
    expect(snapUp(DEFAULT_LADDERS.Premium_P2, 150)).toBe(200);
    expect(snapDown(DEFAULT_LADDERS.Premium_P2, 99)).toBeUndefined();
    expect(snapUp(DEFAULT_LADDERS.Premium_P2, 1001)).toBeUndefined();
  });

  it("snapping brackets the value", () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 1000, noNaN: true }), (n) => {
        const all = candidates(["Premium_P1", "Premium_P2"]).map((c) => c.units);
        const up = snapUp(all, n);
        const down = snapDown(all, n);
        expect(up).toBeGreaterThanOrEqual(n);
        expect(down).toBeLessThanOrEqual(n);
      }),
    );
  });
});

describe("SKU choice", () => {
  it("takes the lowest allowed tier that has the count, keeping the current SKU when it qualifies", () => {
    expect(skuForUnits(50, ["Standard_S1", "Premium_P1"])).toBe("Standard_S1");
    expect(skuForUnits(50, ["Standard_S1", "Premium_P1"], "Premium_P1")).toBe("Premium_P1");
    expect(skuForUnits(100, ["Premium_P1", "Premium_P2"])).toBe("Premium_P1");
    expect(skuForUnits(100, ["Premium_P1", "Premium_P2"], "Premium_P2")).toBe("Premium_P2");
    expect(skuForUnits(200, ["Premium_P1", "Premium_P2"])).toBe("Premium_P2");
    expect(skuForUnits(200, ["Premium_P1"])).toBeUndefined();
    expect(skuForUnits(15, ["Premium_P1"])).toBeUndefined();
  });

  it("orders candidates by units, then tier", () => {
    const c = candidates(["Premium_P1", "Premium_P2"]);
    expect(c.slice(18, 21)).toEqual([
      { sku: "Premium_P1", units: 100 },
      { sku: "Premium_P2", units: 100 },
      { sku: "Premium_P2", units: 200 },
    ]);
  });

  it.each([
    ["Standard_S1", "Premium_P1", true],
    ["Premium_P1", "Premium_P2", true],
    ["Premium_P2", "Premium_P1", true],
    ["Premium_P1", "Premium_P1", true],
    ["Standard_S1", "Premium_P2", false],
    ["Free_F1", "Standard_S1", false],
    ["Standard_S1", "Free_F1", false],
  ] as const)("%s → %s online: %s", (from, to, online) => {
    expect(isOnlineChange(from, to)).toBe(online);
  });
});
