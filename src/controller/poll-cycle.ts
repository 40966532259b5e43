/**
 * One poll cycle: the policies due at a tick read from Azure together (`fetch.ts`: instances by
 * subscription, metrics in getBatch groups of ≤ 50) under the poll cycle deadline, their leading
 * signals from Prometheus beside it (`leading.ts`), and each policy handed on once, as soon as its
 * own reading is complete.
 *
 * - Refused targets are handed on at once with a reading that says why, and Azure is not read for
 *   them: a malformed resource ID (InvalidSpec), one outside its namespace's tenancy scopes
 *   (OutOfScope), or a duplicate of an older policy naming the same target (`ownership.ts`).
 *   Policies without a SignalR or Web PubSub target are handed on without a reading, last.
 * - Deadline: at `timeoutMs` the cycle's calls are aborted (transient failures of their policies)
 *   and, should the read still not end within {@link DEADLINE_GRACE_MS}, its remaining policies are
 *   handed on as failed reads.
 * - How Azure answered goes to `hooks.azure` (the replica's readiness).
 */
import type { CapacityPolicy } from "../api/index.js";
import type { LeadingObservation } from "../autoscale/leading.js";
import type { ServiceKind } from "../capacity/skus.js";
import { objectKey } from "../kube/watch.js";
import type { CycleWatch } from "./cycle-watch.js";
import {
  type CycleFetcher,
  type CycleReading,
  type CycleTarget,
  metricsReadTimes,
  seasonalHistory,
} from "./fetch.js";
import type { LeadingReader } from "./leading.js";
import type { Logger } from "./logging.js";
import type { OperatorMetrics } from "./metrics.js";
import type { Duplicate } from "./ownership.js";
import { checkTarget, type TenancyMap } from "./tenancy.js";

/** How long a poll cycle's read may take to come back after its deadline aborted its calls, ms. */
export const DEADLINE_GRACE_MS = 1000;

/** What a cycle reads Azure with (the operator's {@link CycleFetcher}). */
export type CycleReader = Pick<CycleFetcher, "read" | "forget">;

/** What a cycle reads leading signals with (the operator's {@link LeadingReader}). */
export type LeadingSource = Pick<LeadingReader, "readOne" | "forget">;

/** What a poll cycle uses; the same for every cycle. */
export interface PollCycleDeps {
  reader: CycleReader;
  leading: LeadingSource;
  tenancy: TenancyMap | undefined;
  /** The older policy owning a target `key` names, if any (`ClaimIndex.duplicateOf`). */
  duplicateOf: (key: string) => Duplicate | undefined;
  /**
   * namespace/name of the policy owning an Azure instance or replica (`ClaimIndex.instanceOwner`):
   * each member of a reading's replica group is told its policy. Default: none known.
   */
  instanceOwner?: (resourceId: string) => string | undefined;
  /** The deadline of a cycle's Azure read, real ms. */
  timeoutMs: number;
  cycleWatch: CycleWatch;
  metrics: Pick<OperatorMetrics, "pollCycleTimeouts">;
  log: Logger;
}

/** How Azure answered a cycle: read (at the cycle's time, ms since the epoch), or failed. */
export type AzureAnswer = { ok: true; at: number } | { ok: false; error: string | undefined };

/** What the cycle tells its loop. */
export interface PollCycleHooks {
  /**
   * `policy` is ready for its pass, once per policy of the cycle: its `reading` (undefined: Azure
   * is not read for it, or did not answer for it) and its leading signal's read, if it has one.
   */
  hand(
    policy: CapacityPolicy,
    reading: CycleReading | undefined,
    leading: Promise<LeadingObservation> | undefined,
  ): void;
  /** The cycle handed its first policy whose instance Azure was read for, or ended. */
  started(): void;
  azure(answer: AzureAnswer): void;
}

/**
 * What a policy's status knows of its instance's unit ladders, for the cycle (fetch.ts): when
 * `listSkus` last answered, and when an update was last found not applied (ms since the epoch).
 */
function ladderKnown(policy: CapacityPolicy): CycleTarget["ladder"] {
  const stored = policy.status?.unitLadders;
  const unapplied = policy.status?.unappliedUpdates;
  const readAtMs = stored?.readAt ? Date.parse(stored.readAt) : Number.NaN;
  const notApplied = [
    ...(stored?.excluded ?? []).map((e) => e.time),
    ...(unapplied?.lastOutcome === undefined || unapplied.lastOutcome === "NotApplied"
      ? [unapplied?.lastTime]
      : []),
  ];
  const wanted = Math.max(...notApplied.map((t) => (t ? Date.parse(t) : Number.NaN)).filter(Number.isFinite));
  if (!Number.isFinite(readAtMs) && !Number.isFinite(wanted)) return undefined;
  return {
    ...(Number.isFinite(readAtMs) ? { readAtMs } : {}),
    ...(Number.isFinite(wanted) ? { wantedAfterMs: wanted } : {}),
  };
}

/**
 * `promise`'s value, or `"overdue"` when it has not settled `graceMs` after `deadline` fired.
 * @throws what `promise` rejects with (before it is overdue).
 */
async function settleByDeadline<T>(
  promise: Promise<T>,
  deadline: AbortSignal,
  graceMs: number,
): Promise<T | "overdue"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const overdue = new Promise<"overdue">((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve("overdue"), graceMs);
    };
    if (deadline.aborted) onAbort();
    else deadline.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, overdue]);
  } finally {
    clearTimeout(timer);
    if (onAbort) deadline.removeEventListener("abort", onAbort);
  }
}

/**
 * What a poll cycle reads for `due`: a target per policy whose instance Azure is asked about, and
 * a reading for each policy whose target the pass refuses anyway (see the module comment).
 * Policies without a SignalR or Web PubSub target are in neither.
 */
export function cycleTargets(
  due: readonly CapacityPolicy[],
  tenancy: TenancyMap | undefined,
  now: number,
  duplicateOf: (key: string) => Duplicate | undefined,
): { targets: CycleTarget[]; refused: Map<string, CycleReading> } {
  const targets: CycleTarget[] = [];
  const refused = new Map<string, CycleReading>();
  for (const p of due) {
    const target = p.spec?.target;
    if (!target?.resourceId || (target.service !== "SignalR" && target.service !== "WebPubSub")) continue;
    const check = checkTarget(tenancy, p.metadata.namespace, target.resourceId);
    if (!check.ok) {
      refused.set(objectKey(p), { fetchedAt: now, target: check });
      continue;
    }
    const duplicate = duplicateOf(objectKey(p));
    if (duplicate) {
      refused.set(objectKey(p), { fetchedAt: now, target: check, duplicate });
      continue;
    }
    const seasonal = seasonalHistory(p);
    const ladder = ladderKnown(p);
    targets.push({
      key: objectKey(p),
      resourceId: target.resourceId,
      ref: check.ref,
      service: target.service as ServiceKind,
      lookbackMs: metricsReadTimes(p).lookbackMs,
      ...(seasonal ? { seasonal } : {}),
      ...(ladder ? { ladder } : {}),
    });
  }
  return { targets, refused };
}

/**
 * Starts the leading-signal reads of `due` (Prometheus, each within its own timeout) while Azure
 * is read; a policy's pass waits for its own read only, so a slow or hanging Prometheus holds
 * neither the cycle nor any other policy's pass. Policies without one (or refused) forget theirs.
 */
function startLeadingReads(
  due: readonly CapacityPolicy[],
  refused: ReadonlyMap<string, CycleReading>,
  reader: LeadingSource,
): Map<string, Promise<LeadingObservation>> {
  const leading = new Map<string, Promise<LeadingObservation>>();
  for (const p of due) {
    const a = p.spec?.anticipation;
    const k = objectKey(p);
    if (!a?.leadingSignal?.prometheus || a.mode === "Off" || refused.has(k)) {
      reader.forget(k);
      continue;
    }
    leading.set(k, reader.readOne({ key: k, namespace: p.metadata.namespace, spec: a.leadingSignal }));
  }
  return leading;
}

/**
 * The cycle's readings once `read` settles or its deadline (plus grace) passes, telling
 * `hooks.azure` how Azure answered and counting a deadline that fired. Never throws.
 */
async function settleRead(
  read: Promise<Map<string, CycleReading>>,
  deadline: AbortSignal,
  now: number,
  deps: PollCycleDeps,
  hooks: PollCycleHooks,
  unhanded: () => number,
): Promise<{ readings: Map<string, CycleReading>; overdue: boolean }> {
  let readings = new Map<string, CycleReading>();
  let overdue = false;
  try {
    const result = await settleByDeadline(read, deadline, DEADLINE_GRACE_MS);
    if (result === "overdue") {
      overdue = true;
      read.catch(() => {});
    } else readings = result;
    if (deadline.aborted) deps.metrics.pollCycleTimeouts.inc();
    const failures = [...readings.values()].filter((r) => r.instanceError && !r.instance);
    if (overdue) {
      hooks.azure({
        ok: false,
        error: `the poll cycle did not end within its deadline of ${deps.timeoutMs / 1000} s`,
      });
      deps.log.warn({ policies: unhanded() }, "poll cycle deadline passed");
    } else if (failures.length > 0 && failures.length === readings.size) {
      hooks.azure({ ok: false, error: failures[0]?.instanceError?.message });
    } else {
      hooks.azure({ ok: true, at: now });
    }
  } catch (err) {
    // A malformed resource ID is caught by validation in the pass; anything else is logged.
    deps.log.warn({ err: String(err) }, "poll cycle failed");
    hooks.azure({ ok: false, error: String(err) });
  }
  return { readings, overdue };
}

/** The reading of a target Azure did not answer for within the poll cycle's deadline. */
function overdueReading(t: CycleTarget, now: number, timeoutMs: number): CycleReading {
  return {
    fetchedAt: now,
    target: { ok: true, ref: t.ref },
    instanceError: {
      kind: "Network",
      message: `Azure did not answer within the poll cycle deadline (${timeoutMs / 1000} s)`,
      cause: undefined,
    },
  };
}

/**
 * Runs one poll cycle for `due` at `now` (ms since the epoch) under `term` (the leadership term):
 * every policy of `due` is handed to `hooks.hand` exactly once. Never throws.
 */
export async function runPollCycle(
  due: readonly CapacityPolicy[],
  now: number,
  term: AbortSignal,
  deps: PollCycleDeps,
  hooks: PollCycleHooks,
): Promise<void> {
  const byKey = new Map(due.map((p) => [objectKey(p), p]));
  const { targets, refused } = cycleTargets(due, deps.tenancy, now, deps.duplicateOf);
  const leading = startLeadingReads(due, refused, deps.leading);
  const handed = new Set<string>();
  const hand = (k: string, reading: CycleReading | undefined) => {
    const p = byKey.get(k);
    if (!p || handed.has(k)) return;
    handed.add(k);
    for (const [id, m] of reading?.replicaGroup?.members ?? []) {
      const policy = deps.instanceOwner?.(id);
      if (policy) m.policy = policy;
    }
    if (!refused.has(k)) hooks.started();
    hooks.hand(p, reading, leading.get(k));
  };
  for (const [k, reading] of refused) hand(k, reading);
  try {
    const deadline = AbortSignal.timeout(deps.timeoutMs);
    const watchId = deps.cycleWatch.begin();
    const read = deps.reader.read(targets, term, { deadline, onReady: hand });
    void read.then(
      () => deps.cycleWatch.end(watchId),
      () => deps.cycleWatch.end(watchId),
    );
    const { readings, overdue } = await settleRead(
      read,
      deadline,
      now,
      deps,
      hooks,
      () => targets.length - handed.size,
    );
    for (const t of targets) {
      hand(t.key, readings.get(t.key) ?? (overdue ? overdueReading(t, now, deps.timeoutMs) : undefined));
    }
    for (const p of due) hand(objectKey(p), undefined);
  } finally {
    hooks.started();
  }
}
