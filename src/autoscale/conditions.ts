/**
 * The status conditions a decision implies (metav1.Condition without timestamps: the controller
 * adds lastTransitionTime and observedGeneration, and keeps lastTransitionTime when the status
 * does not change).
 *
 * | type | True when | reasons |
 * |---|---|---|
 * | Ready | a decision could be made and no read failed durably | Decided / Throttled (a throttle of known length: held until it ends), InstanceNotFound, AuthorizationFailed, InvalidRequest (a read Azure refuses durably: failures.ts), UnsupportedSku, UpdateNotApplied, UpdateFailed, UpdateRefused, ProgressDeadlineExceeded (pass.ts) |
 * | MetricsAvailable | some signal has a usable value | MetricsComplete, SomeMetricsMissing / CredentialUnavailable (no token: failed or timed out), FetchFailed, NoMetrics, MetricsStale |
 * | AbleToScale | the operator may change capacity | ReadyForNewScale, ScaleUpStabilized, ScaleDownStabilized, Settling, OutsideScaleInWindow, RecommendOnly / Paused, Conflict, UnsupportedSku (pass.ts adds ScaleInProgress, FailedUpdateScale, Throttled, UpdateNotApplied, UpdateFailed, UpdateRefused) |
 * | ScalingActive | metrics drive the decision | ValidMetricFound / FailedGetMetrics, ScalingDisabled |
 * | ScalingLimited | something held the result back from what metrics asked | the {@link LimitCode} / DesiredWithinRange (pass.ts: what refused the last update, unapplied.ts `REFUSAL_REASONS`) |
 * | Fallback | the fallback action applies | FallbackHold, FallbackFixed / MetricsHealthy, FailuresBelowThreshold, Throttled |
 * | Conflict | another owner fights over the capacity | the caller's reason / NoConflict |
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
  const out: DecisionCondition[] = [];
  const durable = durableFailure(c.failure);
  const throttledUntil = c.fallback.throttledUntil;
  if (durable) out.push(cond("Ready", "False", durable.reason, durable.message));
  else if (throttledUntil) {
    const what = c.failure?.read === "metrics" ? "the metrics reads" : "the instance reads";
    out.push(
      cond(
        "Ready",
        "False",
        "Throttled",
        `Azure throttles ${what} until ${throttledUntil}: the capacity is held and read again after it`,
      ),
    );
  } else out.push(cond("Ready", "True", "Decided", "the policy is valid and a decision was made"));

  const unknown = c.signals.filter((s) => s.status !== "Ok");
  if (c.failure) {
    const reason = c.failure.kind === "Credential" ? "CredentialUnavailable" : "FetchFailed";
    out.push(cond("MetricsAvailable", "False", reason, `${c.failure.kind}: ${c.failure.message}`));
  } else if (!c.metricsUsable) {
    const stale = c.signals.length > 0 && c.signals.every((s) => s.status === "Stale");
    out.push(
      cond(
        "MetricsAvailable",
        "False",
        stale ? "MetricsStale" : "NoMetrics",
        c.signals.length === 0
          ? "the policy configures no signal"
          : `no usable value: ${c.signals.map((s) => `${s.signal} ${s.status}`).join(", ")}`,
      ),
    );
  } else if (unknown.length > 0) {
    out.push(
      cond(
        "MetricsAvailable",
        "True",
        "SomeMetricsMissing",
        `${unknown.map((s) => `${s.signal} ${s.status}`).join(", ")}: scale-out only, no scale-in`,
      ),
    );
  } else {
    out.push(
      cond("MetricsAvailable", "True", "MetricsComplete", "every signal is known over the whole window"),
    );
  }

  const limit = c.limitMessage ?? "";
  if (c.conflict) out.push(cond("AbleToScale", "False", "Conflict", c.conflict.message));
  else if (c.paused)
    out.push(cond("AbleToScale", "False", "Paused", "the policy is paused: nothing is applied"));
  else if (c.limitedBy === "StabilizedDown")
    out.push(cond("AbleToScale", "True", "ScaleDownStabilized", limit));
  else if (c.limitedBy === "StabilizedUp") out.push(cond("AbleToScale", "True", "ScaleUpStabilized", limit));
  else if (c.limitedBy === "Settling") out.push(cond("AbleToScale", "True", "Settling", limit));
  else if (c.limitedBy === "OutsideScaleInWindow")
    out.push(cond("AbleToScale", "True", "OutsideScaleInWindow", limit));
  else if (c.recommendOnly)
    out.push(
      cond("AbleToScale", "True", "RecommendOnly", "mode Recommend: decisions are recorded, not applied"),
    );
  else out.push(cond("AbleToScale", "True", "ReadyForNewScale", "the operator may change capacity"));

  if (c.paused) out.push(cond("ScalingActive", "False", "ScalingDisabled", "the policy is paused"));
  else if (!c.metricsUsable || c.failure)
    out.push(
      cond(
        "ScalingActive",
        "False",
        "FailedGetMetrics",
        c.failure ? `${c.failure.kind}: ${c.failure.message}` : "no signal has a usable value",
      ),
    );
  else
    out.push(
      cond(
        "ScalingActive",
        "True",
        "ValidMetricFound",
        c.drivenBy ? `the decision follows ${c.drivenBy}` : "metrics drive the decision",
      ),
    );

  if (c.limitedBy) out.push(cond("ScalingLimited", "True", c.limitedBy, limit));
  else
    out.push(
      cond("ScalingLimited", "False", "DesiredWithinRange", "the decision is what the metrics ask for"),
    );

  const fb = c.fallback;
  if (fb.active) {
    out.push(
      cond(
        "Fallback",
        "True",
        fb.action === "Fixed" ? "FallbackFixed" : "FallbackHold",
        `${fb.consecutiveFailures} consecutive failures (threshold ${fb.threshold}): ${
          fb.action === "Fixed" ? `at least ${fb.fixedUnits ?? "?"} units` : "holding the current capacity"
        }`,
      ),
    );
  } else if (fb.throttledUntil) {
    out.push(
      cond(
        "Fallback",
        "False",
        "Throttled",
        `${fb.consecutiveFailures} failed passes on a throttle that ends at ${fb.throttledUntil}: holding; the fallback does not switch on for it`,
      ),
    );
  } else if (fb.failed) {
    out.push(
      cond(
        "Fallback",
        "False",
        "FailuresBelowThreshold",
        `${fb.consecutiveFailures} of ${fb.threshold} consecutive failures: holding`,
      ),
    );
  } else {
    out.push(cond("Fallback", "False", "MetricsHealthy", "the last pass succeeded"));
  }

  if (c.conflict)
    out.push(cond("Conflict", "True", sanitizeReason(c.conflict.reason, "Conflict"), c.conflict.message));
  else out.push(cond("Conflict", "False", "NoConflict", "no other owner of the capacity was found"));

  const a = c.anticipation;
  const forecast = a?.forecast;
  const leading = a?.leading;
  if (!a) {
    out.push(cond("Anticipating", "False", "Off", "spec.anticipation is unset or Off: reactive only"));
  } else if (leading && leading.state !== "Ok") {
    out.push(
      cond(
        "Anticipating",
        "True",
        leading.state === "Calibrating" ? "LeadingSignalCalibrating" : "LeadingSignalUnavailable",
        `leading signal${leading.reason ? ` (${leading.reason})` : ""}: ${leading.message}; the other rules still apply (${a.mode})`,
      ),
    );
  } else if (forecast && forecast.state !== "Ok") {
    out.push(
      cond(
        "Anticipating",
        "True",
        forecast.state === "Unavailable" ? "HistoryUnavailable" : "InsufficientHistory",
        `seasonal forecast: ${forecast.message}; trend, censored demand and headroom still apply (${a.mode})`,
      ),
    );
  } else {
    out.push(cond("Anticipating", "True", a.mode, a.message));
  }
  return out;
}

/**
 * The conditions of a pass that stopped before deciding (an invalid spec, a target out of scope,
 * an instance that cannot be read): one of each type, so that none is left from an earlier pass
 * saying what is no longer known. `Ready` and `AbleToScale` are False with the blocker's reason;
 * the others are Unknown with it (not evaluated).
 */
export function blockedConditions(blocker: { reason: string; message: string }): DecisionCondition[] {
  return DECISION_CONDITION_TYPES.map((type) =>
    type === "Ready"
      ? cond(type, "False", blocker.reason, blocker.message)
      : type === "AbleToScale"
        ? cond(type, "False", blocker.reason, `nothing is changed: ${blocker.message}`)
        : cond(type, "Unknown", blocker.reason, `not evaluated: ${blocker.message}`),
  );
}
