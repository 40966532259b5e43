/**
 * The Headroom rule: the highest need per 5-minute slot is remembered over `headroom.horizon`
 * (`status.anticipation.peaks`); the floor is `max(peak · peakPercent% · (1 − age ÷ horizon))` —
 * after a burst most of it is kept, decaying to nothing; a steady instance's peaks equal its
 * need, so it keeps nothing extra. Pure.
 */

import { durationOr } from "../../api/duration.js";
import type { AnticipationStatus } from "../../api/index.js";
import { fmt, percentText } from "../format.js";
import type { DemandSeries } from "../signals/types.js";
import { parseTime } from "../time.js";
import {
  iso,
  MINUTE_MS,
  minutes,
  type Rule,
  type RuleAsk,
  type RuleContext,
  type RuleResult,
} from "./rule.js";

/** Headroom slots, ms, and how many are kept. */
const PEAK_SLOT_MS = 5 * MINUTE_MS;
const MAX_PEAKS = 24;

type Peak = { time: string; units: number };

/** The remembered peaks with this window's added, pruned to the horizon and bounded. */
function nextPeaks(
  previous: AnticipationStatus | undefined,
  demand: readonly DemandSeries[],
  nowMs: number,
  horizonMs: number,
): Peak[] {
  const slots = new Map<number, number>();
  for (const p of previous?.peaks ?? []) {
    const t = parseTime(p.time);
    if (Number.isFinite(t) && Number.isFinite(p.units) && nowMs - t < horizonMs) {
      slots.set(t, Math.max(slots.get(t) ?? 0, p.units));
    }
  }
  for (const d of demand) {
    for (const p of d.points) {
      const slot = Math.floor(p.start / PEAK_SLOT_MS) * PEAK_SLOT_MS;
      if (nowMs - slot < horizonMs) slots.set(slot, Math.max(slots.get(slot) ?? 0, p.units));
    }
  }
  const list = mergeClosest([...slots.entries()].sort((a, b) => a[0] - b[0]));
  return list.map(([t, units]) => ({ time: iso(t), units: Math.round(units * 100) / 100 }));
}

/**
 * At most {@link MAX_PEAKS} slots `[ms, units]`, by time: the closest neighbours merged, keeping
 * the larger peak and its time.
 */
function mergeClosest(sorted: [number, number][]): [number, number][] {
  let list = sorted;
  while (list.length > MAX_PEAKS) {
    let at = 0;
    for (let i = 1; i + 1 < list.length; i++) {
      const gap = (list[i + 1] as [number, number])[0] - (list[i] as [number, number])[0];
      const best = (list[at + 1] as [number, number])[0] - (list[at] as [number, number])[0];
      if (gap < best) at = i;
    }
    const a = list[at] as [number, number];
    const b = list[at + 1] as [number, number];
    list = [...list.slice(0, at), a[1] >= b[1] ? a : b, ...list.slice(at + 2)];
  }
  return list;
}

/** The highest decayed floor of the peaks, and the peak it comes from. */
function decayedFloor(peaks: readonly Peak[], keep: number, nowMs: number, horizonMs: number) {
  let floor = 0;
  let from: Peak | undefined;
  for (const p of peaks) {
    const age = nowMs - parseTime(p.time);
    const f = p.units * keep * Math.max(0, 1 - age / horizonMs);
    if (f > floor) {
      floor = f;
      from = p;
    }
  }
  return { floor, from };
}

export const headroomRule: Rule = { rule: "Headroom", evaluate: evaluateHeadroom };

/** The Headroom rule (see the module comment): no asks and no status when the spec turns it off. */
function evaluateHeadroom(ctx: RuleContext): RuleResult {
  const headroom = ctx.spec.headroom;
  const keep = (headroom?.peakPercent ?? 0) / 100;
  if (!(keep > 0)) return { asks: [] };
  const horizonMs = durationOr(headroom?.horizon, 3600) * 1000;
  const peaks = nextPeaks(ctx.previous, ctx.demand, ctx.nowMs, horizonMs);
  const status = peaks.length > 0 ? { peaks } : {};
  const { floor, from } = decayedFloor(peaks, keep, ctx.nowMs, horizonMs);
  if (!from || !(floor > 0)) return { asks: [], status };
  const ask: RuleAsk = {
    rule: "Headroom",
    units: floor,
    message: `${percentText(keep)} of the peak need of ${fmt(from.units)} units at ${from.time.slice(11, 16)} UTC, decayed over ${minutes(horizonMs)}: ${fmt(floor)} units`,
  };
  return { asks: [ask], status };
}
