/**
 * One policy per target: which policy owns each Azure instance, app-server Deployment and HPA the
 * watched policies name, and which policies are duplicates.
 *
 * A policy claims its Azure instance (the resource ID compared case-insensitively, as ARM compares
 * IDs: `resourceKey`), its app-server Deployment (namespace/name) and the HPA it names
 * (namespace/name). Each claim is owned by the oldest policy making it — the smallest
 * `metadata.creationTimestamp`, then the smallest namespace/name — across every watched namespace.
 * Every other policy making that claim is a duplicate of its owner: its pass reports
 * `Conflict=True, reason=DuplicatePolicy` naming the shared target and the owner, `Ready=False`,
 * and sends nothing to Azure or to the app servers. A policy whose spec is invalid or whose target
 * is outside its namespace's scopes claims nothing (its pass is refused for that anyway), so it
 * never holds back a valid one. Mode does not matter: a paused or Recommend policy owns what it
 * names, as a paused KEDA ScaledObject does.
 *
 * When an owner is deleted or retargeted, each claim passes to the next oldest policy making it.
 *
 * Cost: {@link claimOwners} is O(n · claims) with one map lookup per claim; {@link ClaimIndex}
 * keeps each policy's claims (computed once per watch event) and rebuilds the verdicts only when
 * some policy's claims changed, at most once per {@link ClaimIndex.refresh}.
 */
import { type CapacityPolicy, validateSpec } from "../api/index.js";
import { resourceKey } from "../azure/resource-id.js";
import { objectKey } from "../kube/watch.js";
import type { SpecCache } from "./spec-cache.js";
import { checkTarget, type TenancyMap } from "./tenancy.js";

/** What a policy claims: its Azure instance, its app-server Deployment, the HPA it names. */
export type ClaimKind = "instance" | "deployment" | "hpa";

/** One claim of a policy. */
export interface Claim {
  kind: ClaimKind;
  /** The comparison key: the kind and the case-folded resource ID, or the kind and namespace/name. */
  key: string;
  /** The target as the policy names it, for messages ("SignalR instance /subscriptions/…"). */
  target: string;
}

/** A policy's claims and its age. */
export interface PolicyClaims {
  /** namespace/name. */
  key: string;
  /** `metadata.creationTimestamp`, ms since the epoch (`Infinity` when unset: the youngest). */
  createdMs: number;
  claims: readonly Claim[];
}

/** A duplicate policy: the owner of the first target it shares (instance, then Deployment, then HPA). */
export interface Duplicate {
  /** namespace/name of the owning policy. */
  owner: string;
  kind: ClaimKind;
  /** The shared target as the owner names it. */
  target: string;
}

/**
 * The claims of a policy, in the order instance, Deployment, HPA; none when its spec is invalid or
 * its target is malformed or outside its namespace's tenancy scopes (`tenancy`). `specs` keeps
 * validated specs between calls.
 */
export function policyClaims(policy: CapacityPolicy, tenancy?: TenancyMap, specs?: SpecCache): PolicyClaims {
  const key = objectKey(policy);
  const created = Date.parse(policy.metadata.creationTimestamp ?? "");
  const createdMs = Number.isFinite(created) ? created : Number.POSITIVE_INFINITY;
  const validation = specs ? specs.validate(policy) : validateSpec(policy);
  if (!validation.ok) return { key, createdMs, claims: [] };
  const { target, appServer } = validation.spec;
  const namespace = policy.metadata.namespace;
  if (!checkTarget(tenancy, namespace, target.resourceId).ok) return { key, createdMs, claims: [] };
  const claims: Claim[] = [
    {
      kind: "instance",
      key: instanceClaimKey(target.resourceId),
      target: `${target.service} instance ${target.resourceId}`,
    },
  ];
  if (appServer) {
    const deployment = `${namespace}/${appServer.deploymentName}`;
    claims.push({ kind: "deployment", key: `deployment:${deployment}`, target: `Deployment ${deployment}` });
    const hpaName = appServer.horizontalPodAutoscalerName;
    if (hpaName) {
      const hpa = `${namespace}/${hpaName}`;
      claims.push({ kind: "hpa", key: `hpa:${hpa}`, target: `HorizontalPodAutoscaler ${hpa}` });
    }
  }
  return { key, createdMs, claims };
}

/** Whether `a` is older than `b`: creation time, then namespace/name. */
function older(a: PolicyClaims, b: PolicyClaims): boolean {
  if (a.createdMs !== b.createdMs) return a.createdMs < b.createdMs;
  return a.key < b.key;
}

/**
 * The duplicates among `policies`, by policy key: each claim is owned by its oldest claimant
 * (see the module comment); a policy that does not own every claim it makes is a duplicate of the
 * owner of the first one it does not. Owners are not in the map. Pure; O(n · claims).
 */
export function claimOwners(policies: Iterable<PolicyClaims>): Map<string, Duplicate> {
  return claimVerdicts(policies).duplicates;
}

/** The owner of each claim (by claim key) and the duplicates, by policy key. Pure; O(n · claims). */
function claimVerdicts(policies: Iterable<PolicyClaims>): {
  owners: Map<string, { policy: PolicyClaims; claim: Claim }>;
  duplicates: Map<string, Duplicate>;
} {
  const owners = new Map<string, { policy: PolicyClaims; claim: Claim }>();
  const all: PolicyClaims[] = [];
  for (const p of policies) {
    all.push(p);
    for (const claim of p.claims) {
      const held = owners.get(claim.key);
      if (!held || older(p, held.policy)) owners.set(claim.key, { policy: p, claim });
    }
  }
  const duplicates = new Map<string, Duplicate>();
  for (const p of all) {
    for (const claim of p.claims) {
      const held = owners.get(claim.key);
      if (!held || held.policy.key === p.key) continue;
      duplicates.set(p.key, { owner: held.policy.key, kind: claim.kind, target: held.claim.target });
      break;
    }
  }
  return { owners, duplicates };
}

/** The claim key of an Azure instance or replica (its resource ID compared case-insensitively). */
export function instanceClaimKey(resourceId: string): string {
  return `instance:${resourceKey(resourceId)}`;
}

/** What a duplicate's `Conflict` condition says: reason `DuplicatePolicy`, the shared target and its owner. */
export function duplicateConflict(duplicate: Duplicate): { reason: "DuplicatePolicy"; message: string } {
  return {
    reason: "DuplicatePolicy",
    message: `CapacityPolicy ${duplicate.owner} already manages the ${duplicate.target} (the oldest policy naming it owns it): this policy sends nothing to Azure or to the app servers while ${duplicate.owner} names it; delete this policy or point it at another target`,
  };
}

const sameClaims = (a: PolicyClaims | undefined, b: PolicyClaims): boolean =>
  a !== undefined &&
  a.createdMs === b.createdMs &&
  a.claims.length === b.claims.length &&
  a.claims.every((c, i) => c.key === b.claims[i]?.key && c.target === b.claims[i]?.target);

const sameVerdict = (a: Duplicate | undefined, b: Duplicate | undefined): boolean =>
  a === b ||
  (a !== undefined && b !== undefined && a.owner === b.owner && a.kind === b.kind && a.target === b.target);

/**
 * The claims of the watched policies, kept from watch events, and the duplicates among them.
 * `set` and `delete` are O(claims); {@link refresh} rebuilds the verdicts (O(n)) only after some
 * policy's claims changed.
 */
export class ClaimIndex {
  readonly #claims = new Map<string, PolicyClaims>();
  #duplicates = new Map<string, Duplicate>();
  #owners = new Map<string, string>();
  #dirty = false;

  /** Records a policy's claims (from {@link policyClaims}). */
  set(claims: PolicyClaims): void {
    if (sameClaims(this.#claims.get(claims.key), claims)) return;
    this.#claims.set(claims.key, claims);
    this.#dirty = true;
  }

  /** Forgets a deleted policy. */
  delete(key: string): void {
    if (this.#claims.delete(key)) this.#dirty = true;
  }

  /**
   * Rebuilds the verdicts if some policy's claims changed; returns the keys of the policies whose
   * verdict changed (became a duplicate, became an owner, or now duplicate another owner or target).
   */
  refresh(): string[] {
    if (!this.#dirty) return [];
    this.#dirty = false;
    const before = this.#duplicates;
    const verdicts = claimVerdicts(this.#claims.values());
    this.#duplicates = verdicts.duplicates;
    this.#owners = new Map([...verdicts.owners].map(([k, v]) => [k, v.policy.key]));
    const changed: string[] = [];
    for (const [k, d] of this.#duplicates) if (!sameVerdict(before.get(k), d)) changed.push(k);
    for (const k of before.keys()) if (!this.#duplicates.has(k) && this.#claims.has(k)) changed.push(k);
    return changed;
  }

  /**
   * namespace/name of the policy that owns an Azure instance or replica (by resource ID, any
   * case), as of the last {@link refresh}; undefined when no valid policy names it.
   */
  instanceOwner(resourceId: string): string | undefined {
    return this.#owners.get(instanceClaimKey(resourceId));
  }

  /** The owner a policy duplicates, as of the last {@link refresh}; undefined for an owner. */
  duplicateOf(key: string): Duplicate | undefined {
    return this.#duplicates.get(key);
  }
}
