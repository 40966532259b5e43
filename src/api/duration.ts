/**
 * Duration strings in the Go / Kubernetes style ("30s", "5m", "1h30m", "1.5h"), plus "d" (days) so
 * that Azure's "1d" time grain reads naturally.
 */

/**
 * Schema pattern of the duration fields CEL also reads with `duration()`: Go units only (ms, s, m,
 * h). Valid for ECMAScript and RE2 alike.
 */
export const DURATION_PATTERN = "^([0-9]+([.][0-9]+)?(ms|s|m|h))+$";

const UNIT_SECONDS: Readonly<Record<string, number>> = {
  ms: 0.001,
  s: 1,
  m: 60,
  h: 3600,
  d: 86_400,
};

const WHOLE = /^(?:[0-9]+(?:\.[0-9]+)?(?:ms|s|m|h|d))+$/;
const PART = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)/g;

/**
 * Seconds in a duration string such as "30s", "5m", "1h30m", "1.5h", "250ms" or "1d".
 * Throws RangeError for anything else (empty, negative, no unit, unknown unit, spaces).
 */
export function parseDuration(text: string): number {
  if (typeof text !== "string" || !WHOLE.test(text)) {
    throw new RangeError(
      `invalid duration ${JSON.stringify(text)}: expected a number and unit (ms, s, m, h, d), e.g. "30s", "5m", "1h30m"`,
    );
  }
  let seconds = 0;
  for (const match of text.matchAll(PART)) {
    const [, amount, unit] = match;
    seconds += Number(amount) * (UNIT_SECONDS[unit ?? ""] ?? Number.NaN);
  }
  if (!Number.isFinite(seconds))
    throw new RangeError(`invalid duration ${JSON.stringify(text)}: out of range`);
  // Round away binary noise of fractional units ("0.1h" → 360, not 360.00000000000006).
  return Math.round(seconds * 1e6) / 1e6;
}

/** Formats seconds as the shortest Go-style duration ("90" → "1m30s", "3600" → "1h", "0" → "0s"). */
/** {@link parseDuration} of `text`, or `fallback` (seconds) when it is absent or unreadable. */
export function durationOr(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  try {
    return parseDuration(text);
  } catch {
    return fallback;
  }
}

export function formatDuration(totalSeconds: number): string {
  if (!Number.isFinite(totalSeconds) || totalSeconds < 0) {
    throw new RangeError(`cannot format ${totalSeconds} seconds as a duration`);
  }
  let rest = Math.round(totalSeconds * 1000);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const ms = rest - s * 1000;
  let out = "";
  if (h) out += `${h}h`;
  if (m) out += `${m}m`;
  if (s) out += `${s}s`;
  if (ms) out += `${ms}ms`;
  return out || "0s";
}
