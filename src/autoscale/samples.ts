/**
 * Metric samples and their quality: which one-minute buckets a decision may use.
 *
 * Pinned semantics (all times in ms since the epoch; a bucket is named by its start):
 * - A sample's bucket is its `time` floored to the minute. Two samples of one bucket merge field by
 *   field (the highest known value wins).
 * - `cutoff = floor((now − ingestionDelay) / 1 min) · 1 min`. Buckets starting at or after `cutoff`
 *   are still filling and ignored (their end is less than `ingestionDelay` before now).
 * - The window is the `window / 1 min` buckets just before `cutoff`: starts in
 *   `[cutoff − window, cutoff)`. Buckets before it are not used.
 * - A value that is `null` or missing is unknown — never zero. A value the service cannot have
 *   measured (negative, not finite, a percentage far above 100, more connections than the quota
 *   holds) is left out and reported; one just above its ceiling is read as the ceiling
 *   (plausibility.ts).
 * - A signal whose newest known bucket starts more than `maxSampleAge` before now counts as
 *   missing (stale).
 * - After a scale, buckets starting before `lastScaleTime + settleSeconds` are settling: usable to
 *   scale out, never to scale in. Scale-in needs a full window of buckets after the settle window.
 */

import { MetricSampleSchema, type MetricSample as StatusSample } from "../api/schema.js";
import { plausibleSample, type SampleFinding } from "./plausibility.js";
import { timeOf } from "./time.js";

/** The metrics of a sample, as `status.lastSample` (the CRD schema) lists them. */
export type SampleField = Exclude<keyof StatusSample, "time">;

/** Every {@link SampleField}, in the schema's order. */
export const SAMPLE_FIELDS: readonly SampleField[] = Object.keys(MetricSampleSchema.properties).filter(
  (k): k is SampleField => k !== "time",
);

/**
 * One one-minute bucket of Azure Monitor metrics for one instance, as the Azure adapter returns
 * it (how each metric is read: `azure/metric-definitions.ts`). `null` = Azure did not report the
 * value (unknown, never zero).
 */
export interface MetricSample extends Record<SampleField, number | null> {
  /** Start of the one-minute bucket: an RFC 3339 string (or a Date, as the Azure adapter gives it). */
  time: string | Date;
  /**
   * Counter fields Azure answered without a value for this bucket (no data point, a point with
   * only `timeStamp`, or `null`) while a gauge had a value: read as 0 (idle), not unknown. Absent
   * when none was. Only buckets older than the ingestion delay are read (see the module comment),
   * so a bucket still filling is never taken as idle.
   */
  zeroFilled?: readonly SampleField[];
}

/** A sample at `time` with every value unknown. */
export function emptySample<T extends string | Date>(time: T): MetricSample & { time: T } {
  return { time, ...Object.fromEntries(SAMPLE_FIELDS.map((f) => [f, null])) } as MetricSample & { time: T };
}

export const MINUTE_MS = 60_000;

/** Options of {@link windowSamples}, in seconds unless named otherwise. */
export interface WindowOptions {
  nowMs: number;
  windowSeconds: number;
  ingestionDelaySeconds: number;
  maxSampleAgeSeconds: number;
  /** End of the settle window after the last scale, ms; absent when there is none. */
  settleUntilMs?: number | undefined;
  /**
   * The largest unit count that may have served the bucket starting at a time (ms), for the
   * plausibility of its values (plausibility.ts); without it only non-finite and negative values
   * are left out.
   */
  maxUnitsAt?: (startMs: number) => number;
}

/** One bucket of the window. */
export interface WindowBucket {
  /** Bucket start, ms. */
  start: number;
  /** The merged sample of this bucket; `undefined` when Azure returned none for it. */
  sample: MetricSample | undefined;
  /** Started before the settle window ended: not trusted for scale-in. */
  settling: boolean;
}

/** The usable buckets of a decision and what was left out. */
export interface SampleWindow {
  /** The window's buckets, oldest first (always `window / 1 min` of them). */
  buckets: readonly WindowBucket[];
  /** `[from, to)` of the window, ms. */
  from: number;
  to: number;
  /** Buckets left out, by cause (`invalid`: unreadable times and values left out). */
  ignored: { tooNew: number; beforeWindow: number; invalid: number };
  /** Values of the window's buckets left out or read as their ceiling (plausibility.ts). */
  findings: SampleFinding[];
  /** Some bucket of the window is settling. */
  settling: boolean;
  nowMs: number;
  maxSampleAgeSeconds: number;
}

/** A value Azure reported: a finite, non-negative number. Anything else is unknown. */
export function known(value: number | null | undefined): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

/**
 * Picks the window's buckets out of `samples` (any order, any length) — see the module comment for
 * the exact rules. Pure.
 */
export function windowSamples(samples: readonly MetricSample[], options: WindowOptions): SampleWindow {
  const { nowMs } = options;
  const bucketCount = Math.max(1, Math.round(options.windowSeconds / 60));
  const to = Math.floor((nowMs - options.ingestionDelaySeconds * 1000) / MINUTE_MS) * MINUTE_MS;
  const from = to - bucketCount * MINUTE_MS;
  const ignored = { tooNew: 0, beforeWindow: 0, invalid: 0 };
  const merged = new Map<number, MetricSample>();
  const findings: SampleFinding[] = [];
  const maxUnitsAt = options.maxUnitsAt ?? (() => 0);
  for (const s of samples) {
    const t = timeOf(s?.time);
    if (!Number.isFinite(t)) {
      ignored.invalid++;
      continue;
    }
    const start = Math.floor(t / MINUTE_MS) * MINUTE_MS;
    if (start >= to) {
      ignored.tooNew++;
      continue;
    }
    if (start < from) {
      ignored.beforeWindow++;
      continue;
    }
    const prev = merged.get(start) ?? emptySample(new Date(start).toISOString());
    const next: MetricSample = { ...prev };
    const seen = findings.length;
    const checked = plausibleSample(s, start, maxUnitsAt(start), SAMPLE_FIELDS, findings);
    for (let i = seen; i < findings.length; i++) if (findings[i]?.kind === "invalid") ignored.invalid++;
    for (const f of SAMPLE_FIELDS) {
      const v = checked[f];
      const p = prev[f];
      if (known(v)) next[f] = known(p) ? Math.max(p, v) : v;
    }
    merged.set(start, next);
  }
  const buckets: WindowBucket[] = [];
  const settleUntil = options.settleUntilMs;
  for (let start = from; start < to; start += MINUTE_MS) {
    buckets.push({
      start,
      sample: merged.get(start),
      settling: settleUntil !== undefined && start < settleUntil,
    });
  }
  return {
    buckets,
    from,
    to,
    ignored,
    findings,
    settling: buckets.some((b) => b.settling),
    nowMs,
    maxSampleAgeSeconds: options.maxSampleAgeSeconds,
  };
}

/** Quality of one signal's values over the window. */
export type SeriesStatus =
  /** every bucket of the window has a known value */
  | "Ok"
  /** some buckets have one, some do not */
  | "Incomplete"
  /** no bucket has one */
  | "Unknown"
  /** the newest known value is older than maxSampleAge */
  | "Stale";

/** One signal's known values over the window. */
export interface Series {
  status: SeriesStatus;
  /** Known values with their bucket start (ms), oldest first; empty unless Ok or Incomplete. */
  points: { start: number; value: number }[];
  knownBuckets: number;
  expectedBuckets: number;
  /** Start of the newest bucket with a known value, ms. */
  newest?: number;
}

/**
 * The known values of one quantity over the window. `read` returns the bucket's value or
 * `undefined`/`null` when unknown.
 */
export function series(window: SampleWindow, read: (b: WindowBucket) => number | null | undefined): Series {
  const points: { start: number; value: number }[] = [];
  for (const b of window.buckets) {
    const v = read(b);
    if (known(v)) points.push({ start: b.start, value: v });
  }
  const expected = window.buckets.length;
  const newest = points[points.length - 1]?.start;
  const base = { knownBuckets: points.length, expectedBuckets: expected };
  if (newest === undefined) return { status: "Unknown", points: [], ...base };
  if (newest < window.nowMs - window.maxSampleAgeSeconds * 1000) {
    return { status: "Stale", points: [], ...base, newest };
  }
  return { status: points.length === expected ? "Ok" : "Incomplete", points, ...base, newest };
}

/** The highest known value of a series, or `undefined`. */
export function peak(s: Series): number | undefined {
  return s.points.length === 0 ? undefined : Math.max(...s.points.map((p) => p.value));
}
