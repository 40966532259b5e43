/**
 * One reconcile pass of one CapacityPolicy:
 *
 * read the policy (from the watch) → validate → check tenancy → take this cycle's instance state
 * and metrics (batched by the poll cycle) → observe an ARM update in flight → read the app-server
 * Deployment / HPA → decide (src/autoscale) → act (start the ARM update; patch the Deployment's
 * scale subresource or the HPA's minReplicas) → write status once, as a merge patch → Events for
 * scale actions and condition changes.
 *
 * Safety:
 * - the spec is never written;
 * - no second ARM update while one runs: an update in flight is kept in `status.operation` and an
 *   instance whose `provisioningState` is not terminal is never updated;
 * - writes (Azure and Kubernetes) happen only while `canWrite()` holds (the leader's fence) and
 *   stop when the leadership term's signal aborts;
 * - a 409 on the status write is retried with a fresh read of the policy, without repeating any
 *   Azure call;
 * - another owner of the capacity (a native Azure autoscale setting, an HPA that owns the
 *   Deployment, someone else changing its replicas) is reported as `Conflict`, not fought.
 */
import {
  type CapacityPolicy,
  type CapacityPolicyStatus,
  type MetricSample,
  type PolicyCondition,
  validatePolicy,
} from "../api/index.js";
import {
  type Decision,
  type DecisionHistory,
  decide,
  historyFromStatus,
  type PassFailure,
  recordScale,
  statusFields,
} from "../autoscale/index.js";
import { type AzureInstances, isAzureApiError, parseResourceId } from "../azure/index.js";
import type { InstanceState } from "../azure/instances.js";
import type { SkuName } from "../capacity/skus.js";
import { FIELD_MANAGER } from "../kube/client.js";
import { ConflictError as KubeConflictError, type KubeError, toKubeError } from "../kube/errors.js";
import { type EventRecorder, policySubject } from "../kube/events.js";
import type { PolicyClient, StatusPatch } from "../kube/policies.js";
import type { WorkloadClient } from "../kube/workloads.js";
import type { CycleReading } from "./fetch.js";
import { type Logger, scrubSecrets } from "./logging.js";
import type { OperatorMetrics } from "./metrics.js";
import {
  type Blocker,
  boundedReasons,
  type ConditionDraft,
  changedConditions,
  stampConditions,
  withReady,
} from "./status.js";
import { checkTenancy, type TenancyMap } from "./tenancy.js";

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
}

/** How a pass ended. */
export interface PassResult {
  /** When to run the next pass of this policy, ms from now. */
  requeueAfterMs: number;
  /** What the pass did, for logs and tests. */
  outcome:
    | "invalid"
    | "outOfScope"
    | "instanceUnavailable"
    | "inProgress"
    | "scaled"
    | "recommended"
    | "steady"
    | "notLeader";
  decision?: Decision;
}

/** How soon to look again while an ARM update runs, ms. */
const IN_FLIGHT_POLL_MS = 15_000;
const MAX_STATUS_ATTEMPTS = 4;

const keyOf = (p: CapacityPolicy) => `${p.metadata.namespace}/${p.metadata.name}`;

interface ReplicaView {
  replicas?: number;
  hpaMinReplicas?: number;
  conflict?: { reason: string; message: string };
  problem?: string;
}

/** Runs one pass. Throws only for Kubernetes failures of the status write (the caller retries with backoff). */
export async function reconcile(
  policy: CapacityPolicy,
  reading: CycleReading | undefined,
  deps: PassDeps,
): Promise<PassResult> {
  const nowMs = deps.now();
  const nowIso = new Date(nowMs).toISOString();
  const { namespace, name } = policy.metadata;
  const log = deps.log.child({ namespace, policy: name });
  const generation = policy.metadata.generation;
  const previous = (policy.status ?? {}) as Partial<CapacityPolicyStatus>;
  const events: { type: "Normal" | "Warning"; reason: string; message: string }[] = [];
  const observed: StatusPatch = generation !== undefined ? { observedGeneration: generation } : {};

  // 1. Validate.
  const validation = validatePolicy(policy);
  if (!validation.ok) {
    const message = validation.errors.join("; ");
    await writeStatus(policy, deps, observed, [], { reason: "InvalidSpec", message }, events);
    return { requeueAfterMs: 300_000, outcome: "invalid" };
  }
  const spec = validation.policy.spec;
  const pollMs = spec.pollIntervalSeconds * 1000;

  // 2. Tenancy.
  const ref = parseResourceId(spec.target.resourceId);
  const scope = checkTenancy(deps.tenancy, namespace, ref);
  if (!scope.allowed) {
    await writeStatus(policy, deps, observed, [], { reason: "OutOfScope", message: scope.message }, events);
    return { requeueAfterMs: pollMs, outcome: "outOfScope" };
  }

  // 3. Instance state from this cycle.
  let history: DecisionHistory = historyFromStatus(previous);
  const instance = reading?.instance;
  const failure: PassFailure | undefined = reading?.instanceError
    ? { kind: reading.instanceError.kind, message: scrubSecrets(reading.instanceError.message) }
    : reading?.metricsError
      ? { kind: reading.metricsError.kind, message: scrubSecrets(reading.metricsError.message) }
      : reading
        ? undefined
        : { kind: "NoData", message: "no reading for this pass" };
  if (failure && reading) log.warn({ failure: failure.kind, err: failure.message }, "Azure read failed");
  const currentSku = (instance?.sku ?? previous.current?.sku) as SkuName | undefined;
  const currentUnits = instance?.units ?? previous.current?.units;
  if (currentSku === undefined || currentUnits === undefined) {
    const message = failure ? `${failure.kind}: ${failure.message}` : "instance state unknown";
    await writeStatus(policy, deps, observed, [], { reason: "InstanceUnavailable", message }, events);
    return { requeueAfterMs: pollMs, outcome: "instanceUnavailable" };
  }

  // 4. An ARM update in flight.
  let operation: CapacityPolicyStatus["operation"] | null | undefined = previous.operation;
  let inFlight = instance ? !instance.terminal : operation !== undefined;
  if (instance?.terminal && operation) {
    const to = operation.to;
    const applied =
      instance.provisioningState.toLowerCase() === "succeeded" &&
      instance.sku === to.sku &&
      instance.units === to.units;
    const result = applied
      ? "succeeded"
      : instance.provisioningState.toLowerCase() === "succeeded"
        ? "not_applied"
        : "failed";
    deps.metrics.scaleOperations.inc({ namespace, policy: name, target: "instance", result });
    if (applied) {
      // The capacity changed now, not when the update was sent: the settle window counts from
      // now, and samples measured while the update ran are read at the old unit count.
      history = completedScale(history, operation, nowIso);
      events.push({
        type: "Normal",
        reason: "ScaleSucceeded",
        message: `${instance.sku} × ${instance.units} units in place (started ${operation.startedAt})`,
      });
    } else {
      // The change did not happen: its scale event goes.
      history = {
        ...history,
        scaleEvents: withoutEvent(history.scaleEvents, operationEventIndex(history, operation)),
      };
      events.push({
        type: "Warning",
        reason: result === "not_applied" ? "ScaleNotApplied" : "ScaleFailed",
        message:
          result === "not_applied"
            ? `ARM reported success but the instance has ${instance.sku} × ${instance.units}, not ${to.sku} × ${to.units}`
            : `the update to ${to.sku} × ${to.units} ended ${instance.provisioningState}`,
      });
    }
    operation = null;
    inFlight = false;
  }

  // 5. App servers.
  const replicaView = spec.appServer ? await readReplicas(policy, spec.appServer, previous, deps) : {};
  if (replicaView.problem) log.warn({ problem: replicaView.problem }, "app servers unreadable");

  // 6. Conflicts on the instance.
  const native = reading?.nativeSettings ?? [];
  const instanceConflict =
    native.length > 0
      ? {
          reason: "NativeAutoscale",
          message: `Azure autoscale setting ${native.map((s) => s.name).join(", ")} manages this instance; remove it or set mode Recommend`,
        }
      : undefined;

  // 7. Decide.
  const decision = decide({
    policy: {
      metadata: {
        name,
        namespace,
        ...(generation !== undefined ? { generation } : {}),
        ...(policy.metadata.annotations ? { annotations: policy.metadata.annotations } : {}),
      },
      spec,
    },
    samples: reading?.samples ?? [],
    ...(failure ? { failure } : {}),
    current: {
      sku: currentSku,
      units: currentUnits,
      ...(replicaView.replicas !== undefined ? { replicas: replicaView.replicas } : {}),
      ...(replicaView.hpaMinReplicas !== undefined ? { hpaMinReplicas: replicaView.hpaMinReplicas } : {}),
    },
    history,
    now: nowMs,
    ...(instanceConflict ? { conflict: instanceConflict } : {}),
  });
  history = decision.history;
  for (const r of decision.reasons) deps.metrics.decisions.inc({ namespace, policy: name, reason: r.code });

  // 8. Act.
  let outcome: PassResult["outcome"] = decision.action === "Recommend" ? "recommended" : "steady";
  let ableOverride: ConditionDraft | undefined;
  const desired = decision.desired;
  let appliedReplicas = replicaView.replicas;
  let appliedHpaMin = replicaView.hpaMinReplicas;
  if (decision.action === "Scale" && desired && !deps.canWrite()) {
    outcome = "notLeader";
  } else if (decision.action === "Scale" && desired) {
    const wantsInstance = desired.sku !== currentSku || desired.units !== currentUnits;
    if (wantsInstance && inFlight) {
      ableOverride = {
        type: "AbleToScale",
        status: "False",
        reason: "ScaleInProgress",
        message: "an ARM update is still running; the next one waits for it",
      };
    } else if (wantsInstance && instance) {
      const from = { sku: instance.sku as SkuName, units: instance.units };
      const to = { sku: desired.sku, units: desired.units };
      try {
        const op = await deps.instances.beginScale(spec.target.resourceId, to, { signal: deps.signal });
        operation = {
          startedAt: op.startedAt.toISOString(),
          from,
          to,
          ...(op.operationUrl ? { asyncOperationUrl: op.operationUrl } : {}),
        };
        inFlight = op.acceptedWith !== 200;
        history = recordScale(history, { time: nowIso, from, to });
        deps.metrics.scaleOperations.inc({ namespace, policy: name, target: "instance", result: "started" });
        events.push({
          type: "Normal",
          reason: desired.units >= currentUnits ? "ScalingOut" : "ScalingIn",
          message: `${from.sku} × ${from.units} → ${to.sku} × ${to.units} units (${decision.drivenBy ?? "policy"}${decision.limitedBy ? `, limited by ${decision.limitedBy}` : ""})`,
        });
        outcome = "scaled";
      } catch (err) {
        if (!isAzureApiError(err) && !(err instanceof RangeError)) throw err;
        const message = scrubSecrets(err instanceof Error ? err.message : String(err));
        const busy = isAzureApiError(err) && err.kind === "conflict";
        ableOverride = {
          type: "AbleToScale",
          status: "False",
          reason: busy ? "ScaleInProgress" : "FailedUpdateScale",
          message,
        };
        deps.metrics.scaleOperations.inc({
          namespace,
          policy: name,
          target: "instance",
          result: busy ? "conflict" : "failed",
        });
        events.push({ type: "Warning", reason: busy ? "ScaleDeferred" : "FailedScale", message });
      }
    }
    if (!replicaView.conflict && deps.canWrite() && spec.appServer) {
      const replicaResult = await applyReplicas(policy, spec.appServer, desired, replicaView, deps, events);
      if (replicaResult.replicas !== undefined) appliedReplicas = replicaResult.replicas;
      if (replicaResult.hpaMinReplicas !== undefined) appliedHpaMin = replicaResult.hpaMinReplicas;
      if (replicaResult.changed && outcome === "steady") outcome = "scaled";
    }
  }
  if (inFlight && outcome !== "scaled") outcome = "inProgress";

  // 9. Status, once.
  const fields = statusFields(decision);
  if (fields.lastSample) fields.lastSample = roundedSample(fields.lastSample);
  const shownReplicas = spec.appServer?.horizontalPodAutoscalerName ? appliedHpaMin : appliedReplicas;
  const current: NonNullable<CapacityPolicyStatus["current"]> = { sku: currentSku, units: currentUnits };
  if (shownReplicas !== undefined) current.replicas = shownReplicas;
  const patch: StatusPatch = {
    ...observed,
    current,
    ...fields,
    recommendations: history.recommendations,
    scaleEvents: history.scaleEvents,
    consecutiveFailures: history.consecutiveFailures,
    lastReasons: boundedReasons(decision.reasons.map((r) => r.code)),
    operation: operation ?? null,
  };
  if (history.lastScaleTime !== undefined) patch.lastScaleTime = history.lastScaleTime;
  if (fields.desired && decision.desired?.hpaMinReplicas !== undefined) {
    patch.desired = { ...fields.desired, replicas: decision.desired.hpaMinReplicas };
  }
  let drafts: ConditionDraft[] = decision.conditions.map((c) => ({ ...c }));
  if (ableOverride)
    drafts = drafts.map((d) => (d.type === "AbleToScale" ? (ableOverride as ConditionDraft) : d));
  else if (inFlight) {
    drafts = drafts.map((d) =>
      d.type === "AbleToScale"
        ? {
            type: "AbleToScale",
            status: "False",
            reason: "ScaleInProgress",
            message: "an ARM update is running",
          }
        : d,
    );
  }
  if (replicaView.conflict && !instanceConflict) {
    drafts = drafts.map((d) =>
      d.type === "Conflict"
        ? {
            type: "Conflict",
            status: "True",
            reason: replicaView.conflict?.reason ?? "Conflict",
            message: replicaView.conflict?.message ?? "",
          }
        : d,
    );
  }
  const blocker: Blocker | undefined = decision.desired
    ? undefined
    : {
        reason: "UnsupportedSku",
        message: decision.reasons.find((r) => r.code === "UnsupportedSku")?.message ?? "no decision possible",
      };
  await writeStatus(policy, deps, patch, drafts, blocker, events);

  // 10. Metrics.
  const labels = { namespace, policy: name };
  deps.metrics.currentUnits.set(labels, current.units);
  if (desired) deps.metrics.desiredUnits.set(labels, desired.units);
  if (shownReplicas !== undefined) deps.metrics.currentReplicas.set(labels, shownReplicas);
  const desiredReplicas = desired?.hpaMinReplicas ?? desired?.replicas;
  if (desiredReplicas !== undefined) deps.metrics.desiredReplicas.set(labels, desiredReplicas);
  if (decision.lastSample)
    deps.metrics.observeSample(namespace, name, decision.lastSample.time, decision.lastSample);

  log.debug(
    {
      action: decision.action,
      desired,
      limitedBy: decision.limitedBy,
      outcome,
      newestSample: decision.newestSampleTime,
    },
    "pass done",
  );
  return {
    requeueAfterMs: inFlight ? Math.min(pollMs, IN_FLIGHT_POLL_MS) : pollMs,
    outcome,
    decision,
  };
}

/**
 * `status.lastSample` as people read it (the Load and Connections columns of `kubectl get`):
 * values to one decimal, not the 15 digits of an average.
 */
function roundedSample(sample: MetricSample): MetricSample {
  const out: MetricSample = { ...sample };
  for (const key of Object.keys(out) as (keyof MetricSample)[]) {
    const v = out[key];
    if (typeof v === "number") (out as Record<string, unknown>)[key] = Math.round(v * 10) / 10;
  }
  return out;
}

/**
 * The history once the update `operation` is in place at `nowIso`: its scale event (recorded when
 * the update was sent, or already pruned when the update took long) is moved to `nowIso`, and
 * lastScaleTime is set. An event stamped at the request would make every sample taken during a
 * long update count at the new unit count, overstating demand.
 */
function completedScale(
  history: DecisionHistory,
  operation: NonNullable<CapacityPolicyStatus["operation"]>,
  nowIso: string,
): DecisionHistory {
  const index = operationEventIndex(history, operation);
  const event = history.scaleEvents[index];
  const from = event
    ? { sku: event.fromSku as SkuName, units: event.fromUnits }
    : { sku: operation.from.sku as SkuName, units: operation.from.units };
  return recordScale(
    { ...history, scaleEvents: withoutEvent(history.scaleEvents, index) },
    { time: nowIso, from, to: operation.to },
  );
}

/** Index of the scale event recorded for `operation` (to the same size, around when it was sent), or −1. */
function operationEventIndex(
  history: DecisionHistory,
  operation: NonNullable<CapacityPolicyStatus["operation"]>,
): number {
  const startedMs = Date.parse(operation.startedAt);
  const { to } = operation;
  return history.scaleEvents.findLastIndex(
    (e) => e.toSku === to.sku && e.toUnits === to.units && !(Date.parse(e.time) < startedMs - 60_000),
  );
}

function withoutEvent<T>(events: readonly T[], index: number): T[] {
  return events.filter((_, i) => i !== index);
}

/** Reads the app-server Deployment (spec.replicas, through the scale subresource) or the named HPA. */
async function readReplicas(
  policy: CapacityPolicy,
  appServer: NonNullable<CapacityPolicy["spec"]["appServer"]>,
  previous: Partial<CapacityPolicyStatus>,
  deps: PassDeps,
): Promise<ReplicaView> {
  const ns = policy.metadata.namespace;
  try {
    if (appServer.horizontalPodAutoscalerName) {
      const hpa = await deps.workloads.readHpa(ns, appServer.horizontalPodAutoscalerName);
      return { hpaMinReplicas: hpa.minReplicas };
    }
    const scale = await deps.workloads.readDeploymentScale(ns, appServer.deploymentName);
    const view: ReplicaView = { replicas: scale.replicas };
    const hpas = await deps.workloads.findHpasForDeployment(ns, appServer.deploymentName);
    if (hpas.length > 0) {
      view.conflict = {
        reason: "HpaOwnsReplicas",
        message: `HorizontalPodAutoscaler ${hpas.map((h) => h.name).join(", ")} scales Deployment ${appServer.deploymentName}; name it in spec.appServer.horizontalPodAutoscalerName so the operator raises its minReplicas instead`,
      };
      return view;
    }
    const ours = previous.current?.replicas;
    if (ours !== undefined && ours !== scale.replicas) {
      const ownership = await deps.workloads.deploymentReplicasOwnership(ns, appServer.deploymentName);
      const newest = ownership.managers[0]?.manager;
      if (newest && newest !== FIELD_MANAGER) {
        view.conflict = {
          reason: "ReplicasChangedByOther",
          message: `${newest} set Deployment ${appServer.deploymentName} to ${scale.replicas} replicas (the operator had set ${ours}); not fighting it`,
        };
      }
    }
    return view;
  } catch (err) {
    const k = toKubeError(err, "read app servers");
    return { problem: k.message, ...conflictForMissing(k, appServer.deploymentName) };
  }
}

function conflictForMissing(err: KubeError, deployment: string): Pick<ReplicaView, "conflict"> {
  if (err.kind !== "NotFound") return {};
  return { conflict: { reason: "AppServerNotFound", message: `${err.message} (Deployment ${deployment})` } };
}

async function applyReplicas(
  policy: CapacityPolicy,
  appServer: NonNullable<CapacityPolicy["spec"]["appServer"]>,
  desired: NonNullable<Decision["desired"]>,
  view: ReplicaView,
  deps: PassDeps,
  events: { type: "Normal" | "Warning"; reason: string; message: string }[],
): Promise<{ replicas?: number; hpaMinReplicas?: number; changed: boolean }> {
  const ns = policy.metadata.namespace;
  const labels = { namespace: ns, policy: policy.metadata.name };
  try {
    if (appServer.horizontalPodAutoscalerName && desired.hpaMinReplicas !== undefined) {
      if (desired.hpaMinReplicas === view.hpaMinReplicas) return { changed: false };
      const r = await deps.workloads.setHpaMinReplicas(
        ns,
        appServer.horizontalPodAutoscalerName,
        desired.hpaMinReplicas,
      );
      if (r.changed) {
        deps.metrics.scaleOperations.inc({ ...labels, target: "replicas", result: "succeeded" });
        events.push({
          type: "Normal",
          reason: "HpaFloorSet",
          message: `HorizontalPodAutoscaler ${appServer.horizontalPodAutoscalerName} minReplicas ${view.hpaMinReplicas ?? "?"} → ${r.applied}${r.clamped ? ` (clamped by ${r.clamped})` : ""}`,
        });
      }
      return { hpaMinReplicas: r.applied, changed: r.changed };
    }
    if (desired.replicas !== undefined && desired.replicas !== view.replicas) {
      await deps.workloads.patchDeploymentReplicas(ns, appServer.deploymentName, desired.replicas);
      deps.metrics.scaleOperations.inc({ ...labels, target: "replicas", result: "succeeded" });
      events.push({
        type: "Normal",
        reason: "AppServersScaled",
        message: `Deployment ${appServer.deploymentName} replicas ${view.replicas ?? "?"} → ${desired.replicas}`,
      });
      return { replicas: desired.replicas, changed: true };
    }
  } catch (err) {
    const k = toKubeError(err, "scale app servers");
    deps.metrics.scaleOperations.inc({ ...labels, target: "replicas", result: "failed" });
    events.push({ type: "Warning", reason: "FailedScaleAppServers", message: k.message });
  }
  return { changed: false };
}

/**
 * Writes status once: conditions stamped against the policy's current status, Ready derived.
 * On 409 it reads the policy again and rebuilds only the stamps — no Azure call is repeated.
 * Events (the pass's own and those of condition changes) follow a successful write.
 */
async function writeStatus(
  policy: CapacityPolicy,
  deps: PassDeps,
  patch: StatusPatch,
  drafts: readonly ConditionDraft[],
  blocker: Blocker | undefined,
  events: { type: "Normal" | "Warning"; reason: string; message: string }[],
): Promise<void> {
  if (!deps.canWrite()) return;
  const { namespace, name } = policy.metadata;
  const nowIso = new Date(deps.now()).toISOString();
  let base = policy;
  let written: PolicyCondition[] = [];
  for (let attempt = 1; ; attempt++) {
    const previousConditions = base.status?.conditions;
    const full = withReady(
      drafts.length > 0 ? drafts : (previousConditions ?? []).map((c) => ({ ...c })),
      blocker,
    );
    written = stampConditions(full, previousConditions, nowIso, policy.metadata.generation);
    try {
      await deps.policies.patchStatus(
        namespace,
        name,
        { ...patch, conditions: written },
        base.metadata.resourceVersion,
      );
      break;
    } catch (err) {
      if (!(err instanceof KubeConflictError) || attempt >= MAX_STATUS_ATTEMPTS || !deps.canWrite())
        throw err;
      base = await deps.policies.get(namespace, name);
    }
  }
  const subject = policySubject(policy);
  const changes = changedConditions(base.status?.conditions, written);
  for (const c of changes) {
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

export type { InstanceState };
export { keyOf as policyKey };
