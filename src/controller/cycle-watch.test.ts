import { describe, expect, it } from "vitest";
import { CycleWatch } from "./cycle-watch.js";

describe("CycleWatch", () => {
  it("is ready until a cycle runs past its deadline plus the margin, and again once it ends", () => {
    let now = 1_000;
    const watch = new CycleWatch({ deadlineMs: 60_000, marginMs: 15_000, now: () => now });
    expect(watch.check()).toEqual({ ok: true });
    const first = watch.begin();
    now += 75_000;
    expect(watch.check()).toEqual({ ok: true });
    const second = watch.begin();
    now += 1;
    const late = watch.check();
    expect(late.ok).toBe(false);
    expect(late.reason).toBe("poll cycle running for 75 s, past its deadline of 60 s by more than 15 s");
    watch.end(first);
    // The second cycle started 1 ms ago.
    expect(watch.check()).toEqual({ ok: true });
    expect(watch.running).toBe(1);
    watch.end(second);
    watch.end(second);
    expect(watch.running).toBe(0);
  });

  it("refuses a deadline that is not positive and a negative margin", () => {
    expect(() => new CycleWatch({ deadlineMs: 0, marginMs: 0, now: () => 0 })).toThrow(RangeError);
    expect(() => new CycleWatch({ deadlineMs: 1, marginMs: -1, now: () => 0 })).toThrow(RangeError);
  });
});
