/**
 * RFC 3339 times of the stored history, read as ms since the epoch. A decision reads the same
 * few dozen times (recommendations, scale events, bucket starts) on every pass, and a simulation
 * makes hundreds of thousands of passes: parsed times are kept in a bounded cache (4,096 entries,
 * emptied when full). Pure: the same text always gives the same number.
 */

const MAX_CACHED = 4096;
const cache = new Map<string, number>();

/** `Date.parse(text)`, cached; NaN for text that is not a time (and for `undefined`). */
export function parseTime(text: string | undefined): number {
  if (text === undefined) return Number.NaN;
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  const ms = Date.parse(text);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(text, ms);
  return ms;
}

/** A time given as a Date or an RFC 3339 string, in ms since the epoch (NaN when unreadable). */
export function timeOf(time: string | Date | undefined): number {
  return time instanceof Date ? time.getTime() : typeof time === "string" ? parseTime(time) : Number.NaN;
}

/** Bucket starts (ms, ascending) as UTC minutes, consecutive ones as a range: `11:52–11:56, 11:58`. */
export function minuteRuns(starts: readonly number[]): string {
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  const runs: [number, number][] = [];
  for (const t of starts) {
    const last = runs[runs.length - 1];
    if (last && t === last[1] + 60_000) last[1] = t;
    else runs.push([t, t]);
  }
  return runs.map(([a, b]) => (a === b ? hhmm(a) : `${hhmm(a)}–${hhmm(b)}`)).join(", ");
}
