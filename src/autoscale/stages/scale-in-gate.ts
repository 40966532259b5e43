/**
 * Stage 6, the scale-in gate: no scale-in while a signal is unknown, incomplete, stale or failing,
 * or a bucket of the window still changes between passes (MetricsIncomplete), while settling after
 * a scale or with an update in flight (Settling), or outside the scale-in windows
 * (OutsideScaleInWindow), or while the instance itself is not serving and for the scale-down
 * stabilization window after it serves again (NotServing: ARM says so, or its connections vanished
 * while its replica group's other members' rose — failover.ts `notServingHold`; the clients that
 * left with a failover come back as they reconnect). A result below the current
 * size is then the current size; each blocker gives its reason, and the first is the limit.
 */

import type { SkuUnits } from "../../capacity/skus.js";
import type { LimitCode, Reason } from "../reasons.js";
import type { SignalReport } from "../signals.js";
import { compareSizes, formatSize } from "../sizes.js";
import type { DecisionFrame, Limit, Sized } from "./stage.js";
import { limitWith } from "./stage.js";
import type { ObservedWindow } from "./window.js";

/** The blockers of a scale-in on a pass with usable metrics, in the order they are stated. */
export function scaleInBlockers(
  complete: boolean,
  settling: boolean,
  scaleInAllowed: boolean,
  notServing = false,
): LimitCode[] {
  const blockers: LimitCode[] = [];
  if (notServing) blockers.push("NotServing");
  if (!complete) blockers.push("MetricsIncomplete");
  if (settling) blockers.push("Settling");
  if (!scaleInAllowed) blockers.push("OutsideScaleInWindow");
  return blockers;
}

/** What the gate's messages name. */
export interface GateInput {
  blockers: readonly LimitCode[];
  reports: readonly SignalReport[];
  /** Starts (ms) of the buckets still changing between passes (health.ts). */
  filling: readonly number[];
  /** Why the instance's own outage holds (failover.ts `notServingHold`). */
  notServing?: string | undefined;
}

/** Stage 6 (see the module comment): `proposed` held at the current size when it is a blocked scale-in. */
export function scaleInGate(
  frame: DecisionFrame,
  observed: ObservedWindow,
  proposed: SkuUnits,
  gate: GateInput,
): Sized {
  if (compareSizes(proposed, frame.current) >= 0 || gate.blockers.length === 0) {
    return { size: proposed, reasons: [] };
  }
  const stated = gate.blockers.map((b) => limitWith(b, blockerMessage(b, frame, observed, gate)));
  const reasons: Reason[] = stated.map((s) => s.reason);
  // The first blocker is the main cause.
  const limit: Limit | undefined = stated[0]?.limit;
  return { size: frame.current, reasons, ...(limit ? { limit } : {}) };
}

/** The message of one blocker. */
function blockerMessage(
  b: LimitCode,
  frame: DecisionFrame,
  observed: ObservedWindow,
  gate: GateInput,
): string {
  const { inFlight, times } = frame;
  if (b === "NotServing" && gate.notServing) return gate.notServing;
  if (b === "MetricsIncomplete") {
    const missing = gate.reports.filter((r) => r.status !== "Ok").map((r) => `${r.signal} ${r.status}`);
    const changing = gate.filling.map((t) => new Date(t).toISOString().slice(11, 16));
    if (changing.length > 0) missing.push(`bucket ${changing.join(", ")} still changing between passes`);
    return `no scale-in while a signal is not fully known (${missing.join(", ")})`;
  }
  if (b === "Settling" && inFlight) {
    return `an update to ${formatSize(inFlight.to)} was sent at ${inFlight.startedAt} and is not observed complete: samples since may have been served by either size`;
  }
  if (b === "Settling" && times.settleSeconds === 0) {
    return `the scale observed complete at ${new Date(observed.lastScaleMs).toISOString()}: samples from before it are not trusted for scale-in`;
  }
  if (b === "Settling") {
    return `settle window after the scale at ${new Date(observed.lastScaleMs).toISOString()}: samples before ${new Date(observed.settleUntilMs ?? 0).toISOString()} are not trusted for scale-in`;
  }
  return "scale-in windows are set and none is open now";
}
