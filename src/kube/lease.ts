/**
 * coordination.k8s.io/v1 Lease primitives for leader election, with resourceVersion-based
 * optimistic concurrency (a lost race is a ConflictError), and one election step,
 * `tryAcquireOrRenew`, with client-go's leaderelection semantics.
 *
 * Expiry follows client-go (`tools/leaderelection/leaderelection.go`, `observedRecord` and
 * `observedTime`): a candidate judges a lease only on its own monotonic clock, from the moment it
 * last saw the record change. `renewTime` and `acquireTime` are written for people and tools to
 * read, never compared with this replica's clock: the holder's clock may run ahead or behind.
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
  /** What this candidate has now seen of the Lease: hand it to the next step. */
  readonly observed: LeaseObservation | undefined;
}

/**
 * What a candidate last saw of a Lease and when, on its own monotonic clock (client-go's
 * `observedRecord`, `observedRawRecord` and `observedTime`).
 */
export interface LeaseObservation {
  /** The record as seen. */
  readonly record: LeaseRecord;
  /** resourceVersion and every record field: a change of any of them is a change of the record. */
  readonly key: string;
  /** This candidate's monotonic clock when it first saw this record, ms (`performance.now()`). */
  readonly seenAtMs: number;
}

/** The times of one election step. */
export interface LeaseTimes {
  /** Wall-clock time written into `renewTime` and `acquireTime` (for readers; never compared). */
  readonly wall: Date;
  /** This replica's monotonic clock, ms (`performance.now()`): the only clock expiry is judged on. */
  readonly monotonicMs: number;
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

/** The identity of a Lease's state: its resourceVersion and every field of its record. */
function observationKey(lease: Lease): string {
  const r = lease.record;
  return JSON.stringify([
    lease.resourceVersion,
    r.holderIdentity ?? "",
    r.leaseDurationSeconds ?? null,
    r.acquireTime?.toISOString() ?? null,
    r.renewTime?.toISOString() ?? null,
    r.leaseTransitions,
  ]);
}

/**
 * What a candidate knows after reading `lease` at monotonic time `monotonicMs`: the previous
 * observation when the Lease has not changed since (so its age keeps growing), a new one seen
 * now otherwise. Pure.
 */
export function observeLease(
  previous: LeaseObservation | undefined,
  lease: Lease,
  monotonicMs: number,
): LeaseObservation {
  const key = observationKey(lease);
  if (previous !== undefined && previous.key === key) return previous;
  return { record: lease.record, key, seenAtMs: monotonicMs };
}

/**
 * True when the observed holder may still act as leader at monotonic time `monotonicMs`: the
 * record has a holder and less than its `leaseDurationSeconds` (`fallbackDurationSeconds` when it
 * has none) has passed on this candidate's clock since the record last changed. Pure; no
 * timestamp of the record is read, so the holder's clock skew cannot shorten or stretch a lease.
 */
export function isLeaseHeld(
  observed: LeaseObservation,
  monotonicMs: number,
  fallbackDurationSeconds: number,
): boolean {
  const { holderIdentity, leaseDurationSeconds } = observed.record;
  if (holderIdentity === undefined || holderIdentity === "") return false;
  const duration = leaseDurationSeconds ?? fallbackDurationSeconds;
  return observed.seenAtMs + duration * 1000 > monotonicMs;
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
   * if we hold it; take it over if it is free or expired — expired meaning its record has not
   * changed for `leaseDurationSeconds` on this candidate's monotonic clock since `observed` (see
   * {@link isLeaseHeld}; a record never seen before is fresh) — counting a transition; otherwise
   * report who holds it. Pass the result's `observed` to the next step. A 409 on create or update
   * means another candidate won the race: `{acquired: false, outcome: "lostRace"}`.
   * @throws RangeError for an empty identity; the Kubernetes error of any other failed call.
   */
  async tryAcquireOrRenew(
    name: string,
    namespace: string,
    identity: string,
    leaseDurationSeconds: number,
    times: LeaseTimes,
    observed: LeaseObservation | undefined,
  ): Promise<AcquireResult> {
    if (identity === "") throw new RangeError("identity must not be empty");
    const now = times.wall;
    const wrote = (outcome: LeaseOutcome, lease: Lease): AcquireResult => ({
      acquired: true,
      outcome,
      lease,
      observed: observeLease(undefined, lease, times.monotonicMs),
    });
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
        return wrote("created", lease);
      } catch (err) {
        if (err instanceof ConflictError)
          return { acquired: false, outcome: "lostRace", lease: undefined, observed };
        throw err;
      }
    }
    const seen = observeLease(observed, existing, times.monotonicMs);
    const old = existing.record;
    const ours = old.holderIdentity === identity;
    if (!ours && isLeaseHeld(seen, times.monotonicMs, leaseDurationSeconds)) {
      return { acquired: false, outcome: "heldByOther", lease: existing, observed: seen };
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
      return wrote(ours ? "renewed" : "acquired", await this.update(existing, record));
    } catch (err) {
      if (err instanceof ConflictError)
        return { acquired: false, outcome: "lostRace", lease: existing, observed: seen };
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
