import { describe, expect, it } from "vitest";
import { ThrottledError } from "./errors.js";
import { ThrottleGate } from "./throttle.js";

describe("ThrottleGate", () => {
  it("refuses a gated scope until its time and lets other scopes through", () => {
    let now = new Date("2025-03-01T12:00:00Z");
    const gate = new ThrottleGate(() => now);
    const a = { subscriptionId: "sub-a", region: "westeurope" };
    const b = { subscriptionId: "sub-a", region: "eastus" };
    gate.block(a, new Date("2025-03-01T12:00:30Z"));
    expect(() => gate.check(b, "op")).not.toThrow();
    expect(() => gate.check({ subscriptionId: "SUB-A", region: "West Europe" }, "op")).toThrow(
      ThrottledError,
    );
    try {
      gate.check(a, "op");
    } catch (err) {
      expect((err as ThrottledError).fromGate).toBe(true);
      expect((err as ThrottledError).retryAfterMs).toBe(30_000);
    }
    now = new Date("2025-03-01T12:00:29.999Z");
    expect(() => gate.check(a, "op")).toThrow(ThrottledError);
    expect(gate.snapshot()).toHaveLength(1);
    now = new Date("2025-03-01T12:00:30Z");
    expect(() => gate.check(a, "op")).not.toThrow();
    expect(gate.notBefore(a)).toBeUndefined();
    expect(gate.snapshot()).toHaveLength(0);
  });

  it("keeps the later of two waits", () => {
    const now = new Date("2025-03-01T12:00:00Z");
    const gate = new ThrottleGate(() => now);
    const a = { subscriptionId: "s", region: "r" };
    gate.block(a, new Date("2025-03-01T12:01:00Z"));
    gate.block(a, new Date("2025-03-01T12:00:10Z"));
    expect(gate.notBefore(a)?.toISOString()).toBe("2025-03-01T12:01:00.000Z");
  });
});
