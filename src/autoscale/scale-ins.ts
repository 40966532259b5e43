/**
 * How long this instance's past scale-ins held: the record kept in `status.scaleIns`, and the
 * expected hold read from it. Pure.
 *
 * Record: every scale-in observed complete (a scale event with fewer units) adds an entry; the
 * next change of units ends it — a scale-out *reverses* it (`reversed`), a
 * further scale-in only ends it (the smaller size held until demand fell further). Its hold runs
 * from its completion to when the next change was sent (the scale event's `startedAt`, else its
 * `time`); an entry still open holds until now. At most {@link MAX_SCALE_IN_RECORDS}, newest kept.
 *
 * A scale-in the disruption weighing holds is recorded too, while it is held (`held`): the
 * counterfactual of one made then. The first pass that holds one opens the entry at the current
 * size; a pass that holds a scale-in to a larger size raises its `toUnits` to that size (the
 * need has stayed at or below it all along); it leaves the record when the need rises above its
 * `toUnits`, this pass's raise included (a scale-in to that size made then would have been scaled
 * out again), or a change completes. At most one,
 * always last (the newest nine scale-ins beside it); it is not a hold of its own (its end is not observed), but its age is how long
 * the need has already stayed low. Without it the record could not learn while it holds: a few
 * scale-ins reversed in a crowd's decline would hold every later one, at any load, for as long as
 * the weighing keeps holding.
 *
 * Expected hold: the Kaplan–Meier median of those holds, a reversal being the event and every
 * other end (a further scale-in, or still holding) a censored observation — the standard estimate
 * of a median lifetime when some lives are not yet over (Kaplan & Meier 1958). While a held entry
 * is open, its age `a` is how long the need has already stayed at or below its size, and the
 * estimate is the median *residual* life of the holds that lasted at least `a`: the time `t − a`
 * at which the survival falls to half of its value at `a` (Kaplan–Meier conditional survival,
 * S(t) ÷ S(a)). When the survival does not fall that far there is no median: the past says a
 * scale-in was not reversed, and the estimate is a lower bound (`censored`), the longest hold
 * seen past `a` and at least `a` again (the longer a level has lasted, the longer it is expected
 * to last).
 */
import { MAX_SCALE_IN_RECORDS } from "../api/constants.js";
import type { ScaleEvent, ScaleInRecord } from "../api/index.js";
import { parseTime } from "./time.js";

export type { ScaleInRecord };

/** When the change of `e` was sent (its `startedAt`, else its completion), RFC 3339. */
const sentAt = (e: ScaleEvent) => e.startedAt ?? e.time;

/**
 * The record after the scale events of the history (any already recorded are skipped: each
 * scale-in is keyed by its completion time, each end by the open entry it closes). Events older
 * than the newest entry's completion change nothing. An open held entry is kept last until a
 * change completes after it, which ends it: it leaves the record.
 */
export function recordScaleIns(
  records: readonly ScaleInRecord[] | undefined,
  events: readonly ScaleEvent[],
): ScaleInRecord[] {
  const held = openHeld(records ?? []);
  const heldMs = held ? parseTime(held.time) : Number.NaN;
  const out = (records ?? []).filter((r) => r.held !== true).map((r) => ({ ...r }));
  let heldEnded = false;
  for (const e of events) {
    if (e.toUnits !== e.fromUnits && parseTime(e.time) > heldMs) heldEnded = true;
    const t = parseTime(e.time);
    const open = out.at(-1);
    if (!Number.isFinite(t) || (open && !(t > parseTime(open.time)))) continue;
    const direction = Math.sign(e.toUnits - e.fromUnits);
    if (direction === 0) continue;
    if (open && open.endedAt === undefined) {
      open.endedAt = sentAt(e);
      if (direction > 0) open.reversed = true;
    }
    if (direction < 0) out.push({ time: e.time, fromUnits: e.fromUnits, toUnits: e.toUnits });
  }
  return held && !heldEnded
    ? [...out.slice(-(MAX_SCALE_IN_RECORDS - 1)), { ...held }]
    : out.slice(-MAX_SCALE_IN_RECORDS);
}

/** How long one entry held, seconds (until now when still open; never negative). */
export function heldSeconds(r: ScaleInRecord, nowMs: number): number {
  const end = r.endedAt === undefined ? nowMs : parseTime(r.endedAt);
  const held = (end - parseTime(r.time)) / 1000;
  return Number.isFinite(held) ? Math.max(0, held) : 0;
}

/** What one pass tells the record about a held scale-in (see the module comment). */
export interface HeldPass {
  /** Time of the pass, RFC 3339. */
  nowIso: string;
  /** Units of the instance, units. */
  currentUnits: number;
  /** The size the disruption weighing held a scale-in at on this pass, units; absent: none held. */
  heldToUnits?: number | undefined;
  /** This pass's recommendation, units; absent on a pass without usable metrics. */
  recommendedUnits?: number | undefined;
  /** A change is in flight: no held entry opens (its outcome is not known yet). */
  inFlight: boolean;
}

/** The newest entry when it is a held one still open. */
export function openHeld(records: readonly ScaleInRecord[]): ScaleInRecord | undefined {
  const last = records.at(-1);
  return last?.held === true && last.endedAt === undefined ? last : undefined;
}

/**
 * The record after one pass's held scale-in (see the module comment); run after
 * {@link recordScaleIns}, so a change observed this pass has ended the open entry first.
 */
export function recordHeldScaleIn(records: readonly ScaleInRecord[], pass: HeldPass): ScaleInRecord[] {
  const out = records.map((r) => ({ ...r }));
  const open = openHeld(out);
  if (open) {
    // Raised first: a need above the old size that this pass still holds a scale-in at or above
    // has stayed at or below the new size all along.
    if (pass.heldToUnits !== undefined) open.toUnits = Math.max(open.toUnits, pass.heldToUnits);
    // The need rose above every size it was held at: a scale-in made then would have been reversed.
    if (pass.recommendedUnits !== undefined && pass.recommendedUnits > open.toUnits) return out.slice(0, -1);
    return out;
  }
  if (pass.heldToUnits === undefined || pass.inFlight || !(pass.heldToUnits < pass.currentUnits)) return out;
  const entry = { time: pass.nowIso, fromUnits: pass.currentUnits, toUnits: pass.heldToUnits, held: true };
  return [...out.slice(-(MAX_SCALE_IN_RECORDS - 1)), entry];
}

/** The expected hold of a smaller size from the record. */
export interface HistoryHold {
  /** Seconds: the median (residual) hold, or a lower bound when {@link censored}. */
  seconds: number;
  /** The survival does not fall to half: `seconds` is a lower bound. */
  censored: boolean;
  /** Entries read (scale-ins made), and how many of them were reversed. */
  scaleIns: number;
  reversals: number;
  /** How long the need has already stayed at or below {@link heldUnits} (the open held entry's age), seconds; 0 without one. */
  sinceSeconds: number;
  /** The open held entry's size (the largest a scale-in was held at while the need stayed at or below it), units; absent without one. */
  heldUnits?: number;
  /** Of the entries read, how many held at least {@link sinceSeconds} (all of them without an open held entry). */
  lastedSince: number;
}

/** Fewest entries the record must have to say anything. */
export const MIN_SCALE_INS = 3;

/**
 * The Kaplan–Meier median hold of the record, residual past the open held entry's age (see the
 * module comment); undefined with fewer than {@link MIN_SCALE_INS} entries.
 */
export function historyHold(records: readonly ScaleInRecord[], nowMs: number): HistoryHold | undefined {
  if (records.filter((r) => r.held !== true).length < MIN_SCALE_INS) return undefined;
  const open = openHeld(records);
  const since = open ? heldSeconds(open, nowMs) : 0;
  // Ascending by hold; at equal holds a reversal counts before a censored entry (the KM convention).
  const lives = records
    .filter((r) => r.held !== true)
    .map((r) => ({ seconds: heldSeconds(r, nowMs), reversed: r.reversed === true }))
    .sort((a, b) => a.seconds - b.seconds || Number(b.reversed) - Number(a.reversed));
  const counts = {
    scaleIns: lives.length,
    reversals: lives.filter((l) => l.reversed).length,
    sinceSeconds: since,
    lastedSince: lives.filter((l) => l.seconds >= since).length,
    ...(open ? { heldUnits: open.toUnits } : {}),
  };
  let survival = 1;
  let atSince = 1;
  let atRisk = lives.length;
  for (const l of lives) {
    if (l.reversed) {
      survival *= 1 - 1 / atRisk;
      if (since > 0 && l.seconds <= since) atSince = survival;
      else if (survival <= atSince / 2) return { seconds: l.seconds - since, censored: false, ...counts };
    }
    atRisk--;
  }
  const longest = lives.at(-1)?.seconds ?? 0;
  return { seconds: Math.max(longest - since, since), censored: true, ...counts };
}
