import { describe, expect, it } from "vitest";
import { createVirtualClock } from "./clock.js";

describe("createVirtualClock", () => {
  it("runs faster than the real clock and can be stopped, set and advanced", () => {
    let real = 1_000;
    const clock = createVirtualClock({
      start: new Date("2025-01-01T00:00:00Z"),
      speed: 60,
      realNow: () => real,
    });
    real += 1_000;
    expect(clock.now().toISOString()).toBe("2025-01-01T00:01:00.000Z");
    clock.setSpeed(0);
    real += 50_000;
    expect(clock.now().toISOString()).toBe("2025-01-01T00:01:00.000Z");
    clock.advance(30_000);
    expect(clock.nowMs()).toBe(Date.parse("2025-01-01T00:01:30Z"));
    clock.set(new Date("2025-06-01T00:00:00Z"));
    clock.setSpeed(2);
    real += 500;
    expect(clock.now().toISOString()).toBe("2025-06-01T00:00:01.000Z");
    expect(clock.speed).toBe(2);
    expect(clock.realDuration(10_000)).toBe(5_000);
    clock.setSpeed(0);
    expect(clock.realDuration(1)).toBe(Number.POSITIVE_INFINITY);
  });

  it("rejects nonsense", () => {
    expect(() => createVirtualClock({ speed: -1 })).toThrow(RangeError);
    expect(() => createVirtualClock({ start: new Date("nope") })).toThrow(RangeError);
    expect(() => createVirtualClock().advance(-5)).toThrow(RangeError);
  });
});
