import { describe, expect, it } from "vitest";
import { candidates, DEFAULT_LADDERS, isOnlineChange } from "./skus.js";

describe("unit ladders", () => {
  it("are the documented ones", () => {
    expect(DEFAULT_LADDERS.Standard_S1).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100,
    ]);
    expect(DEFAULT_LADDERS.Premium_P1).toEqual(DEFAULT_LADDERS.Standard_S1);
    expect(DEFAULT_LADDERS.Premium_P2).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  });
});

describe("SKU choice", () => {
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
