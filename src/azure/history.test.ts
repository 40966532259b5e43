/**
 * The history reader with a stand-in for getBatch: which calls it sends (batching, spans, grain,
 * metric names, one aggregation per query), how an answer becomes points, the cache and its
 * hourly refresh, the bound on calls at 1,000 policies, and failures confined to their batch.
 */
import { describe, expect, it } from "vitest";
import type { MetricsBatch } from "./batching.js";
import { InvalidRequestError, ThrottledError, TransientError } from "./errors.js";
import { HistoryReader, type HistoryTarget } from "./history.js";
import type { MetricsResultLike } from "./metric-samples.js";
import type { BatchAnswer, BatchQuerier, BatchQuery } from "./metrics.js";

const S1 = "11111111-1111-1111-1111-111111111111";
const S2 = "22222222-2222-2222-2222-222222222222";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** A Monday, 09:00:00 UTC. */
const T0 = Date.parse("2025-03-03T09:00:00Z");

const id = (name: string, sub = S1, type = "SignalR") =>
  `/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.SignalRService/${type}/${name}`;

const target = (name: string, more: Partial<HistoryTarget> = {}): HistoryTarget => ({
  resourceId: id(name),
  region: "westeurope",
  days: 7,
  grain: "5m",
  ...more,
});

/** Connections a resource has at a time in the stand-in: a daily cycle, different per resource. */
function demandOf(resourceId: string, t: number): number {
  const phase = ((t % DAY) / DAY) * 2 * Math.PI;
  return Math.round(1_000 + resourceId.length * 10 + 500 * Math.sin(phase));
}

interface Call {
  batch: MetricsBatch;
  query: BatchQuery;
}

/** The aggregation Azure supports for each metric read here (metric reference). */
const SUPPORTED: Record<string, readonly string[]> = {
  ConnectionCount: ["Maximum"],
  TotalConnectionCount: ["Maximum", "Average"],
  ConnectionQuotaUtilization: ["Minimum", "Maximum", "Average"],
  InboundTraffic: ["Total"],
  OutboundTraffic: ["Total"],
};

/**
 * getBatch as Azure answers it: one result per resource with the metrics asked for, one point
 * per bucket of the span, only the aggregation asked for; a metric asked for an aggregation it
 * does not support is a 400.
 */
class FakeMonitor implements BatchQuerier {
  readonly calls: Call[] = [];
  /** Answers with this error for calls whose batch holds one of these resources. */
  failFor = new Set<string>();
  /** Fails only the queries of this aggregation (with `failFor`; every query when unset). */
  failAggregation: string | undefined;
  /** Resources whose answer has the wrong interval. */
  wrongGrain = new Set<string>();
  /** Buckets (ms) whose traffic has no data point (idle counters). */
  idleAt = new Set<number>();
  /** Buckets (ms) whose connection count has a null data point. */
  nullAt = new Set<number>();

  async queryBatch(batch: MetricsBatch, query: BatchQuery): Promise<BatchAnswer> {
    this.calls.push({ batch, query });
    for (const name of query.metricNames) {
      if (!SUPPORTED[name]?.includes(query.aggregation)) {
        const message = `Sampling type is not found. Metric: ${name}, SamplingType: ${query.aggregation}`;
        return {
          error: new InvalidRequestError(message, { operation: query.operation, status: 400 }),
          sent: true,
        };
      }
    }
    const failing = this.failAggregation === undefined || this.failAggregation === query.aggregation;
    if (failing && batch.resourceIds.some((r) => this.failFor.has(r))) {
      return {
        error: new TransientError("service unavailable", { operation: query.operation, status: 503 }),
        sent: true,
      };
    }
    const grainMs = query.interval === "PT5M" ? 5 * MIN : HOUR;
    const results: MetricsResultLike[] = batch.resourceIds.map((resourceId) => {
      const times: number[] = [];
      for (let t = query.start.getTime(); t < query.end.getTime(); t += grainMs) times.push(t);
      const metric = (name: string, point: (t: number) => Record<string, number | undefined>) => ({
        id: `${resourceId}/providers/Microsoft.Insights/metrics/${name}`,
        name,
        timeseries: [{ data: times.map((t) => ({ timeStamp: new Date(t), ...point(t) })) }],
      });
      const connections = batch.service === "SignalR" ? "ConnectionCount" : "TotalConnectionCount";
      const all = [
        metric(connections, (t) => ({ maximum: this.nullAt.has(t) ? undefined : demandOf(resourceId, t) })),
        // The quota utilization of 2 units (2,000 connections), %.
        metric("ConnectionQuotaUtilization", (t) => ({
          maximum: this.nullAt.has(t) ? undefined : demandOf(resourceId, t) / 20,
        })),
        {
          ...metric("InboundTraffic", (t) => ({ total: demandOf(resourceId, t) * (grainMs / 1000) })),
          timeseries: [
            {
              // An idle bucket as the official example writes it: a point with only its timestamp.
              data: times.map((t) =>
                this.idleAt.has(t)
                  ? { timeStamp: new Date(t) }
                  : { timeStamp: new Date(t), total: demandOf(resourceId, t) * (grainMs / 1000) },
              ),
            },
          ],
        },
        {
          ...metric("OutboundTraffic", () => ({})),
          timeseries: [
            {
              // An idle bucket left out altogether: the same as a point without a value.
              data: times
                .filter((t) => !this.idleAt.has(t))
                .map((t) => ({ timeStamp: new Date(t), total: 2 * (grainMs / 1000) })),
            },
          ],
        },
      ];
      return {
        resourceId,
        granularity: this.wrongGrain.has(resourceId) ? "PT1M" : query.interval,
        metrics: all.filter((m) => query.metricNames.includes(m.name)),
      };
    });
    return { results, sent: true };
  }
}

describe("HistoryReader: what it asks Azure Monitor", () => {
  it("reads connections and their quota utilization as Maximum and both traffic directions as Total, at the policy's grain", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    reader.want([target("chat"), target("wps", { resourceId: id("wps", S1, "WebPubSub"), grain: "1h" })], T0);
    await reader.refresh(T0);
    const asked = monitor.calls.map((c) => ({
      service: c.batch.service,
      metricNames: c.query.metricNames,
      aggregation: c.query.aggregation,
      interval: c.query.interval,
    }));
    expect(asked).toEqual([
      {
        service: "SignalR",
        metricNames: ["ConnectionQuotaUtilization", "ConnectionCount"],
        aggregation: "Maximum",
        interval: "PT5M",
      },
      {
        service: "SignalR",
        metricNames: ["InboundTraffic", "OutboundTraffic"],
        aggregation: "Total",
        interval: "PT5M",
      },
      {
        service: "WebPubSub",
        metricNames: ["ConnectionQuotaUtilization", "TotalConnectionCount"],
        aggregation: "Maximum",
        interval: "PT1H",
      },
      {
        service: "WebPubSub",
        metricNames: ["InboundTraffic", "OutboundTraffic"],
        aggregation: "Total",
        interval: "PT1H",
      },
    ]);
    expect(reader.get(id("chat"), "5m")?.points).toHaveLength((7 * DAY) / (5 * MIN));
  });

  it("reads only complete buckets: those ending 10 minutes or more before now, over the days asked for", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    const now = T0 + 7 * MIN; // 09:07 → the newest complete 5-minute bucket ends at 08:55
    reader.want([target("chat", { days: 7 })], now);
    await reader.refresh(now);
    const end = Date.parse("2025-03-03T08:55:00Z");
    const h = reader.get(id("chat"), "5m");
    expect(h?.grainSeconds).toBe(300);
    expect(h?.readAtMs).toBe(now);
    expect(h?.points.length).toBe((7 * DAY) / (5 * MIN));
    expect(h?.points[0]?.timeMs).toBe(end - 7 * DAY);
    expect(h?.points.at(-1)?.timeMs).toBe(end - 5 * MIN);
    expect(Math.max(...monitor.calls.map((c) => c.query.end.getTime()))).toBe(end);
  });

  it("maps each bucket: peak connections; their quota utilization; inbound + outbound Total ÷ grain seconds; unknown stays null", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    const end = T0 - 10 * MIN - ((T0 - 10 * MIN) % HOUR); // 08:00
    const idle = end - 2 * HOUR;
    const unknown = end - 3 * HOUR;
    monitor.idleAt.add(idle);
    monitor.nullAt.add(unknown);
    reader.want([target("chat", { grain: "1h" })], T0);
    await reader.refresh(T0);
    const points = reader.get(id("chat"), "1h")?.points ?? [];
    const at = (t: number) => points.find((p) => p.timeMs === t);
    const t = end - HOUR;
    expect(at(t)).toEqual({
      timeMs: t,
      connections: demandOf(id("chat"), t),
      quotaPercent: demandOf(id("chat"), t) / 20,
      bytesPerSecond: demandOf(id("chat"), t) + 2,
    });
    // Traffic without a value (a point with only its timestamp, or none) next to a known
    // connection count of the other query: nothing was counted.
    expect(at(idle)).toEqual({
      timeMs: idle,
      connections: demandOf(id("chat"), idle),
      quotaPercent: demandOf(id("chat"), idle) / 20,
      bytesPerSecond: 0,
    });
    // No connection count, no utilization and no traffic value: unknown, not zero.
    expect(at(unknown)?.connections).toBeNull();
    expect(at(unknown)?.quotaPercent).toBeNull();
  });

  it("batches 120 resources of one region in calls of 50, 50 and 20; another region and subscription apart", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    const many = Array.from({ length: 120 }, (_, i) => target(`hub-${i}`, { grain: "1h" }));
    reader.want(
      [
        ...many,
        target("east", { region: "eastus", grain: "1h" }),
        target("other", { resourceId: id("other", S2), grain: "1h" }),
      ],
      T0,
    );
    const report = await reader.refresh(T0);
    // Two queries (Maximum, Total) per batch.
    expect(monitor.calls.map((c) => c.batch.resourceIds.length)).toEqual([
      50, 50, 50, 50, 20, 20, 1, 1, 1, 1,
    ]);
    expect(report.calls).toBe(10);
    expect(report.reads.filter((r) => r.result === "success" && r.kind === "full")).toHaveLength(122);
  });

  it("cuts a long first read into calls of at most 2,016 buckets per series", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    reader.want([target("aaa", { days: 14 }), target("bbb", { days: 28, grain: "1h" })], T0);
    await reader.refresh(T0);
    const fiveMinute = monitor.calls.filter((c) => c.query.interval === "PT5M");
    const hourly = monitor.calls.filter((c) => c.query.interval === "PT1H");
    expect(fiveMinute).toHaveLength(4); // 14 days × 288 = 4,032 buckets: 2 spans × 2 queries
    expect(hourly).toHaveLength(2); // 28 days × 24 = 672 buckets: 1 span × 2 queries
    for (const c of fiveMinute) {
      expect((c.query.end.getTime() - c.query.start.getTime()) / (5 * MIN)).toBeLessThanOrEqual(2_016);
    }
    expect(reader.get(id("aaa"), "5m")?.points).toHaveLength(4_032);
  });
});

describe("HistoryReader: cache and refresh", () => {
  it("reads in full once, then once an hour, only the buckets since the last read", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    const start = T0 + 20 * MIN; // 09:20
    reader.want([target("chat")], start);
    await reader.refresh(start);
    expect(monitor.calls).toHaveLength(2); // 7 days at 5 min: 2,016 buckets, one span, two queries
    const first = reader.get(id("chat"), "5m");
    // Every cycle of the hour asks again; nothing is read until the next period (10:10).
    for (let t = start + 30_000; t < T0 + HOUR + 10 * MIN; t += 30_000) {
      reader.want([target("chat")], t);
      expect(reader.due(t)).toBe(false);
      expect((await reader.refresh(t)).calls).toBe(0);
    }
    const next = T0 + HOUR + 10 * MIN;
    reader.want([target("chat")], next);
    expect(reader.due(next)).toBe(true);
    await reader.refresh(next);
    expect(monitor.calls).toHaveLength(4);
    const incremental = monitor.calls[2]?.query as BatchQuery;
    expect(incremental.start.toISOString()).toBe("2025-03-03T09:10:00.000Z");
    expect(incremental.end.toISOString()).toBe("2025-03-03T10:00:00.000Z");
    const second = reader.get(id("chat"), "5m");
    expect(second?.readAtMs).toBe(next);
    // The window slid by 50 minutes: 10 buckets in, 10 out; the old points are reused.
    expect(second?.points).toHaveLength(first?.points.length ?? 0);
    expect(second?.points[0]?.timeMs).toBe((first?.points[0]?.timeMs ?? 0) + 50 * MIN);
    expect(second?.points[0]).toBe(first?.points[10]);
    expect(second?.points.at(-1)?.timeMs).toBe(Date.parse("2025-03-03T09:55:00Z"));
  });

  it("makes at most one getBatch call per 50 policies and aggregation per hour at steady state (1,000 policies, 24 hours)", {
    timeout: 30_000,
  }, async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    // 1,000 policies in two regions; they come in over the first hour (100 every 6 minutes), and
    // each cycle (every 30 s) only a third of them is due, as policies poll on their own grids.
    const targets = Array.from({ length: 1_000 }, (_, i) =>
      target(`hub-${i}`, { region: i % 2 === 0 ? "westeurope" : "eastus", grain: "1h" }),
    );
    const callsPerHour = new Map<number, number>();
    let cycle = 0;
    for (let t = T0; t < T0 + 24 * HOUR; t += 30_000, cycle++) {
      const known = Math.min(targets.length, 100 * (1 + Math.floor((t - T0) / (6 * MIN))));
      reader.want(
        targets.slice(0, known).filter((_, i) => i % 3 === cycle % 3),
        t,
      );
      if (!reader.due(t)) continue;
      const before = monitor.calls.length;
      await reader.refresh(t);
      const hour = Math.floor((t - T0) / HOUR);
      callsPerHour.set(hour, (callsPerHour.get(hour) ?? 0) + monitor.calls.length - before);
    }
    const steady = [...callsPerHour.entries()].filter(([hour]) => hour >= 2).map(([, n]) => n);
    // 500 resources per region: 10 batches each, two queries (Maximum, Total) per batch: 40 calls.
    expect(steady.length).toBe(22);
    expect(Math.max(...steady)).toBe(40);
    expect(Math.min(...steady)).toBe(40);
    expect(reader.size).toBe(1_000);
    expect(reader.get(id("hub-999"), "1h")?.points).toHaveLength(7 * 24);
    expect(reader.get(id("hub-999"), "1h")?.readAtMs).toBe(Date.parse("2025-03-04T08:10:00Z"));
  });

  it("reads in full again when a policy asks for more days", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    reader.want([target("chat", { grain: "1h", days: 7 })], T0);
    await reader.refresh(T0);
    reader.want([target("chat", { grain: "1h", days: 14 })], T0 + MIN);
    expect(reader.due(T0 + MIN)).toBe(true);
    await reader.refresh(T0 + MIN);
    expect(reader.get(id("chat"), "1h")?.points).toHaveLength(14 * 24);
  });

  it("drops a resource nobody asked for in 3 hours, and one that is forgotten", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    reader.want([target("aaa", { grain: "1h" }), target("bbb", { grain: "1h" })], T0);
    await reader.refresh(T0);
    reader.forget(id("bbb").toUpperCase());
    expect(reader.get(id("bbb"), "1h")).toBeUndefined();
    expect(reader.get(id("aaa"), "1h")?.points).toHaveLength(7 * 24);
    await reader.refresh(T0 + 3 * HOUR + MIN);
    expect(reader.size).toBe(0);
  });
});

describe("HistoryReader: failures", () => {
  it("confines a failed call to the resources of its batch, as an error with no points", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    const many = Array.from({ length: 60 }, (_, i) => target(`hub-${i}`, { grain: "1h" }));
    monitor.failFor.add(id("hub-0"));
    reader.want(many, T0);
    const report = await reader.refresh(T0);
    expect(report.failedCalls).toBe(2);
    const failed = many.slice(0, 50).map((t) => reader.get(t.resourceId, "1h"));
    const served = many.slice(50).map((t) => reader.get(t.resourceId, "1h"));
    for (const h of failed) {
      expect(h?.error).toBe("service unavailable");
      expect(h?.points).toEqual([]);
    }
    for (const h of served) {
      expect(h?.error).toBeUndefined();
      expect(h?.points).toHaveLength(7 * 24);
    }
    expect(report.reads.filter((r) => r.result === "failure")).toHaveLength(50);
  });

  it.each(["Maximum", "Total"])(
    "a span whose %s query failed is a failure of its resources, not a history with holes",
    async (aggregation) => {
      const monitor = new FakeMonitor();
      const reader = new HistoryReader(monitor);
      monitor.failFor.add(id("chat"));
      monitor.failAggregation = aggregation;
      reader.want([target("chat", { grain: "1h" })], T0);
      const report = await reader.refresh(T0);
      expect(report).toMatchObject({ calls: 2, failedCalls: 1 });
      expect(reader.get(id("chat"), "1h")).toMatchObject({ error: "service unavailable", points: [] });
      // Retried whole: both queries again, and then the history is complete.
      monitor.failFor.clear();
      reader.want([target("chat", { grain: "1h" })], T0 + 5 * MIN);
      expect((await reader.refresh(T0 + 5 * MIN)).calls).toBe(2);
      const h = reader.get(id("chat"), "1h");
      expect(h?.error).toBeUndefined();
      expect(h?.points).toHaveLength(7 * 24);
      expect(h?.points.every((p) => p.connections !== null && p.bytesPerSecond !== null)).toBe(true);
    },
  );

  it("fails one resource alone when its answer is not at the grain asked for", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    monitor.wrongGrain.add(id("odd"));
    reader.want([target("odd", { grain: "1h" }), target("fine", { grain: "1h" })], T0);
    await reader.refresh(T0);
    expect(reader.get(id("odd"), "1h")?.error).toMatch(/^history of \/subscriptions\/.*\/odd: interval PT1M/);
    expect(reader.get(id("fine"), "1h")?.points).toHaveLength(7 * 24);
  });

  it("keeps serving the last history through failed refreshes for 3 hours, retrying after 5, 10, 20 … minutes", async () => {
    const monitor = new FakeMonitor();
    const reader = new HistoryReader(monitor);
    reader.want([target("chat", { grain: "1h" })], T0);
    await reader.refresh(T0);
    const good = reader.get(id("chat"), "1h");
    monitor.failFor.add(id("chat"));
    const attempts: number[] = [];
    for (let t = T0 + MIN; t <= T0 + 4 * HOUR; t += MIN) {
      reader.want([target("chat", { grain: "1h" })], t);
      if (!reader.due(t)) continue;
      await reader.refresh(t);
      attempts.push((t - T0) / MIN);
      const h = reader.get(id("chat"), "1h");
      if (t - T0 <= 3 * HOUR) expect(h).toBe(good);
      else expect(h).toMatchObject({ error: "service unavailable", points: [] });
    }
    // The next period begins at 09:10; then retries after 5, 10, 20, 40, 60, 60 … minutes.
    expect(attempts.slice(0, 7)).toEqual([10, 15, 25, 45, 85, 145, 205]);
    monitor.failFor.clear();
    const t = T0 + 5 * HOUR;
    reader.want([target("chat", { grain: "1h" })], t);
    await reader.refresh(t);
    expect(reader.get(id("chat"), "1h")?.error).toBeUndefined();
    expect(reader.get(id("chat"), "1h")?.points).toHaveLength(7 * 24);
  });

  it("reports a call refused by the throttle gate as failed, without counting a request", async () => {
    const reader = new HistoryReader({
      async queryBatch(batch) {
        return {
          error: new ThrottledError("throttled", {
            operation: "metrics.queryResources(history)",
            scope: batch.scope,
            retryAfterMs: 1_000,
            notBefore: new Date(T0 + 1_000),
            fromGate: true,
          }),
          sent: false,
        };
      },
    });
    reader.want([target("chat")], T0);
    const report = await reader.refresh(T0);
    expect(report).toMatchObject({ calls: 0, failedCalls: 2 }); // both queries refused by the gate
    expect(reader.get(id("chat"), "5m")?.error).toBe("throttled");
  });
});
