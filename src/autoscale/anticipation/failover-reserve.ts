/**
 * The Failover rule's standing reserve (`spec.anticipation.failover.reservePercent`, 50 when
 * absent: `DEFAULT_FAILOVER_RESERVE_PERCENT`): while every
 * member of the replica group serves, this member holds capacity for part of the clients it would
 * receive if one sibling stopped serving. The loss ask (failover.ts) comes at the first pass that
 * sees a loss, but a scale takes the scale duration and the clients arrive within seconds: without
 * room for them a survivor refuses for about the scale duration. Microsoft's reliability guidance
 * for geo-replicas sizes each replica for the load it takes over when another region fails.
 *
 * For each serving sibling `k` with a known level, the clients this member would receive if `k`
 * stopped serving:
 *
 *   arrivals(k) = share(k) × level(k)
 *
 * - level(k): its connections at the target time (now + scale duration + one poll: when capacity
 *   asked now is in place) — its level now (the highest of its 5 newest complete buckets:
 *   `levelBefore`) plus its rise until then ({@link levelAt}); a reserve read from buckets an
 *   ingestion delay old and landing a scale later would lag a daily ramp by ten minutes of it;
 * - share(k): this member's part of the members other than `k` (`survivorShare`: the same split
 *   the loss ask uses, by connections, by units when one is unknown).
 *
 * The reserve is for the sibling whose loss would send the most:
 *
 *   reserved = own + reservePercent % × max over k of arrivals(k)      (connections)
 *
 * with `own` this member's level at the target time the same way, in units at the connections
 * target (`ctx.connectionsPerUnit`), as the loss ask. The target's own headroom holds the rest of
 * the arrivals `a`: at a connections target `t` (a share), (own + r · a) ÷ t ≥ own + a while
 * a ÷ own ≤ (1 − t) ÷ (t − r) — at 80 %, 36 % of own at r = 25 %, 67 % at 50 %, any at 80 % and
 * above. It adds capacity only where it asks for more than the measured need and the other rules
 * (at a member's daily high, not at night, where `spareConnections` and the ladder's steps already
 * hold the arrivals); `simulate --replicas … --failover` measures what it costs.
 *
 * No reserve while a member does not serve (the loss ask sizes the survivors then), at 0 %, or
 * without a sibling of known level. Pure.
 */
import { DEFAULT_FAILOVER_RESERVE_PERCENT } from "../../api/constants.js";
import {
  levelBefore,
  type ReplicaGroupObservation,
  type ReplicaMember,
  sameId,
  survivorShare,
} from "../failover.js";
import { fmt } from "../format.js";
import { theilSen } from "../trend.js";
import { MAX_PROJECTION, MINUTE_MS, mid, type RuleAsk, type RuleContext } from "./rule.js";

/** What the reserve is for: the sibling whose loss would send this member the most. */
export interface FailoverReserve {
  /** The sibling reserved for. */
  sibling: ReplicaMember;
  /** Its connections at the target time ({@link levelAt}), connections. */
  siblingConnections: number;
  /** This member's share of its clients, 0–1. */
  share: number;
  /** This member's connections at the target time, connections. */
  ownConnections: number;
  /** Connections held for: own + reservePercent % × share × siblingConnections. */
  reservedConnections: number;
  /** The ask: reservedConnections ÷ connections a unit at the target, units. */
  units: number;
}

/** When the reserve is read and for when, and the units it is counted in. */
export interface ReserveTimes {
  /** Now, ms: the buckets read start before it. */
  nowMs: number;
  /** Now − the ingestion delay, ms: the buckets read end by it (complete). */
  completeBeforeMs: number;
  /** When capacity asked now is in place (now + scale duration + one poll), ms. */
  targetMs: number;
  /** Connections a unit carries at the connections target. */
  connectionsPerUnit: number;
}

/** Complete buckets a member's rise is read on (the newest). */
export const RISE_BUCKETS = 10;

/**
 * A member's level at `targetMs`: its level now ({@link levelBefore}) plus its rise until then —
 * the lower quartile of the pairwise slopes of its newest {@link RISE_BUCKETS} complete buckets
 * (trend.ts: on a steady ramp the slope, on noise around a flat line at or below 0), counted only
 * when above 0, from the newest bucket's middle — at most {@link MAX_PROJECTION} × the level.
 * Undefined when the level is unknown.
 */
export function levelAt(
  m: ReplicaMember,
  nowMs: number,
  completeBeforeMs: number,
  targetMs: number,
): number | undefined {
  const level = levelBefore(m, nowMs, completeBeforeMs);
  if (level === undefined) return undefined;
  const buckets = m.connections
    .filter(
      (b) =>
        Number.isFinite(b.value) &&
        b.value >= 0 &&
        b.startMs + MINUTE_MS <= completeBeforeMs &&
        b.startMs < nowMs,
    )
    .sort((a, b) => a.startMs - b.startMs)
    .slice(-RISE_BUCKETS);
  const newest = buckets.at(-1);
  const trend =
    buckets.length >= 3
      ? theilSen(buckets.map((b) => ({ timeMs: mid(b.startMs), value: b.value })))
      : undefined;
  if (!newest || !trend || !(trend.lowerPerMinute > 0) || targetMs <= mid(newest.startMs)) return level;
  const rise = (trend.lowerPerMinute * (targetMs - mid(newest.startMs))) / MINUTE_MS;
  return Math.min(level + rise, MAX_PROJECTION * level);
}

/** The reserve of `self` in `group` at `reservePercent` (see the module comment), or undefined when none is held. */
export function failoverReserve(
  group: ReplicaGroupObservation,
  self: ReplicaMember,
  reservePercent: number,
  at: ReserveTimes,
): FailoverReserve | undefined {
  const { nowMs, completeBeforeMs, targetMs } = at;
  if (!(reservePercent > 0) || group.members.some((m) => m.serving === false)) return undefined;
  let best: { sibling: ReplicaMember; level: number; share: number; arrivals: number } | undefined;
  for (const sibling of group.members) {
    if (sameId(sibling.resourceId, self.resourceId)) continue;
    const level = levelAt(sibling, nowMs, completeBeforeMs, targetMs);
    if (level === undefined || level <= 0) continue;
    const share = survivorShare(group, self, [sibling], nowMs, completeBeforeMs);
    const arrivals = share * level;
    if (!best || arrivals > best.arrivals) best = { sibling, level, share, arrivals };
  }
  if (!best) return undefined;
  const own = levelAt(self, nowMs, completeBeforeMs, targetMs) ?? 0;
  const reserved = own + (Math.min(100, reservePercent) / 100) * best.arrivals;
  return {
    sibling: best.sibling,
    siblingConnections: best.level,
    share: best.share,
    ownConnections: own,
    reservedConnections: reserved,
    units: reserved / at.connectionsPerUnit,
  };
}

const hhmm = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;

/** The member's name as people read it: the replica's (or instance's) name and region. */
function memberName(m: ReplicaMember): string {
  const name = m.resourceId.split("/").filter(Boolean).at(-1) ?? m.resourceId;
  return m.location ? `${name} (${m.location})` : name;
}

/** The reserve's ask (rule Failover), or undefined when none is held. */
export function reserveAsk(
  ctx: RuleContext,
  group: ReplicaGroupObservation,
  self: ReplicaMember,
  completeBeforeMs: number,
): RuleAsk | undefined {
  const percent = ctx.spec.failover?.reservePercent ?? DEFAULT_FAILOVER_RESERVE_PERCENT;
  const r = failoverReserve(group, self, percent, {
    nowMs: ctx.nowMs,
    completeBeforeMs,
    targetMs: ctx.targetMs,
    connectionsPerUnit: ctx.connectionsPerUnit,
  });
  if (!r || !(r.units > 0)) return undefined;
  const arrivals = r.share * r.siblingConnections;
  return {
    rule: "Failover",
    units: r.units,
    message: `failover reserve: if ${memberName(r.sibling)} stopped serving (${fmt(Math.round(r.siblingConnections))} connections by ${hhmm(ctx.targetMs)}), this member would receive ${fmt(Math.round(r.share * 1000) / 10)} % of them (${fmt(Math.round(arrivals))}) within seconds, before a scale completes; it holds ${fmt(percent)} % of those on top of its own ${fmt(Math.round(r.ownConnections))}: ${fmt(Math.round(r.reservedConnections))} connections, ${fmt(Math.round(r.units * 100) / 100)} units at ${fmt(ctx.connectionsPerUnit)} connections a unit`,
  };
}
