/**
 * Signals: what each metric of the policy asks for, in units. One file per signal under
 * `signals/` (`server-load.ts`, `connections.ts`, `traffic.ts`: each pins how its value, ratio
 * and ask are measured), each behind the one {@link Signal} interface, listed in `signals/index.ts`;
 * {@link evaluateSignals} runs them in that order.
 *
 * Pinned semantics shared by every signal (each over the window of {@link windowSamples}):
 * - Saturation: a measurement cannot exceed its ceiling — server load stops at 100 %,
 *   connections above units × 1,000 are refused, not counted, and traffic above what the size's
 *   tier-table dimensions carry is throttled. When the peak is within 1 % of the ceiling (±1 %;
 *   traffic: at ≥ 99 % of the current size, any measurement above it read as the ceiling) the real
 *   demand is unknown but higher, so the signal asks for at least twice the current units (the
 *   scale-up rate policies still apply). Without this, a flash crowd could only be followed by
 *   ×1.25–×1.4 steps, each paying a scale and the metric delay. Values beyond what the service
 *   can report never get here (plausibility.ts).
 * - Tolerance (HPA): `|ratio − 1| ≤ tolerance` → the signal asks for the current size, no change;
 *   the tolerance is `behavior.scaleUp.tolerance` for a ratio above 1 and
 *   `behavior.scaleDown.tolerance` below, each `behavior.tolerance` when unset.
 * - A signal with no known value (Unknown) or a stale one asks for nothing; an Incomplete one asks
 *   on its known values (usable to scale out; scale-in is gated elsewhere).
 */
import { toleranceBand } from "./behavior.js";
import { censorByQuota } from "./signals/common.js";
import { SIGNALS } from "./signals/index.js";
import type { SignalContext, SignalEvaluation } from "./signals/types.js";

export { fmt } from "./format.js";
export { censoredAt, measuredPoints } from "./signals/common.js";
export { trafficDemand, trafficUtilization } from "./signals/traffic.js";
export type {
  DemandPoint,
  DemandSeries,
  Signal,
  SignalContext,
  SignalEvaluation,
  SignalNeed,
  SignalOutcome,
  SignalReport,
  SignalStatus,
} from "./signals/types.js";

/**
 * Evaluates every signal the policy configures, in the order of {@link SIGNALS} (see the module
 * comment): each list of the result holds the signals' parts in that order. Pure.
 */
export function evaluateSignals(ctx: SignalContext): SignalEvaluation {
  const tolerance = toleranceBand(ctx.spec.behavior);
  const out: SignalEvaluation = { reports: [], needs: [], reasons: [], demand: [] };
  for (const signal of SIGNALS) {
    const outcome = signal.evaluate(ctx, tolerance);
    if (!outcome) continue;
    out.reports.push(outcome.report);
    if (outcome.need) out.needs.push(outcome.need);
    out.reasons.push(...outcome.reasons);
    if (outcome.demand) out.demand.push(outcome.demand);
  }
  censorByQuota(out.demand);
  return out;
}
