/**
 * The one status write of a pass: conditions stamped against the policy's current status and
 * `Ready` derived; on 409 the policy is read again and only the stamps are rebuilt — no Azure
 * call is repeated. Events (the pass's own and those of condition changes) follow a successful
 * write, while the leader's fence holds.
 */
import type { CapacityPolicy, PolicyCondition, StatusPatch } from "../api/index.js";
import type { PassWrite } from "../autoscale/index.js";
import { ConflictError as KubeConflictError } from "../kube/errors.js";
import { type EventRecorder, policySubject } from "../kube/events.js";
import type { PolicyClient } from "../kube/policies.js";
import { type Logger, scrubSecrets } from "./logging.js";
import { changedConditions, replacingPatch, stampConditions, withReady } from "./status.js";

const MAX_STATUS_ATTEMPTS = 4;

/** What the status write uses. */
export interface StatusWriteDeps {
  policies: PolicyClient;
  events: EventRecorder;
  log: Logger;
  now: () => number;
  /** The leader's fence: false → no write of any kind. */
  canWrite: () => boolean;
}

/**
 * Writes status once: conditions stamped against the policy's current status, Ready derived.
 * On 409 it reads the policy again and rebuilds only the stamps — no Azure call is repeated.
 * Events (the pass's own and those of condition changes) follow a successful write.
 * Returns the conditions written (none when this replica may not write).
 */
export async function writeStatus(
  policy: CapacityPolicy,
  deps: StatusWriteDeps,
  write: PassWrite,
): Promise<PolicyCondition[]> {
  if (!deps.canWrite() || write.outcome === "notLeader") return [];
  const { namespace, name } = policy.metadata;
  const nowIso = new Date(deps.now()).toISOString();
  let base = policy;
  let written: PolicyCondition[] = [];
  for (let attempt = 1; ; attempt++) {
    const previousConditions = base.status?.conditions;
    const drafts = write.drafts.length > 0 ? write.drafts : (previousConditions ?? []).map((c) => ({ ...c }));
    written = stampConditions(
      withReady(drafts, write.blocker, write.patch.operation != null),
      previousConditions,
      nowIso,
      policy.metadata.generation,
    );
    try {
      // Objects replace the stored ones whole: a key the pass no longer sets is removed.
      const patch = replacingPatch(base.status as Record<string, unknown> | undefined, {
        ...write.patch,
        conditions: written,
      }) as StatusPatch;
      await deps.policies.patchStatus(namespace, name, patch, base.metadata.resourceVersion);
      break;
    } catch (err) {
      if (!(err instanceof KubeConflictError) || attempt >= MAX_STATUS_ATTEMPTS || !deps.canWrite())
        throw err;
      base = await deps.policies.get(namespace, name);
    }
  }
  const events = [...write.events];
  for (const c of changedConditions(base.status?.conditions, written)) {
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
  return written;
}
