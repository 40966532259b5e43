/**
 * How long a server (Azure, the Kubernetes API server) asks a client to wait, from the response
 * headers of a 429 (or a 503). Pure: the current time is an argument.
 *
 * Headers read, first one present wins:
 * - `retry-after-ms`, `x-ms-retry-after-ms`: milliseconds (Azure SDK convention);
 * - `Retry-After` (RFC 9110 §10.2.3): either delay-seconds (`"17"`) or an HTTP-date
 *   (`"Wed, 21 Oct 2015 07:28:00 GMT"`, also the obsolete RFC 850 and asctime forms).
 *
 * The result is clamped to `[0, capMs]` so that a wrong or hostile header (a date from a clock far
 * off, a proxy's mistake) cannot park a scope for days; a date in the past means "now" (0).
 */

/** Longest wait honoured by default (Prometheus and other servers of our own): 5 minutes. */
export const DEFAULT_RETRY_AFTER_CAP_MS = 5 * 60_000;

/**
 * Longest wait honoured when Azure (ARM, Azure Monitor metrics) throttles: 1 hour. Azure's waits
 * are honoured whole up to it: the longest quota window either service has documented is an hour
 * (ARM counted its per-subscription limits per hour — 12,000 reads, 1,200 writes — before its
 * token buckets), so a wait longer than that is taken for a wrong header rather than a quota; past
 * the hour, one call finds out, and a real throttle answers it with a new Retry-After.
 */
export const AZURE_RETRY_AFTER_CAP_MS = 60 * 60_000;
/** Wait assumed when a throttling response carries no usable header: 30 seconds. */
const DEFAULT_RETRY_AFTER_MS = 30_000;

const SECONDS = /^\d+(?:\.\d+)?$/;
// IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT",
// asctime "Sun Nov  6 08:49:37 1994".
const HTTP_DATE =
  /^(?:[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT|[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/**
 * Parses one `Retry-After` value into milliseconds from `now`, unclamped except that a past date
 * gives 0. `undefined` when the value is absent or neither delay-seconds nor an HTTP-date.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (v === "") return undefined;
  if (SECONDS.test(v)) return Math.round(Number(v) * 1000);
  if (!HTTP_DATE.test(v)) return undefined;
  const at = Date.parse(v.includes("GMT") ? v : `${v} GMT`);
  if (!Number.isFinite(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

/** Parses a millisecond header (`retry-after-ms`); `undefined` when absent or not a number. */
function parseMilliseconds(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  return SECONDS.test(v) ? Math.round(Number(v)) : undefined;
}

/** Options of {@link retryAfterFromHeaders}. */
export interface RetryAfterOptions {
  /** Longest wait, ms (default {@link DEFAULT_RETRY_AFTER_CAP_MS}). */
  capMs?: number;
  /** Wait when no header is usable, ms (default {@link DEFAULT_RETRY_AFTER_MS}). */
  defaultMs?: number;
}

/**
 * The wait, in ms, that response headers ask for, clamped to `[0, capMs]`; `defaultMs` (also
 * clamped) when none is usable. `get` reads a header by lower-case name.
 */
export function retryAfterFromHeaders(
  get: (name: string) => string | null | undefined,
  now: Date,
  options: RetryAfterOptions = {},
): number {
  const cap = options.capMs ?? DEFAULT_RETRY_AFTER_CAP_MS;
  const raw =
    parseMilliseconds(get("retry-after-ms")) ??
    parseMilliseconds(get("x-ms-retry-after-ms")) ??
    parseRetryAfter(get("retry-after"), now) ??
    options.defaultMs ??
    DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.max(0, raw), Math.max(0, cap));
}
