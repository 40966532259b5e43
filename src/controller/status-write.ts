/**
 * The status write of a pass: conditions stamped against the status the pass started from and
 * `Ready` derived; the whole status the pass computed is written only when `needsStatusWrite`
 * says so (a relied-upon field changed, or the refresh interval passed: `status-need.ts`), and is
 * carried to the next pass in memory either way (`status-memory.ts`). On 409 the policy is read
 * again and the pass's patch is applied over it, its stamps rebuilt — no Azure call is repeated.
 * Events (the pass's own and those of condition changes) follow, while the leader's fence holds.
 * A policy deleted while its pass ran (404 on the write or the re-read) ends the pass quietly:
 * nothing is written, remembered or recorded for it. A write that fails otherwise is forgotten too:
 * the next pass starts from the stored status and learns what the lost one did from the instance
 * (`../autoscale/recovery.ts`).
 */
import type { CapacityPolicy, CapacityPolicyStatus, PolicyCondition, StatusPatch } from "../api/index.js";
import { type EventDraft, mergeStatus, type PassWrite } from "../autoscale/index.js";
import { ConflictError as KubeConflictError, NotFoundError } from "../kube/errors.js";
import { type EventRecorder, policySubject } from "../kube/events.js";
import type { PolicyClient } from "../kube/policies.js";
import { objectKey } from "../kube/watch.js";
import { type Logger, scrubSecrets } from "./logging.js";
import { changedConditions, replacingPatch, stampConditions, withReady } from "./status.js";
import type { StartingStatus, StatusMemory } from "./status-memory.js";
import { DEFAULT_STATUS_REFRESH_MS, needsStatusWrite, refreshPhase } from "./status-need.js";

const MAX_STATUS_ATTEMPTS = 4;

/** What the status write uses. */
export interface StatusWriteDeps {
  policies: PolicyClient;
  events: EventRecorder;
  log: Logger;
  now: () => number;
  /** The leader's fence: false → no write of any kind. */
  canWrite: () => boolean;
  /** Counts the status writes made and skipped. */
  countStatusWrite?: (result: "written" | "skipped") => void;
  /** Carries each policy's status between passes; without it every pass starts from the stored one. */
  statusMemory?: StatusMemory;
  /** A status whose relied-upon fields did not change is written at most this often, ms (default 5 min). */
  statusRefreshMs?: number;
}

type Status = Partial<CapacityPolicyStatus>;

/** What the status write left: the conditions as the pass left them, or that the policy is gone. */
export type StatusWriteResult =
  | { gone: false; conditions: PolicyCondition[] }
  /** The policy was deleted while the pass ran: nothing written, remembered or recorded. */
  | { gone: true };

/** `value` as it reads back from the API server (JSON: no `undefined`). */
const asStored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * The patch that makes the stored status equal `next`: objects replace the stored ones whole and
 * a top-level field `next` lacks is removed.
 */
function patchTo(stored: Status | undefined, next: Status): StatusPatch {
  const patch = replacingPatch(stored as Record<string, unknown> | undefined, next) as StatusPatch;
  for (const k of Object.keys(stored ?? {}) as (keyof Status)[]) if (!(k in next)) patch[k] = null;
  return patch;
}

/**
 * Writes status when it needs writing (see the module comment): conditions stamped against the
 * status the pass started from (`start`: the carried one, else the stored one), Ready derived.
 * On 409 it reads the policy again and applies the pass's patch over it — no Azure call is
 * repeated. Events (the pass's own and those of condition changes) follow. Returns the
 * conditions as the pass left them, written or carried (none when this replica may not write),
 * or `gone` when the API server answers 404 for the policy (deleted while the pass ran).
 *
 * @throws the Kubernetes error of the status write (after at most 4 attempts on 409), other than 404
 */
export async function writeStatus(
  policy: CapacityPolicy,
  deps: StatusWriteDeps,
  write: PassWrite,
  start: StartingStatus = { status: policy.status },
): Promise<StatusWriteResult> {
  if (!deps.canWrite() || write.outcome === "notLeader") return { gone: false, conditions: [] };
  const persisted = await persistStatus(policy, deps, write, start);
  if (persisted === "gone") return { gone: true };
  const { from, written } = persisted;
  const events = [...write.events, ...conditionEvents(from?.conditions, written)];
  await recordEvents(policy, deps, events);
  return { gone: false, conditions: written };
}

/**
 * The status loop of {@link writeStatus}: the next status from the one the pass started from,
 * written when it needs writing, and remembered; on 409 the policy is read again and the pass's
 * patch applied over it. Returns the status it was applied over (`from`) and its conditions, or
 * "gone" (its memory forgotten) when the API server answers 404 for the policy.
 * @throws the Kubernetes error of the status write (after at most 4 attempts on 409), other than 404
 */
async function persistStatus(
  policy: CapacityPolicy,
  deps: StatusWriteDeps,
  write: PassWrite,
  start: StartingStatus,
): Promise<{ from: Status | undefined; written: PolicyCondition[] } | "gone"> {
  const { namespace, name } = policy.metadata;
  const key = objectKey(policy);
  const nowMs = deps.now();
  const refreshMs = deps.statusRefreshMs ?? DEFAULT_STATUS_REFRESH_MS;
  const nowIso = new Date(nowMs).toISOString();
  let base = policy;
  let from = start.status;
  for (let attempt = 1; ; attempt++) {
    const { next, written } = nextStatus(write, from, nowIso, policy.metadata.generation);
    const need = needsStatusWrite(base.status, next, nowMs, {
      refreshIntervalMs: refreshMs,
      lastWrittenMs: start.lastWrittenMs,
      phaseMs: refreshPhase(key, refreshMs),
    });
    if (!need.write) {
      deps.statusMemory?.remember(key, base.status, next, start.lastWrittenMs, [
        base.metadata.resourceVersion,
      ]);
      deps.countStatusWrite?.("skipped");
      return { from, written };
    }
    try {
      // Objects replace the stored ones whole: a key the pass no longer sets is removed.
      const stored = await deps.policies.patchStatus(
        namespace,
        name,
        patchTo(base.status, next),
        base.metadata.resourceVersion,
      );
      deps.statusMemory?.remember(key, stored.status, next, nowMs, [
        base.metadata.resourceVersion,
        stored.metadata.resourceVersion,
      ]);
      deps.countStatusWrite?.("written");
      deps.log.debug({ namespace, policy: name, changed: need.reason }, "status written");
      return { from, written };
    } catch (err) {
      const retry = err instanceof KubeConflictError && attempt < MAX_STATUS_ATTEMPTS && deps.canWrite();
      if (!retry) deps.statusMemory?.forget(key);
      if (err instanceof NotFoundError) return "gone";
      if (!retry) throw err;
      try {
        base = await deps.policies.get(namespace, name);
      } catch (readErr) {
        deps.statusMemory?.forget(key);
        if (readErr instanceof NotFoundError) return "gone";
        throw readErr;
      }
      from = base.status;
    }
  }
}

/**
 * The status a pass leaves over `from`: its patch merged, and its condition drafts (else the
 * conditions of `from`) with `Ready` derived, stamped against those of `from` at `nowIso` —
 * as it reads back from the API server.
 */
function nextStatus(
  write: PassWrite,
  from: Status | undefined,
  nowIso: string,
  generation: number | undefined,
): { next: Status; written: PolicyCondition[] } {
  const previousConditions = from?.conditions;
  const drafts = write.drafts.length > 0 ? write.drafts : (previousConditions ?? []).map((c) => ({ ...c }));
  const written = stampConditions(
    withReady(drafts, write.blocker, write.patch.operation != null),
    previousConditions,
    nowIso,
    generation,
  );
  return { next: asStored({ ...mergeStatus(from ?? {}, write.patch), conditions: written }), written };
}

/**
 * The Events of condition changes: a Warning when a condition turns bad (Ready or
 * MetricsAvailable False, Fallback or Conflict True), a Normal one for other changes of a
 * condition that was already set.
 */
function conditionEvents(
  before: readonly PolicyCondition[] | undefined,
  written: PolicyCondition[],
): EventDraft[] {
  const events: EventDraft[] = [];
  for (const c of changedConditions(before, written)) {
    const warn =
      (c.condition.type === "Ready" && c.condition.status === "False") ||
      (c.condition.type === "MetricsAvailable" && c.condition.status === "False") ||
      (c.condition.type === "Fallback" && c.condition.status === "True") ||
      (c.condition.type === "Conflict" && c.condition.status === "True");
    if (c.before === undefined && !warn) continue;
    events.push({
      type: warn ? "Warning" : "Normal",
      reason: c.condition.reason,
      message: `${c.condition.type}=${c.condition.status}: ${c.condition.message}`,
    });
  }
  return events;
}

/** Records `events` on the policy, secrets scrubbed, while the leader's fence holds; a failure is logged. */
async function recordEvents(
  policy: CapacityPolicy,
  deps: StatusWriteDeps,
  events: EventDraft[],
): Promise<void> {
  const { namespace, name } = policy.metadata;
  const subject = policySubject(policy);
  const now = new Date(deps.now());
  for (const e of events) {
    // Events are writes too: none once the leader's fence has closed.
    if (!deps.canWrite()) break;
    try {
      await deps.events.record(subject, { ...e, message: scrubSecrets(e.message) }, now);
    } catch (err) {
      deps.log.warn({ namespace, policy: name, err: String(err) }, "could not record an Event");
    }
  }
}
