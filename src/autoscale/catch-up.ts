/**
 * Catch-up: how many periods of a scale-up rate policy one scale-out may use while the demand is
 * above what the metrics can show. Pure.
 *
 * The HorizontalPodAutoscaler applies a rate policy once per sync (15 s): with `Percent 100 per
 * 60s` a Deployment whose pods stay saturated may double every minute, 32 × in five. The operator
 * sends one ARM update at a time, a scale takes minutes (the scale duration), and the first bucket
 * at the new size is read an ingestion delay after it lands: applied once per scale, the same
 * policy doubles once per ~9 minutes, and a crowd of 50 times the quota takes six scales to reach.
 *
 * So while a usable signal's newest bucket is at its ceiling (the connection quota full, server
 * load at 100 %: the demand above it is unknown, `DemandSeries.saturated`), the n-th scale-out of
 * a run of them applies each scale-up policy n times over, each time from the limit the last one
 * allowed (Percent compounds, Steps and Units add), at most once per period of one scale duration
 * (`⌊scale duration ÷ periodSeconds⌋`, at least once) — what the HPA's policy would have allowed
 * while that scale ran, had it seen the same saturation at every sync:
 *
 *     periods = min(1 + scale-outs in the run, max(1, ⌊scaleSeconds ÷ periodSeconds⌋))
 *
 * A run: the scale-outs of status.scaleEvents, newest first, each sent (`startedAt`, else `time`)
 * at most {@link runGapSeconds} before the next one, or before now for the newest; a scale-in
 * ends it. The first
 * scale-out of a crowd uses one period, as written; only demand that is still above the quota
 * after one (the new size saturated in its turn) earns more. Not saturated: one period.
 */
import type { ScaleEvent } from "./history.js";
import { parseTime } from "./time.js";

/** What the rate policies read to compound: the run of scale-outs so far and one scale's length. */
export interface CatchUp {
  /** Scale-outs in the run that is still catching up (0: this one would be the first). */
  scaleOuts: number;
  /** The scale duration, seconds (scale-duration.ts). */
  scaleSeconds: number;
}

/**
 * The longest time from one scale-out of a run to the next, seconds: the scale, then the window
 * filled at the new size after the ingestion delay, then a poll — the earliest a decision can see
 * that the new size is saturated too (5 min + 5 min + 3 min + 30 s with the defaults).
 */
export function runGapSeconds(times: {
  scaleSeconds: number;
  windowSeconds: number;
  ingestionDelaySeconds: number;
  pollSeconds: number;
}): number {
  return times.scaleSeconds + times.windowSeconds + times.ingestionDelaySeconds + times.pollSeconds;
}

/**
 * The catch-up of this pass: undefined when no usable signal is at its ceiling (the policies
 * apply once, as written); else the scale-outs of the run ending now (see the module comment).
 */
export function catchUp(input: {
  saturated: boolean;
  events: readonly ScaleEvent[];
  nowMs: number;
  gapSeconds: number;
  scaleSeconds: number;
}): CatchUp | undefined {
  if (!input.saturated) return undefined;
  const events = input.events
    .map((e) => ({ up: e.toUnits > e.fromUnits, at: parseTime(e.startedAt ?? e.time) }))
    .filter((e) => Number.isFinite(e.at) && e.at <= input.nowMs)
    .sort((a, b) => b.at - a.at);
  let scaleOuts = 0;
  let next = input.nowMs;
  for (const e of events) {
    // A scale-in ends the run, as does a gap longer than one step of it.
    if (!e.up || next - e.at > input.gapSeconds * 1000) break;
    scaleOuts++;
    next = e.at;
  }
  return { scaleOuts, scaleSeconds: input.scaleSeconds };
}

/** How many times a policy of `periodSeconds` applies to one scale-out (module comment). */
export function catchUpPeriods(c: CatchUp | undefined, periodSeconds: number): number {
  if (!c || !(periodSeconds > 0)) return 1;
  const perScale = Math.max(1, Math.floor(c.scaleSeconds / periodSeconds));
  return Math.min(1 + c.scaleOuts, perScale);
}
