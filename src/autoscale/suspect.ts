/**
 * A signal that does not respond to capacity: server load that stays where it was after a
 * completed scale-out although nothing says demand grew.
 *
 * Server load is a percentage of the capacity: with constant demand, a scale-out from `from` to
 * `to` units brings it down by about `from / to`. Connections and traffic are absolute: they show
 * whether demand grew. So, with the levels of the window before the update was sent kept on its
 * scale event (`before`), and the levels of the window's buckets that start after the change's
 * observed completion (`after`; judged as soon as there is one):
 * - server load is **suspect** when it fell by less than half of what `from / to` explains
 *   (`after > before × (1 + from/to) / 2`) while no absolute measure grew by half of what would
 *   explain it (`after / before < 1 + (to/from − 1) / 2` for connections and for traffic bytes/s,
 *   each where both levels are known);
 * - with no absolute measure known on both sides, nothing is suspect (a real load is never held on
 *   a guess);
 * - while suspect, server load asks for no more than the current units (its scale-out is held);
 *   the other signals act as before; the hold ends when the signal responds, an absolute measure
 *   grows, another scale happens, or {@link SUSPECT_HOLD_SECONDS} (1 hour) after the change — then
 *   it is trusted for one more scale-out, which is checked the same way.
 */
import type { ScaleEvent } from "../api/index.js";
import { parseTime } from "./time.js";

/** How long a suspect signal's scale-out is held after the change it did not respond to, seconds. */
const SUSPECT_HOLD_SECONDS = 3600;

/** Peak levels of a window, as measured (not converted). */
export interface SignalLevels {
  /** ServerLoad, %. */
  serverLoadPercent?: number;
  /** Concurrent connections. */
  connections?: number;
  /** Inbound + outbound traffic, bytes/s. */
  bytesPerSecond?: number;
}

/** Why server load is suspect, or nothing. */
export interface SuspectSignal {
  signal: "serverLoad";
  message: string;
}

/**
 * Whether server load is suspect now (see the module comment). `event` is the last completed scale
 * event; `after(fromMs)` the peak levels of the window's buckets that start at or after `fromMs`
 * (empty when there is none). Pure.
 */
export function suspectServerLoad(
  event: (ScaleEvent & { before?: SignalLevels }) | undefined,
  after: (fromMs: number) => SignalLevels,
  nowMs: number,
): SuspectSignal | undefined {
  const before = event?.before;
  if (!event || !before || event.toUnits <= event.fromUnits) return undefined;
  const completedMs = parseTime(event.time);
  if (!(nowMs - completedMs <= SUSPECT_HOLD_SECONDS * 1000)) return undefined;
  const now = after(Math.ceil(completedMs / 60_000) * 60_000);
  const loadBefore = before.serverLoadPercent;
  const loadAfter = now.serverLoadPercent;
  if (loadBefore === undefined || loadAfter === undefined || loadBefore <= 0) return undefined;
  const shrink = event.fromUnits / event.toUnits;
  if (!(loadAfter > (loadBefore * (1 + shrink)) / 2)) return undefined;
  const growthExplaining = 1 + (1 / shrink - 1) / 2;
  const measures: string[] = [];
  for (const key of ["connections", "bytesPerSecond"] as const) {
    const a = before[key];
    const b = now[key];
    if (a === undefined || b === undefined || a <= 0) continue;
    if (b / a >= growthExplaining) return undefined;
    measures.push(`${key === "connections" ? "connections" : "traffic"} ×${round(b / a)}`);
  }
  if (measures.length === 0) return undefined;
  return {
    signal: "serverLoad",
    message: `server load ${round(loadAfter)} % did not respond to the scale-out ${event.fromUnits} → ${event.toUnits} units at ${event.time} (it was ${round(loadBefore)} %; about ${round(loadBefore * shrink)} % was expected) while ${measures.join(", ")} since: its scale-out is held until it responds, demand grows or ${SUSPECT_HOLD_SECONDS / 60} minutes after that change`,
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
