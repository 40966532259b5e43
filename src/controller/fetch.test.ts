/**
 * The poll cycle's demand history: only seasonal policies register one, each gets the history
 * last read, and the refresh runs in the background — the cycle (and its one-minute metrics) never
 * waits for it, and its failure never fails the cycle. Also: a metrics query that failed beside one
 * that answered, a read Azure refuses durably, and the sizing of the metrics read.
 */
import { describe, expect, it } from "vitest";
import type { CapacityPolicy } from "../api/index.js";
import { durableFailure } from "../autoscale/failures.js";
import type { AzureAdapters, BatchAnswer, BatchQuerier, MetricsBatch } from "../azure/index.js";
import { HistoryReader, RefusedError, TransientError } from "../azure/index.js";
import { DEFAULT_LADDERS } from "../capacity/skus.js";
import { CycleFetcher, type CycleTarget, metricsReadTimes, metricsSpan, seasonalHistory } from "./fetch.js";
import { cycleTarget, instanceState, resourceIdOf, T0 } from "./testing.js";

const id = resourceIdOf;
const target = (name: string, seasonal?: CycleTarget["seasonal"]) =>
  cycleTarget(name, seasonal ? { seasonal } : {});

/** getBatch for history that answers only when `release` is called (or fails with `fail`). */
class GatedMonitor implements BatchQuerier {
  readonly batches: MetricsBatch[] = [];
  fail = false;
  #waiting: (() => void)[] = [];

  release(): void {
    for (const go of this.#waiting.splice(0)) go();
  }

  async queryBatch(batch: MetricsBatch): Promise<BatchAnswer> {
    this.batches.push(batch);
    await new Promise<void>((go) => this.#waiting.push(go));
    if (this.fail) return { error: new TransientError("monitor down", { operation: "test" }), sent: true };
    return { results: [], sent: true };
  }
}

function adapters(history: HistoryReader, metricsCalls: { n: number }): AzureAdapters {
  return {
    instances: {
      listBySubscription: async () => [instanceState(id("chat")), instanceState(id("plain"))],
      listSkus: async () => ({ ladders: DEFAULT_LADDERS, fromService: [], skus: [] }),
    },
    metrics: {
      read: async () => {
        metricsCalls.n++;
        return {
          samples: new Map([
            [id("chat"), []],
            [id("plain"), []],
          ]),
          failures: [],
          calls: 1,
        };
      },
    },
    autoscaleSettings: { findFor: async () => new Map() },
    history,
  } as unknown as AzureAdapters;
}

/** A promise opened by hand: `opened` resolves once `release` is called. */
function gate(): { opened: Promise<void>; release: () => void } {
  let release: () => void = () => {};
  const opened = new Promise<void>((go) => {
    release = go;
  });
  return { opened, release };
}

/** Reads "chat" and "plain", forgets "chat" while the read waits on a gate, then lets the read end. */
async function forgetMidCycle(fetcher: CycleFetcher, release: () => void): Promise<void> {
  const cycle = fetcher.read([target("chat"), target("plain")]);
  await new Promise((go) => setTimeout(go, 10));
  fetcher.forget(id("chat"));
  release();
  await cycle;
}

describe("CycleFetcher: native autoscale settings", () => {
  it("does not cache the settings of a resource forgotten while their read ran", async () => {
    const { opened: answered, release } = gate();
    const base = adapters(new HistoryReader(new GatedMonitor()), { n: 0 });
    const fetcher = new CycleFetcher(
      {
        ...base,
        autoscaleSettings: {
          findFor: async (ids: readonly string[]) => {
            await answered;
            return new Map(ids.map((i) => [i, []]));
          },
        },
      } as unknown as AzureAdapters,
      { now: () => T0 },
    );
    await forgetMidCycle(fetcher, release);
    expect(fetcher.cachedResources).toBe(1);
    await fetcher.read([target("plain")]);
    expect(fetcher.cachedResources).toBe(1);
  });
  it("caches neither settings nor unit ladders for a resource forgotten before its cycle reached them", async () => {
    const { opened: listed, release } = gate();
    const skuReads: string[] = [];
    const base = adapters(new HistoryReader(new GatedMonitor()), { n: 0 });
    const fetcher = new CycleFetcher(
      {
        ...base,
        instances: {
          ...base.instances,
          // The cycle waits on the instance list: the forget lands before settings and ladders are read.
          listBySubscription: async () => {
            await listed;
            return [instanceState(id("chat")), instanceState(id("plain"))];
          },
          listSkus: async (resourceId: string) => {
            skuReads.push(resourceId);
            return { ladders: DEFAULT_LADDERS, fromService: [], skus: [] };
          },
        },
        autoscaleSettings: { findFor: async (ids: readonly string[]) => new Map(ids.map((i) => [i, []])) },
      } as unknown as AzureAdapters,
      { now: () => T0 },
    );
    await forgetMidCycle(fetcher, release);
    await fetcher.laddersSettled();
    expect(fetcher.cachedResources).toBe(1);
    expect(skuReads).toEqual([id("plain")]);

    // Targeted again, it is read afresh and cached.
    await fetcher.read([target("chat"), target("plain")]);
    await fetcher.laddersSettled();
    expect(fetcher.cachedResources).toBe(2);
    expect(skuReads).toEqual([id("plain"), id("chat")]);
  });
});

describe("CycleFetcher: demand history", () => {
  it("registers only seasonal policies, answers without waiting for the history, then hands it out", async () => {
    const monitor = new GatedMonitor();
    const history = new HistoryReader(monitor);
    const metricsCalls = { n: 0 };
    const outcomes: unknown[] = [];
    let now = T0;
    const fetcher = new CycleFetcher(adapters(history, metricsCalls), {
      now: () => now,
      onHistoryRefresh: (o) => outcomes.push(o),
    });
    const targets = [target("chat", { days: 7, grain: "1h" }), target("plain")];

    // The history read hangs: the cycle still ends, with metrics and without a history.
    const first = await fetcher.read(targets);
    expect(metricsCalls.n).toBe(1);
    expect(first.get("ns/chat")?.samples).toEqual([]);
    expect(first.get("ns/chat")?.demandHistory).toBeUndefined();
    expect(history.size).toBe(1);
    // Two queries of one batch (Maximum for the connections, Total for the traffic).
    expect(monitor.batches.map((b) => b.resourceIds)).toEqual([[id("chat")], [id("chat")]]);

    // A second cycle while the refresh runs starts no other.
    now += 30_000;
    await fetcher.read(targets);
    expect(monitor.batches).toHaveLength(2);
    expect(metricsCalls.n).toBe(2);

    monitor.release();
    await fetcher.historySettled();
    expect(outcomes).toEqual([{ report: expect.objectContaining({ calls: 2, failedCalls: 0 }) }]);
    now += 30_000;
    const third = await fetcher.read(targets);
    expect(third.get("ns/chat")?.demandHistory).toMatchObject({ grainSeconds: 3_600, points: [] });
    expect(third.get("ns/plain")?.demandHistory).toBeUndefined();
  });

  it("keeps a failed history read out of the cycle: the policy gets the error, its metrics are read", async () => {
    const monitor = new GatedMonitor();
    monitor.fail = true;
    const history = new HistoryReader(monitor);
    const metricsCalls = { n: 0 };
    let now = T0;
    const fetcher = new CycleFetcher(adapters(history, metricsCalls), { now: () => now });
    const targets = [target("chat", { days: 7, grain: "5m" })];
    await fetcher.read(targets);
    monitor.release();
    await fetcher.historySettled();
    now += 30_000;
    const reading = (await fetcher.read(targets)).get("ns/chat");
    expect(reading?.metricsError).toBeUndefined();
    expect(reading?.samples).toEqual([]);
    expect(reading?.demandHistory).toMatchObject({ error: "monitor down", points: [] });
  });

  it("forgets the history of a deleted policy's instance", async () => {
    const monitor = new GatedMonitor();
    const history = new HistoryReader(monitor);
    const fetcher = new CycleFetcher(adapters(history, { n: 0 }), { now: () => T0 });
    await fetcher.read([target("chat", { days: 7, grain: "1h" })]);
    monitor.release();
    await fetcher.historySettled();
    fetcher.forget(id("chat"));
    expect(history.size).toBe(0);
  });
});

describe("CycleFetcher: one metrics query failed, the other answered", () => {
  it("keeps the samples and names the failed query's fields; a policy whose every query failed gets the error", async () => {
    const history = new HistoryReader(new GatedMonitor());
    const base = adapters(history, { n: 0 });
    const error = new TransientError("service error (503)", { operation: "metrics.queryResources" });
    const batch = (ids: string[]): MetricsBatch => ({
      scope: { subscriptionId: "11111111-1111-1111-1111-111111111111", region: "westeurope" },
      service: "SignalR",
      resourceIds: ids,
    });
    const counters = ["messagesPerSecond", "inboundBytesPerSecond", "outboundBytesPerSecond"] as const;
    const gauges = ["serverLoadPercent", "connectionQuotaUtilizationPercent", "connections"] as const;
    const azure = {
      ...base,
      metrics: {
        read: async () => ({
          samples: new Map([[id("chat"), []]]),
          failures: [
            {
              batch: batch([id("chat"), id("plain")]),
              part: "metrics",
              aggregation: "Total",
              fields: counters,
              error,
            },
            { batch: batch([id("plain")]), part: "metrics", aggregation: "Maximum", fields: gauges, error },
          ],
          calls: 2,
        }),
      },
    } as unknown as AzureAdapters;
    const out = await new CycleFetcher(azure, { now: () => T0 }).read([target("chat"), target("plain")]);
    const chat = out.get("ns/chat");
    expect(chat?.samples).toEqual([]);
    expect(chat?.metricsError).toBeUndefined();
    expect(chat?.metricsPartial).toEqual([
      { kind: "Network", message: "service error (503)", fields: counters },
    ]);
    const plain = out.get("ns/plain");
    expect(plain?.samples).toBeUndefined();
    expect(plain?.metricsError).toMatchObject({ kind: "Network", message: "service error (503)" });
  });
});

describe("CycleFetcher: a read Azure refuses durably", () => {
  it("is a durable failure kind, not a transient one, whatever the refusal (quota, policy, lock)", async () => {
    const history = new HistoryReader(new GatedMonitor());
    const base = adapters(history, { n: 0 });
    const refused = new RefusedError(
      "instances.get: denied by an Azure Policy (403 RequestDisallowedByPolicy: Resource 'chat' was disallowed by policy.)",
      { operation: "instances.get", status: 403, code: "RequestDisallowedByPolicy", refusedBy: "Policy" },
    );
    const azure = {
      ...base,
      instances: {
        ...base.instances,
        listBySubscription: async () => {
          throw refused;
        },
      },
    } as unknown as AzureAdapters;
    const out = await new CycleFetcher(azure, { now: () => T0 }).read([target("chat")]);
    expect(out.get("ns/chat")?.instanceError).toMatchObject({
      kind: "InvalidRequest",
      read: "instance",
      message: refused.message,
    });
    expect(durableFailure(out.get("ns/chat")?.instanceError)?.reason).toBe("InvalidRequest");
  });
});

describe("seasonalHistory", () => {
  const policy = (anticipation: unknown) => ({ spec: { anticipation } }) as unknown as CapacityPolicy;

  it("is the seasonal forecast's days and grain, with the defaults of the API", () => {
    expect(seasonalHistory(policy({ mode: "Enabled", seasonal: { historyDays: 21, grain: "1h" } }))).toEqual({
      days: 21,
      grain: "1h",
    });
    expect(seasonalHistory(policy({ seasonal: {} }))).toEqual({ days: 14, grain: "5m" });
    expect(seasonalHistory(policy({ mode: "ForecastOnly", seasonal: { historyDays: 90 } }))).toEqual({
      days: 28,
      grain: "5m",
    });
  });

  it("is nothing without a seasonal forecast, with anticipation Off, or at a grain it cannot read", () => {
    expect(seasonalHistory(policy(undefined))).toBeUndefined();
    expect(seasonalHistory(policy({ mode: "Enabled" }))).toBeUndefined();
    expect(seasonalHistory(policy({ mode: "Off", seasonal: { historyDays: 14 } }))).toBeUndefined();
    expect(seasonalHistory(policy({ seasonal: { grain: "1d" } }))).toBeUndefined();
  });
});

describe("metricsReadTimes and metricsSpan: the one sizing of a metrics read (poll cycle and check)", () => {
  const policy = (metrics: unknown, status?: unknown) =>
    ({
      spec: { metrics, behavior: { settleSeconds: 0 } },
      ...(status ? { status } : {}),
    }) as unknown as CapacityPolicy;

  it("is the window plus the ingestion delay, or the max sample age when longer; the defaults without a readable spec", () => {
    expect(metricsReadTimes(policy({ window: "10m", ingestionDelay: "3m", maxSampleAge: "10m" }))).toEqual({
      windowSeconds: 600,
      ingestionDelaySeconds: 180,
      lookbackMs: 780_000,
    });
    expect(
      metricsReadTimes(policy({ window: "1m", ingestionDelay: "2m", maxSampleAge: "15m" })).lookbackMs,
    ).toBe(900_000);
    const defaults = { windowSeconds: 300, ingestionDelaySeconds: 180, lookbackMs: 600_000 };
    expect(metricsReadTimes(undefined)).toEqual(defaults);
    expect(metricsReadTimes({ spec: {} } as unknown as CapacityPolicy)).toEqual(defaults);
  });

  it("takes a longer ingestion delay observed in the status", () => {
    const observed = policy(
      { window: "5m", ingestionDelay: "3m" },
      { ingestion: { observedDelaySeconds: 290, observedAt: "2025-03-03T08:59:00Z" } },
    );
    expect(metricsReadTimes(observed).ingestionDelaySeconds).toBe(300);
  });

  it("ends at the next whole minute and starts one minute more than the look-back before it", () => {
    expect(metricsSpan(T0 + 20_000, 600_000)).toEqual({
      start: new Date(T0 + 60_000 - 660_000),
      end: new Date(T0 + 60_000),
    });
    expect(metricsSpan(T0, 600_000).end).toEqual(new Date(T0));
  });
});
