/**
 * How high this instance's peaks came back: per drop in its demand history, the highest bucket
 * within the scale-down stabilization window after it, as a fraction of the peak; and how much of
 * a peak the window holds on that record (`behavior.scaleDown.minStabilizationWindowSeconds`).
 * Pure (the estimate of one history is remembered per history object: the operator and
 * `simulate` hand the same object out until their hourly refresh).
 *
 * Rule, over the history's buckets (peak connections, Azure Monitor `ConnectionCount` Maximum per
 * grain, and whether they filled the quota, `ConnectionQuotaUtilization` ≥ 99 %; demand-history.ts):
 * - a **peak** `P` is the highest bucket of the {@link PEAK_SPAN_MS} before a bucket `t`, at least
 *   {@link MIN_PEAK_CONNECTIONS} (smaller peaks free too few units to be worth a scale-in);
 * - a **drop** is the first bucket below {@link DROP_FRACTION} of `P` (the one before it is not);
 * - its **return** is the highest bucket starting within the window after it, ÷ `P`; unbounded
 *   when one of them filled the quota (clients were refused there, and the count, capped by the
 *   units of the time, hides how high the demand rose: once a peak is let go, the rises after a
 *   scale-in are exactly those). A drop whose window runs past the history's end is not counted
 *   (its return is not known yet).
 *
 * The **level** held is the {@link RETURN_QUANTILE} quantile of the returns: the fraction of its
 * peak that 60 % of the drops came back to at most. Below 1, the scale-down window holds its
 * highest recommendation at that fraction of its units once `minStabilizationWindowSeconds` have
 * passed (the highest of those last seconds whole, stabilize in behavior.ts); at 1 or above it
 * holds it whole. The whole window holds while the history cannot say: not read, coarser than
 * {@link MAX_GRAIN_SECONDS}, shorter than {@link MIN_HISTORY_MS}, or fewer than {@link MIN_DROPS}
 * drops.
 *
 * The figures come from `simulate` on fifteen public traces scaled to 120,000 connections
 * (docs/simulate.md, "Peaks that come back"). The level was 0.49 of the peak on the Twitter AAPL
 * trace's last 14 days and 0.48 on KO's, where a 45-minute window takes 14–21 % more unit-hours
 * than a 10-minute one; 1 or more on the GOOG, IBM, CRM, load-balancer and CVS traces, where a
 * 10-minute window refuses in up to 13.9 × the minutes of a 45-minute one (on CVS, whose bursts
 * start from nothing, 46 % of the drops came back to the whole peak). The 60 % quantile is the
 * lowest that kept every one of the fifteen at or under 0.9 × the refusing minutes of the policy
 * before the disruption weighing; 50 % refused 0.92 × on CVS.
 */
import { type DemandHistory, quotaFilled } from "./demand-history.js";
import { percentText } from "./format.js";

/** Span a peak is read over before a drop, ms (two PT5M buckets). */
export const PEAK_SPAN_MS = 10 * 60_000;
/** Smallest peak counted, connections: three units' quota (1,000 connections per unit, every SKU). */
export const MIN_PEAK_CONNECTIONS = 3_000;
/** A bucket below this fraction of the peak is a drop. */
export const DROP_FRACTION = 0.7;
/** Fewest drops the history must hold to say anything. */
export const MIN_DROPS = 5;
/** Least history read, ms (one day). */
export const MIN_HISTORY_MS = 24 * 3_600_000;
/** Coarsest grain that can see a peak come back within a window of minutes, seconds (PT5M). */
export const MAX_GRAIN_SECONDS = 300;
/** Share of the drops whose return the level held covers: the quantile of the returns taken. */
export const RETURN_QUANTILE = 0.6;

/** What the history says about peaks coming back within a window. */
export type Recurrence =
  | {
      state: "Ok";
      /** Drops counted. */
      drops: number;
      /**
       * The {@link RETURN_QUANTILE} quantile of their returns, a fraction of the peak (≥ 0; above
       * 1 when most came back higher, Infinity when the quota filled after enough of them).
       */
      level: number;
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
  const returns = dropReturns(
    c,
    Math.max(1, Math.round(PEAK_SPAN_MS / grainMs)),
    Math.floor((windowSeconds * 1000) / grainMs),
  );
  const drops = returns.length;
  if (drops < MIN_DROPS) {
    return {
      state: "InsufficientHistory",
      message: `${drops} drop${drops === 1 ? "" : "s"} from a peak of ${MIN_PEAK_CONNECTIONS.toLocaleString("en-US")} connections or more in the history, ${MIN_DROPS} needed`,
    };
  }
  const sorted = [...returns].sort((a, b) => a - b);
  const level = sorted[Math.min(drops - 1, Math.floor(RETURN_QUANTILE * drops))] as number;
  return { state: "Ok", drops, level };
}

/** One bucket of {@link dense}: its peak connections (null when unknown) and whether they filled the quota. */
interface Bucket {
  connections: number | null;
  filled: boolean;
}

/** The buckets from the first to the last, by index: a missing bucket is unknown (null), never zero. */
function dense(history: DemandHistory): Bucket[] {
  const grainMs = history.grainSeconds * 1000;
  const first = (history.points[0] as DemandHistory["points"][number]).timeMs;
  const last = (history.points.at(-1) as DemandHistory["points"][number]).timeMs;
  const size = Math.round((last - first) / grainMs) + 1;
  const c: Bucket[] = Array.from({ length: size }, () => ({ connections: null, filled: false }));
  for (const p of history.points) {
    const i = Math.round((p.timeMs - first) / grainMs);
    if (i >= 0 && i < size) c[i] = { connections: p.connections, filled: quotaFilled(p) };
  }
  return c;
}

/** The return of each drop of `c` (peaks over `span` buckets) within `ahead` buckets, in time order. */
function dropReturns(c: readonly Bucket[], span: number, ahead: number): number[] {
  const at = (i: number) => c[i]?.connections ?? null;
  const returns: number[] = [];
  for (let t = span; t + ahead < c.length; t++) {
    const now = at(t);
    const before = at(t - 1);
    if (now == null || before == null) continue;
    let peak = 0;
    for (let i = t - span; i < t; i++) peak = Math.max(peak, at(i) ?? 0);
    if (peak < MIN_PEAK_CONNECTIONS || !(now < DROP_FRACTION * peak) || before < DROP_FRACTION * peak)
      continue;
    let highest = 0;
    for (let i = t + 1; i <= t + ahead; i++) {
      highest = Math.max(highest, c[i]?.filled ? Number.POSITIVE_INFINITY : (at(i) ?? 0));
    }
    returns.push(highest / peak);
  }
  return returns;
}

/** The scale-down stabilization window of this pass, and how much of a peak it holds. */
export interface ScaleDownWindow {
  /** The policy's window (`stabilizationWindowSeconds`), seconds. */
  seconds: number;
  /**
   * Set when the history lets a peak go in part: once `afterSeconds` have passed, the window's
   * highest recommendation is held at `fraction` (0..1) of its units.
   */
  partial?: { afterSeconds: number; fraction: number };
  /** Why it holds what it holds; absent when the policy sets no minimum. */
  basis?: string;
}

/**
 * What the window of `seconds` holds by `recurrence` (see the module comment): the whole peak when
 * `minSeconds` is undefined or not below `seconds`, when the history cannot say, when its level is
 * 1 or more, or when `idle` says why the history may not act (the basis then says what it would
 * hold, when it can say); else the level after `minSeconds`.
 */
export function scaleDownWindow(
  seconds: number,
  minSeconds: number | undefined,
  recurrence: () => Recurrence,
  idle?: string,
): ScaleDownWindow {
  if (minSeconds === undefined || !(minSeconds < seconds)) return { seconds };
  const r = recurrence();
  if (r.state !== "Ok") return { seconds, basis: `whole: ${idle ?? r.message}` };
  const quantile = percentText(RETURN_QUANTILE);
  if (!(r.level < 1)) {
    // The level is the return at rank RETURN_QUANTILE: the rest of the drops came back at least as high.
    const how = Number.isFinite(r.level) ? `to ${percentText(r.level)} of it or more` : "to a full quota";
    return {
      seconds,
      basis: `whole: ${percentText(1 - RETURN_QUANTILE)} or more of ${r.drops} drops from a peak came back ${how} within ${seconds}s in the history`,
    };
  }
  const fraction = Math.max(0, r.level);
  const held = `${percentText(fraction)} after ${minSeconds}s: ${quantile} of ${r.drops} drops from a peak came back to at most ${percentText(fraction)} of it within ${seconds}s in the history`;
  if (idle !== undefined) return { seconds, basis: `whole: ${idle}; by the history it would hold ${held}` };
  return { seconds, partial: { afterSeconds: minSeconds, fraction }, basis: `holding ${held}` };
}
