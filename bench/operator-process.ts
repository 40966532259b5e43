/**
 * The operator under benchmark, alone in its process: the real Operator (real clock) against the
 * local control plane and the emulator, started from `BENCH_OPERATOR_CONFIG` (JSON, see
 * {@link OperatorProcessConfig}). It reports to the parent over IPC:
 *
 * - `started`: memory after the imports and after the watch listed the policies, and the URL of
 *   the operator's own `/metrics` (the probe server `run` serves, here on a loopback port);
 * - `coldDone`: every expected policy had its first pass;
 * - `sample` (on request): CPU and memory, and the passes and poll cycles finished since the
 *   previous sample.
 *
 * What it measures without touching the operator's code: pass durations from the operator's own
 * `passDuration` histogram (observed right after each pass is reported), and poll cycles from the
 * Azure adapters it hands in (a cycle starts with its first `listBySubscription`; its policies are
 * those it asks metrics for, counted when it asks, since each batch's policies go to their passes
 * before the whole read returns; it is finished when its metrics reads have returned and every
 * one of its policies has had its pass), and the leading-signal reads
 * of a cycle from the Prometheus client it hands in (the operator's own client, as `run` builds
 * it; the queries of one cycle all start within a second of each other).
 */
import { readdirSync } from "node:fs";
import { writeHeapSnapshot } from "node:v8";
import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { createAzureAdapters, resourceKey } from "../src/azure/index.js";
import { realClock, scaledClock } from "../src/controller/clock.js";
import { startProbeServer } from "../src/controller/http.js";
import { OperatorMetrics } from "../src/controller/metrics.js";
import { Operator, type PassReport } from "../src/controller/operator.js";
import { createVirtualClock } from "../src/emulator/clock.js";
import { createKubeClients, loadKubeConfig } from "../src/kube/client.js";
import { PrometheusClient } from "../src/prometheus/index.js";

export interface OperatorProcessConfig {
  kubeconfig: string;
  armEndpoint: string;
  metricsEndpointTemplate: string;
  caPem: string;
  /** Policies expected (for `coldDone`). */
  expected: number;
  workers: number;
  /**
   * What-if: client-node's own transport, a new connection (and TLS handshake) for every call,
   * instead of the operator's shared pool (src/kube/client.ts PooledKubeConfig).
   */
  perRequestConnections: boolean;
  /**
   * The emulator's virtual clock, when it runs faster than real time (the soak): the operator's
   * clock follows it — virtual `virtualMs` at real `realMs` (both ms since the epoch), `speed`
   * virtual ms per real ms. Absent: the real clock.
   */
  clock?: { virtualMs: number; realMs: number; speed: number };
  /** Pass this operator setting through (tests of shorter intervals); absent: the default. */
  tickMs?: number;
  /** The operator's status refresh interval, ms (0: a status write on every pass); absent: the default. */
  statusRefreshMs?: number;
  /** Namespaces the operator watches; absent or empty: all (the operator's default). */
  namespaces?: readonly string[];
}

/** One finished pass. */
export interface PassRecord {
  key: string;
  /** ms since the process started (performance.now()). */
  endMs: number;
  durationMs: number;
  outcome: string;
  error?: string;
}

/** One poll cycle: one read of Azure for every policy due at a tick, then their passes. */
export interface CycleRecord {
  startMs: number;
  /** Policies whose metrics the cycle read. */
  policies: number;
  listCalls: number;
  /** When the instance lists were done and metrics were read. */
  metricsStartMs: number;
  metricsEndMs: number;
  getBatchCalls: number;
  settingsLookups: number;
  /** When the Azure reads were done (after the autoscale-settings look-up, if any). */
  fetchEndMs: number;
  /** When the last of its policies finished its pass. */
  endMs: number;
  /** Leading-signal queries the cycle sent (0 without leading signals), and those that failed. */
  leadingQueries: number;
  leadingFailures: number;
  /** When its first query was sent and its last one ended (0 without queries). */
  leadingStartMs: number;
  leadingEndMs: number;
}

/** The leading-signal queries of one poll cycle: every query sent within a second of the first. */
interface QueryBurst {
  startMs: number;
  endMs: number;
  queries: number;
  failures: number;
}

export interface ProcessSample {
  cpu: NodeJS.CpuUsage;
  memory: NodeJS.MemoryUsage;
  passes: PassRecord[];
  cycles: CycleRecord[];
  /** Durations (ms) of the Kubernetes calls of passes, by API method, since the previous sample. */
  kubeCalls: Record<string, number[]>;
  /** Open file descriptors (mostly sockets: Kubernetes and Azure connections, the watch). */
  openFds: number;
  /** heapUsed right after a full garbage collection (what the heap really holds). */
  heapUsedAfterGc?: number;
  warnings: number;
  warningSamples: string[];
}

export type WorkerMessage =
  | {
      type: "started";
      afterImports: NodeJS.MemoryUsage;
      afterStart: NodeJS.MemoryUsage;
      startMs: number;
      /** The operator's `/metrics`, e.g. `http://127.0.0.1:40123/metrics`. */
      metricsUrl: string;
    }
  | { type: "coldDone"; atMs: number }
  | ({ type: "sample"; id: number } & ProcessSample)
  | { type: "stopped" }
  | { type: "error"; message: string };

export type ParentMessage =
  | { type: "sample"; id: number; gc?: boolean }
  | { type: "stop"; heapSnapshot?: string };

const send = (m: WorkerMessage) => process.send?.(m);

async function main(): Promise<void> {
  const afterImports = process.memoryUsage();
  const config = JSON.parse(process.env["BENCH_OPERATOR_CONFIG"] ?? "") as OperatorProcessConfig;

  let warnings = 0;
  const warningSamples: string[] = [];
  const log = pino(
    { level: "warn" },
    {
      write(line: string) {
        warnings++;
        if (warningSamples.length < 5) warningSamples.push(line.trim());
      },
    },
  );

  let kubeConfig: KubeConfig;
  if (config.perRequestConnections) {
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(config.kubeconfig);
  } else {
    kubeConfig = loadKubeConfig({ kind: "file", path: config.kubeconfig });
  }
  const kube = createKubeClients(kubeConfig);
  let kubeCalls: Record<string, number[]> = {};
  const timed = (api: object, label: string, names: readonly string[]) => {
    const methods = api as Record<string, (...a: unknown[]) => Promise<unknown>>;
    for (const name of names) {
      const original = methods[name]?.bind(api);
      if (!original) continue;
      methods[name] = async (...a: unknown[]) => {
        const t = performance.now();
        try {
          return await original(...a);
        } finally {
          const key = `${label}.${name}`;
          const list = kubeCalls[key] ?? [];
          list.push(performance.now() - t);
          kubeCalls[key] = list;
        }
      };
    }
  };
  timed(kube.customObjects, "customObjects", [
    "patchNamespacedCustomObjectStatus",
    "getNamespacedCustomObject",
  ]);
  timed(kube.core, "core", ["createNamespacedEvent", "patchNamespacedEvent"]);
  timed(kube.apps, "apps", ["readNamespacedDeploymentScale", "patchNamespacedDeploymentScale"]);
  const c = config.clock;
  const clock = c
    ? scaledClock(
        createVirtualClock({
          start: new Date(c.virtualMs + (Date.now() - c.realMs) * c.speed),
          speed: c.speed,
        }),
      )
    : realClock;
  const azure = createAzureAdapters({
    credential: { getToken: async () => ({ token: "bench", expiresOnTimestamp: Date.now() + 3_600_000 }) },
    armEndpoint: config.armEndpoint,
    metricsEndpoint: (region) => config.metricsEndpointTemplate.replaceAll("{region}", region),
    ca: config.caPem,
    ...(c ? { now: () => new Date(clock.now()) } : {}),
  });

  // Poll cycles, seen through the adapters.
  /** A cycle being measured: its policies still without a pass, and its metrics reads still running. */
  type OpenCycle = CycleRecord & { waiting: number; reads: number };
  let open: OpenCycle | undefined;
  let fetching = false;
  const byResource = new Map<string, OpenCycle>();
  let cycles: CycleRecord[] = [];
  let bursts: QueryBurst[] = [];
  const finish = (c: OpenCycle) => {
    const { waiting: _, reads: __, ...record } = c;
    const burst = bursts.find((b) => Math.abs(b.startMs - c.startMs) < 1000);
    if (burst) {
      record.leadingQueries = burst.queries;
      record.leadingFailures = burst.failures;
      record.leadingStartMs = burst.startMs;
      record.leadingEndMs = burst.endMs;
      // The operator sends the queries just before it lists instances: the cycle starts with both.
      record.startMs = Math.min(record.startMs, burst.startMs);
    }
    cycles.push(record);
  };

  const list = azure.instances.listBySubscription.bind(azure.instances);
  azure.instances.listBySubscription = (...args) => {
    if (!fetching) {
      fetching = true;
      open = {
        startMs: performance.now(),
        policies: 0,
        listCalls: 0,
        metricsStartMs: 0,
        metricsEndMs: 0,
        getBatchCalls: 0,
        settingsLookups: 0,
        fetchEndMs: 0,
        endMs: 0,
        leadingQueries: 0,
        leadingFailures: 0,
        leadingStartMs: 0,
        leadingEndMs: 0,
        waiting: 0,
        reads: 0,
      };
    }
    if (open) open.listCalls++;
    return list(...args);
  };
  // A cycle's policies are known when it asks for their metrics: the fetcher hands each batch's
  // policies to their passes before the whole read returns, so they are counted from here.
  const read = azure.metrics.read.bind(azure.metrics);
  azure.metrics.read = async (targets, options) => {
    const c = open;
    fetching = false;
    if (c) {
      c.metricsStartMs = performance.now();
      c.policies += targets.length;
      c.waiting += targets.length;
      c.reads++;
      for (const t of targets) byResource.set(resourceKey(t.resourceId), c);
    }
    try {
      const result = await read(targets, options);
      if (c) c.getBatchCalls += result.calls;
      return result;
    } finally {
      if (c) {
        c.metricsEndMs = performance.now();
        c.fetchEndMs = Math.max(c.fetchEndMs, c.metricsEndMs);
        if (--c.reads === 0 && c.waiting === 0) finish(c);
      }
    }
  };
  const findFor = azure.autoscaleSettings.findFor.bind(azure.autoscaleSettings);
  azure.autoscaleSettings.findFor = async (...args) => {
    const c = open;
    try {
      return await findFor(...args);
    } finally {
      if (c) {
        c.settingsLookups++;
        c.fetchEndMs = performance.now();
      }
    }
  };

  const metrics = new OperatorMetrics();
  // The client the operator builds by default, handed in to see when each cycle's queries run.
  const prometheus = new PrometheusClient({ observe: (o) => metrics.observePrometheusQuery(o) });
  const query = prometheus.query.bind(prometheus);
  prometheus.query = async (...args) => {
    const startMs = performance.now();
    let burst = bursts.at(-1);
    if (!burst || startMs - burst.startMs >= 1000) {
      burst = { startMs, endMs: startMs, queries: 0, failures: 0 };
      bursts = [...bursts.filter((b) => startMs - b.startMs < 600_000), burst];
    }
    const b = burst;
    b.queries++;
    try {
      return await query(...args);
    } catch (err) {
      b.failures++;
      throw err;
    } finally {
      b.endMs = Math.max(b.endMs, performance.now());
    }
  };
  const operator = new Operator(
    { kube, azure, log, metrics, clock, prometheus },
    {
      workers: config.workers,
      identity: "bench",
      ...(config.tickMs !== undefined ? { tickMs: config.tickMs } : {}),
      ...(config.statusRefreshMs !== undefined ? { statusRefreshMs: config.statusRefreshMs } : {}),
      ...(config.namespaces ? { namespaces: config.namespaces } : {}),
    },
  );
  const probes = await startProbeServer({
    address: "127.0.0.1:0",
    metrics: () => metrics.expose(),
    readiness: operator.readiness(),
  });

  // Passes: the report comes first, the histogram observation right after it (same turn).
  let passes: PassRecord[] = [];
  let pending: PassReport | undefined;
  const seen = new Set<string>();
  let coldSent = false;
  operator.onPass((r) => {
    pending = r;
  });
  const histogram = metrics.passDuration;
  const observe = histogram.observe.bind(histogram);
  histogram.observe = ((...args: unknown[]) => {
    const seconds = args.find((a): a is number => typeof a === "number") ?? Number.NaN;
    const r = pending;
    pending = undefined;
    if (r) {
      const endMs = performance.now();
      passes.push({
        key: r.key,
        endMs,
        durationMs: seconds * 1000,
        outcome: r.result?.outcome ?? "error",
        ...(r.error !== undefined ? { error: String(r.error) } : {}),
      });
      const id = r.policy.spec?.target?.resourceId;
      const c = id ? byResource.get(resourceKey(id)) : undefined;
      if (c && id) {
        byResource.delete(resourceKey(id));
        c.endMs = Math.max(c.endMs, endMs);
        if (--c.waiting === 0 && c.reads === 0) finish(c);
      }
      seen.add(r.key);
      if (!coldSent && seen.size >= config.expected) {
        coldSent = true;
        send({ type: "coldDone", atMs: endMs });
      }
    }
    (observe as (...a: unknown[]) => void)(...args);
  }) as typeof histogram.observe;

  process.on("message", (m: ParentMessage) => {
    if (m.type === "sample") {
      const cpu = process.cpuUsage();
      const memory = process.memoryUsage();
      const gc = (globalThis as { gc?: () => void }).gc;
      let heapUsedAfterGc: number | undefined;
      if (m.gc && gc) {
        gc();
        heapUsedAfterGc = process.memoryUsage().heapUsed;
      }
      const sample: ProcessSample = {
        cpu,
        memory,
        passes,
        cycles,
        kubeCalls,
        openFds: readdirSync("/proc/self/fd").length,
        ...(heapUsedAfterGc !== undefined ? { heapUsedAfterGc } : {}),
        warnings,
        warningSamples: [...warningSamples],
      };
      passes = [];
      cycles = [];
      kubeCalls = {};
      send({ type: "sample", id: m.id, ...sample });
    } else if (m.type === "stop") {
      if (m.heapSnapshot) writeHeapSnapshot(m.heapSnapshot);
      void operator
        .stop(5_000)
        .then(() => Promise.all([probes.close(), prometheus.close()]))
        .then(() => send({ type: "stopped" }))
        .finally(() => process.exit(0));
    }
  });
  process.on("disconnect", () => process.exit(0));

  const startMs = performance.now();
  await operator.start();
  send({
    type: "started",
    afterImports,
    afterStart: process.memoryUsage(),
    startMs,
    metricsUrl: `${probes.url}/metrics`,
  });
}

main().catch((err: unknown) => {
  send({ type: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
});
