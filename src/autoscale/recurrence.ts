/**
 * How often this instance's peaks came back: the share of the drops in its demand history that
 * rose back to their peak within the scale-down stabilization window, and the window that share
 * calls for (`behavior.scaleDown.minStabilizationWindowSeconds`). Pure (the estimate of one
 * history is remembered per history object: the operator and `simulate` hand the same object out
 * until their hourly refresh).
 *
 * Rule, over the history's buckets (peak connections, Azure Monitor `ConnectionCount` Maximum per
 * grain; demand-history.ts):
 * - a **peak** `P` is the highest bucket of the {@link PEAK_SPAN_MS} before a bucket `t`, at least
 *   {@link MIN_PEAK_CONNECTIONS} (smaller peaks free too few units to be worth a scale-in);
 * - a **drop** is the first bucket below {@link DROP_FRACTION} of `P` (the one before it is not);
 * - it **recurred** when a bucket starting within the window after it reaches
 *   {@link RECUR_FRACTION} of `P` again (a scale-in made at the drop would have been scaled out
 *   again). A drop whose window runs past the history's end is not counted (its outcome is not
 *   known yet).
 *
 * The window: `min + (max − min) × clamp((share − LOW) ÷ (HIGH − LOW), 0, 1)` with LOW
 * {@link LOW_SHARE} and HIGH {@link HIGH_SHARE}: peaks that seldom came back are let go after the
 * minimum, peaks that mostly did are kept the whole window. The policy's window (`max`) holds while
 * the history cannot say: not read, coarser than {@link MAX_GRAIN_SECONDS}, shorter than
 * {@link MIN_HISTORY_MS}, or fewer than {@link MIN_DROPS} drops.
 *
 * The figures come from `simulate` on fifteen public traces (docs/simulate.md, "Peaks that come
 * back"): on 14-day stretches of the traces scaled to 120,000 connections the share was 10–22 %
 * on the Twitter AAPL trace and 5–24 % on KO, where a 45-minute window took 20 % and 14 % more
 * unit-hours than a 10-minute one for 14 % and 13 % fewer refusing minutes, and 67–79 % on the
 * GOOG, IBM and load-balancer traces, where a 10-minute window refused in 2.1–13.9 × the minutes
 * of a 45-minute one. The share does not tell every shape apart: the CVS trace's (6–11 % at first,
 * then mostly 33–47 %) kept its window short, and it refused in 3.1 × the minutes of a fixed
 * 45-minute window there — hence opt-in.
 */
import type { DemandHistory } from "./demand-history.js";

/** Span a peak is read over before a drop, ms (two PT5M buckets). */
export const PEAK_SPAN_MS = 10 * 60_000;
/** Smallest peak counted, connections: three units' quota (1,000 connections per unit, every SKU). */
export const MIN_PEAK_CONNECTIONS = 3_000;
/** A bucket below this fraction of the peak is a drop. */
export const DROP_FRACTION = 0.7;
/** A bucket at or above this fraction of the peak after a drop is the peak come back. */
export const RECUR_FRACTION = 0.9;
/** Fewest drops the history must hold to say anything. */
export const MIN_DROPS = 5;
/** Least history read, ms (one day). */
export const MIN_HISTORY_MS = 24 * 3_600_000;
/** Coarsest grain that can see a peak come back within a window of minutes, seconds (PT5M). */
export const MAX_GRAIN_SECONDS = 300;
/** Shares of recurred drops at or below which the minimum window applies, and at or above which the whole window does. */
export const LOW_SHARE = 0.4;
export const HIGH_SHARE = 0.5;

/** What the history says about peaks coming back within a window. */
export type Recurrence =
  | {
      state: "Ok";
      /** Drops counted, and how many of them recurred within the window. */
      drops: number;
      recurred: number;
      /** `recurred ÷ drops`, 0..1. */
      share: number;
    }
  | { state: "Unavailable" | "InsufficientHistory"; message: string };

const memo = new WeakMap<DemandHistory, Map<number, Recurrence>>();

/** The drops of `history` and how many recurred within `windowSeconds` (see the module comment). */
export function peakRecurrence(history: DemandHistory | undefined, windowSeconds: number): Recurrence {
  if (!history) return { state: "Unavailable", message: "history not read yet" };
  const known = memo.get(history)?.get(windowSeconds);
  if (known) return known;
  const out = estimate(history, windowSeconds);
  const byWindow = memo.get(history) ?? new Map<number, Recurrence>();
  byWindow.set(windowSeconds, out);
  memo.set(history, byWindow);
  return out;
}

function estimate(history: DemandHistory, windowSeconds: number): Recurrence {
  if (history.error !== undefined) {
    return { state: "Unavailable", message: `history could not be read: ${history.error}` };
  }
  if (history.grainSeconds > MAX_GRAIN_SECONDS) {
    return {
      state: "Unavailable",
      message: `history at ${history.grainSeconds}s buckets cannot tell a peak that comes back within minutes (grain 5m needed)`,
    };
  }
  const grainMs = history.grainSeconds * 1000;
  const first = history.points[0];
  const last = history.points.at(-1);
  if (!first || !last || last.timeMs + grainMs - first.timeMs < MIN_HISTORY_MS) {
    return { state: "InsufficientHistory", message: "less than a day of history" };
  }
  const c = dense(history);
  const { drops, recurred } = countDrops(
    c,
    Math.max(1, Math.round(PEAK_SPAN_MS / grainMs)),
    Math.floor((windowSeconds * 1000) / grainMs),
  );
  if (drops < MIN_DROPS) {
    return {
      state: "InsufficientHistory",
      message: `${drops} drop${drops === 1 ? "" : "s"} from a peak of ${MIN_PEAK_CONNECTIONS.toLocaleString("en-US")} connections or more in the history, ${MIN_DROPS} needed`,
    };
  }
  return { state: "Ok", drops, recurred, share: recurred / drops };
}

/** Connections per bucket from the first to the last, by index: a missing bucket is unknown (null), never zero. */
function dense(history: DemandHistory): (number | null)[] {
  const grainMs = history.grainSeconds * 1000;
  const first = (history.points[0] as DemandHistory["points"][number]).timeMs;
  const last = (history.points.at(-1) as DemandHistory["points"][number]).timeMs;
  const size = Math.round((last - first) / grainMs) + 1;
  const c: (number | null)[] = new Array(size).fill(null);
  for (const p of history.points) {
    const i = Math.round((p.timeMs - first) / grainMs);
    if (i >= 0 && i < size) c[i] = p.connections;
  }
  return c;
}

/** The drops of `c` (peaks over `span` buckets) and how many came back within `ahead` buckets. */
function countDrops(c: readonly (number | null)[], span: number, ahead: number) {
  let drops = 0;
  let recurred = 0;
  for (let t = span; t + ahead < c.length; t++) {
    const now = c[t];
    const before = c[t - 1];
    if (now == null || before == null) continue;
    let peak = 0;
    for (let i = t - span; i < t; i++) peak = Math.max(peak, c[i] ?? 0);
    if (peak < MIN_PEAK_CONNECTIONS || !(now < DROP_FRACTION * peak) || before < DROP_FRACTION * peak)
      continue;
    drops++;
    for (let i = t + 1; i <= t + ahead; i++) {
      if ((c[i] ?? 0) >= RECUR_FRACTION * peak) {
        recurred++;
        break;
      }
    }
  }
  return { drops, recurred };
}

/** The scale-down stabilization window of this pass, and why. */
export interface ScaleDownWindow {
  /** Seconds. */
  seconds: number;
  /** The policy's window (`stabilizationWindowSeconds`), seconds. */
  maxSeconds: number;
  /** Why the window is what it is; absent when the policy sets no minimum. */
  basis?: string;
}

/**
 * The window between `minSeconds` and `maxSeconds` that `recurrence` calls for (see the module
 * comment); `maxSeconds` when `minSeconds` is undefined or not below it, or when `idle` says why
 * the history may not act (the basis then says what it would give, when it can say).
 */
export function scaleDownWindow(
  maxSeconds: number,
  minSeconds: number | undefined,
  recurrence: () => Recurrence,
  idle?: string,
): ScaleDownWindow {
  if (minSeconds === undefined || !(minSeconds < maxSeconds)) return { seconds: maxSeconds, maxSeconds };
  const r = recurrence();
  if (r.state !== "Ok") {
    return { seconds: maxSeconds, maxSeconds, basis: `kept whole: ${idle ?? r.message}` };
  }
  const f = Math.min(1, Math.max(0, (r.share - LOW_SHARE) / (HIGH_SHARE - LOW_SHARE)));
  const seconds = Math.round(minSeconds + (maxSeconds - minSeconds) * f);
  const pct = Math.round(r.share * 100);
  const share = `${pct} % of ${r.drops} drops from a peak came back within ${maxSeconds}s in the history`;
  if (idle !== undefined) {
    return {
      seconds: maxSeconds,
      maxSeconds,
      basis: `kept whole: ${idle}; by the history it would be ${seconds}s (${share})`,
    };
  }
  return { seconds, maxSeconds, basis: share };
}
