import { describe, expect, it, vi } from "vitest";
import { WorkQueue } from "./queue.js";

describe("WorkQueue", () => {
  it("keeps one entry per key", async () => {
    const q = new WorkQueue();
    q.add("a");
    q.add("a");
    q.add("b");
    expect(q.depth).toBe(2);
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBe("b");
  });

  it("never hands out a key twice at once; re-adds it after done", async () => {
    const q = new WorkQueue();
    q.add("a");
    const key = await q.get();
    q.add("a");
    expect(q.depth).toBe(0);
    expect(q.isProcessing("a")).toBe(true);
    q.done(key as string);
    expect(q.depth).toBe(1);
    expect(await q.get()).toBe("a");
  });

  it("wakes a waiting worker", async () => {
    const q = new WorkQueue();
    const next = q.get();
    q.add("x");
    expect(await next).toBe("x");
    expect(q.isProcessing("x")).toBe(true);
  });

  it("keeps only the earliest delayed add", () => {
    vi.useFakeTimers();
    try {
      const q = new WorkQueue({ now: () => Date.now() });
      q.addAfter("a", 10_000);
      q.addAfter("a", 5_000);
      q.addAfter("a", 20_000);
      expect(q.delayed).toBe(1);
      vi.advanceTimersByTime(4_999);
      expect(q.depth).toBe(0);
      vi.advanceTimersByTime(1);
      expect(q.depth).toBe(1);
      vi.advanceTimersByTime(20_000);
      expect(q.depth).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("backs off exponentially per key, capped, and forgets", () => {
    vi.useFakeTimers();
    try {
      const q = new WorkQueue({ now: () => Date.now(), backoff: { initialMs: 100, maxMs: 1_000 } });
      const delays = [1, 2, 3, 4, 5, 6].map(() => {
        const d = q.addRateLimited("k");
        vi.advanceTimersByTime(d);
        return d;
      });
      expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
      expect(q.retries("k")).toBe(6);
      q.forget("k");
      expect(q.addRateLimited("k")).toBe(100);
    } finally {
      vi.useRealTimers();
    }
  });

  it("remove drops timers and entries; shutDown wakes waiters", async () => {
    vi.useFakeTimers();
    try {
      const q = new WorkQueue({ now: () => Date.now() });
      q.addAfter("a", 1_000);
      q.add("b");
      q.remove("a");
      q.remove("b");
      vi.advanceTimersByTime(2_000);
      expect(q.depth).toBe(0);
      const waiting = q.get();
      q.shutDown();
      expect(await waiting).toBeUndefined();
      q.add("c");
      expect(await q.get()).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});
