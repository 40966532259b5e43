/**
 * The Failover rule: when another member of this instance's replica group (its primary or a
 * sibling replica) stops serving (failover.ts: ARM says so, or its connections vanished while the
 * others' rose), its clients reconnect to the serving members within seconds — long before Azure
 * Monitor shows them and a scale completes. This member asks for the connections it is about to
 * carry, in units at the connections target (`ctx.connectionsPerUnit`):
 *
 *   expected = own + share × Σ lost members' last serving connections
 *
 * - own: this member's connections before the first loss (the highest of its 5 complete buckets
 *   before it: failover.ts `levelBefore`);
 * - share: its part of the serving members' connections then (every survivor's level the same
 *   way; by units when one of them is unknown, evenly when those are 0) — Traffic Manager sends a
 *   region's clients to the nearest healthy members, which are, across many clients, those that
 *   already carry the most.
 *
 * Every signal grows with the clients, not only the connections (a member whose server load
 * needs more units than its connections does needs that much more for the arrivals), and a full
 * quota counts only the clients it let in (own is then a lower bound): the measured need of the
 * window (`measuredNeedUnits`, the largest signal's, a saturated signal's doubling included) is
 * scaled by the same factor, `expected ÷ own`. It is read while the window has no bucket from
 * after the loss (`windowToMs` ≤ the loss: it knows nothing of the arrivals) and kept
 * (`ownUnits`); a loss first found after that (by the metrics, whose window holds the arrivals)
 * has none. The ask is the larger of `expected` in units and `ownUnits × expected ÷ own`.
 *
 * Kept in `status.anticipation.failover` (the lost members, own, share, expected, ownUnits), so the ask
 * lasts while a member is down after the window has moved past its drop (own and share are
 * measured once, before the clients arrive; a member lost later adds its connections and the
 * share is measured again). A member is dropped when it serves again (failover.ts
 * `servesAgain`); with none left the ask ends, and the scale-down stabilization window steps
 * the capacity down as after any peak. A member that is itself not serving asks nothing (the
 * scale-in gate holds it: `NotServing`). While every member serves, the rule asks for the standing
 * reserve of `spec.anticipation.failover.reservePercent` (failover-reserve.ts: part of the clients
 * of the sibling whose loss would send it the most, held before any loss), without status. Off
 * with `spec.anticipation.failover.enabled: false`;
 * without a replica group (`ctx.replicaGroup`) it asks nothing. Pure.
 */
import { type FailoverStatus, MAX_FAILOVER_MEMBERS } from "../../api/index.js";
import {
  type LostMember,
  levelBefore,
  lostMembers,
  type ReplicaGroupObservation,
  sameId,
  selfLost,
  selfMember,
  servesAgain,
  survivorShare,
} from "../failover.js";
import { fmt } from "../format.js";
import { parseTime } from "../time.js";
import { reserveAsk } from "./failover-reserve.js";
import { iso, type Rule, type RuleContext, type RuleResult } from "./rule.js";

type StoredLost = FailoverStatus["lost"][number];

/** The member's name as people read it: the replica's (or instance's) name and region. */
function memberName(resourceId: string, location: string | undefined): string {
  const name = resourceId.split("/").filter(Boolean).at(-1) ?? resourceId;
  return location ? `${name} (${location})` : name;
}

const toStored = (l: LostMember): StoredLost => ({
  resourceId: l.resourceId,
  location: l.location,
  cause: l.cause,
  reason: l.reason.slice(0, 256),
  since: iso(l.sinceMs),
  connections: Math.round(l.connections),
});

/**
 * The members lost now: those recorded that do not serve again, then those found this pass (a
 * recorded one keeps its first time and cause, with the larger of the two levels); `added` says
 * how many were not recorded.
 */
function lostNow(
  group: ReplicaGroupObservation,
  recorded: readonly StoredLost[],
  found: readonly LostMember[],
  completeBeforeMs: number,
): { lost: StoredLost[]; added: number } {
  const lost = recorded.filter(
    (l) =>
      !sameId(l.resourceId, group.self) &&
      Number.isFinite(parseTime(l.since)) &&
      !servesAgain(group, l, completeBeforeMs),
  );
  let added = 0;
  for (const f of found) {
    if (sameId(f.resourceId, group.self)) continue;
    const at = lost.findIndex((l) => sameId(l.resourceId, f.resourceId));
    const kept = lost[at];
    if (kept) lost[at] = { ...kept, connections: Math.max(kept.connections, Math.round(f.connections)) };
    else {
      lost.push(toStored(f));
      added++;
    }
  }
  return { lost: lost.slice(0, MAX_FAILOVER_MEMBERS), added };
}

/** The ask's message: which members, why, since when, and the connections this member expects. */
function failoverMessage(state: FailoverStatus, units: number, perUnit: number): string {
  const lost = state.lost
    .map(
      (l) =>
        `${memberName(l.resourceId, l.location)} not serving since ${l.since.slice(11, 16)} UTC (${l.reason}; ${fmt(l.connections)} connections)`,
    )
    .join("; ");
  const total = state.lost.reduce((a, l) => a + l.connections, 0);
  return `failover: ${lost}; this member expects ${fmt(Math.round(state.expectedConnections))} connections — its own ${fmt(state.ownConnections)} + ${fmt(Math.round(state.share * 1000) / 10)} % of ${fmt(total)}: ${fmt(units)} units at ${fmt(perUnit)} connections a unit`;
}

export const failoverRule: Rule = { rule: "Failover", evaluate: evaluateFailover };

/**
 * The Failover rule (see the module comment): no status without a loss; while every member serves,
 * the standing reserve's ask when `reservePercent` is set (failover-reserve.ts).
 */
function evaluateFailover(ctx: RuleContext): RuleResult {
  const group = ctx.replicaGroup;
  if (!group || ctx.spec.failover?.enabled === false) return { asks: [] };
  const self = selfMember(group);
  const completeBeforeMs = ctx.nowMs - ctx.ingestionDelaySeconds * 1000;
  if (!self || selfLost(group, ctx.nowMs, completeBeforeMs)) return { asks: [] };
  const previous = ctx.previous?.failover;
  const found = lostMembers(group, ctx.nowMs, completeBeforeMs);
  const { lost, added } = lostNow(group, previous?.lost ?? [], found, completeBeforeMs);
  if (lost.length === 0) {
    const reserve = reserveAsk(ctx, group, self, completeBeforeMs);
    return { asks: reserve ? [reserve] : [] };
  }
  const sinceMs = Math.min(...lost.map((l) => parseTime(l.since)));
  // Own and share are measured once, before the clients arrive: kept while the same members are
  // down; a member lost later has the share measured again (own stays what it was before the first).
  const kept = previous !== undefined && lost.length > added;
  const own = (kept ? previous.ownConnections : levelBefore(self, sinceMs, completeBeforeMs)) ?? 0;
  const share =
    kept && added === 0 ? previous.share : survivorShare(group, self, lost, sinceMs, completeBeforeMs);
  const lostTotal = lost.reduce((a, l) => a + l.connections, 0);
  const state: FailoverStatus = {
    lost,
    ownConnections: Math.round(own),
    share: Math.round(share * 1000) / 1000,
    expectedConnections: Math.round(own + share * lostTotal),
  };
  // The measured need before the arrivals, scaled like the connections (see the module comment).
  const ownUnits = ctx.windowToMs <= sinceMs ? ctx.measuredNeedUnits : kept ? previous.ownUnits : undefined;
  if (ownUnits !== undefined && Number.isFinite(ownUnits)) state.ownUnits = Math.round(ownUnits * 100) / 100;
  const scaled =
    state.ownUnits !== undefined && own > 0 ? (state.ownUnits * (own + share * lostTotal)) / own : 0;
  const units = Math.max(state.expectedConnections / ctx.connectionsPerUnit, scaled);
  const ask = {
    rule: "Failover" as const,
    units,
    message: failoverMessage(state, units, ctx.connectionsPerUnit),
  };
  return { asks: units > 0 ? [ask] : [], status: { failover: state } };
}
