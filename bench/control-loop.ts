/**
 * `npm run bench`: the control loop at scale.
 *
 * For each size (default 1, 100, 1,000 policies) against one local control plane (real etcd and
 * kube-apiserver) and one Azure emulator process (real time, no noise, ARM rate limit on):
 *
 * 1. N emulator instances spread over 4 subscriptions × 3 regions × 2 services (SignalR, Web
 *    PubSub), each Premium_P1 × 2 units with a constant 1,000 connections, so that nothing changes
 *    (50 % connection quota and server load against targets of 80 % and 70 %: the policy holds 2
 *    units);
 * 2. N CapacityPolicies in ⌈N/100⌉ namespaces (at most 10), polled every 30 s — once without a
 *    leading signal, then once more with one on every policy (`spec.anticipation.leadingSignal`:
 *    the negotiate rate from a Prometheus stand-in, bench/prometheus-standin.ts, one server per
 *    namespace by default, answering 1,000 connections ÷ 10 min = 1.67 clients/s after 10 ms);
 * 3. for each of the two, the real Operator, alone in a child process (bench/operator-process.ts,
 *    bundled with esbuild as `npm run bundle` bundles the image's CLI, every package inlined, and
 *    run by plain node; `--operator-build modules` loads the packages from node_modules as
 *    `node dist/cli/main.js` does), watching all
 *    namespaces; its first poll cycle has every policy due at once (the "cold" full cycle); then
 *    three poll intervals are measured in steady state, each window opening just before a cycle.
 *    Prometheus queries are counted twice: by the stand-ins and by the operator's own `/metrics`
 *    (`signalr_autoscaler_prometheus_queries_total`), scraped between windows;
 * 4. the per-resource approach on the same instances, from this process (once per size): one ARM
 *    GET and one metrics read (two getBatch queries, one per aggregation) per policy, against one
 *    batched read (the operator's CycleFetcher) of the same policies.
 *
 * Prints a table per size and run, a comparison of the runs with and without leading signals,
 * and a summary against the targets, and writes everything as JSON to
 * bench/results/latest.json (`--out` to change). `--help` lists the flags.
 */
import { type ChildProcess, execFile, fork, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { Agent, request } from "node:https";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Command, CommanderError, Option } from "commander";
import { build } from "esbuild";
import { NODE_BUNDLE_OPTIONS } from "../scripts/bundle.js";
import { API_VERSION, CRD_NAME, GROUP, KIND, PLURAL, VERSION } from "../src/api/index.js";
import {
  type AzureAdapters,
  createAzureAdapters,
  formatResourceId,
  metricQueries,
  parseResourceId,
} from "../src/azure/index.js";
import type { ServiceKind } from "../src/capacity/index.js";
import { CycleFetcher, type CycleTarget } from "../src/controller/fetch.js";
import { DEFAULT_STATUS_REFRESH_MS } from "../src/controller/status-need.js";
import { createKubeClients, type KubeClients, loadKubeConfig } from "../src/kube/client.js";
import {
  type ControlPlane,
  ensureControlPlaneBinaries,
  startControlPlane,
} from "../src/localcluster/index.js";
import {
  counterDelta,
  type PrometheusQueryCounters,
  scrapePrometheusQueryCounters,
} from "./operator-metrics.js";
import type {
  CycleRecord,
  OperatorProcessConfig,
  ParentMessage,
  PassRecord,
  ProcessSample,
  WorkerMessage,
} from "./operator-process.js";
import { type PrometheusStandIns, startPrometheusStandIns } from "./prometheus-standin.js";

const execFileAsync = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

// ---------------------------------------------------------------------------------------------
// Settings

/** The bench's flags, as commander gives them. */
interface BenchOptions {
  sizes: string;
  leading?: boolean;
  prometheusServers: string;
  prometheusLatencyMs: string;
  intervals: string;
  poll: string;
  workers: string;
  concurrency: string;
  out: string;
  heapSnapshot: boolean;
  perRequestConnections: boolean;
  operatorNodeOptions: string;
  operatorBuild: "bundle" | "modules";
  statusRefreshInterval: string;
}

/**
 * The flags, parsed as the CLI parses its own (commander): `--help` prints them and exits 0; an
 * unknown flag or a bad value is one line on stderr and exit code 2, before anything starts.
 */
function parseFlags(argv: readonly string[]) {
  const program = new Command("npm run bench --")
    .description(
      "The control loop at scale: the operator against a local control plane and the Azure emulator.",
    )
    .option("--sizes <list>", "policy counts, one run each (two with the default leading mode)", "1,100,1000")
    .option("--leading", "only the runs with a leading signal on every policy")
    .option(
      "--no-leading",
      "only the runs without leading signals (default: both, one after the other, for each size)",
    )
    .option(
      "--prometheus-servers <n>",
      "Prometheus stand-ins the leading signals point at, policy i on server i mod N; per-namespace: one per namespace, up to 10",
      "per-namespace",
    )
    .option("--prometheus-latency-ms <ms>", "time each stand-in takes to answer a query, ms", "10")
    .option("--intervals <n>", "steady-state poll intervals measured per run", "3")
    .option("--poll <seconds>", "pollIntervalSeconds of every policy", "30")
    .option("--workers <n>", "the operator's concurrent passes", "16")
    .option("--concurrency <n>", "concurrent calls of the per-resource comparison", "16")
    .addOption(
      new Option("--out <file>", "where the results go, JSON").default(
        join(ROOT, "bench", "results", "latest.json"),
        "bench/results/latest.json of the checkout",
      ),
    )
    .option("--heap-snapshot", "writes operator-<N>[-leading].heapsnapshot next to --out", false)
    .option(
      "--per-request-connections",
      "client-node's own transport: a new connection per Kubernetes call",
      false,
    )
    .option(
      "--operator-node-options <flags>",
      "node flags for the operator process (e.g. V8 heap limits)",
      "",
    )
    .addOption(
      new Option(
        "--operator-build <build>",
        "the operator process as the image runs it (bundle: every package inlined, minified, as npm run bundle) " +
          "or as node dist/cli/main.js does (modules: packages loaded from node_modules)",
      )
        .choices(["bundle", "modules"])
        .default("bundle"),
    )
    .option(
      "--status-refresh-interval <seconds>",
      "the operator's --status-refresh-interval; 0 writes every policy's status on every pass (as before status writes were skipped)",
      "300",
    )
    .helpOption("-h, --help", "this text")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
    });
  try {
    program.parse([...argv], { from: "user" });
  } catch (err) {
    // commander has printed the help or its one-line error.
    if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
    throw err;
  }
  const o = program.opts<BenchOptions>();
  return {
    sizes: o.sizes,
    leading: o.leading,
    "prometheus-servers": o.prometheusServers,
    "prometheus-latency-ms": o.prometheusLatencyMs,
    intervals: o.intervals,
    poll: o.poll,
    workers: o.workers,
    concurrency: o.concurrency,
    out: resolve(o.out),
    "heap-snapshot": o.heapSnapshot,
    "per-request-connections": o.perRequestConnections,
    "operator-node-options": o.operatorNodeOptions,
    "operator-build": o.operatorBuild,
    "status-refresh-interval": o.statusRefreshInterval,
  };
}

/** A bad flag value: one line on stderr, exit code 2 (as the CLI's usage errors). */
function usageError(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

const flags = parseFlags(process.argv.slice(2));
const SIZES = flags.sizes.split(",").map((s) => Number(s.trim()));
/** The runs of each size: without leading signals (false), with one on every policy (true). */
const MODES: readonly boolean[] = flags.leading === undefined ? [false, true] : [flags.leading];
/** Stand-ins: one per namespace (undefined), or this many. */
const PROMETHEUS_SERVERS =
  flags["prometheus-servers"] === "per-namespace" ? undefined : Number(flags["prometheus-servers"]);
const PROMETHEUS_LATENCY_MS = Number(flags["prometheus-latency-ms"]);
const INTERVALS = Number(flags.intervals);
const POLL_SECONDS = Number(flags.poll);
const WORKERS = Number(flags.workers);
const CONCURRENCY = Number(flags.concurrency);
const STATUS_REFRESH_SECONDS = Number(flags["status-refresh-interval"]);
for (const [name, v] of [
  ["sizes", Math.min(...SIZES)],
  ["intervals", INTERVALS],
  ["poll", POLL_SECONDS],
  ["workers", WORKERS],
  ["concurrency", CONCURRENCY],
  ["prometheus-servers", PROMETHEUS_SERVERS ?? 1],
] as const) {
  if (!Number.isInteger(v) || v < 1)
    usageError(
      name === "sizes"
        ? "--sizes must be whole numbers ≥ 1, comma-separated"
        : name === "prometheus-servers"
          ? "--prometheus-servers must be a whole number ≥ 1 or per-namespace"
          : `--${name} must be a whole number ≥ 1`,
    );
}
if (!(Number.isFinite(STATUS_REFRESH_SECONDS) && STATUS_REFRESH_SECONDS >= 0))
  usageError("--status-refresh-interval must be a number of seconds ≥ 0");
if (!(Number.isFinite(PROMETHEUS_LATENCY_MS) && PROMETHEUS_LATENCY_MS >= 0))
  usageError("--prometheus-latency-ms must be a number ≥ 0");

const SUBSCRIPTIONS = 4;
const REGIONS = ["westeurope", "eastus", "southeastasia"] as const;
const SERVICES: readonly ServiceKind[] = ["SignalR", "WebPubSub"];
const CONNECTIONS = 1000;
const UNITS = 2;
const POLICIES_PER_NAMESPACE = 100;
const MAX_NAMESPACES = 10;
const COLD_TIMEOUT_MS = 300_000;
/**
 * The leading signal's connection lifetime, and the negotiate rate the stand-ins answer: with
 * clients staying 10 minutes, 1,000 connections arrive at 1,000 / 600 s (Little's law), so the
 * signal agrees with Azure Monitor and nothing changes in this run either.
 */
const LIFETIME_SECONDS = 600;
const NEGOTIATE_RATE = CONNECTIONS / LIFETIME_SECONDS;

// ---------------------------------------------------------------------------------------------
// Small helpers

const log = (line: string) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

async function limited<T>(items: readonly T[], limit: number, fn: (item: T, i: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

const mb = (bytes: number) => bytes / 1024 / 1024;
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const fmt = (n: number, digits = 1) =>
  Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits }) : "–";

/** CPU time (ms) and RSS (bytes) of another process, from /proc. */
const CLK_TCK = 100;
function procStats(pid: number | undefined): { cpuMs: number; rss: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cpuMs = ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    return { cpuMs, rss: rssKb * 1024 };
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The emulator process and its control API

interface EmulatorProcess {
  child: ChildProcess;
  armEndpoint: string;
  metricsEndpointTemplate: string;
  controlEndpoint: string;
  caPem: string;
  agent: Agent;
}

async function startEmulatorProcess(): Promise<EmulatorProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "bench", "emulator-process.ts")], {
    cwd: ROOT,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const line = await new Promise<string>((res, rej) => {
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    rl.once("line", (l) => res(l));
    child.once("exit", (code) => rej(new Error(`the emulator process exited with ${code}`)));
  });
  const info = JSON.parse(line) as {
    armEndpoint: string;
    metricsEndpointTemplate: string;
    controlEndpoint: string;
    caPath: string;
  };
  const caPem = await readFile(info.caPath, "utf8");
  return { child, ...info, caPem, agent: new Agent({ ca: caPem, keepAlive: true, maxSockets: 16 }) };
}

function control(
  emu: EmulatorProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  return new Promise((res, rej) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${emu.controlEndpoint}${path}`,
      {
        method,
        agent: emu.agent,
        headers: text
          ? { "content-type": "application/json", "content-length": Buffer.byteLength(text) }
          : {},
      },
      (resp) => {
        const chunks: Buffer[] = [];
        resp.on("data", (c: Buffer) => chunks.push(c));
        resp.on("end", () => {
          const raw = Buffer.concat(chunks).toString("utf8");
          const status = resp.statusCode ?? 0;
          if (status >= 400) return rej(new Error(`${method} ${path} → ${status}: ${raw}`));
          res({ status, json: raw ? JSON.parse(raw) : undefined });
        });
        resp.on("error", rej);
      },
    );
    req.on("error", rej);
    req.end(text);
  });
}

interface RequestRecord {
  method: string;
  path: string;
  kind: "armRead" | "armWrite" | "getBatch" | "other";
  status: number;
  subscriptionId?: string;
}
interface CallCounters {
  total: number;
  armReads: number;
  armWrites: number;
  getBatch: number;
  faulted: number;
  rateLimited: number;
}

async function emulatorCalls(
  emu: EmulatorProcess,
): Promise<{ calls: CallCounters; requests: RequestRecord[] }> {
  return (await control(emu, "GET", "/requests")).json as { calls: CallCounters; requests: RequestRecord[] };
}

/** The Azure API a request belongs to. */
function apiOf(r: RequestRecord): string {
  if (r.kind === "getBatch") return "metrics:getBatch";
  const p = r.path.toLowerCase();
  if (r.kind === "armWrite") return "ARM write";
  if (/\/providers\/microsoft\.signalrservice\/signalr$/.test(p)) return "ARM list SignalR";
  if (/\/providers\/microsoft\.signalrservice\/webpubsub$/.test(p)) return "ARM list WebPubSub";
  if (/\/providers\/microsoft\.insights\/autoscalesettings$/.test(p)) return "ARM list autoscaleSettings";
  if (/\/providers\/microsoft\.signalrservice\/(signalr|webpubsub)\/[^/]+$/.test(p))
    return "ARM GET instance";
  if (/operation/.test(p)) return "ARM GET operation";
  return "ARM other read";
}

const API_ORDER = [
  "metrics:getBatch",
  "ARM list SignalR",
  "ARM list WebPubSub",
  "ARM list autoscaleSettings",
  "ARM GET instance",
  "ARM GET operation",
  "ARM other read",
  "ARM write",
];

// ---------------------------------------------------------------------------------------------
// Layout of one size

interface Target {
  index: number;
  resourceId: string;
  subscriptionId: string;
  region: string;
  service: ServiceKind;
  namespace: string;
  /** Index of its namespace in the size's list. */
  namespaceIndex: number;
  name: string;
}

function subscriptionId(sizeIndex: number, s: number): string {
  return `${String(sizeIndex + 1).padStart(8, "0")}-0000-4000-8000-${String(s + 1).padStart(12, "0")}`;
}

function layout(size: number, sizeIndex: number): { targets: Target[]; namespaces: string[] } {
  const nsCount = Math.min(MAX_NAMESPACES, Math.max(1, Math.ceil(size / POLICIES_PER_NAMESPACE)));
  const namespaces = Array.from({ length: nsCount }, (_, j) => `bench-n${size}-${j}`);
  const targets = Array.from({ length: size }, (_, i): Target => {
    const sub = subscriptionId(sizeIndex, i % SUBSCRIPTIONS);
    const region = REGIONS[Math.floor(i / SUBSCRIPTIONS) % REGIONS.length] as string;
    const service = SERVICES[
      Math.floor(i / (SUBSCRIPTIONS * REGIONS.length)) % SERVICES.length
    ] as ServiceKind;
    const name = `n${size}-${String(i).padStart(4, "0")}`;
    return {
      index: i,
      resourceId: formatResourceId({ subscriptionId: sub, resourceGroup: `bench-${region}`, service, name }),
      subscriptionId: sub,
      region,
      service,
      namespace: namespaces[i % nsCount] as string,
      namespaceIndex: i % nsCount,
      name: `p-${String(i).padStart(4, "0")}`,
    };
  });
  return { targets, namespaces };
}

/**
 * The fewest getBatch calls that can read these targets: ⌈n/50⌉ per subscription, region and type,
 * times the queries a batch of the type needs (one per aggregation: `metricQueries`).
 */
function minimumGetBatch(targets: readonly Target[]): { groups: number; calls: number } {
  const groups = new Map<string, { n: number; service: Target["service"] }>();
  for (const t of targets) {
    const k = `${t.subscriptionId}|${t.region}|${t.service}`;
    groups.set(k, { n: (groups.get(k)?.n ?? 0) + 1, service: t.service });
  }
  let calls = 0;
  for (const { n, service } of groups.values()) calls += Math.ceil(n / 50) * metricQueries(service).length;
  return { groups: groups.size, calls };
}

/** The stand-in (index into its URLs) a target's leading signal points at. */
function prometheusServerOf(t: Target): number {
  return PROMETHEUS_SERVERS === undefined ? t.namespaceIndex : t.index % PROMETHEUS_SERVERS;
}

/** Stand-ins the sizes need: one per namespace of the largest size, or `--prometheus-servers`. */
function prometheusServersNeeded(): number {
  if (PROMETHEUS_SERVERS !== undefined) return PROMETHEUS_SERVERS;
  return Math.min(MAX_NAMESPACES, Math.max(1, Math.ceil(Math.max(...SIZES) / POLICIES_PER_NAMESPACE)));
}

/** A policy's leading signal: the rate of its hub's `POST /chat/negotiate` (ASP.NET Core's request histogram). */
function leadingSignal(t: Target, serverAddress: string) {
  return {
    prometheus: {
      serverAddress,
      query:
        `sum(rate(http_server_request_duration_seconds_count{namespace="${t.namespace}", service="${t.name}", ` +
        `http_route="/chat/negotiate", http_request_method="POST"}[1m]))`,
      timeout: "5s",
    },
    measures: "NewConnectionsPerSecond",
    connectionLifetime: `${LIFETIME_SECONDS / 60}m`,
  };
}

/** The policy of a target; with `leadingServer`, its leading signal reads that Prometheus. */
function policyBody(t: Target, leadingServer?: string) {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: t.name, namespace: t.namespace, labels: { "bench.signalr.dev/size": "x" } },
    spec: {
      target: { service: t.service, resourceId: t.resourceId },
      units: { min: 1, max: 100 },
      skus: ["Premium_P1"],
      metrics: {
        connections: { targetPercent: 80 },
        serverLoad: { targetPercent: 70 },
        window: "5m",
        ingestionDelay: "3m",
      },
      // Anticipation's per-pass work (trend, censored demand, headroom) in every pass; the
      // seasonal history reads are counted apart (src/azure/history.test.ts: 40 getBatch calls an
      // hour for 1,000 policies: 20 batches, two queries each).
      anticipation: {
        mode: "Enabled",
        headroom: { peakPercent: 50, horizon: "2h" },
        ...(leadingServer !== undefined ? { leadingSignal: leadingSignal(t, leadingServer) } : {}),
      },
      pollIntervalSeconds: POLL_SECONDS,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The operator process

class OperatorProcess {
  readonly child: ChildProcess;
  readonly started: Promise<Extract<WorkerMessage, { type: "started" }>>;
  readonly coldDone: Promise<number>;
  readonly exited: Promise<void>;
  #nextId = 1;
  readonly #waiting = new Map<number, (s: ProcessSample) => void>();
  #stopped: (() => void) | undefined;

  constructor(script: string, config: OperatorProcessConfig) {
    this.child = fork(script, [], {
      cwd: ROOT,
      execArgv: ["--expose-gc", ...flags["operator-node-options"].split(/\s+/).filter(Boolean)],
      env: { ...process.env, BENCH_OPERATOR_CONFIG: JSON.stringify(config) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let onStarted!: (m: Extract<WorkerMessage, { type: "started" }>) => void;
    let onCold!: (at: number) => void;
    let onFail!: (err: Error) => void;
    const failed = new Promise<never>((_, rej) => {
      onFail = rej;
    });
    failed.catch(() => {});
    this.started = Promise.race([
      new Promise<Extract<WorkerMessage, { type: "started" }>>((r) => (onStarted = r)),
      failed,
    ]);
    this.coldDone = Promise.race([new Promise<number>((r) => (onCold = r)), failed]);
    this.exited = new Promise((r) => this.child.once("exit", () => r()));
    this.child.once("exit", (code) => onFail(new Error(`the operator process exited with ${code}`)));
    this.child.on("message", (m: WorkerMessage) => {
      switch (m.type) {
        case "started":
          onStarted(m);
          break;
        case "coldDone":
          onCold(m.atMs);
          break;
        case "sample": {
          const { type: _, id, ...sample } = m;
          this.#waiting.get(id)?.(sample);
          this.#waiting.delete(id);
          break;
        }
        case "stopped":
          this.#stopped?.();
          break;
        case "error":
          onFail(new Error(`operator process: ${m.message}`));
          break;
      }
    });
  }

  sample(gc = false): Promise<ProcessSample> {
    const id = this.#nextId++;
    return new Promise((r) => {
      this.#waiting.set(id, r);
      this.child.send({ type: "sample", id, gc } satisfies ParentMessage);
    });
  }

  async stop(heapSnapshot?: string): Promise<void> {
    if (this.child.exitCode !== null) return;
    const stopped = new Promise<void>((r) => (this.#stopped = r));
    this.child.send({ type: "stop", ...(heapSnapshot ? { heapSnapshot } : {}) } satisfies ParentMessage);
    await Promise.race([stopped.then(() => this.exited), sleep(20_000)]);
    if (this.child.exitCode === null && this.child.pid !== undefined) this.child.kill("SIGKILL");
  }
}

// ---------------------------------------------------------------------------------------------
// One size

interface IntervalResult {
  seconds: number;
  byApi: Record<string, number>;
  /** ARM reads per subscription. */
  armReadsBySubscription: Record<string, number>;
  counters: CallCounters;
  passes: number;
  cycles: number;
  /** Policies read by the cycles that finished in the window. */
  policiesRead: number;
  cpuMs: number;
  /** The passes' status writes made and skipped (the operator's `status_writes_total`). */
  statusWrites: { written: number; skipped: number };
  emulatorCpuMs?: number;
  apiServerCpuMs?: number;
  etcdCpuMs?: number;
  prometheus: {
    /** Queries the stand-ins received, in all and on the busiest server. */
    standInQueries: number;
    standInMaxPerServer: number;
    /** Most queries open at once on one stand-in. */
    maxInFlight: number;
    /** Queries of the cycles that finished in the window, as the operator's client sent them. */
    cycleQueries: number;
    /** What the operator's /metrics counted in the window. */
    operator: PrometheusQueryCounters;
    /** CPU of this process (the stand-ins, and the bench's few control calls), ms. */
    driverCpuMs: number;
  };
}

/** Prometheus queries of a run, as the stand-ins and the operator's /metrics counted them. */
interface PrometheusFigures {
  /** Policies that carry a leading signal. */
  policiesWithSignal: number;
  /** `status.anticipation.leading.state` of the policies at the end of the run ("none": absent). */
  leadingStates: Record<string, number>;
  servers: number;
  latencyMs: number;
  cold: {
    standInQueries: number;
    operatorQueries: number;
    byOutcome: Record<string, number>;
    /** From the first query sent to the last answer, seconds (0 without queries). */
    readSeconds: number;
    meanQueryMs: number;
  };
  steady: {
    standInQueriesPerCycle: number;
    operatorQueriesPerCycle: number;
    /** Queries per cycle the operator itself sent (its client, per cycle record). */
    cycleRecordQueriesPerCycle: number;
    byOutcomePerCycle: Record<string, number>;
    maxInFlight: number;
    meanQueryMs: number;
    readSecondsP50: number;
    readSecondsMax: number;
    driverCpuMsPerInterval: number;
  };
}

interface SizeResult {
  policies: number;
  /** Whether every policy of this run has a leading signal. */
  leadingSignal: boolean;
  namespaces: number;
  groups: number;
  subscriptions: number;
  minimumGetBatchPerCycle: number;
  setupSeconds: { instances: number; policies: number; operatorStart: number };
  cold: {
    cycleSeconds: number;
    fetchSeconds: number;
    listSeconds: number;
    metricsSeconds: number;
    /** From the first leading-signal query to its last answer (0 without). */
    leadingSeconds: number;
    /** From the end of the reads (Azure and Prometheus) to the last pass's end. */
    passesSeconds: number;
    byApi: Record<string, number>;
    passP50Ms: number;
    passP99Ms: number;
    cpuMsPerPolicy: number;
  };
  steady: {
    intervals: IntervalResult[];
    byApiPerInterval: Record<string, number>;
    /** Azure calls per poll cycle (all APIs): the calls of the windows over the cycles in them. */
    azureCallsPerCycle: number;
    maxArmReadsPerSubscription: number;
    cyclesPerInterval: number;
    policiesPerCycle: number;
    cycleSecondsP50: number;
    cycleSecondsMax: number;
    passes: number;
    passP50Ms: number;
    passP99Ms: number;
    cpuMsPerPolicyPerCycle: number;
    outcomes: Record<string, number>;
    /** Kubernetes calls of the passes: count per interval, p50 and p99 ms. */
    kubeCalls: Record<string, { perInterval: number; p50Ms: number; p99Ms: number }>;
    /**
     * Status writes per interval, made and skipped (`status_writes_total`), and what the refresh
     * alone comes to: policies × poll interval ÷ refresh interval (the operator's default, 300 s).
     */
    statusWritesPerInterval: { written: number; skipped: number; refreshBound: number };
  };
  prometheus: PrometheusFigures;
  /** One policy as stored after the run: JSON sizes, bytes. */
  policyObject: { bytes: number; statusBytes: number; managedFieldsBytes: number };
  memory: {
    rssMB: number;
    heapUsedMB: number;
    heapTotalMB: number;
    heapUsedAfterGcMB: number;
    externalMB: number;
    /** Open file descriptors of the operator at the end of the last interval (mostly sockets). */
    openFds: number;
    afterImportsRssMB: number;
    emulatorRssMB?: number;
  };
  warnings: number;
  warningSamples: string[];
  /** The per-resource comparison: in the first run of a size only (it reads Azure alone). */
  perResource?: PerResourceComparison;
}

interface PerResourceComparison {
  concurrency: number;
  batched: { seconds: number; calls: number; byApi: Record<string, number> };
  perResource: {
    seconds: number;
    calls: number;
    byApi: Record<string, number>;
    rateLimited: number;
    failures: number;
  };
  callsRatio: number;
  timeRatio: number;
  metricsCallsRatio: number;
}

/** What a size shares between its runs. */
interface SizeSetup {
  size: number;
  sizeIndex: number;
  targets: Target[];
  namespaces: string[];
  minimum: { groups: number; calls: number };
  instancesSeconds: number;
}

/** Everything a run needs from the bench. */
interface BenchParts {
  cp: ControlPlane;
  kube: KubeClients;
  emu: EmulatorProcess;
  driverAzure: AzureAdapters;
  operatorScript: string;
  controlPlanePids: { apiServer: number | undefined; etcd: number | undefined };
  standIns: PrometheusStandIns;
}

/** Every run of one size: the instances and namespaces once, then one run per mode. */
async function runSize(size: number, sizeIndex: number, parts: BenchParts): Promise<SizeResult[]> {
  const { targets, namespaces } = layout(size, sizeIndex);
  const minimum = minimumGetBatch(targets);
  log(
    `${size} policies: ${minimum.groups} subscription/region/type groups, ${namespaces.length} namespace(s)`,
  );

  // 1. Instances and namespaces, shared by the runs.
  const t0 = performance.now();
  await limited(targets, 16, async (t) => {
    await control(parts.emu, "POST", "/instances", {
      resourceId: t.resourceId,
      location: t.region,
      sku: "Premium_P1",
      units: UNITS,
      connections: CONNECTIONS,
    });
  });
  const instancesSeconds = (performance.now() - t0) / 1000;
  for (const ns of namespaces) await parts.kube.core.createNamespace({ body: { metadata: { name: ns } } });

  const setup: SizeSetup = { size, sizeIndex, targets, namespaces, minimum, instancesSeconds };
  const results: SizeResult[] = [];
  for (const leading of MODES) {
    const r = await runMode(setup, leading, parts);
    // 5. Per-resource approach vs one batched read, same instances, from this process; the
    //    operator has stopped, so that it does not poll meanwhile.
    if (results.length === 0) r.perResource = await comparePerResource(parts.emu, parts.driverAzure, targets);
    results.push(r);
    process.stdout.write(`${printSize(r)}\n`);
  }
  return results;
}

/** One run: the policies (with or without leading signals), the operator, cold and steady. */
async function runMode(setup: SizeSetup, leading: boolean, parts: BenchParts): Promise<SizeResult> {
  const { size, targets, namespaces, minimum } = setup;
  const { cp, kube, emu, standIns } = parts;
  const label = leading ? "with leading signals" : "without leading signals";

  // 2. Policies.
  let t0 = performance.now();
  await limited(targets, 16, async (t) => {
    await kube.customObjects.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: t.namespace,
      plural: PLURAL,
      body: policyBody(t, leading ? standIns.urls[prometheusServerOf(t)] : undefined),
    });
  });
  const policiesSeconds = (performance.now() - t0) / 1000;
  log(`${size} policies ${label}: created in ${fmt(policiesSeconds)} s`);

  // 3. The operator.
  await control(emu, "DELETE", "/requests");
  standIns.reset();
  const operator = new OperatorProcess(parts.operatorScript, {
    kubeconfig: cp.kubeconfigAdmin,
    armEndpoint: emu.armEndpoint,
    metricsEndpointTemplate: emu.metricsEndpointTemplate,
    caPem: emu.caPem,
    expected: size,
    workers: WORKERS,
    perRequestConnections: flags["per-request-connections"],
    statusRefreshMs: STATUS_REFRESH_SECONDS * 1000,
  });
  let result: SizeResult;
  try {
    t0 = performance.now();
    const started = await operator.started;
    const operatorStartSeconds = (performance.now() - t0) / 1000;
    const coldTimer = sleep(COLD_TIMEOUT_MS).then(() => {
      throw new Error(`not every policy had a pass within ${COLD_TIMEOUT_MS / 1000} s`);
    });
    coldTimer.catch(() => {});
    await Promise.race([operator.coldDone, coldTimer]);
    const coldSample = await operator.sample();
    const coldCalls = await emulatorCalls(emu);
    const coldStandIns = standIns.counts();
    let scraped = await scrapePrometheusQueryCounters(started.metricsUrl);
    const coldQueries = scraped;
    const coldCycle = coldSample.cycles.reduce<CycleRecord | undefined>(
      (big, c) => (big === undefined || c.policies > big.policies ? c : big),
      undefined,
    );
    if (!coldCycle || coldCycle.policies !== size)
      log(
        `warning: the first cycle read ${coldCycle?.policies ?? 0} of ${size} policies (creation was slower than a tick?)`,
      );
    const coldDurations = coldSample.passes.map((p) => p.durationMs);
    const coldCpuMs = (coldSample.cpu.user + coldSample.cpu.system) / 1000;
    log(
      `cold cycle: ${coldCycle ? fmt((coldCycle.endMs - coldCycle.startMs) / 1000, 2) : "?"} s for ${coldCycle?.policies ?? 0} policies` +
        (leading ? `, ${sum(coldStandIns.queries)} Prometheus queries` : ""),
    );

    // 4. Steady state: INTERVALS poll intervals. The operator puts polls on a grid of the interval
    //    (multiples of it since the epoch): each window opens a second before a grid point, so that
    //    it holds one whole cycle.
    const pollMs = POLL_SECONDS * 1000;
    const lead = 2000;
    // Every policy of the cold cycle was read before now: its next poll is on or before this grid
    // point (an earlier one is simply not measured).
    let windowStart = Math.ceil((Date.now() + pollMs / 2) / pollMs) * pollMs - lead;
    const sleepUntil = (at: number) => sleep(Math.max(0, at - Date.now()));
    const intervals: IntervalResult[] = [];
    const steadyPasses: PassRecord[] = [];
    const steadyCycles: CycleRecord[] = [];
    const steadyKube: Record<string, number[]> = {};
    const addKube = (k: Record<string, number[]>) => {
      for (const [m, d] of Object.entries(k)) steadyKube[m] = [...(steadyKube[m] ?? []), ...d];
    };
    let warnings = coldSample.warnings;
    let warningSamples = coldSample.warningSamples;
    let lastMemory = coldSample.memory;
    let lastOpenFds = coldSample.openFds;
    for (let w = 0; w < INTERVALS; w++, windowStart += pollMs) {
      await sleepUntil(windowStart);
      await control(emu, "DELETE", "/requests");
      standIns.reset();
      // The scrape that closed the previous window opens this one (between windows, so that its
      // CPU is not the window's): nothing queries Prometheus between the two.
      if (w === 0) scraped = await scrapePrometheusQueryCounters(started.metricsUrl);
      const before = await operator.sample();
      steadyPasses.push(...before.passes);
      steadyCycles.push(...before.cycles);
      const emuBefore = procStats(emu.child.pid);
      const apiBefore = procStats(parts.controlPlanePids.apiServer);
      const etcdBefore = procStats(parts.controlPlanePids.etcd);
      const driverBefore = process.cpuUsage();
      const windowBegun = performance.now();
      await sleepUntil(windowStart + pollMs);
      const calls = await emulatorCalls(emu);
      const prometheusCounts = standIns.counts();
      const driverCpu = process.cpuUsage(driverBefore);
      const after = await operator.sample();
      const seconds = (performance.now() - windowBegun) / 1000;
      const emuAfter = procStats(emu.child.pid);
      const apiAfter = procStats(parts.controlPlanePids.apiServer);
      const etcdAfter = procStats(parts.controlPlanePids.etcd);
      const scrapedAfter = await scrapePrometheusQueryCounters(started.metricsUrl);
      const operatorQueries = counterDelta(scraped, scrapedAfter);
      scraped = scrapedAfter;
      steadyPasses.push(...after.passes);
      steadyCycles.push(...after.cycles);
      addKube(after.kubeCalls);
      const byApi: Record<string, number> = {};
      const bySub: Record<string, number> = {};
      for (const r of calls.requests) {
        const api = apiOf(r);
        byApi[api] = (byApi[api] ?? 0) + 1;
        if (r.kind === "armRead" && r.subscriptionId)
          bySub[r.subscriptionId] = (bySub[r.subscriptionId] ?? 0) + 1;
      }
      intervals.push({
        seconds,
        byApi,
        armReadsBySubscription: bySub,
        counters: calls.calls,
        passes: after.passes.length,
        cycles: after.cycles.length,
        policiesRead: sum(after.cycles.map((c) => c.policies)),
        cpuMs: (after.cpu.user + after.cpu.system - (before.cpu.user + before.cpu.system)) / 1000,
        statusWrites: operatorQueries.statusWrites,
        ...(emuBefore && emuAfter ? { emulatorCpuMs: emuAfter.cpuMs - emuBefore.cpuMs } : {}),
        ...(apiBefore && apiAfter ? { apiServerCpuMs: apiAfter.cpuMs - apiBefore.cpuMs } : {}),
        ...(etcdBefore && etcdAfter ? { etcdCpuMs: etcdAfter.cpuMs - etcdBefore.cpuMs } : {}),
        prometheus: {
          standInQueries: sum(prometheusCounts.queries),
          standInMaxPerServer: Math.max(0, ...prometheusCounts.queries),
          maxInFlight: prometheusCounts.maxInFlight,
          cycleQueries: sum(after.cycles.map((c) => c.leadingQueries)),
          operator: operatorQueries,
          driverCpuMs: (driverCpu.user + driverCpu.system) / 1000,
        },
      });
      warnings = after.warnings;
      warningSamples = after.warningSamples;
      lastMemory = after.memory;
      lastOpenFds = after.openFds;
      log(
        `interval ${w + 1}/${INTERVALS}: ${after.passes.length} passes in ${after.cycles.length} cycle(s), ` +
          `${calls.calls.total} Azure calls, ${sum(prometheusCounts.queries)} Prometheus queries, ` +
          `CPU ${fmt(intervals.at(-1)?.cpuMs ?? 0, 0)} ms`,
      );
    }
    const emulatorRss = procStats(emu.child.pid)?.rss;
    const afterGc = await operator.sample(true);
    const kubeCalls: SizeResult["steady"]["kubeCalls"] = {};
    for (const [m, d] of Object.entries(steadyKube)) {
      kubeCalls[m] = { perInterval: d.length / INTERVALS, p50Ms: quantile(d, 0.5), p99Ms: quantile(d, 0.99) };
    }
    const sampleTarget = targets[0] as Target;
    const stored = (await kube.customObjects.getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: sampleTarget.namespace,
      plural: PLURAL,
      name: sampleTarget.name,
    })) as { status?: unknown; metadata?: { managedFields?: unknown } };
    const policyObject = {
      bytes: JSON.stringify(stored).length,
      statusBytes: JSON.stringify(stored.status ?? {}).length,
      managedFieldsBytes: JSON.stringify(stored.metadata?.managedFields ?? []).length,
    };

    const leadingStates = leading ? await leadingStatesOf(kube, namespaces) : {};

    const byApiPerInterval: Record<string, number> = {};
    for (const api of API_ORDER) {
      const total = intervals.reduce((s, i) => s + (i.byApi[api] ?? 0), 0);
      if (total > 0) byApiPerInterval[api] = total / intervals.length;
    }
    const maxArmReadsPerSubscription = Math.max(
      0,
      ...intervals.flatMap((i) => Object.values(i.armReadsBySubscription)),
    );
    const steadyDurations = steadyPasses.map((p) => p.durationMs);
    const steadyCpuMs = intervals.reduce((s, i) => s + i.cpuMs, 0);
    const steadyPassCount = intervals.reduce((s, i) => s + i.passes, 0);
    const cycleSeconds = steadyCycles.map((c) => (c.endMs - c.startMs) / 1000);
    const outcomes: Record<string, number> = {};
    for (const p of steadyPasses) outcomes[p.outcome] = (outcomes[p.outcome] ?? 0) + 1;
    const windowCycles = sum(intervals.map((i) => i.cycles));
    const perCycle = (n: number) => (windowCycles > 0 ? n / windowCycles : Number.NaN);
    const steadyOperatorQueries = intervals.map((i) => i.prometheus.operator);
    const byOutcomePerCycle: Record<string, number> = {};
    for (const q of steadyOperatorQueries)
      for (const [k, v] of Object.entries(q.byOutcome))
        byOutcomePerCycle[k] = (byOutcomePerCycle[k] ?? 0) + v;
    for (const k of Object.keys(byOutcomePerCycle))
      byOutcomePerCycle[k] = perCycle(byOutcomePerCycle[k] as number);
    const readSeconds = steadyCycles
      .filter((c) => c.leadingQueries > 0)
      .map((c) => (c.leadingEndMs - c.leadingStartMs) / 1000);
    const meanMs = (q: readonly PrometheusQueryCounters[]) => {
      const count = sum(q.map((x) => x.durationCount));
      return count > 0 ? (sum(q.map((x) => x.durationSumSeconds)) / count) * 1000 : Number.NaN;
    };

    // Stop the operator before the comparison so that it does not poll meanwhile.
    await operator.stop(
      flags["heap-snapshot"]
        ? join(dirname(flags.out), `operator-${size}${leading ? "-leading" : ""}.heapsnapshot`)
        : undefined,
    );

    const readsEndMs = coldCycle ? Math.max(coldCycle.fetchEndMs, coldCycle.leadingEndMs) : Number.NaN;
    result = {
      policies: size,
      leadingSignal: leading,
      namespaces: namespaces.length,
      groups: minimum.groups,
      subscriptions: new Set(targets.map((t) => t.subscriptionId)).size,
      minimumGetBatchPerCycle: minimum.calls,
      setupSeconds: {
        instances: setup.instancesSeconds,
        policies: policiesSeconds,
        operatorStart: operatorStartSeconds,
      },
      cold: {
        cycleSeconds: coldCycle ? (coldCycle.endMs - coldCycle.startMs) / 1000 : Number.NaN,
        fetchSeconds: coldCycle ? (coldCycle.fetchEndMs - coldCycle.startMs) / 1000 : Number.NaN,
        listSeconds: coldCycle ? (coldCycle.metricsStartMs - coldCycle.startMs) / 1000 : Number.NaN,
        metricsSeconds: coldCycle ? (coldCycle.metricsEndMs - coldCycle.metricsStartMs) / 1000 : Number.NaN,
        leadingSeconds: coldCycle ? (coldCycle.leadingEndMs - coldCycle.leadingStartMs) / 1000 : Number.NaN,
        passesSeconds: coldCycle ? (coldCycle.endMs - readsEndMs) / 1000 : Number.NaN,
        byApi: countByApi(coldCalls.requests),
        passP50Ms: quantile(coldDurations, 0.5),
        passP99Ms: quantile(coldDurations, 0.99),
        cpuMsPerPolicy: coldCpuMs / size,
      },
      steady: {
        intervals,
        byApiPerInterval,
        azureCallsPerCycle: perCycle(sum(intervals.map((i) => i.counters.total))),
        maxArmReadsPerSubscription,
        cyclesPerInterval: windowCycles / intervals.length,
        policiesPerCycle: steadyCycles.length
          ? steadyCycles.reduce((s, c) => s + c.policies, 0) / steadyCycles.length
          : Number.NaN,
        cycleSecondsP50: quantile(cycleSeconds, 0.5),
        cycleSecondsMax: cycleSeconds.length ? Math.max(...cycleSeconds) : Number.NaN,
        passes: steadyPassCount,
        passP50Ms: quantile(steadyDurations, 0.5),
        passP99Ms: quantile(steadyDurations, 0.99),
        cpuMsPerPolicyPerCycle: steadyPassCount ? steadyCpuMs / steadyPassCount : Number.NaN,
        outcomes,
        kubeCalls,
        statusWritesPerInterval: {
          written: sum(intervals.map((i) => i.statusWrites.written)) / intervals.length,
          skipped: sum(intervals.map((i) => i.statusWrites.skipped)) / intervals.length,
          refreshBound: (size * POLL_SECONDS) / (DEFAULT_STATUS_REFRESH_MS / 1000),
        },
      },
      prometheus: {
        policiesWithSignal: leading ? size : 0,
        leadingStates,
        servers: leading ? new Set(targets.map(prometheusServerOf)).size : 0,
        latencyMs: PROMETHEUS_LATENCY_MS,
        cold: {
          standInQueries: sum(coldStandIns.queries),
          operatorQueries: coldQueries.total,
          byOutcome: coldQueries.byOutcome,
          readSeconds: coldCycle ? (coldCycle.leadingEndMs - coldCycle.leadingStartMs) / 1000 : Number.NaN,
          meanQueryMs: meanMs([coldQueries]),
        },
        steady: {
          standInQueriesPerCycle: perCycle(sum(intervals.map((i) => i.prometheus.standInQueries))),
          operatorQueriesPerCycle: perCycle(sum(steadyOperatorQueries.map((q) => q.total))),
          cycleRecordQueriesPerCycle: perCycle(sum(intervals.map((i) => i.prometheus.cycleQueries))),
          byOutcomePerCycle,
          maxInFlight: Math.max(0, ...intervals.map((i) => i.prometheus.maxInFlight)),
          meanQueryMs: meanMs(steadyOperatorQueries),
          readSecondsP50: quantile(readSeconds, 0.5),
          readSecondsMax: readSeconds.length ? Math.max(...readSeconds) : 0,
          driverCpuMsPerInterval: sum(intervals.map((i) => i.prometheus.driverCpuMs)) / intervals.length,
        },
      },
      policyObject,
      memory: {
        rssMB: mb(lastMemory.rss),
        heapUsedMB: mb(lastMemory.heapUsed),
        heapTotalMB: mb(lastMemory.heapTotal),
        heapUsedAfterGcMB: mb(afterGc.heapUsedAfterGc ?? Number.NaN),
        openFds: lastOpenFds,
        externalMB: mb(lastMemory.external),
        afterImportsRssMB: mb(started.afterImports.rss),
        ...(emulatorRss !== undefined ? { emulatorRssMB: mb(emulatorRss) } : {}),
      },
      warnings,
      warningSamples,
    };
  } finally {
    await operator.stop();
  }

  // 6. Clean up: this run's policies go (the next operator watches all namespaces).
  for (const ns of namespaces) {
    await kube.customObjects.deleteCollectionNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
    });
  }
  await waitForNoPolicies(kube, namespaces);
  return result;
}

/** A stored policy, as far as the bench reads it. */
interface StoredPolicy {
  status?: { anticipation?: { leading?: { state?: string; reason?: string } } };
}

/** The policies of the namespaces (at most `limit` of each). */
async function policiesIn(
  kube: KubeClients,
  namespaces: readonly string[],
  limit?: number,
): Promise<StoredPolicy[]> {
  const out: StoredPolicy[] = [];
  for (const namespace of namespaces) {
    const list = (await kube.customObjects.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
      ...(limit !== undefined ? { limit } : {}),
    })) as { items?: StoredPolicy[] };
    out.push(...(list.items ?? []));
  }
  return out;
}

/** How many policies of the namespaces show each leading-signal state in their status. */
async function leadingStatesOf(
  kube: KubeClients,
  namespaces: readonly string[],
): Promise<Record<string, number>> {
  const states: Record<string, number> = {};
  for (const p of await policiesIn(kube, namespaces)) {
    const l = p.status?.anticipation?.leading;
    const state = l?.state ? `${l.state}${l.reason ? ` (${l.reason})` : ""}` : "none";
    states[state] = (states[state] ?? 0) + 1;
  }
  return states;
}

/** Waits until the namespaces hold no policy (the next run creates the same names). */
async function waitForNoPolicies(kube: KubeClients, namespaces: readonly string[]): Promise<void> {
  for (let i = 0; (await policiesIn(kube, namespaces, 1)).length > 0; i++) {
    if (i > 300) throw new Error(`policies still present in ${namespaces.join(", ")} after 60 s`);
    await sleep(200);
  }
}

function countByApi(requests: readonly RequestRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of requests) out[apiOf(r)] = (out[apiOf(r)] ?? 0) + 1;
  return out;
}

/**
 * The same reads two ways, against the same emulator: the operator's batched cycle (one
 * CycleFetcher.read of every policy), and the per-resource approach (one ARM GET and one metrics
 * read — two getBatch queries, one per aggregation — per policy, CONCURRENCY at a time, as many as
 * the operator's workers).
 */
async function comparePerResource(
  emu: EmulatorProcess,
  azure: AzureAdapters,
  targets: readonly Target[],
): Promise<PerResourceComparison> {
  const cycleTargets: CycleTarget[] = targets.map((t) => ({
    key: `${t.namespace}/${t.name}`,
    resourceId: t.resourceId,
    ref: parseResourceId(t.resourceId),
    service: t.service,
    lookbackMs: (300 + 180) * 1000,
  }));
  // Batched: the second read of a fetcher, as in steady state (the first one also reads the native
  // autoscale settings, which are re-read every 5 minutes only, and each instance's unit ladders,
  // read in the background and re-read every 6 hours only).
  const fetcher = new CycleFetcher(azure, { now: Date.now });
  await fetcher.read(cycleTargets);
  await fetcher.laddersSettled();
  await control(emu, "DELETE", "/requests");
  let t0 = performance.now();
  await fetcher.read(cycleTargets);
  const batchedSeconds = (performance.now() - t0) / 1000;
  const batchedCalls = await emulatorCalls(emu);

  // Per resource.
  await control(emu, "DELETE", "/requests");
  let failures = 0;
  const end = new Date(Math.ceil(Date.now() / 60_000) * 60_000);
  const start = new Date(end.getTime() - (300 + 180 + 60) * 1000);
  t0 = performance.now();
  await limited(targets, CONCURRENCY, async (t) => {
    try {
      const instance = await azure.instances.get(t.resourceId);
      const r = await azure.metrics.read([{ resourceId: t.resourceId, region: instance.location }], {
        start,
        end,
      });
      if (r.failures.length > 0) failures++;
    } catch {
      failures++;
    }
  });
  const perResourceSeconds = (performance.now() - t0) / 1000;
  const perResourceCalls = await emulatorCalls(emu);
  const batchedByApi = countByApi(batchedCalls.requests);
  const perByApi = countByApi(perResourceCalls.requests);
  const perResourceTotal = perResourceCalls.calls.total;
  return {
    concurrency: CONCURRENCY,
    batched: { seconds: batchedSeconds, calls: batchedCalls.calls.total, byApi: batchedByApi },
    perResource: {
      seconds: perResourceSeconds,
      calls: perResourceTotal,
      byApi: perByApi,
      rateLimited: perResourceCalls.calls.rateLimited,
      failures,
    },
    callsRatio: perResourceTotal / Math.max(1, batchedCalls.calls.total),
    timeRatio: perResourceSeconds / batchedSeconds,
    metricsCallsRatio: perResourceCalls.calls.getBatch / Math.max(1, batchedCalls.calls.getBatch),
  };
}

// ---------------------------------------------------------------------------------------------
// Output

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** "1 policy", "1,000 policies". */
const policiesText = (n: number) => `${fmt(n, 0)} ${n === 1 ? "policy" : "policies"}`;

function modeText(r: SizeResult): string {
  return r.leadingSignal
    ? `a leading signal on each (${r.prometheus.servers} Prometheus stand-in(s), ${fmt(r.prometheus.latencyMs, 0)} ms)`
    : "no leading signal";
}

function printSize(r: SizeResult): string {
  const s = r.steady;
  const pr = r.perResource;
  const out: string[] = [];
  out.push(
    `\n=== ${policiesText(r.policies)}, ${modeText(r)} — ${r.subscriptions} subscription(s), ` +
      `${r.groups} subscription/region/type group(s), ${r.namespaces} namespace(s), poll every ${POLL_SECONDS} s ===`,
  );
  const rows: string[][] = [
    ["Azure calls per poll interval", "steady (mean)", "cold cycle", ...(pr ? ["per-resource"] : [])],
  ];
  const apis = API_ORDER.filter(
    (a) => s.byApiPerInterval[a] !== undefined || r.cold.byApi[a] !== undefined || pr?.perResource.byApi[a],
  );
  for (const api of apis) {
    rows.push([
      api,
      fmt(s.byApiPerInterval[api] ?? 0, 2),
      String(r.cold.byApi[api] ?? 0),
      ...(pr ? [String(pr.perResource.byApi[api] ?? 0)] : []),
    ]);
  }
  const steadyTotal = sum(Object.values(s.byApiPerInterval));
  const coldTotal = sum(Object.values(r.cold.byApi));
  rows.push(["total", fmt(steadyTotal, 2), String(coldTotal), ...(pr ? [String(pr.perResource.calls)] : [])]);
  out.push(table(rows));
  out.push(
    `poll cycles per interval: ${fmt(s.cyclesPerInterval, 2)} (${fmt(s.policiesPerCycle, 1)} policies per cycle, ` +
      `${fmt(s.azureCallsPerCycle, 2)} Azure calls per cycle); ` +
      `fewest possible getBatch calls: ${r.minimumGetBatchPerCycle}; ARM reads per subscription per interval: max ${s.maxArmReadsPerSubscription}`,
  );
  const p = r.prometheus;
  if (r.leadingSignal) {
    const outcomes = Object.entries(p.steady.byOutcomePerCycle)
      .map(([k, v]) => `${k} ${fmt(v, 2)}`)
      .join(", ");
    out.push(
      `Prometheus queries per cycle: ${fmt(p.steady.standInQueriesPerCycle, 2)} received by the stand-ins, ` +
        `${fmt(p.steady.operatorQueriesPerCycle, 2)} in the operator's /metrics (${outcomes || "none"}), ` +
        `${fmt(p.steady.cycleRecordQueriesPerCycle, 2)} sent by its client; cold cycle ${p.cold.standInQueries} / ${p.cold.operatorQueries}; ` +
        `at most ${p.steady.maxInFlight} open at once on one server; the signal in the policies' status: ` +
        Object.entries(p.leadingStates)
          .map(([k, v]) => `${k} ${v}`)
          .join(", "),
    );
    out.push(
      `Prometheus reads of a cycle (first query to last answer, alongside Azure's): steady p50 ${fmt(p.steady.readSecondsP50, 2)} s, ` +
        `max ${fmt(p.steady.readSecondsMax, 2)} s, cold ${fmt(p.cold.readSeconds, 2)} s; query duration mean ${fmt(p.steady.meanQueryMs)} ms ` +
        `steady, ${fmt(p.cold.meanQueryMs)} ms cold (/metrics, queue behind the per-server bound included)`,
    );
  } else {
    out.push(
      `Prometheus queries: ${fmt(p.steady.standInQueriesPerCycle, 2)} per cycle at the stand-ins, ` +
        `${fmt(p.steady.operatorQueriesPerCycle, 2)} in the operator's /metrics (no policy has a leading signal)`,
    );
  }
  out.push(
    `pass duration: steady p50 ${fmt(s.passP50Ms)} ms, p99 ${fmt(s.passP99Ms)} ms (${s.passes} passes); ` +
      `cold p50 ${fmt(r.cold.passP50Ms)} ms, p99 ${fmt(r.cold.passP99Ms)} ms`,
  );
  out.push(
    `full cycle, every policy due at once: ${fmt(r.cold.cycleSeconds, 2)} s ` +
      `(ARM lists ${fmt(r.cold.listSeconds, 2)} s, metrics ${fmt(r.cold.metricsSeconds, 2)} s` +
      `${r.leadingSignal ? `, Prometheus ${fmt(r.cold.leadingSeconds, 2)} s alongside` : ""}, passes ${fmt(r.cold.passesSeconds, 2)} s); ` +
      `steady cycles p50 ${fmt(s.cycleSecondsP50, 2)} s, max ${fmt(s.cycleSecondsMax, 2)} s`,
  );
  const cpuOthers = (k: "emulatorCpuMs" | "apiServerCpuMs" | "etcdCpuMs") => {
    const v = s.intervals.map((i) => i[k]).filter((x): x is number => x !== undefined);
    return v.length ? fmt(sum(v) / v.length, 0) : "–";
  };
  out.push(
    `CPU: operator ${fmt(s.cpuMsPerPolicyPerCycle, 2)} ms per policy per cycle (steady), ${fmt(r.cold.cpuMsPerPolicy, 2)} ms in the cold cycle (incl. start); ` +
      `per interval: emulator ${cpuOthers("emulatorCpuMs")} ms, kube-apiserver ${cpuOthers("apiServerCpuMs")} ms, etcd ${cpuOthers("etcdCpuMs")} ms, ` +
      `bench process ${fmt(p.steady.driverCpuMsPerInterval, 0)} ms (the Prometheus stand-ins and its own control calls)`,
  );
  out.push(
    `memory: operator RSS ${fmt(r.memory.rssMB)} MB (heap used ${fmt(r.memory.heapUsedMB)} MB of ${fmt(r.memory.heapTotalMB)} MB, ` +
      `${fmt(r.memory.heapUsedAfterGcMB)} MB after a full GC; ${r.memory.openFds} open file descriptors; ` +
      `${fmt(r.memory.afterImportsRssMB)} MB after the imports); emulator RSS ${fmt(r.memory.emulatorRssMB ?? Number.NaN)} MB`,
  );
  const kubeLine = Object.entries(s.kubeCalls)
    .map(([m, k]) => `${m} ${fmt(k.perInterval, 1)}/interval, p50 ${fmt(k.p50Ms)} ms, p99 ${fmt(k.p99Ms)} ms`)
    .join("; ");
  out.push(`Kubernetes calls of the passes (steady): ${kubeLine || "none"}`);
  const sw = s.statusWritesPerInterval;
  out.push(
    `status writes per interval (steady): ${fmt(sw.written, 1)} written, ${fmt(sw.skipped, 1)} skipped ` +
      `(the refresh alone: ${fmt(sw.refreshBound, 1)} — every policy once per ${DEFAULT_STATUS_REFRESH_MS / 1000} s)`,
  );
  out.push(
    `a stored policy: ${fmt(r.policyObject.bytes / 1024)} KB JSON (status ${fmt(r.policyObject.statusBytes / 1024)} KB, ` +
      `managedFields ${fmt(r.policyObject.managedFieldsBytes / 1024)} KB)`,
  );
  if (pr) {
    out.push(
      `per-resource approach (GET + metrics call per policy, ${pr.concurrency} at a time): ${pr.perResource.calls} calls in ` +
        `${fmt(pr.perResource.seconds, 2)} s${pr.perResource.rateLimited ? `, ${pr.perResource.rateLimited} throttled (429)` : ""}; ` +
        `batched: ${pr.batched.calls} calls in ${fmt(pr.batched.seconds, 2)} s → ${fmt(pr.callsRatio)}× the calls ` +
        `(${fmt(pr.metricsCallsRatio)}× the metrics calls), ${fmt(pr.timeRatio)}× the time`,
    );
  }
  const outcomes = Object.entries(s.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  out.push(`outcomes (steady): ${outcomes}; warnings logged: ${r.warnings}`);
  for (const w of r.warningSamples) out.push(`  warning: ${w.slice(0, 300)}`);
  return out.join("\n");
}

/** The runs of one size without and with leading signals, side by side. */
interface LeadingComparison {
  policies: number;
  /** Prometheus queries per steady cycle: stand-ins / operator's /metrics, without and with. */
  queriesPerCycle: { without: [number, number]; with: [number, number] };
  azureCallsPerCycle: { without: number; with: number };
  azureCallsColdCycle: { without: number; with: number };
  /** APIs whose steady calls per interval or cold-cycle calls differ between the runs. */
  azureDifferences: string[];
  cycleSecondsCold: { without: number; with: number };
  /** From the first Prometheus query of a cycle to its last answer, steady p50, seconds. */
  prometheusReadSecondsP50: { without: number; with: number };
  cycleSecondsSteadyP50: { without: number; with: number };
  cycleSecondsSteadyMax: { without: number; with: number };
  passP50Ms: { without: number; with: number };
  passP99Ms: { without: number; with: number };
  cpuMsPerPolicyPerCycle: { without: number; with: number };
  rssMB: { without: number; with: number };
  /** CPU of the bench process (the stand-ins and its control calls) per interval, ms. */
  benchProcessCpuMs: { without: number; with: number };
  policyKB: { without: number; with: number };
}

function compareLeading(without: SizeResult, withSignal: SizeResult): LeadingComparison {
  const pair = (f: (r: SizeResult) => number) => ({ without: f(without), with: f(withSignal) });
  const differences: string[] = [];
  for (const api of API_ORDER) {
    const a = without.steady.byApiPerInterval[api] ?? 0;
    const b = withSignal.steady.byApiPerInterval[api] ?? 0;
    if (a !== b) differences.push(`${api} steady ${fmt(a, 2)} → ${fmt(b, 2)} per interval`);
    const c = without.cold.byApi[api] ?? 0;
    const d = withSignal.cold.byApi[api] ?? 0;
    if (c !== d) differences.push(`${api} cold ${c} → ${d}`);
  }
  const queries = (r: SizeResult): [number, number] => [
    r.prometheus.steady.standInQueriesPerCycle,
    r.prometheus.steady.operatorQueriesPerCycle,
  ];
  return {
    policies: without.policies,
    queriesPerCycle: { without: queries(without), with: queries(withSignal) },
    azureCallsPerCycle: pair((r) => r.steady.azureCallsPerCycle),
    azureCallsColdCycle: pair((r) => sum(Object.values(r.cold.byApi))),
    azureDifferences: differences,
    cycleSecondsCold: pair((r) => r.cold.cycleSeconds),
    prometheusReadSecondsP50: pair((r) => r.prometheus.steady.readSecondsP50),
    cycleSecondsSteadyP50: pair((r) => r.steady.cycleSecondsP50),
    cycleSecondsSteadyMax: pair((r) => r.steady.cycleSecondsMax),
    passP50Ms: pair((r) => r.steady.passP50Ms),
    passP99Ms: pair((r) => r.steady.passP99Ms),
    cpuMsPerPolicyPerCycle: pair((r) => r.steady.cpuMsPerPolicyPerCycle),
    rssMB: pair((r) => r.memory.rssMB),
    benchProcessCpuMs: pair((r) => r.prometheus.steady.driverCpuMsPerInterval),
    policyKB: pair((r) => r.policyObject.bytes / 1024),
  };
}

function printComparison(c: LeadingComparison): string {
  const cell = (n: number, digits: number, unit: string) =>
    Number.isFinite(n) ? `${fmt(n, digits)}${unit}` : "–";
  const row = (label: string, p: { without: number; with: number }, digits: number, unit = "") => [
    label,
    cell(p.without, digits, unit),
    cell(p.with, digits, unit),
  ];
  const rows: string[][] = [
    ["", "no leading signal", "leading signal on each"],
    [
      "Prometheus queries per cycle (stand-ins / /metrics)",
      c.queriesPerCycle.without.map((n) => fmt(n, 2)).join(" / "),
      c.queriesPerCycle.with.map((n) => fmt(n, 2)).join(" / "),
    ],
    row("Azure calls per cycle, steady", c.azureCallsPerCycle, 2),
    row("Azure calls, cold cycle", c.azureCallsColdCycle, 0),
    row("Prometheus reads of a cycle, steady p50", c.prometheusReadSecondsP50, 2, " s"),
    row("full cycle, cold", c.cycleSecondsCold, 2, " s"),
    row("full cycle, steady p50", c.cycleSecondsSteadyP50, 2, " s"),
    row("full cycle, steady max", c.cycleSecondsSteadyMax, 2, " s"),
    row("pass p50, steady", c.passP50Ms, 1, " ms"),
    row("pass p99, steady", c.passP99Ms, 1, " ms"),
    row("operator CPU per policy per cycle", c.cpuMsPerPolicyPerCycle, 2, " ms"),
    row("operator RSS", c.rssMB, 0, " MB"),
    row("bench process CPU per interval (it holds the stand-ins)", c.benchProcessCpuMs, 0, " ms"),
    row("a stored policy", c.policyKB, 1, " KB"),
  ];
  return (
    `\n--- ${policiesText(c.policies)}: without and with a leading signal on every policy ---\n${table(rows)}` +
    (c.azureDifferences.length ? `\nAzure calls that differ: ${c.azureDifferences.join("; ")}` : "")
  );
}

function verdicts(results: readonly SizeResult[], comparisons: readonly LeadingComparison[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    const at = `${r.policies}${r.leadingSignal ? " (leading)" : ""}`;
    const getBatch = r.steady.byApiPerInterval["metrics:getBatch"] ?? 0;
    const okBatch = getBatch <= r.minimumGetBatchPerCycle;
    lines.push(
      `${at}: metrics calls per cycle ${fmt(getBatch, 2)} vs ≤ ${r.minimumGetBatchPerCycle} (one per 50 of a subscription/region/type and query) — ${okBatch ? "met" : "MISSED"}`,
    );
    const okArm = r.steady.maxArmReadsPerSubscription <= 1;
    lines.push(
      `${at}: ARM reads per subscription per cycle, nothing changing: max ${r.steady.maxArmReadsPerSubscription} vs ≤ 1 — ${okArm ? "met" : "MISSED"}` +
        " (one list per subscription and service, and per page of 100 instances)",
    );
    const p = r.prometheus;
    const expected = p.policiesWithSignal;
    const okQueries =
      p.steady.standInQueriesPerCycle === expected &&
      p.steady.operatorQueriesPerCycle === expected &&
      p.cold.standInQueries === expected &&
      p.cold.operatorQueries === expected;
    lines.push(
      `${at}: Prometheus queries per cycle ${fmt(p.steady.standInQueriesPerCycle, 2)} at the stand-ins, ` +
        `${fmt(p.steady.operatorQueriesPerCycle, 2)} in /metrics (cold ${p.cold.standInQueries} / ${p.cold.operatorQueries}) ` +
        `vs = ${expected} policies with a signal — ${okQueries ? "met" : "MISSED"}`,
    );
  }
  for (const c of comparisons) {
    const ok = c.azureDifferences.length === 0;
    lines.push(
      `${c.policies}: Azure calls unchanged by leading signals: ${fmt(c.azureCallsPerCycle.without, 2)} → ${fmt(c.azureCallsPerCycle.with, 2)} per cycle, ` +
        `cold ${c.azureCallsColdCycle.without} → ${c.azureCallsColdCycle.with} — ${ok ? "met" : `MISSED (${c.azureDifferences.join("; ")})`}`,
    );
  }
  if (comparisons.length === 0 && MODES.length === 1)
    lines.push(
      "Azure calls unchanged by leading signals: not compared (one mode only; the default runs both)",
    );
  for (const leading of MODES) {
    const runs = results.filter((r) => r.leadingSignal === leading);
    const big = runs.find((r) => r.policies === 1000) ?? runs.at(-1);
    if (!big) continue;
    const at = `${big.policies}${leading ? " (leading)" : ""}`;
    const worst = Math.max(big.cold.cycleSeconds, big.steady.cycleSecondsMax);
    lines.push(
      `${at}: full cycle ${fmt(big.steady.cycleSecondsP50, 2)} s steady (max ${fmt(big.steady.cycleSecondsMax, 2)} s), ` +
        `${fmt(big.cold.cycleSeconds, 2)} s cold vs ≤ 10 s — ${worst <= 10 ? "met" : "MISSED"}`,
    );
    lines.push(
      `${at}: operator RSS ${fmt(big.memory.rssMB)} MB vs < 150 MB — ${big.memory.rssMB < 150 ? "met" : "MISSED"}`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const begun = performance.now();
  const load = loadavg();
  log(
    `machine: ${availableParallelism()} CPU(s) (${cpus()[0]?.model ?? "?"}), ${fmt(mb(totalmem()) / 1024)} GB, ` +
      `load average ${load.map((l) => l.toFixed(2)).join(" ")}; node ${process.version}`,
  );
  const operatorScript = await bundleOperator();
  const binaries = await ensureControlPlaneBinaries({ onProgress: (l) => log(`[control plane build] ${l}`) });
  const cp = await startControlPlane({ binaries });
  log(`control plane ${binaries.versions.kubernetes} ready at ${cp.server}`);
  let emu: EmulatorProcess | undefined;
  let standIns: PrometheusStandIns | undefined;
  const results: SizeResult[] = [];
  const comparisons: LeadingComparison[] = [];
  try {
    const kubectl = (args: string[]) =>
      execFileAsync(binaries.kubectl, [`--kubeconfig=${cp.kubeconfigAdmin}`, ...args], { timeout: 120_000 });
    await kubectl(["apply", "--server-side", "-f", join(ROOT, "crds", `${CRD_NAME}.yaml`)]);
    // kubectl wait fails at once ("status.conditions accessor error") while the new CRD has no
    // conditions yet: asked again until the API server has written them.
    for (let i = 0; ; i++) {
      try {
        await kubectl(["wait", "--for=condition=Established", `crd/${CRD_NAME}`, "--timeout=60s"]);
        break;
      } catch (err) {
        if (i >= 20 || !String((err as { stderr?: unknown }).stderr).includes("accessor error")) throw err;
        await sleep(250);
      }
    }
    const kube = createKubeClients(loadKubeConfig({ kind: "file", path: cp.kubeconfigAdmin }));
    for (let i = 0; ; i++) {
      try {
        await kube.customObjects.listCustomObjectForAllNamespaces({
          group: GROUP,
          version: VERSION,
          resourcePlural: PLURAL,
          limit: 1,
        });
        break;
      } catch (err) {
        if (i > 100) throw err;
        await sleep(200);
      }
    }
    const pids = (await readFile(join(cp.dir, "pgids"), "utf8")).trim().split("\n").map(Number);
    const controlPlanePids = { apiServer: pids[0], etcd: pids[1] };

    emu = await startEmulatorProcess();
    log(`emulator process ${emu.child.pid} at ${emu.armEndpoint}`);
    const driverAzure = createAzureAdapters({
      credential: { getToken: async () => ({ token: "bench", expiresOnTimestamp: Date.now() + 3_600_000 }) },
      armEndpoint: emu.armEndpoint,
      metricsEndpoint: (region) =>
        (emu as EmulatorProcess).metricsEndpointTemplate.replaceAll("{region}", region),
      ca: emu.caPem,
    });
    standIns = await startPrometheusStandIns({
      servers: prometheusServersNeeded(),
      latencyMs: PROMETHEUS_LATENCY_MS,
      value: NEGOTIATE_RATE,
    });
    log(`${standIns.urls.length} Prometheus stand-in(s) from ${standIns.urls[0]}`);

    for (const [i, size] of SIZES.entries()) {
      const runs = await runSize(size, i, {
        cp,
        kube,
        emu,
        driverAzure,
        operatorScript,
        controlPlanePids,
        standIns,
      });
      results.push(...runs);
      const without = runs.find((r) => !r.leadingSignal);
      const withSignal = runs.find((r) => r.leadingSignal);
      if (without && withSignal) {
        const c = compareLeading(without, withSignal);
        comparisons.push(c);
        process.stdout.write(`${printComparison(c)}\n`);
      }
    }
  } finally {
    await standIns?.close();
    if (emu?.child.exitCode === null) {
      emu.child.kill("SIGTERM");
      await new Promise((r) => emu?.child.once("exit", r));
    }
    emu?.agent.destroy();
    await cp.stop();
  }

  const totalSeconds = (performance.now() - begun) / 1000;
  const lines = verdicts(results, comparisons);
  process.stdout.write(`\n=== targets ===\n${lines.join("\n")}\n`);
  process.stdout.write(
    `\nbench wall time ${fmt(totalSeconds / 60, 1)} min on ${availableParallelism()} CPU(s); ` +
      `load average at the end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} (other work on the machine shows here)\n`,
  );
  await mkdir(dirname(flags.out), { recursive: true });
  await writeFile(
    flags.out,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: {
          cpus: availableParallelism(),
          model: cpus()[0]?.model,
          memoryGB: mb(totalmem()) / 1024,
          loadAverageAtStart: load,
          loadAverageAtEnd: loadavg(),
          node: process.version,
        },
        settings: {
          sizes: SIZES,
          leadingModes: MODES.map((m) => (m ? "leading signal on every policy" : "no leading signal")),
          prometheus: {
            servers: PROMETHEUS_SERVERS ?? "one per namespace",
            latencyMs: PROMETHEUS_LATENCY_MS,
            negotiateRate: NEGOTIATE_RATE,
            connectionLifetimeSeconds: LIFETIME_SECONDS,
          },
          intervals: INTERVALS,
          pollSeconds: POLL_SECONDS,
          workers: WORKERS,
          perResourceConcurrency: CONCURRENCY,
          perRequestConnections: flags["per-request-connections"],
          operatorNodeOptions: flags["operator-node-options"],
          operatorBuild: flags["operator-build"],
          statusRefreshSeconds: STATUS_REFRESH_SECONDS,
          subscriptions: SUBSCRIPTIONS,
          regions: REGIONS,
          services: SERVICES,
          emulator: { speed: 1, noise: 0, armRateLimit: true, armPageSize: 100 },
        },
        totalSeconds,
        targets: lines,
        results,
        comparisons,
      },
      null,
      2,
    )}\n`,
  );
  log(`wrote ${flags.out}`);
}

/**
 * Bundles bench/operator-process.ts so that plain node runs it: with `--operator-build bundle`,
 * every package inlined and minified with the options of `npm run bundle` (what the image runs);
 * with `modules`, the packages left to node_modules and the code unminified, as
 * `node dist/cli/main.js` loads them.
 */
async function bundleOperator(): Promise<string> {
  const outfile = join(ROOT, "bench", ".build", "operator-process.mjs");
  const modules = flags["operator-build"] === "modules";
  await build({
    ...NODE_BUNDLE_OPTIONS,
    ...(modules ? { packages: "external", minify: false } : {}),
    entryPoints: [join(ROOT, "bench", "operator-process.ts")],
    outfile,
  });
  log(`operator process: ${modules ? "packages from node_modules" : "every package bundled"} (${outfile})`);
  return outfile;
}

await main();
// Keep-alive sockets of the SDK clients would hold the process open for minutes.
process.exit(0);
