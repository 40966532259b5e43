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
import type {
  CapacityPolicyStatus,
  GeoReplicasStatus,
  StatusPatch,
  MetricSample as StatusSample,
} from "../api/index.js";
import { isScalableSku, type SkuName } from "../capacity/skus.js";
import type { DisconnectionModel } from "../traffic/disconnections.js";
import { blockedConditions, type DecisionCondition } from "./conditions.js";
import {
  type Decision,
  type DecisionInput,
  type DecisionPolicy,
  decide,
  type PartialFailure,
} from "./decide.js";
import type { DemandHistory } from "./demand-history.js";
import type { ReplicaGroupObservation } from "./failover.js";
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
    | "Conflict"
    | DurableFailureReason;
  message: string;
}

/** The app-server Deployment or HPA as read on this pass. */
export interface AppServerView {
  /** The Deployment's `spec.replicas`. */
  replicas?: number;
  /** The named HPA's `spec.minReplicas`. */
  hpaMinReplicas?: number;
  /** Another owner of the replicas (an HPA not named in the policy, another field manager, …). */
  conflict?: { reason: string; message: string };
  /** The sized field another field manager owns (with `conflict`): for the metric. */
  fieldConflict?: { object: string; field: string; managers: string[] };
  /**
   * The write takes the field from its other owners (server-side apply with force): the
   * policy's first sizing of the object ("adopted"), or a person handed it back ("handedBack").
   */
  take?: { from: string[]; why: "adopted" | "handedBack" };
  /**
   * With a field-manager `conflict`: apply the field's current value, not forced, so the operator
   * co-owns it (when the other manager stops applying it, it keeps its value instead of the API
   * default). Not a scale: no Event, no count.
   */
  share?: true;
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
   * The target's geo-replica group (every member's serving state and connections), for the
   * failover rule (`failover.ts`); absent when the instance has no replicas.
   */
  replicaGroup?: ReplicaGroupObservation;
  /** `status.geoReplicas` to store (the group's members and their policies); absent: removed. */
  geoReplicas?: GeoReplicasStatus;
  /** Which clients a unit change disconnects on the instance (decide.ts `DecisionInput.disconnection`). */
  disconnection?: DisconnectionModel;
  /**
   * The instance's unit ladders as ARM `listSkus` last reported them (absent: not read yet, or
   * the read failed — the ones stored in status, else the documented ones, are used: ladders.ts).
   */
  ladder?: LadderRead;
  /** The time of the pass, ms since the epoch. */
  now: number;
}

/** The app-server change a pass makes. */
export type AppServerChange = (
  | { kind: "deployment"; name: string; from?: number; replicas: number }
  | { kind: "hpa"; name: string; from?: number; minReplicas: number }
) & {
  /** Take the field from its other owners (`AppServerView.take`). */
  force?: true;
  /** Co-own the field at its current value (`AppServerView.share`). */
  share?: true;
};

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
  | { kind: "failed"; message: string }
  /** The API server refused the apply: `managers` took the field since it was read. */
  | { kind: "conflict"; managers: string[]; message: string };

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
  | "duplicate"
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
  /** Clients the update this pass started is expected to disconnect (operation.ts `expectedDisconnects`). */
  disconnects?: number;
}

/** How soon to look again while an ARM update runs, ms. */
const IN_FLIGHT_POLL_MS = 15_000;

/** The plan of a pass (see the module comment). Pure. */
export function planPass(input: PassInput): PassPlan {
  const { policy, status } = input;
  const { nowIso, observation, unapplied } = observePass(input);
  const sku = (input.instance?.sku ?? status.current?.sku) as SkuName | undefined;
  const units = input.instance?.units ?? status.current?.units;
  if (sku === undefined || units === undefined) {
    return {
      input,
      nowIso,
      observation,
      waiting: false,
      ...(unapplied ? { unapplied } : {}),
      blocker: unknownSizeBlocker(input.failure),
    };
  }
  const current = { sku, units };
  const ladders = chooseLadders({
    read: input.ladder,
    stored: status.unitLadders,
    generation: policy.metadata?.generation,
    current,
    allowed: policy.spec.skus,
    exclude: notAppliedExclusion(status.operation, observation),
    nowIso,
  });
  const decision = decide(decisionInput(input, current, observation, ladders));
  const plan: PassPlan = {
    input,
    nowIso,
    current,
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
  if (desired.sku !== sku || desired.units !== units) {
    const held = unappliedHold(unapplied, input.now);
    if (observation.busy) plan.waiting = true;
    else if (held) plan.held = held;
    else if (input.instance) plan.update = plannedUpdate(decision, desired, input.instance);
  }
  const appServer = appServerChange(policy.spec.appServer, input.appServer ?? {}, desired);
  if (appServer) plan.appServer = appServer;
  return plan;
}

/**
 * The read half of a plan: the stored operation (or one recovered from a change the status does
 * not know of, recovery.ts) observed against the instance, and the updates that did not take
 * after that observation (unapplied.ts). `nowIso` is the pass's time as an ISO 8601 string.
 */
function observePass(input: PassInput): {
  nowIso: string;
  observation: OperationObservation;
  unapplied: UnappliedUpdates | undefined;
} {
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
  return { nowIso, observation, unapplied };
}

/**
 * Why no decision is possible when the instance's size is unknown: the durable failure
 * (failures.ts) if this pass's failure is one, else the credential or instance read that failed.
 */
function unknownSizeBlocker(failure: PassFailure | undefined): PassBlocker {
  return (
    durableFailure(failure) ?? {
      reason: failure?.kind === "Credential" ? "CredentialUnavailable" : "InstanceUnavailable",
      message: failure ? `${failure.kind}: ${failure.message}` : "instance state unknown",
    }
  );
}

/**
 * An update of ours answered but not applied: its count is not offered, whatever the ladder says
 * (ladders.ts). Empty otherwise.
 */
function notAppliedExclusion(
  ended: StoredOperation | undefined,
  observation: OperationObservation,
): LadderExclusion[] {
  return observation.outcome === "notApplied" && ended && !ended.recovered && isScalableSku(ended.to.sku)
    ? [{ sku: ended.to.sku, units: ended.to.units, outcome: "NotApplied" }]
    : [];
}

/** What `decide` reads on this pass: the read, the size, the observed history, the ladders. */
function decisionInput(
  input: PassInput,
  size: { sku: SkuName; units: number },
  observation: OperationObservation,
  ladders: LadderChoice,
): DecisionInput {
  const view = input.appServer ?? {};
  return {
    policy: input.policy,
    samples: input.samples,
    ...(input.failure ? { failure: input.failure } : {}),
    ...(input.partialFailures && input.partialFailures.length > 0
      ? { partialFailures: input.partialFailures }
      : {}),
    current: {
      ...size,
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
    ...(input.replicaGroup ? { replicaGroup: input.replicaGroup } : {}),
    ...(input.disconnection ? { disconnection: input.disconnection } : {}),
  };
}

/**
 * The ARM update from the instance as read to the decision's size, with its cause (the signal or
 * anticipation rule that drove it, and the limit that bounded it) and the levels before it.
 */
function plannedUpdate(
  decision: Decision,
  desired: NonNullable<Decision["desired"]>,
  instance: InstanceView,
): PlannedUpdate {
  const ahead =
    decision.anticipation?.applied && desired.units > instance.units ? decision.anticipation : undefined;
  return {
    from: { sku: instance.sku, units: instance.units },
    to: { sku: desired.sku, units: desired.units },
    cause: `${ahead ? `anticipation: ${ahead.drivenBy}` : (decision.drivenBy ?? "policy")}${decision.limitedBy ? `, limited by ${decision.limitedBy}` : ""}`,
    ...(decision.levels ? { before: decision.levels } : {}),
    ...(ahead
      ? {
          anticipated: decision.reasons.findLast((r) => r.code === "Anticipated")?.message ?? ahead.message,
        }
      : {}),
  };
}

/** The apply of the field's current value that makes the operator a co-owner (`AppServerView.share`). */
function shareChange(
  spec: NonNullable<DecisionPolicy["spec"]["appServer"]>,
  view: AppServerView,
): AppServerChange | undefined {
  const hpa = spec.horizontalPodAutoscalerName;
  if (hpa) {
    if (view.hpaMinReplicas === undefined) return undefined;
    return {
      kind: "hpa",
      name: hpa,
      from: view.hpaMinReplicas,
      minReplicas: view.hpaMinReplicas,
      share: true,
    };
  }
  if (view.replicas === undefined) return undefined;
  return {
    kind: "deployment",
    name: spec.deploymentName,
    from: view.replicas,
    replicas: view.replicas,
    share: true,
  };
}

/**
 * The app-server change the decision asks for: the named HPA's `minReplicas` when the decision
 * sets a floor, else the Deployment's replicas; none when nothing changes or another owner holds
 * the replicas (`view.conflict`) — but the apply that co-owns the current value when another
 * field manager holds it and the operator does not share it yet (`view.share`).
 */
function appServerChange(
  spec: DecisionPolicy["spec"]["appServer"],
  view: AppServerView,
  desired: { replicas?: number; hpaMinReplicas?: number },
): AppServerChange | undefined {
  if (!spec) return undefined;
  if (view.conflict) return view.share ? shareChange(spec, view) : undefined;
  const force = view.take ? { force: true as const } : {};
  const hpa = spec.horizontalPodAutoscalerName;
  if (hpa && desired.hpaMinReplicas !== undefined) {
    if (desired.hpaMinReplicas === view.hpaMinReplicas) return undefined;
    return {
      kind: "hpa",
      name: hpa,
      ...(view.hpaMinReplicas !== undefined ? { from: view.hpaMinReplicas } : {}),
      minReplicas: desired.hpaMinReplicas,
      ...force,
    };
  }
  if (desired.replicas === undefined || desired.replicas === view.replicas) return undefined;
  return {
    kind: "deployment",
    name: spec.deploymentName,
    ...(view.replicas !== undefined ? { from: view.replicas } : {}),
    replicas: desired.replicas,
    ...force,
  };
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

/**
 * The write of a pass refused because an older policy owns a target it names (the caller's
 * `conflict`, e.g. `DuplicatePolicy`): `Conflict=True` with that reason and message, `Ready=False`
 * and `AbleToScale=False` with reason `Conflict`, the others Unknown (not evaluated); outcome
 * `duplicate`. Nothing was decided, so the decision's fields (`desired`, `lastReasons`) are
 * removed; what was observed before (`current`, `lastSample`, the history, an update in flight)
 * stays. Pure.
 */
export function conflictedPass(
  generation: number | undefined,
  conflict: { reason: string; message: string },
  requeueAfterMs: number,
): PassWrite {
  const blocker: PassBlocker = { reason: "Conflict", message: conflict.message };
  return {
    ...refusedPass(generation, blocker, "duplicate", requeueAfterMs),
    patch: {
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      desired: null,
      lastReasons: null,
    },
    drafts: blockedConditions(blocker, conflict),
  };
}

/**
 * A Warning `UnmanagedReplicas` when members of the target's geo-replica group that no policy
 * scales appear (a replica added, or its policy deleted): once per change of that set, not every
 * pass. Each replica carries its own units (Azure scales replicas apart), so one left out keeps its
 * capacity whatever its region's load.
 */
function unmanagedReplicaEvents(input: PassInput): EventDraft[] {
  const unmanaged = (g: GeoReplicasStatus | undefined) =>
    (g?.members ?? []).filter((m) => m.policy === undefined).map((m) => m.resourceId.toLowerCase());
  const before = new Set(unmanaged(input.status.geoReplicas));
  const added = (input.geoReplicas?.members ?? []).filter(
    (m) => m.policy === undefined && !before.has(m.resourceId.toLowerCase()),
  );
  if (added.length === 0) return [];
  const list = added.map(
    (m) => `${m.role.toLowerCase()} ${m.resourceId} (${m.location}, ${m.sku} ${m.units} units)`,
  );
  return [
    {
      type: "Warning",
      reason: "UnmanagedReplicas",
      message:
        `no CapacityPolicy scales ${list.join("; ")}: its capacity stays as it is whatever its region's load; add a policy naming it`.slice(
          0,
          1024,
        ),
    },
  ];
}

/** The write of a pass after the caller acted on `plan` (see the module comment). Pure. */
export function completePass(plan: PassPlan, results: PassResults): PassWrite {
  const { input, observation, decision, current } = plan;
  const generation = input.policy.metadata?.generation;
  const pollMs = input.policy.spec.pollIntervalSeconds * 1000;
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
  const step = updateStep(plan, current, results.update);
  const served = appServerStep(plan, results.appServer);
  const events = [...step.events, ...served.events, ...unmanagedReplicaEvents(input)];
  const counts = [...step.counts, ...served.counts];
  let outcome: PassOutcome = decision.action === "Recommend" ? "recommended" : "steady";
  if (step.scaled || (served.changed && outcome === "steady")) outcome = "scaled";
  if (step.inFlight && outcome !== "scaled") outcome = "inProgress";
  // An update that runs past its deadline (overdue.ts): still waited for, but a person should look.
  const age =
    step.inFlight && step.operation
      ? updateAge(
          step.operation.startedAt,
          input.now,
          decision.history.scaleEvents,
          decision.history.anticipation,
        )
      : undefined;
  const held = step.held ? { reason: step.held.reason, message: step.held.message } : undefined;
  // With each update that did not take: when the next is sent, or that none is.
  if (held && (observation.outcome === "notApplied" || observation.outcome === "failed")) {
    events.push({ type: "Warning", reason: held.reason, message: held.message });
  }
  const write: PassWrite = {
    patch: statusPatch(plan, decision, current, step, served.replicas),
    drafts: passConditions(input, decision, step, age),
    events,
    counts,
    outcome,
    requeueAfterMs: step.inFlight ? Math.min(pollMs, IN_FLIGHT_POLL_MS) : pollMs,
    decision,
  };
  const b = decision.desired ? undefined : blocker(decision);
  if (b) write.blocker = b;
  if (served.replicas !== undefined) write.replicas = served.replicas;
  if (age) write.updateAge = age;
  if (step.disconnects !== undefined) write.disconnects = step.disconnects;
  return write;
}

/** The ARM update's part of a pass: the observation's, then what sending the planned update did. */
interface UpdateStep {
  /** Events and counts of the observation, then of the update sent. */
  events: EventDraft[];
  counts: OperationCount[];
  /** The update in flight or last ended, as the status stores it. */
  operation: StoredOperation | undefined;
  /** An ARM update runs after this pass. */
  inFlight: boolean;
  /** Why the decision's size was not sent (`AbleToScale` False). */
  blocked: { reason: string; message: string } | undefined;
  /** This pass started an update. */
  scaled: boolean;
  /** Clients that update is expected to disconnect. */
  disconnects?: number;
  /** Updates that did not take (unapplied.ts), after a refusal of this pass's update. */
  unapplied: UnappliedUpdates | undefined;
  held: UnappliedHold | undefined;
  ladders: LadderChoice | undefined;
}

/**
 * The observation of the update in flight and the result of the update this pass sent: the
 * operation started, or the refusal — backed off as an update that did not take (unapplied.ts),
 * and, when ARM called the count invalid, that count left out of the ladders (ladders.ts).
 */
function updateStep(
  plan: PassPlan,
  current: { sku: SkuName; units: number },
  result: UpdateResult | undefined,
): UpdateStep {
  const { input, observation } = plan;
  const step: UpdateStep = {
    events: [...observation.events],
    counts: [...observation.counts],
    operation: observation.operation,
    inFlight: observation.busy,
    blocked: plan.waiting
      ? { reason: "ScaleInProgress", message: "an ARM update is still running; the next one waits for it" }
      : undefined,
    scaled: false,
    unapplied: plan.unapplied,
    held: plan.held,
    ladders: plan.ladders,
  };
  if (!plan.update || !result) return step;
  const started = startedOperation(plan.update, result);
  step.events.push(...started.events);
  step.counts.push(...started.counts);
  if (started.operation) {
    step.operation = started.operation;
    step.inFlight = true;
    step.scaled = true;
  }
  if (started.disconnects !== undefined) step.disconnects = started.disconnects;
  if (started.blocked) step.blocked = started.blocked;
  if (result.kind !== "refused") return step;
  const generation = input.policy.metadata?.generation;
  // A durable refusal backs off as an update that did not take (unapplied.ts).
  step.unapplied = nextUnapplied(plan.unapplied, {
    outcome: "refused",
    refusal: result.refusal,
    ended: { to: plan.update.to },
    instance: input.instance,
    ours: true,
    generation,
    nowIso: plan.nowIso,
  });
  step.held = unappliedHold(step.unapplied, input.now);
  // ARM called the count invalid: the next decision asks for another (ladders.ts).
  if (result.refusal.by === "Invalid" && step.ladders) {
    step.ladders = chooseLadders({
      read: input.ladder,
      stored: step.ladders.status,
      generation,
      current,
      allowed: input.policy.spec.skus,
      exclude: [{ sku: plan.update.to.sku, units: plan.update.to.units, outcome: "Refused" }],
      nowIso: plan.nowIso,
    });
  }
  return step;
}

/**
 * The app-server part of a pass: the replicas (or, with a named HPA, its `minReplicas` floor)
 * after the change the caller made, its count and Event; `changed` when the change took.
 */
function appServerStep(
  plan: PassPlan,
  done: AppServerResult | undefined,
): { replicas: number | undefined; counts: OperationCount[]; events: EventDraft[]; changed: boolean } {
  const view = plan.input.appServer ?? {};
  const hpaNamed = plan.input.policy.spec.appServer?.horizontalPodAutoscalerName !== undefined;
  const replicas = hpaNamed ? view.hpaMinReplicas : view.replicas;
  const change = plan.appServer;
  if (!change || !done || change.share) return { replicas, counts: [], events: [], changed: false };
  if (done.kind === "failed") {
    return {
      replicas,
      counts: [{ target: "replicas", result: "failed" }],
      events: [{ type: "Warning", reason: "FailedScaleAppServers", message: done.message }],
      changed: false,
    };
  }
  if (done.kind === "conflict") {
    // The next pass reads the new owner and reports Conflict (with its Warning Event).
    return { replicas, counts: [{ target: "replicas", result: "conflict" }], events: [], changed: false };
  }
  const taken = view.take
    ? ` (taken from ${view.take.from.join(", ")}: ${view.take.why === "adopted" ? "the policy's first sizing" : "handed back"})`
    : "";
  if (done.kind === "deployment") {
    return {
      replicas: done.replicas,
      counts: [{ target: "replicas", result: "succeeded" }],
      events: [
        {
          type: "Normal",
          reason: "AppServersScaled",
          message: `Deployment ${change.name} replicas ${change.from ?? "?"} → ${done.replicas}${taken}`,
        },
      ],
      changed: true,
    };
  }
  if (!done.changed) return { replicas: done.applied, counts: [], events: [], changed: false };
  return {
    replicas: done.applied,
    counts: [{ target: "replicas", result: "succeeded" }],
    events: [
      {
        type: "Normal",
        reason: "HpaFloorSet",
        message: `HorizontalPodAutoscaler ${change.name} minReplicas ${change.from ?? "?"} → ${done.applied}${done.clamped ? ` (clamped by ${done.clamped})` : ""}${taken}`,
      },
    ],
    changed: true,
  };
}

/**
 * The status merge patch of a pass: the size (with the replicas read, else the stored ones while
 * the policy names app servers), the decision's fields, the operation, the updates that did not
 * take and the ladders. `null` removes a field.
 */
function statusPatch(
  plan: PassPlan,
  decision: Decision,
  current: { sku: SkuName; units: number },
  step: UpdateStep,
  replicas: number | undefined,
): StatusPatch {
  const { input } = plan;
  const generation = input.policy.metadata?.generation;
  const knownReplicas =
    replicas ?? (input.policy.spec.appServer ? input.status.current?.replicas : undefined);
  const fields = statusFields(decision);
  if (fields.lastSample) fields.lastSample = roundedSample(fields.lastSample);
  if (fields.desired && decision.desired?.hpaMinReplicas !== undefined) {
    fields.desired = { ...fields.desired, replicas: decision.desired.hpaMinReplicas };
  }
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    // The status replaces `current` whole: replicas not read this pass keep their last value
    // while the policy still names app servers.
    current: { ...current, ...(knownReplicas !== undefined ? { replicas: knownReplicas } : {}) },
    ...fields,
    lastScaleTime: decision.history.lastScaleTime ?? null,
    anticipation: fields.anticipation ?? null,
    notServing: fields.notServing ?? null,
    operation: step.operation ?? null,
    unappliedUpdates: step.unapplied ?? null,
    ...(step.ladders ? { unitLadders: step.ladders.status } : {}),
    geoReplicas: input.geoReplicas ?? null,
  };
}

/**
 * The decision's condition drafts, overridden by what the pass found: `AbleToScale` False while
 * blocked, held back or an update runs; `Ready` False while held back or past an update's deadline;
 * `ScalingLimited` with the refusal that holds it back; `Conflict` with another owner of the app
 * servers' replicas.
 */
function passConditions(
  input: PassInput,
  decision: Decision,
  step: UpdateStep,
  age: UpdateAge | undefined,
): DecisionCondition[] {
  let drafts: DecisionCondition[] = decision.conditions.map((c) => ({ ...c }));
  const held = step.held ? { reason: step.held.reason, message: step.held.message } : undefined;
  const able =
    step.blocked ??
    held ??
    (step.inFlight ? { reason: "ScaleInProgress", message: "an ARM update is running" } : undefined);
  if (able) drafts = replaced(drafts, { type: "AbleToScale", status: "False", ...able });
  // The policy cannot reach its size while its updates do not take: not Ready.
  if (held) drafts = replaced(drafts, { type: "Ready", status: "False", ...held });
  const refusal = step.held?.refusal;
  if (refusal) {
    // What refused it, with Azure's code and message.
    drafts = replaced(drafts, {
      type: "ScalingLimited",
      status: "True",
      reason: refusal.reason,
      message: refusal.message,
    });
  }
  const overdue = age?.overdue && step.operation ? overdueCondition(step.operation, age, input) : undefined;
  if (overdue) {
    drafts = replaced(drafts, overdue, (d) => d.status === "True" || d.reason === "Throttled");
  }
  const conflict = input.appServer?.conflict;
  if (conflict && !input.conflict) {
    drafts = replaced(drafts, { type: "Conflict", status: "True", ...conflict });
  }
  return drafts;
}

/** `drafts` with the draft of `set.type` replaced by `set`, where `when` holds of the one it replaces. */
function replaced(
  drafts: DecisionCondition[],
  set: DecisionCondition,
  when: (d: DecisionCondition) => boolean = () => true,
): DecisionCondition[] {
  return drafts.map((d) => (d.type === set.type && when(d) ? set : d));
}

/** `Ready` False for an update past its deadline (overdue.ts): what runs, for how long, and ARM's state. */
function overdueCondition(operation: StoredOperation, age: UpdateAge, input: PassInput): DecisionCondition {
  const state = input.instance
    ? `ARM reports ${input.instance.provisioningState}`
    : "the instance was not read";
  return {
    type: "Ready",
    status: "False",
    reason: "ProgressDeadlineExceeded",
    message: `the update ${operation.from.sku} × ${operation.from.units} → ${operation.to.sku} × ${operation.to.units} sent at ${operation.startedAt} has run for ${formatAge(age.ageSeconds)}, past its deadline of ${formatAge(age.deadlineSeconds)} (${age.basis}); ${state}: the operator keeps waiting for it and sends no other`,
  };
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
