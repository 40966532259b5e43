import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_CONNECTION_LIFETIME_SECONDS,
  NegotiateCounter,
  negotiateArrivals,
  negotiateRate,
} from "./arrivals.js";
import { defaultMix, trafficAt } from "./traffic.js";

const MINUTE = 60_000;
const T0 = Date.parse("2025-01-01T00:00:00Z");

/** A counter over a per-minute demand array starting at T0 (0 after its end). */
function counterOver(demand: readonly number[], lifetimeSeconds?: number) {
  const calls: number[] = [];
  const counter = new NegotiateCounter({
    originMs: T0,
    demandOfMinute: (minuteMs) => {
      calls.push(minuteMs);
      return demand[(minuteMs - T0) / MINUTE] ?? 0;
    },
    ...(lifetimeSeconds !== undefined ? { lifetimeSeconds } : {}),
  });
  return { counter, calls };
}

describe("negotiateRate", () => {
  it("steady demand D gives λ = D / W (Little's law), a rise adds dD/dt, a fall adds nothing", () => {
    expect(DEFAULT_CONNECTION_LIFETIME_SECONDS).toBe(1200);
    expect(negotiateRate(12_000, 0)).toBe(10);
    expect(negotiateRate(12_000, 0, 600)).toBe(20);
    expect(negotiateRate(12_000, 5, 600)).toBe(25);
    expect(negotiateRate(12_000, -50, 600)).toBe(20);
    expect(negotiateRate(0, 0)).toBe(0);
  });

  it("rejects negative demand, a non-finite slope and a lifetime ≤ 0", () => {
    expect(() => negotiateRate(-1, 0)).toThrow(RangeError);
    expect(() => negotiateRate(1, Number.NaN)).toThrow(RangeError);
    expect(() => negotiateRate(1, 0, 0)).toThrow("mean connection lifetime");
  });
});

describe("negotiateArrivals", () => {
  it("steady demand: D · 60 / W every minute, the first included (steady state before)", () => {
    expect([...negotiateArrivals([2400, 2400, 2400])]).toEqual([120, 120, 120]);
    expect([...negotiateArrivals([2400, 2400], { lifetimeSeconds: 60 })]).toEqual([2400, 2400]);
  });

  it("a ramp adds its rise per minute; a fall adds nothing", () => {
    const ramp = [1200, 1800, 2400, 3000, 2400];
    expect([...negotiateArrivals(ramp)]).toEqual([60, 600 + 90, 600 + 120, 600 + 150, 120]);
    // With demand before the series given, the first minute has its rise too.
    expect(negotiateArrivals([1200], { demandBefore: 0 })[0]).toBe(1200 + 60);
  });

  it("is empty for an empty series and rejects bad values", () => {
    expect(negotiateArrivals([]).length).toBe(0);
    expect(() => negotiateArrivals([1, -1])).toThrow("minute 1");
    expect(() => negotiateArrivals([1, Number.NaN])).toThrow(RangeError);
    expect(() => negotiateArrivals([1], { demandBefore: -5 })).toThrow("demandBefore");
    expect(() => negotiateArrivals([1], { lifetimeSeconds: -1 })).toThrow(RangeError);
  });
});

describe("NegotiateCounter", () => {
  it("counts D / W per second at a steady demand, linearly within the minute", () => {
    const { counter } = counterOver([2400, 2400, 2400, 2400]);
    expect(counter.cumulativeAt(T0 - 1)).toBe(0);
    expect(counter.cumulativeAt(T0)).toBe(0);
    expect(counter.cumulativeAt(T0 + 15_000)).toBe(30);
    expect(counter.cumulativeAt(T0 + MINUTE)).toBe(120);
    expect(counter.cumulativeAt(T0 + 2.5 * MINUTE)).toBe(300);
    expect(counter.between(T0 + MINUTE, T0 + 3 * MINUTE)).toBe(240);
    expect(counter.between(T0 + 3 * MINUTE, T0 + MINUTE)).toBe(0);
    expect(counter.arrivalsInMinute(T0 + 90_000)).toBe(120);
    expect(counter.arrivalsInMinute(T0 - 1)).toBe(0);
  });

  it("starts at the whole minute containing the origin", () => {
    const counter = new NegotiateCounter({ originMs: T0 + 30_000, demandOfMinute: () => 1200 });
    expect(counter.firstMinuteMs).toBe(T0);
    expect(counter.cumulativeAt(T0 + MINUTE)).toBe(60);
  });

  it("is monotone, and its per-minute differences are the series' arrivals", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300_000 }), { minLength: 1, maxLength: 120 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 40 }),
        fc.integer({ min: 60, max: 7200 }),
        (demand, fractions, lifetime) => {
          const { counter } = counterOver(demand, lifetime);
          const arrivals = negotiateArrivals(demand, { lifetimeSeconds: lifetime });
          for (let m = 0; m < demand.length; m++) {
            const diff = counter.cumulativeAt(T0 + (m + 1) * MINUTE) - counter.cumulativeAt(T0 + m * MINUTE);
            expect(diff).toBeCloseTo(arrivals[m] as number, 6);
          }
          const times = fractions.map((f) => T0 + f * demand.length * MINUTE).sort((a, b) => a - b);
          let last = 0;
          for (const t of times) {
            const n = counter.cumulativeAt(t);
            expect(n).toBeGreaterThanOrEqual(last);
            last = n;
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("counts the clients the service refuses: all of the offered demand negotiates", () => {
    // 3,000 clients want a one-unit instance: 995 accepted (5 app-server connections), 2,005 refused.
    const minute = trafficAt({
      mix: defaultMix("SignalR"),
      offeredConnections: 3000,
      sku: "Premium_P1",
      units: 1,
      noise: 0,
    });
    expect(minute.refusedConnections).toBe(2005);
    const counter = new NegotiateCounter({
      originMs: T0,
      demandOfMinute: () => minute.offeredConnections,
    });
    // 3,000 / 1,200 s = 2.5 per second, not the accepted clients' 995 / 1,200.
    expect(counter.cumulativeAt(T0 + 10 * MINUTE)).toBe(1500);
  });

  it("computes each minute once, across 28 days of history and many reads", () => {
    const minutes = 28 * 1440;
    const { counter, calls } = counterOver(new Array<number>(minutes + 10).fill(1200));
    expect(counter.cumulativeAt(T0 + minutes * MINUTE)).toBeCloseTo(minutes * 60, 6);
    expect(calls.length).toBe(minutes + 1);
    for (let s = 0; s < 600; s += 15) counter.cumulativeAt(T0 + minutes * MINUTE + s * 1000);
    expect(calls.length).toBe(minutes + 10); // the minutes up to the last read, once each
    expect(new Set(calls).size).toBe(calls.length);
  });

  it("forgets the minutes from a demand change on, and keeps those before", () => {
    const demand = [1200, 1200, 1200, 1200];
    const { counter, calls } = counterOver(demand);
    expect(counter.cumulativeAt(T0 + 4 * MINUTE)).toBe(240);
    demand[2] = 2400;
    demand[3] = 2400;
    counter.forgetFrom(T0 + 2 * MINUTE);
    // Minute 2 rises by 1,200 and arrives at 120 a minute; minute 3 is steady at 120.
    expect(counter.cumulativeAt(T0 + 4 * MINUTE)).toBe(60 + 60 + (1200 + 120) + 120);
    expect(calls.filter((c) => c === T0).length).toBe(1);
    expect(calls.filter((c) => c === T0 + 2 * MINUTE).length).toBe(2);
    // A change within a minute applies from the next one.
    counter.forgetFrom(T0 + 3 * MINUTE - 1);
    expect(counter.cumulativeAt(T0 + 4 * MINUTE)).toBe(1560);
    expect(calls.filter((c) => c === T0 + 2 * MINUTE).length).toBe(2);
    expect(calls.filter((c) => c === T0 + 3 * MINUTE).length).toBe(3);
  });

  it("rejects a bad origin, a bad lifetime and invalid demand", () => {
    expect(() => new NegotiateCounter({ originMs: Number.NaN, demandOfMinute: () => 1 })).toThrow(RangeError);
    expect(() => new NegotiateCounter({ originMs: T0, demandOfMinute: () => 1, lifetimeSeconds: 0 })).toThrow(
      RangeError,
    );
    const bad = new NegotiateCounter({ originMs: T0, demandOfMinute: () => -3 });
    expect(() => bad.cumulativeAt(T0 + MINUTE)).toThrow("2025-01-01T00:00:00.000Z");
    expect(() => bad.cumulativeAt(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
