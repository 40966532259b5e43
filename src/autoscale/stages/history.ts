/**
 * The history a decision stores (status) and hands the next one: the recorded recommendations
 * kept for the longest stabilization window, the scale events for the longest rate period (or
 * what the window, the ingestion delay and the settle window still read), the failure count, the
 * ingestion state, the anticipation status, the record of past and held scale-ins (scale-ins.ts) and of the
 * instance's own outage (failover.ts `notServingHold`).
 */
import type { AnticipationStatus, NotServingStatus } from "../../api/index.js";
import type { SkuUnits } from "../../capacity/skus.js";
import type { FallbackState } from "../fallback.js";
import {
  compactRecommendations,
  type DecisionHistory,
  pruneScaleEvents,
  type Recommendation,
} from "../history.js";
import type { IngestionState } from "../ingestion.js";
import { recordHeldScaleIn, recordScaleIns } from "../scale-ins.js";
import type { DecisionFrame } from "./stage.js";

/** The next history (see the module comment). */
export function nextHistory(
  frame: DecisionFrame,
  observed: { delaySeconds: number; ingestion: IngestionState | undefined },
  fallback: FallbackState,
  pass: {
    recorded: readonly Recommendation[];
    anticipationStatus: AnticipationStatus | undefined;
    /** What the metrics asked for; absent on a pass without usable metrics. */
    recommendation?: SkuUnits | undefined;
  },
  notServing?: NotServingStatus,
  /** The size the disruption weighing held a scale-in at on this pass, when it held one. */
  heldAt?: SkuUnits,
): DecisionHistory {
  const { spec, history, nowMs, times } = frame;
  const keepRecs = Math.max(
    spec.behavior.scaleUp.stabilizationWindowSeconds,
    spec.behavior.scaleDown.stabilizationWindowSeconds,
  );
  const periods = [...spec.behavior.scaleUp.policies, ...spec.behavior.scaleDown.policies].map(
    (p) => p.periodSeconds,
  );
  const keepEvents = Math.max(
    ...periods,
    times.windowSeconds + observed.delaySeconds + times.settleSeconds + 60,
  );
  const next: DecisionHistory = {
    recommendations: compactRecommendations([...history.recommendations, ...pass.recorded], nowMs, keepRecs),
    scaleEvents: pruneScaleEvents(history.scaleEvents, nowMs, keepEvents),
    consecutiveFailures: fallback.consecutiveFailures,
  };
  if (history.lastScaleTime !== undefined) next.lastScaleTime = history.lastScaleTime;
  if (observed.ingestion !== undefined) next.ingestion = observed.ingestion;
  if (pass.anticipationStatus !== undefined) next.anticipation = pass.anticipationStatus;
  if (notServing !== undefined) next.notServing = notServing;
  const scaleIns = recordHeldScaleIn(recordScaleIns(history.scaleIns, history.scaleEvents), {
    nowIso: frame.nowIso,
    currentUnits: frame.current.units,
    heldToUnits: heldAt?.units,
    recommendedUnits: pass.recommendation?.units,
    inFlight: frame.inFlight !== undefined,
  });
  if (scaleIns.length > 0) next.scaleIns = scaleIns;
  return next;
}
