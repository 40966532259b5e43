/**
 * Updates that do not take: ARM answers Succeeded and the SKU and units stay as they were
 * (operation.ts: outcome `notApplied`), or the update runs and ends `Failed` or `Canceled`
 * (outcome `failed`). Sending the same update on every pass would only repeat it, so the tries
 * back off and then stop. Pure; kept in `status.unappliedUpdates` so the count survives restarts
 * and failover.
 *
 * - After the k-th update in a row that did not take (either way), the next is sent no sooner
 *   than {@link UNAPPLIED_BACKOFF} after it was observed: 1, 2, 4, 8 … minutes, at most 30.
 * - After {@link UNAPPLIED_LIMIT} in a row, none is sent until the spec changes
 *   (`metadata.generation`) or the instance does from outside: another SKU or unit count, or an
 *   update running that is not ours (its provisioning state left a terminal state).
 * - An update that applies clears the count.
 * While a try is held back the pass reports `AbleToScale=False` and `Ready=False`, reason
 * `UpdateNotApplied` when the last one was answered Succeeded without applying, `UpdateFailed`
 * when it ended Failed or Canceled (pass.ts).
 *
 * The count is read back from `status`, which others may write: a count that is not a whole
 * number ≥ 1 is read as 1, and a `lastTime` later than now as now (so the wait is never longer
 * than the backoff says).
 */
import type { UnappliedUpdates } from "../api/index.js";
import { type BackoffOptions, backoffDelayMs } from "../shared/backoff.js";
import type { InstanceView, StoredOperation, UpdateOutcome } from "./operation.js";
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
  /** How our update in flight ended on this pass, if it did. */
  outcome?: UpdateOutcome | undefined;
  /** That update (for `to`). */
  ended?: StoredOperation | undefined;
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
 * `status.unappliedUpdates` after this pass (`undefined`: clear it). Pure.
 */
export function nextUnapplied(
  stored: UnappliedUpdates | undefined,
  seen: UnappliedObservation,
): UnappliedUpdates | undefined {
  if (seen.outcome === "succeeded") return undefined;
  if ((seen.outcome === "notApplied" || seen.outcome === "failed") && seen.ended && seen.instance) {
    const before = stored && stillHolds(stored, seen) ? storedCount(stored) : 0;
    const lastOutcome: UnappliedOutcome =
      seen.outcome === "notApplied"
        ? "NotApplied"
        : seen.instance.provisioningState.toLowerCase() === "canceled"
          ? "Canceled"
          : "Failed";
    return {
      count: before + 1,
      lastTime: seen.nowIso,
      to: { ...seen.ended.to },
      instance: { sku: seen.instance.sku as UnappliedUpdates["instance"]["sku"], units: seen.instance.units },
      ...(seen.generation !== undefined ? { generation: seen.generation } : {}),
      lastOutcome,
    };
  }
  return stored && stillHolds(stored, seen) ? stored : undefined;
}

/** A stored count as the rules read it: a whole number ≥ 1 (1 when it is not one). */
function storedCount(state: UnappliedUpdates): number {
  return Number.isFinite(state.count) && state.count >= 1 ? Math.floor(state.count) : 1;
}

/** Why the update of this pass is held back. */
export interface UnappliedHold {
  /** The condition and Event reason: how the last update that did not take ended. */
  reason: "UpdateNotApplied" | "UpdateFailed";
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
  const count = storedCount(state);
  const outcome = state.lastOutcome ?? "NotApplied";
  const reason = outcome === "NotApplied" ? "UpdateNotApplied" : "UpdateFailed";
  const what =
    outcome === "NotApplied"
      ? `the instance ignored ${count} update${count === 1 ? "" : "s"} in a row (ARM answered Succeeded, the instance kept ${shown(state.instance)}; the last asked for ${shown(state.to)})`
      : `${count} update${count === 1 ? "" : "s"} in a row did not take (the last ended ${outcome}, the instance kept ${shown(state.instance)}; it asked for ${shown(state.to)})`;
  if (count >= UNAPPLIED_LIMIT) {
    return {
      reason,
      stopped: true,
      message: `${what}: no more are sent until the spec or the instance changes`,
    };
  }
  const lastMs = Math.min(parseTime(state.lastTime), nowMs);
  const notBeforeMs = lastMs + backoffDelayMs(count, UNAPPLIED_BACKOFF, () => 0);
  if (!(nowMs < notBeforeMs)) return undefined;
  return {
    reason,
    stopped: false,
    notBeforeMs,
    message: `${what}: the next is sent after ${new Date(notBeforeMs).toISOString()} (try ${count + 1} of ${UNAPPLIED_LIMIT})`,
  };
}
