/**
 * Fallback while metrics fail (`spec.fallback`).
 *
 * Pinned semantics: a pass fails when fetching metrics failed (any kind: no data, throttled, auth,
 * API error, …) or when no configured signal has a usable value. `consecutiveFailures` counts
 * failed passes and resets to 0 on the first pass that succeeds. Below `failureThreshold` a failed
 * pass holds the current capacity; from the threshold on the fallback applies — Hold keeps the
 * current capacity, Fixed goes to `units` when that is higher than the current units (never lower:
 * no scale-in blind) — and stays the same on every further failed pass. While the failure is a
 * throttle whose end is near (failures.ts), the failed passes are counted but the fallback does
 * not switch on: the capacity is held until the throttle ends (`throttledUntil`).
 */
import type { FallbackSpec } from "../api/index.js";

/**
 * Kinds of failure the Azure adapter reports; others are passed through as strings. `Credential`:
 * the operator's own credential gave no token (failed or timed out), so nothing was asked of
 * Azure; `Auth`: Azure refused the token (401, 403).
 */
export type FailureKind =
  | "NoData"
  | "Throttled"
  | "Auth"
  | "Credential"
  | "NotFound"
  | "ApiError"
  | "InvalidRequest"
  | "Network"
  | (string & {});

/** This pass's metric fetch failure. */
export interface PassFailure {
  kind: FailureKind;
  message: string;
  /** Which read failed: the instance (ARM) or its metrics (Azure Monitor). */
  read?: "instance" | "metrics";
  /** `Throttled`: when Azure allows the next call (its Retry-After, capped), RFC 3339. */
  notBefore?: string;
}

/** Where the fallback stands after this pass. */
export interface FallbackState {
  /** This pass failed. */
  failed: boolean;
  /** Consecutive failed passes including this one (0 after a success). */
  consecutiveFailures: number;
  threshold: number;
  /** The threshold is reached: the fallback action applies. */
  active: boolean;
  action: "Hold" | "Fixed";
  /** Units of action Fixed. */
  fixedUnits?: number;
  /** The pass failed on a throttle whose end is near: held until then (RFC 3339), no fallback. */
  throttledUntil?: string;
}

/**
 * The fallback after a pass that `failed` (or not), with `previousFailures` before it. Pure.
 * @param throttledUntilMs the end of a near throttle this pass failed on (failures.ts
 *   `nearThrottleEnd`), ms since the epoch: the fallback does not switch on for it.
 */
export function evaluateFallback(
  spec: FallbackSpec,
  previousFailures: number,
  failed: boolean,
  throttledUntilMs?: number,
): FallbackState {
  const consecutiveFailures = failed ? previousFailures + 1 : 0;
  const threshold = Math.max(1, spec.failureThreshold);
  const throttled = failed && throttledUntilMs !== undefined && Number.isFinite(throttledUntilMs);
  const state: FallbackState = {
    failed,
    consecutiveFailures,
    threshold,
    active: failed && !throttled && consecutiveFailures >= threshold,
    action: spec.action,
  };
  if (spec.action === "Fixed" && spec.units !== undefined) state.fixedUnits = spec.units;
  if (throttled) state.throttledUntil = new Date(throttledUntilMs).toISOString();
  return state;
}
