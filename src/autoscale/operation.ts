/**
 * The ARM update of a pass, as rules: what an update in flight (kept in `status.operation`) has
 * become by this pass, and what starting one did. Pure: the caller reads the instance and sends
 * the update; these functions say what that means for the history, the Events and the status.
 *
 * Pinned semantics:
 * - An update is recorded in the history (a scale event, `lastScaleTime`) only when its
 *   completion is observed: the instance is terminal `Succeeded` with the target SKU and units.
 *   The event carries when the update was sent (`startedAt`) and when its completion was seen
 *   (`time`); the buckets in between may have been served by either size (capacity-timeline.ts).
 * - An update that ends `Failed`/`Canceled`, or `Succeeded` without the target size (not applied),
 *   leaves the history as it was before it was sent: no scale event, no new `lastScaleTime`, so no
 *   settle window and no rate-policy budget spent on a change that did not happen. Updates that
 *   end `Succeeded` without applying are counted, and the next ones back off, then stop
 *   (unapplied.ts).
 * - While the instance is not terminal an update runs — ours (`status.operation`) or another
 *   writer's — and no second one is sent (ARM would answer 409).
 * - Read after write: a GET right after ARM accepted the PATCH may still be served from before it
 *   (ARM's reads are eventually consistent across its regional caches), showing the old size with
 *   `Succeeded`. Within {@link readAfterWriteGraceMs} of `startedAt` (two poll intervals or 60 s,
 *   whichever is longer: two reads, and a minute, to see the update's `Updating`), a terminal
 *   `Succeeded` without the target size is read as "still in flight"; only after it as "not
 *   applied". A terminal `Failed`/`Canceled` is read as it is at once.
 * - When this pass could not read the instance, a stored update is still in flight.
 */
import type { CapacityPolicyStatus, RefusalCause } from "../api/index.js";
import type { ScalableSku, SkuName } from "../capacity/skus.js";
import { clientsDisconnected, type DisconnectionModel } from "../traffic/disconnections.js";
import { type DecisionHistory, recordScale } from "./history.js";
import type { SignalLevels } from "./suspect.js";

/** The update in flight as status keeps it (`status.operation`). */
export type StoredOperation = NonNullable<CapacityPolicyStatus["operation"]>;

/** What ARM said about the instance on this pass. */
export interface InstanceView {
  /** `sku.name`. */
  sku: string;
  /** `sku.capacity`, units. */
  units: number;
  /** `Succeeded`, `Updating`, `Failed`, … */
  provisioningState: string;
  /** `provisioningState` is terminal (Succeeded, Failed, Canceled). */
  terminal: boolean;
}

/** An Event the pass records on the policy. */
export interface EventDraft {
  type: "Normal" | "Warning";
  /** CamelCase reason. */
  reason: string;
  message: string;
}

/** A scale operation counted in `/metrics` (`target`, `result` labels). */
export interface OperationCount {
  target: "instance" | "replicas";
  result: "started" | "succeeded" | "not_applied" | "failed" | "conflict" | "refused" | "throttled";
}

/** The shortest read-after-write grace, ms (see the module comment). */
export const READ_AFTER_WRITE_GRACE_MIN_MS = 60_000;

/**
 * How long after an update was sent a terminal `Succeeded` without its target size still means
 * "in flight", ms: two poll intervals or {@link READ_AFTER_WRITE_GRACE_MIN_MS}, whichever is
 * longer (see the module comment).
 * @param pollSeconds the policy's poll interval, seconds
 */
export function readAfterWriteGraceMs(pollSeconds: number): number {
  return Math.max(2 * pollSeconds * 1000, READ_AFTER_WRITE_GRACE_MIN_MS);
}

/** How an update in flight ended. */
export type UpdateOutcome = "succeeded" | "notApplied" | "failed";

/** What {@link observeOperation} found. */
export interface OperationObservation {
  /** The update still in flight after this pass's read (absent: none of ours). */
  operation?: StoredOperation;
  /** An update runs (ours or another writer's): no second one may be sent. */
  busy: boolean;
  /** How the stored update ended, when it ended on this pass. */
  outcome?: UpdateOutcome;
  /** The history after the outcome. */
  history: DecisionHistory;
  events: EventDraft[];
  counts: OperationCount[];
}

/** `Premium_P1 × 20`, as Events name a size. */
const shown = (s: { sku: string; units: number }) => `${s.sku} × ${s.units}`;

const sameTarget = (e: { toSku: string; toUnits: number }, to: { sku: string; units: number }) =>
  e.toSku === to.sku && e.toUnits === to.units;

/**
 * Where the stored update stands, given the instance read on this pass (`undefined`: the read
 * failed) — see the module comment. `nowIso` is when the completion is observed; `graceMs` the
 * read-after-write grace ({@link readAfterWriteGraceMs}; 0: none).
 */
export function observeOperation(
  stored: StoredOperation | undefined,
  instance: InstanceView | undefined,
  history: DecisionHistory,
  nowIso: string,
  graceMs = 0,
): OperationObservation {
  const base = { history, events: [] as EventDraft[], counts: [] as OperationCount[] };
  if (!instance?.terminal) {
    return {
      ...base,
      ...(stored ? { operation: stored } : {}),
      busy: instance ? true : stored !== undefined,
    };
  }
  if (!stored) return { ...base, busy: false };
  const succeeded = instance.provisioningState.toLowerCase() === "succeeded";
  const applied = succeeded && instance.sku === stored.to.sku && instance.units === stored.to.units;
  const sentMs = Date.parse(stored.startedAt);
  // A read served from before the PATCH: the update is still in flight (see the module comment).
  if (succeeded && !applied && !stored.recovered && Date.parse(nowIso) - sentMs < graceMs) {
    return { ...base, operation: stored, busy: true };
  }
  // A status written by an earlier version recorded the event when the update was sent.
  const earlier = history.scaleEvents.filter(
    (e) =>
      !(
        e.startedAt === undefined &&
        !e.recovered &&
        sameTarget(e, stored.to) &&
        !(Date.parse(e.time) < sentMs - 60_000)
      ),
  );
  if (applied) {
    const next = recordScale(
      { ...history, scaleEvents: earlier },
      {
        time: nowIso,
        // A recovered update was found running, not sent: when it began is unknown.
        ...(stored.recovered ? { recovered: true } : { startedAt: stored.startedAt }),
        from: { sku: stored.from.sku as SkuName, units: stored.from.units },
        to: stored.to,
        ...(stored.before ? { before: stored.before } : {}),
      },
    );
    return {
      history: next,
      busy: false,
      outcome: "succeeded",
      events: [
        {
          type: "Normal",
          reason: "ScaleSucceeded",
          message: `${shown(stored.to)} units in place (${stored.recovered ? "found running" : "started"} ${stored.startedAt})`,
        },
      ],
      counts: [{ target: "instance", result: "succeeded" }],
    };
  }
  const restored: DecisionHistory = { ...history, scaleEvents: earlier };
  const last = earlier.at(-1)?.time;
  if (earlier.length !== history.scaleEvents.length) {
    if (last === undefined) delete restored.lastScaleTime;
    else restored.lastScaleTime = last;
  }
  return {
    history: restored,
    busy: false,
    outcome: succeeded ? "notApplied" : "failed",
    events: [
      succeeded
        ? {
            type: "Warning",
            reason: "ScaleNotApplied",
            message: `ARM reported success but the instance has ${shown(instance)}, not ${shown(stored.to)}`,
          }
        : {
            type: "Warning",
            reason: "ScaleFailed",
            message: `the update to ${shown(stored.to)} ended ${instance.provisioningState}`,
          },
    ],
    counts: [{ target: "instance", result: succeeded ? "not_applied" : "failed" }],
  };
}

/** Why ARM refused an update durably. */
export interface Refusal {
  /** What refused it: what Azure's error code names, or the kind of the refusal. */
  by: RefusalCause;
  /** Azure's error code (`error.code`). */
  code?: string;
  /** Azure's answer: status, code and message, as the adapter reported it. */
  message: string;
}

/** What sending the update did. */
export type UpdateResult =
  /** ARM accepted it (200, 201 or 202). */
  | { kind: "accepted"; startedAt: string; operationUrl?: string }
  /** 409: another operation runs on the instance — wait, don't stack. */
  | { kind: "busy"; message: string }
  /**
   * Refused until a person acts (a quota, an Azure Policy deny, a resource lock, an invalid
   * request, a missing role, a missing instance): sending it again changes nothing.
   */
  | { kind: "refused"; message: string; refusal: Refusal }
  /** 429 (or the throttle gate holding the scope, `sent` false): ARM accepts writes again at `notBefore` (RFC 3339). */
  | { kind: "throttled"; message: string; notBefore: string; sent: boolean }
  /** Failed in a way that may pass (5xx, a timeout, a reset). */
  | { kind: "failed"; message: string };

/** The update a pass sends. */
export interface PlannedUpdate {
  from: { sku: string; units: number };
  to: { sku: ScalableSku; units: number };
  /** Why: the signal that drove it or the limit that shaped it. */
  cause: string;
  /** The window's peak levels now (kept with the change: suspect.ts). */
  before?: SignalLevels;
  /** Anticipation drove this scale-out: its rule and numbers (Event AnticipatedScaleOut). */
  anticipated?: string;
}

/** What {@link startedOperation} makes of a result. */
export interface StartObservation {
  /** The update to keep in `status.operation` (accepted only). */
  operation?: StoredOperation;
  /** AbleToScale=False while this holds (busy, throttled or failed), with its reason and message. */
  blocked?: { reason: "ScaleInProgress" | "FailedUpdateScale" | "Throttled"; message: string };
  events: EventDraft[];
  counts: OperationCount[];
  /** Clients the accepted update is expected to disconnect (see {@link expectedDisconnects}). */
  disconnects?: number;
}

/**
 * Clients an update is expected to disconnect when it completes: the removed units' share of the
 * window's peak connections (`traffic/disconnections.ts`, `connections × removed ÷ old units`; 0
 * for a scale-out); undefined when the connections are not known.
 */
export function expectedDisconnects(
  update: Pick<PlannedUpdate, "from" | "to" | "before">,
  model: DisconnectionModel = "RemovedUnits",
): number | undefined {
  const connections = update.before?.connections;
  if (connections === undefined || !Number.isFinite(connections) || connections < 0) return undefined;
  if (!(update.from.units > 0) || !(update.to.units > 0)) return undefined;
  return clientsDisconnected(
    {
      connections,
      fromUnits: update.from.units,
      toUnits: update.to.units,
      skuChanges: update.from.sku !== update.to.sku,
    },
    model,
  );
}

/** `; disconnects about 6,667 clients (the removed units' share of 20,000)`, or nothing. */
function disconnectsText(disconnects: number | undefined, connections: number | undefined): string {
  if (disconnects === undefined || connections === undefined || disconnects <= 0) return "";
  const n = (v: number) => Math.round(v).toLocaleString("en-US");
  return `; disconnects about ${n(disconnects)} clients (the removed units' share of ${n(connections)}), who reconnect at once`;
}

/** The status, Events and counts of sending `update` with `result`. Pure. */
export function startedOperation(update: PlannedUpdate, result: UpdateResult): StartObservation {
  if (result.kind === "accepted") {
    const out = update.to.units >= update.from.units ? "ScalingOut" : "ScalingIn";
    const disconnects = expectedDisconnects(update);
    return {
      ...(disconnects !== undefined && disconnects > 0 ? { disconnects } : {}),
      operation: {
        startedAt: result.startedAt,
        from: { sku: update.from.sku as StoredOperation["from"]["sku"], units: update.from.units },
        to: { ...update.to } as StoredOperation["to"],
        ...(result.operationUrl ? { asyncOperationUrl: result.operationUrl } : {}),
        ...(update.before ? { before: update.before } : {}),
      },
      events: [
        {
          type: "Normal",
          reason: out,
          message: `${shown(update.from)} → ${shown(update.to)} units (${update.cause})${disconnectsText(disconnects, update.before?.connections)}`,
        },
        ...(update.anticipated
          ? [
              {
                type: "Normal" as const,
                reason: "AnticipatedScaleOut",
                message: `${shown(update.from)} → ${shown(update.to)} units ahead of the demand: ${update.anticipated}`,
              },
            ]
          : []),
      ],
      counts: [{ target: "instance", result: "started" }],
    };
  }
  const change = `${shown(update.from)} → ${shown(update.to)}`;
  if (result.kind === "refused") {
    // Held back, and reported, as an update that did not take (unapplied.ts, pass.ts).
    return {
      events: [
        {
          type: "Warning",
          reason: "ScaleRefused",
          message: `Azure refused the update ${change} (${REFUSED_BY[result.refusal.by]}): ${result.message}`,
        },
      ],
      counts: [{ target: "instance", result: "refused" }],
    };
  }
  if (result.kind === "throttled") {
    return {
      blocked: {
        reason: "Throttled",
        message: `ARM throttles writes until ${result.notBefore}: the update ${change} is sent after it`,
      },
      // The throttle gate's refusals sent nothing: only an answered 429 is an Event.
      events: result.sent ? [{ type: "Warning", reason: "ScaleThrottled", message: result.message }] : [],
      counts: [{ target: "instance", result: "throttled" }],
    };
  }
  const busy = result.kind === "busy";
  return {
    blocked: { reason: busy ? "ScaleInProgress" : "FailedUpdateScale", message: result.message },
    events: [{ type: "Warning", reason: busy ? "ScaleDeferred" : "FailedScale", message: result.message }],
    counts: [{ target: "instance", result: busy ? "conflict" : "failed" }],
  };
}

/** What refused an update, as messages say it. */
export const REFUSED_BY: Readonly<Record<RefusalCause, string>> = {
  Quota: "a quota",
  Policy: "an Azure Policy",
  Lock: "a resource lock",
  Invalid: "an invalid request",
  Unauthorized: "a missing role or a refused token",
  NotFound: "the instance does not exist",
};
