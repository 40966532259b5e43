/**
 * Where the clients of a replica group go when a member stops serving, minute by minute. Pure;
 * the emulator's geo-replicas use it, and `simulate` can.
 *
 * A replica group is an instance (the primary) and its geo-replicas, each with its own offered
 * demand (its clients: those nearest its region). When a member stops serving, Azure SignalR's
 * DNS resolves to the healthy replicas ("Geo-replication in Azure SignalR": "If a regional outage
 * happens, the Azure SignalR DNS will be resolved to healthy replicas in other regions"), so its
 * clients reconnect there — within seconds, at the SignalR client's automatic-reconnect delays
 * (`disconnections.ts`: 0, 2, 10 and 30 s). The model:
 *
 * - **Down.** From the minute a member stops serving to the minute it serves again, all its own
 *   clients are elsewhere and it serves no one ({@link memberAway} = 1).
 * - **Split.** The clients of a member that are elsewhere go to the members serving in that
 *   minute, split by those members' own demand in that minute (equally when they have none);
 *   when no member serves, they are lost.
 * - **Drift back.** A member serving again gets new clients at once, but the moved ones stay where
 *   they reconnected until their connection ends: the share still away decays as
 *   `exp(−t ÷ W)`, t the time since it serves again (at the minute's middle), W the mean connection
 *   lifetime (`arrivals.ts`, 1,200 s by default) — the clients of a connection's exponential
 *   lifetime. They leave the siblings by the same split.
 * - **Drain.** A member whose regional endpoint is disabled keeps its connections but gets no new
 *   ones (the specs' `regionEndpointEnabled`: "When it's Disabled, new connections will not be
 *   routed to this endpoint, however existing connections will not be affected"): it is not down,
 *   and the share of its clients away grows as `1 − exp(−t ÷ W)` as their connections end and they
 *   connect elsewhere; enabled again, the share then away drifts back as above.
 *
 * Figures: each member's demand in connections; times in ms; W in seconds.
 */

const MINUTE = 60_000;

/** One period in which a member did not serve: from `fromMs` to `toMs` (absent: still down). */
export interface ServingGap {
  fromMs: number;
  toMs?: number;
  /** True for a drain (endpoint disabled: existing connections stay), false or absent for a stop. */
  drain?: boolean;
}

/** Start of the minute containing `ms`. */
function minuteOf(ms: number): number {
  return Math.floor(ms / MINUTE) * MINUTE;
}

/** The last gap that starts by the minute `minuteMs` (gaps in time order), or `undefined`. */
function lastGap(gaps: readonly ServingGap[], minuteMs: number): ServingGap | undefined {
  let found: ServingGap | undefined;
  for (const g of gaps) if (minuteOf(g.fromMs) <= minuteMs) found = g;
  return found;
}

/** True when the member serves no one in the minute starting at `minuteMs`. */
export function memberDown(gaps: readonly ServingGap[], minuteMs: number): boolean {
  const g = lastGap(gaps, minuteMs);
  return g !== undefined && g.drain !== true && (g.toMs === undefined || minuteMs < minuteOf(g.toMs));
}

/**
 * The share of a member's own clients that are on other members in the minute starting at
 * `minuteMs`: 1 while it is down, then `exp(−t ÷ W)` after it serves again; during a drain
 * `1 − exp(−t ÷ W)`, t since it began, and after it that share decaying the same way (see the
 * module comment); 0 with no gap before.
 * @throws RangeError for W ≤ 0.
 */
export function memberAway(gaps: readonly ServingGap[], minuteMs: number, lifetimeSeconds: number): number {
  if (!(lifetimeSeconds > 0))
    throw new RangeError(`the connection lifetime must be > 0, got ${lifetimeSeconds}`);
  const g = lastGap(gaps, minuteMs);
  if (g === undefined) return 0;
  const middle = minuteMs + MINUTE / 2;
  /** The share away `ms` into the gap: all of it for a stop, those whose connection ended for a drain. */
  const during = (ms: number) =>
    g.drain === true ? 1 - Math.exp(-Math.max(0, ms - g.fromMs) / 1000 / lifetimeSeconds) : 1;
  if (g.toMs === undefined || minuteMs < minuteOf(g.toMs))
    return during(g.drain === true ? middle : g.fromMs);
  const seconds = Math.max(0, (middle - g.toMs) / 1000);
  return during(g.toMs) * Math.exp(-seconds / lifetimeSeconds);
}

/** One member in one minute: its own demand, whether it serves, and the share of its clients away. */
export interface GroupMemberMinute {
  /** Its own clients' offered connections (its demand). */
  own: number;
  down: boolean;
  /** Share of its own clients on other members ({@link memberAway}), in [0, 1]. */
  away: number;
}

/**
 * The offered connections each member of a group sees in one minute, in the members' order: its
 * own clients not away, plus its split of every other member's clients that are away (see the
 * module comment); 0 for a member that is down. The total is the group's demand, less the clients
 * of minutes in which no member serves.
 */
export function groupOffered(members: readonly GroupMemberMinute[]): number[] {
  const out = members.map((m) => (m.down ? 0 : m.own * (1 - m.away)));
  members.forEach((from, i) => {
    const moved = from.own * from.away;
    if (moved <= 0) return;
    const receivers = members.map((m, j) => j !== i && !m.down);
    const count = receivers.filter(Boolean).length;
    if (count === 0) return;
    const weight = members.reduce((a, m, j) => a + (receivers[j] ? m.own : 0), 0);
    members.forEach((m, j) => {
      if (!receivers[j]) return;
      out[j] = (out[j] as number) + moved * (weight > 0 ? m.own / weight : 1 / count);
    });
  });
  return out;
}

/**
 * The shares in which the clients of member `index` go to the others when it stops serving: by
 * their own demand among those serving (equally when none has any); 0 for itself and for members
 * that are down. Sums to 1, or to 0 when no other member serves.
 */
export function failoverShares(
  members: readonly Pick<GroupMemberMinute, "own" | "down">[],
  index: number,
): number[] {
  const receivers = members.map((m, j) => j !== index && !m.down);
  const count = receivers.filter(Boolean).length;
  const weight = members.reduce((a, m, j) => a + (receivers[j] ? m.own : 0), 0);
  return members.map((m, j) => {
    if (!receivers[j]) return 0;
    return weight > 0 ? m.own / weight : 1 / count;
  });
}
