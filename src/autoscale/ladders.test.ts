/**
 * The unit ladders of a decision: the service's (listSkus) over the documented ones; kept in
 * status for a restart; counts not applied left out until the spec or the service's ladder
 * changes; and, with Azure's old ladder (1, 2, 5, 10, 20, 50, 100), the decision asks only for
 * its counts.
 */
import { describe, expect, it } from "vitest";
import type { UnitLaddersStatus } from "../api/index.js";
import { DEFAULT_LADDERS } from "../capacity/skus.js";
import { decide } from "./decide.js";
import { chooseLadders, heldByExclusions, type LadderRead } from "./ladders.js";
import { NOW, policy, samples, spec } from "./testing.js";

const iso = (ms: number) => new Date(ms).toISOString();
const OLD_LADDER = [1, 2, 5, 10, 20, 50, 100];
const read = (service: LadderRead["service"], at = NOW): LadderRead => ({ service, readAt: iso(at) });
const base = {
  allowed: ["Premium_P1"],
  current: { sku: "Premium_P1", units: 10 },
  generation: 1,
  nowIso: iso(NOW),
};

describe("chooseLadders", () => {
  it("the documented ladders until listSkus answers: source BuiltIn, no reason", () => {
    const c = chooseLadders(base);
    expect(c.ladders).toEqual(DEFAULT_LADDERS);
    expect(c.status).toEqual({ source: "BuiltIn" });
    expect(c.reason).toBeUndefined();
  });

  it("listSkus' ladder for the SKUs it describes; stored in status; a reason names it", () => {
    const c = chooseLadders({ ...base, read: read({ Premium_P1: [100, 50, 1, 2, 5, 10, 20, 20, 0, 1.5] }) });
    expect(c.ladders.Premium_P1).toEqual(OLD_LADDER);
    expect(c.ladders.Premium_P2).toEqual(DEFAULT_LADDERS.Premium_P2);
    expect(c.status).toEqual({
      source: "Service",
      readAt: iso(NOW),
      service: [{ sku: "Premium_P1", units: OLD_LADDER }],
    });
    expect(c.reason?.code).toBe("UnitLadder");
    expect(c.reason?.message).toContain("unit counts from listSkus");
    // The same ladders as documented: Service, but nothing to say.
    expect(
      chooseLadders({ ...base, read: read({ Premium_P1: [...DEFAULT_LADDERS.Premium_P1] }) }).reason,
    ).toBeUndefined();
  });

  it("after a restart (no answer cached) the stored ladder is used", () => {
    const stored = chooseLadders({ ...base, read: read({ Premium_P1: OLD_LADDER }) }).status;
    const c = chooseLadders({ ...base, stored });
    expect(c.ladders.Premium_P1).toEqual(OLD_LADDER);
    expect(c.status).toEqual(stored);
  });

  it("a count not applied is left out (never the instance's own) until the spec or the service's ladder changes", () => {
    const first = chooseLadders({
      ...base,
      exclude: [
        { sku: "Premium_P1", units: 20, outcome: "NotApplied" },
        { sku: "Premium_P1", units: 10, outcome: "NotApplied" },
      ],
    });
    expect(first.ladders.Premium_P1).toEqual(DEFAULT_LADDERS.Premium_P1.filter((u) => u !== 20));
    expect(first.status.excluded?.map((e) => e.units)).toEqual([20, 10]);
    expect(first.status.generation).toBe(1);
    expect(first.reason?.message).toContain("Premium_P1 20 (not applied");
    const stored: UnitLaddersStatus = first.status;
    // Kept on the next pass.
    expect(chooseLadders({ ...base, stored }).ladders.Premium_P1).not.toContain(20);
    // The spec changes: cleared.
    expect(chooseLadders({ ...base, stored, generation: 2 }).status.excluded).toBeUndefined();
    // The service reports another ladder: cleared.
    const changed = chooseLadders({ ...base, stored, read: read({ Premium_P1: OLD_LADDER }) });
    expect(changed.status.excluded).toBeUndefined();
    expect(changed.ladders.Premium_P1).toEqual(OLD_LADDER);
    // The service reports the ladder they were recorded under: kept.
    expect(chooseLadders({ ...base, stored, read: read({}) }).status.excluded).toHaveLength(2);
  });

  it("heldByExclusions: counts left out between the size and the ask", () => {
    const status = chooseLadders({
      ...base,
      exclude: [{ sku: "Premium_P1", units: 20, outcome: "NotApplied" }],
    }).status;
    expect(heldByExclusions({ units: 60 }, { units: 10 }, status, ["Premium_P1"])).toBe(true);
    expect(heldByExclusions({ units: 20 }, { units: 10 }, status, ["Premium_P1"])).toBe(true);
    expect(heldByExclusions({ units: 10 }, { units: 10 }, status, ["Premium_P1"])).toBe(false);
    expect(heldByExclusions({ units: 5 }, { units: 10 }, status, ["Premium_P1"])).toBe(false);
    expect(heldByExclusions({ units: 60 }, { units: 10 }, status, ["Premium_P2"])).toBe(false);
  });
});

describe("a decision on the service's ladder", () => {
  /** P1 × 20 at `load` % server load (target 70 %), on the ladder listSkus reports. */
  const decideOn = (load: number, ladder = OLD_LADDER) =>
    decide({
      policy: policy(spec({ units: { min: 1, max: 100 } })),
      samples: samples({ serverLoadPercent: load }),
      current: { sku: "Premium_P1", units: 20 },
      now: NOW,
      ladders: chooseLadders({
        ...base,
        current: { sku: "Premium_P1", units: 20 },
        read: read({ Premium_P1: ladder }),
      }).ladders,
    });

  it.each([
    // need = 20 × load / 70: 95 % → 27.1 (the documented ladder: 30), 85 % → 24.3 (30), 20 % → 5.7 (6)
    [95, 50],
    [85, 50],
    [20, 10],
  ])("at %i percent load: %i units, not the documented ladder's count", (load, units) => {
    expect(decideOn(load).desired).toMatchObject({ sku: "Premium_P1", units });
    expect(decideOn(load, [...DEFAULT_LADDERS.Premium_P1]).desired?.units).not.toBe(units);
  });

  it("every decision stays on the ladder, whatever the load", () => {
    for (let load = 1; load <= 99; load += 2) {
      const d = decideOn(load);
      expect(OLD_LADDER, `load ${load}`).toContain(d.desired?.units);
    }
  });
});
