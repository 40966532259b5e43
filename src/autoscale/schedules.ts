/**
 * Schedules (`spec.schedules`) and scale-in windows (`spec.scaleInWindows`), read with croner in
 * the named IANA time zone (five-field classic cron: day-of-month OR day-of-week).
 *
 * Pinned semantics: a schedule or window is active at `now` when its most recent start at or
 * before `now` lies within `durationMinutes` of it — active over `[start, start + duration)`.
 * While a schedule is active, units stay at or above its `minUnits` (the highest of the active
 * ones). When scale-in windows are set, scale-in happens only while one is active; without any,
 * scale-in is always allowed. A schedule or window whose cron or zone cannot be read is reported
 * (`ScheduleInvalid`); such a schedule raises no floor and such a window is never open (the
 * policy asked to restrict scale-in, so an unreadable window keeps restricting it).
 */
import { Cron } from "croner";
import type { ScaleInWindowSpec, ScheduleSpec } from "../api/index.js";

/** When a cron-with-duration is active. */
export interface ActiveSpan {
  name: string;
  /** Start of the current activation, RFC 3339. */
  startedAt: string;
  /** End of it (exclusive), RFC 3339. */
  endsAt: string;
}

/** What schedules and scale-in windows say at one instant. */
export interface ScheduleState {
  /** The highest minUnits of the active schedules; undefined when none is active. */
  floorUnits?: number;
  /** The active schedule that sets the floor. */
  floorSchedule?: string;
  activeSchedules: (ActiveSpan & { minUnits: number })[];
  /** True when scale-in windows are set. */
  windowsDefined: boolean;
  /** Scale-in windows open now. */
  openWindows: ActiveSpan[];
  /** No windows set, or one is open. */
  scaleInAllowed: boolean;
  /** Entries whose cron or time zone cannot be read. */
  invalid: { name: string; error: string }[];
}

/**
 * The start of the activation of `cron` (in `timeZone`) covering `nowMs`, or undefined when it is
 * not active. Throws RangeError when the expression or the zone cannot be read.
 */
export function activeSince(
  cron: string,
  timeZone: string,
  durationMinutes: number,
  nowMs: number,
): { start: number; end: number } | undefined {
  let job: Cron;
  try {
    job = new Cron(cron, { timezone: timeZone, paused: true, mode: "5-part" });
  } catch (err) {
    throw new RangeError(`invalid cron expression ${JSON.stringify(cron)}: ${(err as Error).message}`);
  }
  let prev: Date | undefined;
  try {
    // previousRuns excludes a run exactly at the reference; 1 ms later includes it.
    prev = job.previousRuns(1, new Date(nowMs + 1))[0];
  } catch (err) {
    throw new RangeError(`cannot evaluate ${JSON.stringify(cron)} in ${timeZone}: ${(err as Error).message}`);
  }
  if (!prev) return undefined;
  const start = prev.getTime();
  const end = start + durationMinutes * 60_000;
  return nowMs >= start && nowMs < end ? { start, end } : undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Evaluates the policy's schedules and scale-in windows at `nowMs`. Pure. */
export function evaluateSchedules(
  schedules: readonly ScheduleSpec[] | undefined,
  windows: readonly ScaleInWindowSpec[] | undefined,
  nowMs: number,
): ScheduleState {
  const state: ScheduleState = {
    activeSchedules: [],
    windowsDefined: false,
    openWindows: [],
    scaleInAllowed: true,
    invalid: [],
  };
  for (const s of schedules ?? []) {
    try {
      const span = activeSince(s.cron, s.timeZone, s.durationMinutes, nowMs);
      if (span) {
        state.activeSchedules.push({
          name: s.name,
          startedAt: iso(span.start),
          endsAt: iso(span.end),
          minUnits: s.minUnits,
        });
        if (state.floorUnits === undefined || s.minUnits > state.floorUnits) {
          state.floorUnits = s.minUnits;
          state.floorSchedule = s.name;
        }
      }
    } catch (err) {
      state.invalid.push({ name: s.name, error: (err as Error).message });
    }
  }
  for (const w of windows ?? []) {
    try {
      const span = activeSince(w.cron, w.timeZone, w.durationMinutes, nowMs);
      if (span) state.openWindows.push({ name: w.name, startedAt: iso(span.start), endsAt: iso(span.end) });
    } catch (err) {
      state.invalid.push({ name: w.name, error: (err as Error).message });
    }
  }
  state.windowsDefined = (windows ?? []).length > 0;
  state.scaleInAllowed = !state.windowsDefined || state.openWindows.length > 0;
  return state;
}
