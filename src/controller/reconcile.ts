/**
 * One reconcile pass of one CapacityPolicy: read → plan → act → write.
 *
 * - read: validate the spec, check the target (tenancy), take this cycle's instance state,
 *   metrics and demand history (batched by the poll cycle), read the app-server Deployment / HPA;
 * - plan: `planPass` (src/autoscale/pass.ts) decides and observes the ARM update in flight;
 * - act: send the planned ARM update, apply the Deployment's replicas or the HPA's
 *   minReplicas;
 * - write: `completePass` turns what happened into one status merge patch, condition drafts and
 *   Events; the status is written once when it needs writing (`status-need.ts`: a relied-upon
 *   field changed, or the refresh interval passed), then the Events are recorded. The pass reads
 *   its history from the status the last pass computed (`status-memory.ts`), written or not.
 *
 * Safety:
 * - the spec is never written;
 * - no second ARM update while one runs (the planner's rule; the update in flight is kept in
 *   `status.operation` and survives restarts);
 * - writes (Azure and Kubernetes) happen only while `canWrite()` holds (the leader's fence) and
 *   stop when the leadership term's signal aborts;
 * - a 409 on the status write is retried with a fresh read of the policy, without repeating any
 *   Azure call;
 * - another owner of the capacity (a native Azure autoscale setting, an HPA that owns the
 *   Deployment, someone else changing its replicas, an older policy naming the same instance,
 *   Deployment or HPA) is reported as `Conflict`, not fought.
 */

import { type CapacityPolicy, type PolicyCondition, type RefusalCause, validateSpec } from "../api/index.js";
import {
  type AppServerView,
  completePass,
  conflictedPass,
  type Decision,
  type PassFailure,
  type PassInput,
  type PassOutcome,
  type PassPlan,
  type PassResults,
  type PassWrite,
  type PlannedUpdate,
  planPass,
  type Refusal,
  refusedPass,
  storedRefusal,
  type UpdateResult,
} from "../autoscale/index.js";
import { isAzureApiError, isDurableRefusal, RefusedError, ThrottledError } from "../azure/index.js";
import type { AzureInstances } from "../azure/instances.js";
import type { EventRecorder } from "../kube/events.js";
import type { PolicyClient } from "../kube/policies.js";
import { objectKey } from "../kube/watch.js";
import type { WorkloadClient } from "../kube/workloads.js";
import type { DisconnectionModel } from "../traffic/disconnections.js";
import { applyAppServer, readAppServer } from "./app-servers.js";
import type { CycleReading } from "./fetch.js";
import { type Logger, scrubSecrets } from "./logging.js";
import type { OperatorMetrics } from "./metrics.js";
import { duplicateConflict } from "./ownership.js";
import { geoReplicasStatus, groupObservation } from "./replica-groups.js";
import type { SpecCache } from "./spec-cache.js";
import type { StatusMemory } from "./status-memory.js";
import { writeStatus } from "./status-write.js";
import { checkTarget, type TenancyMap } from "./tenancy.js";

/** What a pass uses; built once by the operator. */
export interface PassDeps {
  policies: PolicyClient;
  workloads: WorkloadClient;
  events: EventRecorder;
  instances: AzureInstances;
  log: Logger;
  metrics: OperatorMetrics;
  now: () => number;
  tenancy?: TenancyMap | undefined;
  /** The leader's fence: false → no write of any kind. */
  canWrite: () => boolean;
  /** Aborts when the leadership term ends. */
  signal: AbortSignal;
  /** Carries each policy's status between passes; without it every pass starts from the stored one. */
  statusMemory?: StatusMemory;
  /** A status whose relied-upon fields did not change is written at most this often, ms (default 5 min). */
  statusRefreshMs?: number;
  /** Keeps each policy's validated spec per generation; without it every pass validates. */
  specs?: SpecCache;
  /** Which clients a unit change disconnects on the instances (decide.ts `DecisionInput.disconnection`). */
  disconnection?: DisconnectionModel | undefined;
}

/** How a pass ended. */
export interface PassResult {
  /** When to run the next pass of this policy, ms from now. */
  requeueAfterMs: number;
  /** What the pass did, for logs and tests; "deleted" when the policy was deleted while it ran. */
  outcome: PassOutcome | "deleted";
  decision?: Decision;
}

const INVALID_REQUEUE_MS = 300_000;

/** Runs one pass. Throws only for Kubernetes failures of the status write (the caller retries with backoff). */
export async function reconcile(
  policy: CapacityPolicy,
  reading: CycleReading | undefined,
  deps: PassDeps,
): Promise<PassResult> {
  const start = deps.statusMemory?.start(
    objectKey(policy),
    policy.status,
    policy.metadata.resourceVersion,
  ) ?? { status: policy.status };
  const read = start.status === policy.status ? policy : { ...policy, status: start.status ?? {} };
  const write = await runPass(read, reading, deps);
  const written = await writeStatus(
    policy,
    { ...deps, countStatusWrite: (result) => deps.metrics.statusWrites.inc({ result }) },
    write,
    start,
  );
  // Deleted while the pass ran: its metrics were forgotten with it and stay so.
  if (written.gone) return { requeueAfterMs: write.requeueAfterMs, outcome: "deleted" };
  observe(policy, write, written.conditions, deps);
  return {
    requeueAfterMs: write.requeueAfterMs,
    outcome: write.outcome,
    ...(write.decision ? { decision: write.decision } : {}),
  };
}

/** Read, plan and act; returns what to write. */
async function runPass(
  policy: CapacityPolicy,
  reading: CycleReading | undefined,
  deps: PassDeps,
): Promise<PassWrite> {
  const admitted = admit(policy, reading, deps);
  if ("refused" in admitted) return admitted.refused;
  const { spec } = admitted;
  const failure = readFailure(reading);
  logReadProblems(policy, reading, failure, deps);
  const appServer = spec.appServer ? await readAppServer(policy, spec.appServer, deps) : undefined;
  const { namespace, name } = policy.metadata;
  deps.metrics.observeFieldConflict(namespace, name, appServer?.fieldConflict);
  const input = passInput(policy, spec, reading, failure, appServer, deps.now());
  const plan = planPass(deps.disconnection ? { ...input, disconnection: deps.disconnection } : input);
  return completePass(plan, await act(plan, policy, deps));
}

/**
 * The policy's spec, validated and defaulted, when the pass may go on; else the write of a pass
 * refused before reading: an invalid spec, a target outside the tenancy (or invalid there), or a
 * duplicate of an older policy naming the same instance, Deployment or HPA (`ownership.ts`: the
 * cycle did not read Azure for it; nothing is sent anywhere).
 */
function admit(
  policy: CapacityPolicy,
  reading: CycleReading | undefined,
  deps: PassDeps,
): { spec: CapacityPolicy["spec"] } | { refused: PassWrite } {
  const generation = policy.metadata.generation;
  const validation = deps.specs ? deps.specs.validate(policy) : validateSpec(policy);
  if (!validation.ok) {
    const message = validation.errors.join("; ");
    return {
      refused: refusedPass(generation, { reason: "InvalidSpec", message }, "invalid", INVALID_REQUEUE_MS),
    };
  }
  const { spec } = validation;
  const target =
    reading?.target ?? checkTarget(deps.tenancy, policy.metadata.namespace, spec.target.resourceId);
  if (target.ok && reading?.duplicate) {
    const conflict = duplicateConflict(reading.duplicate);
    return { refused: conflictedPass(generation, conflict, spec.pollIntervalSeconds * 1000) };
  }
  if (target.ok) return { spec };
  const invalid = target.reason === "InvalidSpec";
  return {
    refused: refusedPass(
      generation,
      { reason: target.reason, message: target.message },
      invalid ? "invalid" : "outOfScope",
      invalid ? INVALID_REQUEUE_MS : spec.pollIntervalSeconds * 1000,
    ),
  };
}

/**
 * This pass's Azure read failure: the instance's, else the metrics' (secrets scrubbed from its
 * message); `NoData` when the cycle has no reading for the policy; none when both were read.
 */
function readFailure(reading: CycleReading | undefined): PassFailure | undefined {
  const error = reading?.instanceError ?? reading?.metricsError;
  if (error) {
    return {
      kind: error.kind,
      message: scrubSecrets(error.message),
      ...(error.read ? { read: error.read } : {}),
      ...(error.notBefore ? { notBefore: error.notBefore } : {}),
    };
  }
  return reading ? undefined : { kind: "NoData", message: "no reading for this pass" };
}

/** Logs the Azure read failure of the pass, else each metrics query that failed while others answered. */
function logReadProblems(
  policy: CapacityPolicy,
  reading: CycleReading | undefined,
  failure: PassFailure | undefined,
  deps: PassDeps,
): void {
  const { namespace, name } = policy.metadata;
  const error = reading?.instanceError ?? reading?.metricsError;
  if (error && failure) {
    const fields = { namespace, policy: name, failure: failure.kind, err: failure.message };
    deps.log.warn(fields, "Azure read failed");
  }
  for (const p of error ? [] : (reading?.metricsPartial ?? [])) {
    const fields = { namespace, policy: name, failure: p.kind, unknown: p.fields.join(",") };
    deps.log.warn({ ...fields, err: scrubSecrets(p.message) }, "Azure Monitor answered in part");
  }
}

/**
 * What the planner reads for this pass: the policy with its validated spec, the status, the
 * cycle's reading (demand history and leading signal only while anticipation is on), the app
 * servers, a native Azure autoscale setting as a `Conflict`, and `now` (ms since the epoch).
 */
function passInput(
  policy: CapacityPolicy,
  spec: CapacityPolicy["spec"],
  reading: CycleReading | undefined,
  failure: PassFailure | undefined,
  appServer: AppServerView | undefined,
  now: number,
): PassInput {
  const native = reading?.nativeSettings ?? [];
  const anticipating = spec.anticipation !== undefined && spec.anticipation.mode !== "Off";
  return {
    policy: { metadata: policy.metadata, spec },
    status: policy.status ?? {},
    ...(reading?.instance ? { instance: reading.instance } : {}),
    ...(failure ? { failure } : {}),
    samples: reading?.samples ?? [],
    ...(reading?.metricsPartial && !failure
      ? {
          partialFailures: reading.metricsPartial.map((p) => ({ ...p, message: scrubSecrets(p.message) })),
        }
      : {}),
    ...(appServer ? { appServer } : {}),
    ...(reading?.demandHistory && anticipating && spec.anticipation?.seasonal
      ? { demandHistory: reading.demandHistory }
      : {}),
    ...(reading?.leading && anticipating && spec.anticipation?.leadingSignal
      ? { leading: reading.leading }
      : {}),
    ...(reading?.ladder ? { ladder: reading.ladder } : {}),
    ...groupInputs(spec.target.resourceId, reading),
    ...(native.length > 0
      ? {
          conflict: {
            reason: "NativeAutoscale",
            message: `Azure autoscale setting ${native.map((s) => s.name).join(", ")} manages this instance; remove it or set mode Recommend`,
          },
        }
      : {}),
    now,
  };
}

/**
 * The geo-replica group of the pass (`replica-groups.ts`): the failover rule's view of it and
 * `status.geoReplicas`; nothing when the instance has no replicas.
 */
function groupInputs(
  resourceId: string,
  reading: CycleReading | undefined,
): Pick<PassInput, "replicaGroup" | "geoReplicas"> {
  const group = reading?.replicaGroup;
  const observation = groupObservation(resourceId, group);
  const geoReplicas = geoReplicasStatus(resourceId, group);
  return {
    ...(observation ? { replicaGroup: observation } : {}),
    ...(geoReplicas ? { geoReplicas } : {}),
  };
}

/** Sends the planned ARM update and app-server change, while this replica may write. */
async function act(plan: PassPlan, policy: CapacityPolicy, deps: PassDeps): Promise<PassResults> {
  if (!plan.update && !plan.appServer) return {};
  if (!deps.canWrite()) return { notLeader: true };
  const results: PassResults = {};
  if (plan.update) {
    results.update = await sendUpdate(policy.spec.target.resourceId, plan.update, deps);
  }
  if (plan.appServer && deps.canWrite()) {
    results.appServer = await applyAppServer(policy, plan.appServer, deps);
  }
  return results;
}

/**
 * Sends the update and says what ARM made of it, by the kind of its error (azure/errors.ts): an
 * operation in progress → busy (wait, don't stack); a throttle → throttled until its end; a
 * durable refusal (`isDurableRefusal`: a quota, an Azure Policy deny, a resource lock, an invalid
 * request, a missing role, a missing instance) → refused, backed off as an update that did not
 * take; anything else (5xx, a timeout, a reset, a target the adapter refuses) → failed, sent again
 * on a later pass.
 */
async function sendUpdate(resourceId: string, update: PlannedUpdate, deps: PassDeps): Promise<UpdateResult> {
  try {
    const op = await deps.instances.beginScale(resourceId, update.to, { signal: deps.signal });
    return {
      kind: "accepted",
      startedAt: op.startedAt.toISOString(),
      ...(op.operationUrl ? { operationUrl: op.operationUrl } : {}),
    };
  } catch (err) {
    if (!isAzureApiError(err) && !(err instanceof RangeError)) throw err;
    const message = scrubSecrets(err instanceof Error ? err.message : String(err));
    if (!isAzureApiError(err)) return { kind: "failed", message };
    if (err.kind === "Conflict") return { kind: "busy", message };
    if (err instanceof ThrottledError) {
      return { kind: "throttled", message, notBefore: err.notBefore.toISOString(), sent: !err.fromGate };
    }
    if (isDurableRefusal(err)) {
      const refusal: Refusal = {
        by: err instanceof RefusedError ? err.refusedBy : (REFUSAL_OF_KIND[err.kind] ?? "Invalid"),
        ...(err.code !== undefined ? { code: err.code } : {}),
        message,
      };
      return { kind: "refused", message, refusal };
    }
    return { kind: "failed", message };
  }
}

/** The refusal cause of each durable error kind that names no quota, policy or lock. */
const REFUSAL_OF_KIND: Readonly<Partial<Record<string, RefusalCause>>> = {
  Invalid: "Invalid",
  Unauthorized: "Unauthorized",
  NotFound: "NotFound",
};

/** The pass in `/metrics` and the debug log; `conditions` are those written to status. */
function observe(
  policy: CapacityPolicy,
  write: PassWrite,
  conditions: readonly PolicyCondition[],
  deps: PassDeps,
): void {
  const { namespace, name } = policy.metadata;
  const labels = { namespace, policy: name };
  for (const c of write.counts) deps.metrics.scaleOperations.inc({ ...labels, ...c });
  if (write.disconnects) deps.metrics.clientsDisconnected.inc(labels, write.disconnects);
  const unapplied = write.patch.unappliedUpdates;
  if (unapplied !== undefined) {
    deps.metrics.observeRefusal(namespace, name, storedRefusal(unapplied ?? undefined)?.by);
  }
  if (write.patch.operation !== undefined) deps.metrics.observeUpdateAge(namespace, name, write.updateAge);
  const spec = policy.spec as Partial<CapacityPolicy["spec"]> | undefined;
  deps.metrics.observePolicy(namespace, name, {
    minUnits: spec?.units?.min,
    maxUnits: spec?.units?.max,
    pollIntervalSeconds: spec?.pollIntervalSeconds,
    targetPercent: {
      serverLoadPercent: spec?.metrics?.serverLoad?.targetPercent,
      connectionQuotaUtilizationPercent: spec?.metrics?.connections?.targetPercent,
    },
    currentSku: write.patch.current?.sku,
    desiredSku: write.decision?.desired?.sku,
    ...(conditions.length > 0 ? { conditions } : {}),
  });
  const decision = write.decision;
  if (!decision) return;
  for (const r of decision.reasons) deps.metrics.decisions.inc({ ...labels, reason: r.code });
  const current = write.patch.current;
  if (current) deps.metrics.currentUnits.set(labels, current.units);
  const desired = decision.desired;
  if (desired) deps.metrics.desiredUnits.set(labels, desired.units);
  if (write.replicas !== undefined) deps.metrics.currentReplicas.set(labels, write.replicas);
  const desiredReplicas = desired?.hpaMinReplicas ?? desired?.replicas;
  if (desiredReplicas !== undefined) deps.metrics.desiredReplicas.set(labels, desiredReplicas);
  if (decision.lastSample)
    deps.metrics.observeSample(namespace, name, decision.lastSample.time, decision.lastSample);
  deps.log.debug(
    { ...labels, action: decision.action, desired, limitedBy: decision.limitedBy, outcome: write.outcome },
    "pass done",
  );
}
