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
