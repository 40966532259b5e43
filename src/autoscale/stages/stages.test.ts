import { describe, expect, it } from "vitest";
import { DEFAULT_LADDERS, type SkuUnits } from "../../capacity/skus.js";
import { emptyHistory } from "../history.js";
import type { SignalNeed } from "../signals.js";
import { SizeList } from "../sizes.js";
import { baseSpec } from "../testing.js";
import { scaleInGate } from "./scale-in-gate.js";
import { holdSuspect } from "./signals.js";
import { type DecisionFrame, lastLimit, policyTimes } from "./stage.js";
import { observeWindow } from "./window.js";

const NOW = Date.parse("2025-03-03T12:00:00Z");

/** A frame at `units` units of Premium_P1 with the test spec. */
function frameAt(units: number): DecisionFrame {
  const spec = baseSpec();
  const current: SkuUnits = { sku: "Premium_P1", units };
  return {
    spec,
    nowMs: NOW,
    nowIso: new Date(NOW).toISOString(),
    mode: "Auto",
    paused: false,
    history: emptyHistory(),
    times: policyTimes(spec),
    failure: undefined,
    inFlight: undefined,
    conflict: undefined,
    current,
    sizes: new SizeList(["Premium_P1"], current, DEFAULT_LADDERS),
    scaleDownWindow: {
      seconds: spec.behavior.scaleDown.stabilizationWindowSeconds,
    },
  };
}

describe("holdSuspect", () => {
  it("holds the suspect signal's asks above the current units on copies, leaving the needs evaluated as they were", () => {
    const fits = () => true;
    const needs: SignalNeed[] = [
      { signal: "serverLoad", minUnits: 40, fits },
      { signal: "connections", minUnits: 30 },
      { signal: "serverLoad", minUnits: 10 },
    ];
    const before = structuredClone(needs.map(({ fits: _f, ...n }) => n));
    const held = holdSuspect(needs, "serverLoad", 20);
    expect(held.heldAsk).toBe(40);
    expect(held.needs).toEqual([
      { signal: "serverLoad", minUnits: 20 },
      { signal: "connections", minUnits: 30 },
      { signal: "serverLoad", minUnits: 10 },
    ]);
    expect(held.needs[0]).not.toHaveProperty("fits");
    // The evaluated needs are not changed: same units, the extra condition still there.
    expect(needs.map(({ fits: _f, ...n }) => n)).toEqual(before);
    expect(needs[0]?.fits).toBe(fits);
    // Needs it does not hold are passed through as they are.
    expect(held.needs[1]).toBe(needs[1]);
  });

  it("holds nothing when no ask of the signal is above the current units", () => {
    const needs: SignalNeed[] = [{ signal: "serverLoad", minUnits: 20 }];
    expect(holdSuspect(needs, "serverLoad", 20)).toEqual({ needs, heldAsk: undefined });
  });
});

describe("lastLimit", () => {
  it("is the last limit set, whatever the stages after it left unset", () => {
    const a = { code: "StabilizedDown" as const, message: "a" };
    const b = { code: "MinUnits" as const, message: "b" };
    expect(lastLimit(a, undefined, b, undefined)).toBe(b);
    expect(lastLimit(a, undefined)).toBe(a);
    expect(lastLimit(undefined, undefined)).toBeUndefined();
  });
});

describe("scaleInGate", () => {
  const frame = frameAt(20);
  const observed = observeWindow(frame, [], 20);
  const gate = {
    blockers: ["MetricsIncomplete", "OutsideScaleInWindow"] as const,
    reports: [],
    filling: [Date.parse("2025-03-03T11:52:00Z")],
  };

  it("holds a scale-in at the current size: every blocker states its reason, in order, and the first is the limit", () => {
    const out = scaleInGate(frame, observed, { sku: "Premium_P1", units: 10 }, gate);
    expect(out.size).toEqual({ sku: "Premium_P1", units: 20 });
    expect(out.reasons.map((r) => r.code)).toEqual(["MetricsIncomplete", "OutsideScaleInWindow"]);
    expect(out.reasons[0]?.message).toBe(
      "no scale-in while a signal is not fully known (bucket 11:52 still changing between passes)",
    );
    expect(out.limit).toEqual({ code: "MetricsIncomplete", message: out.reasons[0]?.message });
  });

  it("lets a scale-out and a hold through untouched", () => {
    for (const units of [20, 30]) {
      const proposed: SkuUnits = { sku: "Premium_P1", units };
      expect(scaleInGate(frame, observed, proposed, gate)).toEqual({ size: proposed, reasons: [] });
    }
  });
});
