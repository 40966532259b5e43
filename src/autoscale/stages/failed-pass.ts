/**
 * Stage 4–6 of a failed pass (the fetch failed, or no signal has a usable value): hold the
 * capacity — the size in place, or the one an update in flight is reaching (holding the size it
 * leaves would undo it) — and, once the fallback is active (fallback.ts), apply its action: Hold,
 * or Fixed (at least `fixedUnits`, never below the held size). The limit is `Fallback`, or
 * `FailureCounted` below the threshold or on a throttle of known length; it is also the blocker
 * of any scale-in.
 */
import { isScalableSku, type SkuUnits } from "../../capacity/skus.js";
import type { FallbackState } from "../fallback.js";
import type { LimitCode } from "../reasons.js";
import { formatSize, sameSize } from "../sizes.js";
import { type DecisionFrame, limitWith, type Sized } from "./stage.js";

/** A failed pass's size, and the blocker it sets. */
export interface FailedPass extends Sized {
  blockers: LimitCode[];
}

/**
 * The size a failed pass holds: the one an update in flight is reaching (so that `status.desired`
 * shows where the instance is going, and no decision undoes the update), else the current one.
 */
export function heldSize(current: SkuUnits, inFlight: { to: SkuUnits } | undefined): SkuUnits {
  const to = inFlight?.to;
  return to && isScalableSku(to.sku) ? { sku: to.sku, units: to.units } : current;
}

/** The failed pass (see the module comment). */
export function failedPass(frame: DecisionFrame, fallback: FallbackState): FailedPass {
  const { current, sizes } = frame;
  const holding = heldSize(current, frame.inFlight);
  const held = `${formatSize(holding)}${sameSize(holding, current) ? "" : " (the update in flight)"}`;
  const failures = `${fallback.consecutiveFailures} consecutive failures (threshold ${fallback.threshold})`;
  if (fallback.active) {
    let size = holding;
    let message = `${failures}: holding ${held}`;
    if (fallback.action === "Fixed" && fallback.fixedUnits !== undefined) {
      const fixed = sizes.firstAtLeast(fallback.fixedUnits) ?? sizes.top();
      if (fixed && fixed.units > holding.units) {
        size = fixed;
        message = `${failures}: fixed ${formatSize(fixed)}`;
      } else {
        message = `${failures}: fixed ${fallback.fixedUnits} units is not above ${held}, holding`;
      }
    }
    const l = limitWith("Fallback", message, { units: size.units, name: fallback.action });
    return { size, reasons: [l.reason], limit: l.limit, blockers: ["Fallback"] };
  }
  const message = fallback.throttledUntil
    ? `Azure throttles until ${fallback.throttledUntil}: holding ${held} until then (${fallback.consecutiveFailures} failed passes; the fallback does not switch on for a throttle of known length)`
    : `pass failed (${fallback.consecutiveFailures} of ${fallback.threshold} before the fallback): holding ${held}`;
  const l = limitWith("FailureCounted", message);
  return { size: holding, reasons: [l.reason], limit: l.limit, blockers: ["FailureCounted"] };
}

/**
 * A pass without usable metrics while the instance itself does not serve (a member of a replica
 * group: ARM says so, or its connections vanished while the others' rose — failover.ts): its
 * metrics are expected to be empty, so the pass is no failure (no step towards the fallback) —
 * it holds the size with the reason, limit and scale-in blocker `NotServing`.
 */
export function silentPass(frame: DecisionFrame, notServing: string): FailedPass {
  const holding = heldSize(frame.current, frame.inFlight);
  const l = limitWith(
    "NotServing",
    `${notServing}; no metrics are expected of it: holding ${formatSize(holding)}`,
  );
  return { size: holding, reasons: [l.reason], limit: l.limit, blockers: ["NotServing"] };
}
