/**
 * What every signal shares (signals.ts has the pinned semantics): the tolerance band, saturation
 * at a ceiling, the report of a missing signal, the proportional ask, the need per bucket, and the
 * level of a flat window.
 * Pure.
 */
import type { SkuUnits } from "../../capacity/skus.js";
import { ceilSafe, type ToleranceBand } from "../behavior.js";
import { fmt } from "../format.js";
import { type Reason, reason, type SignalName } from "../reasons.js";
import type { Series } from "../samples.js";
import { compareSizes } from "../sizes.js";
import type { DemandPoint, DemandSeries, SignalNeed, SignalOutcome, SignalReport } from "./types.js";

/** Slack of the tolerance and fit comparisons (floating point), as a ratio. */
export const EPS = 1e-9;
/** Fraction of a ceiling at which a measurement counts as saturated. */
export const SATURATION = 0.99;

/**
 * A value pinned at its ceiling: within 1 % below or above it. A value clearly above the ceiling
 * is a real measurement of the demand (it asks for its own proportional units).
 */
export function saturatedAt(value: number, ceiling: number): boolean {
  return value >= ceiling * SATURATION && value <= ceiling * (2 - SATURATION);
}

/** The tolerance that applies to a ratio: scaleUp's above 1, scaleDown's below. */
export function toleranceFor(ratio: number, band: ToleranceBand): number {
  return ratio >= 1 ? band.up : band.down;
}

/** `|ratio − 1|` within the band's tolerance for that side. */
export function within(ratio: number, band: ToleranceBand): boolean {
  return Math.abs(ratio - 1) <= toleranceFor(ratio, band) + EPS;
}

/** Fewest buckets a window needs for {@link flatMean} to call it flat. */
export const FLAT_MIN_BUCKETS = 3;

/**
 * The mean of a complete series whose every value lies within `band` (a fraction, e.g. 0.1) of
 * it, by the same comparison as the tolerance band ({@link within}) — noise around one level,
 * where the peak is the highest draw of the noise rather than the level — else `undefined` (a
 * window with missing buckets, fewer than {@link FLAT_MIN_BUCKETS}, or a real peak in it).
 */
export function flatMean(s: Series, band: number): number | undefined {
  if (s.status !== "Ok" || s.points.length < FLAT_MIN_BUCKETS) return undefined;
  const values = s.points.map((p) => p.value);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  if (!(mean > 0)) return undefined;
  const both = { up: band, down: band };
  return values.every((v) => within(v / mean, both)) ? mean : undefined;
}

/** The need of a signal within tolerance: at least the current size. */
export function holdNeed(signal: SignalName, current: SkuUnits): SignalNeed {
  return { signal, minUnits: current.units, fits: (s: SkuUnits) => compareSizes(s, current) >= 0 };
}

/** A signal's report before evaluation: target, bucket counts, newest time; empty message. */
export function baseReport(signal: SignalName, target: number, s: Series): SignalReport {
  const r: SignalReport = {
    signal,
    status: s.status,
    targetPercent: target,
    knownBuckets: s.knownBuckets,
    expectedBuckets: s.expectedBuckets,
    message: "",
  };
  if (s.newest !== undefined) r.newestTime = new Date(s.newest).toISOString();
  return r;
}

function missingMessage(what: string, s: Series, maxAgeSeconds: number): string {
  if (s.status === "Stale") {
    return `${what}: newest known value (${new Date(s.newest ?? 0).toISOString()}) is older than maxSampleAge ${maxAgeSeconds}s — counted as missing`;
  }
  return `${what}: no known value in the window (${s.expectedBuckets} buckets) — unknown, not zero`;
}

/**
 * A signal without a usable value in the window (unknown or stale): reported as missing
 * (`SignalStale` / `SignalUnknown`), asks for nothing.
 */
export function missingOutcome(
  signal: SignalName,
  what: string,
  target: number,
  s: Series,
  maxAgeSeconds: number,
): SignalOutcome {
  const report = baseReport(signal, target, s);
  report.message = missingMessage(what, s, maxAgeSeconds);
  const code = s.status === "Stale" ? "SignalStale" : "SignalUnknown";
  return { report, reasons: [reason(code, report.message, { signal })] };
}

/** What {@link proportionalOutcome} reads: one signal's measured value against its target. */
export interface ProportionalInput {
  signal: SignalName;
  s: Series;
  /** Target, %. */
  target: number;
  /** The measured value (the report's `value`). */
  value: number;
  ratio: number;
  /** Units the measured demand needs at the target, un-snapped. */
  demandUnits: number;
  /** The measurement in words, the start of every message. */
  describe: string;
  /** The value sits at its ceiling (real demand unknown but higher). */
  saturated: boolean;
  current: SkuUnits;
  tolerance: ToleranceBand;
}

/**
 * The HPA's proportional ask: within tolerance the current size (`WithinTolerance`); saturated
 * and above 1, at least twice the current units (`SignalSaturated`); else `ceil(demandUnits)`
 * (`SignalDesired`). An Incomplete series adds `SignalIncomplete`.
 */
export function proportionalOutcome(p: ProportionalInput): SignalOutcome {
  const { signal, s, ratio, current, tolerance } = p;
  const report = baseReport(signal, p.target, s);
  report.value = p.value;
  report.ratio = ratio;
  report.withinTolerance = within(ratio, tolerance);
  const partial =
    s.status === "Incomplete" ? ` (only ${s.knownBuckets} of ${s.expectedBuckets} buckets known)` : "";
  const reasons: Reason[] = [];
  let need: SignalNeed;
  if (report.withinTolerance) {
    report.desiredUnits = current.units;
    report.message = `${p.describe}, ratio ${fmt(ratio)} within tolerance ${fmt(toleranceFor(ratio, tolerance))}: no change${partial}`;
    reasons.push(reason("WithinTolerance", report.message, { signal, units: current.units }));
    need = holdNeed(signal, current);
  } else if (p.saturated && ratio > 1) {
    report.desiredUnits = Math.max(ceilSafe(p.demandUnits), current.units * 2);
    report.message = `${p.describe}, ratio ${fmt(ratio)}, at its ceiling (real demand is higher): at least ${report.desiredUnits} units${partial}`;
    reasons.push(reason("SignalSaturated", report.message, { signal, units: report.desiredUnits }));
    need = { signal, minUnits: report.desiredUnits };
  } else {
    report.desiredUnits = Math.max(0, ceilSafe(p.demandUnits));
    report.message = `${p.describe}, ratio ${fmt(ratio)}: ${report.desiredUnits} units${partial}`;
    reasons.push(reason("SignalDesired", report.message, { signal, units: report.desiredUnits }));
    need = { signal, minUnits: report.desiredUnits };
  }
  if (s.status === "Incomplete") {
    const unknown = s.expectedBuckets - s.knownBuckets;
    reasons.push(
      reason("SignalIncomplete", `${signal}: ${unknown} of ${s.expectedBuckets} buckets unknown`, { signal }),
    );
  }
  return { report, reasons, need };
}

/**
 * A signal's need per bucket: each known value × `unitsPerValue` (units), with whether it sat at
 * its ceiling. A bucket that overlaps a change may have been served by either size. Server load
 * is relative to the units then: read at the smaller size it would show a false rise, so it is
 * left out; connections and traffic are absolute and kept, but never read as saturated (the
 * ceiling then is not known). Such a bucket is censored (a lower bound of the demand) when
 * `reachedCeiling` says its value reached the smaller size's ceiling (default: `saturated`); any
 * other bucket when it is saturated.
 */
export function demandSeries(
  signal: SignalName,
  s: Series,
  unitsPerValue: number,
  saturated: (value: number, start: number) => boolean,
  overlapsChange: ((startMs: number) => boolean) | undefined,
  reachedCeiling: (value: number, start: number) => boolean = saturated,
): DemandSeries {
  const overlaps = overlapsChange ?? (() => false);
  const points = s.points
    .filter((p) => signal !== "serverLoad" || !overlaps(p.start))
    .map((p): DemandPoint => {
      const overlap = overlaps(p.start);
      const full = saturated(p.value, p.start);
      return {
        start: p.start,
        units: p.value * unitsPerValue,
        saturated: !overlap && full,
        censored: overlap ? reachedCeiling(p.value, p.start) : full,
      };
    });
  return { signal, points, saturated: points.at(-1)?.saturated ?? false };
}

/** The point's value is only a lower bound of the demand (see {@link DemandPoint.censored}). */
export function censoredAt(p: DemandPoint): boolean {
  return p.censored ?? p.saturated;
}

/**
 * The points of `d` that measure the demand itself (not censored): the only ones a growth of
 * demand may be read from. A rise from a censored bucket to a later one is, as far as the
 * buckets tell, the capacity uncovering clients that were there (a fixed demand let in once the
 * quota rose), not demand growing.
 */
export function measuredPoints(d: DemandSeries): DemandPoint[] {
  return d.points.filter((p) => !censoredAt(p));
}

/**
 * Every signal's buckets in which the connection quota was full (the connections series'
 * censored buckets) are censored too: the clients refused then sent no messages and put no load
 * on the service, so that bucket's server load and traffic are lower bounds as well. Mutates and
 * returns `demand`.
 */
export function censorByQuota(demand: DemandSeries[]): DemandSeries[] {
  const connections = demand.find((d) => d.signal === "connections");
  if (!connections) return demand;
  const full = new Set(connections.points.filter(censoredAt).map((p) => p.start));
  if (full.size === 0) return demand;
  for (const d of demand) {
    if (d === connections) continue;
    for (const p of d.points) if (full.has(p.start)) p.censored = true;
  }
  return demand;
}
