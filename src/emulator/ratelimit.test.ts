import { describe, expect, it } from "vitest";
import { RateLimiter } from "./ratelimit.js";

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
