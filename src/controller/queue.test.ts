import { describe, expect, it } from "vitest";
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

  it("backs off exponentially per key, capped, and forgets", () => {
    const q = new WorkQueue({ backoff: { initialMs: 100, maxMs: 1_000 } });
    const delays = [1, 2, 3, 4, 5, 6].map(() => q.nextBackoff("k"));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(q.retries("k")).toBe(6);
    q.forget("k");
    expect(q.nextBackoff("k")).toBe(100);
  });

  it("remove drops entries and backoff; shutDown wakes waiters", async () => {
    const q = new WorkQueue({ backoff: { initialMs: 100, maxMs: 1_000 } });
    q.add("a");
    q.add("b");
    q.nextBackoff("a");
    q.remove("a");
    expect(q.retries("a")).toBe(0);
    expect(q.depth).toBe(1);
    q.remove("b");
    expect(q.depth).toBe(0);
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add("c");
    expect(await q.get()).toBeUndefined();
  });
});
