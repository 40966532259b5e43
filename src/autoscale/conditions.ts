/**
 * The status conditions a decision implies (metav1.Condition without timestamps: the controller
 * adds lastTransitionTime and observedGeneration, and keeps lastTransitionTime when the status
 * does not change).
 *
 * | type | True when | reasons |
 * |---|---|---|
 * | Ready | a decision could be made and no read failed durably | Decided / Throttled (a throttle of known length: held until it ends), InstanceNotFound, AuthorizationFailed, InvalidRequest (a read Azure refuses durably: failures.ts), UnsupportedSku, UpdateNotApplied, UpdateFailed, UpdateRefused, ProgressDeadlineExceeded (pass.ts) |
 * | MetricsAvailable | some signal has a usable value | MetricsComplete, SomeMetricsMissing / CredentialUnavailable (no token: failed or timed out), FetchFailed, NoMetrics, MetricsStale |
 * | AbleToScale | the operator may change capacity | ReadyForNewScale, ScaleUpStabilized, ScaleDownStabilized, Settling, OutsideScaleInWindow, ScaleInHeldForDisruption, RecommendOnly / Paused, Conflict, UnsupportedSku (pass.ts adds ScaleInProgress, FailedUpdateScale, Throttled, UpdateNotApplied, UpdateFailed, UpdateRefused) |
 * | ScalingActive | metrics drive the decision | ValidMetricFound / FailedGetMetrics, ScalingDisabled |
 * | ScalingLimited | something held the result back from what metrics asked | the {@link LimitCode} / DesiredWithinRange (pass.ts: what refused the last update, unapplied.ts `REFUSAL_REASONS`) |
 * | Fallback | the fallback action applies | FallbackHold, FallbackFixed / MetricsHealthy, FailuresBelowThreshold, Throttled |
 * | Conflict | another owner fights over the capacity | the caller's reason (NativeAutoscale, HpaOwnsReplicas, …; DuplicatePolicy: an older policy names the instance, Deployment or HPA, `blockedConditions`) / NoConflict |
 */

import { type ConditionStatus, type ConditionType, DECISION_CONDITION_TYPES } from "../api/constants.js";
import type { AnticipationStatus } from "../api/index.js";
import { durableFailure } from "./failures.js";
import type { FallbackState, PassFailure } from "./fallback.js";
import type { LimitCode } from "./reasons.js";
import type { SignalReport } from "./signals.js";

/** A condition as a decision states it. */
export interface DecisionCondition {
  type: ConditionType;
  status: ConditionStatus;
  /** CamelCase, matches the CRD's reason pattern. */
  reason: string;
  message: string;
}

/** Everything {@link decisionConditions} reads. */
export interface ConditionInput {
  paused: boolean;
  recommendOnly: boolean;
  conflict?: { reason: string; message: string } | undefined;
  failure?: PassFailure | undefined;
  signals: readonly SignalReport[];
  /** Some signal has a usable value and nothing failed. */
  metricsUsable: boolean;
  fallback: FallbackState;
  limitedBy?: LimitCode | undefined;
  limitMessage?: string | undefined;
  drivenBy?: string | undefined;
  /** What anticipation computed (absent: spec.anticipation unset or Off). */
  anticipation?: AnticipationStatus | undefined;
}

/** A reason made safe for the CRD's pattern (letters, digits, `_,:`; starts with a letter). */
function sanitizeReason(text: string, fallback = "Unspecified"): string {
  const cleaned = text
    .replace(/[^A-Za-z0-9_,:]/g, "")
    .replace(/^[^A-Za-z]+/, "")
    .replace(/[,:]+$/, "");
  return cleaned.length > 0 ? cleaned.slice(0, 1024) : fallback;
}

const cond = (
  type: ConditionType,
  status: ConditionStatus,
  reason: string,
  message: string,
): DecisionCondition => ({
  type,
  status,
  reason,
  message,
});

/** The conditions of a decision, one of each type, in the order of `CONDITION_TYPES`. */
export function decisionConditions(c: ConditionInput): DecisionCondition[] {
  return [
    readyCondition(c),
    metricsAvailableCondition(c),
    ableToScaleCondition(c),
    scalingActiveCondition(c),
    c.limitedBy
      ? cond("ScalingLimited", "True", c.limitedBy, c.limitMessage ?? "")
      : cond("ScalingLimited", "False", "DesiredWithinRange", "the decision is what the metrics ask for"),
    fallbackCondition(c.fallback),
    c.conflict
      ? cond("Conflict", "True", sanitizeReason(c.conflict.reason, "Conflict"), c.conflict.message)
      : cond("Conflict", "False", "NoConflict", "no other owner of the capacity was found"),
    anticipatingCondition(c.anticipation),
  ];
}

/** `Ready`: False on a durable read failure or a throttle of known length. */
function readyCondition(c: ConditionInput): DecisionCondition {
  const durable = durableFailure(c.failure);
  if (durable) return cond("Ready", "False", durable.reason, durable.message);
  const throttledUntil = c.fallback.throttledUntil;
  if (throttledUntil) {
    const what = c.failure?.read === "metrics" ? "the metrics reads" : "the instance reads";
    return cond(
      "Ready",
      "False",
      "Throttled",
      `Azure throttles ${what} until ${throttledUntil}: the capacity is held and read again after it`,
    );
  }
  return cond("Ready", "True", "Decided", "the policy is valid and a decision was made");
}

/** `MetricsAvailable`: whether some signal has a usable value, and whether all do. */
function metricsAvailableCondition(c: ConditionInput): DecisionCondition {
  if (c.failure) {
    const reason = c.failure.kind === "Credential" ? "CredentialUnavailable" : "FetchFailed";
    return cond("MetricsAvailable", "False", reason, `${c.failure.kind}: ${c.failure.message}`);
  }
  if (!c.metricsUsable) {
    const stale = c.signals.length > 0 && c.signals.every((s) => s.status === "Stale");
    return cond(
      "MetricsAvailable",
      "False",
      stale ? "MetricsStale" : "NoMetrics",
      c.signals.length === 0
        ? "the policy configures no signal"
        : `no usable value: ${c.signals.map((s) => `${s.signal} ${s.status}`).join(", ")}`,
    );
  }
  const unknown = c.signals.filter((s) => s.status !== "Ok");
  if (unknown.length > 0) {
    return cond(
      "MetricsAvailable",
      "True",
      "SomeMetricsMissing",
      `${unknown.map((s) => `${s.signal} ${s.status}`).join(", ")}: scale-out only, no scale-in`,
    );
  }
  return cond("MetricsAvailable", "True", "MetricsComplete", "every signal is known over the whole window");
}

/** The `AbleToScale` reason of each limit that keeps scaling possible but held. */
const ABLE_TO_SCALE_LIMITS: Partial<Record<LimitCode, string>> = {
  StabilizedDown: "ScaleDownStabilized",
  AwaitingNewSize: "AwaitingNewSize",
  StabilizedUp: "ScaleUpStabilized",
  Settling: "Settling",
  OutsideScaleInWindow: "OutsideScaleInWindow",
  NotServing: "NotServing",
  DisruptionHeld: "ScaleInHeldForDisruption",
};

/** `AbleToScale`: False on a conflict or a pause; True with what held the result, if anything. */
function ableToScaleCondition(c: ConditionInput): DecisionCondition {
  if (c.conflict) return cond("AbleToScale", "False", "Conflict", c.conflict.message);
  if (c.paused) return cond("AbleToScale", "False", "Paused", "the policy is paused: nothing is applied");
  const held = c.limitedBy ? ABLE_TO_SCALE_LIMITS[c.limitedBy] : undefined;
  if (held) return cond("AbleToScale", "True", held, c.limitMessage ?? "");
  if (c.recommendOnly) {
    return cond(
      "AbleToScale",
      "True",
      "RecommendOnly",
      "mode Recommend: decisions are recorded, not applied",
    );
  }
  return cond("AbleToScale", "True", "ReadyForNewScale", "the operator may change capacity");
}

/** `ScalingActive`: metrics drive the decision unless paused or none is usable. */
function scalingActiveCondition(c: ConditionInput): DecisionCondition {
  if (c.paused) return cond("ScalingActive", "False", "ScalingDisabled", "the policy is paused");
  if (!c.metricsUsable || c.failure) {
    return cond(
      "ScalingActive",
      "False",
      "FailedGetMetrics",
      c.failure ? `${c.failure.kind}: ${c.failure.message}` : "no signal has a usable value",
    );
  }
  return cond(
    "ScalingActive",
    "True",
    "ValidMetricFound",
    c.drivenBy ? `the decision follows ${c.drivenBy}` : "metrics drive the decision",
  );
}

/** `Fallback`: whether the fallback action applies, and why not. */
function fallbackCondition(fb: FallbackState): DecisionCondition {
  if (fb.active) {
    return cond(
      "Fallback",
      "True",
      fb.action === "Fixed" ? "FallbackFixed" : "FallbackHold",
      `${fb.consecutiveFailures} consecutive failures (threshold ${fb.threshold}): ${
        fb.action === "Fixed" ? `at least ${fb.fixedUnits ?? "?"} units` : "holding the current capacity"
      }`,
    );
  }
  if (fb.throttledUntil) {
    return cond(
      "Fallback",
      "False",
      "Throttled",
      `${fb.consecutiveFailures} failed passes on a throttle that ends at ${fb.throttledUntil}: holding; the fallback does not switch on for it`,
    );
  }
  if (fb.failed) {
    return cond(
      "Fallback",
      "False",
      "FailuresBelowThreshold",
      `${fb.consecutiveFailures} of ${fb.threshold} consecutive failures: holding`,
    );
  }
  return cond("Fallback", "False", "MetricsHealthy", "the last pass succeeded");
}

/** `Anticipating`: off, or on with what of it is not yet available. */
function anticipatingCondition(a: AnticipationStatus | undefined): DecisionCondition {
  if (!a) return cond("Anticipating", "False", "Off", "spec.anticipation is unset or Off: reactive only");
  const { forecast, leading } = a;
  if (leading && leading.state !== "Ok") {
    return cond(
      "Anticipating",
      "True",
      leading.state === "Calibrating" ? "LeadingSignalCalibrating" : "LeadingSignalUnavailable",
      `leading signal${leading.reason ? ` (${leading.reason})` : ""}: ${leading.message}; the other rules still apply (${a.mode})`,
    );
  }
  if (forecast && forecast.state !== "Ok") {
    return cond(
      "Anticipating",
      "True",
      forecast.state === "Unavailable" ? "HistoryUnavailable" : "InsufficientHistory",
      `seasonal forecast: ${forecast.message}; trend, censored demand and headroom still apply (${a.mode})`,
    );
  }
  return cond("Anticipating", "True", a.mode, a.message);
}

/**
 * The conditions of a pass that stopped before deciding (an invalid spec, a target out of scope,
 * an instance that cannot be read, another owner of a target: `conflict`): one of each type, so
 * that none is left from an earlier pass saying what is no longer known. `Ready` and `AbleToScale`
 * are False with the blocker's reason; `Conflict` is True with `conflict`'s reason and message
 * when given; the others are Unknown with the blocker's reason (not evaluated).
 */
export function blockedConditions(
  blocker: { reason: string; message: string },
  conflict?: { reason: string; message: string },
): DecisionCondition[] {
  return DECISION_CONDITION_TYPES.map((type) => {
    if (type === "Ready") return cond(type, "False", blocker.reason, blocker.message);
    if (type === "AbleToScale")
      return cond(type, "False", blocker.reason, `nothing is changed: ${blocker.message}`);
    if (type === "Conflict" && conflict) {
      return cond(type, "True", sanitizeReason(conflict.reason, "Conflict"), conflict.message);
    }
    return cond(type, "Unknown", blocker.reason, `not evaluated: ${blocker.message}`);
  });
}
