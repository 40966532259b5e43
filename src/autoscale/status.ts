/**
 * The status fields a decision fills in, so the controller writes them the same way every time.
 * Conditions are left out: they need lastTransitionTime, which only the controller can keep.
 */
import { MAX_REASONS } from "../api/constants.js";
import type { CapacityPolicyStatus } from "../api/index.js";
import type { Decision } from "./decide.js";

/** The distinct reason codes of a decision, in order, at most 20 (`status.lastReasons`). */
function lastReasons(decision: Decision): string[] {
  return [...new Set(decision.reasons.map((r) => r.code))].slice(0, MAX_REASONS);
}

/**
 * `desired`, `lastSample`, the history fields and `lastReasons` of `status` after a decision.
 * `current`, `operation`, `observedGeneration` and `conditions` are the controller's.
 */
export function statusFields(
  decision: Decision,
): Pick<
  CapacityPolicyStatus,
  | "desired"
  | "lastSample"
  | "recommendations"
  | "scaleEvents"
  | "lastScaleTime"
  | "consecutiveFailures"
  | "lastReasons"
  | "ingestion"
  | "anticipation"
  | "scaleIns"
  | "notServing"
> {
  const out: ReturnType<typeof statusFields> = {
    recommendations: decision.history.recommendations,
    scaleEvents: decision.history.scaleEvents,
    consecutiveFailures: decision.history.consecutiveFailures,
    lastReasons: lastReasons(decision),
  };
  if (decision.desired) {
    out.desired = { sku: decision.desired.sku, units: decision.desired.units };
    if (decision.desired.replicas !== undefined) out.desired.replicas = decision.desired.replicas;
  }
  if (decision.lastSample) out.lastSample = decision.lastSample;
  if (decision.history.lastScaleTime !== undefined) out.lastScaleTime = decision.history.lastScaleTime;
  if (decision.history.ingestion !== undefined) out.ingestion = decision.history.ingestion;
  if (decision.history.anticipation !== undefined) out.anticipation = decision.history.anticipation;
  if (decision.history.scaleIns !== undefined) out.scaleIns = decision.history.scaleIns;
  if (decision.history.notServing !== undefined) out.notServing = decision.history.notServing;
  return out;
}
