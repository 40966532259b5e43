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
 * 2. N CapacityPolicies in ⌈N/100⌉ namespaces (at most 10), polled every 30 s;
 * 3. the real Operator, alone in a child process (bench/operator-process.ts, bundled with esbuild
 *    and run by plain node, as `node dist/…` would run it), watching all namespaces; its first poll
 *    cycle has every policy due at once (the "cold" full cycle); then three poll intervals are
 *    measured in steady state, each window opening just before a cycle;
 * 4. the per-resource approach on the same instances, from this process: one ARM GET and one
 *    metrics call per policy, against one batched read (the operator's CycleFetcher) of the same
 *    policies.
 *
 * Prints a table per size and a summary against the targets, and writes everything as JSON to
 * bench/results/latest.json (`--out` to change).
 *
 * Flags: --sizes 1,100,1000  --intervals 3  --poll 30  --workers 16  --concurrency 16  --out FILE
 * and, for experiments: --heap-snapshot (writes operator-<N>.heapsnapshot next to --out),
 * --per-request-connections (client-node's own transport: a new connection per Kubernetes call,
 * instead of the operator's shared pool),
 * --operator-node-options "<node flags>" (e.g. V8 heap limits for the operator process).
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
import { parseArgs, promisify } from "node:util";
import { build } from "esbuild";
import { API_VERSION, CRD_NAME, GROUP, KIND, PLURAL, VERSION } from "../src/api/index.js";
import {
  type AzureAdapters,
  createAzureAdapters,
  formatResourceId,
  parseResourceId,
} from "../src/azure/index.js";
import type { ServiceKind } from "../src/capacity/index.js";
import { CycleFetcher, type CycleTarget } from "../src/controller/fetch.js";
import { createKubeClients, type KubeClients, loadKubeConfig } from "../src/kube/client.js";
import {
  type ControlPlane,
  ensureControlPlaneBinaries,
  startControlPlane,
} from "../src/localcluster/index.js";
import type {
  CycleRecord,
  OperatorProcessConfig,
  ParentMessage,
  PassRecord,
  ProcessSample,
  WorkerMessage,
} from "./operator-process.js";

const execFileAsync = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

// ---------------------------------------------------------------------------------------------
// Settings

const { values: flags } = parseArgs({
  options: {
    sizes: { type: "string", default: "1,100,1000" },
    intervals: { type: "string", default: "3" },
    poll: { type: "string", default: "30" },
    workers: { type: "string", default: "16" },
    concurrency: { type: "string", default: "16" },
    out: { type: "string", default: join(ROOT, "bench", "results", "latest.json") },
    "heap-snapshot": { type: "boolean", default: false },
    "per-request-connections": { type: "boolean", default: false },
    "operator-node-options": { type: "string", default: "" },
  },
});
const SIZES = flags.sizes.split(",").map((s) => Number(s.trim()));
const INTERVALS = Number(flags.intervals);
const POLL_SECONDS = Number(flags.poll);
const WORKERS = Number(flags.workers);
const CONCURRENCY = Number(flags.concurrency);
for (const [name, v] of [
  ["sizes", Math.min(...SIZES)],
  ["intervals", INTERVALS],
  ["poll", POLL_SECONDS],
  ["workers", WORKERS],
  ["concurrency", CONCURRENCY],
] as const) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be whole numbers ≥ 1`);
}

const SUBSCRIPTIONS = 4;
const REGIONS = ["westeurope", "eastus", "southeastasia"] as const;
const SERVICES: readonly ServiceKind[] = ["SignalR", "WebPubSub"];
const CONNECTIONS = 1000;
const UNITS = 2;
const POLICIES_PER_NAMESPACE = 100;
const MAX_NAMESPACES = 10;
const COLD_TIMEOUT_MS = 300_000;

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
      name: `p-${String(i).padStart(4, "0")}`,
    };
  });
  return { targets, namespaces };
}

/** The fewest getBatch calls that can read these targets: ⌈n/50⌉ per subscription, region and type. */
function minimumGetBatch(targets: readonly Target[]): { groups: number; calls: number } {
  const groups = new Map<string, number>();
  for (const t of targets) {
    const k = `${t.subscriptionId}|${t.region}|${t.service}`;
    groups.set(k, (groups.get(k) ?? 0) + 1);
  }
  let calls = 0;
  for (const n of groups.values()) calls += Math.ceil(n / 50);
  return { groups: groups.size, calls };
}

function policyBody(t: Target) {
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
      // seasonal history reads are counted apart (src/azure/history.test.ts: 20 getBatch calls an
      // hour for 1,000 policies).
      anticipation: { mode: "Enabled", headroom: { peakPercent: 50, horizon: "2h" } },
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
  cpuMs: number;
  emulatorCpuMs?: number;
  apiServerCpuMs?: number;
  etcdCpuMs?: number;
}

interface SizeResult {
  policies: number;
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
    passesSeconds: number;
    byApi: Record<string, number>;
    passP50Ms: number;
    passP99Ms: number;
    cpuMsPerPolicy: number;
  };
  steady: {
    intervals: IntervalResult[];
    byApiPerInterval: Record<string, number>;
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
  };
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
  perResource: {
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
  };
}

async function runSize(
  size: number,
  sizeIndex: number,
  cp: ControlPlane,
  kube: KubeClients,
  emu: EmulatorProcess,
  driverAzure: AzureAdapters,
  operatorScript: string,
  controlPlanePids: { apiServer: number | undefined; etcd: number | undefined },
): Promise<SizeResult> {
  const { targets, namespaces } = layout(size, sizeIndex);
  const minimum = minimumGetBatch(targets);
  log(
    `${size} policies: ${minimum.groups} subscription/region/type groups, ${namespaces.length} namespace(s)`,
  );

  // 1. Instances.
  let t0 = performance.now();
  await limited(targets, 16, async (t) => {
    await control(emu, "POST", "/instances", {
      resourceId: t.resourceId,
      location: t.region,
      sku: "Premium_P1",
      units: UNITS,
      connections: CONNECTIONS,
    });
  });
  const instancesSeconds = (performance.now() - t0) / 1000;

  // 2. Policies.
  t0 = performance.now();
  for (const ns of namespaces) await kube.core.createNamespace({ body: { metadata: { name: ns } } });
  await limited(targets, 16, async (t) => {
    await kube.customObjects.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: t.namespace,
      plural: PLURAL,
      body: policyBody(t),
    });
  });
  const policiesSeconds = (performance.now() - t0) / 1000;
  log(
    `created ${size} instances in ${fmt(instancesSeconds)} s and ${size} policies in ${fmt(policiesSeconds)} s`,
  );

  // 3. The operator.
  await control(emu, "DELETE", "/requests");
  const operator = new OperatorProcess(operatorScript, {
    kubeconfig: cp.kubeconfigAdmin,
    armEndpoint: emu.armEndpoint,
    metricsEndpointTemplate: emu.metricsEndpointTemplate,
    caPem: emu.caPem,
    expected: size,
    workers: WORKERS,
    perRequestConnections: flags["per-request-connections"],
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
      `cold cycle: ${coldCycle ? fmt((coldCycle.endMs - coldCycle.startMs) / 1000, 2) : "?"} s for ${coldCycle?.policies ?? 0} policies`,
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
    let lastSample = coldSample;
    let lastMemory = coldSample.memory;
    let lastOpenFds = coldSample.openFds;
    for (let w = 0; w < INTERVALS; w++, windowStart += pollMs) {
      await sleepUntil(windowStart);
      await control(emu, "DELETE", "/requests");
      const before = await operator.sample();
      steadyPasses.push(...before.passes);
      steadyCycles.push(...before.cycles);
      const emuBefore = procStats(emu.child.pid);
      const apiBefore = procStats(controlPlanePids.apiServer);
      const etcdBefore = procStats(controlPlanePids.etcd);
      const started = performance.now();
      await sleepUntil(windowStart + pollMs);
      const calls = await emulatorCalls(emu);
      const after = await operator.sample();
      const seconds = (performance.now() - started) / 1000;
      const emuAfter = procStats(emu.child.pid);
      const apiAfter = procStats(controlPlanePids.apiServer);
      const etcdAfter = procStats(controlPlanePids.etcd);
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
        cpuMs: (after.cpu.user + after.cpu.system - (before.cpu.user + before.cpu.system)) / 1000,
        ...(emuBefore && emuAfter ? { emulatorCpuMs: emuAfter.cpuMs - emuBefore.cpuMs } : {}),
        ...(apiBefore && apiAfter ? { apiServerCpuMs: apiAfter.cpuMs - apiBefore.cpuMs } : {}),
        ...(etcdBefore && etcdAfter ? { etcdCpuMs: etcdAfter.cpuMs - etcdBefore.cpuMs } : {}),
      });
      warnings = after.warnings;
      warningSamples = after.warningSamples;
      lastSample = after;
      lastMemory = after.memory;
      lastOpenFds = after.openFds;
      log(
        `interval ${w + 1}/${INTERVALS}: ${after.passes.length} passes in ${after.cycles.length} cycle(s), ` +
          `${calls.calls.total} Azure calls, CPU ${fmt(intervals.at(-1)?.cpuMs ?? 0, 0)} ms`,
      );
    }
    void lastSample;
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

    // Stop the operator before the comparison so that it does not poll meanwhile.
    await operator.stop(
      flags["heap-snapshot"] ? join(dirname(flags.out), `operator-${size}.heapsnapshot`) : undefined,
    );

    // 5. Per-resource approach vs one batched read, same instances, from this process.
    const comparison = await comparePerResource(emu, driverAzure, targets);

    result = {
      policies: size,
      namespaces: namespaces.length,
      groups: minimum.groups,
      subscriptions: new Set(targets.map((t) => t.subscriptionId)).size,
      minimumGetBatchPerCycle: minimum.calls,
      setupSeconds: {
        instances: instancesSeconds,
        policies: policiesSeconds,
        operatorStart: operatorStartSeconds,
      },
      cold: {
        cycleSeconds: coldCycle ? (coldCycle.endMs - coldCycle.startMs) / 1000 : Number.NaN,
        fetchSeconds: coldCycle ? (coldCycle.fetchEndMs - coldCycle.startMs) / 1000 : Number.NaN,
        listSeconds: coldCycle ? (coldCycle.metricsStartMs - coldCycle.startMs) / 1000 : Number.NaN,
        metricsSeconds: coldCycle ? (coldCycle.metricsEndMs - coldCycle.metricsStartMs) / 1000 : Number.NaN,
        passesSeconds: coldCycle ? (coldCycle.endMs - coldCycle.fetchEndMs) / 1000 : Number.NaN,
        byApi: countByApi(coldCalls.requests),
        passP50Ms: quantile(coldDurations, 0.5),
        passP99Ms: quantile(coldDurations, 0.99),
        cpuMsPerPolicy: coldCpuMs / size,
      },
      steady: {
        intervals,
        byApiPerInterval,
        maxArmReadsPerSubscription,
        cyclesPerInterval: intervals.reduce((s, i) => s + i.cycles, 0) / intervals.length,
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
      perResource: comparison,
    };
  } finally {
    await operator.stop();
  }

  // 6. Clean up: this size's policies go (the next operator watches all namespaces).
  for (const ns of namespaces) {
    await kube.customObjects.deleteCollectionNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
    });
  }
  return result;
}

function countByApi(requests: readonly RequestRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of requests) out[apiOf(r)] = (out[apiOf(r)] ?? 0) + 1;
  return out;
}

/**
 * The same reads two ways, against the same emulator: the operator's batched cycle (one
 * CycleFetcher.read of every policy), and the per-resource approach (one ARM GET and one metrics
 * call per policy, CONCURRENCY at a time — as many as the operator's workers).
 */
async function comparePerResource(
  emu: EmulatorProcess,
  azure: AzureAdapters,
  targets: readonly Target[],
): Promise<SizeResult["perResource"]> {
  const cycleTargets: CycleTarget[] = targets.map((t) => ({
    key: `${t.namespace}/${t.name}`,
    resourceId: t.resourceId,
    ref: parseResourceId(t.resourceId),
    service: t.service,
    lookbackMs: (300 + 180) * 1000,
  }));
  // Batched: the second read of a fetcher, as in steady state (the first one also reads the native
  // autoscale settings, which are re-read every 5 minutes only).
  const fetcher = new CycleFetcher(azure, { now: Date.now });
  await fetcher.read(cycleTargets);
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

function printSize(r: SizeResult): string {
  const s = r.steady;
  const out: string[] = [];
  out.push(
    `\n=== ${r.policies} ${r.policies === 1 ? "policy" : "policies"} — ${r.subscriptions} subscription(s), ` +
      `${r.groups} subscription/region/type group(s), ${r.namespaces} namespace(s), poll every ${POLL_SECONDS} s ===`,
  );
  const rows: string[][] = [["Azure calls per poll interval", "steady (mean)", "cold cycle", "per-resource"]];
  const apis = API_ORDER.filter(
    (a) =>
      s.byApiPerInterval[a] !== undefined ||
      r.cold.byApi[a] !== undefined ||
      r.perResource.perResource.byApi[a],
  );
  for (const api of apis) {
    rows.push([
      api,
      fmt(s.byApiPerInterval[api] ?? 0, 2),
      String(r.cold.byApi[api] ?? 0),
      String(r.perResource.perResource.byApi[api] ?? 0),
    ]);
  }
  const steadyTotal = Object.values(s.byApiPerInterval).reduce((a, b) => a + b, 0);
  const coldTotal = Object.values(r.cold.byApi).reduce((a, b) => a + b, 0);
  rows.push(["total", fmt(steadyTotal, 2), String(coldTotal), String(r.perResource.perResource.calls)]);
  out.push(table(rows));
  out.push(
    `poll cycles per interval: ${fmt(s.cyclesPerInterval, 2)} (${fmt(s.policiesPerCycle, 1)} policies per cycle); ` +
      `fewest possible getBatch calls: ${r.minimumGetBatchPerCycle}; ARM reads per subscription per interval: max ${s.maxArmReadsPerSubscription}`,
  );
  out.push(
    `pass duration: steady p50 ${fmt(s.passP50Ms)} ms, p99 ${fmt(s.passP99Ms)} ms (${s.passes} passes); ` +
      `cold p50 ${fmt(r.cold.passP50Ms)} ms, p99 ${fmt(r.cold.passP99Ms)} ms`,
  );
  out.push(
    `full cycle, every policy due at once: ${fmt(r.cold.cycleSeconds, 2)} s ` +
      `(ARM lists ${fmt(r.cold.listSeconds, 2)} s, metrics ${fmt(r.cold.metricsSeconds, 2)} s, passes ${fmt(r.cold.passesSeconds, 2)} s); ` +
      `steady cycles p50 ${fmt(s.cycleSecondsP50, 2)} s, max ${fmt(s.cycleSecondsMax, 2)} s`,
  );
  const cpuOthers = (k: "emulatorCpuMs" | "apiServerCpuMs" | "etcdCpuMs") => {
    const v = s.intervals.map((i) => i[k]).filter((x): x is number => x !== undefined);
    return v.length ? fmt(v.reduce((a, b) => a + b, 0) / v.length, 0) : "–";
  };
  out.push(
    `CPU: operator ${fmt(s.cpuMsPerPolicyPerCycle, 2)} ms per policy per cycle (steady), ${fmt(r.cold.cpuMsPerPolicy, 2)} ms in the cold cycle (incl. start); ` +
      `per interval: emulator ${cpuOthers("emulatorCpuMs")} ms, kube-apiserver ${cpuOthers("apiServerCpuMs")} ms, etcd ${cpuOthers("etcdCpuMs")} ms`,
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
  out.push(
    `a stored policy: ${fmt(r.policyObject.bytes / 1024)} KB JSON (status ${fmt(r.policyObject.statusBytes / 1024)} KB, ` +
      `managedFields ${fmt(r.policyObject.managedFieldsBytes / 1024)} KB)`,
  );
  const pr = r.perResource;
  out.push(
    `per-resource approach (GET + metrics call per policy, ${pr.concurrency} at a time): ${pr.perResource.calls} calls in ` +
      `${fmt(pr.perResource.seconds, 2)} s${pr.perResource.rateLimited ? `, ${pr.perResource.rateLimited} throttled (429)` : ""}; ` +
      `batched: ${pr.batched.calls} calls in ${fmt(pr.batched.seconds, 2)} s → ${fmt(pr.callsRatio)}× the calls ` +
      `(${fmt(pr.metricsCallsRatio)}× the metrics calls), ${fmt(pr.timeRatio)}× the time`,
  );
  const outcomes = Object.entries(s.outcomes)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  out.push(`outcomes (steady): ${outcomes}; warnings logged: ${r.warnings}`);
  for (const w of r.warningSamples) out.push(`  warning: ${w.slice(0, 300)}`);
  return out.join("\n");
}

function verdicts(results: readonly SizeResult[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    const getBatch = r.steady.byApiPerInterval["metrics:getBatch"] ?? 0;
    const okBatch = getBatch <= r.minimumGetBatchPerCycle;
    lines.push(
      `${r.policies}: metrics calls per cycle ${fmt(getBatch, 2)} vs ≤ ${r.minimumGetBatchPerCycle} (one per 50 of a subscription/region/type) — ${okBatch ? "met" : "MISSED"}`,
    );
    const okArm = r.steady.maxArmReadsPerSubscription <= 1;
    lines.push(
      `${r.policies}: ARM reads per subscription per cycle, nothing changing: max ${r.steady.maxArmReadsPerSubscription} vs ≤ 1 — ${okArm ? "met" : "MISSED"}` +
        " (one list per subscription and service, and per page of 100 instances)",
    );
  }
  const big = results.find((r) => r.policies === 1000) ?? results.at(-1);
  if (big) {
    const worst = Math.max(big.cold.cycleSeconds, big.steady.cycleSecondsMax);
    lines.push(
      `${big.policies}: full cycle ${fmt(big.steady.cycleSecondsP50, 2)} s steady (max ${fmt(big.steady.cycleSecondsMax, 2)} s), ` +
        `${fmt(big.cold.cycleSeconds, 2)} s cold vs ≤ 10 s — ${worst <= 10 ? "met" : "MISSED"}`,
    );
    lines.push(
      `${big.policies}: operator RSS ${fmt(big.memory.rssMB)} MB vs < 150 MB — ${big.memory.rssMB < 150 ? "met" : "MISSED"}`,
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
  const results: SizeResult[] = [];
  try {
    const kubectl = (args: string[]) =>
      execFileAsync(binaries.kubectl, [`--kubeconfig=${cp.kubeconfigAdmin}`, ...args], { timeout: 120_000 });
    await kubectl(["apply", "--server-side", "-f", join(ROOT, "crds", `${CRD_NAME}.yaml`)]);
    await kubectl(["wait", "--for=condition=Established", `crd/${CRD_NAME}`, "--timeout=60s"]);
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

    for (const [i, size] of SIZES.entries()) {
      const r = await runSize(size, i, cp, kube, emu, driverAzure, operatorScript, controlPlanePids);
      results.push(r);
      process.stdout.write(`${printSize(r)}\n`);
    }
  } finally {
    if (emu?.child.exitCode === null) {
      emu.child.kill("SIGTERM");
      await new Promise((r) => emu?.child.once("exit", r));
    }
    emu?.agent.destroy();
    await cp.stop();
  }

  const totalSeconds = (performance.now() - begun) / 1000;
  const lines = verdicts(results);
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
          intervals: INTERVALS,
          pollSeconds: POLL_SECONDS,
          workers: WORKERS,
          perResourceConcurrency: CONCURRENCY,
          perRequestConnections: flags["per-request-connections"],
          operatorNodeOptions: flags["operator-node-options"],
          subscriptions: SUBSCRIPTIONS,
          regions: REGIONS,
          services: SERVICES,
          emulator: { speed: 1, noise: 0, armRateLimit: true, armPageSize: 100 },
        },
        totalSeconds,
        targets: lines,
        results,
      },
      null,
      2,
    )}\n`,
  );
  log(`wrote ${flags.out}`);
}

/** Bundles bench/operator-process.ts (packages stay external) so that plain node runs it. */
async function bundleOperator(): Promise<string> {
  const outfile = join(ROOT, "bench", ".build", "operator-process.mjs");
  await build({
    entryPoints: [join(ROOT, "bench", "operator-process.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    packages: "external",
    outfile,
    logLevel: "warning",
  });
  return outfile;
}

await main();
// Keep-alive sockets of the SDK clients would hold the process open for minutes.
process.exit(0);
