/**
 * Stage 3, the health of the pass: whether its metrics are usable (no failed fetch, some signal
 * with a value) and complete (every signal Ok, no bucket of the window still changing between
 * passes: ingestion.ts), and where the fallback stands (fallback.ts) — a pass without usable
 * metrics counts as failed, unless the instance itself does not serve (its metrics are then
 * expected to be empty: `silent`).
 */
import { nearThrottleEnd } from "../failures.js";
import { evaluateFallback, type FallbackState } from "../fallback.js";
import { fillingBuckets } from "../ingestion.js";
import { type Reason, reason } from "../reasons.js";
import type { SignalEvaluation } from "../signals.js";
import type { DecisionFrame } from "./stage.js";
import type { ObservedWindow } from "./window.js";

/** The health of a pass. */
export interface PassHealth {
  /** Some signal has a usable value and the fetch did not fail; false: the pass failed. */
  metricsUsable: boolean;
  /**
   * No usable metrics because the instance itself does not serve (`silence` given, and no fetch
   * failure other than no data): not counted as a failure.
   */
  silent: boolean;
  /** Starts (ms) of the window's buckets still changing although old enough to be complete. */
  filling: number[];
  /** Every signal is Ok and no bucket is still filling: the window may justify a scale-in. */
  complete: boolean;
  fallback: FallbackState;
  /** `FetchFailed` or `MetricsUnavailable` when the pass failed. */
  reasons: Reason[];
}

/** Stage 3 (see the module comment). */
export function passHealth(
  frame: DecisionFrame,
  observed: ObservedWindow,
  evaluation: SignalEvaluation,
  silence?: string,
): PassHealth {
  const { failure, history, spec } = frame;
  const { window, ingestion } = observed;
  const metricsUsable = !failure && evaluation.needs.length > 0;
  const filling =
    failure || !ingestion
      ? []
      : fillingBuckets(history.ingestion, ingestion, window.from, window.to, observed.delaySeconds);
  const complete =
    !failure &&
    evaluation.reports.length > 0 &&
    evaluation.reports.every((r) => r.status === "Ok") &&
    filling.length === 0;
  // An instance that does not serve has no metrics to give: their absence is no failure.
  const silent = !metricsUsable && silence !== undefined && (!failure || failure.kind === "NoData");
  const passFailed = !metricsUsable && !silent;
  const throttledUntil = passFailed
    ? nearThrottleEnd(failure, frame.nowMs, history.consecutiveFailures + 1, spec.pollIntervalSeconds)
    : undefined;
  const fallback = evaluateFallback(spec.fallback, history.consecutiveFailures, passFailed, throttledUntil);
  const reasons: Reason[] = [];
  if (failure) {
    reasons.push(
      reason("FetchFailed", `fetching metrics failed (${failure.kind}): ${failure.message}`, {
        name: failure.kind,
      }),
    );
  } else if (!metricsUsable) {
    reasons.push(
      reason(
        "MetricsUnavailable",
        silent
          ? "no signal has a usable value in the window, as expected while the instance is not serving"
          : "no signal has a usable value in the window: unknown, not zero",
      ),
    );
  }
  return { metricsUsable, silent, filling, complete, fallback, reasons };
}
