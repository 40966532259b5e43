/**
 * Each policy's validated spec, kept per `metadata.generation`: the API server raises the
 * generation of a custom resource on every change of its spec and on no change of its status
 * (Kubernetes API conventions, "metadata.generation"; the CRD has the status subresource), so a
 * spec validated once holds for every watch event and pass of that generation — the status writes
 * of each pass, which bring most of the events, need no new validation. A policy without `uid` or
 * `generation` (not from the API server) is validated every time.
 */
import { type CapacityPolicy, type SpecValidationResult, validateSpec } from "../api/index.js";

/** Freezes `value` and everything it holds, so that a shared spec cannot be changed by a reader. */
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export class SpecCache {
  readonly #byUid = new Map<string, { generation: number; result: SpecValidationResult }>();

  /** The policy's spec validated and defaulted (frozen: shared by every reader), or its errors. */
  validate(policy: CapacityPolicy): SpecValidationResult {
    const uid = policy.metadata?.uid;
    const generation = policy.metadata?.generation;
    if (uid === undefined || generation === undefined) return validateSpec(policy);
    const kept = this.#byUid.get(uid);
    if (kept?.generation === generation) return kept.result;
    const result = deepFreeze(validateSpec(policy));
    this.#byUid.set(uid, { generation, result });
    return result;
  }

  /** Drops what is kept for a deleted policy. */
  forget(policy: CapacityPolicy): void {
    const uid = policy.metadata?.uid;
    if (uid !== undefined) this.#byUid.delete(uid);
  }

  /** How many policies have a spec kept. */
  get size(): number {
    return this.#byUid.size;
  }
}
