/**
 * Geo-replica groups (Azure SignalR / Web PubSub replicas, Premium tier): which instances the
 * cycle's targets share a group with, read from ARM, and what a pass makes of it — the failover
 * rule's view of the group (`autoscale/failover.ts`) and `status.geoReplicas`.
 *
 * Reads (through the Azure adapter):
 * - discovery: every replica of a subscription and service in one list (ARM's generic resource
 *   list filtered to the replica type), at most every {@link REPLICA_DISCOVERY_MS} (10 minutes)
 *   per subscription and service the cycle's targets are in — one call however many instances,
 *   instead of one list per instance;
 * - a group with a replica among the cycle's targets, or found by discovery, is listed every
 *   cycle (Replicas_List of its instance): the failover rule needs every member's serving state
 *   now, and only the service's own answer has it (`resourceStopped`, `regionEndpointEnabled`);
 * - after a failed read the last answer stands (a failed read never empties a group), and the
 *   next try of it waits {@link REPLICA_RETRY_MS}.
 *
 * The pure parts ({@link groupObservation}, {@link geoReplicasStatus}) take what was read (each
 * member with the policy that owns it, from the ownership index) and return plain values.
 */
import type { GeoReplicasStatus } from "../api/index.js";
import { MAX_GEO_REPLICAS } from "../api/schema.js";
import type { ReplicaGroupObservation, ReplicaMember } from "../autoscale/failover.js";
import type { MetricSample } from "../autoscale/samples.js";
import type { InstanceState } from "../azure/instances.js";
import { forEachLimited } from "../azure/metrics.js";
import { parseResourceId, resourceKey } from "../azure/resource-id.js";
import type { ServiceKind } from "../capacity/skus.js";

/** How often a Premium instance without known replicas is listed for new ones, ms: 10 minutes. */
export const REPLICA_DISCOVERY_MS = 10 * 60_000;

/** After a failed list of a group, the next try of it waits this long, ms: 1 minute. */
export const REPLICA_RETRY_MS = 60_000;

/** What lists an instance's replicas (the Azure adapter's `listReplicas`). */
export type ReplicaLister = (
  primaryId: string,
  options: { signal?: AbortSignal },
) => Promise<InstanceState[]>;

/**
 * What lists every replica of one service in a subscription (the Azure adapter's
 * `listReplicaIds`): their resource IDs.
 */
export type ReplicaFinder = (
  subscriptionId: string,
  service: ServiceKind,
  options: { signal?: AbortSignal },
) => Promise<string[]>;

/** One group as last listed. */
export interface GroupRead {
  /** Canonical ID of the instance (the primary). */
  primaryId: string;
  /** Its replicas, as ARM listed them. */
  replicas: readonly InstanceState[];
  /** When that list answered, ms since the epoch. */
  readAtMs: number;
}

/** A group member's state and its metrics samples of this cycle. */
export interface GroupMemberReading {
  /** What ARM last said of it (for a replica, from the group's last list: see `fresh`). */
  state: InstanceState | undefined;
  /** The member's samples of this cycle (undefined when its metrics were not read or failed). */
  samples: readonly MetricSample[] | undefined;
  /** namespace/name of the CapacityPolicy that owns it (`ownership.ts`); absent: none. */
  policy?: string;
}

/** The group of one policy's target in one cycle's reading. */
export interface ReplicaGroupReading {
  primaryId: string;
  /** When the group was last listed, ms since the epoch. */
  readAtMs: number;
  /** The list answered this cycle: the replicas' states are current (else the last known). */
  fresh: boolean;
  /** Every member, the primary first, by canonical resource ID. */
  members: Map<string, GroupMemberReading>;
}

/** Ends of reads kept per key: the last answer's time and the last failure's. */
interface ReadTimes {
  okAtMs?: number;
  failedAtMs?: number;
}

/** True when a read last done as `times` is due at `nowMs` every `everyMs` (see the module comment). */
function readDue(times: ReadTimes | undefined, nowMs: number, everyMs: number): boolean {
  if (times?.failedAtMs !== undefined && nowMs - times.failedAtMs < REPLICA_RETRY_MS) return false;
  return times?.okAtMs === undefined || nowMs - times.okAtMs >= everyMs;
}

/** The cache of each group's last list and of the discovery, and which groups a cycle lists. */
export class ReplicaGroupReader {
  readonly #list: ReplicaLister;
  readonly #find: ReplicaFinder;
  readonly #groups = new Map<string, GroupRead>();
  readonly #groupReads = new Map<string, ReadTimes>();
  /** Primary key → its canonical ID, for every instance discovery found replicas of. */
  readonly #found = new Map<string, string>();
  /** Per subscription and service: the discovery's times and the primaries it found. */
  readonly #discovery = new Map<string, ReadTimes & { primaries: Set<string> }>();

  constructor(list: ReplicaLister, find: ReplicaFinder) {
    this.#list = list;
    this.#find = find;
  }

  /**
   * Reads what is due for `targets` this cycle — the discoveries, then the groups' lists (four at
   * a time) — keeping the last answer of each read that fails.
   * @throws only the caller's abort.
   */
  async read(
    targets: readonly { resourceId: string }[],
    nowMs: number,
    options: { signal?: AbortSignal },
  ): Promise<void> {
    const refs = targets.map((t) => parseResourceId(t.resourceId));
    const scopes = new Map<string, { subscriptionId: string; service: ServiceKind }>();
    for (const r of refs) scopes.set(`${r.subscriptionId.toLowerCase()}|${r.service}`, r);
    await forEachLimited([...scopes], 4, async ([key, scope]) => {
      const times = this.#discovery.get(key) ?? { primaries: new Set<string>() };
      if (!readDue(times, nowMs, REPLICA_DISCOVERY_MS)) return;
      try {
        const ids = await this.#find(scope.subscriptionId, scope.service, options);
        const primaries = new Set<string>();
        for (const id of ids) {
          const primaryId = parseResourceIdOrUndefined(id)?.primaryId;
          if (!primaryId) continue;
          this.#found.set(resourceKey(primaryId), primaryId);
          primaries.add(resourceKey(primaryId));
        }
        // An instance whose replicas are all gone is no group any more (a replica target's
        // group is listed all the same, and says so itself).
        for (const p of times.primaries) {
          if (primaries.has(p)) continue;
          this.#found.delete(p);
          this.#groups.delete(p);
        }
        this.#discovery.set(key, { primaries, okAtMs: nowMs });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        this.#discovery.set(key, { ...times, failedAtMs: nowMs });
      }
    });
    const due = new Map<string, string>();
    for (const r of refs) {
      const key = resourceKey(r.primaryId);
      const inGroup = r.replica !== undefined || this.#found.has(key);
      if (inGroup && readDue(this.#groupReads.get(key), nowMs, 0)) due.set(key, r.primaryId);
    }
    await forEachLimited([...due], 4, async ([key, primaryId]) => {
      try {
        const replicas = await this.#list(primaryId, options);
        this.#groups.set(key, { primaryId, replicas, readAtMs: nowMs });
        this.#groupReads.set(key, { okAtMs: nowMs });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        this.#groupReads.set(key, { ...this.#groupReads.get(key), failedAtMs: nowMs });
      }
    });
  }

  /** The last list of the group of `resourceId` (a primary or a replica), if any. */
  group(resourceId: string): GroupRead | undefined {
    return this.#groups.get(resourceKey(parseResourceId(resourceId).primaryId));
  }

  /** Forgets the group of a policy's target (deleted or retargeted); nothing for a malformed ID. */
  forget(resourceId: string): void {
    const ref = parseResourceIdOrUndefined(resourceId);
    if (!ref) return;
    const key = resourceKey(ref.primaryId);
    this.#groups.delete(key);
    this.#groupReads.delete(key);
  }
}

/** The parsed ID, or undefined for one that is not a SignalR or Web PubSub resource ID. */
function parseResourceIdOrUndefined(id: string): ReturnType<typeof parseResourceId> | undefined {
  try {
    return parseResourceId(id);
  } catch {
    return undefined;
  }
}

/** Why a member does not serve, when ARM says so; undefined when it serves (or says nothing). */
function notServing(state: InstanceState | undefined): string | undefined {
  if (state?.serving !== false) return undefined;
  return state.notServingReason ?? `provisioningState is ${state.provisioningState}`;
}

/** The connections of each bucket a sample knows them for, oldest first. */
function connectionSeries(samples: readonly MetricSample[] | undefined): ReplicaMember["connections"] {
  const points: { startMs: number; value: number }[] = [];
  for (const s of samples ?? []) {
    const value = s.connections;
    const startMs = typeof s.time === "string" ? Date.parse(s.time) : s.time.getTime();
    if (value === null || !Number.isFinite(value) || value < 0 || !Number.isFinite(startMs)) continue;
    points.push({ startMs, value });
  }
  return points.sort((a, b) => a.startMs - b.startMs);
}

/**
 * The failover rule's view of the group of `selfId`: every member with ARM's serving flag
 * (undefined when ARM did not list it this cycle) and its connections per bucket. Undefined when
 * the group has no replica (nothing to fail over to or from). Pure.
 */
export function groupObservation(
  selfId: string,
  group: ReplicaGroupReading | undefined,
): ReplicaGroupObservation | undefined {
  if (!group || group.members.size < 2) return undefined;
  const members: ReplicaMember[] = [];
  for (const [resourceId, m] of group.members) {
    const reason = notServing(m.state);
    const role = parseResourceId(resourceId).replica === undefined ? "Primary" : "Replica";
    // A replica's state is current only when its group's list answered this cycle.
    const current = m.state !== undefined && (group.fresh || role === "Primary");
    members.push({
      resourceId,
      role,
      location: m.state?.location ?? "unknown",
      serving: current ? m.state?.serving !== false : undefined,
      ...(reason ? { notServingReason: reason } : {}),
      sku: m.state?.sku ?? "Unknown",
      units: m.state?.units ?? 0,
      connections: connectionSeries(m.samples),
    });
  }
  return { self: parseResourceId(selfId).id, members };
}

/**
 * `status.geoReplicas` of the policy on `selfId`: the other members of its group, each with the
 * policy that owns it (`GroupMemberReading.policy`), at most
 * {@link MAX_GEO_REPLICAS}. Undefined when the group has no replica. Pure.
 */
export function geoReplicasStatus(
  selfId: string,
  group: ReplicaGroupReading | undefined,
): GeoReplicasStatus | undefined {
  if (!group || group.members.size < 2) return undefined;
  const self = resourceKey(selfId);
  const members: GeoReplicasStatus["members"] = [];
  for (const [resourceId, m] of group.members) {
    if (resourceKey(resourceId) === self || members.length >= MAX_GEO_REPLICAS) continue;
    const policy = m.policy;
    const reason = notServing(m.state);
    members.push({
      resourceId,
      role: parseResourceId(resourceId).replica === undefined ? "Primary" : "Replica",
      location: m.state?.location ?? "unknown",
      sku: m.state?.sku ?? "Unknown",
      units: m.state?.units ?? 0,
      ...(m.state ? { serving: m.state.serving !== false } : {}),
      ...(reason ? { notServingReason: reason.slice(0, 256) } : {}),
      ...(policy ? { policy } : {}),
    });
  }
  return {
    role: parseResourceId(selfId).replica === undefined ? "Primary" : "Replica",
    primary: group.primaryId,
    members,
    unmanaged: members.filter((m) => m.policy === undefined).length,
    readAt: new Date(group.readAtMs).toISOString(),
  };
}
