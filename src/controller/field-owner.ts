/**
 * Who may write a field the operator sizes — the app-server Deployment's `spec.replicas` or the
 * named HPA's `spec.minReplicas` — from the field's owners in `metadata.managedFields`. Pure.
 *
 * | owners of the field besides the operator | the operator | write |
 * |---|---|---|
 * | none | owns it, or nobody does | apply, not forced |
 * | some, and the operator never applied on this object for this policy | takes it over: the value they set is the start value (the policy says the operator sizes the object) | apply, forced |
 * | some, all named in the policy's `autoscaling.signalr.dev/take-replicas-from` annotation | takes it back (a person handed it back) | apply, forced |
 * | some others, after the operator had applied | leaves it: `Conflict=True`, no write | none |
 *
 * While it leaves the field, the operator applies the field's current value, not forced, once
 * (server-side apply lets two managers that set one value share it): when the other manager stops
 * applying the field, the field keeps its value — instead of falling back to the API's default
 * (1 replica) — and the operator takes it up on its next pass. An `Update` writer (kubectl scale,
 * client-side apply, a controller's PUT) keeps it until someone else changes the value — hence
 * the hand-back annotation.
 */
import type { FieldManager, FieldOwnership } from "../kube/workloads.js";

/** The policy annotation that hands a sized field back: field manager names, comma-separated. */
export const TAKE_FROM_ANNOTATION = "autoscaling.signalr.dev/take-replicas-from";

/** What the operator may do with a sized field on this pass. */
export type FieldWrite =
  | { write: "apply"; force: false }
  /** `from`: the managers it is taken from; `why`: first sizing, or handed back. */
  | { write: "apply"; force: true; from: string[]; why: "adopted" | "handedBack" }
  /** `share`: the operator does not co-own the field yet: apply its current value, not forced. */
  | { write: "none"; owners: FieldManager[]; share: boolean };

/** The manager names the policy's hand-back annotation lists (trimmed, empty ones dropped). */
export function handedBackFrom(annotations: Record<string, string> | undefined): string[] {
  return (annotations?.[TAKE_FROM_ANNOTATION] ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m !== "");
}

/**
 * Whether the operator (field manager `self`) may write a sized field for `policy`
 * (`namespace/name`), from the field's ownership and the managers the policy hands it back from.
 */
export function fieldWrite(
  ownership: FieldOwnership,
  self: string,
  policy: string,
  handedBack: readonly string[],
): FieldWrite {
  // The operator's own entry is its Apply one: an Update entry under its name (an older version's
  // write through the scale subresource, a client that borrowed the name) is another owner.
  const ours = (m: FieldManager) => m.manager === self && m.operation === "Apply";
  const owners = ownership.managers.filter((m) => !ours(m));
  if (owners.length === 0) return { write: "apply", force: false };
  const from = [...new Set(owners.map((m) => m.manager))];
  if (ownership.appliedFor !== policy) return { write: "apply", force: true, from, why: "adopted" };
  if (from.every((m) => handedBack.includes(m)))
    return { write: "apply", force: true, from, why: "handedBack" };
  return { write: "none", owners, share: !ownership.managers.some(ours) };
}

/** How one owner wrote the field, for messages: `kubectl (Update through the scale subresource, 2026-…Z)`. */
export function describeOwner(m: FieldManager): string {
  const how = [m.operation, m.subresource ? `through the ${m.subresource} subresource` : undefined]
    .filter((x) => x !== undefined)
    .join(" ");
  const when = m.time ? `${how ? ", " : ""}${m.time.toISOString()}` : "";
  return how || when ? `${m.manager} (${how}${when})` : m.manager;
}

/**
 * The `Conflict` message of a field another manager owns: who, how and when, that the operator
 * does not write it, and the two ways out (leave the field out of the other writer's manifest, or
 * hand it back with the annotation).
 */
export function ownedByOtherMessage(
  field: string,
  object: string,
  owners: readonly FieldManager[],
  policy: { namespace: string; name: string },
): string {
  const names = [...new Set(owners.map((o) => o.manager))].join(",");
  return (
    `${field} of ${object} is owned by ${owners.map(describeOwner).join(", ")}; the operator does not ` +
    `write it while another field manager owns it. Leave ${field} out of that writer's manifest, or hand ` +
    `it back: kubectl annotate capacitypolicy ${policy.name} -n ${policy.namespace} ` +
    `${TAKE_FROM_ANNOTATION}=${names} --overwrite`
  );
}
