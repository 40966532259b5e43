/**
 * What refuses a write before it changes an instance, besides the service's own validation: ARM
 * resource locks, Azure Policy deny assignments and the subscription's unit quota per region. The
 * tables hold the rules the control API sets; the `…Error` functions build the answers ARM gives.
 * Pure: no clock, no I/O.
 *
 * The answers, from Azure's documentation and reported answers:
 * - a write under a `ReadOnly` lock: 409 `ScopeLocked`, "The scope '<resource ID>' cannot perform
 *   write operation because following scope(s) are locked: '<lock scope>'. Please remove the lock
 *   and try again." ("Lock your resources to protect your infrastructure"; `CanNotDelete` refuses
 *   deletes only, which the emulator does not serve);
 * - a write an Azure Policy assignment denies: 403 `RequestDisallowedByPolicy`, target the
 *   resource name, "Resource '<name>' was disallowed by policy. Policy identifiers:
 *   '[{"policyAssignment":{"name":…,"id":…},"policyDefinition":{"name":…,"id":…}}]'.", with
 *   `additionalInfo` of type `PolicyViolation` ("Resolve errors for request disallowed by policy");
 * - a write over the unit quota: 409 `OperationNotAllowed`, "Operation results in exceeding quota
 *   limits of <what>. Maximum allowed: <n>, Current in use: <n>, Additional requested: <n>." — the
 *   shape of ARM's quota refusals ("Resolve errors for resource quotas"); the default quota of Azure
 *   SignalR Service is 150 units per subscription and region ("Azure SignalR Service limits"), and
 *   none is set unless asked (`--unit-quota`, `POST /_emulator/quotas`).
 */
import type { ServiceKind } from "../capacity/index.js";
import { armKey, normalizeLocation } from "./arm-id.js";
import { armError, type EmulatorResponse, isObject } from "./http.js";

/** A rule the control API could not take; the message says which field. */
export class RuleSpecError extends Error {
  override readonly name = "RuleSpecError";
}

/** ARM lock levels. */
export type LockLevel = "ReadOnly" | "CanNotDelete";
const LOCK_LEVELS: readonly LockLevel[] = ["ReadOnly", "CanNotDelete"];

/** A management lock on a subscription, a resource group or a resource. */
export interface ResourceLock {
  /** `/subscriptions/<s>`, `/subscriptions/<s>/resourceGroups/<g>` or a resource ID, as given. */
  scope: string;
  level: LockLevel;
  /** Lock name (default `emulator-<level>`). */
  name: string;
}

/** What a policy assignment denies: writes to these SKUs, or to more units than `maxUnits`. */
export interface PolicyDeny {
  skus?: string[];
  maxUnits?: number;
}

/** An Azure Policy assignment with the deny effect. */
export interface PolicyAssignment {
  name: string;
  /** Where it is assigned (default: every subscription: the request's). */
  scope?: string;
  deny: PolicyDeny;
}

/** A unit quota; absent fields match any subscription, region or service. */
export interface UnitQuota {
  subscriptionId?: string;
  region?: string;
  service?: ServiceKind;
  /** Units the service's instances of the subscription in the region may hold together. */
  units: number;
}

/** What a write asks for, as the rules see it. */
export interface WriteTarget {
  resourceId: string;
  /** Resource name (last segment). */
  name: string;
  subscriptionId: string;
  sku: string;
  units: number;
}

/** A normalized scope: no trailing slash; a subscription, resource group or deeper. */
function normalizeScope(scope: unknown): string {
  if (typeof scope !== "string") throw new RuleSpecError("scope must be a resource or resource group ID");
  const s = scope.trim().replace(/\/+$/, "");
  const parts = s.split("/");
  const ok =
    s.startsWith("/") &&
    parts[1]?.toLowerCase() === "subscriptions" &&
    (parts[2] ?? "") !== "" &&
    (parts.length === 3 ||
      (parts[3]?.toLowerCase() === "resourcegroups" && (parts[4] ?? "") !== "" && parts.length >= 5));
  if (!ok) {
    throw new RuleSpecError(
      `scope "${scope}" is not /subscriptions/<s>, /subscriptions/<s>/resourceGroups/<g> or a resource ID under it`,
    );
  }
  return s;
}

/** True when `scope` is `resourceId` or one of its parents. */
function covers(scope: string, resourceId: string): boolean {
  const s = armKey(scope);
  const id = armKey(resourceId);
  return id === s || id.startsWith(`${s}/`);
}

function subscriptionOfScope(scope: string): string {
  return scope.split("/")[2] as string;
}

const NAME = /^[^/?#\\]{1,128}$/;

/** The locks, policy assignments and unit quotas in force. */
export class RefusalRules {
  readonly #locks: ResourceLock[] = [];
  readonly #policies = new Map<string, PolicyAssignment>();
  readonly #quotas: UnitQuota[] = [];

  /** Adds a lock (replacing one of the same scope and name). @throws RuleSpecError */
  addLock(spec: { scope: unknown; level: unknown; name?: unknown }): ResourceLock {
    const scope = normalizeScope(spec.scope);
    if (!LOCK_LEVELS.includes(spec.level as LockLevel))
      throw new RuleSpecError(`level must be ReadOnly or CanNotDelete, got ${JSON.stringify(spec.level)}`);
    const level = spec.level as LockLevel;
    if (spec.name !== undefined && (typeof spec.name !== "string" || !NAME.test(spec.name)))
      throw new RuleSpecError("name must be a lock name (1–128 characters, no / ? # \\)");
    const name = (spec.name as string | undefined) ?? `emulator-${level}`;
    const lock: ResourceLock = { scope, level, name };
    this.removeLocks(scope, name);
    this.#locks.push(lock);
    return { ...lock };
  }

  /** Removes the locks at exactly `scope` (all of them, or the one named `name`); how many went. */
  removeLocks(scope: string, name?: string): number {
    const key = armKey(scope);
    let removed = 0;
    for (let i = this.#locks.length - 1; i >= 0; i--) {
      const l = this.#locks[i] as ResourceLock;
      if (armKey(l.scope) === key && (name === undefined || l.name === name)) {
        this.#locks.splice(i, 1);
        removed++;
      }
    }
    return removed;
  }

  locks(): ResourceLock[] {
    return this.#locks.map((l) => ({ ...l }));
  }

  /** The `ReadOnly` locks on `resourceId` or its parents (they refuse every write). */
  writeLocksOn(resourceId: string): ResourceLock[] {
    return this.#locks
      .filter((l) => l.level === "ReadOnly" && covers(l.scope, resourceId))
      .map((l) => ({ ...l }));
  }

  /** Sets a policy assignment (replacing one of the same name). @throws RuleSpecError */
  setPolicy(spec: { name: unknown; scope?: unknown; deny: unknown }): PolicyAssignment {
    if (typeof spec.name !== "string" || !NAME.test(spec.name))
      throw new RuleSpecError("name must be a policy assignment name (1–128 characters, no / ? # \\)");
    if (!isObject(spec.deny)) throw new RuleSpecError("deny must be an object: { skus?, maxUnits? }");
    const { skus, maxUnits } = spec.deny;
    if (skus !== undefined && (!Array.isArray(skus) || !skus.every((s) => typeof s === "string")))
      throw new RuleSpecError("deny.skus must be a list of SKU names");
    if (
      maxUnits !== undefined &&
      (typeof maxUnits !== "number" || !Number.isInteger(maxUnits) || maxUnits < 0)
    )
      throw new RuleSpecError("deny.maxUnits must be a whole number ≥ 0");
    if (skus === undefined && maxUnits === undefined) throw new RuleSpecError("deny needs skus or maxUnits");
    const policy: PolicyAssignment = {
      name: spec.name,
      ...(spec.scope !== undefined ? { scope: normalizeScope(spec.scope) } : {}),
      deny: {
        ...(skus !== undefined ? { skus: [...(skus as string[])] } : {}),
        ...(maxUnits !== undefined ? { maxUnits: maxUnits as number } : {}),
      },
    };
    this.#policies.set(policy.name.toLowerCase(), policy);
    return structuredClone(policy);
  }

  /** Removes a policy assignment; false when there was none of that name. */
  removePolicy(name: string): boolean {
    return this.#policies.delete(name.toLowerCase());
  }

  policies(): PolicyAssignment[] {
    return [...this.#policies.values()].map((p) => structuredClone(p));
  }

  /** The assignments whose scope covers the target and whose deny matches its SKU or units. */
  denyingPolicies(target: WriteTarget): PolicyAssignment[] {
    return [...this.#policies.values()]
      .filter((p) => p.scope === undefined || covers(p.scope, target.resourceId))
      .filter(
        (p) =>
          (p.deny.skus?.some((s) => s.toLowerCase() === target.sku.toLowerCase()) ?? false) ||
          (p.deny.maxUnits !== undefined && target.units > p.deny.maxUnits),
      )
      .map((p) => structuredClone(p));
  }

  /** Sets a unit quota (replacing one with the same subscription, region and service). @throws RuleSpecError */
  setQuota(spec: {
    subscriptionId?: unknown;
    region?: unknown;
    service?: unknown;
    units: unknown;
  }): UnitQuota {
    for (const k of ["subscriptionId", "region"] as const) {
      const v = spec[k];
      if (v !== undefined && (typeof v !== "string" || v.trim() === ""))
        throw new RuleSpecError(`${k} must be a non-empty string`);
    }
    if (spec.service !== undefined && spec.service !== "SignalR" && spec.service !== "WebPubSub")
      throw new RuleSpecError("service must be SignalR or WebPubSub");
    const units = spec.units;
    if (typeof units !== "number" || !Number.isInteger(units) || units < 0)
      throw new RuleSpecError("units must be a whole number ≥ 0");
    const quota: UnitQuota = {
      ...(spec.subscriptionId !== undefined ? { subscriptionId: spec.subscriptionId as string } : {}),
      ...(spec.region !== undefined ? { region: normalizeLocation(spec.region as string) } : {}),
      ...(spec.service !== undefined ? { service: spec.service as ServiceKind } : {}),
      units,
    };
    this.removeQuota(quota);
    this.#quotas.push(quota);
    return { ...quota };
  }

  /** Removes the quota with exactly this subscription, region and service; false when none. */
  removeQuota(key: { subscriptionId?: string; region?: string; service?: ServiceKind }): boolean {
    const i = this.#quotas.findIndex((q) => sameQuotaKey(q, key));
    if (i < 0) return false;
    this.#quotas.splice(i, 1);
    return true;
  }

  clearQuotas(): void {
    this.#quotas.length = 0;
  }

  quotas(): UnitQuota[] {
    return this.#quotas.map((q) => ({ ...q }));
  }

  /**
   * The quota in force for a service's instances of a subscription in a region: the most specific
   * matching one (most fields given; the later set of equals), or `undefined` (unlimited).
   */
  quotaFor(subscriptionId: string, region: string, service: ServiceKind): UnitQuota | undefined {
    let best: UnitQuota | undefined;
    let bestScore = -1;
    for (const q of this.#quotas) {
      if (q.subscriptionId !== undefined && q.subscriptionId.toLowerCase() !== subscriptionId.toLowerCase())
        continue;
      if (q.region !== undefined && q.region !== normalizeLocation(region)) continue;
      if (q.service !== undefined && q.service !== service) continue;
      const score =
        Number(q.subscriptionId !== undefined) +
        Number(q.region !== undefined) +
        Number(q.service !== undefined);
      if (score >= bestScore) {
        best = q;
        bestScore = score;
      }
    }
    return best ? { ...best } : undefined;
  }
}

function sameQuotaKey(
  q: UnitQuota,
  key: { subscriptionId?: string; region?: string; service?: ServiceKind },
): boolean {
  return (
    (q.subscriptionId?.toLowerCase() ?? "") === (key.subscriptionId?.toLowerCase() ?? "") &&
    (q.region ?? "") === (key.region !== undefined ? normalizeLocation(key.region) : "") &&
    (q.service ?? "") === (key.service ?? "")
  );
}

/** 409 `ScopeLocked` for a write to `resourceId` under `locks`. */
export function scopeLockedError(resourceId: string, locks: readonly ResourceLock[]): EmulatorResponse {
  const scopes = locks.map((l) => `'${l.scope}'`).join(", ");
  return armError(
    409,
    "ScopeLocked",
    `The scope '${resourceId}' cannot perform write operation because following scope(s) are locked: ${scopes}. Please remove the lock and try again.`,
  );
}

/** 403 `RequestDisallowedByPolicy` for a write to `target` denied by `assignments`. */
export function policyDeniedError(
  target: WriteTarget,
  assignments: readonly PolicyAssignment[],
): EmulatorResponse {
  const identifiers = assignments.map((p) => {
    const scope = p.scope ?? `/subscriptions/${target.subscriptionId}`;
    const sub = p.scope ? subscriptionOfScope(p.scope) : target.subscriptionId;
    return {
      policyAssignment: {
        name: p.name,
        id: `${scope}/providers/Microsoft.Authorization/policyAssignments/${p.name}`,
      },
      policyDefinition: {
        name: p.name,
        id: `/subscriptions/${sub}/providers/Microsoft.Authorization/policyDefinitions/${p.name}`,
      },
    };
  });
  return armError(
    403,
    "RequestDisallowedByPolicy",
    `Resource '${target.name}' was disallowed by policy. Policy identifiers: '${JSON.stringify(identifiers)}'.`,
    {},
    {
      target: target.name,
      additionalInfo: identifiers.map((id, i) => ({
        type: "PolicyViolation",
        info: {
          policyDefinitionDisplayName: assignments[i]?.name,
          policyAssignmentName: id.policyAssignment.name,
          policyAssignmentId: id.policyAssignment.id,
          policyDefinitionId: id.policyDefinition.id,
          policyDefinitionEffect: "Deny",
        },
      })),
    },
  );
}

/** The unit use a write would leave in a subscription and region. */
export interface UnitUse {
  service: ServiceKind;
  region: string;
  /** Units held now by the service's instances of the subscription in the region. */
  inUse: number;
  /** Units the write adds (target − the instance's current units). */
  requested: number;
}

/** 409 `OperationNotAllowed` when `use` goes over `quota`; `undefined` when it fits or adds none. */
export function quotaExceededError(quota: UnitQuota | undefined, use: UnitUse): EmulatorResponse | undefined {
  if (!quota || use.requested <= 0 || use.inUse + use.requested <= quota.units) return undefined;
  return armError(
    409,
    "OperationNotAllowed",
    `Operation results in exceeding quota limits of ${use.service} units in region '${use.region}'. Maximum allowed: ${quota.units}, Current in use: ${use.inUse}, Additional requested: ${use.requested}.`,
  );
}
