/**
 * The soak: the real operator, alone in its process, against the local control plane and the
 * HTTPS emulator on a virtual clock, with many policies, changing demand and faults injected at
 * random (a fixed seed gives the same schedule) — and what must never happen counted:
 *
 * - **duplicate ARM writes**: an accepted update whose target is the capacity already in place,
 *   or that arrives while the instance's previous accepted update still runs;
 * - **scale-ins on unknown data**: a scale-in sent while the instance's latest metrics read was
 *   not answered with data (refused, hung, null or empty series). Also reported, not counted as
 *   failures: scale-ins sent less than 5 virtual minutes after the instance's demand rose, and
 *   scale-ins below the connections of the moment at 100 % — each sample lists the instance's
 *   demand changes, so a reader sees whether the decision's data (2 minutes behind) could know;
 * - **stalled cycles**: a policy without a pass for longer than its poll interval plus the poll
 *   cycle's deadline plus the readiness margin (real time: deadlines are real), or a poll cycle
 *   that took that long;
 * - the operator's **memory** (RSS and heap after a full garbage collection) after the warm-up,
 *   every few virtual minutes, and at the end: a leak grows the heap after collection, lazy
 *   collection only the RSS.
 *
 * Faults (rules of the emulator's fault table, each for a few virtual minutes or a few requests):
 * ARM 429 with Retry-After in seconds and as a date, 409, 500 and 503 on reads and writes, resets
 * and hangs on reads; Azure Monitor 429 (seconds and date), 503, 401, 403, resets, hangs, null and
 * empty series — on one subscription, region or instance at a time. Updates reported Succeeded but
 * not applied are left out (an instance that ignores updates is retried by design; its own test
 * covers it).
 *
 * `npm run soak -- --help` for the flags; `runSoak` for tests (test/reliability/soak.test.ts).
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, InvalidArgumentError } from "commander";
import pLimit from "p-limit";
import { API_VERSION, GROUP, KIND, PLURAL, VERSION } from "../src/api/index.js";
import { metricQueries } from "../src/azure/query-plan.js";
import { candidates } from "../src/capacity/skus.js";
import { DEFAULT_POLL_CYCLE_TIMEOUT_MS, DEFAULT_READINESS_MARGIN_MS } from "../src/controller/cycle-watch.js";
import type { FaultSpec, RequestRecord, RunningEmulator } from "../src/emulator/index.js";
import { startEmulator } from "../src/emulator/index.js";
import { createKubeClients, loadKubeConfig } from "../src/kube/client.js";
import { noise } from "../src/traffic/noise.js";
import type {
  OperatorProcessConfig,
  ParentMessage,
  ProcessSample,
  WorkerMessage,
} from "./operator-process.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const MINUTE = 60_000;
const SUBSCRIPTIONS = [
  "11111111-1111-4111-8111-111111111111",
  "22222222-2222-4222-8222-222222222222",
  "33333333-3333-4333-8333-333333333333",
];
const REGIONS = ["westeurope", "eastus"];
/** Poll interval of the soak's policies, seconds (the CRD's default). */
const POLL_SECONDS = 30;
/** Connections a Premium_P1 unit holds (seed tier table: 1,000 per unit). */
const CONNECTIONS_PER_UNIT = 1000;
/** How long after a rise of demand a scale-in counts as "after a rise", virtual minutes. */
const RISE_LOOKBACK_MINUTES = 5;
/** The aggregation of the query that reads the metrics the soak's policies use (connections, server load). */
const READ_AGGREGATION = metricQueries("SignalR").find((q) => q.fields.includes("connections"))?.aggregation;

export interface SoakOptions {
  /** Admin kubeconfig of the control plane (the CRD must be installed). */
  kubeconfig: string;
  /** Policies (and instances), e.g. 300. */
  policies: number;
  /** Virtual minutes with faults, after the warm-up, e.g. 30. */
  virtualMinutes: number;
  /** Virtual minutes without faults or demand change first, so every policy settles (default 8). */
  warmupMinutes?: number;
  /** Virtual ms per real ms (default 6). */
  speed?: number;
  /** Seed of the fault and demand schedule. */
  seed: string;
  /** Mean fault rules added per virtual minute (default 3). */
  faultsPerMinute?: number;
  /** Node options of the operator process (e.g. "--max-old-space-size=256"). */
  operatorNodeOptions?: string[];
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** Memory of the operator process at one point, MB. */
export interface MemoryPoint {
  virtualMinute: number;
  rssMb: number;
  heapUsedMb: number;
  /** Heap used right after a full garbage collection. */
  heapAfterGcMb: number;
}

export interface SoakResult {
  policies: number;
  virtualMinutes: number;
  warmupMinutes: number;
  speed: number;
  seed: string;
  realSeconds: number;
  /** Fault rules added, by kind, and requests they answered. */
  faultRules: number;
  faultRulesByKind: Record<string, number>;
  faultedRequests: number;
  armWritesAccepted: number;
  armWritesRefused: number;
  duplicateArmWrites: number;
  duplicateSamples: string[];
  scaleOuts: number;
  scaleIns: number;
  /**
   * Scale-ins sent while the instance's latest metrics read was not answered with data (a fault
   * answered it, or it hung): a scale-in on unknown data. Must be 0.
   */
  scaleInsOnUnknownData: number;
  /**
   * Scale-ins sent less than {@link RISE_LOOKBACK_MINUTES} virtual minutes after the instance's
   * demand rose: the decision's data (the ingestion delay is 2 minutes) may be older than the rise.
   * Reported, not counted as failures.
   */
  scaleInsAfterRise: number;
  /** Scale-ins to fewer units than the connections at that moment need at 100 %. Reported. */
  scaleInsBelowConnections: number;
  /** Each scale-in of the three kinds above: when, which instance, the sizes and the faults near it. */
  scaleInSamples: string[];
  passes: number;
  passErrors: number;
  /** Longest time between two passes of one policy (or since the last one at the end), real s. */
  maxPassGapSeconds: number;
  /** Longest poll cycle, real s. */
  maxCycleSeconds: number;
  /**
   * The bound both are held to, real s: the poll interval (30 s ÷ speed) + the poll cycle's
   * deadline (60 s) + the readiness margin (15 s) — when `/readyz` calls a cycle overdue.
   */
  stallBoundSeconds: number;
  stalledPolicies: number;
  stalledCycles: number;
  memory: MemoryPoint[];
}

/** A deterministic value in [0, 1) for the soak's `seed`, `step` and `channel`. */
function uniform(seed: string, step: number, channel: number): number {
  return Math.min(0.999999, (noise(seed, step, channel) + 1) / 2);
}

/** The smallest Premium_P1 unit count that holds `connections` at 80 %. */
function unitsFor(connections: number): number {
  const ladder = candidates(["Premium_P1"]).map((c) => c.units);
  return ladder.find((u) => u * CONNECTIONS_PER_UNIT * 0.8 >= connections) ?? (ladder.at(-1) as number);
}

interface Instance {
  id: string;
  subscription: string;
  region: string;
  rising: boolean;
  connections: number;
  /** Its demand changes, oldest first: virtual minute since the start, connections before and after (the last 8). */
  changes: { minute: number; from: number; connections: number }[];
}

function instancesFor(count: number, seed: string): Instance[] {
  return Array.from({ length: count }, (_, i) => {
    const subscription = SUBSCRIPTIONS[i % SUBSCRIPTIONS.length] as string;
    return {
      id: `/subscriptions/${subscription}/resourceGroups/rg-soak/providers/Microsoft.SignalRService/SignalR/soak-${i}`,
      subscription,
      region: REGIONS[Math.floor(i / SUBSCRIPTIONS.length) % REGIONS.length] as string,
      rising: i % 2 === 0,
      connections: Math.round(1000 + uniform(seed, i, 1) * 15_000),
      changes: [],
    };
  });
}

function policyBody(ns: string, i: number, inst: Instance): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: `soak-${i}`, namespace: ns },
    spec: {
      target: { service: "SignalR", resourceId: inst.id },
      units: { min: 1, max: 100 },
      skus: ["Premium_P1"],
      metrics: {
        connections: { targetPercent: 80 },
        serverLoad: { targetPercent: 70 },
        window: "5m",
        ingestionDelay: "2m",
      },
      behavior: {
        scaleUp: {
          stabilizationWindowSeconds: 0,
          policies: [{ type: "Percent", value: 100, periodSeconds: 60 }],
        },
        scaleDown: {
          stabilizationWindowSeconds: 300,
          policies: [{ type: "Percent", value: 50, periodSeconds: 300 }],
          // The soak counts scale-ins made on unknown data: every scale-in the window allows is made.
          disruption: { policy: "Ignore" },
        },
        settleSeconds: 60,
      },
      fallback: { failureThreshold: 3, action: "Hold" },
      pollIntervalSeconds: POLL_SECONDS,
    },
  };
}

/**
 * The fault menu: a rule for one subscription, region or instance, chosen by `pick` ∈ [0, 1), and
 * which instances it can touch.
 */
function faultFor(
  pick: number,
  scope: number,
  instances: readonly Instance[],
  minute: number,
): { kind: string; spec: FaultSpec; touches: (i: Instance) => boolean } {
  const inst = instances[Math.floor(scope * instances.length)] as Instance;
  const sub = `/subscriptions/${inst.subscription}/**`;
  const batch = `/metrics/${inst.region}/**`;
  const menu: (FaultSpec & { kind: string })[] = [
    {
      kind: "arm-429-seconds",
      path: sub,
      times: 4,
      action: { kind: "status", status: 429, retryAfterSeconds: 60 },
    },
    {
      kind: "arm-429-date",
      path: sub,
      times: 4,
      action: { kind: "status", status: 429, retryAfterSeconds: 90, retryAfterFormat: "date" },
    },
    {
      kind: "arm-409-write",
      method: "PATCH",
      path: sub,
      times: 3,
      action: { kind: "status", status: 409, code: "AnotherOperationInProgress" },
    },
    { kind: "arm-500-read", method: "GET", path: sub, times: 3, action: { kind: "status", status: 500 } },
    { kind: "arm-503-write", method: "PATCH", path: sub, times: 2, action: { kind: "status", status: 503 } },
    { kind: "arm-reset-read", method: "GET", path: sub, times: 2, action: { kind: "reset" } },
    { kind: "arm-hang-read", method: "GET", path: sub, times: 1, action: { kind: "hang" } },
    {
      kind: "metrics-429-seconds",
      path: batch,
      times: 3,
      action: { kind: "status", status: 429, retryAfterSeconds: 60 },
    },
    {
      kind: "metrics-429-date",
      path: batch,
      times: 3,
      action: { kind: "status", status: 429, retryAfterSeconds: 60, retryAfterFormat: "date" },
    },
    { kind: "metrics-503", path: batch, times: 3, action: { kind: "status", status: 503 } },
    { kind: "metrics-401", path: batch, times: 2, action: { kind: "status", status: 401 } },
    { kind: "metrics-403", path: batch, times: 2, action: { kind: "status", status: 403 } },
    { kind: "metrics-reset", path: batch, times: 2, action: { kind: "reset" } },
    { kind: "metrics-hang", path: batch, times: 1, action: { kind: "hang" } },
    {
      kind: "metrics-null-series",
      path: batch,
      resourceIds: [inst.id],
      times: 4,
      action: { kind: "nullSeries" },
    },
    {
      kind: "metrics-empty-series",
      path: batch,
      resourceIds: [inst.id],
      times: 4,
      action: { kind: "emptyTimeseries" },
    },
  ];
  const { kind, ...chosen } = menu[Math.floor(pick * menu.length)] as FaultSpec & { kind: string };
  const touches = (i: Instance) =>
    chosen.resourceIds
      ? chosen.resourceIds.includes(i.id)
      : kind.startsWith("arm")
        ? i.subscription === inst.subscription
        : i.region === inst.region;
  return { kind, spec: { ...chosen, after: minute % 3 }, touches };
}

class OperatorChild {
  readonly child: ChildProcess;
  readonly coldDone: Promise<void>;
  readonly exited: Promise<void>;
  #next = 1;
  readonly #waiting = new Map<number, (s: ProcessSample) => void>();

  constructor(config: OperatorProcessConfig, nodeOptions: readonly string[]) {
    this.child = fork(join(ROOT, "bench", "operator-process.ts"), [], {
      cwd: ROOT,
      execArgv: ["--import", "tsx", "--expose-gc", ...nodeOptions],
      env: { ...process.env, BENCH_OPERATOR_CONFIG: JSON.stringify(config) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    let fail!: (err: Error) => void;
    const failed = new Promise<never>((_, rej) => {
      fail = rej;
    });
    failed.catch(() => {});
    let cold!: () => void;
    this.coldDone = Promise.race([new Promise<void>((r) => (cold = r)), failed]);
    this.exited = new Promise((r) => this.child.once("exit", () => r()));
    this.child.once("exit", (code) => fail(new Error(`the operator process exited with ${code}`)));
    this.child.on("message", (m: WorkerMessage) => {
      if (m.type === "coldDone") cold();
      else if (m.type === "error") fail(new Error(m.message));
      else if (m.type === "sample") {
        const { type: _, id, ...sample } = m;
        this.#waiting.get(id)?.(sample);
        this.#waiting.delete(id);
      }
    });
  }

  sample(gc: boolean): Promise<ProcessSample> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, resolve);
      this.child.send({ type: "sample", id, gc } satisfies ParentMessage, (err) => err && reject(err));
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) this.child.send({ type: "stop" } satisfies ParentMessage);
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 15_000);
    await this.exited;
    clearTimeout(timer);
  }
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/** Runs one soak. @throws when the operator process fails to start or exits early. */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const speed = options.speed ?? 6;
  const warmupMinutes = options.warmupMinutes ?? 8;
  const faultsPerMinute = options.faultsPerMinute ?? 3;
  const log = options.log ?? (() => {});
  const { seed } = options;
  const began = performance.now();
  const instances = instancesFor(options.policies, seed);
  const byKey = new Map(instances.map((i) => [i.id.toLowerCase(), i]));

  // Accepted updates, checked as they land.
  let phase: "warmup" | "faults" | "drain" = "warmup";
  const lastOp = new Map<string, { id: string; completesMs: number }>();
  /**
   * Per instance: whether its latest getBatch of the metrics its policy reads (connections and
   * server load: the gauges' query; the counters' query feeds no signal of these policies) was
   * answered with data.
   */
  const lastRead = new Map<string, boolean>();
  let emulator: RunningEmulator | undefined;
  const result = {
    armWritesAccepted: 0,
    armWritesRefused: 0,
    duplicateArmWrites: 0,
    duplicateSamples: [] as string[],
    scaleOuts: 0,
    scaleIns: 0,
    scaleInsOnUnknownData: 0,
    scaleInsAfterRise: 0,
    scaleInsBelowConnections: 0,
    scaleInSamples: [] as string[],
    faultedRequests: 0,
  };
  const onRequest = (r: RequestRecord) => {
    if (r.fault) result.faultedRequests++;
    if (r.kind === "getBatch" && r.aggregation === READ_AGGREGATION) {
      // A split batch logs the refused request first and its answered halves after it.
      const answered = r.status === 200 && r.fault === undefined;
      for (const id of r.resourceIds ?? []) lastRead.set(id.toLowerCase(), answered);
    }
    if (r.kind !== "armWrite" || !emulator) return;
    if (r.status < 200 || r.status >= 300) {
      result.armWritesRefused++;
      return;
    }
    result.armWritesAccepted++;
    const key = r.path.toLowerCase();
    const inst = byKey.get(key);
    const view = emulator.control.instance(r.path);
    const op = view?.operation;
    if (!inst || !view || !op) return;
    const previous = lastOp.get(key);
    const duplicate =
      op.id === previous?.id
        ? "accepted without a new operation"
        : previous && previous.completesMs > op.startedMs
          ? "while the previous update ran"
          : op.target.sku === view.sku && op.target.units === view.units
            ? `to the capacity in place (${view.sku} × ${view.units})`
            : undefined;
    if (duplicate) {
      result.duplicateArmWrites++;
      if (result.duplicateSamples.length < 10)
        result.duplicateSamples.push(`${r.at} ${r.path}: ${duplicate}`);
    }
    lastOp.set(key, { id: op.id, completesMs: op.completesMs });
    if (op.target.units > view.units) result.scaleOuts++;
    else if (op.target.units < view.units) {
      result.scaleIns++;
      const minute = Math.floor(emulator.clock.nowMs() / MINUTE - start);
      const afterRise = inst.changes.some(
        (c) => c.minute > minute - RISE_LOOKBACK_MINUTES && c.connections > c.from,
      );
      const unsafe = op.target.units * CONNECTIONS_PER_UNIT < inst.connections;
      const unknown = lastRead.get(key) !== true;
      if (unknown) result.scaleInsOnUnknownData++;
      if (afterRise) result.scaleInsAfterRise++;
      if (unsafe) result.scaleInsBelowConnections++;
      if ((unknown || afterRise || unsafe) && result.scaleInSamples.length < 20) {
        const near = faultLog
          .filter((f) => f.minute >= minute - 8 && f.minute <= minute && f.matches(inst))
          .map((f) => `${f.kind}@${f.minute}`);
        result.scaleInSamples.push(
          `${r.at} ${inst.id.split("/").at(-1)} ${view.units} → ${op.target.units} with ${inst.connections} connections (${phase}${afterRise ? ", after a rise" : ""}${unsafe ? ", below the connections" : ""}${unknown ? ", latest read without data" : ""}) at minute ${minute}; demand changes: ${inst.changes.map((c) => `${c.connections}@${c.minute}`).join(" ") || "none"}; faults near: ${near.join(" ") || "none"}`,
        );
      }
    }
  };

  emulator = await startEmulator({
    speed,
    scaleDurationMs: 120_000,
    ingestionDelayMs: 120_000,
    noiseAmplitude: 0.02,
    seed,
    armRateLimit: true,
    historyDays: 1,
    onRequest,
  });
  const kube = createKubeClients(loadKubeConfig({ kind: "file", path: options.kubeconfig }));
  const ns = `soak-${Date.now().toString(36)}`;
  let operator: OperatorChild | undefined;
  const memory: MemoryPoint[] = [];
  const passes: ProcessSample["passes"] = [];
  const cycles: ProcessSample["cycles"] = [];
  const faultRulesByKind: Record<string, number> = {};
  const faultLog: { minute: number; kind: string; matches: (i: Instance) => boolean }[] = [];
  let faultRules = 0;
  const minuteNow = () => (emulator as RunningEmulator).clock.nowMs() / MINUTE;
  const start = minuteNow();
  const take = async (gc: boolean) => {
    const s = await (operator as OperatorChild).sample(gc);
    passes.push(...s.passes);
    cycles.push(...s.cycles);
    const point = {
      virtualMinute: Math.round(minuteNow() - start),
      rssMb: mb(s.memory.rss),
      heapUsedMb: mb(s.memory.heapUsed),
      heapAfterGcMb: mb(s.heapUsedAfterGc ?? s.memory.heapUsed),
    };
    if (gc) memory.push(point);
    return point;
  };
  const untilMinute = async (m: number) => {
    const wait = ((start + m) * MINUTE - (emulator as RunningEmulator).clock.nowMs()) / speed;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  };

  try {
    for (const inst of instances) {
      emulator.control.addInstance({
        resourceId: inst.id,
        location: inst.region,
        sku: "Premium_P1",
        units: unitsFor(inst.connections),
        connections: inst.connections,
      });
    }
    await kube.core.createNamespace({ body: { metadata: { name: ns } } });
    const limit = pLimit(16);
    await Promise.all(
      instances.map((inst, i) =>
        limit(() =>
          kube.customObjects.createNamespacedCustomObject({
            group: GROUP,
            version: VERSION,
            namespace: ns,
            plural: PLURAL,
            body: policyBody(ns, i, inst),
          }),
        ),
      ),
    );
    log(`${instances.length} instances and policies in ${ns}; starting the operator`);
    operator = new OperatorChild(
      {
        kubeconfig: options.kubeconfig,
        armEndpoint: emulator.armEndpoint,
        metricsEndpointTemplate: emulator.metricsEndpointTemplate,
        caPem: emulator.caPem,
        expected: instances.length,
        // Its own namespace only: policies other tests leave (or create meanwhile) on the same
        // control plane are not the soak's.
        namespaces: [ns],
        workers: 8,
        perRequestConnections: false,
        clock: { virtualMs: emulator.clock.nowMs(), realMs: Date.now(), speed },
      },
      options.operatorNodeOptions ?? [],
    );
    await operator.coldDone;
    log(`every policy had its first pass at virtual minute ${(minuteNow() - start).toFixed(1)}`);
    await untilMinute(warmupMinutes);
    const first = await take(true);
    log(`after the warm-up: RSS ${first.rssMb} MB, heap after GC ${first.heapAfterGcMb} MB`);

    phase = "faults";
    const live: { id: string; until: number }[] = [];
    for (let m = 0; m < options.virtualMinutes; m++) {
      const minute = warmupMinutes + m;
      await untilMinute(minute);
      for (const f of live
        .splice(0)
        .filter((f) => f.until > minute || !emulator?.control.removeFault(f.id))) {
        live.push(f);
      }
      const count = Math.floor(uniform(seed, minute, 2) * faultsPerMinute * 2 + 0.5);
      for (let k = 0; k < count; k++) {
        const step = minute * 100 + k;
        const { kind, spec, touches } = faultFor(
          uniform(seed, step, 3),
          uniform(seed, step, 4),
          instances,
          minute,
        );
        const rule = emulator.control.addFault(spec);
        faultLog.push({ minute, kind, matches: touches });
        live.push({ id: rule.id, until: minute + 1 + Math.floor(uniform(seed, step, 5) * 4) });
        faultRules++;
        faultRulesByKind[kind] = (faultRulesByKind[kind] ?? 0) + 1;
      }
      instances.forEach((inst, i) => {
        const u = uniform(seed, minute * 10_000 + i, 6);
        const before = inst.connections;
        if (inst.rising && u < 0.15)
          inst.connections = Math.round(before * (1.05 + uniform(seed, minute * 10_000 + i, 7) * 0.35));
        if (!inst.rising && u < 0.2)
          inst.connections = Math.round(before * (0.6 + uniform(seed, minute * 10_000 + i, 7) * 0.9));
        inst.connections = Math.min(inst.connections, 90_000);
        if (inst.connections !== before) {
          emulator?.control.setDemand(inst.id, { connections: inst.connections });
          inst.changes = [...inst.changes, { minute, from: before, connections: inst.connections }].slice(-8);
        }
      });
      if (m % 5 === 4) {
        const p = await take(true);
        log(
          `virtual minute ${p.virtualMinute}: RSS ${p.rssMb} MB, heap after GC ${p.heapAfterGcMb} MB, ${faultRules} fault rules so far`,
        );
      }
    }
    phase = "drain";
    emulator.control.clearFaults();
    await untilMinute(warmupMinutes + options.virtualMinutes + 3);
    const last = await take(true);
    log(`at the end: RSS ${last.rssMb} MB, heap after GC ${last.heapAfterGcMb} MB`);
  } finally {
    await operator?.stop();
    await kube.core.deleteNamespace({ name: ns }).catch(() => {});
    await emulator.stop();
  }

  // Stalls, in real time (deadlines are real): a policy is stalled when no pass ended for longer
  // than the poll interval plus the cycle's deadline plus the margin after which /readyz calls a
  // cycle overdue — the operator's own definition of a stall.
  const stallBoundSeconds =
    POLL_SECONDS / speed + (DEFAULT_POLL_CYCLE_TIMEOUT_MS + DEFAULT_READINESS_MARGIN_MS) / 1000;
  const endMs = Math.max(...passes.map((p) => p.endMs));
  const byPolicy = new Map<string, number[]>();
  for (const p of passes) byPolicy.set(p.key, [...(byPolicy.get(p.key) ?? []), p.endMs]);
  let maxGapMs = 0;
  let stalledPolicies = 0;
  for (const ends of byPolicy.values()) {
    ends.sort((a, b) => a - b);
    let gap = endMs - (ends.at(-1) as number);
    for (let i = 1; i < ends.length; i++) gap = Math.max(gap, (ends[i] as number) - (ends[i - 1] as number));
    maxGapMs = Math.max(maxGapMs, gap);
    if (gap > stallBoundSeconds * 1000) stalledPolicies++;
  }
  const cycleSeconds = cycles.filter((c) => c.endMs > 0).map((c) => (c.endMs - c.startMs) / 1000);
  return {
    policies: options.policies,
    virtualMinutes: options.virtualMinutes,
    warmupMinutes,
    speed,
    seed,
    realSeconds: Math.round((performance.now() - began) / 1000),
    faultRules,
    faultRulesByKind,
    ...result,
    passes: passes.length,
    passErrors: passes.filter((p) => p.error !== undefined).length,
    maxPassGapSeconds: Math.round(maxGapMs / 100) / 10,
    maxCycleSeconds: Math.round(Math.max(0, ...cycleSeconds) * 10) / 10,
    stallBoundSeconds,
    stalledPolicies:
      stalledPolicies + (byPolicy.size < options.policies ? options.policies - byPolicy.size : 0),
    stalledCycles: cycleSeconds.filter((s) => s > stallBoundSeconds).length,
    memory,
  };
}

/** Writes a soak's result as JSON to `out`, making its directory first (bench/results/ is not in Git). */
export async function writeSoakResult(out: string, result: unknown): Promise<void> {
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError("must be a whole number > 0");
  return n;
}

async function main(): Promise<void> {
  const program = new Command("soak")
    .description("Run the operator for a while under random faults and count what must never happen.")
    .option("--policies <n>", "policies and instances", positive, 300)
    .option("--virtual-minutes <n>", "virtual minutes with faults, after the warm-up", positive, 30)
    .option("--warmup-minutes <n>", "virtual minutes without faults first", positive, 8)
    .option("--speed <n>", "virtual ms per real ms", positive, 6)
    .option("--seed <text>", "seed of the fault and demand schedule", "soak")
    .option("--faults-per-minute <n>", "mean fault rules added per virtual minute", positive, 3)
    .option("--operator-node-options <text>", "node options of the operator process", "")
    .option("--out <file>", "where to write the result JSON", join(ROOT, "bench", "results", "soak.json"))
    .showHelpAfterError();
  program.parse();
  const o = program.opts<{
    policies: number;
    virtualMinutes: number;
    warmupMinutes: number;
    speed: number;
    seed: string;
    faultsPerMinute: number;
    operatorNodeOptions: string;
    out: string;
  }>();
  const { ensureControlPlaneBinaries, startControlPlane } = await import("../src/localcluster/index.js");
  const { execFile } = await import("node:child_process");
  const { promisify } = await import("node:util");
  const binaries = await ensureControlPlaneBinaries({
    onProgress: (l) => console.error(`[control plane] ${l}`),
  });
  const cp = await startControlPlane({ binaries });
  try {
    const kubectl = (args: string[]) =>
      promisify(execFile)(binaries.kubectl, [`--kubeconfig=${cp.kubeconfigAdmin}`, ...args], {
        timeout: 120_000,
      });
    await kubectl([
      "apply",
      "--server-side",
      "-f",
      join(ROOT, "crds", "capacitypolicies.autoscaling.signalr.dev.yaml"),
    ]);
    await kubectl([
      "wait",
      "--for=condition=Established",
      "crd/capacitypolicies.autoscaling.signalr.dev",
      "--timeout=60s",
    ]);
    const result = await runSoak({
      kubeconfig: cp.kubeconfigAdmin,
      policies: o.policies,
      virtualMinutes: o.virtualMinutes,
      warmupMinutes: o.warmupMinutes,
      speed: o.speed,
      seed: o.seed,
      faultsPerMinute: o.faultsPerMinute,
      operatorNodeOptions: o.operatorNodeOptions.split(/\s+/).filter(Boolean),
      log: (l) => console.error(l),
    });
    console.log(JSON.stringify(result, null, 2));
    await writeSoakResult(o.out, result);
  } finally {
    await cp.stop();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
