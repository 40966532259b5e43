/**
 * coordination.k8s.io/v1 Lease primitives for leader election, with resourceVersion-based
 * optimistic concurrency (a lost race is a ConflictError), and one election step,
 * `tryAcquireOrRenew`, with client-go's leaderelection semantics.
 */
import { type V1Lease, V1MicroTime } from "@kubernetes/client-node";
import type { KubeClients } from "./client.js";
import { ConflictError, kubeCall, NotFoundError, toKubeError } from "./errors.js";

export interface LeaseRecord {
  /** Empty or undefined: nobody holds the lease. */
  readonly holderIdentity: string | undefined;
  readonly leaseDurationSeconds: number | undefined;
  readonly acquireTime: Date | undefined;
  readonly renewTime: Date | undefined;
  readonly leaseTransitions: number;
}

export interface Lease {
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
  readonly record: LeaseRecord;
}

export type LeaseOutcome =
  /** No Lease existed; we created it holding it. */
  | "created"
  /** We held it and renewed it. */
  | "renewed"
  /** It was free (no holder) or expired; we took it over. */
  | "acquired"
  /** Someone else holds it and it has not expired. */
  | "heldByOther"
  /** Someone else wrote it between our read and our write (409). */
  | "lostRace";

export interface AcquireResult {
  readonly acquired: boolean;
  readonly outcome: LeaseOutcome;
  /** The Lease as written by us, or as last seen. */
  readonly lease: Lease | undefined;
}

/** Reads a MicroTime/Time value (client-node returns MicroTime as the wire string). */
export function parseKubeTime(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value !== "string" || value === "") return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function toLease(namespace: string, name: string, lease: V1Lease): Lease {
  const spec = lease.spec;
  return {
    namespace,
    name,
    resourceVersion: lease.metadata?.resourceVersion ?? "",
    record: {
      holderIdentity: spec?.holderIdentity,
      leaseDurationSeconds: spec?.leaseDurationSeconds,
      acquireTime: parseKubeTime(spec?.acquireTime),
      renewTime: parseKubeTime(spec?.renewTime),
      leaseTransitions: spec?.leaseTransitions ?? 0,
    },
  };
}

function toSpec(record: LeaseRecord): NonNullable<V1Lease["spec"]> {
  return {
    ...(record.holderIdentity === undefined ? {} : { holderIdentity: record.holderIdentity }),
    ...(record.leaseDurationSeconds === undefined
      ? {}
      : { leaseDurationSeconds: record.leaseDurationSeconds }),
    ...(record.acquireTime === undefined
      ? {}
      : { acquireTime: new V1MicroTime(record.acquireTime.getTime()) }),
    ...(record.renewTime === undefined ? {} : { renewTime: new V1MicroTime(record.renewTime.getTime()) }),
    leaseTransitions: record.leaseTransitions,
  };
}

/** The Lease object with `metadata` and the spec of `record`. */
function leaseObject(metadata: NonNullable<V1Lease["metadata"]>, record: LeaseRecord): V1Lease {
  return { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata, spec: toSpec(record) };
}

/**
 * True when the record's holder may still act as leader at `now`: it has a holder and
 * `renewTime + leaseDurationSeconds >= now`. A record without renewTime or duration is expired.
 * (client-go measures expiry from when *it* observed the record change, which tolerates clock
 * skew between replicas; this stateless form uses the recorded renewTime.)
 */
export function isLeaseHeld(record: LeaseRecord, now: Date): boolean {
  if (record.holderIdentity === undefined || record.holderIdentity === "") return false;
  if (record.renewTime === undefined || record.leaseDurationSeconds === undefined) return false;
  return record.renewTime.getTime() + record.leaseDurationSeconds * 1000 >= now.getTime();
}

export class LeaseClient {
  constructor(private readonly clients: KubeClients) {}

  /** The Lease, or undefined when it does not exist. */
  async get(namespace: string, name: string): Promise<Lease | undefined> {
    try {
      return toLease(
        namespace,
        name,
        await this.clients.coordination.readNamespacedLease({ namespace, name }),
      );
    } catch (err) {
      const error = toKubeError(err, `get leases ${namespace}/${name}`);
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /** Creates the Lease; ConflictError (reason AlreadyExists) when it exists. */
  async create(namespace: string, name: string, record: LeaseRecord): Promise<Lease> {
    return kubeCall(`create leases ${namespace}/${name}`, async () => {
      const created = await this.clients.coordination.createNamespacedLease({
        namespace,
        body: leaseObject({ name, namespace }, record),
      });
      return toLease(namespace, name, created);
    });
  }

  /** Replaces the Lease's spec if it still has `lease.resourceVersion`; ConflictError otherwise. */
  async update(lease: Lease, record: LeaseRecord): Promise<Lease> {
    const { namespace, name } = lease;
    return kubeCall(`update leases ${namespace}/${name}`, async () => {
      const updated = await this.clients.coordination.replaceNamespacedLease({
        namespace,
        name,
        body: leaseObject({ name, namespace, resourceVersion: lease.resourceVersion }, record),
      });
      return toLease(namespace, name, updated);
    });
  }

  /**
   * One election step, as client-go's `tryAcquireOrRenew`: create the Lease if missing; renew it
   * if we hold it; take it over if it is free or expired (`renewTime + leaseDuration < now`),
   * counting a transition; otherwise report who holds it. A 409 on create or update means another
   * candidate won the race: `{acquired: false, outcome: "lostRace"}`. Other errors are thrown.
   */
  async tryAcquireOrRenew(
    name: string,
    namespace: string,
    identity: string,
    leaseDurationSeconds: number,
    now: Date,
  ): Promise<AcquireResult> {
    if (identity === "") throw new RangeError("identity must not be empty");
    const existing = await this.get(namespace, name);
    if (existing === undefined) {
      try {
        const lease = await this.create(namespace, name, {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        });
        return { acquired: true, outcome: "created", lease };
      } catch (err) {
        if (err instanceof ConflictError) return { acquired: false, outcome: "lostRace", lease: undefined };
        throw err;
      }
    }
    const old = existing.record;
    const ours = old.holderIdentity === identity;
    if (!ours && isLeaseHeld(old, now)) {
      return { acquired: false, outcome: "heldByOther", lease: existing };
    }
    const record: LeaseRecord = ours
      ? {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: old.acquireTime ?? now,
          renewTime: now,
          leaseTransitions: old.leaseTransitions,
        }
      : {
          holderIdentity: identity,
          leaseDurationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: old.leaseTransitions + 1,
        };
    try {
      const lease = await this.update(existing, record);
      return { acquired: true, outcome: ours ? "renewed" : "acquired", lease };
    } catch (err) {
      if (err instanceof ConflictError) return { acquired: false, outcome: "lostRace", lease: existing };
      throw err;
    }
  }

  /**
   * Gives the lease up if we hold it (client-go's ReleaseOnCancel): clears the holder and sets a
   * 1 s duration, so another candidate takes over at once. Returns false when we did not hold it
   * or lost a race.
   */
  async release(name: string, namespace: string, identity: string, now: Date): Promise<boolean> {
    const existing = await this.get(namespace, name);
    if (existing === undefined || existing.record.holderIdentity !== identity) return false;
    try {
      await this.update(existing, {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: existing.record.leaseTransitions,
      });
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }
}
