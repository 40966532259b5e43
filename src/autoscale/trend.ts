/**
 * A robust trend of a short series: the Theil–Sen slope (the median of the pairwise slopes) with
 * the Mann–Kendall statistic as its significance. One noisy bucket in five moves neither: it
 * changes 4 of the 10 pairwise slopes, and the median of 10 stays with the other 6.
 */
import { median, medianAbsoluteDeviation, quantile } from "simple-statistics";

/** A point of a series: time (ms) and value. */
export interface TrendPoint {
  timeMs: number;
  value: number;
}

/** The trend of a series. */
export interface Trend {
  /** Theil–Sen slope, value per minute. */
  perMinute: number;
  /**
   * The lower quartile of the pairwise slopes, value per minute: a conservative slope (on a
   * steady ramp it equals the median; on noise around a flat line it is at or below 0).
   */
  lowerPerMinute: number;
  /** The line's value at `timeMs`: `median(value − slope · t) + slope · timeMs`. */
  at: (timeMs: number) => number;
  /**
   * Kendall's tau of the series against time, −1..1: (concordant − discordant pairs) ÷ pairs.
   * 1 = every later point higher.
   */
  tau: number;
  /**
   * The scatter of the points around the line: 1.4826 × the median absolute deviation of the
   * residuals (the standard deviation, for normal noise), value.
   */
  noise: number;
  points: number;
}

const MINUTE_MS = 60_000;

/**
 * The Theil–Sen trend of `points` (any order; at least 2 with distinct times).
 * @returns undefined when fewer than 2 distinct times.
 */
export function theilSen(points: readonly TrendPoint[]): Trend | undefined {
  const xs = [...points].sort((a, b) => a.timeMs - b.timeMs);
  const slopes: number[] = [];
  let concordant = 0;
  let discordant = 0;
  for (let i = 0; i < xs.length; i++) {
    for (let j = i + 1; j < xs.length; j++) {
      const a = xs[i] as TrendPoint;
      const b = xs[j] as TrendPoint;
      const dt = (b.timeMs - a.timeMs) / MINUTE_MS;
      if (dt <= 0) continue;
      const dv = b.value - a.value;
      slopes.push(dv / dt);
      if (dv > 0) concordant++;
      else if (dv < 0) discordant++;
    }
  }
  if (slopes.length === 0) return undefined;
  const slope = median(slopes);
  const intercept = median(xs.map((p) => p.value - (slope * p.timeMs) / MINUTE_MS));
  const at = (timeMs: number) => intercept + (slope * timeMs) / MINUTE_MS;
  const residuals = xs.map((p) => p.value - at(p.timeMs));
  return {
    perMinute: slope,
    noise: 1.4826 * medianAbsoluteDeviation(residuals),
    lowerPerMinute: quantile(slopes, 0.25),
    at,
    tau: (concordant - discordant) / slopes.length,
    points: xs.length,
  };
}

/** Kendall's tau from which a rise counts as consistent. */
const CONSISTENT_TAU = 0.6;
/** Across its span a consistent rise exceeds this many times the points' scatter around the line. */
const NOISE_RISE = 3;
/** Fewest points a consistent rise is fitted on. */
export const CONSISTENT_POINTS = 3;

/** A consistent rise: its Theil–Sen line and the span of its points, minutes. */
export interface ConsistentRise {
  trend: Trend;
  spanMinutes: number;
}

/**
 * The line of `points` when they rise consistently: at least {@link CONSISTENT_POINTS} points,
 * Kendall's tau ≥ 0.6, a lower-quartile slope above 0 and a rise across their span of at least
 * 3 × their scatter around the line — noise on a flat series does none of these. Undefined
 * otherwise.
 */
export function consistentRise(points: readonly TrendPoint[]): ConsistentRise | undefined {
  if (points.length < CONSISTENT_POINTS) return undefined;
  const trend = theilSen(points);
  if (!trend) return undefined;
  const times = points.map((p) => p.timeMs);
  const spanMinutes = (Math.max(...times) - Math.min(...times)) / MINUTE_MS;
  const consistent =
    trend.lowerPerMinute > 0 &&
    trend.tau >= CONSISTENT_TAU &&
    trend.lowerPerMinute * spanMinutes >= NOISE_RISE * trend.noise;
  return consistent ? { trend, spanMinutes } : undefined;
}

/**
 * Across its span a rise must exceed this many tolerance bands of its level: by chance, five noisy
 * points in a row do rise (1 in 120), but hardly by twice the band.
 */
export const RISE_BANDS = 2;

/**
 * Whether a consistent rise is larger, across its span (its lower-quartile slope × span), than
 * {@link RISE_BANDS} tolerance bands of `level` — a rise the scale-up tolerance would absorb is
 * noise to act on. `tolerance` is a share of the level.
 */
export function beyondTolerance(rise: ConsistentRise, level: number, tolerance: number): boolean {
  return rise.trend.lowerPerMinute * rise.spanMinutes >= RISE_BANDS * tolerance * level;
}
