import { describe, expect, it } from "vitest";
import { MetricsThrottle, RateLimiter, validMetricsRateLimit } from "./ratelimit.js";

describe("RateLimiter", () => {
  it("empties a bucket and refills it over time, per subscription and kind", () => {
    const r = new RateLimiter({
      reads: { capacity: 3, refillPerSecond: 1 },
      writes: { capacity: 1, refillPerSecond: 0.5 },
    });
    expect(r.take("s", "reads", 0)).toEqual({ ok: true, remaining: 2 });
    r.take("s", "reads", 0);
    r.take("s", "reads", 0);
    expect(r.take("s", "reads", 0)).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(r.take("other", "reads", 0).ok).toBe(true);
    expect(r.take("s", "writes", 0).ok).toBe(true);
    expect(r.take("s", "writes", 0)).toEqual({ ok: false, retryAfterSeconds: 2 });
    expect(r.take("s", "reads", 1_000)).toEqual({ ok: true, remaining: 0 });
  });
});

describe("MetricsThrottle", () => {
  it("is off by default, then a bucket per subscription once switched on, off again with undefined", () => {
    const t = new MetricsThrottle();
    expect(t.take("s", 0)).toBeUndefined();
    t.set({ capacity: 2, refillPerSecond: 0.1 });
    expect(t.take("s", 0)).toEqual({ ok: true, remaining: 1 });
    expect(t.take("s", 0)).toEqual({ ok: true, remaining: 0 });
    expect(t.take("s", 0)).toEqual({ ok: false, retryAfterSeconds: 10 });
    expect(t.take("other", 0)).toEqual({ ok: true, remaining: 1 });
    expect(t.take("s", 10_000)).toEqual({ ok: true, remaining: 0 });
    t.set(undefined);
    expect(t.take("s", 10_000)).toBeUndefined();
    expect(t.spec).toBeUndefined();
  });

  it.each([
    { capacity: 0, refillPerSecond: 1 },
    { capacity: 5, refillPerSecond: 0 },
    { capacity: 5, refillPerSecond: 1, status: 503 },
  ])("refuses %o", (spec) => {
    expect(() => new MetricsThrottle(spec as never)).toThrow(RangeError);
    expect(() => validMetricsRateLimit(spec)).toThrow(/^metrics rate limit: /);
  });
});
