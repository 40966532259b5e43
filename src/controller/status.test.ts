import { describe, expect, it } from "vitest";
import { replacingPatch } from "./status.js";

describe("replacingPatch: objects replace the stored ones whole", () => {
  it("removes, at every depth, what the new value no longer has", () => {
    const stored = {
      anticipation: {
        mode: "Enabled",
        units: 40,
        drivenBy: "LeadingSignal",
        leading: { state: "Unavailable", reason: "NoData", message: "ignored: not read yet" },
      },
      current: { sku: "Premium_P1", units: 10, replicas: 3 },
      lastScaleTime: "2025-06-02T12:00:00Z",
    };
    const patch = {
      anticipation: { mode: "Enabled", leading: { state: "Ok", message: "12 new connections/s" } },
      current: { sku: "Premium_P1", units: 20, replicas: 4 },
      operation: null,
      conditions: [{ type: "Ready" }],
      skipped: undefined,
    };
    expect(replacingPatch(stored, patch)).toEqual({
      anticipation: {
        mode: "Enabled",
        units: null,
        drivenBy: null,
        leading: { state: "Ok", reason: null, message: "12 new connections/s" },
      },
      current: { sku: "Premium_P1", units: 20, replicas: 4 },
      operation: null,
      conditions: [{ type: "Ready" }],
    });
  });

  it("leaves top-level fields it does not set alone, and sets a new object as it is", () => {
    expect(replacingPatch(undefined, { current: { units: 2 } })).toEqual({ current: { units: 2 } });
    expect(
      replacingPatch({ lastSample: { connections: 5 }, current: { units: 1 } }, { current: { units: 2 } }),
    ).toEqual({
      current: { units: 2 },
    });
    // An array or a value replaces an object (merge patch replaces non-objects whole).
    expect(replacingPatch({ rules: { a: 1 } }, { rules: [1] })).toEqual({ rules: [1] });
  });
});
