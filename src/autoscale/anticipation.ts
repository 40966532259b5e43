/**
 * Anticipation: the units the demand will need one lead time from now, before the metrics show it.
 * Pure: the clock and the history come in as arguments.
 *
 * Lead time (what a decision made now must cover): the effective ingestion delay (until a
 * minute's metrics are complete) + the scale duration (the median, send → completion observed, of
 * this instance's recent completed updates; `spec.anticipation.scaleDuration` until one is
 * measured) + one poll interval (the next decision's update lands that much later). Capacity
 * decided now is sized for the demand at `now + scale duration + poll interval`, projected from
 * buckets that end `ingestion delay` before now.
 *
 * Rules (each gives units, un-snapped; the largest wins; none ever lowers the reactive need):
 * - **Trend**: each signal's need per bucket of the window (signals.ts `DemandSeries`) gets a
 *   Theil–Sen line (trend.ts); when it rises consistently (Kendall's tau ≥ 0.6 over ≥ 3 buckets)
 *   and by more than twice the tolerance band and 3 × the points' scatter around the line across
 *   the window (`lower-quartile slope · span ≥ max(2 · tolerance · peak, 3 · 1.4826 ·
 *   MAD(residuals))`: noise on a flat signal does neither), the line is read at the target time, capped at 4 × the window's peak. A series whose newest
 *   bucket is at its ceiling is left to the next rule.
 * - **CensoredDemand**: while the connection quota is full the count stops telling demand. The
 *   growth measured on the last unsaturated buckets (kept in `status.anticipation.growth`, for up
 *   to 15 minutes) — or, when larger, the climb into the ceiling (ceiling − the last unsaturated
 *   bucket, per minute: a lower bound of the growth) — is extended to the target time, at most
 *   4 × the ceiling: one step to the estimate instead of doubling per round trip. A bucket that
 *   overlaps a capacity change is never read as saturated (its ceiling is not known).
 * - **Headroom**: the highest need per 5-minute slot is remembered over `headroom.horizon`; the
 *   floor is `max(peak · peakPercent% · (1 − age ÷ horizon))` — after a burst most of it is kept,
 *   decaying to nothing; a steady instance's peaks equal its need, so it keeps nothing extra.
 * - **Seasonal**: `forecast.ts` on the instance's history: the window's peak need × the growth
 *   the same span of past cycles saw (only when above 1).
 * - **LeadingSignal**: `leading.ts` on the app servers' negotiate rate (or client connections)
 *   read from Prometheus: the connections it brings by the target time, without Azure Monitor's
 *   ingestion delay and without the cap of a full quota.
 */

import { median } from "simple-statistics";
import { type AnticipationMode, MAX_SCALE_DURATION_SECONDS } from "../api/constants.js";
import { durationOr } from "../api/duration.js";
import type { AnticipationRule, AnticipationSpec, AnticipationStatus } from "../api/index.js";
import { ceilSafe } from "./behavior.js";
import type { DemandHistory } from "./demand-history.js";
import { seasonalForecast } from "./forecast.js";
import type { ScaleEvent } from "./history.js";
import { type LeadingObservation, leadingSignal } from "./leading.js";
import { measuredScaleSeconds } from "./overdue.js";
import type { DemandSeries } from "./signals.js";
import { fmt } from "./signals.js";
import { parseTime } from "./time.js";
import { theilSen } from "./trend.js";

const MINUTE_MS = 60_000;
/** Kendall's tau from which a rise counts as a trend. */
const TREND_TAU = 0.6;
/**
 * Across the window a rise must exceed this many tolerance bands of the level: by chance, five
 * noisy buckets in a row do rise (1 in 120 windows), but hardly by twice the band.
 */
const RISE_BANDS = 2;
/** A rise must exceed this many times the points' scatter around the line. */
const NOISE_RISE = 3;
/** Fewest buckets a trend is fitted on. */
const TREND_POINTS = 3;
/** A projection never exceeds this multiple of the window's peak. */
const MAX_PROJECTION = 4;
/** How long a growth measured before saturation is extended, ms. */
const GROWTH_TTL_MS = 15 * MINUTE_MS;
/** Headroom slots, ms, and how many are kept. */
const PEAK_SLOT_MS = 5 * MINUTE_MS;
const MAX_PEAKS = 24;
/** Recent completed updates the scale duration is measured on. */
const MEASURED_UPDATES = 5;

/** Everything anticipation reads. */
export interface AnticipationInput {
  spec: AnticipationSpec | undefined;
  nowMs: number;
  pollSeconds: number;
  /** The ingestion delay the decision reads with (effective), seconds. */
  ingestionDelaySeconds: number;
  /** The metrics window, seconds. */
  windowSeconds: number;
  /** End of the window (start of the newest bucket it leaves out), ms. */
  windowToMs: number;
  /** The scale-up tolerance: a rise smaller than this share of the level across the window is noise. */
  tolerance: number;
  /** Each usable signal's need per bucket. */
  demand: readonly DemandSeries[];
  /** Recent applied changes, oldest first (for the measured scale duration). */
  scaleEvents: readonly ScaleEvent[];
  /** What the last pass stored (`status.anticipation`). */
  previous?: AnticipationStatus | undefined;
  demandHistory?: DemandHistory | undefined;
  /** The leading signal's readings (spec.anticipation.leadingSignal), as the caller read them. */
  leading?: LeadingObservation | undefined;
  /** Connections one unit carries at the policy's connections target (1,000 × target%). */
  connectionsPerUnit: number;
}

/** One rule's ask. */
export interface RuleAsk {
  rule: AnticipationRule;
  /** Un-snapped need, units. */
  units: number;
  message: string;
}

/** What anticipation computed. */
export interface Anticipation {
  mode: AnticipationMode;
  leadTimeSeconds: number;
  scaleDurationSeconds: number;
  scaleDurationSource: "Measured" | "Default";
  /** The rules that asked for something, largest first. */
  asks: RuleAsk[];
  /** The status to store (`applied` false: decide.ts sets it). */
  status: AnticipationStatus;
}

/**
 * The scale duration: measured from recent completed updates, else the previous measurement, else
 * the default. Both are read back from `status` (scale events, `status.anticipation`): a measured
 * duration is at most {@link MAX_SCALE_DURATION_SECONDS} (2 h, the bound of
 * `spec.anticipation.scaleDuration`), and a stored one that is not a finite number > 0 is ignored.
 */
function scaleDuration(
  events: readonly ScaleEvent[],
  previous: AnticipationStatus | undefined,
  defaultSeconds: number,
): { seconds: number; source: "Measured" | "Default" } {
  const measured = measuredScaleSeconds(events.slice(-MEASURED_UPDATES));
  if (measured.length > 0) {
    return {
      seconds: Math.min(Math.round(median(measured)), MAX_SCALE_DURATION_SECONDS),
      source: "Measured",
    };
  }
  const stored = previous?.scaleDurationSeconds;
  if (
    previous?.scaleDurationSource === "Measured" &&
    typeof stored === "number" &&
    Number.isFinite(stored) &&
    stored > 0
  ) {
    return { seconds: Math.min(stored, MAX_SCALE_DURATION_SECONDS), source: "Measured" };
  }
  return { seconds: defaultSeconds, source: "Default" };
}

const mid = (start: number) => start + MINUTE_MS / 2;
const iso = (ms: number) => new Date(ms).toISOString();
const minutes = (ms: number) => `${fmt(ms / MINUTE_MS)} min`;

/** The window's peak need over all signals, units (0 when none). */
function peakNeed(demand: readonly DemandSeries[]): number {
  let best = 0;
  for (const d of demand) for (const p of d.points) best = Math.max(best, p.units);
  return best;
}

/** The remembered peaks with this window's added, pruned to the horizon and bounded. */
function nextPeaks(
  previous: AnticipationStatus | undefined,
  demand: readonly DemandSeries[],
  nowMs: number,
  horizonMs: number,
): { time: string; units: number }[] {
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
  let list = [...slots.entries()].sort((a, b) => a[0] - b[0]);
  while (list.length > MAX_PEAKS) {
    // Merge the closest neighbours, keeping the larger peak and its time.
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
  return list.map(([t, units]) => ({ time: iso(t), units: Math.round(units * 100) / 100 }));
}

/**
 * What anticipation asks for now (see the module comment). With mode Off (or no
 * `spec.anticipation`) it returns undefined and keeps nothing.
 */
export function anticipate(input: AnticipationInput): Anticipation | undefined {
  const spec = input.spec;
  if (!spec || spec.mode === "Off") return undefined;
  const previous = input.previous;
  const duration = scaleDuration(input.scaleEvents, previous, durationOr(spec.scaleDuration, 300));
  const leadTimeSeconds = input.ingestionDelaySeconds + duration.seconds + input.pollSeconds;
  const targetMs = input.nowMs + (duration.seconds + input.pollSeconds) * 1000;
  const asks: RuleAsk[] = [];
  const status: AnticipationStatus = {
    mode: spec.mode,
    leadTimeSeconds,
    scaleDurationSeconds: duration.seconds,
    scaleDurationSource: duration.source,
    applied: false,
    message: "",
  };

  // Trend (and the growth kept for censored demand).
  let growth = previous?.growth;
  for (const d of input.demand) {
    const newest = d.points.at(-1);
    if (!newest) continue;
    const trend =
      d.points.length >= TREND_POINTS
        ? theilSen(d.points.map((p) => ({ timeMs: mid(p.start), value: p.units })))
        : undefined;
    const spanMinutes = (newest.start - (d.points[0]?.start ?? newest.start)) / MINUTE_MS;
    const level = Math.max(...d.points.map((p) => p.units));
    // A rise counts when it is consistent (tau) and larger, across the window, than twice the
    // tolerance band and the scatter: noise on a flat signal does neither.
    const rising =
      trend !== undefined &&
      trend.lowerPerMinute > 0 &&
      trend.tau >= TREND_TAU &&
      trend.lowerPerMinute * spanMinutes >=
        Math.max(RISE_BANDS * input.tolerance * level, NOISE_RISE * trend.noise);
    if (d.signal === "connections" && !d.saturated) {
      growth =
        rising && trend
          ? {
              time: iso(mid(newest.start)),
              units: Math.max(0, trend.at(mid(newest.start))),
              perMinute: trend.lowerPerMinute,
            }
          : undefined;
    }
    if (!rising || !trend || d.saturated) continue;
    const projected = Math.min(trend.at(targetMs), level * MAX_PROJECTION);
    if (projected > level) {
      asks.push({
        rule: "Trend",
        units: projected,
        message: `${d.signal} need rising ${fmt(trend.perMinute)} units/min over ${d.points.length} buckets (tau ${fmt(trend.tau)}): ${fmt(projected)} units at ${iso(targetMs).slice(11, 16)} UTC, ${minutes(targetMs - mid(newest.start))} past the newest bucket`,
      });
    }
  }

  // Censored demand: the connection quota is full.
  const connections = input.demand.find((d) => d.signal === "connections");
  if (connections?.saturated) {
    // The climb into the ceiling is a lower bound of the growth: at least (ceiling − the last
    // unsaturated bucket) over the minutes between them.
    const pts = connections.points;
    let first = pts.length - 1;
    while (first > 0 && pts[first - 1]?.saturated) first--;
    const before = pts[first - 1];
    const into = pts[first];
    if (before && into && into.units > before.units) {
      const perMinute = ((into.units - before.units) * MINUTE_MS) / (into.start - before.start);
      if (!growth || perMinute > growth.perMinute)
        growth = { time: iso(mid(into.start)), units: into.units, perMinute };
    }
  }
  if (connections?.saturated && growth) {
    const since = parseTime(growth.time);
    if (Number.isFinite(since) && input.nowMs - since <= GROWTH_TTL_MS && growth.perMinute > 0) {
      const ceiling = Math.max(...connections.points.map((p) => p.units));
      const estimate = Math.min(
        growth.units + (growth.perMinute * (targetMs - since)) / MINUTE_MS,
        ceiling * MAX_PROJECTION,
      );
      asks.push({
        rule: "CensoredDemand",
        units: estimate,
        message: `connection quota full since ${growth.time.slice(11, 16)} UTC; the need grew ${fmt(growth.perMinute)} units/min before: ${fmt(estimate)} units by ${iso(targetMs).slice(11, 16)} UTC`,
      });
    } else {
      growth = undefined;
    }
  }
  if (growth) status.growth = growth;

  // Headroom after bursts.
  const keep = (spec.headroom?.peakPercent ?? 0) / 100;
  if (keep > 0) {
    const horizonMs = durationOr(spec.headroom?.horizon, 3600) * 1000;
    const peaks = nextPeaks(previous, input.demand, input.nowMs, horizonMs);
    if (peaks.length > 0) status.peaks = peaks;
    let floor = 0;
    let from: { time: string; units: number } | undefined;
    for (const p of peaks) {
      const age = input.nowMs - parseTime(p.time);
      const f = p.units * keep * Math.max(0, 1 - age / horizonMs);
      if (f > floor) {
        floor = f;
        from = p;
      }
    }
    if (from && floor > 0) {
      asks.push({
        rule: "Headroom",
        units: floor,
        message: `${Math.round(keep * 100)} % of the peak need of ${fmt(from.units)} units at ${from.time.slice(11, 16)} UTC, decayed over ${minutes(horizonMs)}: ${fmt(floor)} units`,
      });
    }
  }

  // Seasonal forecast.
  if (spec.seasonal) {
    const f = seasonalForecast(input.demandHistory, {
      refMs: input.windowToMs,
      horizonMs: Math.max(0, targetMs - input.windowToMs),
      levelMs: input.windowSeconds * 1000,
    });
    status.forecast = { state: f.state, message: f.message };
    if (f.cycle) status.forecast.cycle = f.cycle;
    if (f.cycles !== undefined) status.forecast.cycles = f.cycles;
    if (f.ratio !== undefined) status.forecast.ratio = Math.round(f.ratio * 1000) / 1000;
    if (f.historyFromMs !== undefined) status.forecast.historyFrom = iso(f.historyFromMs);
    if (input.demandHistory) status.forecast.readAt = iso(input.demandHistory.readAtMs);
    const level = peakNeed(input.demand);
    if (f.state === "Ok" && f.ratio !== undefined && f.ratio > 1 && level > 0) {
      asks.push({
        rule: "Seasonal",
        units: level * f.ratio,
        message: `${f.message}: ${fmt(level)} → ${fmt(level * f.ratio)} units`,
      });
    }
  }

  // The leading signal (leading.ts).
  if (spec.leadingSignal) {
    const lead = leadingSignal({
      spec: spec.leadingSignal,
      observation: input.leading,
      nowMs: input.nowMs,
      targetMs,
      connectionsPerUnit: input.connectionsPerUnit,
      connections,
      previous: previous?.leading,
    });
    status.leading = lead.status;
    if (lead.ask && lead.ask.units > 0) asks.push({ rule: "LeadingSignal", ...lead.ask });
  }

  // One ask per rule (the trend of each signal is one rule): the largest.
  asks.sort((a, b) => b.units - a.units);
  const seen = new Set<AnticipationRule>();
  const byRule = asks.filter((a) => !seen.has(a.rule) && seen.add(a.rule));
  const top = byRule[0];
  if (top) {
    status.units = ceilSafe(top.units);
    status.drivenBy = top.rule;
    status.rules = byRule.map((a) => ({
      rule: a.rule,
      units: ceilSafe(a.units),
      message: a.message.slice(0, 512),
    }));
  }
  status.message = (
    top
      ? `${top.rule}: ${top.message}`
      : `nothing expected above the measured need within the lead time of ${minutes(leadTimeSeconds * 1000)}`
  ).slice(0, 1024);
  return {
    mode: spec.mode,
    leadTimeSeconds,
    scaleDurationSeconds: duration.seconds,
    scaleDurationSource: duration.source,
    asks: byRule,
    status,
  };
}
