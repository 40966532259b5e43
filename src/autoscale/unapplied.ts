/**
 * Updates that do not take: ARM answers Succeeded and the SKU and units stay as they were
 * (operation.ts: outcome `notApplied`), the update runs and ends `Failed` or `Canceled`
 * (outcome `failed`), or ARM refuses the PATCH outright for a reason that lasts until a person
 * acts — a quota, an Azure Policy deny, a resource lock, an invalid request, a missing role, a
 * missing instance (outcome `refused`; a throttle, an operation in progress or a transient failure
 * is not one). Sending the same update on every pass would only repeat it, so the tries back off
 * and then stop — one mechanism for the three. Pure; kept in `status.unappliedUpdates` so the
 * count survives restarts and failover.
 *
 * - After the k-th update in a row that did not take (any way), the next is sent no sooner
 *   than {@link UNAPPLIED_BACKOFF} after it was observed: 1, 2, 4, 8 … minutes, at most 30.
 * - After {@link UNAPPLIED_LIMIT} in a row, none is sent until the spec changes
 *   (`metadata.generation`) or the instance does from outside: another SKU or unit count, or an
 *   update running that is not ours (its provisioning state left a terminal state).
 * - An update that applies clears the count.
 * While a try is held back the pass reports `AbleToScale=False` and `Ready=False`, reason
 * `UpdateNotApplied` when the last one was answered Succeeded without applying, `UpdateFailed`
 * when it ended Failed or Canceled, `UpdateRefused` when ARM refused it (pass.ts; `ScalingLimited`
 * then names what refused it, {@link REFUSAL_REASONS}, with Azure's code and message).
 *
 * The count is read back from `status`, which others may write: a count that is not a whole
 * number ≥ 1 is read as 1, and a `lastTime` later than now as now (so the wait is never longer
 * than the backoff says).
 */
import type { RefusalCause, UnappliedUpdates } from "../api/index.js";
import { type BackoffOptions, backoffDelayMs } from "../shared/backoff.js";
import { type InstanceView, REFUSED_BY, type Refusal, type UpdateOutcome } from "./operation.js";
import { parseTime } from "./time.js";

export type { UnappliedUpdates };

/** Updates in a row that did not apply after which no more are sent, updates. */
export const UNAPPLIED_LIMIT = 5;

/** The wait after each update that did not apply (no jitter: one writer per instance). */
export const UNAPPLIED_BACKOFF: BackoffOptions = {
  initialMs: 60_000,
  maxMs: 1_800_000,
  factor: 2,
  jitter: 0,
};

/** What this pass saw, for {@link nextUnapplied}. */
export interface UnappliedObservation {
  /** How our update in flight ended on this pass, or that ARM refused the one it sent. */
  outcome?: UpdateOutcome | "refused" | undefined;
  /** That update (for `to`). */
  ended?: { to: UnappliedUpdates["to"] } | undefined;
  /** Outcome `refused`: why. */
  refusal?: Refusal | undefined;
  /** The instance as read on this pass; absent when the read failed. */
  instance?: InstanceView | undefined;
  /** An update of ours is (or was, until this pass) in flight. */
  ours: boolean;
  /** The policy's `metadata.generation`. */
  generation?: number | undefined;
  /** The time of the pass, RFC 3339. */
  nowIso: string;
}

const sameSize = (a: { sku: string; units: number }, b: { sku: string; units: number }) =>
  a.sku === b.sku && a.units === b.units;

/** How the last update that did not take ended (`status.unappliedUpdates.lastOutcome`). */
export type UnappliedOutcome = NonNullable<UnappliedUpdates["lastOutcome"]>;

/** The stored count still holds: same spec, and the instance unchanged from outside. */
function stillHolds(stored: UnappliedUpdates, seen: UnappliedObservation): boolean {
  if (stored.generation !== seen.generation) return false;
  const i = seen.instance;
  if (!i) return true;
  if (!sameSize(i, stored.instance)) return false;
  return i.terminal || seen.ours;
}

/**
 * How an update that did not take ended, from this pass's observation: `Refused` when ARM refused
 * it, `NotApplied`, or `Failed` / `Canceled` by the instance's provisioning state.
 */
function unappliedOutcome(
  seen: UnappliedObservation,
  instance: InstanceView,
  refused: boolean,
): UnappliedOutcome {
  if (refused) return "Refused";
  if (seen.outcome === "notApplied") return "NotApplied";
  return instance.provisioningState.toLowerCase() === "canceled" ? "Canceled" : "Failed";
}

/** The refusal's fields of `status.unappliedUpdates` (code at most 128, message 1024 characters). */
function refusalFields(refused: Refusal | undefined): Partial<UnappliedUpdates> {
  if (!refused) return {};
  return {
    refusedBy: refused.by,
    ...(refused.code !== undefined ? { code: refused.code.slice(0, 128) } : {}),
    message: refused.message.slice(0, 1024),
  };
}

/**
 * `status.unappliedUpdates` after this pass (`undefined`: clear it). Pure.
 */
export function nextUnapplied(
  stored: UnappliedUpdates | undefined,
  seen: UnappliedObservation,
): UnappliedUpdates | undefined {
  if (seen.outcome === "succeeded") return undefined;
  const held = stored && stillHolds(stored, seen) ? stored : undefined;
  const refused = seen.outcome === "refused" ? seen.refusal : undefined;
  const didNotTake = seen.outcome === "notApplied" || seen.outcome === "failed" || refused !== undefined;
  const { ended, instance } = seen;
  if (!didNotTake || !ended || !instance) return held;
  return {
    count: (held ? storedCount(held) : 0) + 1,
    lastTime: seen.nowIso,
    to: { ...ended.to },
    instance: { sku: instance.sku as UnappliedUpdates["instance"]["sku"], units: instance.units },
    ...(seen.generation !== undefined ? { generation: seen.generation } : {}),
    lastOutcome: unappliedOutcome(seen, instance, refused !== undefined),
    ...refusalFields(refused),
  };
}

/** A stored count as the rules read it: a whole number ≥ 1 (1 when it is not one). */
function storedCount(state: UnappliedUpdates): number {
  return Number.isFinite(state.count) && state.count >= 1 ? Math.floor(state.count) : 1;
}

/**
 * The `ScalingLimited` reason of each refusal cause: what refused the update, as a person looks it
 * up (Azure's own code where there is one).
 */
export const REFUSAL_REASONS: Readonly<Record<RefusalCause, string>> = {
  Quota: "QuotaExceeded",
  Policy: "RequestDisallowedByPolicy",
  Lock: "ScopeLocked",
  Invalid: "InvalidRequest",
  Unauthorized: "AuthorizationFailed",
  NotFound: "InstanceNotFound",
};

/** What to do about each refusal cause, for messages. */
const REFUSAL_FIX: Readonly<Record<RefusalCause, string>> = {
  Quota: "raise the subscription's quota for the region, or lower spec.units.max",
  Policy: "change the Azure Policy assignment or its exemptions, or the policy's SKUs and units",
  Lock: "remove the resource lock (ReadOnly locks refuse every write)",
  Invalid: "the request is refused as sent; check the SKU and units the policy allows",
  Unauthorized: "grant the operator's identity its role on the instance (docs/install.md)",
  NotFound: "check spec.target.resourceId",
};

/** Why the last update was refused, from the stored count (lastOutcome Refused). */
export interface StoredRefusal {
  by: RefusalCause;
  /** The `ScalingLimited` reason ({@link REFUSAL_REASONS}). */
  reason: string;
  /** What refused it, Azure's code and message, and what to do. */
  message: string;
}

/** The refusal the stored count records, if its last update was refused. */
export function storedRefusal(state: UnappliedUpdates | undefined): StoredRefusal | undefined {
  if (state?.lastOutcome !== "Refused") return undefined;
  const by: RefusalCause = state.refusedBy ?? "Invalid";
  return {
    by,
    reason: REFUSAL_REASONS[by],
    message: `the update to ${shown(state.to)} was refused by ${REFUSED_BY[by]}${state.code ? ` (${state.code})` : ""}: ${state.message ?? "no message"} — ${REFUSAL_FIX[by]}`,
  };
}

/** Why the update of this pass is held back. */
export interface UnappliedHold {
  /** The condition and Event reason: how the last update that did not take ended. */
  reason: "UpdateNotApplied" | "UpdateFailed" | "UpdateRefused";
  /** The last update was refused: by what, with Azure's code and message. */
  refusal?: StoredRefusal;
  /** The limit is reached: no more tries until the spec or the instance changes. */
  stopped: boolean;
  /** When the next try may be sent, ms since the epoch (absent when stopped). */
  notBeforeMs?: number;
  message: string;
}

/** `Premium_P1 × 20`. */
const shown = (s: { sku: string; units: number }) => `${s.sku} × ${s.units}`;

/**
 * Whether an update may be sent at `nowMs` given the count after this pass (see
 * {@link nextUnapplied}); `undefined`: it may. Pure.
 */
export function unappliedHold(state: UnappliedUpdates | undefined, nowMs: number): UnappliedHold | undefined {
  if (!state) return undefined;
  const { count, reason, what, withRefusal } = describeUnapplied(state);
  if (count >= UNAPPLIED_LIMIT) {
    return {
      reason,
      ...withRefusal,
      stopped: true,
      message: `${what}: no more are sent until the spec or the instance changes`,
    };
  }
  const lastMs = Math.min(parseTime(state.lastTime), nowMs);
  const notBeforeMs = lastMs + backoffDelayMs(count, UNAPPLIED_BACKOFF, () => 0);
  if (!(nowMs < notBeforeMs)) return undefined;
  return {
    reason,
    ...withRefusal,
    stopped: false,
    notBeforeMs,
    message: `${what}: the next is sent after ${new Date(notBeforeMs).toISOString()} (try ${count + 1} of ${UNAPPLIED_LIMIT})`,
  };
}

/**
 * The hold when the updates that did not take left no unit count to ask for (each count asked was
 * left out of the ladder, ladders.ts, and the decision has none left between the instance's size
 * and what the metrics ask for): stopped, as after the limit. Pure.
 */
export function exhaustedHold(state: UnappliedUpdates): UnappliedHold {
  const { reason, what, withRefusal } = describeUnapplied(state);
  return {
    reason,
    ...withRefusal,
    stopped: true,
    message: `${what}, and no unit count is left to ask for: no more are sent until the spec or the instance changes`,
  };
}

function describeUnapplied(state: UnappliedUpdates): {
  count: number;
  reason: UnappliedHold["reason"];
  what: string;
  withRefusal: { refusal?: StoredRefusal };
} {
  const count = storedCount(state);
  const outcome = state.lastOutcome ?? "NotApplied";
  const refusal = storedRefusal(state);
  const reason =
    outcome === "NotApplied" ? "UpdateNotApplied" : outcome === "Refused" ? "UpdateRefused" : "UpdateFailed";
  const updates = `${count} update${count === 1 ? "" : "s"} in a row`;
  const what =
    outcome === "NotApplied"
      ? `the instance ignored ${updates} (ARM answered Succeeded, the instance kept ${shown(state.instance)}; the last asked for ${shown(state.to)})`
      : refusal
        ? `Azure refused ${updates} (${refusal.message})`
        : `${updates} did not take (the last ended ${outcome}, the instance kept ${shown(state.instance)}; it asked for ${shown(state.to)})`;
  return { count, reason, what, withRefusal: refusal ? { refusal } : {} };
}
