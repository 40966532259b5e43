/**
 * What a pass's Azure read failure means for the policy, pure: transient (try again on a later
 * pass), a throttle of known length (hold until it ends), or durable (a person must act).
 *
 * | failure kind | meaning | Ready | Stalled |
 * |---|---|---|---|
 * | `Throttled` with `notBefore`, near (see below) | Azure asked to wait until `notBefore` | False, `Throttled` (says until when) | False: time fixes it |
 * | `NotFound` (404) | the resource ID names nothing | False, `InstanceNotFound` | True |
 * | `Auth` (401, 403) | the identity may not read it (a missing role, a token refused) | False, `AuthorizationFailed` | True |
 * | `InvalidRequest` (400, other 4xx; a read refused by a quota, an Azure Policy or a lock) | Azure refuses the request as sent | False, `InvalidRequest` | True |
 * | anything else (`Network`, `NoData`, `ApiError`, a far or unknown throttle, `Credential`) | may pass | as the decision says (fallback after `failureThreshold`) | only through the fallback |
 *
 * A throttle is *near* while both hold: its end is at most {@link THROTTLE_NEAR_MS} (1 hour, the
 * longest Retry-After the operator honours from Azure: shared/retry-after.ts) from now, and the
 * run of failed passes it belongs to has lasted less than that — its failed passes × the poll
 * interval. While it is near, the pass holds the capacity (as any failed pass does), the fallback
 * does not switch on, and nothing asks for a person; a run of throttles longer than an hour is no
 * longer read as near: the fallback then applies as for any other failure.
 */
import { AZURE_RETRY_AFTER_CAP_MS } from "../shared/retry-after.js";
import type { FailureKind, PassFailure } from "./fallback.js";
import { parseTime } from "./time.js";

/** How long a throttle may still last, and a run of throttled passes may have lasted, to be near: 1 hour. */
export const THROTTLE_NEAR_MS = AZURE_RETRY_AFTER_CAP_MS;

/**
 * Failure kinds that last until a person acts: the reads' side of azure/errors.ts
 * `isDurableRefusal` (controller/fetch.ts maps every error it calls durable to one of these).
 */
const DURABLE: Readonly<Partial<Record<FailureKind, DurableFailureReason>>> = {
  NotFound: "InstanceNotFound",
  Auth: "AuthorizationFailed",
  InvalidRequest: "InvalidRequest",
};

/** The `Ready` reason of a durable read failure. */
export type DurableFailureReason = "InstanceNotFound" | "AuthorizationFailed" | "InvalidRequest";

/** The `Ready=False` a durable read failure gives, or `undefined` for a failure that may pass. */
export function durableFailure(
  failure: PassFailure | undefined,
): { reason: DurableFailureReason; message: string } | undefined {
  if (!failure) return undefined;
  const reason = DURABLE[failure.kind];
  if (!reason) return undefined;
  const what = failure.read === "metrics" ? "its metrics" : "the instance";
  const fix =
    reason === "InstanceNotFound"
      ? "check spec.target.resourceId"
      : reason === "AuthorizationFailed"
        ? "grant the operator's identity its role on the instance (docs/install.md)"
        : "the request is refused as sent";
  return { reason, message: `Azure refuses to read ${what} (${failure.kind}): ${failure.message} — ${fix}` };
}

/**
 * When a throttle of known length ends, ms since the epoch, while it is near (see the module
 * comment); `undefined` for any other failure, or a throttle that is not near.
 * @param failedPasses the failed passes in a row, this one included
 * @param pollSeconds the policy's poll interval, seconds
 */
export function nearThrottleEnd(
  failure: PassFailure | undefined,
  nowMs: number,
  failedPasses: number,
  pollSeconds: number,
): number | undefined {
  if (failure?.kind !== "Throttled" || failure.notBefore === undefined) return undefined;
  const end = parseTime(failure.notBefore);
  if (!Number.isFinite(end)) return undefined;
  if (end - nowMs > THROTTLE_NEAR_MS) return undefined;
  if (Math.max(0, failedPasses - 1) * pollSeconds * 1000 >= THROTTLE_NEAR_MS) return undefined;
  return Math.max(end, nowMs);
}
