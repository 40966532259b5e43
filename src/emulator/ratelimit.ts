/**
 * Request throttling as the emulator models it: token buckets per subscription, on the emulator's
 * virtual clock (time passed in).
 *
 * - ARM: one bucket for reads (250 requests, refilled at 25/s) and one for writes (200, refilled
 *   at 10/s) — the figures of "Understand how Azure Resource Manager throttles requests".
 * - The metrics plane (`metrics:getBatch`, {@link MetricsThrottle}): off unless switched on, with
 *   figures you choose. Azure Monitor publishes no request figures for getBatch: "How to migrate
 *   from the metrics API to the getBatch API" says only that the batch API mitigates throttling
 *   and that throttling can still occur (it names 529; the operator reads 429 and 529 alike, with
 *   their `Retry-After`). A throttled getBatch is answered `429` (or `529`) with `Retry-After`
 *   (seconds) and a getBatch error body.
 */

export interface BucketSpec {
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

/** ARM's documented buckets. */
const ARM_BUCKETS: Readonly<Record<"reads" | "writes", BucketSpec>> = {
  reads: { capacity: 250, refillPerSecond: 25 },
  writes: { capacity: 200, refillPerSecond: 10 },
};

/** The outcome of taking a token. */
export type TakeResult = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  atMs: number;
}

export class RateLimiter<K extends string = "reads" | "writes"> {
  readonly #buckets = new Map<string, Bucket>();
  readonly #specs: Readonly<Record<K, BucketSpec>>;

  /** @param specs the buckets by kind (default: ARM's reads and writes). */
  constructor(specs: Readonly<Record<K, BucketSpec>> = ARM_BUCKETS as unknown as Record<K, BucketSpec>) {
    this.#specs = specs;
  }

  /** Takes one token of `kind` for `subscriptionId` at virtual time `nowMs`. */
  take(subscriptionId: string, kind: K, nowMs: number): TakeResult {
    const spec = this.#specs[kind];
    const key = `${subscriptionId.toLowerCase()}/${kind}`;
    const b = this.#buckets.get(key) ?? { tokens: spec.capacity, atMs: nowMs };
    const elapsed = Math.max(0, nowMs - b.atMs) / 1000;
    b.tokens = Math.min(spec.capacity, b.tokens + elapsed * spec.refillPerSecond);
    b.atMs = Math.max(b.atMs, nowMs);
    this.#buckets.set(key, b);
    if (b.tokens < 1)
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / spec.refillPerSecond)) };
    b.tokens -= 1;
    return { ok: true, remaining: Math.floor(b.tokens) };
  }

  /** Forgets every bucket (all full again). */
  reset(): void {
    this.#buckets.clear();
  }
}

/** How the metrics plane throttles: a bucket per subscription, and the status of a refusal. */
export interface MetricsRateLimit extends BucketSpec {
  /** Status of a throttled answer: 429 (default) or 529. */
  status?: 429 | 529;
}

/**
 * Checks a metrics rate limit from options or the control API.
 * @throws RangeError for a capacity below 1, a refill not above 0, or another status.
 */
export function validMetricsRateLimit(spec: unknown): MetricsRateLimit {
  const s = (typeof spec === "object" && spec !== null ? spec : {}) as Record<string, unknown>;
  const capacity = s["capacity"];
  const refill = s["refillPerSecond"];
  const status = s["status"];
  if (typeof capacity !== "number" || !(capacity >= 1)) {
    throw new RangeError("metrics rate limit: capacity must be a number ≥ 1 (requests)");
  }
  if (typeof refill !== "number" || !(refill > 0) || !Number.isFinite(refill)) {
    throw new RangeError("metrics rate limit: refillPerSecond must be a number > 0 (requests/s)");
  }
  if (status !== undefined && status !== 429 && status !== 529) {
    throw new RangeError("metrics rate limit: status must be 429 or 529");
  }
  return { capacity, refillPerSecond: refill, ...(status !== undefined ? { status } : {}) };
}

/** The metrics plane's throttling, switched on and off at run time (off by default). */
export class MetricsThrottle {
  #spec: MetricsRateLimit | undefined;
  #limiter: RateLimiter<"getBatch"> | undefined;

  /** @throws RangeError for an invalid limit ({@link validMetricsRateLimit}). */
  constructor(spec?: MetricsRateLimit) {
    this.set(spec);
  }

  /** Switches it on with `spec` (buckets full), or off with `undefined`. @throws RangeError */
  set(spec: MetricsRateLimit | undefined): void {
    this.#spec = spec === undefined ? undefined : validMetricsRateLimit(spec);
    this.#limiter = this.#spec ? new RateLimiter({ getBatch: this.#spec }) : undefined;
  }

  /** The limit in force; `undefined` when off. */
  get spec(): MetricsRateLimit | undefined {
    return this.#spec ? { ...this.#spec } : undefined;
  }

  /** Takes one token for a getBatch of `subscriptionId`; `undefined` when throttling is off. */
  take(subscriptionId: string, nowMs: number): TakeResult | undefined {
    return this.#limiter?.take(subscriptionId, "getBatch", nowMs);
  }

  /** Fills every bucket again (the clock was set). */
  reset(): void {
    this.#limiter?.reset();
  }
}
