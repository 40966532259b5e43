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
 * Expected hold: the Kaplan–Meier median of those holds, a reversal being the event and every
 * other end (a further scale-in, or still holding) a censored observation — the standard estimate
 * of a median lifetime when some lives are not yet over (Kaplan & Meier 1958). When fewer than
 * half of the smaller sizes ended in a reversal there is no median: the past says a scale-in was
 * not reversed, and the estimate is the longest hold seen, a lower bound (`censored`).
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
 * than the newest entry's completion change nothing.
 */
export function recordScaleIns(
  records: readonly ScaleInRecord[] | undefined,
  events: readonly ScaleEvent[],
): ScaleInRecord[] {
  const out = (records ?? []).map((r) => ({ ...r }));
  for (const e of events) {
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
  return out.slice(-MAX_SCALE_IN_RECORDS);
}

/** How long one entry held, seconds (until now when still open; never negative). */
export function heldSeconds(r: ScaleInRecord, nowMs: number): number {
  const end = r.endedAt === undefined ? nowMs : parseTime(r.endedAt);
  const held = (end - parseTime(r.time)) / 1000;
  return Number.isFinite(held) ? Math.max(0, held) : 0;
}

/** The expected hold of a smaller size from the record. */
export interface HistoryHold {
  /** Seconds: the median hold, or the longest seen when {@link censored}. */
  seconds: number;
  /** Fewer than half were reversed: `seconds` is a lower bound. */
  censored: boolean;
  /** Entries read, and how many of them a scale-out reversed. */
  scaleIns: number;
  reversals: number;
}

/** Fewest entries the record must have to say anything. */
export const MIN_SCALE_INS = 3;

/**
 * The Kaplan–Meier median hold of the record (see the module comment); undefined with fewer than
 * {@link MIN_SCALE_INS} entries.
 */
export function historyHold(records: readonly ScaleInRecord[], nowMs: number): HistoryHold | undefined {
  if (records.length < MIN_SCALE_INS) return undefined;
  // Ascending by hold; at equal holds a reversal counts before a censored entry (the KM convention).
  const lives = records
    .map((r) => ({ seconds: heldSeconds(r, nowMs), reversed: r.reversed === true }))
    .sort((a, b) => a.seconds - b.seconds || Number(b.reversed) - Number(a.reversed));
  const reversals = lives.filter((l) => l.reversed).length;
  let survival = 1;
  let atRisk = lives.length;
  for (const l of lives) {
    if (l.reversed) {
      survival *= 1 - 1 / atRisk;
      if (survival <= 0.5) return { seconds: l.seconds, censored: false, scaleIns: lives.length, reversals };
    }
    atRisk--;
  }
  const longest = lives.at(-1)?.seconds ?? 0;
  return { seconds: longest, censored: true, scaleIns: lives.length, reversals };
}
