/**
 * The failover observation of a geo-replicated instance and its detection. Pure: the time comes in
 * as an argument.
 *
 * A Premium instance and its replicas (Microsoft.SignalRService/{SignalR|WebPubSub}/replicas) form
 * a replica group: each member serves the clients of its own region, and when one stops serving,
 * its clients reconnect to the others within seconds ("the Azure SignalR DNS will be resolved to
 * healthy replicas in other regions": Geo-replication in Azure SignalR, Microsoft Learn). The operator reads every member of a policy's target's group on
 * each pass ({@link ReplicaGroupObservation}); this file says which members are lost and since
 * when. The Failover rule (`anticipation/failover.ts`) sizes the survivors for the clients they are
 * about to receive; the scale-in gate (`stages/scale-in-gate.ts`) holds a member that is itself not
 * serving.
 *
 * A member is lost when:
 * - **NotServing**: ARM says it does not serve clients (`serving` false: provisioning state
 *   `Failed`/`Deleting`, `resourceStopped` "true", `regionEndpointEnabled` "Disabled"), visible at
 *   the first pass after the change; or
 * - **ConnectionsVanished**: its connections vanished while the others' rose. On the complete
 *   buckets (those that end at least the ingestion delay before now; a bucket it has no value for,
 *   after its newest known one, at a time another serving member has one, reads as a silent 0 —
 *   a region that is down gives Azure Monitor nothing at all), its newest run of buckets
 *   each at most {@link VANISHED_SHARE} (10 %) of its level is at least {@link VANISH_BUCKETS} (2)
 *   long — its level being the highest of the {@link LEVEL_BUCKETS} (5) buckets before the run, at
 *   least {@link MIN_LOST_CONNECTIONS} (100) — and, at the same bucket times, the other serving
 *   members' connections rose (their mean over the run − their mean over the level buckets,
 *   summed) by at least {@link ROSE_SHARE} (50 %) of what it lost. Why these figures:
 *   - 2 buckets: one low bucket is a dip (a restart of a few app servers, a scale-in whose removed
 *     units' clients reconnect within the minute, a bucket still filling); two in a row at a tenth
 *     of the level are not;
 *   - 10 %: a member that stopped serving has no clients left (its gauge reads 0 or the few
 *     connections of its app servers); a normal dip, even a night's, keeps far more than a tenth
 *     of the level of five minutes before;
 *   - 50 % of what it lost arriving at the others: clients reconnect within seconds, so the next
 *     bucket's Maximum carries them; some give up and the others' full quotas refuse some (their
 *     count is capped), hence half, not all. A member whose clients simply left (their region's
 *     night, a client outage) loses them without anyone else rising: not a failover. A sibling's
 *     scale-in keeps its connections (its removed units' clients reconnect to it within seconds),
 *     so it never vanishes;
 *   - 100 connections: below that a member's level is a few clients, whose comings and goings are
 *     not worth a scale-out of the others.
 * A lost member's `connections` is its level when it last served (for NotServing, the highest of
 * its newest {@link LEVEL_BUCKETS} complete buckets: ARM shows the loss before the metrics do).
 */

import type { FailoverCause, NotServingStatus } from "../api/index.js";
import { fmt } from "./format.js";

/** One member of a replica group (the primary or one of its replicas), as the operator last read it. */
export interface ReplicaMember {
  /** The member's canonical ARM resource ID. */
  resourceId: string;
  role: "Primary" | "Replica";
  /** Normalized region (`eastus`). */
  location: string;
  /** ARM's serving flag (InstanceState.serving); undefined when ARM could not be read this pass. */
  serving: boolean | undefined;
  /** Why ARM says it does not serve, in ARM's words (`resourceStopped is "true"`). */
  notServingReason?: string;
  sku: string;
  units: number;
  /**
   * Connections per one-minute bucket, oldest first, as read (ConnectionCount /
   * TotalConnectionCount, Maximum); a missing bucket is absent, never 0.
   */
  connections: readonly { startMs: number; value: number }[];
}

/** The replica group of the policy's target: every member, itself included. */
export interface ReplicaGroupObservation {
  /** The policy's target's canonical ID. */
  self: string;
  members: readonly ReplicaMember[];
}

/** One-minute bucket, ms. */
const BUCKET_MS = 60_000;
/** Newest complete buckets that must all have vanished. */
export const VANISH_BUCKETS = 2;
/** A vanished bucket is at most this share of the member's level. */
export const VANISHED_SHARE = 0.1;
/** Buckets before the vanished ones whose highest is the member's level. */
export const LEVEL_BUCKETS = 5;
/** The others must rise by this share of what the member lost. */
export const ROSE_SHARE = 0.5;
/** A member below this level (connections) is never found vanished. */
export const MIN_LOST_CONNECTIONS = 100;

/** A member found not serving. */
export interface LostMember {
  resourceId: string;
  location: string;
  cause: FailoverCause;
  /** Why, in ARM's words or the metrics' figures. */
  reason: string;
  /** When it was first seen not serving, ms (the first vanished bucket's start, or now for ARM). */
  sinceMs: number;
  /** Its connections when it last served, connections. */
  connections: number;
}

type Bucket = { startMs: number; value: number };

/** IDs are compared case-insensitively (ARM's are). */
export const sameId = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The member of `group` that is the policy's target, if listed. */
export function selfMember(group: ReplicaGroupObservation): ReplicaMember | undefined {
  return group.members.find((m) => sameId(m.resourceId, group.self));
}

/** A member's known buckets that are complete at `completeBeforeMs` (end at or before it), oldest first. */
function completeBuckets(m: ReplicaMember, completeBeforeMs: number): Bucket[] {
  return m.connections
    .filter((b) => Number.isFinite(b.value) && b.value >= 0 && b.startMs + BUCKET_MS <= completeBeforeMs)
    .sort((a, b) => a.startMs - b.startMs);
}

/**
 * A member's complete buckets as the loss test reads them: its known ones, then — for each bucket
 * time after its newest known one at which another serving member has a value — a silent bucket
 * (0, `silent`). A member whose metrics stop while the others' go on (its region down: Azure
 * Monitor has nothing from it, each point a bare `timeStamp`) so reads as vanished. Only the loss
 * test reads these; no silent bucket is ever demand, nor a reason to scale in (missing is not 0).
 */
function withSilence(
  group: ReplicaGroupObservation,
  m: ReplicaMember,
  completeBeforeMs: number,
): (Bucket & { silent?: true })[] {
  const own = completeBuckets(m, completeBeforeMs);
  const last = own.at(-1)?.startMs ?? Number.NEGATIVE_INFINITY;
  const times = new Set<number>();
  for (const o of group.members) {
    if (o === m || o.serving === false) continue;
    for (const b of completeBuckets(o, completeBeforeMs)) if (b.startMs > last) times.add(b.startMs);
  }
  const silent = [...times]
    .sort((a, b) => a - b)
    .map((startMs) => ({ startMs, value: 0, silent: true as const }));
  return [...own, ...silent];
}

/** The highest value of `buckets`, 0 when none. */
const peak = (buckets: readonly Bucket[]) => buckets.reduce((m, b) => Math.max(m, b.value), 0);

/** Mean of a member's known buckets starting at `starts` (undefined when none is known). */
function meanAt(buckets: readonly Bucket[], starts: readonly number[]): number | undefined {
  const found = buckets.filter((b) => starts.includes(b.startMs));
  return found.length === 0 ? undefined : found.reduce((a, b) => a + b.value, 0) / found.length;
}

/**
 * The vanished buckets of a member (its newest run of buckets at most {@link VANISHED_SHARE} of its
 * level, at least {@link VANISH_BUCKETS} long) and the {@link LEVEL_BUCKETS} before them, whose
 * highest is its level; undefined when its newest buckets did not vanish.
 */
function vanished(
  buckets: readonly Bucket[],
): { level: number; gone: Bucket[]; before: Bucket[] } | undefined {
  if (buckets.length < VANISH_BUCKETS + 1) return undefined;
  const estimate = peak(buckets.slice(-VANISH_BUCKETS - LEVEL_BUCKETS, -VANISH_BUCKETS));
  if (buckets.slice(-VANISH_BUCKETS).some((b) => b.value > VANISHED_SHARE * estimate)) return undefined;
  // The vanished run may be longer than the buckets tested: it starts at the first low bucket.
  let first = buckets.length - VANISH_BUCKETS;
  while (first > 0 && (buckets[first - 1] as Bucket).value <= VANISHED_SHARE * estimate) first--;
  const gone = buckets.slice(first);
  const before = buckets.slice(Math.max(0, first - LEVEL_BUCKETS), first);
  const level = peak(before);
  if (before.length === 0 || level < MIN_LOST_CONNECTIONS) return undefined;
  if (gone.some((b) => b.value > VANISHED_SHARE * level)) return undefined;
  return { level, gone, before };
}

/**
 * What the other serving members' connections rose by between `before` and `gone`'s bucket times,
 * summed over those with known buckets at both; undefined when none has.
 */
function othersRise(
  group: ReplicaGroupObservation,
  lost: ReplicaMember,
  before: readonly Bucket[],
  gone: readonly Bucket[],
  completeBeforeMs: number,
): number | undefined {
  let rise: number | undefined;
  for (const m of group.members) {
    if (m === lost || m.serving === false) continue;
    const own = completeBuckets(m, completeBeforeMs);
    const was = meanAt(
      own,
      before.map((b) => b.startMs),
    );
    const now = meanAt(
      own,
      gone.map((b) => b.startMs),
    );
    if (was === undefined || now === undefined) continue;
    rise = (rise ?? 0) + (now - was);
  }
  return rise;
}

const hhmm = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;

/** A member found lost by its metrics (see the module comment), or undefined. */
function lostByMetrics(
  group: ReplicaGroupObservation,
  m: ReplicaMember,
  completeBeforeMs: number,
): LostMember | undefined {
  const own = withSilence(group, m, completeBeforeMs);
  const v = vanished(own);
  if (!v) return undefined;
  const lostConnections =
    v.level -
    (meanAt(
      v.gone,
      v.gone.map((b) => b.startMs),
    ) ?? 0);
  const rise = othersRise(group, m, v.before, v.gone, completeBeforeMs);
  if (rise === undefined || rise < ROSE_SHARE * lostConnections) return undefined;
  const since = (v.gone[0] as Bucket).startMs;
  return {
    resourceId: m.resourceId,
    location: m.location,
    cause: "ConnectionsVanished",
    reason: v.gone.every((b) => "silent" in b)
      ? `its metrics stopped at ${hhmm(since)} (no data since, from ${fmt(v.level)} connections) while the other members' rose by ${fmt(Math.round(rise))}`
      : `its connections fell from ${fmt(v.level)} to ${fmt(peak(v.gone))} from ${hhmm(since)} while the other members' rose by ${fmt(Math.round(rise))}`,
    sinceMs: since,
    connections: v.level,
  };
}

/** A member ARM says is not serving, or undefined. */
function lostByArm(m: ReplicaMember, nowMs: number, completeBeforeMs: number): LostMember | undefined {
  if (m.serving !== false) return undefined;
  const own = completeBuckets(m, completeBeforeMs);
  return {
    resourceId: m.resourceId,
    location: m.location,
    cause: "NotServing",
    reason: `ARM: ${m.notServingReason ?? "it does not serve clients"}`,
    sinceMs: nowMs,
    connections: peak(own.slice(-LEVEL_BUCKETS)),
  };
}

/**
 * The members of `group` lost now (see the module comment), ARM's word first. `completeBeforeMs`
 * is now − the ingestion delay: only buckets that end by then are read.
 */
export function lostMembers(
  group: ReplicaGroupObservation,
  nowMs: number,
  completeBeforeMs: number,
): LostMember[] {
  return group.members.flatMap((m) => {
    const lost = lostByArm(m, nowMs, completeBeforeMs) ?? lostByMetrics(group, m, completeBeforeMs);
    return lost ? [lost] : [];
  });
}

/**
 * The policy's own target when it is itself not serving (ARM says so, or its connections vanished
 * while the others' rose), else undefined: its vanished connections are no reason to scale in.
 */
export function selfLost(
  group: ReplicaGroupObservation | undefined,
  nowMs: number,
  completeBeforeMs: number,
  previous?: NotServingStatus,
): LostMember | undefined {
  const self = group && selfMember(group);
  if (!group || !self) return undefined;
  return (
    lostByArm(self, nowMs, completeBeforeMs) ??
    lostByMetrics(group, self, completeBeforeMs) ??
    stillSilent(self, previous, completeBeforeMs)
  );
}

/**
 * A member found lost by its metrics on an earlier pass (`previous`, not yet serving again) stays
 * lost while it has no complete bucket above 0 since then: the loss test needs its level, which
 * leaves the read window a few minutes into the silence, but silence is no sign that it serves
 * again — its first bucket with clients is.
 */
function stillSilent(
  self: ReplicaMember,
  previous: NotServingStatus | undefined,
  completeBeforeMs: number,
): LostMember | undefined {
  if (!previous || previous.until !== undefined) return undefined;
  const sinceMs = Date.parse(previous.since);
  if (!Number.isFinite(sinceMs)) return undefined;
  const since = completeBuckets(self, completeBeforeMs).filter((b) => b.startMs >= sinceMs);
  if (since.some((b) => b.value > 0)) return undefined;
  return {
    resourceId: self.resourceId,
    location: self.location,
    cause: "ConnectionsVanished",
    reason: previous.reason,
    sinceMs,
    connections: 0,
  };
}

/**
 * Whether a member recorded lost serves again: ARM says it serves (for NotServing; unread keeps
 * it lost), or its newest complete bucket is back above {@link VANISHED_SHARE} of its recorded
 * level (for ConnectionsVanished, while ARM does not say it is down). A member no longer in the
 * group (a replica deleted) is not lost any more: its clients stay with the others, measured.
 */
export function servesAgain(
  group: ReplicaGroupObservation,
  lost: { resourceId: string; cause: FailoverCause; connections: number },
  completeBeforeMs: number,
): boolean {
  const m = group.members.find((x) => sameId(x.resourceId, lost.resourceId));
  if (!m) return true;
  if (m.serving === false) return false;
  if (lost.cause === "NotServing") return m.serving === true;
  const newest = withSilence(group, m, completeBeforeMs).at(-1);
  return newest !== undefined && newest.value > VANISHED_SHARE * lost.connections;
}

/**
 * A member's connection level before `beforeMs` (the highest of its newest {@link LEVEL_BUCKETS}
 * complete buckets that start before it), or undefined when none is known.
 */
export function levelBefore(
  m: ReplicaMember,
  beforeMs: number,
  completeBeforeMs: number,
): number | undefined {
  const own = completeBuckets(m, completeBeforeMs).filter((b) => b.startMs < beforeMs);
  return own.length === 0 ? undefined : peak(own.slice(-LEVEL_BUCKETS));
}

/**
 * `self`'s share of the clients of the members `lost` (by ID): its level before `beforeMs` ÷ the
 * level of every serving member not in `lost` ({@link levelBefore}); by units when one of them is
 * unknown or all are 0, evenly when those are 0 too. 0–1; 0 when `self` is not one of them.
 * Azure's DNS resolves a region's clients to healthy members near them, which are, across many
 * clients, those that already carry the most.
 */
export function survivorShare(
  group: ReplicaGroupObservation,
  self: ReplicaMember,
  lost: readonly { resourceId: string }[],
  beforeMs: number,
  completeBeforeMs: number,
): number {
  const survivors = group.members.filter(
    (m) => m.serving !== false && !lost.some((l) => sameId(l.resourceId, m.resourceId)),
  );
  const levels = survivors.map((m) => levelBefore(m, beforeMs, completeBeforeMs));
  const byConnections = levels.every((v) => v !== undefined) && levels.some((v) => (v as number) > 0);
  const weight = (m: ReplicaMember, i: number) =>
    byConnections ? (levels[i] as number) : Math.max(0, m.units);
  const total = survivors.reduce((a, m, i) => a + weight(m, i), 0);
  const i = survivors.indexOf(self);
  if (i < 0) return 0;
  return total > 0 ? weight(self, i) / total : 1 / survivors.length;
}

/** What the scale-in gate reads of the instance's own service: the record to keep, and whether it holds. */
export interface NotServingHold {
  /** `status.notServing` to keep (absent: nothing to remember). */
  record?: NotServingStatus;
  /** No scale-in on this pass: why, in words (absent: it does not hold). */
  message?: string;
}

/**
 * The instance's own service over time (`status.notServing`): while it is not serving
 * ({@link selfLost}: `lost`), no scale-in on its vanished connections; once it serves again
 * (`until`), none either until `holdSeconds` have passed — the scale-down stabilization window,
 * at least the metrics window and the ingestion delay: until then the window reads buckets of the
 * outage, and the clients it lost come back as they reconnect, as they left. The record is dropped
 * when the hold is over.
 */
export function notServingHold(
  previous: NotServingStatus | undefined,
  lost: LostMember | undefined,
  nowMs: number,
  holdSeconds: number,
): NotServingHold {
  const since = (ms: number) => new Date(ms).toISOString();
  if (lost) {
    const record: NotServingStatus = {
      since: previous && previous.until === undefined ? previous.since : since(lost.sinceMs),
      reason: lost.reason.slice(0, 256),
    };
    return {
      record,
      message: `this instance is not serving clients since ${record.since} (${record.reason}): its clients went to the other members of its replica group and come back when it serves again, so its vanished connections are no reason to scale in`,
    };
  }
  if (!previous) return {};
  const untilMs = previous.until !== undefined ? Date.parse(previous.until) : nowMs;
  if (!Number.isFinite(untilMs) || nowMs - untilMs >= holdSeconds * 1000) return {};
  const record: NotServingStatus = { ...previous, until: since(untilMs) };
  return {
    record,
    message: `this instance serves again since ${record.until} after not serving from ${record.since} (${record.reason}): no scale-in until ${since(untilMs + holdSeconds * 1000)}, while its clients come back as they reconnect`,
  };
}
