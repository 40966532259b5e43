/**
 * Which capacity served a one-minute bucket: the rule that turns a percentage Azure Monitor
 * measured (server load, connection quota utilization) into units of demand.
 *
 * A capacity change is known by when its update was sent (`startedAt`) and when its completion
 * was observed (`time`); Azure applies it somewhere in between, at an instant the operator never
 * sees. So, for a bucket `[start, start + 1 min)`:
 * - it **overlaps a change** when it ends after the update was sent and starts before the
 *   completion was observed (an update still in flight has no completion yet: every bucket after
 *   it was sent overlaps it). Such a bucket may have been served by either size; its percentage
 *   is read at the smaller unit count of the change — the reading that never overstates demand
 *   (a 60 % bucket measured at 10 units just after a 20 → 10 scale-in is 6 units of demand, not
 *   12) — and it is never trusted for a scale-in;
 * - otherwise it was served by the size the changes left in place: the `from` of the first later
 *   change, or — after every known change — the units Azure reports now.
 * The same rule holds for scale-out, scale-in and SKU changes: only unit counts matter here.
 * A recovered change (`recovered`: found on the instance with no record of its update being sent —
 * recovery.ts) has no known start: every bucket before its observed completion overlaps it.
 * Without any change, every bucket is read at the current units. (The settle window after a
 * change only keeps buckets from justifying a scale-in — samples.ts — it does not change how they
 * are read: a bucket after the observed completion was served by the new size.)
 */
import type { ScaleEvent } from "../api/index.js";
import { MINUTE_MS } from "./samples.js";
import { parseTime } from "./time.js";

/** A change of unit count, as the timeline reads it (times in ms since the epoch). */
export interface UnitChange {
  /** When the update was sent, ms. */
  startedMs: number;
  /** When its completion was observed, ms; `Infinity` while it is in flight. */
  completedMs: number;
  fromUnits: number;
  toUnits: number;
}

/** The capacity that served each bucket (see the module comment). */
export interface CapacityTimeline {
  /** Units to read a percentage of the bucket starting at `startMs` against, units. */
  unitsAt(startMs: number): number;
  /** The bucket starting at `startMs` may have been served by two sizes. */
  overlapsChange(startMs: number): boolean;
  /** The largest unit count that may have served the bucket starting at `startMs`, units. */
  maxUnitsAt(startMs: number): number;
  /** The changes the bucket starting at `startMs` overlaps (none: served by one size). */
  changesAt(startMs: number): readonly UnitChange[];
}

const ms = parseTime;

/**
 * The changes of a stored history (oldest first) and the update in flight, if any. A stored event
 * without `startedAt` (written before the field existed) counts as sent when it completed; a
 * recovered one (and a recovered update in flight) as sent before any bucket.
 */
export function unitChanges(
  events: readonly ScaleEvent[],
  inFlight?: { startedAt: string; from: { units: number }; to: { units: number }; recovered?: boolean },
): UnitChange[] {
  const out: UnitChange[] = [];
  for (const e of events) {
    const completedMs = ms(e.time);
    if (!Number.isFinite(completedMs)) continue;
    const sent = ms(e.startedAt);
    out.push({
      startedMs: e.recovered
        ? Number.NEGATIVE_INFINITY
        : Number.isFinite(sent)
          ? Math.min(sent, completedMs)
          : completedMs,
      completedMs,
      fromUnits: e.fromUnits,
      toUnits: e.toUnits,
    });
  }
  out.sort((a, b) => a.completedMs - b.completedMs);
  const sent = ms(inFlight?.startedAt);
  if (inFlight && Number.isFinite(sent)) {
    out.push({
      startedMs: inFlight.recovered ? Number.NEGATIVE_INFINITY : sent,
      completedMs: Number.POSITIVE_INFINITY,
      fromUnits: inFlight.from.units,
      toUnits: inFlight.to.units,
    });
  }
  return out;
}

/**
 * The timeline of `changes` (see {@link unitChanges}) for an instance that has `currentUnits`
 * now. Pure.
 */
export function capacityTimeline(changes: readonly UnitChange[], currentUnits: number): CapacityTimeline {
  const overlapping = (startMs: number): UnitChange[] =>
    changes.filter((c) => startMs + MINUTE_MS > c.startedMs && startMs < c.completedMs);
  const unitsAt = (startMs: number): number => {
    const during = overlapping(startMs);
    if (during.length > 0) return Math.min(...during.flatMap((c) => [c.fromUnits, c.toUnits]));
    // Served by what the changes left in place: the first later change's `from`.
    const later = changes.find((c) => c.startedMs >= startMs + MINUTE_MS);
    return later ? later.fromUnits : currentUnits;
  };
  return {
    unitsAt,
    overlapsChange: (startMs) => overlapping(startMs).length > 0,
    changesAt: overlapping,
    maxUnitsAt(startMs) {
      const during = overlapping(startMs);
      return during.length > 0
        ? Math.max(...during.flatMap((c) => [c.fromUnits, c.toUnits]))
        : unitsAt(startMs);
    },
  };
}
