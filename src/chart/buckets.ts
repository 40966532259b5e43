/**
 * Downsampling of per-minute series for a chart: long runs are cut into buckets of 1, 5, 10, 15,
 * 30 minutes, 1, 2, 6, 12 hours or 1 day — the smallest that fits — and each user plots one
 * point per bucket (the maximum of each quantity, so peaks stay visible). Pure.
 */

const BUCKETS = [1, 5, 10, 15, 30, 60, 120, 360, 720, 1440];

/** The bucket size, minutes, for `minutes` minutes in at most `maxPoints` points. */
export function bucketMinutes(minutes: number, maxPoints = 1000): number {
  for (const b of BUCKETS) if (Math.ceil(minutes / b) <= maxPoints) return b;
  return Math.ceil(minutes / maxPoints / 1440) * 1440;
}

/** What one point stands for, for a subtitle: `per minute`, `max per 5 min`, `max per 2 h`. */
export function bucketLabel(bucket: number): string {
  return bucket === 1 ? "per minute" : `max per ${bucket >= 60 ? `${bucket / 60} h` : `${bucket} min`}`;
}
