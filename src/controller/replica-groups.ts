/**
 * Geo-replica groups (Azure SignalR / Web PubSub replicas, Premium tier): which instances the
 * cycle's targets share a group with, read from ARM, and what a pass makes of it — the failover
 * rule's view of the group (`autoscale/failover.ts`) and `status.geoReplicas`.
 *
 * Reads (Replicas_List of the instance, through the Azure adapter):
 * - a group with a replica among the cycle's targets, or known to have replicas, is listed every
 *   cycle: the failover rule needs every member's serving state now;
 * - a Premium instance not known to have replicas is listed at most every
 *   {@link REPLICA_DISCOVERY_MS} (10 minutes), to find replicas added since; Standard and Free
 *   instances have none (replicas are a Premium feature: "Geo-replication in Azure SignalR
 *   Service"), and are never listed;
 * - after a failed list the last answer stands (a failed read never empties a group), and the
 *   next try waits {@link REPLICA_RETRY_MS}.
 *
 * The pure parts ({@link groupObservation}, {@link geoReplicasStatus}) take what was read (each
 * member with the policy that owns it, from the ownership index) and return plain values.
 */
import type { GeoReplicasStatus } from "../api/index.js";
import { MAX_GEO_REPLICAS } from "../api/schema.js";
import type { ReplicaGroupObservation, ReplicaMember } from "../autoscale/failover.js";
import type { MetricSample } from "../autoscale/samples.js";
import type { InstanceState } from "../azure/instances.js";
import { parseResourceId, resourceKey } from "../azure/resource-id.js";

/** How often a Premium instance without known replicas is listed for new ones, ms: 10 minutes. */
export const REPLICA_DISCOVERY_MS = 10 * 60_000;

/** After a failed list of a group, the next try of it waits this long, ms: 1 minute. */
export const REPLICA_RETRY_MS = 60_000;

/** What ARM says about a member, as far as a group needs it (`InstanceState` of the adapter). */
export type MemberState = InstanceState & { serving?: boolean; notServingReason?: string };

/** What lists an instance's replicas (the Azure adapter's `listReplicas`). */
export type ReplicaLister = (primaryId: string, options: { signal?: AbortSignal }) => Promise<MemberState[]>;

/** One group as last listed. */
export interface GroupRead {
  /** Canonical ID of the instance (the primary). */
  primaryId: string;
  /** Its replicas, as ARM listed them. */
  replicas: readonly MemberState[];
  /** When that list answered, ms since the epoch. */
  readAtMs: number;
}

/** A group member's state and its metrics samples of this cycle. */
export interface GroupMemberReading {
  /** What ARM last said of it (for a replica, from the group's last list: see `fresh`). */
  state: MemberState | undefined;
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
  members: ReadonlyMap<string, GroupMemberReading>;
}

/** The cache of each group's last list, and which groups a cycle lists. */
export class ReplicaGroupReader {
  readonly #list: ReplicaLister;
  readonly #groups = new Map<string, GroupRead>();
  readonly #failedAt = new Map<string, number>();

  constructor(list: ReplicaLister) {
    this.#list = list;
  }

  /**
   * The instances (primary IDs) to list this cycle, from the targets and what ARM said of them:
   * see the module comment.
   */
  due(
    targets: readonly { resourceId: string; instance?: InstanceState | undefined }[],
    nowMs: number,
  ): string[] {
    const due = new Map<string, string>();
    for (const t of targets) {
      const ref = parseResourceId(t.resourceId);
      const key = resourceKey(ref.primaryId);
      if (due.has(key)) continue;
      const failed = this.#failedAt.get(key);
      if (failed !== undefined && nowMs - failed < REPLICA_RETRY_MS) continue;
      const known = this.#groups.get(key);
      const replicaTarget = ref.replica !== undefined;
      const premium = t.instance?.sku.startsWith("Premium_") ?? false;
      const hasReplicas = (known?.replicas.length ?? 0) > 0;
      const discoveryDue = !known || nowMs - known.readAtMs >= REPLICA_DISCOVERY_MS;
      if (replicaTarget || hasReplicas || (premium && discoveryDue)) due.set(key, ref.primaryId);
    }
    return [...due.values()];
  }

  /**
   * Lists the groups of `primaryIds` (at most four at once); a failure keeps the last answer.
   * @throws only the caller's abort.
   */
  async read(primaryIds: readonly string[], nowMs: number, options: { signal?: AbortSignal }): Promise<void> {
    const queue = [...primaryIds];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const key = resourceKey(id);
        try {
          const replicas = await this.#list(id, options);
          this.#groups.set(key, { primaryId: id, replicas, readAtMs: nowMs });
          this.#failedAt.delete(key);
        } catch (err) {
          if (options.signal?.aborted) throw err;
          this.#failedAt.set(key, nowMs);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, queue.length) }, worker));
  }

  /** The last list of the group of `resourceId` (a primary or a replica), if any. */
  group(resourceId: string): GroupRead | undefined {
    return this.#groups.get(resourceKey(parseResourceId(resourceId).primaryId));
  }

  /** Forgets a group whose last policy was deleted or retargeted. */
  forget(resourceId: string): void {
    const key = resourceKey(parseResourceId(resourceId).primaryId);
    this.#groups.delete(key);
    this.#failedAt.delete(key);
  }
}

/** Why a member does not serve, when ARM says so; undefined when it serves (or says nothing). */
function notServing(state: MemberState | undefined): string | undefined {
  if (!state || state.serving !== false) return undefined;
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
