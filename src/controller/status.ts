/**
 * Builds the one status write of a pass (a JSON merge patch of `status`), pure: the conditions
 * keep their `lastTransitionTime` while their status does not change, carry the policy's
 * `observedGeneration`, and `Ready` is derived from the others.
 *
 * Ready:
 * | status | reason | when |
 * |---|---|---|
 * | False | InvalidSpec | the spec fails validation (no decision is made) |
 * | False | OutOfScope | the target is outside the Azure scopes the namespace may use |
 * | False | UnsupportedSku | the instance's SKU cannot be scaled (Free_F1) |
 * | False | Conflict | another owner manages the capacity (Conflict=True), or an older policy names the same instance, Deployment or HPA (Conflict=True, DuplicatePolicy: nothing decided, read or sent; `ownership.ts`) |
 * | False | InstanceUnavailable | the instance cannot be read and its capacity is not known yet |
 * | False | CredentialUnavailable | the same, because the operator's credential gave no token (failed or timed out) |
 * | False | InstanceNotFound | Azure answers 404 for the instance (or its metrics): the resource ID names nothing |
 * | False | AuthorizationFailed | Azure answers 401/403 for a read: the identity lacks its role, or its token is refused |
 * | False | InvalidRequest | Azure refuses a read as invalid (400), or durably by a quota, an Azure Policy or a lock |
 * | False | Throttled | Azure throttles a read for a known, near time: held until it ends (not stalled) |
 * | False | Fallback | the fallback action applies (Fallback=True) |
 * | False | UpdateNotApplied | the instance ignored the last updates; the next waits (src/autoscale/unapplied.ts) |
 * | False | UpdateFailed | the last updates ended Failed or Canceled; the next waits (src/autoscale/unapplied.ts) |
 * | False | UpdateRefused | ARM refused the last updates (quota, Azure Policy, lock, invalid, role, not found); the next waits (src/autoscale/unapplied.ts) |
 * | False | ProgressDeadlineExceeded | the update in flight runs past its deadline (src/autoscale/overdue.ts); still waited for |
 * | True | Paused / RecommendOnly / Reconciled | otherwise |
 */
import {
  CONDITION_TYPES,
  type ConditionStatus,
  type ConditionType,
  type PolicyCondition,
} from "../api/index.js";
import type { PassBlocker } from "../autoscale/pass.js";

/** A condition before the controller stamps times and generation. */
export interface ConditionDraft {
  type: ConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** Why Ready is False when the pass could not even decide. */
export type Blocker = PassBlocker;

const MAX_MESSAGE = 32_768;

/**
 * Reasons of `Ready=False` that need a person (the spec, a conflict, a fallback, an instance whose
 * updates do not take or are refused, a resource ID that names nothing, a missing role, an update
 * that does not end) rather than time: `Stalled=True`, and Argo CD's health check reads them as
 * Degraded (deploy/gitops/argocd-health.lua). `Throttled`, `InstanceUnavailable` and
 * `CredentialUnavailable` are not among them: time may fix those.
 */
export const STALLED_REASONS: ReadonlySet<string> = new Set([
  "InvalidSpec",
  "OutOfScope",
  "UnsupportedSku",
  "Conflict",
  "Fallback",
  "UpdateNotApplied",
  "UpdateFailed",
  "UpdateRefused",
  "ProgressDeadlineExceeded",
  "InstanceNotFound",
  "AuthorizationFailed",
  "InvalidRequest",
]);

/**
 * Derives `Ready` from the other conditions (and a blocker, when the pass stopped early), and the
 * kstatus conditions that Flux and `kubectl wait` read (sigs.k8s.io/cli-utils kstatus, the
 * "abnormal-true" convention): `Reconciling=True` while an ARM update runs (`inFlight`) or Azure
 * throttles for a known time (`Ready=False, Throttled`: the operator reads again when it ends) and
 * the policy is not stalled, `Stalled=True` while `Ready=False` for one of {@link STALLED_REASONS}. Returns the full list in
 * `CONDITION_TYPES` order. Types missing from `drafts` are left out unless `Ready`, `Reconciling`
 * or `Stalled`.
 */
export function withReady(
  drafts: readonly ConditionDraft[],
  blocker?: Blocker,
  inFlight = false,
): ConditionDraft[] {
  const by = new Map(drafts.filter((d) => d.type !== "Ready").map((d) => [d.type, d]));
  const draftReady = drafts.find((d) => d.type === "Ready");
  let ready: ConditionDraft;
  const conflict = by.get("Conflict");
  const fallback = by.get("Fallback");
  const able = by.get("AbleToScale");
  const readyAs = (status: ConditionDraft["status"], reason: string, message: string): ConditionDraft => ({
    type: "Ready",
    status,
    reason,
    message,
  });
  if (blocker) {
    ready = readyAs("False", blocker.reason, blocker.message);
  } else if (draftReady && draftReady.status !== "True") {
    ready = draftReady;
  } else if (conflict?.status === "True") {
    ready = readyAs("False", "Conflict", conflict.message);
  } else if (fallback?.status === "True") {
    ready = readyAs("False", "Fallback", fallback.message);
  } else if (able?.reason === "Paused") {
    ready = readyAs("True", "Paused", "paused: the operator decides nothing");
  } else if (able?.reason === "RecommendOnly") {
    ready = readyAs("True", "RecommendOnly", "recommend mode: decisions are recorded, not applied");
  } else {
    ready = readyAs("True", "Reconciled", draftReady?.message ?? "reconciled");
  }
  const stalled = ready.status === "False" && STALLED_REASONS.has(ready.reason);
  // kstatus reads Reconciling before Stalled: a stalled policy is not Reconciling, even while an
  // update it sent earlier still runs, so Flux reads Failed where Argo CD reads Degraded.
  const throttled = ready.status === "False" && ready.reason === "Throttled";
  const reconciling: ConditionDraft = throttled
    ? { type: "Reconciling", status: "True", reason: "Throttled", message: ready.message }
    : !inFlight
      ? { type: "Reconciling", status: "False", reason: "Idle", message: "no ARM update runs" }
      : stalled
        ? {
            type: "Reconciling",
            status: "False",
            reason: "Stalled",
            message: `an ARM update of the instance runs, but the policy is stalled (${ready.reason})`,
          }
        : {
            type: "Reconciling",
            status: "True",
            reason: "ScaleInProgress",
            message: "an ARM update of the instance runs",
          };
  const derived = new Map<string, ConditionDraft>([
    ["Ready", ready],
    ["Reconciling", reconciling],
    [
      "Stalled",
      stalled
        ? { type: "Stalled", status: "True", reason: ready.reason, message: ready.message }
        : { type: "Stalled", status: "False", reason: "NotStalled", message: "nothing waits for a person" },
    ],
  ]);
  const out: ConditionDraft[] = [];
  for (const type of CONDITION_TYPES) {
    const d = derived.get(type) ?? by.get(type);
    if (d) out.push(d);
  }
  return out;
}

/**
 * Stamps drafts into metav1.Conditions: `lastTransitionTime` is kept from `previous` while the
 * status of that type does not change, else set to `now`; `observedGeneration` is `generation`.
 */
export function stampConditions(
  drafts: readonly ConditionDraft[],
  previous: readonly PolicyCondition[] | undefined,
  now: string,
  generation: number | undefined,
): PolicyCondition[] {
  return drafts.map((d) => {
    const prev = previous?.find((p) => p.type === d.type);
    const c: PolicyCondition = {
      type: d.type,
      status: d.status,
      reason: d.reason,
      message: d.message.length > MAX_MESSAGE ? `${d.message.slice(0, MAX_MESSAGE - 1)}…` : d.message,
      lastTransitionTime: prev && prev.status === d.status ? prev.lastTransitionTime : now,
    };
    if (generation !== undefined) c.observedGeneration = generation;
    return c;
  });
}

/**
 * The types whose status changed between two condition lists (for Events), and `Ready` when it
 * stays False for another reason (a person reads each new reason why the policy is not Ready).
 */
export function changedConditions(
  previous: readonly PolicyCondition[] | undefined,
  next: readonly PolicyCondition[],
): { condition: PolicyCondition; before: ConditionStatus | undefined; reasonChanged: boolean }[] {
  return next
    .map((condition) => {
      const prev = previous?.find((p) => p.type === condition.type);
      return { condition, before: prev?.status, reasonChanged: prev?.reason !== condition.reason };
    })
    .filter(
      (c) =>
        c.before !== c.condition.status ||
        (c.condition.type === "Ready" && c.condition.status === "False" && c.reasonChanged),
    );
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `next` as a merge patch over `stored`, objects replacing objects; with `whole`, every key
 * `stored` has and `next` lacks becomes `null` too.
 */
function replacing(
  stored: Record<string, unknown> | undefined,
  next: Record<string, unknown>,
  whole: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(next)) {
    if (v === undefined) continue;
    const before = stored?.[k];
    out[k] = isPlainObject(v) && isPlainObject(before) ? replacing(before, v, true) : v;
  }
  if (whole && stored) {
    for (const k of Object.keys(stored)) if (!(k in out) && stored[k] !== undefined) out[k] = null;
  }
  return out;
}

/**
 * The status patch that makes each object it sets replace the stored one whole. A JSON merge
 * patch (RFC 7396) merges objects key by key, so a key the new value no longer has (a reason that
 * no longer applies, a rule that no longer asks) would stay; here it is set to `null`, at every
 * depth. Top-level keys the patch leaves out are left alone; arrays replace whole anyway. Pure.
 */
export function replacingPatch(
  stored: Record<string, unknown> | undefined,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  return replacing(stored, patch, false);
}
