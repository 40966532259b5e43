/**
 * Updates the instance ignores: ARM answers Succeeded and the SKU and units stay as they were
 * (operation.ts: outcome `notApplied`). Sending the same update on every pass would only repeat
 * it, so the tries back off and then stop. Pure; kept in `status.unappliedUpdates` so the count
 * survives restarts and failover.
 *
 * - After the k-th update in a row that did not apply, the next is sent no sooner than
 *   {@link UNAPPLIED_BACKOFF} after it was observed: 1, 2, 4, 8 … minutes, at most 30.
 * - After {@link UNAPPLIED_LIMIT} in a row, none is sent until the spec changes
 *   (`metadata.generation`) or the instance does from outside: another SKU or unit count, or an
 *   update running that is not ours (its provisioning state left Succeeded).
 * - An update that applies clears the count.
 * While a try is held back the pass reports `AbleToScale=False` and `Ready=False`, reason
 * `UpdateNotApplied` (pass.ts).
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
  if (seen.outcome === "notApplied" && seen.ended && seen.instance) {
    const before = stored && stillHolds(stored, seen) ? stored.count : 0;
    return {
      count: before + 1,
      lastTime: seen.nowIso,
      to: { ...seen.ended.to },
      instance: { sku: seen.instance.sku as UnappliedUpdates["instance"]["sku"], units: seen.instance.units },
      ...(seen.generation !== undefined ? { generation: seen.generation } : {}),
    };
  }
  return stored && stillHolds(stored, seen) ? stored : undefined;
}

/** Why the update of this pass is held back. */
export interface UnappliedHold {
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
  const what = `the instance ignored ${state.count} update${state.count === 1 ? "" : "s"} in a row (ARM answered Succeeded, the instance kept ${shown(state.instance)}; the last asked for ${shown(state.to)})`;
  if (state.count >= UNAPPLIED_LIMIT) {
    return {
      stopped: true,
      message: `${what}: no more are sent until the spec or the instance changes`,
    };
  }
  const notBeforeMs = parseTime(state.lastTime) + backoffDelayMs(state.count, UNAPPLIED_BACKOFF, () => 0);
  if (!(nowMs < notBeforeMs)) return undefined;
  return {
    stopped: false,
    notBeforeMs,
    message: `${what}: the next is sent after ${new Date(notBeforeMs).toISOString()} (try ${state.count + 1} of ${UNAPPLIED_LIMIT})`,
  };
}
