/**
 * The simulation engine: replays demand minute by minute on a virtual clock against the traffic
 * model (`traffic/traffic.ts`), for one strategy at a time. Pure: time is the minute index,
 * randomness is the seeded noise of `traffic/noise.ts` (the same seed gives the same run, and
 * every strategy sees the same noise at the same minute).
 *
 * Per minute `m` (virtual time `t = start + m · 1 min`):
 * 1. A scale in flight whose completion time has come completes: the capacity changes now.
 * 2. Every `pollMinutes` minutes the strategy is polled at `t` with the metric buckets it can see
 *    then (see {@link MetricHistory}); it answers with the capacity it wants or nothing. A wanted
 *    capacity different from the current one starts a scale, unless one is in flight (no second
 *    update while the first runs, like ARM's 409). A scale started at `t` completes at
 *    `t + scaleDuration`; until then the instance keeps its old capacity. With a zero duration
 *    the change applies at once.
 * 3. The minute's traffic at the current capacity: `trafficAt` with the minute's demand (the
 *    demand at the minute's middle, rounded, as the emulator does) and noise. The result is
 *    recorded (units, SKU, true load, refused connections, throttled traffic) and the minute's
 *    metric bucket appended to the history.
 *
 * Polls land on whole minutes. Azure Monitor's grain is one minute, so a second poll within the
 * same minute (a policy polling every 30 s) would see the same buckets; the engine polls at most
 * once a minute.
 *
 * Cost: O(1) per minute plus the strategy's own work; a strategy only reads the few buckets of
 * its window.
 */
import type { ReplicaGroupObservation } from "../autoscale/failover.js";
import type { MetricSample } from "../autoscale/samples.js";
import { SCALABLE_SKUS, type ScalableSku, type ServiceKind, type SkuUnits } from "../capacity/index.js";
import {
  changeReconnects,
  type DisconnectionModel,
  type EmulatedMetric,
  findEmulatedMetric,
  minuteAggregates,
  noise,
  type TrafficMinute,
  trafficAt,
  type WorkloadMix,
} from "../traffic/index.js";
import { AppServerHistory, DEFAULT_SCRAPE_LAG_MS } from "./app-servers.js";

export const MINUTE_MS = 60_000;

/** The per-minute record of one strategy's run. */
export interface StrategyRun {
  /** Short name: `policy`, `native-p1`, `native-p2`, `static`, `oracle`; a sweep's `v01`, `v02` … */
  name: string;
  /** What it is, for tables and charts. */
  description: string;
  /** Index into {@link SCALABLE_SKUS} per minute. */
  sku: Uint8Array;
  /** Units per minute. */
  units: Uint16Array;
  /** True load (before noise) per minute, % — above 100 when traffic exceeds a bandwidth limit. */
  loadPercent: Float32Array;
  /** Client connections refused per minute (over the connection quota). */
  refused: Float64Array;
  /** 1 when traffic wanted more than a bandwidth dimension carries (messages throttled). */
  throttled: Uint8Array;
  /** Capacity changes: when each started and completed, ms, and from/to. */
  operations: ScaleOperation[];
}

/** One capacity change. */
export interface ScaleOperation {
  startedMs: number;
  completedMs: number;
  from: SkuUnits;
  to: SkuUnits;
  /**
   * Client connections the change disconnected when it completed (`traffic/disconnections.ts`:
   * the removed units' share, or everyone in the pessimistic model); 0 or absent while it is in
   * flight.
   */
  disconnected?: number;
}

/** Allocates an empty run of `minutes` minutes. */
export function emptyRun(name: string, description: string, minutes: number): StrategyRun {
  return {
    name,
    description,
    sku: new Uint8Array(minutes),
    units: new Uint16Array(minutes),
    loadPercent: new Float32Array(minutes),
    refused: new Float64Array(minutes),
    throttled: new Uint8Array(minutes),
    operations: [],
  };
}

/** Records one minute's capacity and traffic into a run. */
export function recordMinute(run: StrategyRun, m: number, size: SkuUnits, t: TrafficMinute): void {
  run.sku[m] = SCALABLE_SKUS.indexOf(size.sku);
  run.units[m] = size.units;
  run.loadPercent[m] = t.utilization * 100;
  run.refused[m] = t.refusedConnections;
  run.throttled[m] = t.utilization > 1 && t.limitedBy !== "connections" ? 1 : 0;
}

/** The capacity of a run at minute `m`. */
export function sizeAt(run: StrategyRun, m: number): SkuUnits {
  return { sku: SCALABLE_SKUS[run.sku[m] ?? 0] as ScalableSku, units: run.units[m] ?? 0 };
}

/**
 * One-minute metric buckets of one simulated instance, as Azure Monitor serves them, and which of
 * them a caller can see at a time.
 *
 * Values follow the emulator's metric catalog (`emulator/monitor-catalog.ts`): gauges (ServerLoad,
 * ConnectionQuotaUtilization, connection count) have an average (the minute's value) and a
 * maximum (a little above it); totals (MessageCount, InboundTraffic, OutboundTraffic) are rates.
 *
 * Ingestion (as the emulator's `bucket`): the bucket of minute `k` (start `t_k`) is
 * `clamp((now − delay − t_k) / 1 min, 0, 1)` ingested — nothing before `t_k + delay`, complete
 * from `t_k + 1 min + delay`. An unseen bucket is absent (unknown, never zero); a partly ingested
 * one has its totals scaled down, its gauges as they are.
 */
export class MetricHistory {
  readonly startMs: number;
  readonly delayMs: number;
  readonly service: ServiceKind;
  #length = 0;
  readonly #loadAvg: Float64Array;
  readonly #loadMax: Float64Array;
  readonly #quotaAvg: Float64Array;
  readonly #quotaMax: Float64Array;
  readonly #connections: Float64Array;
  readonly #messages: Float64Array;
  readonly #inbound: Float64Array;
  readonly #outbound: Float64Array;
  readonly #metrics: {
    load: EmulatedMetric;
    quota: EmulatedMetric;
    connections: EmulatedMetric;
    messages: EmulatedMetric | undefined;
  };

  constructor(service: ServiceKind, startMs: number, minutes: number, delayMs: number) {
    this.service = service;
    this.startMs = startMs;
    this.delayMs = delayMs;
    this.#loadAvg = new Float64Array(minutes);
    this.#loadMax = new Float64Array(minutes);
    this.#quotaAvg = new Float64Array(minutes);
    this.#quotaMax = new Float64Array(minutes);
    this.#connections = new Float64Array(minutes);
    this.#messages = new Float64Array(minutes);
    this.#inbound = new Float64Array(minutes);
    this.#outbound = new Float64Array(minutes);
    const metric = (name: string) => {
      const found = findEmulatedMetric(service, name);
      if (!found) throw new Error(`the metric catalog has no ${service} metric ${name}`);
      return found;
    };
    this.#metrics = {
      load: metric("ServerLoad"),
      quota: metric("ConnectionQuotaUtilization"),
      connections: metric(service === "SignalR" ? "ConnectionCount" : "TotalConnectionCount"),
      messages: service === "SignalR" ? metric("MessageCount") : undefined,
    };
  }

  /** Buckets recorded so far. */
  get length(): number {
    return this.#length;
  }

  /** Appends the next minute's bucket; `spread` in [−1, 1] is the within-minute spread. */
  push(t: TrafficMinute, spread: number): void {
    const k = this.#length++;
    const m = this.#metrics;
    const load = minuteAggregates(m.load, t, spread, 1);
    const quota = minuteAggregates(m.quota, t, spread, 1);
    this.#loadAvg[k] = load.average;
    this.#loadMax[k] = load.maximum;
    this.#quotaAvg[k] = quota.average;
    this.#quotaMax[k] = quota.maximum;
    this.#connections[k] = minuteAggregates(m.connections, t, spread, 1).maximum;
    this.#messages[k] = m.messages ? m.messages.value(t) : 0;
    this.#inbound[k] = t.inboundBytesPerSecond;
    this.#outbound[k] = t.outboundBytesPerSecond;
  }

  /** Peak connections of minute `k` (its connection count's Maximum), connections. */
  peakConnections(k: number): number {
    return this.#connections[k] as number;
  }

  /** Highest connection quota utilization of minute `k` (ConnectionQuotaUtilization's Maximum), %. */
  peakQuotaPercent(k: number): number {
    return this.#quotaMax[k] as number;
  }

  /** Inbound + outbound traffic of minute `k`, bytes/s. */
  bytesPerSecond(k: number): number {
    return (this.#inbound[k] as number) + (this.#outbound[k] as number);
  }

  /** Share of bucket `k` ingested at `nowMs`, 0–1 (0 also for buckets not recorded yet). */
  ingested(k: number, nowMs: number): number {
    if (k < 0 || k >= this.#length) return 0;
    const start = this.startMs + k * MINUTE_MS;
    return Math.min(1, Math.max(0, (nowMs - this.delayMs - start) / MINUTE_MS));
  }

  /** Index of the bucket containing `timeMs` (may be out of range). */
  minuteOf(timeMs: number): number {
    return Math.floor((timeMs - this.startMs) / MINUTE_MS);
  }

  /**
   * The buckets starting in `[fromMs, nowMs)` that are (at least partly) ingested at `nowMs`, as
   * the Azure adapter returns them: ServerLoad, ConnectionQuotaUtilization and the connection
   * count as their Maximum; MessageCount and traffic as Total ÷ 60 (per second; null for
   * MessageCount on Web PubSub).
   */
  samples(fromMs: number, nowMs: number): MetricSample[] {
    const out: MetricSample[] = [];
    const first = Math.max(0, Math.ceil((fromMs - this.startMs) / MINUTE_MS));
    const last = Math.min(this.#length - 1, this.minuteOf(nowMs - 1));
    for (let k = first; k <= last; k++) {
      const f = this.ingested(k, nowMs);
      if (f <= 0) continue;
      out.push({
        time: new Date(this.startMs + k * MINUTE_MS),
        serverLoadPercent: this.#loadMax[k] as number,
        connectionQuotaUtilizationPercent: this.#quotaMax[k] as number,
        connections: this.#connections[k] as number,
        messagesPerSecond: this.#metrics.messages ? (this.#messages[k] as number) * f : null,
        inboundBytesPerSecond: (this.#inbound[k] as number) * f,
        outboundBytesPerSecond: (this.#outbound[k] as number) * f,
      });
    }
    return out;
  }

  /**
   * The mean of a gauge's one-minute averages over the buckets starting in `[fromMs, nowMs)` that
   * are ingested at `nowMs` (Azure autoscale's `statistic: Average`, `timeAggregation: Average`);
   * `undefined` when none is.
   */
  average(
    metric: NativeMetricName,
    fromMs: number,
    nowMs: number,
  ): { value: number; buckets: number } | undefined {
    const series = metric === "ServerLoad" ? this.#loadAvg : this.#quotaAvg;
    const first = Math.max(0, Math.ceil((fromMs - this.startMs) / MINUTE_MS));
    const last = Math.min(this.#length - 1, this.minuteOf(nowMs - 1));
    let sum = 0;
    let n = 0;
    for (let k = first; k <= last; k++) {
      if (this.ingested(k, nowMs) <= 0) continue;
      sum += series[k] as number;
      n++;
    }
    return n === 0 ? undefined : { value: sum / n, buckets: n };
  }
}

/** The metrics Azure's native autoscale can scale SignalR / Web PubSub on. */
export type NativeMetricName = "ServerLoad" | "ConnectionQuotaUtilization";

/** What a strategy sees when it is polled. */
export interface PollContext {
  /** Virtual time of the poll, ms. */
  nowMs: number;
  /** Minute index of the poll. */
  minute: number;
  /** The capacity the instance has now (the old one while a scale is in flight). */
  current: SkuUnits;
  /** A scale is in flight: a new one cannot start. */
  scaling: boolean;
  /** The instance's metrics; only buckets ingested by `nowMs` are visible through it. */
  metrics: MetricHistory;
  /** The app servers' metrics as Prometheus serves them (when the setup has arrivals). */
  appServers?: AppServerHistory;
  /** The instance's replica group as the operator reads it then (a replica group's run: replicas.ts). */
  replicaGroup?: ReplicaGroupObservation;
}

/** A way of choosing capacity, run by the engine. */
export interface Strategy {
  readonly name: string;
  readonly description: string;
  /** Capacity at the start of the run. */
  readonly initial: SkuUnits;
  /** Minutes between two polls (≥ 1). */
  readonly pollMinutes: number;
  /** The capacity wanted at this poll, or `undefined` for no change. */
  poll(ctx: PollContext): SkuUnits | undefined;
  /** The engine started a scale the strategy asked for (at `nowMs`). */
  scaleStarted?(nowMs: number, from: SkuUnits, to: SkuUnits): void;
}

/** Everything a run depends on besides the strategy. */
export interface SimulationSetup {
  /** Start of minute 0, ms (a whole minute). */
  startMs: number;
  /** Client connections wanted per minute. */
  demand: Float64Array;
  mix: WorkloadMix;
  /** Time a scale takes, ms. */
  scaleDurationMs: number;
  /** Time before a minute's metrics are fully ingested, ms. */
  metricDelayMs: number;
  /** Noise seed. */
  seed: string;
  /** Relative noise amplitude on server load (default 0.05). */
  noiseAmplitude?: number;
  /**
   * Negotiate arrivals per minute (`traffic/arrivals.ts`), for policies with a leading signal; the
   * app servers' metrics are served only when set.
   */
  arrivals?: Float64Array;
  /** How old the newest scraped app-server sample is at a poll, ms (default 15,000). */
  scrapeLagMs?: number;
  /** Which clients a completed change disconnects (default `RemovedUnits`; `traffic/disconnections.ts`). */
  disconnection?: DisconnectionModel;
}

/** Demand per minute: the value at each minute's middle, rounded, never negative. */
export function demandSeries(fn: (time: Date) => number, startMs: number, minutes: number): Float64Array {
  const out = new Float64Array(minutes);
  for (let m = 0; m < minutes; m++) {
    out[m] = Math.max(0, Math.round(fn(new Date(startMs + m * MINUTE_MS + MINUTE_MS / 2))));
  }
  return out;
}

const sameSize = (a: SkuUnits, b: SkuUnits) => a.sku === b.sku && a.units === b.units;

/**
 * One simulated instance under one strategy, minute by minute (the steps of the module comment):
 * its capacity, the scale in flight, its metrics and its run. {@link simulation} runs one; a
 * replica group (`replicas.ts`) runs several in lockstep, each on its own share of the demand and
 * its own noise `channel`s (`2 · channel` and `2 · channel + 1`; channel 0 is the single instance's).
 */
export class SimulatedInstance {
  readonly strategy: Strategy;
  readonly run: StrategyRun;
  readonly metrics: MetricHistory;
  readonly appServers: AppServerHistory | undefined;
  readonly pollMinutes: number;
  readonly #setup: SimulationSetup;
  readonly #channel: number;
  #current: SkuUnits;
  #inFlight: ScaleOperation | undefined;
  /** A change that completed at this minute, and the clients it had before. */
  #completed: { op: ScaleOperation; connections: number } | undefined;
  #connections = 0;

  constructor(strategy: Strategy, setup: SimulationSetup, channel = 0) {
    const minutes = setup.demand.length;
    this.strategy = strategy;
    this.#setup = setup;
    this.#channel = channel;
    this.run = emptyRun(strategy.name, strategy.description, minutes);
    this.metrics = new MetricHistory(setup.mix.service, setup.startMs, minutes, setup.metricDelayMs);
    this.appServers = setup.arrivals
      ? new AppServerHistory(setup.startMs, setup.arrivals, setup.scrapeLagMs ?? DEFAULT_SCRAPE_LAG_MS)
      : undefined;
    this.pollMinutes = Math.max(1, Math.round(strategy.pollMinutes));
    this.#current = { ...strategy.initial };
  }

  /** The capacity it has now (the old one while a scale is in flight). */
  get current(): SkuUnits {
    return this.#current;
  }

  /** Step 1: a scale in flight whose completion time has come completes. */
  completeDue(nowMs: number): void {
    const op = this.#inFlight;
    if (op && nowMs >= op.completedMs) {
      this.#current = { ...op.to };
      this.#completed = { op, connections: this.#connections };
      this.#inFlight = undefined;
    }
  }

  /** Step 2: polls the strategy at minute `m` (with `extra` in its context) and starts what it wants. */
  poll(m: number, nowMs: number, extra: Partial<PollContext> = {}): void {
    const want = this.strategy.poll({
      nowMs,
      minute: m,
      current: this.#current,
      scaling: this.#inFlight !== undefined,
      metrics: this.metrics,
      ...(this.appServers ? { appServers: this.appServers } : {}),
      ...extra,
    });
    if (!want || this.#inFlight || sameSize(want, this.#current)) return;
    const durationMs = this.#setup.scaleDurationMs;
    const op: ScaleOperation = {
      startedMs: nowMs,
      completedMs: nowMs + durationMs,
      from: { ...this.#current },
      to: { ...want },
      disconnected: 0,
    };
    this.run.operations.push(op);
    this.strategy.scaleStarted?.(nowMs, op.from, op.to);
    if (durationMs <= 0) {
      this.#current = { ...want };
      this.#completed = { op, connections: this.#connections };
    } else this.#inFlight = op;
  }

  /** Step 3: minute `m`'s traffic at the current capacity for `offered` client connections, recorded. */
  serve(m: number, offered: number): TrafficMinute {
    const setup = this.#setup;
    const t = trafficAt({
      mix: setup.mix,
      offeredConnections: offered,
      sku: this.#current.sku,
      units: this.#current.units,
      noise: noise(setup.seed, m, 2 * this.#channel),
      noiseAmplitude: setup.noiseAmplitude ?? 0.05,
    });
    if (this.#completed) {
      const r = completeChange(this.#completed.op, this.#completed.connections, t, setup.disconnection);
      this.appServers?.addNegotiations(m, r.negotiations);
      this.#completed = undefined;
    }
    this.#connections = t.clientConnections;
    recordMinute(this.run, m, this.#current, t);
    this.metrics.push(t, noise(setup.seed, m, 2 * this.#channel + 1));
    this.appServers?.push(Math.max(0, offered - t.refusedConnections));
    return t;
  }
}

/**
 * Runs one strategy over the whole demand (see the module comment), as steps: yields the minutes
 * done every `chunk` minutes (so that a caller can report progress or give way to other work) and
 * returns the run.
 */
export function* simulation(
  strategy: Strategy,
  setup: SimulationSetup,
  chunk = 4096,
): Generator<number, StrategyRun, void> {
  const minutes = setup.demand.length;
  const instance = new SimulatedInstance(strategy, setup);
  for (let m = 0; m < minutes; m++) {
    const nowMs = setup.startMs + m * MINUTE_MS;
    instance.completeDue(nowMs);
    if (m % instance.pollMinutes === 0) instance.poll(m, nowMs);
    instance.serve(m, setup.demand[m] as number);
    if ((m + 1) % chunk === 0 && m + 1 < minutes) yield m + 1;
  }
  return instance.run;
}

/**
 * Records on `op` the clients it disconnected (of the `connections` it had before it completed)
 * and returns their reconnects on the new capacity, whose first minute is `after`.
 */
export function completeChange(
  op: ScaleOperation,
  connections: number,
  after: TrafficMinute,
  model?: DisconnectionModel,
) {
  const change = {
    connections,
    fromUnits: op.from.units,
    toUnits: op.to.units,
    skuChanges: op.from.sku !== op.to.sku,
  };
  const r = changeReconnects(change, after.connectionQuota - after.serverConnections, model);
  op.disconnected = r.disconnected;
  return r;
}

/** {@link simulation} run to its end at once. */
export function simulate(strategy: Strategy, setup: SimulationSetup): StrategyRun {
  const steps = simulation(strategy, setup, Number.POSITIVE_INFINITY);
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}
