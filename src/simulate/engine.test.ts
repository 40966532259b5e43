import { describe, expect, it } from "vitest";
import { candidates } from "../capacity/index.js";
import { trafficAt } from "../traffic/index.js";
import { MetricHistory, type PollContext, type Strategy, simulate } from "./engine.js";
import { CONNECTIONS_ONLY, minuteOf, START, steps, testSetup } from "./testing.js";

/** Asks for `want` at every poll and records what it saw. */
class Greedy implements Strategy {
  readonly name = "greedy";
  readonly description = "asks for the same size every minute";
  readonly initial = { sku: "Premium_P1" as const, units: 1 };
  readonly pollMinutes = 1;
  readonly seen: { minute: number; scaling: boolean; units: number }[] = [];
  constructor(readonly want: number) {}
  poll(ctx: PollContext) {
    this.seen.push({ minute: ctx.minute, scaling: ctx.scaling, units: ctx.current.units });
    return { sku: "Premium_P1" as const, units: this.want };
  }
}

describe("engine", () => {
  it("counts the clients a completed scale-in disconnects and their reconnects as negotiations", () => {
    // 9,000 clients on Premium_P1 × 10 → × 5: half the units go, 4,500 clients with them; the
    // new quota (5,000, less the app servers' connections) leaves room for few of them.
    const s = new Greedy(5);
    Object.assign(s, { initial: { sku: "Premium_P1", units: 10 } });
    const demand = steps([[12, 9_000]]);
    const arrivals = new Float64Array(12).fill(450);
    const setup = { ...testSetup(demand), arrivals };
    const run = simulate(s, setup);
    const op = run.operations[0];
    expect(op?.disconnected).toBeCloseTo(4_500, 6);
    // A scale-out disconnects none.
    const out = simulate(new Greedy(10), testSetup(steps([[12, 900]])));
    expect(out.operations.map((o) => o.disconnected)).toEqual([0]);
    // Everyone, in the pessimistic model.
    const all = simulate(new Greedy(10), { ...testSetup(steps([[12, 900]])), disconnection: "Everyone" });
    expect(all.operations[0]?.disconnected).toBe(900);
  });

  it("keeps the old capacity while a scale is in flight and starts no second one", () => {
    const s = new Greedy(10);
    const run = simulate(s, testSetup(steps([[12, 5_000]])));
    expect(run.operations.map((o) => [minuteOf(o.startedMs), minuteOf(o.completedMs)])).toEqual([[0, 5]]);
    expect([...run.units]).toEqual([1, 1, 1, 1, 1, 10, 10, 10, 10, 10, 10, 10]);
    expect(s.seen.slice(0, 6).map((x) => x.scaling)).toEqual([false, true, true, true, true, false]);
    // Over the quota while at 1 unit: 4,000 refused each minute.
    expect(run.refused[0]).toBe(4_000);
    expect(run.refused[5]).toBe(0);
  });

  it("applies a zero-duration scale at once", () => {
    const run = simulate(new Greedy(10), testSetup(steps([[3, 5_000]]), { scaleDurationMs: 0 }));
    expect([...run.units]).toEqual([10, 10, 10]);
  });

  it("polls every pollMinutes minutes", () => {
    const s = new Greedy(1);
    Object.assign(s, { pollMinutes: 3 });
    simulate(s, testSetup(steps([[10, 100]])));
    expect(s.seen.map((x) => x.minute)).toEqual([0, 3, 6, 9]);
  });

  it("is deterministic for a seed and differs with another", () => {
    const demand = Float64Array.from({ length: 200 }, (_, m) => 20_000 + 100 * m);
    const mix = {
      service: "SignalR" as const,
      entries: [{ scenario: "echo" as const, share: 1 }],
      messageSizeBytes: 2048,
    };
    const observed = (seed: string) => {
      const s = new Greedy(30);
      let last: PollContext["metrics"] | undefined;
      const poll = s.poll.bind(s);
      s.poll = (ctx) => {
        last = ctx.metrics;
        return poll(ctx);
      };
      simulate(s, { ...testSetup(demand, { seed, noiseAmplitude: 0.05 }), mix });
      const end = START + 200 * 60_000;
      return last?.samples(START, end + 600_000).map((x) => x.serverLoadPercent);
    };
    expect(observed("a")).toEqual(observed("a"));
    expect(observed("a")).not.toEqual(observed("b"));
  });
});

describe("metric history", () => {
  const minute = (connections: number) =>
    trafficAt({
      mix: CONNECTIONS_ONLY,
      offeredConnections: connections,
      sku: "Premium_P1",
      units: 10,
      noise: 0,
    });

  it("hides buckets until the ingestion delay has passed and fills the newest one linearly", () => {
    const h = new MetricHistory("WebPubSub", START, 10, 150_000); // 2.5 minutes
    for (let k = 0; k < 6; k++) h.push(minute(1_000 * (k + 1)), 0);
    const now = START + 6 * 60_000; // buckets 0–5 recorded
    expect(h.ingested(3, now)).toBe(0.5); // (6 − 2.5 − 3) min
    expect(h.ingested(4, now)).toBe(0);
    expect(h.ingested(2, now)).toBe(1);
    const samples = h.samples(START, now);
    expect(samples.map((s) => (s.time as Date).getTime())).toEqual(
      [0, 1, 2, 3].map((k) => START + k * 60_000),
    );
    // Gauges are as they are; totals of the partial bucket are halved.
    expect(samples[3]?.connectionQuotaUtilizationPercent).toBe(40);
    const full = minute(4_000).inboundBytesPerSecond;
    expect(samples[3]?.inboundBytesPerSecond).toBeCloseTo(full / 2, 9);
    expect(samples[3]?.messagesPerSecond).toBeNull(); // Web PubSub has no MessageCount
  });

  it("averages a gauge over the ingested buckets of a time window", () => {
    const h = new MetricHistory("WebPubSub", START, 20, 180_000);
    for (let k = 0; k < 20; k++) h.push(minute(k < 10 ? 5_000 : 8_000), 0);
    const now = START + 20 * 60_000;
    // window [10, 20), ingested 10–16: all 80 %.
    expect(h.average("ServerLoad", now - 10 * 60_000, now)).toEqual({ value: 80, buckets: 7 });
    // window [5, 15), ingested 5–14 → 5 × 50 + 5 × 80.
    expect(
      h.average("ConnectionQuotaUtilization", START + 5 * 60_000, START + 15 * 60_000 + 180_000),
    ).toEqual({ value: 65, buckets: 10 });
    expect(h.average("ServerLoad", now, now + 60_000)).toBeUndefined();
  });

  it("keeps the candidates' ladder order the oracle relies on", () => {
    expect(
      candidates(["Premium_P1", "Premium_P2"])
        .map((s) => s.units)
        .slice(-11, -9),
    ).toEqual([100, 100]);
  });
});
