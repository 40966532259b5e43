/**
 * Which part of a trace the demo replays. Pure.
 *
 * The demo plays a window of `durationMs` of a trace in trace time: the virtual clock starts at the
 * window's start, so the times shown are the trace's own. The window's largest value is scaled to
 * the requested peak.
 *
 * Default window: centred on a focus time — for the shipped trace, the flash crowd of 14 April
 * 2015 (its build-up over about 40 minutes lets a reactive autoscaler climb through Premium_P1 to
 * Premium_P2; the trace's single largest value, on 31 March, rises from quiet to its top in 25
 * minutes); for any other trace, the time of its largest value.
 */
import type { Trace, TracePoint } from "../traffic/index.js";

export const MINUTE_MS = 60_000;

/** The trace the demo plays unless told otherwise, relative to the project root. */
export const DEFAULT_TRACE = "traces/twitter_volume_aapl.csv";

/** The focus of the shipped trace: the top of the 14 April 2015 flash crowd (UTC). */
export const DEFAULT_TRACE_FOCUS_MS = Date.UTC(2015, 3, 14, 23, 20);

/** Share of the window before the focus (the rest comes after, for the way back down). */
const LEAD_SHARE = 0.47;

/** A window of a trace. */
export interface TraceWindow {
  /** Start of the replay, ms (a whole minute). */
  startMs: number;
  /** Length of the replay, ms (whole minutes). */
  durationMs: number;
  /**
   * The rows the replay reads: those in the window plus one on each side (for interpolation at
   * the edges); `max` is the largest value inside the window.
   */
  trace: Trace;
  /** When the demand function's replay starts: the first row's time (so virtual time = trace time). */
  replayStartMs: number;
}

/** The time of the trace's largest value (the first, when it occurs more than once). */
export function peakTime(trace: Trace): number {
  let best = trace.points[0] as TracePoint;
  for (const p of trace.points) if (p.value > best.value) best = p;
  return best.t;
}

/**
 * The default start of a window of `durationMs`: a little under half of it before the focus,
 * floored to 5 minutes, and kept inside the trace where it is long enough.
 */
export function defaultWindowStart(trace: Trace, durationMs: number, focusMs = peakTime(trace)): number {
  const first = (trace.points[0] as TracePoint).t;
  const last = (trace.points[trace.points.length - 1] as TracePoint).t;
  let start = focusMs - durationMs * LEAD_SHARE;
  start = Math.min(start, last - durationMs);
  start = Math.max(start, first);
  return Math.floor(start / (5 * MINUTE_MS)) * 5 * MINUTE_MS;
}

/**
 * The window `[startMs, startMs + durationMs)` of a trace.
 * @throws RangeError when the window does not overlap the trace or holds fewer than two rows.
 */
export function traceWindow(trace: Trace, startMs: number, durationMs: number): TraceWindow {
  const start = Math.floor(startMs / MINUTE_MS) * MINUTE_MS;
  const duration = Math.max(MINUTE_MS, Math.floor(durationMs / MINUTE_MS) * MINUTE_MS);
  const end = start + duration;
  const pts = trace.points;
  let from = pts.findIndex((p) => p.t >= start);
  if (from === -1) {
    throw new RangeError(
      `the window starting ${new Date(start).toISOString()} begins after the trace ends (${new Date((pts[pts.length - 1] as TracePoint).t).toISOString()})`,
    );
  }
  let to = from;
  while (to < pts.length && (pts[to] as TracePoint).t < end) to++;
  if (to === from && (pts[from] as TracePoint).t >= end) {
    throw new RangeError(
      `the window ${new Date(start).toISOString()} – ${new Date(end).toISOString()} holds no row of the trace (it starts ${new Date((pts[0] as TracePoint).t).toISOString()})`,
    );
  }
  const inside = pts.slice(from, to);
  if (from > 0) from--;
  if (to < pts.length) to++;
  const points = pts.slice(from, to);
  if (points.length < 2) throw new RangeError("the window holds fewer than two rows of the trace");
  const first = points[0] as TracePoint;
  const last = points[points.length - 1] as TracePoint;
  const max = Math.max(...(inside.length > 0 ? inside : points).map((p) => p.value));
  return {
    startMs: start,
    durationMs: duration,
    replayStartMs: first.t,
    trace: {
      source: trace.source,
      points,
      max,
      stepMs: trace.stepMs,
      durationMs: last.t - first.t + trace.stepMs,
    },
  };
}
