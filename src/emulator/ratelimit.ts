/**
 * ARM's request throttling as the emulator models it: a token bucket per subscription for reads
 * (250 requests, refilled at 25/s) and one for writes (200, refilled at 10/s) — the figures of
 * "Understand how Azure Resource Manager throttles requests". Time is the emulator's virtual clock,
 * passed in.
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

export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #specs: Readonly<Record<"reads" | "writes", BucketSpec>>;

  constructor(specs: Readonly<Record<"reads" | "writes", BucketSpec>> = ARM_BUCKETS) {
    this.#specs = specs;
  }

  /** Takes one token of `kind` for `subscriptionId` at virtual time `nowMs`. */
  take(subscriptionId: string, kind: "reads" | "writes", nowMs: number): TakeResult {
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
