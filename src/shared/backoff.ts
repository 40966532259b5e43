/** Exponential backoff with jitter (the watch, the work queue, and the retries of updates an instance ignores). */

export interface BackoffOptions {
  /** Delay before the first retry, ms. */
  readonly initialMs: number;
  /** Ceiling of the un-jittered delay, ms. */
  readonly maxMs: number;
  /** Growth per failure. */
  readonly factor: number;
  /**
   * Share of the delay that is random, 0..1: the delay is drawn uniformly from
   * [base × (1 − jitter), base]. 0.5 ("equal jitter") keeps a floor while spreading retries.
   */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, factor: 2, jitter: 0.5 };

/**
 * Delay before retry number `failures` (1 = after the first failure).
 * `random` returns a number in [0, 1), as Math.random does.
 */
export function backoffDelayMs(failures: number, options: BackoffOptions, random: () => number): number {
  if (failures <= 0) return 0;
  const exponent = Math.min(failures - 1, 64);
  const base = Math.min(options.maxMs, options.initialMs * options.factor ** exponent);
  const jitter = Math.min(1, Math.max(0, options.jitter));
  return Math.round(base * (1 - jitter * random()));
}
