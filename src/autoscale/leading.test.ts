import { describe, expect, it } from "vitest";
import type { LeadingSignalSpec } from "../api/index.js";
import { decide } from "./decide.js";
import {
  arrivalRate,
  type LeadingInput,
  type LeadingReading,
  leadingSignal,
  MAX_RATE_RISE,
  MIN_PAIRS,
  RATE_RISE_SPAN_MS,
  risingRate,
} from "./leading.js";
import type { DemandSeries } from "./signals.js";
import { input, NOW, samples, spec } from "./testing.js";

const MIN = 60_000;
const PROM = {
  serverAddress: "http://prometheus:9090",
  query: "sum(rate(negotiate_total[1m]))",
  timeout: "5s",
};
const lead = (extra: Partial<LeadingSignalSpec> = {}): LeadingSignalSpec => ({
  prometheus: PROM,
  measures: "NewConnectionsPerSecond",
  ...extra,
});
/** Connections one unit carries at 80 %. */
const PER_UNIT = 800;
/** Readings of `values`, one a minute, the newest 15 s before NOW. */
const readings = (values: number[]): LeadingReading[] =>
  values.map((value, i) => ({ timeMs: NOW - 15_000 - (values.length - 1 - i) * MIN, value }));
/** Azure's connections need: `connections` per bucket, the newest starting 4 minutes before NOW. */
function azure(connections: number[], saturatedFrom = Number.POSITIVE_INFINITY): DemandSeries {
  const points = connections.map((c, i) => ({
    start: NOW - 4 * MIN - (connections.length - 1 - i) * MIN,
    units: c / PER_UNIT,
    saturated: i >= saturatedFrom,
  }));
  return { signal: "connections", points, saturated: points.at(-1)?.saturated ?? false };
}
const base = (extra: Partial<LeadingInput>): LeadingInput => ({
  spec: lead(),
  observation: { readings: readings([10]) },
  nowMs: NOW,
  targetMs: NOW + 5 * MIN,
  connectionsPerUnit: PER_UNIT,
  tolerance: 0.1,
  ...extra,
});

describe("leading signal: mapping", () => {
  it("new connections per second × the lifetime of the spec (Little's law) without an Azure count", () => {
    const r = leadingSignal(base({ spec: lead({ connectionLifetime: "20m" }) }));
    // 10 clients/s × 1,200 s = 12,000 connections = 15 units at 800 per unit.
    expect(r.status).toMatchObject({
      state: "Ok",
      lifetimeSeconds: 1200,
      lifetimeSource: "Spec",
      connections: 12_000,
    });
    expect(r.ask?.units).toBeCloseTo(15, 9);
  });

  it("from Azure's newest count toward the steady state, with the lifetime as time constant", () => {
    // Newest bucket middle: NOW − 3.5 min; target NOW + 5 min: 8.5 min = 510 s later.
    const r = leadingSignal(
      base({ spec: lead({ connectionLifetime: "20m" }), connections: azure([4000, 4000, 4000]) }),
    );
    const expected = 12_000 + (4000 - 12_000) * Math.exp(-510 / 1200);
    expect(r.status.connections).toBe(Math.round(expected));
    expect(r.ask?.units).toBeCloseTo(expected / PER_UNIT, 9);
  });

  it("a counter: its increase per second between the two newest readings; a decrease is a reset", () => {
    expect(arrivalRate("NewConnectionsTotal", readings([1000, 1600]))).toEqual({ perSecond: 10 });
    // Restarted app servers: 1,600 → 300. The increase is the new value, as rate() reads it.
    expect(arrivalRate("NewConnectionsTotal", readings([1600, 300]))).toEqual({ perSecond: 5 });
    expect(arrivalRate("NewConnectionsTotal", readings([1600]))).toMatchObject({
      reason: "NoPreviousReading",
    });
    const reset = leadingSignal(
      base({
        spec: lead({ measures: "NewConnectionsTotal", connectionLifetime: "20m" }),
        observation: { readings: readings([1600, 300]) },
      }),
    );
    expect(reset.status).toMatchObject({ state: "Ok", newConnectionsPerSecond: 5, connections: 6000 });
  });

  it("concurrent client connections are the demand itself", () => {
    const r = leadingSignal(
      base({ spec: lead({ measures: "Connections" }), observation: { readings: readings([24_000]) } }),
    );
    expect(r.ask?.units).toBe(30);
    expect(r.status).toMatchObject({ state: "Ok", connections: 24_000 });
  });
});

describe("leading signal: a rising rate", () => {
  // Lifetime 20 min, no Azure count: the steady state λ × 1,200 s. The newest reading is 15 s
  // before NOW and the target 5 minutes after it: a lead of 315 s.
  const rising = (values: number[]) =>
    leadingSignal(
      base({ spec: lead({ connectionLifetime: "20m" }), observation: { readings: readings(values) } }),
    );

  it("is continued over the lead: the mean of the rate rising on its line, λ + slope × lead ÷ 2", () => {
    // 10, 12, 14/s a minute apart: 2/s a minute; over 315 s the mean rate is 14 + 2/60 × 315 ÷ 2 = 19.25/s.
    const r = rising([10, 12, 14]);
    expect(r.status).toMatchObject({ newConnectionsPerSecond: 14, connections: Math.round(19.25 * 1200) });
    expect(r.ask?.units).toBeCloseTo((19.25 * 1200) / PER_UNIT, 9);
    expect(r.ask?.message).toContain("rising 2/s a minute over 3 readings (tau 1): 19.25/s over the 315 s");
  });

  it(`adds at most ${MAX_RATE_RISE * 100} % of the newest rate`, () => {
    // 2, 6, 10/s: 4/s a minute would add 10.5/s; at most half of 10/s is added.
    const r = rising([2, 6, 10]);
    expect(r.status.connections).toBe(15 * 1200);
    expect(r.ask?.message).toContain(`at most ×${1 + MAX_RATE_RISE}`);
  });

  it("a rise within twice the tolerance band across the readings is not continued", () => {
    // 100, 104, 108/s: consistent, but 8/s across 2 minutes is under 2 × 10 % of 108/s.
    expect(rising([100, 104, 108]).status.connections).toBe(108 * 1200);
    // 100, 114, 128/s: 28/s is beyond 2 × 10 % of 128/s.
    expect(rising([100, 114, 128]).status.connections).toBeGreaterThan(128 * 1200);
  });

  it("a rate that does not rise consistently, or too few readings, is read as it is", () => {
    for (const values of [
      [10, 11, 10],
      [12, 10, 14],
      [10, 10, 10],
      [14, 12, 10],
      [10, 14],
    ]) {
      const r = rising(values);
      const newest = values.at(-1) as number;
      expect(r.status.connections, `${values}`).toBe(newest * 1200);
      expect(r.ask?.message).not.toContain("rising");
    }
  });

  it(`fits only the readings of the last ${RATE_RISE_SPAN_MS / MIN} minutes`, () => {
    // 2, 4, 6 long ago, then flat: the old rise is not continued.
    expect(rising([2, 4, 6, 10, 10, 10]).status.connections).toBe(10 * 1200);
    expect(risingRate([[0, 5]], 5, 5 * MIN, 0.1)).toBeUndefined();
  });
});

describe("leading signal: the lifetime measured from Azure's count", () => {
  // λ = 10/s for 10 minutes; Azure saw 6,000 connections (W = 600 s) on its unsaturated buckets.
  const steady = readings(Array.from({ length: 10 }, () => 10));

  it(`is Calibrating (and asks nothing) with fewer than ${MIN_PAIRS} pairs`, () => {
    const r = leadingSignal(base({ observation: { readings: steady }, connections: azure([6000, 6000]) }));
    expect(r.status.state).toBe("Calibrating");
    expect(r.ask).toBeUndefined();
  });

  it("is the median of connections ÷ rate over the pairs", () => {
    const r = leadingSignal(
      base({ observation: { readings: steady }, connections: azure([6000, 6000, 9000, 6000]) }),
    );
    expect(r.status).toMatchObject({ state: "Ok", lifetimeSource: "Measured", lifetimeSeconds: 600 });
  });

  it("leaves saturated buckets out, and keeps the measured lifetime through a full quota", () => {
    const full = azure([6000, 6000, 10_000, 10_000], 2);
    const calibrating = leadingSignal(base({ observation: { readings: steady }, connections: full }));
    expect(calibrating.status.state).toBe("Calibrating");
    // A crowd: 40 clients/s while the quota is full; the lifetime measured before still applies.
    const crowd = readings([...Array.from({ length: 9 }, () => 10), 40]);
    const r = leadingSignal(
      base({
        observation: { readings: crowd },
        connections: azure([10_000, 10_000, 10_000, 10_000], 0),
        previous: { state: "Ok", lifetimeSeconds: 600, lifetimeSource: "Measured", message: "" },
      }),
    );
    // 40 × 600 = 24,000 at steady state; from the full quota (10,000) 510 s ago → 24,000 − 14,000·e^(−0.85).
    const expected = 24_000 - 14_000 * Math.exp(-510 / 600);
    expect(r.status).toMatchObject({ state: "Ok", lifetimeSeconds: 600, lifetimeSource: "Measured" });
    expect(r.status.connections).toBe(Math.round(expected));
    expect(r.ask?.units).toBeCloseTo(expected / PER_UNIT, 9);
  });
});

describe("leading signal: unknown is ignored", () => {
  it.each([
    [
      "a failed read",
      { observation: { readings: readings([10]), error: { reason: "Timeout", message: "no answer in 5s" } } },
      "Timeout",
    ],
    ["no reading", { observation: { readings: [] } }, "NoData"],
    ["nothing read on this pass", { observation: undefined }, "NotRead"],
    ["a stale reading", { observation: { readings: [{ timeMs: NOW - 6 * MIN, value: 10 }] } }, "Stale"],
    ["a negative value", { observation: { readings: readings([-3]) } }, "Negative"],
    ["NaN", { observation: { readings: readings([Number.NaN]) } }, "NotFinite"],
    ["+Inf", { observation: { readings: readings([Number.POSITIVE_INFINITY]) } }, "NotFinite"],
  ] as [string, Partial<LeadingInput>, string][])(
    "%s: Unavailable (%s), nothing asked",
    (_, extra, reason) => {
      const r = leadingSignal(base({ spec: lead({ connectionLifetime: "20m" }), ...extra }));
      expect(r.status).toMatchObject({ state: "Unavailable", reason });
      expect(r.ask).toBeUndefined();
    },
  );
});

describe("leading signal in the decision", () => {
  const s = (extra: Partial<LeadingSignalSpec> = {}) => {
    const out = spec({
      metrics: { connections: { targetPercent: 80 } },
      anticipation: {
        mode: "Enabled",
        scaleDuration: "4m",
        headroom: { peakPercent: 0, horizon: "1h" },
        leadingSignal: lead({ connectionLifetime: "10m", ...extra }),
      },
    });
    delete out.metrics.serverLoad;
    return out;
  };
  // Azure: 6,000 connections on 10 units (75 % of 8,000): inside the tolerance band.
  const flat = samples({ connections: 6000 });

  it("scales out on a rising negotiate rate while Azure Monitor still shows the old level", () => {
    // 10/s × 600 s = 6,000 matches Azure; the crowd brings 40/s.
    const d = decide(input({ spec: s(), samples: flat, leading: { readings: readings([10, 10, 40]) } }));
    expect(d.recommendation?.units).toBeGreaterThan(10);
    const why = d.reasons.find((r) => r.code === "Anticipated");
    expect(why?.message).toMatch(/^LeadingSignal asks for \d+ units/);
    expect(d.anticipation?.leading).toMatchObject({ state: "Ok", newConnectionsPerSecond: 40 });
  });

  it("never lowers capacity on its own: a falling rate, or none, decides as without the signal", () => {
    const without = decide(input({ spec: s(), samples: flat }));
    for (const value of [0, 1, 5]) {
      const d = decide(input({ spec: s(), samples: flat, leading: { readings: readings([10, 10, value]) } }));
      expect(d.recommendation).toEqual(without.recommendation);
      expect(d.desired).toEqual(without.desired);
    }
  });

  it("an unavailable signal is reported in the Anticipating condition and changes nothing", () => {
    const without = decide(input({ spec: s(), samples: flat }));
    const d = decide(
      input({
        spec: s(),
        samples: flat,
        leading: {
          readings: [],
          error: { reason: "Unreachable", message: "connect ECONNREFUSED 127.0.0.1:9" },
        },
      }),
    );
    expect(d.desired).toEqual(without.desired);
    const cond = d.conditions.find((c) => c.type === "Anticipating");
    expect(cond).toMatchObject({ status: "True", reason: "LeadingSignalUnavailable" });
    expect(cond?.message).toMatch(/leading signal \(Unreachable\): ignored: connect ECONNREFUSED/);
  });
});

describe("leading signal: reconnects are not arrivals", () => {
  // 20,000 steady connections (16.7 new/s with a 20-minute lifetime); a scale-in 30 → 25 units
  // seen complete a minute ago disconnected 20,000 × 5 ÷ 30 = 3,333 clients, who reconnected in
  // the minute of the newest reading: 16.7 + 3,333 ÷ 60 = 72.2 negotiations/s. Readings one a
  // minute for the 11 minutes before: the steady rate before the change was sent.
  const steady = 20_000 / 1200;
  const burst = 20_000 / 6;
  const change = { startedMs: NOW - 7 * MIN, observedMs: NOW - MIN, disconnected: burst };
  const withNewest = (newest: number) => readings([...Array(11).fill(steady), newest]);
  const spike = withNewest(steady + burst / 60);
  const input = (changes?: LeadingInput["changes"], query = PROM.query) =>
    base({
      spec: lead({ connectionLifetime: "20m", prometheus: { ...PROM, query } }),
      observation: { readings: spike },
      connections: azure([20_000, 20_000, 20_000]),
      ...(changes ? { changes } : {}),
    });

  it("discounts negotiations up to the clients the change disconnected", () => {
    expect(leadingSignal(input()).ask?.units).toBeGreaterThan(40);
    const r = leadingSignal(input([change]));
    // Back to the steady rate: 20,000 connections, 25 units at 800 each.
    expect(r.status.newConnectionsPerSecond).toBeCloseTo(steady, 3);
    expect(r.ask?.units).toBeCloseTo(25, 6);
  });

  it("as Prometheus's rate() reads the burst: extrapolated from the samples within the range", () => {
    // Scraped every 15 s, a 1-minute range holds samples 45 s apart; rate() extrapolates their
    // increase to the 60 s of the range, so a burst between them reads × 60 ÷ 45: 20,000 on 50
    // units scaled to 30 disconnect 8,000, read as 16.7 + 8,000 × 4/3 ÷ 60 = 194.4/s (what the
    // operator read from a real Prometheus; a discount of 8,000 ÷ 60 alone left 61/s, 44 units).
    const eight = { ...change, disconnected: 8000 };
    const r = leadingSignal({
      ...input([eight]),
      observation: { readings: withNewest(steady + (8000 * 4) / 3 / 60) },
    });
    expect(r.status.newConnectionsPerSecond).toBeCloseTo(steady, 3);
    expect(r.ask?.units).toBeCloseTo(25, 6);
  });

  it("for as long as the query's range holds the burst: a 5-minute range, 4 minutes after the change", () => {
    // rate(…[5m]) counts the burst for 5 minutes: 3,333 × 1.07 ÷ 300 = 11.9/s on top of 16.7,
    // still in a reading 4 minutes after the change was seen complete (a 1-minute range's span
    // would have ended a minute before).
    const late = { ...change, startedMs: NOW - 10 * MIN, observedMs: NOW - 4 * MIN };
    const fiveMinutes = "sum(rate(negotiate_total[5m]))";
    const reading = { readings: withNewest(steady + (burst * 1.07) / 300) };
    const r = leadingSignal({ ...input([late], fiveMinutes), observation: reading });
    expect(r.status.newConnectionsPerSecond).toBeCloseTo(steady, 3);
    const oneMinute = leadingSignal({ ...input([late]), observation: reading });
    expect(oneMinute.status.newConnectionsPerSecond).toBeCloseTo(steady + (burst * 1.07) / 300, 3);
  });

  it("never below the rate before the change, and only within its span", () => {
    // A real rise on top of the most the reconnects can add (twice the burst: rate()'s
    // extrapolation) keeps what exceeds it.
    const rise = withNewest(steady + (2 * burst) / 60 + 10);
    const r = leadingSignal({ ...input([change]), observation: { readings: rise } });
    expect(r.status.newConnectionsPerSecond).toBeCloseTo(steady + 10, 3);
    // A change seen long ago discounts nothing.
    const old = { ...change, startedMs: NOW - 30 * MIN, observedMs: NOW - 25 * MIN };
    expect(leadingSignal(input([old])).status.newConnectionsPerSecond).toBeCloseTo(steady + burst / 60, 3);
  });

  it("a counter's increase is the operator's own: the clients over the readings' spacing, no extrapolation", () => {
    // Totals a minute apart: 1,000 steady arrivals a minute, then 1,000 + 3,333 reconnects.
    const totals = readings([0, 1000, 2000 + burst]);
    const counter = (changes?: LeadingInput["changes"]) =>
      leadingSignal(
        base({
          spec: lead({ measures: "NewConnectionsTotal", connectionLifetime: "20m" }),
          observation: { readings: totals },
          ...(changes ? { changes } : {}),
        }),
      );
    expect(counter().status.newConnectionsPerSecond).toBeCloseTo((1000 + burst) / 60, 3);
    expect(counter([change]).status.newConnectionsPerSecond).toBeCloseTo(1000 / 60, 3);
    // 100 more arrivals than the reconnects still count (no doubling for a counter).
    const more = readings([0, 1000, 2100 + burst]);
    const r = leadingSignal({
      ...base({
        spec: lead({ measures: "NewConnectionsTotal", connectionLifetime: "20m" }),
        observation: { readings: more },
      }),
      changes: [change],
    });
    expect(r.status.newConnectionsPerSecond).toBeCloseTo(1100 / 60, 3);
  });
});

describe("leading signal: held to what Azure's connection count makes plausible", () => {
  const spec20m = lead({ connectionLifetime: "20m" });
  it("50 negotiations/s while Azure counts a flat 20,000 (16.7/s at 20 min): the rate is held to a third", () => {
    // Azure's buckets NOW − 9 … NOW − 4 min: 20,000 throughout; the readings between the ends of
    // the first and the newest (NOW − 8 … NOW − 3 min, 300 s) counted 50/s · 300 s = 15,000
    // arrivals, where the count explains 20,000 · 300 / 1,200 = 5,000 (no growth, departures
    // replaced). Held to 50/s × 1/3: the steady state is the 20,000 there are, 25 units (not
    // 60,000 + (20,000 − 60,000) · e^(−510/1200) = 33,848, 42.3 units).
    const r = leadingSignal(
      base({
        spec: spec20m,
        observation: { readings: readings(Array(10).fill(50)) },
        connections: azure(Array(6).fill(20_000)),
      }),
    );
    expect(r.ask?.units).toBeCloseTo(25, 9);
    expect(r.ask?.message).toMatch(
      /held to what Azure's count makes plausible: of the 15,000 arrivals counted 11:52–11:57 UTC, Azure's ConnectionCount \(20,000 → 20,000\) explains 5,000/,
    );
    expect(r.status.newConnectionsPerSecond).toBe(50);
    expect(r.status.connections).toBe(20_000);
  });

  it("a rise Azure's count confirms is not held", () => {
    // 10,000 → 15,000 in 5 minutes at 27/s: 8,100 counted, 5,000 + 12,500 · 300 / 1,200 = 8,125
    // explained.
    const r = leadingSignal(
      base({
        spec: spec20m,
        observation: { readings: readings(Array(10).fill(27)) },
        connections: azure([10_000, 11_000, 12_000, 13_000, 14_000, 15_000]),
      }),
    );
    const expected = 27 * 1200 + (15_000 - 27 * 1200) * Math.exp(-510 / 1200);
    expect(r.ask?.units).toBeCloseTo(expected / PER_UNIT, 9);
    expect(r.ask?.message).not.toMatch(/held/);
  });

  it("a full quota is never held: there the count is a lower bound", () => {
    const r = leadingSignal(
      base({
        spec: spec20m,
        observation: { readings: readings(Array(10).fill(50)) },
        connections: azure(Array(6).fill(20_000), 5),
      }),
    );
    expect(r.ask?.units).toBeCloseTo((60_000 + (20_000 - 60_000) * Math.exp(-510 / 1200)) / PER_UNIT, 9);
    expect(r.ask?.message).not.toMatch(/held/);
  });
});
