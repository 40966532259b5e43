/**
 * The plan of one reconcile pass, pure: what was read (policy, stored status, the instance as ARM
 * reports it, metric samples, the app servers, now) → what to do (the ARM update to send, the
 * app-server change) → what to write (the status merge patch, condition drafts, Events, counts).
 *
 *   planPass(read)              → PassPlan   (decide; observe the update in flight)
 *   …the caller acts on plan.update and plan.appServer…
 *   completePass(plan, results) → PassWrite  (status, conditions, Events, outcome, requeue)
 *
 * The operator's reconcile pass and `simulate`'s policy strategy both run through these two
 * functions, so what one does during long updates, failed updates and restarts the other does too.
 */
import type { CapacityPolicyStatus, StatusPatch, MetricSample as StatusSample } from "../api/index.js";
import { isScalableSku, type SkuName } from "../capacity/skus.js";
import { blockedConditions, type DecisionCondition } from "./conditions.js";
import { type Decision, type DecisionPolicy, decide, type PartialFailure } from "./decide.js";
import type { DemandHistory } from "./demand-history.js";
import { type DurableFailureReason, durableFailure } from "./failures.js";
import type { PassFailure } from "./fallback.js";
import { historyFromStatus, recordScale } from "./history.js";
import {
  chooseLadders,
  heldByExclusions,
  type LadderChoice,
  type LadderExclusion,
  type LadderRead,
} from "./ladders.js";
import type { LeadingObservation } from "./leading.js";
import {
  type EventDraft,
  type InstanceView,
  type OperationCount,
  type OperationObservation,
  observeOperation,
  type PlannedUpdate,
  readAfterWriteGraceMs,
  type StoredOperation,
  startedOperation,
  type UpdateResult,
} from "./operation.js";
import { formatAge, type UpdateAge, updateAge } from "./overdue.js";
import { recoverChange } from "./recovery.js";
import type { MetricSample } from "./samples.js";
import { statusFields } from "./status.js";
import {
  exhaustedHold,
  nextUnapplied,
  type UnappliedHold,
  type UnappliedUpdates,
  unappliedHold,
} from "./unapplied.js";

/** Why `Ready` is False when no decision could be made. */
export interface PassBlocker {
  reason:
    | "InvalidSpec"
    | "OutOfScope"
    | "UnsupportedSku"
    | "InstanceUnavailable"
    | "CredentialUnavailable"
    | DurableFailureReason;
  message: string;
}

/** The app-server Deployment or HPA as read on this pass. */
export interface AppServerView {
  /** The Deployment's `spec.replicas` (scale subresource). */
  replicas?: number;
  /** The named HPA's `spec.minReplicas`. */
  hpaMinReplicas?: number;
  /** Another owner of the replicas (an HPA not named in the policy, someone else's write, …). */
  conflict?: { reason: string; message: string };
  /** Why the app servers could not be read. */
  problem?: string;
}

/** Everything a pass read. */
export interface PassInput {
  /** The policy, its spec validated and defaulted. */
  policy: DecisionPolicy;
  /** The status stored in the policy (empty for a new policy). */
  status: Partial<CapacityPolicyStatus>;
  /** The instance as ARM reported it on this pass; absent when it could not be read. */
  instance?: InstanceView;
  /** This pass's Azure read failure (instance or metrics). */
  failure?: PassFailure;
  /** One-minute metric buckets of the instance. */
  samples: readonly MetricSample[];
  /** Metrics queries that failed while others answered: these fields are unknown in `samples`. */
  partialFailures?: readonly PartialFailure[];
  /** The app servers (when the policy names them). */
  appServer?: AppServerView;
  /** Another owner of the instance's capacity (a native Azure autoscale setting). */
  conflict?: { reason: string; message: string };
  /**
   * The instance's demand over past days (spec.anticipation.seasonal), as last read; absent when
   * the policy has no seasonal forecast or nothing has been read yet.
   */
  demandHistory?: DemandHistory;
  /** The leading signal's readings from Prometheus (spec.anticipation.leadingSignal). */
  leading?: LeadingObservation;
  /**
   * The instance's unit ladders as ARM `listSkus` last reported them (absent: not read yet, or
   * the read failed — the ones stored in status, else the documented ones, are used: ladders.ts).
   */
  ladder?: LadderRead;
  /** The time of the pass, ms since the epoch. */
  now: number;
}

/** The app-server change a pass makes. */
export type AppServerChange =
  | { kind: "deployment"; name: string; from?: number; replicas: number }
  | { kind: "hpa"; name: string; from?: number; minReplicas: number };

/** What a pass does, before it does it. */
export interface PassPlan {
  input: PassInput;
  nowIso: string;
  /** Early stop: no decision is possible (the instance's size is unknown). */
  blocker?: PassBlocker;
  /** The size of the instance: as read now, else as last stored. */
  current?: { sku: SkuName; units: number };
  decision?: Decision;
  observation: OperationObservation;
  /** The ARM update to send. */
  update?: PlannedUpdate;
  /** The decision wants another size while an update runs: it waits. */
  waiting: boolean;
  /** Updates that did not take (ignored, or ended Failed/Canceled), after this pass's observation (unapplied.ts). */
  unapplied?: UnappliedUpdates;
  /** The decision wants another size but the last updates did not take: it waits. */
  held?: UnappliedHold;
  /** The unit ladders the decision used (ladders.ts); absent when the size is unknown. */
  ladders?: LadderChoice;
  appServer?: AppServerChange;
}

/** What the app-server change did. */
export type AppServerResult =
  | { kind: "deployment"; replicas: number }
  /** `applied` may differ from the planned floor when the HPA's maxReplicas clamps it. */
  | { kind: "hpa"; applied: number; changed: boolean; clamped?: string }
  | { kind: "failed"; message: string };

/** What the caller did with a plan. */
export interface PassResults {
  update?: UpdateResult;
  appServer?: AppServerResult;
  /** Nothing was done or written: this replica may not write (not the leader). */
  notLeader?: boolean;
}

/** How a pass ended. */
export type PassOutcome =
  | "invalid"
  | "outOfScope"
  | "instanceUnavailable"
  | "inProgress"
  | "scaled"
  | "recommended"
  | "steady"
  | "notLeader";

/** What to write after a pass. */
export interface PassWrite {
  patch: StatusPatch;
  /** Condition drafts (`Ready` is derived at write time); empty: keep the stored ones. */
  drafts: DecisionCondition[];
  blocker?: PassBlocker;
  events: EventDraft[];
  counts: OperationCount[];
  outcome: PassOutcome;
  /** When to look again, ms from now. */
  requeueAfterMs: number;
  decision?: Decision;
  /** The app-server replicas (or HPA floor) after the pass. */
  replicas?: number;
  /** The update in flight after the pass: its age and deadline (overdue.ts). */
  updateAge?: UpdateAge;
}

/** How soon to look again while an ARM update runs, ms. */
const IN_FLIGHT_POLL_MS = 15_000;

/** The plan of a pass (see the module comment). Pure. */
export function planPass(input: PassInput): PassPlan {
  const { policy, status, instance } = input;
  const nowIso = new Date(input.now).toISOString();
  // A change the stored status does not know of (a lost status write, another writer): recovery.ts.
  const recovery = recoverChange(status, instance, nowIso);
  const stored = historyFromStatus(status);
  const observation = observeOperation(
    status.operation ?? recovery.operation,
    instance,
    recovery.scale ? recordScale(stored, recovery.scale) : stored,
    nowIso,
    readAfterWriteGraceMs(policy.spec.pollIntervalSeconds),
  );
  observation.events.unshift(...recovery.events);
  const unapplied = nextUnapplied(status.unappliedUpdates, {
    outcome: observation.outcome,
    // A recovered update was found, not sent: its outcome says nothing of ours.
    ended: status.operation?.recovered ? undefined : status.operation,
    instance,
    ours: status.operation !== undefined && !status.operation.recovered,
    generation: policy.metadata?.generation,
    nowIso,
  });
  const sku = (instance?.sku ?? status.current?.sku) as SkuName | undefined;
  const units = instance?.units ?? status.current?.units;
  if (sku === undefined || units === undefined) {
    const f = input.failure;
    const durable = durableFailure(f);
    return {
      input,
      nowIso,
      observation,
      waiting: false,
      ...(unapplied ? { unapplied } : {}),
      blocker: durable ?? {
        reason: f?.kind === "Credential" ? "CredentialUnavailable" : "InstanceUnavailable",
        message: f ? `${f.kind}: ${f.message}` : "instance state unknown",
      },
    };
  }
  // An update answered but not applied: its count is not offered, whatever the ladder says.
  const ended = status.operation;
  const exclude: LadderExclusion[] =
    observation.outcome === "notApplied" && ended && !ended.recovered && isScalableSku(ended.to.sku)
      ? [{ sku: ended.to.sku, units: ended.to.units, outcome: "NotApplied" }]
      : [];
  const ladders = chooseLadders({
    read: input.ladder,
    stored: status.unitLadders,
    generation: policy.metadata?.generation,
    current: { sku, units },
    allowed: policy.spec.skus,
    exclude,
    nowIso,
  });
  const view = input.appServer ?? {};
  const decision = decide({
    policy,
    samples: input.samples,
    ...(input.failure ? { failure: input.failure } : {}),
    ...(input.partialFailures && input.partialFailures.length > 0
      ? { partialFailures: input.partialFailures }
      : {}),
    current: {
      sku,
      units,
      ...(view.replicas !== undefined ? { replicas: view.replicas } : {}),
      ...(view.hpaMinReplicas !== undefined ? { hpaMinReplicas: view.hpaMinReplicas } : {}),
    },
    history: observation.history,
    ...(observation.operation ? { operation: observation.operation } : {}),
    now: input.now,
    ladders: ladders.ladders,
    ...(ladders.reason ? { laddersReason: ladders.reason } : {}),
    ...(input.conflict ? { conflict: input.conflict } : {}),
    ...(input.demandHistory ? { demandHistory: input.demandHistory } : {}),
    ...(input.leading ? { leading: input.leading } : {}),
  });
  const plan: PassPlan = {
    input,
    nowIso,
    current: { sku, units },
    decision,
    observation,
    waiting: false,
    ladders,
    ...(unapplied ? { unapplied } : {}),
  };
  const desired = decision.desired;
  // Every count between the size and what the metrics ask for was not applied: none is left.
  if (
    unapplied &&
    desired &&
    desired.sku === sku &&
    desired.units === units &&
    heldByExclusions(decision.recommendation, { units }, ladders.status, policy.spec.skus)
  ) {
    plan.held = exhaustedHold(unapplied);
  }
  if (decision.action !== "Scale" || !desired) return plan;
  const held = unappliedHold(unapplied, input.now);
  if (desired.sku !== sku || desired.units !== units) {
    if (observation.busy) plan.waiting = true;
    else if (held) plan.held = held;
    else if (instance) {
      const ahead =
        decision.anticipation?.applied && desired.units > units ? decision.anticipation : undefined;
      plan.update = {
        from: { sku: instance.sku, units: instance.units },
        to: { sku: desired.sku, units: desired.units },
        cause: `${ahead ? `anticipation: ${ahead.drivenBy}` : (decision.drivenBy ?? "policy")}${decision.limitedBy ? `, limited by ${decision.limitedBy}` : ""}`,
        ...(decision.levels ? { before: decision.levels } : {}),
        ...(ahead
          ? {
              anticipated:
                decision.reasons.findLast((r) => r.code === "Anticipated")?.message ?? ahead.message,
            }
          : {}),
      };
    }
  }
  const spec = policy.spec.appServer;
  if (spec && !view.conflict) {
    const hpa = spec.horizontalPodAutoscalerName;
    if (hpa && desired.hpaMinReplicas !== undefined) {
      if (desired.hpaMinReplicas !== view.hpaMinReplicas) {
        plan.appServer = {
          kind: "hpa",
          name: hpa,
          ...(view.hpaMinReplicas !== undefined ? { from: view.hpaMinReplicas } : {}),
          minReplicas: desired.hpaMinReplicas,
        };
      }
    } else if (desired.replicas !== undefined && desired.replicas !== view.replicas) {
      plan.appServer = {
        kind: "deployment",
        name: spec.deploymentName,
        ...(view.replicas !== undefined ? { from: view.replicas } : {}),
        replicas: desired.replicas,
      };
    }
  }
  return plan;
}

/**
 * The write of a pass that stopped before deciding (invalid spec, out of scope, an instance that
 * cannot be read and whose size is not known): every condition, none left from an earlier pass.
 */
export function refusedPass(
  generation: number | undefined,
  blocker: PassBlocker,
  outcome: PassOutcome,
  requeueAfterMs: number,
): PassWrite {
  return {
    patch: generation !== undefined ? { observedGeneration: generation } : {},
    drafts: blockedConditions(blocker),
    blocker,
    events: [],
    counts: [],
    outcome,
    requeueAfterMs,
  };
}

/** The write of a pass after the caller acted on `plan` (see the module comment). Pure. */
export function completePass(plan: PassPlan, results: PassResults): PassWrite {
  const { input, observation, decision, current } = plan;
  const spec = input.policy.spec;
  const generation = input.policy.metadata?.generation;
  const pollMs = spec.pollIntervalSeconds * 1000;
  if (plan.blocker || !decision || !current) {
    const blocker = plan.blocker ?? { reason: "InstanceUnavailable", message: "instance state unknown" };
    return refusedPass(generation, blocker, "instanceUnavailable", pollMs);
  }
  if (results.notLeader) {
    return {
      patch: {},
      drafts: [],
      events: [],
      counts: [],
      outcome: "notLeader",
      requeueAfterMs: pollMs,
      decision,
    };
  }
  const events = [...observation.events];
  const counts = [...observation.counts];
  let operation: StoredOperation | undefined = observation.operation;
  let inFlight = observation.busy;
  let blocked: { reason: string; message: string } | undefined = plan.waiting
    ? { reason: "ScaleInProgress", message: "an ARM update is still running; the next one waits for it" }
    : undefined;
  let outcome: PassOutcome = decision.action === "Recommend" ? "recommended" : "steady";
  let unapplied = plan.unapplied;
  let heldBack = plan.held;
  let ladders = plan.ladders;
  if (plan.update && results.update) {
    const result = results.update;
    const started = startedOperation(plan.update, result);
    events.push(...started.events);
    counts.push(...started.counts);
    if (started.operation) {
      operation = started.operation;
      inFlight = true;
      outcome = "scaled";
    }
    if (started.blocked) blocked = started.blocked;
    if (result.kind === "refused") {
      // A durable refusal backs off as an update that did not take (unapplied.ts).
      unapplied = nextUnapplied(plan.unapplied, {
        outcome: "refused",
        refusal: result.refusal,
        ended: { to: plan.update.to },
        instance: input.instance,
        ours: true,
        generation,
        nowIso: plan.nowIso,
      });
      heldBack = unappliedHold(unapplied, input.now);
      // ARM called the count invalid: the next decision asks for another (ladders.ts).
      if (result.refusal.by === "Invalid" && ladders) {
        ladders = chooseLadders({
          read: input.ladder,
          stored: ladders.status,
          generation,
          current,
          allowed: spec.skus,
          exclude: [{ sku: plan.update.to.sku, units: plan.update.to.units, outcome: "Refused" }],
          nowIso: plan.nowIso,
        });
      }
    }
  }
  const view = input.appServer ?? {};
  const hpaNamed = spec.appServer?.horizontalPodAutoscalerName !== undefined;
  let replicas = hpaNamed ? view.hpaMinReplicas : view.replicas;
  const change = plan.appServer;
  const done = results.appServer;
  if (change && done) {
    if (done.kind === "failed") {
      counts.push({ target: "replicas", result: "failed" });
      events.push({ type: "Warning", reason: "FailedScaleAppServers", message: done.message });
    } else if (done.kind === "deployment") {
      replicas = done.replicas;
      counts.push({ target: "replicas", result: "succeeded" });
      events.push({
        type: "Normal",
        reason: "AppServersScaled",
        message: `Deployment ${change.name} replicas ${change.from ?? "?"} → ${done.replicas}`,
      });
      if (outcome === "steady") outcome = "scaled";
    } else {
      replicas = done.applied;
      if (done.changed) {
        counts.push({ target: "replicas", result: "succeeded" });
        events.push({
          type: "Normal",
          reason: "HpaFloorSet",
          message: `HorizontalPodAutoscaler ${change.name} minReplicas ${change.from ?? "?"} → ${done.applied}${done.clamped ? ` (clamped by ${done.clamped})` : ""}`,
        });
        if (outcome === "steady") outcome = "scaled";
      }
    }
  }
  if (inFlight && outcome !== "scaled") outcome = "inProgress";

  const knownReplicas = replicas ?? (spec.appServer ? input.status.current?.replicas : undefined);
  const fields = statusFields(decision);
  if (fields.lastSample) fields.lastSample = roundedSample(fields.lastSample);
  if (fields.desired && decision.desired?.hpaMinReplicas !== undefined) {
    fields.desired = { ...fields.desired, replicas: decision.desired.hpaMinReplicas };
  }
  const patch: StatusPatch = {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    // The status replaces `current` whole: replicas not read this pass keep their last value
    // while the policy still names app servers.
    current: { ...current, ...(knownReplicas !== undefined ? { replicas: knownReplicas } : {}) },
    ...fields,
    lastScaleTime: decision.history.lastScaleTime ?? null,
    anticipation: fields.anticipation ?? null,
    operation: operation ?? null,
    unappliedUpdates: unapplied ?? null,
    ...(ladders ? { unitLadders: ladders.status } : {}),
  };

  let drafts: DecisionCondition[] = decision.conditions.map((c) => ({ ...c }));
  const held = heldBack ? { reason: heldBack.reason, message: heldBack.message } : undefined;
  const able =
    blocked ??
    held ??
    (inFlight ? { reason: "ScaleInProgress", message: "an ARM update is running" } : undefined);
  if (able) {
    drafts = drafts.map((d) =>
      d.type === "AbleToScale" ? { type: "AbleToScale", status: "False", ...able } : d,
    );
  }
  if (held) {
    // The policy cannot reach its size while its updates do not take: not Ready.
    drafts = drafts.map((d) => (d.type === "Ready" ? { type: "Ready", status: "False", ...held } : d));
    // With each update that did not take: when the next is sent, or that none is.
    if (observation.outcome === "notApplied" || observation.outcome === "failed") {
      events.push({ type: "Warning", reason: held.reason, message: held.message });
    }
  }
  const refusal = heldBack?.refusal;
  if (refusal) {
    // What refused it, with Azure's code and message.
    drafts = drafts.map((d) =>
      d.type === "ScalingLimited"
        ? { type: "ScalingLimited", status: "True", reason: refusal.reason, message: refusal.message }
        : d,
    );
  }
  // An update that runs past its deadline (overdue.ts): still waited for, but a person should look.
  const age =
    inFlight && operation
      ? updateAge(operation.startedAt, input.now, decision.history.scaleEvents, decision.history.anticipation)
      : undefined;
  if (age?.overdue && operation) {
    const state = input.instance
      ? `ARM reports ${input.instance.provisioningState}`
      : "the instance was not read";
    const overdue = {
      reason: "ProgressDeadlineExceeded",
      message: `the update ${operation.from.sku} × ${operation.from.units} → ${operation.to.sku} × ${operation.to.units} sent at ${operation.startedAt} has run for ${formatAge(age.ageSeconds)}, past its deadline of ${formatAge(age.deadlineSeconds)} (${age.basis}); ${state}: the operator keeps waiting for it and sends no other`,
    };
    drafts = drafts.map((d) =>
      d.type === "Ready" && (d.status === "True" || d.reason === "Throttled")
        ? { type: "Ready", status: "False", ...overdue }
        : d,
    );
  }
  if (view.conflict && !input.conflict) {
    const c = view.conflict;
    drafts = drafts.map((d) => (d.type === "Conflict" ? { type: "Conflict", status: "True", ...c } : d));
  }
  const write: PassWrite = {
    patch,
    drafts,
    events,
    counts,
    outcome,
    requeueAfterMs: inFlight ? Math.min(pollMs, IN_FLIGHT_POLL_MS) : pollMs,
    decision,
  };
  const b = decision.desired ? undefined : blocker(decision);
  if (b) write.blocker = b;
  if (replicas !== undefined) write.replicas = replicas;
  if (age) write.updateAge = age;
  return write;
}

function blocker(decision: Decision): PassBlocker {
  return {
    reason: "UnsupportedSku",
    message: decision.reasons.find((r) => r.code === "UnsupportedSku")?.message ?? "no decision possible",
  };
}

/**
 * `status.lastSample` as people read it (the Load and Connections columns of `kubectl get`):
 * values to one decimal, not the 15 digits of an average.
 */
function roundedSample(sample: StatusSample): StatusSample {
  const out: StatusSample = { ...sample };
  for (const key of Object.keys(out) as (keyof StatusSample)[]) {
    const v = out[key];
    if (typeof v === "number") (out as Record<string, unknown>)[key] = Math.round(v * 10) / 10;
  }
  return out;
}

/**
 * A stored status after a merge patch (`null` removes a field; other values replace it whole —
 * every field of the status is written whole). Conditions are left to the caller.
 */
export function mergeStatus(
  status: Partial<CapacityPolicyStatus>,
  patch: StatusPatch,
): Partial<CapacityPolicyStatus> {
  const out: Record<string, unknown> = { ...status };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (v !== undefined) out[k] = v;
  }
  return out as Partial<CapacityPolicyStatus>;
}
