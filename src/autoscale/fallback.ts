/**
 * Fallback while metrics fail (`spec.fallback`).
 *
 * Pinned semantics: a pass fails when fetching metrics failed (any kind: no data, throttled, auth,
 * API error, …) or when no configured signal has a usable value. `consecutiveFailures` counts
 * failed passes and resets to 0 on the first pass that succeeds. Below `failureThreshold` a failed
 * pass holds the current capacity; from the threshold on the fallback applies — Hold keeps the
 * current capacity, Fixed goes to `units` when that is higher than the current units (never lower:
 * no scale-in blind) — and stays the same on every further failed pass.
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
}

/** The fallback after a pass that `failed` (or not), with `previousFailures` before it. Pure. */
export function evaluateFallback(
  spec: FallbackSpec,
  previousFailures: number,
  failed: boolean,
): FallbackState {
  const consecutiveFailures = failed ? previousFailures + 1 : 0;
  const threshold = Math.max(1, spec.failureThreshold);
  const state: FallbackState = {
    failed,
    consecutiveFailures,
    threshold,
    active: failed && consecutiveFailures >= threshold,
    action: spec.action,
  };
  if (spec.action === "Fixed" && spec.units !== undefined) state.fixedUnits = spec.units;
  return state;
}
