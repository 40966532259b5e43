/**
 * The scaling decision: (policy, samples, current capacity, history, now) → desired capacity,
 * reasons, conditions and the next history. Pure: no I/O, no clock, no randomness.
 *
 * A pipeline of stages (stages/), in this order; each reads the frame and what the stages before
 * it returned, and returns its result — a sizing stage its size, its reasons and the limit it
 * set — changing nothing it reads:
 * 1. Window (stages/window.ts, samples.ts): ingestion delay, window, max age, settle window; the
 *    sizes to choose from (stages/sizes.ts) — none: no decision (Ready=False).
 * 2. Signals (stages/signals.ts, signals.ts): per-signal units with the tolerance band,
 *    anticipation's asks, a suspect server load held at the current size.
 * 3. Health of the pass (stages/health.ts): usable and complete metrics, the fallback state.
 * 4. Recommendation (stages/recommendation.ts): the smallest allowed size that covers the largest
 *    need (Premium_P2 above 100 units when allowed, back down below it).
 * 5. Stabilization, then rate policies (stages/behavior.ts, behavior.ts); a recommendation below
 *    the current size made on incomplete data is not recorded (HPA rule); one held at the current
 *    size while the quota was full at a smaller size and no bucket at this one is read yet is
 *    named `AwaitingNewSize` (stages/unmeasured.ts).
 * 6. Scale-in gate (stages/scale-in-gate.ts): no scale-in while a signal is unknown, incomplete,
 *    stale or failing (MetricsIncomplete), while settling (Settling), outside the scale-in
 *    windows, or while the instance itself is not serving (NotServing, failover.ts). A failed
 *    pass (fetch failed, or no usable signal) runs instead of 4–6: hold, or the fallback
 *    (stages/failed-pass.ts, fallback.ts) — but an instance that is itself not serving and so has
 *    no usable signal holds as NotServing, counting no failure (`silentPass`).
 * 7. Floors and ceiling, always (stages/bounds.ts): `units.min` and active schedules' `minUnits`
 *    (snapped up), then `units.max` (snapped down) — the ceiling wins.
 * 7b. Disruption (stages/disruption.ts), on a pass with usable metrics: a scale-in that is not
 *    expected to hold long enough to repay the clients it disconnects is held at the current size
 *    (`behavior.scaleDown.disruption`).
 * 8. App servers (stages/app-servers.ts, replicas.ts) from the chosen units.
 * 9. Mode (stages/mode.ts): Auto → Scale when anything differs; Recommend → Recommend; Paused
 *    (mode or annotation) and conflicts → None. Then the history to store (stages/history.ts).
 * Reasons are listed in that order: the signals' (then the ladders' and SignalSuspect), what the
 * window left out or read differently, a failed pass's cause, unreadable schedules, then those of
 * stages 4–9 and last the app servers' own (replicas.ts). `limitedBy` is the last step that moved
 * the result away from the recommendation: the last limit a stage set (the gate's is its first
 * blocker).
 */
import { PAUSE_ANNOTATION, type PolicyMode } from "../api/constants.js";
import type { AnticipationStatus, CapacityPolicySpec, MetricSample as StatusSample } from "../api/index.js";
import type { ScalableSku, SkuName, SkuUnits, UnitLadders } from "../capacity/skus.js";
import type { DisconnectionModel } from "../traffic/disconnections.js";
import { type DecisionCondition, decisionConditions } from "./conditions.js";
import type { DemandHistory } from "./demand-history.js";
import { type NotServingHold, notServingHold, type ReplicaGroupObservation, selfLost } from "./failover.js";
import { nearThrottleEnd } from "./failures.js";
import { evaluateFallback, type FallbackState, type PassFailure } from "./fallback.js";
import { type DecisionHistory, normalizeHistory, type Recommendation } from "./history.js";
import type { LeadingObservation } from "./leading.js";
import { type LimitCode, type Reason, reason, type SignalName } from "./reasons.js";
import { peakRecurrence, scaleDownWindow } from "./recurrence.js";
import type { ReplicaDecision } from "./replicas.js";
import { known, type MetricSample, SAMPLE_FIELDS, type SampleField, type SampleWindow } from "./samples.js";
import type { ScheduleState } from "./schedules.js";
import { fmt, type SignalReport } from "./signals.js";
import { type SizeList, sameSize } from "./sizes.js";
import { type AppServers, appServers } from "./stages/app-servers.js";
import { ratePolicies, stabilization } from "./stages/behavior.js";
import { bounds } from "./stages/bounds.js";
import { type Disrupted, type DisruptionWeighing, disruption } from "./stages/disruption.js";
import { failedPass, silentPass } from "./stages/failed-pass.js";
import { type PassHealth, passHealth } from "./stages/health.js";
import { nextHistory } from "./stages/history.js";
import { modeAction } from "./stages/mode.js";
import { recommend } from "./stages/recommendation.js";
import { scaleInBlockers, scaleInGate } from "./stages/scale-in-gate.js";
import { schedulesNow } from "./stages/schedules.js";
import { type MeasuredSignals, measureSignals } from "./stages/signals.js";
import { allowedSizes, type SizeRefusal } from "./stages/sizes.js";
import {
  type DecisionBasis,
  type DecisionFrame,
  type Limit,
  lastLimit,
  policyTimes,
  type Sized,
} from "./stages/stage.js";
import { unmeasuredSize } from "./stages/unmeasured.js";
import { type ObservedWindow, observeWindow, windowReasons } from "./stages/window.js";
import type { SignalLevels } from "./suspect.js";

export { type PolicyTimes, policyTimes } from "./stages/stage.js";

/** The policy as `decide` reads it: a CapacityPolicy after defaulting (metadata optional). */
export interface DecisionPolicy {
  metadata?: {
    name?: string;
    namespace?: string;
    generation?: number;
    annotations?: Readonly<Record<string, string>>;
  };
  spec: CapacityPolicySpec;
}

/** The capacity now. */
export interface CurrentState {
  /** SKU the instance has (ARM `sku.name`). */
  sku: SkuName;
  /** Units it has (ARM `sku.capacity`), units. */
  units: number;
  /** The app-server Deployment's spec.replicas (never status.replicas). */
  replicas?: number;
  /** The named HorizontalPodAutoscaler's spec.minReplicas. */
  hpaMinReplicas?: number;
}

/** Everything a decision depends on. */
export interface DecisionInput {
  policy: DecisionPolicy;
  /** One-minute samples of the instance, any order (see {@link MetricSample}). */
  samples: readonly MetricSample[];
  /** This pass's metric fetch failure, when it failed; the samples are then not used. */
  failure?: PassFailure;
  /**
   * Metrics queries of this pass that failed while others answered (the Azure adapter asks one
   * query per aggregation): the samples are those of the queries that answered, and the fields
   * listed are unknown in them — never 0. Each gives a `MetricsPartial` reason.
   */
  partialFailures?: readonly PartialFailure[];
  current: CurrentState;
  /** What the last decision returned as `history` (from status); empty when absent. */
  history?: DecisionHistory;
  /**
   * The ARM update in flight (`status.operation`): buckets since it was sent may have been served
   * by either size, and none of them justifies a scale-in.
   */
  operation?: InFlightUpdate;
  /** The time of the decision: a Date, ms since the epoch, or an RFC 3339 string. */
  now: Date | number | string;
  /** Unit ladders from ARM `listSkus`; the documented ladders when absent. */
  ladders?: UnitLadders;
  /** Which ladders those are, when they differ from the documented ones (ladders.ts `UnitLadder`). */
  laddersReason?: Reason;
  /** Another owner of the capacity was detected (e.g. an Azure autoscale setting): act on nothing. */
  conflict?: { reason: string; message: string };
  /** The instance's demand over past days, for the seasonal forecast (demand-history.ts). */
  demandHistory?: DemandHistory;
  /** The leading signal's readings from Prometheus (leading.ts), when the policy has one. */
  leading?: LeadingObservation;
  /**
   * Which clients a unit change disconnects on the instance (`traffic/disconnections.ts`, default
   * `RemovedUnits`; `Everyone`: any change of units or SKU disconnects every client): the leading
   * signal discounts those clients' reconnects.
   */
  disconnection?: DisconnectionModel;
  /**
   * The replica group of the target (failover.ts: the primary and its replicas, itself included,
   * with ARM's serving flag and each one's connection buckets), when the instance has replicas:
   * anticipation's Failover rule sizes this member for a lost sibling's clients, and a member that
   * is itself not serving is not scaled in (NotServing).
   */
  replicaGroup?: ReplicaGroupObservation;
}

/** A metrics query that failed while the others of its pass answered. */
export interface PartialFailure extends PassFailure {
  /** The sample fields it would have filled. */
  fields: readonly SampleField[];
}

/** An ARM update that was sent and whose completion has not been observed yet. */
export interface InFlightUpdate {
  /** When the update was sent, RFC 3339. */
  startedAt: string;
  from: { sku: string; units: number };
  to: SkuUnits;
  /** Found running with no record of it being sent (recovery.ts): its start is unknown. */
  recovered?: boolean;
}

/** What the decision wants. */
export interface DesiredState {
  sku: ScalableSku;
  units: number;
  /** Deployment replicas (app servers configured, no HPA named). */
  replicas?: number;
  /** Floor for the HPA's minReplicas (HPA named). */
  hpaMinReplicas?: number;
}

/**
 * What the caller does: Scale — apply `desired`; Recommend — record it only (mode Recommend);
 * None — nothing (no change, paused, conflict, or no decision possible).
 */
export type DecisionAction = "None" | "Scale" | "Recommend";

/** The decision and its explanation. */
export interface Decision {
  /** The time of the decision, RFC 3339. */
  now: string;
  /** The effective mode (Paused when the pause annotation is "true"). */
  mode: PolicyMode;
  action: DecisionAction;
  current: CurrentState;
  /** Absent only when no decision is possible (current SKU unsupported; Ready=False). */
  desired?: DesiredState;
  /** What the metrics alone ask for (before behavior, gates, bounds); absent on a failed pass. */
  recommendation?: SkuUnits;
  /** The signal that asks for the most. */
  drivenBy?: SignalName;
  reasons: Reason[];
  /** The last step that moved the result away from the recommendation. */
  limitedBy?: LimitCode;
  /** Start of the newest one-minute bucket used, RFC 3339. */
  newestSampleTime?: string;
  /** That bucket's known values, in the shape of `status.lastSample`. */
  lastSample?: StatusSample;
  signals: SignalReport[];
  /** The window's peak levels as measured (kept with a scale it sends: suspect.ts). */
  levels?: SignalLevels;
  scaleIn: { allowed: boolean; blockedBy: LimitCode[] };
  schedules?: ScheduleState;
  fallback: FallbackState;
  appServer?: ReplicaDecision;
  /** The window the samples were taken from, `[from, to)`, RFC 3339. */
  window?: { from: string; to: string; ignoredTooNew: number; ignoredBeforeWindow: number; invalid: number };
  conditions: DecisionCondition[];
  /** What anticipation computed (spec.anticipation mode ForecastOnly or Enabled). */
  anticipation?: AnticipationStatus;
  /**
   * What a scale-in of this pass disconnects and whether it repays it (stages/disruption.ts):
   * absent when no scale-in was weighed.
   */
  disruption?: DisruptionWeighing;
  /** The history to store (status) and pass to the next decision; bounded. */
  history: DecisionHistory;
}

/** Milliseconds since the epoch of a decision time. */
function toMs(now: Date | number | string): number {
  const ms = now instanceof Date ? now.getTime() : typeof now === "number" ? now : Date.parse(now);
  if (!Number.isFinite(ms)) throw new RangeError(`invalid decision time ${String(now)}`);
  return ms;
}

/** The decision's input, settled: its time, mode, normalized history and durations. */
function decisionBasis(input: DecisionInput): DecisionBasis {
  const nowMs = toMs(input.now);
  const spec = input.policy.spec;
  const paused = spec.mode === "Paused" || input.policy.metadata?.annotations?.[PAUSE_ANNOTATION] === "true";
  return {
    spec,
    nowMs,
    nowIso: new Date(nowMs).toISOString(),
    mode: paused ? "Paused" : spec.mode,
    paused,
    history: normalizeHistory(input.history, nowMs),
    times: policyTimes(spec),
    failure: input.failure,
    inFlight: input.operation,
    conflict: input.conflict,
  };
}

/**
 * Why the seasonal history may not shape this decision beyond the forecast it shows — the scale-down
 * window (recurrence.ts) and the disruption weighing's expected hold — or undefined when it may
 * (`spec.anticipation.mode` Enabled with a seasonal forecast). ForecastOnly shows, never acts.
 */
function historyNotActing(spec: CapacityPolicySpec): string | undefined {
  const anticipation = spec.anticipation;
  if (!anticipation?.seasonal) return "no seasonal history is read (spec.anticipation.seasonal)";
  if (anticipation.mode === "Off") return "anticipation is Off: no seasonal history is read";
  if (anticipation.mode === "ForecastOnly") return "anticipation is ForecastOnly (shown, not acted on)";
  return undefined;
}

/** Decides (see the module comment). Pure and deterministic. */
export function decide(input: DecisionInput): Decision {
  const basis = decisionBasis(input);
  // 1. the window, and the sizes to choose from
  const observed = observeWindow(basis, input.samples, input.current.units);
  const choice = allowedSizes(basis.spec, input.current, input.ladders);
  if (!choice.ok) return noDecision(input, basis, observed.window, choice.sizes, choice.refusal);
  const scaleDown = basis.spec.behavior.scaleDown;
  const historyIdle = historyNotActing(basis.spec);
  const frame: DecisionFrame = {
    ...basis,
    current: choice.current,
    sizes: choice.sizes,
    scaleDownWindow: scaleDownWindow(
      scaleDown.stabilizationWindowSeconds,
      scaleDown.minStabilizationWindowSeconds,
      () => peakRecurrence(input.demandHistory, scaleDown.stabilizationWindowSeconds),
      historyIdle,
    ),
  };
  // 2. signals; what the window left out; 3. the health of the pass; the schedules now
  const measured = measureSignals(frame, observed, input);
  const quality = { reasons: windowReasons(frame, observed, input.samples, input.partialFailures ?? []) };
  const lostSelf = selfLost(
    input.replicaGroup,
    frame.nowMs,
    frame.nowMs - observed.delaySeconds * 1000,
    basis.history.notServing,
  );
  const notServing = notServingHold(
    basis.history.notServing,
    lostSelf,
    frame.nowMs,
    Math.max(
      frame.spec.behavior.scaleDown.stabilizationWindowSeconds,
      frame.times.windowSeconds + observed.delaySeconds,
    ),
  );
  const health = passHealth(frame, observed, measured.evaluation, lostSelf ? notServing.message : undefined);
  const scheduled = schedulesNow(frame.spec, frame.nowMs);
  // 4.–6. recommendation, stabilization and rate policies, the scale-in gate; or the failed pass
  const sized: PassSize = health.metricsUsable
    ? measuredPass(frame, observed, measured, health, scheduled.schedules, notServing)
    : {
        ...(health.silent && notServing.message
          ? silentPass(frame, notServing.message)
          : failedPass(frame, health.fallback)),
        anticipationStatus: measured.anticipationStatus,
        recorded: [],
      };
  // 7. floors and ceiling; 7b. what a scale-in disconnects; 8. app servers; 9. mode
  const bounded = bounds(frame, sized.size, scheduled.schedules);
  const weighed: Disrupted = health.metricsUsable
    ? disruption(frame, bounded.size, {
        connections: measured.levels.connections,
        needUnits: measured.needs.reduce((m, n) => Math.max(m, n.minUnits), 0),
        demandHistory: historyIdle === undefined ? input.demandHistory : undefined,
        windowToMs: observed.window.to,
        disconnection: input.disconnection,
      })
    : { size: bounded.size, reasons: [] };
  const limit = lastLimit(sized.limit, bounded.limit, weighed.limit);
  const apps = appServers(frame, observed, measured, weighed.size.units, input.current, sized.blockers);
  const moded = modeAction(frame, {
    ...sized,
    target: weighed.size,
    replicasNow: input.current,
    replicasWanted: apps,
    limit,
  });
  const stages = [measured, quality, health, scheduled, sized, bounded, weighed, apps, moded, apps.decision];
  return assemble(input, {
    frame,
    action: moded.action,
    reasons: stages.flatMap((s) => s?.reasons ?? []),
    limit,
    observed,
    measured,
    health,
    schedules: scheduled.schedules,
    sized,
    target: weighed.size,
    weighing: weighed.weighing,
    apps,
    history: nextHistory(
      frame,
      observed,
      health.fallback,
      sized,
      notServing.record,
      weighed.weighing?.held ? weighed.weighing.to : undefined,
    ),
  });
}

/** What stages 4–6 (or the failed pass) settle. */
interface PassSize extends Sized {
  /** What the metrics alone ask for; absent on a failed pass. */
  recommendation?: SkuUnits;
  drivenBy?: SignalName | undefined;
  anticipationStatus: AnticipationStatus | undefined;
  /** Recommendations this pass records (oldest first). */
  recorded: Recommendation[];
  /** What blocks a scale-in on this pass. */
  blockers: LimitCode[];
}

/** Stages 4–6 on a pass with usable metrics, their reasons in order and the last limit. */
function measuredPass(
  frame: DecisionFrame,
  observed: ObservedWindow,
  measured: MeasuredSignals,
  health: PassHealth,
  schedules: ScheduleState,
  notServing: NotServingHold,
): PassSize {
  const recommended = recommend(frame, measured);
  const blockers = scaleInBlockers(
    health.complete,
    observed.window.settling,
    schedules.scaleInAllowed,
    notServing.message !== undefined,
  );
  const unmeasured = unmeasuredSize(measured.evaluation.demand, observed, frame.current.units);
  const stabilized = stabilization(frame, recommended.size, health.complete, unmeasured);
  const rated = ratePolicies(frame, stabilized.size);
  const gated = scaleInGate(frame, observed, rated.size, {
    blockers,
    reports: measured.evaluation.reports,
    filling: health.filling,
    notServing: notServing.message,
  });
  const stages = [recommended, stabilized, rated, gated];
  const limit = lastLimit(...stages.map((s) => s.limit));
  // Anticipation is applied only when it changed the result: the measured need alone, through the
  // same stabilization and rate policies, would not have come to the same size.
  const reactive = recommended.reactive
    ? ratePolicies(frame, stabilization(frame, recommended.reactive, health.complete, unmeasured).size).size
    : undefined;
  const anticipationStatus =
    recommended.anticipationStatus?.applied && reactive && sameSize(reactive, rated.size)
      ? { ...recommended.anticipationStatus, applied: false }
      : recommended.anticipationStatus;
  return {
    drivenBy: recommended.drivenBy,
    anticipationStatus,
    recommendation: recommended.size,
    size: gated.size,
    reasons: stages.flatMap((s) => s.reasons),
    ...(limit ? { limit } : {}),
    recorded: stabilized.recorded,
    blockers,
  };
}

/** Everything {@link assemble} puts into the decision. */
interface Settled {
  frame: DecisionFrame;
  action: DecisionAction;
  reasons: Reason[];
  limit: Limit | undefined;
  observed: ObservedWindow;
  measured: MeasuredSignals;
  health: PassHealth;
  schedules: ScheduleState;
  sized: PassSize;
  target: SkuUnits;
  weighing: DisruptionWeighing | undefined;
  apps: AppServers;
  history: DecisionHistory;
}

/** The decision from what the stages settled (optional fields only when set). */
function assemble(input: DecisionInput, s: Settled): Decision {
  const { sized, measured, limit, apps, frame } = s;
  const desired: DesiredState = { sku: s.target.sku, units: s.target.units };
  if (apps.replicas !== undefined) desired.replicas = apps.replicas;
  if (apps.hpaMinReplicas !== undefined) desired.hpaMinReplicas = apps.hpaMinReplicas;
  const { anticipationStatus, drivenBy, recommendation } = sized;
  const decision: Decision = {
    now: frame.nowIso,
    mode: frame.mode,
    action: s.action,
    current: { ...input.current },
    desired,
    reasons: s.reasons,
    signals: measured.evaluation.reports,
    scaleIn: { allowed: sized.blockers.length === 0, blockedBy: sized.blockers },
    schedules: s.schedules,
    fallback: s.health.fallback,
    window: windowInfo(s.observed.window),
    conditions: decisionConditions({
      paused: frame.paused,
      recommendOnly: frame.spec.mode === "Recommend",
      conflict: frame.conflict,
      failure: frame.failure,
      signals: measured.evaluation.reports,
      metricsUsable: s.health.metricsUsable,
      fallback: s.health.fallback,
      limitedBy: limit?.code,
      limitMessage: limit?.message,
      drivenBy,
      anticipation: anticipationStatus,
    }),
    history: s.history,
  };
  if (recommendation) decision.recommendation = { sku: recommendation.sku, units: recommendation.units };
  if (anticipationStatus) decision.anticipation = anticipationStatus;
  if (Object.keys(measured.levels).length > 0) decision.levels = measured.levels;
  if (drivenBy) decision.drivenBy = drivenBy;
  if (limit) decision.limitedBy = limit.code;
  const last = lastSampleOf(s.observed.window);
  if (last) {
    decision.lastSample = last;
    decision.newestSampleTime = last.time;
  }
  if (apps.decision) decision.appServer = apps.decision;
  if (s.weighing) decision.disruption = s.weighing;
  return decision;
}

function lastSampleOf(window: SampleWindow): StatusSample | undefined {
  for (let i = window.buckets.length - 1; i >= 0; i--) {
    const s = window.buckets[i]?.sample;
    if (!s || !SAMPLE_FIELDS.some((f) => known(s[f]))) continue;
    const out: StatusSample = { time: new Date(window.buckets[i]?.start ?? 0).toISOString() };
    for (const f of SAMPLE_FIELDS) {
      const v = s[f];
      if (known(v)) out[f] = v;
    }
    return out;
  }
  return undefined;
}

function windowInfo(w: SampleWindow): NonNullable<Decision["window"]> {
  return {
    from: new Date(w.from).toISOString(),
    to: new Date(w.to).toISOString(),
    ignoredTooNew: w.ignored.tooNew,
    ignoredBeforeWindow: w.ignored.beforeWindow,
    invalid: w.ignored.invalid,
  };
}

/** The decision when none is possible: the current SKU is not scalable or no allowed SKU is reachable. */
function noDecision(
  input: DecisionInput,
  basis: DecisionBasis,
  window: SampleWindow,
  sizes: SizeList | undefined,
  refusal?: SizeRefusal,
): Decision {
  const { spec, nowIso, mode, history } = basis;
  const message =
    refusal?.message ??
    (sizes === undefined
      ? `current SKU ${input.current.sku} is never scaled to or from (changing it changes the instance's IP)`
      : `no SKU of ${spec.skus.join(", ")} is one online change from ${input.current.sku}`);
  const reasonText = refusal?.reason ?? "UnsupportedSku";
  const failed = input.failure !== undefined;
  const nowMs = Date.parse(nowIso);
  const fallback = evaluateFallback(
    spec.fallback,
    history.consecutiveFailures,
    failed,
    nearThrottleEnd(input.failure, nowMs, history.consecutiveFailures + 1, spec.pollIntervalSeconds),
  );
  const conditions = decisionConditions({
    paused: mode === "Paused",
    recommendOnly: mode === "Recommend",
    conflict: input.conflict,
    failure: input.failure,
    signals: [],
    metricsUsable: !failed,
    fallback,
    limitedBy: undefined,
  }).map((c) => {
    if (c.type === "Ready") return { ...c, status: "False" as const, reason: reasonText, message };
    if (c.type === "AbleToScale")
      return { ...c, status: "False" as const, reason: refusal?.code ?? "UnsupportedSku", message };
    return c;
  });
  const out: Decision = {
    now: nowIso,
    mode,
    action: "None",
    current: { ...input.current },
    reasons: [reason(refusal?.code ?? "UnsupportedSku", message)],
    signals: [],
    scaleIn: { allowed: false, blockedBy: [] },
    fallback,
    window: windowInfo(window),
    conditions,
    history: { ...history, consecutiveFailures: fallback.consecutiveFailures },
  };
  const last = lastSampleOf(window);
  if (last) {
    out.lastSample = last;
    out.newestSampleTime = last.time;
  }
  return out;
}

/** Re-exported for callers that format numbers like decisions do. */
export { fmt };
