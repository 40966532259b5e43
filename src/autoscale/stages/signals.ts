/**
 * Stage 2, the signals: each signal's need of the window (signals.ts), what anticipation asks one
 * lead time ahead (anticipation.ts), and a server load that did not respond to the last scale-out
 * held at the current size (suspect.ts) — on copies of the needs, never on those evaluated.
 */
import type { AnticipationStatus } from "../../api/index.js";
import { CONNECTIONS_PER_UNIT } from "../../capacity/skus.js";
import type { DisconnectionModel } from "../../traffic/disconnections.js";
import { type Anticipation, anticipate } from "../anticipation.js";
import { toleranceBand } from "../behavior.js";
import { type WindowConnections, windowConnections } from "../connections.js";
import type { DemandHistory } from "../demand-history.js";
import type { ReplicaGroupObservation } from "../failover.js";
import type { LeadingObservation } from "../leading.js";
import { type Reason, reason } from "../reasons.js";
import { evaluateSignals, type SignalEvaluation, type SignalNeed } from "../signals.js";
import { type SignalLevels, type SuspectSignal, suspectServerLoad } from "../suspect.js";
import type { DecisionFrame } from "./stage.js";
import { type ObservedWindow, windowLevels } from "./window.js";

/** What stage 2 reads besides the frame and the window. */
export interface SignalsInput {
  /** Which ladders the sizes are, when not the documented ones: stated after the signals. */
  laddersReason?: Reason | undefined;
  demandHistory?: DemandHistory | undefined;
  leading?: LeadingObservation | undefined;
  /** Which clients a unit change disconnects (`traffic/disconnections.ts`; default `RemovedUnits`). */
  disconnection?: DisconnectionModel | undefined;
  /** The target's replica group, for the Failover rule (failover.ts). */
  replicaGroup?: ReplicaGroupObservation | undefined;
}

/** What the signals measured. */
export interface MeasuredSignals {
  /** As {@link evaluateSignals} returned it. */
  evaluation: SignalEvaluation;
  /** The needs the recommendation reads: a suspect signal's ask above the current units held at them. */
  needs: SignalNeed[];
  connections: WindowConnections;
  /** Absent on a failed fetch or with anticipation unset or Off. */
  anticipation: Anticipation | undefined;
  /** The anticipation status before the recommendation (the stored one on a failed fetch). */
  anticipationStatus: AnticipationStatus | undefined;
  /** The window's peak levels as measured. */
  levels: SignalLevels;
  /** Server load is suspect; `heldAsk` is the largest ask it held, units. */
  suspect: (SuspectSignal & { heldAsk: number | undefined }) | undefined;
  /** The signals' reasons, the ladders' and `SignalSuspect`, in this order. */
  reasons: Reason[];
}

/** Stage 2 (see the module comment). */
export function measureSignals(
  frame: DecisionFrame,
  observed: ObservedWindow,
  input: SignalsInput,
): MeasuredSignals {
  const { spec, history, failure, current } = frame;
  const { window, timeline } = observed;
  const connections = windowConnections(window, timeline.unitsAt, timeline.overlapsChange);
  const evaluation = evaluateSignals({
    spec,
    window,
    current,
    sizes: frame.sizes,
    unitsAt: timeline.unitsAt,
    overlapsChange: timeline.overlapsChange,
    connections,
  });
  const anticipation = failure ? undefined : anticipateDemand(frame, observed, evaluation, input);
  const anticipationStatus =
    anticipation?.status ??
    (failure && spec.anticipation && spec.anticipation.mode !== "Off" ? history.anticipation : undefined);
  // A signal that did not respond to the last scale-out does not drive another (suspect.ts).
  const found = frame.inFlight
    ? undefined
    : suspectServerLoad(
        history.scaleEvents.at(-1),
        (fromMs) => windowLevels(window, connections, fromMs),
        frame.nowMs,
      );
  const held = found ? holdSuspect(evaluation.needs, found.signal, current.units) : undefined;
  const reasons = [...evaluation.reasons];
  if (input.laddersReason) reasons.push(input.laddersReason);
  if (found) reasons.push(reason("SignalSuspect", found.message, { signal: found.signal }));
  return {
    evaluation,
    needs: held?.needs ?? evaluation.needs,
    connections,
    anticipation,
    anticipationStatus,
    levels: windowLevels(window, connections),
    suspect: found ? { ...found, heldAsk: held?.heldAsk } : undefined,
    reasons,
  };
}

/** What anticipation asks for on this pass (anticipation.ts). */
function anticipateDemand(
  frame: DecisionFrame,
  observed: ObservedWindow,
  evaluation: SignalEvaluation,
  input: SignalsInput,
): Anticipation | undefined {
  const { spec, history, times } = frame;
  return anticipate({
    spec: spec.anticipation,
    nowMs: frame.nowMs,
    pollSeconds: spec.pollIntervalSeconds,
    tolerance: toleranceBand(spec.behavior).up,
    ingestionDelaySeconds: observed.delaySeconds,
    windowSeconds: times.windowSeconds,
    windowToMs: observed.window.to,
    demand: evaluation.demand,
    scaleEvents: history.scaleEvents,
    previous: history.anticipation,
    demandHistory: input.demandHistory,
    leading: input.leading,
    disconnection: input.disconnection,
    replicaGroup: input.replicaGroup,
    measuredNeedUnits: evaluation.needs.reduce((m, n) => Math.max(m, n.minUnits), 0),
    connectionsPerUnit: CONNECTIONS_PER_UNIT * ((spec.metrics.connections?.targetPercent ?? 100) / 100),
  });
}

/**
 * `needs` with each need of `signal` above `currentUnits` held at `currentUnits` and without its
 * extra condition on the size; `heldAsk` is the last such ask, units (undefined: none was above).
 */
export function holdSuspect(
  needs: readonly SignalNeed[],
  signal: SignalNeed["signal"],
  currentUnits: number,
): { needs: SignalNeed[]; heldAsk: number | undefined } {
  let heldAsk: number | undefined;
  const out = needs.map((n) => {
    if (n.signal !== signal || n.minUnits <= currentUnits) return n;
    heldAsk = n.minUnits;
    const { fits: _fits, ...rest } = n;
    return { ...rest, minUnits: currentUnits };
  });
  return { needs: out, heldAsk };
}
