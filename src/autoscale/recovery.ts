/**
 * Capacity changes with no record: the instance's size (as ARM reports it on this pass) differs
 * from the size the status last stored (`status.current`) and no update in flight
 * (`status.operation`) explains it. The status write after an accepted update was lost — a 503 or
 * a timeout on that write, the operator stopped as the PATCH landed, a leader that lost its lease
 * in between — or another writer (the portal, a pipeline) changed the instance. Pure.
 *
 * What is truthful, from Azure and from the emulator alike:
 * - ARM's resource: `sku.name`, `sku.capacity` and `provisioningState` — the size in place now
 *   and whether an update still runs. That is what this rule reads.
 * - Not when the change began. `systemData.lastModifiedAt` is the time of the *last* write to the
 *   resource (a later tag edit moves it), so it bounds the change from above, never from below;
 *   the activity log has the write's times but is another API, read with other permissions and
 *   minutes late; `ConnectionCount ÷ ConnectionQuotaUtilization` shows the units of a bucket only
 *   while clients are connected, and not exactly (the two are aggregated differently). A change
 *   that began at an unknown time is therefore taken to overlap every bucket before its completion
 *   was observed: those buckets are read at the smaller size and never justify a scale-in
 *   (capacity-timeline.ts) — the reading that never overstates demand.
 *
 * Rules:
 * - terminal, size ≠ `status.current`, no stored update: the change is recorded now (a scale event
 *   with `recovered: true`, no `startedAt`, `lastScaleTime` = now: the settle window follows);
 * - not terminal, size ≠ `status.current`, no stored update (ARM showing the target while an
 *   update runs): it is kept as the update in flight (`status.operation` with `recovered: true`),
 *   recorded when it is observed complete, as any other update;
 * - the same size, a stored update, no stored size (a new policy) or no read: nothing is recovered.
 */
import type { CapacityPolicyStatus } from "../api/index.js";
import { isScalableSku, type SkuName } from "../capacity/skus.js";
import type { AppliedScale } from "./history.js";
import type { EventDraft, InstanceView, StoredOperation } from "./operation.js";

/** What {@link recoverChange} found. */
export interface Recovery {
  /** A change already complete: record it in the history now. */
  scale?: AppliedScale;
  /** An update running with no record: keep it as the update in flight. */
  operation?: StoredOperation;
  events: EventDraft[];
}

const shown = (s: { sku: string; units: number }) => `${s.sku} × ${s.units}`;

/**
 * The change the stored status does not know of, if any (see the module comment). `nowIso` is
 * the time of the pass (RFC 3339).
 */
export function recoverChange(
  status: Pick<Partial<CapacityPolicyStatus>, "current" | "operation">,
  instance: InstanceView | undefined,
  nowIso: string,
): Recovery {
  const known = status.current;
  if (!instance || !known || status.operation) return { events: [] };
  if (instance.sku === known.sku && instance.units === known.units) return { events: [] };
  const to = instance.sku;
  if (!isScalableSku(to)) return { events: [] };
  const from = { sku: known.sku as SkuName, units: known.units };
  const change = `${shown(from)} → ${shown(instance)}`;
  if (!instance.terminal) {
    return {
      operation: { startedAt: nowIso, from, to: { sku: to, units: instance.units }, recovered: true },
      events: [
        {
          type: "Normal",
          reason: "UnrecordedScale",
          message: `an update ${change} is running with no record of it being sent (a lost status write, or another writer): followed as the update in flight`,
        },
      ],
    };
  }
  return {
    scale: { time: nowIso, from, to: { sku: to, units: instance.units }, recovered: true },
    events: [
      {
        type: "Normal",
        reason: "UnrecordedScale",
        message: `the instance went ${change} with no record of the update (a lost status write, or another writer): minutes before now are read at the smaller size and never justify a scale-in`,
      },
    ],
  };
}
