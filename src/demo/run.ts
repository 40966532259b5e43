/**
 * `demo`: the whole operator on a real traffic shape, on one machine.
 *
 * 1. A cluster: the local control plane (built on first use) or an existing one.
 * 2. The CRDs from crds/, a namespace, the app-server Deployment and the CapacityPolicy.
 * 3. The Azure emulator, its virtual clock stopped at the start of the trace window, with one
 *    instance whose demand replays the window scaled to the requested peak.
 * 4. The operator, in this process, its clock following the emulator's; then the clock runs at
 *    `speed` until the window has passed (or the signal aborts).
 * 5. Live: a status line per change (or every half hour of virtual time) and the Kubernetes Events
 *    as the API server serves them.
 * 6. At the end (or when interrupted): the timeline from the emulator's history, minute by minute,
 *    its summary, a CSV and an SVG chart. Everything started is stopped.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TokenCredential } from "@azure/identity";
import type { CoreV1Event } from "@kubernetes/client-node";
import type { CapacityPolicy } from "../api/index.js";
import { createAzureAdapters } from "../azure/index.js";
import { CONNECTIONS_PER_UNIT, candidates, isScalableSku, type SkuName } from "../capacity/index.js";
import { scaledClock } from "../controller/clock.js";
import { createLogger } from "../controller/logging.js";
import { OperatorMetrics } from "../controller/metrics.js";
import { Operator, type PassReport } from "../controller/operator.js";
import { createVirtualClock } from "../emulator/clock.js";
import { type RunningEmulator, startEmulator } from "../emulator/emulator.js";
import type { OperationRecord } from "../emulator/state.js";
import { type ResilientWatch, startResilientWatch } from "../kube/watch.js";
import { type DemandSpec, defaultMix, demandFunction, type WorkloadMix } from "../traffic/index.js";
import { demoChartSvg } from "./chart.js";
import {
  applyAppServers,
  createPolicy,
  type DemoCluster,
  ensureNamespace,
  installCrds,
  prepareCluster,
} from "./cluster.js";
import { type LiveSink, LiveView, passReason } from "./live.js";
import { type DemoSummary, summarize, type TimelineRow, timelineCsv } from "./timeline.js";
import { MINUTE_MS, type TraceWindow } from "./trace-window.js";

/** What the demo runs. */
export interface DemoSettings {
  /** The validated policy; its namespace is where everything is created. */
  policy: CapacityPolicy;
  /** The trace window to replay and its label for titles. */
  window: TraceWindow;
  traceLabel: string;
  /** Client connections at the window's largest value. */
  peakConnections: number;
  /** Virtual ms per real ms. */
  speed: number;
  /** Virtual time an ARM scale takes, ms. */
  scaleDurationMs: number;
  /** Virtual time before a minute's metrics are complete, ms. */
  ingestionDelayMs: number;
  /** Directory for timeline.csv and chart.svg. */
  outDir: string;
  /** An existing cluster instead of the local control plane. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
  /** Operator warnings to `log`. */
  verbose?: boolean;
  /** Minutes of virtual time between status lines when nothing changes (default 30). */
  statusEveryMinutes?: number;
}

/** Where the demo writes and what stops it. */
export interface DemoIo {
  /** The live view. */
  live: LiveSink;
  /** Operator log lines (only with `verbose`). */
  log: (text: string) => void;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

/** How the run went. */
export interface DemoResult {
  /** False when the run was interrupted before the traffic started (nothing to summarize). */
  started: boolean;
  /** The signal aborted the run before the window had passed. */
  interrupted: boolean;
  summary: DemoSummary;
  rows: TimelineRow[];
  files: { timeline: string; chart: string } | undefined;
  /** Real seconds of the traffic replay (without the set-up). */
  replaySeconds: number;
  /** Real seconds in all. */
  wallSeconds: number;
  operator: { passes: number; failedPasses: number; meanPassMs: number; meanPassIntervalSeconds: number };
  azureCalls: { armReads: number; armWrites: number; getBatch: number };
  /** Where it ran. */
  cluster: { local: boolean; kubeconfig: string; namespace: string };
}

/** The initial size: what the window's first minute needs at the connection target, within the policy. */
export function initialSize(policy: CapacityPolicy, connections: number): { sku: SkuName; units: number } {
  const spec = policy.spec;
  const target = (spec.metrics.connections?.targetPercent ?? 80) / 100;
  const need = Math.max(spec.units.min, Math.ceil(connections / (CONNECTIONS_PER_UNIT * target)));
  const sizes = candidates(spec.skus.filter(isScalableSku)).filter(
    (s) => s.units >= spec.units.min && s.units <= spec.units.max,
  );
  return sizes.find((s) => s.units >= need) ?? sizes[sizes.length - 1] ?? { sku: "Premium_P1", units: 1 };
}

/** The initial app-server replicas for `connections`. */
export function initialReplicas(policy: CapacityPolicy, connections: number): number | undefined {
  const app = policy.spec.appServer;
  if (!app) return undefined;
  const want = app.connectionsPerReplica
    ? Math.ceil(connections / app.connectionsPerReplica)
    : app.replicas.min;
  return Math.min(app.replicas.max, Math.max(app.replicas.min, want));
}

/** The emulator's workload: the policy's traffic mix when it has one, else the service's default. */
export function mixOf(policy: CapacityPolicy): WorkloadMix {
  const service = policy.spec.target.service;
  const traffic = policy.spec.metrics.traffic;
  if (!traffic) return defaultMix(service);
  const entries = traffic.workload.filter((w) => w.share > 0);
  const total = entries.reduce((a, w) => a + w.share, 0);
  return {
    service,
    entries: entries.map((w) => ({ scenario: w.scenario, share: w.share / total })),
    messageSizeBytes: traffic.messageSizeBytes,
  };
}

/** A credential for the emulator (it accepts any bearer token). */
const emulatorCredential: TokenCredential = {
  getToken: async () => ({ token: "signalr-autoscaler-demo", expiresOnTimestamp: Date.now() + 3_600_000 }),
};

function eventTime(e: CoreV1Event): number | undefined {
  for (const v of [e.lastTimestamp, e.eventTime, e.firstTimestamp, e.metadata?.creationTimestamp]) {
    if (v === undefined || v === null) continue;
    const ms = v instanceof Date ? v.getTime() : Date.parse(String(v));
    if (Number.isFinite(ms)) return ms;
  }
  return undefined;
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Tracks the instance's capacity over time: ARM updates (exact times) and anything else seen. */
class CapacityTracker {
  readonly #ops = new Map<string, OperationRecord>();
  readonly #seen: { fromMs: number; sku: SkuName; units: number }[] = [];
  #last: { sku: SkuName; units: number };

  constructor(
    readonly initial: { fromMs: number; sku: SkuName; units: number },
    private readonly emulator: RunningEmulator,
    private readonly resourceId: string,
  ) {
    this.#last = { sku: initial.sku, units: initial.units };
  }

  /** Looks at the instance now. */
  observe(): void {
    const view = this.emulator.control.instance(this.resourceId);
    if (!view) return;
    if (view.operation && view.operation.kind === "update") this.#ops.set(view.operation.id, view.operation);
    if (view.sku !== this.#last.sku || view.units !== this.#last.units) {
      this.#last = { sku: view.sku, units: view.units };
      const op = [...this.#ops.values()].find(
        (o) => o.apply && o.target.sku === view.sku && o.target.units === view.units,
      );
      // Seen without its operation (a scale faster than the sampling): from now.
      if (!op) this.#seen.push({ fromMs: this.emulator.clock.nowMs(), sku: view.sku, units: view.units });
    }
  }

  /** The capacity in force in the minute starting at `ms` (as the emulator computes buckets). */
  at(ms: number): { sku: SkuName; units: number } {
    const changes = [
      this.initial,
      ...[...this.#ops.values()]
        .filter((o) => o.apply)
        .map((o) => ({ fromMs: o.completesMs, sku: o.target.sku, units: o.target.units })),
      ...this.#seen,
    ].sort((a, b) => a.fromMs - b.fromMs);
    let found = this.initial as { sku: SkuName; units: number };
    for (const c of changes) if (c.fromMs <= ms) found = c;
    return found;
  }

  /** An ARM update ran during `[ms, ms + 1 min)`. */
  updating(ms: number): boolean {
    for (const o of this.#ops.values()) if (o.startedMs < ms + MINUTE_MS && o.completesMs > ms) return true;
    return false;
  }
}

/** Runs the demo (see the module comment). */
export async function runDemo(settings: DemoSettings, io: DemoIo): Promise<DemoResult> {
  const wallStart = performance.now();
  const live = new LiveView(io.live, { everyMs: (settings.statusEveryMinutes ?? 30) * MINUTE_MS });
  const say = (text: string) => live.note(text);
  const { policy, window } = settings;
  const namespace = policy.metadata.namespace;
  const resourceId = policy.spec.target.resourceId;
  const startMs = window.startMs;
  const endMs = window.startMs + window.durationMs;

  let cluster: DemoCluster | undefined;
  let emulator: RunningEmulator | undefined;
  let operator: Operator | undefined;
  let events: ResilientWatch<CoreV1Event> | undefined;
  const eventsStop = new AbortController();
  let tracker: CapacityTracker | undefined;
  let sampler: NodeJS.Timeout | undefined;
  let replayStarted: number | undefined;
  let replayEnded: number | undefined;
  const replicaLog: { time: number; replicas: number }[] = [];
  let passes = 0;
  let failedPasses = 0;
  let firstPassMs: number | undefined;
  let lastPassMs: number | undefined;
  let result: DemoResult | undefined;
  let operatorMetrics: OperatorMetrics | undefined;

  try {
    cluster = await prepareCluster({
      kubeconfig: settings.kubeconfig,
      context: settings.context,
      onProgress: say,
      signal: io.signal,
      ...(io.env ? { env: io.env } : {}),
    });
    if (io.signal.aborted) return notStarted();
    const kube = cluster.kube;
    const crds = await installCrds(kube, io.signal);
    const created = await ensureNamespace(kube, namespace);
    say(`CRD ${crds.join(", ")} established; namespace ${namespace} ${created ? "created" : "exists"}`);

    // The emulator, its clock stopped until everything is in place.
    const demand: DemandSpec = {
      kind: "trace",
      trace: window.trace,
      peakConnections: settings.peakConnections,
      startAt: new Date(window.replayStartMs),
    };
    const firstDemand = demandFunction(demand, new Date(startMs))(new Date(startMs));
    const size = initialSize(policy, firstDemand);
    const replicas = initialReplicas(policy, firstDemand);
    const clock = createVirtualClock({ start: new Date(startMs), speed: 0 });
    emulator = await startEmulator({
      clock,
      scaleDurationMs: settings.scaleDurationMs,
      ingestionDelayMs: settings.ingestionDelayMs,
      instances: [
        {
          resourceId,
          sku: size.sku,
          units: size.units,
          mix: mixOf(policy),
          demand,
          createdAt: new Date(startMs - 6 * 60 * MINUTE_MS),
        },
      ],
    });
    const control = emulator.control;
    tracker = new CapacityTracker({ fromMs: startMs - 6 * 60 * MINUTE_MS, ...size }, emulator, resourceId);
    say(
      `Azure emulator at ${emulator.armEndpoint}: ${policy.spec.target.service} ${resourceId.split("/").pop()} ` +
        `starts at ${size.sku} × ${size.units}`,
    );

    const app = policy.spec.appServer;
    if (app && replicas !== undefined) {
      await applyAppServers(kube, namespace, app.deploymentName, replicas);
      replicaLog.push({ time: startMs, replicas });
    }
    await createPolicy(kube, policy);
    say(
      `Deployment ${app ? `${app.deploymentName} (${replicas} replicas)` : "—"} and CapacityPolicy ${policy.metadata.name} applied`,
    );
    if (cluster.kubectl) {
      say(`Watch along: ${cluster.kubectl} --kubeconfig ${cluster.kubeconfig} -n ${namespace} get capol -w`);
    }

    // Events, as the API server serves them (only those created from now on).
    let eventsSynced = false;
    const printed = new Map<string, number>();
    events = startResilientWatch<CoreV1Event>({
      path: `/api/v1/namespaces/${namespace}/events`,
      watch: kube.watch,
      list: async () => {
        const list = await kube.core.listNamespacedEvent({ namespace });
        return { items: list.items, resourceVersion: list.metadata?.resourceVersion ?? "" };
      },
      signal: eventsStop.signal,
      onEvent: (e) => {
        if (e.type === "synced") {
          if (e.initial) {
            eventsSynced = true;
            for (const item of events?.list() ?? []) printed.set(item.metadata?.uid ?? "", item.count ?? 1);
          }
          return;
        }
        if (!eventsSynced || e.type === "deleted") return;
        const ev = e.object;
        const uid = ev.metadata?.uid ?? "";
        const count = ev.count ?? 1;
        if ((printed.get(uid) ?? 0) >= count) return;
        printed.set(uid, count);
        live.event({
          time: eventTime(ev) ?? clock.nowMs(),
          type: ev.type ?? "Normal",
          reason: ev.reason ?? "",
          message: ev.message ?? "",
          count,
        });
      },
    });
    await Promise.race([events.synced, untilAborted(io.signal)]);
    if (io.signal.aborted) return notStarted();

    // The operator, on the emulator's clock.
    const opClock = scaledClock(clock);
    const azure = createAzureAdapters({
      credential: emulatorCredential,
      armEndpoint: emulator.armEndpoint,
      metricsEndpoint: emulator.metricsEndpoint,
      ca: emulator.caPem,
      now: () => clock.now(),
      // The emulator answers in milliseconds; a short timeout also bounds any timer a failed
      // request leaves behind at shutdown.
      requestTimeoutMs: 10_000,
    });
    const log = createLogger({
      level: settings.verbose ? "warn" : "silent",
      destination: { write: (line: string) => io.log(line) },
    });
    operatorMetrics = new OperatorMetrics({ now: opClock.now, processMetrics: false });
    operator = new Operator(
      { kube, azure, log, metrics: operatorMetrics, clock: opClock },
      {
        namespaces: [namespace],
        workers: 2,
        // About 10 ms of real time between poll ticks, whatever the speed.
        tickMs: Math.max(1000, Math.round(settings.speed * 10)),
        identity: "signalr-autoscaler-demo",
      },
    );
    const activeTracker = tracker;
    operator.onPass((report: PassReport) => {
      const now = clock.nowMs();
      passes++;
      if (report.error !== undefined) failedPasses++;
      firstPassMs ??= now;
      lastPassMs = now;
      activeTracker.observe();
      const decision = report.result?.decision;
      const after =
        decision?.action === "Scale" && decision.desired?.replicas !== undefined
          ? decision.desired.replicas
          : decision?.current.replicas;
      if (after !== undefined && after !== replicaLog[replicaLog.length - 1]?.replicas) {
        replicaLog.push({ time: now, replicas: after });
      }
      const view = control.instance(resourceId);
      const traffic = control.traffic(resourceId);
      if (!view) return;
      live.status({
        time: now,
        loadPercent: traffic?.serverLoadPercent,
        connections: traffic?.clientConnections,
        demand: traffic?.offeredConnections,
        sku: view.sku,
        units: view.units,
        updatingTo: view.operation?.status === "InProgress" ? view.operation.target : undefined,
        replicas: replicaLog[replicaLog.length - 1]?.replicas,
        reason: passReason(report),
      });
    });
    sampler = setInterval(() => activeTracker.observe(), 20);

    const hours = window.durationMs / 3_600_000;
    const realSeconds = window.durationMs / settings.speed / 1000;
    say(
      `Replaying ${hours.toLocaleString("en-US", { maximumFractionDigits: 1 })} h of ${settings.traceLabel} ` +
        `(peak ${settings.peakConnections.toLocaleString("en-US")} connections) at ×${settings.speed}: ` +
        `about ${realSeconds < 90 ? `${Math.round(realSeconds)} s` : `${(realSeconds / 60).toFixed(1)} min`}. Ctrl-C stops early.`,
    );
    replayStarted = performance.now();
    clock.setSpeed(settings.speed);
    await Promise.race([operator.start(), untilAborted(io.signal)]);

    // Until the window has passed or the signal aborts.
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (clock.nowMs() >= endMs || io.signal.aborted) {
          clearInterval(check);
          resolve();
        }
      }, 20);
    });
    clock.setSpeed(0);
    replayEnded = performance.now();
    const interrupted = clock.nowMs() < endMs;
    live.finish();
    if (interrupted)
      say(`Interrupted at ${new Date(clock.nowMs()).toISOString().slice(11, 16)} (virtual); stopping.`);

    await operator.stop(3000);
    operator = undefined;
    // A poll cycle may still be reading Azure: let it finish before the emulator goes away (a
    // request cut off by the server leaves the SDK's timeout timer running until it expires).
    await new Promise((r) => setTimeout(r, 250));
    clearInterval(sampler);
    sampler = undefined;
    tracker.observe();

    // The timeline, from the emulator's history.
    const lastMinute = Math.min(endMs, Math.floor(clock.nowMs() / MINUTE_MS) * MINUTE_MS);
    const rows: TimelineRow[] = [];
    for (let m = startMs; m < lastMinute; m += MINUTE_MS) {
      const t = control.traffic(resourceId, new Date(m));
      if (!t) continue;
      const cap = tracker.at(m);
      const units = Math.round(t.connectionQuota / CONNECTIONS_PER_UNIT);
      const sku: SkuName = cap.units === units ? cap.sku : units > 100 ? "Premium_P2" : cap.sku;
      let r: number | undefined;
      for (const x of replicaLog) if (x.time < m + MINUTE_MS) r = x.replicas;
      rows.push({
        time: m,
        demand: t.offeredConnections,
        connections: t.clientConnections,
        refused: t.refusedConnections,
        quota: t.connectionQuota,
        loadPercent: t.serverLoadPercent,
        sku,
        units,
        ...(r !== undefined ? { replicas: r } : {}),
        updating: tracker.updating(m),
      });
    }
    const loadTargetPercent = policy.spec.metrics.serverLoad?.targetPercent ?? 70;
    const summary = summarize(rows, { loadTargetPercent });
    const calls = control.calls();
    const durations = (await (operatorMetrics as OperatorMetrics).passDuration.get()).values;
    const sum = durations.find((v) => v.metricName?.endsWith("_sum"))?.value ?? 0;
    const count = durations.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;

    let files: DemoResult["files"];
    if (rows.length > 0) {
      await mkdir(settings.outDir, { recursive: true });
      files = { timeline: join(settings.outDir, "timeline.csv"), chart: join(settings.outDir, "chart.svg") };
      await writeFile(files.timeline, timelineCsv(rows));
      const peak = settings.peakConnections.toLocaleString("en-US");
      await writeFile(
        files.chart,
        await demoChartSvg(rows, {
          title: `${policy.metadata.name}: ${settings.traceLabel}, peak ${peak} connections${interrupted ? " (interrupted)" : ""}`,
          loadTargetPercent,
        }),
      );
    }
    result = {
      started: true,
      interrupted,
      summary,
      rows,
      files,
      replaySeconds: ((replayEnded ?? performance.now()) - (replayStarted ?? wallStart)) / 1000,
      wallSeconds: 0,
      operator: {
        passes,
        failedPasses,
        meanPassMs: count > 0 ? Math.round((sum / count) * 10_000) / 10 : 0,
        meanPassIntervalSeconds:
          passes > 1 && firstPassMs !== undefined && lastPassMs !== undefined
            ? Math.round((lastPassMs - firstPassMs) / (passes - 1) / 100) / 10
            : 0,
      },
      azureCalls: { armReads: calls.armReads, armWrites: calls.armWrites, getBatch: calls.getBatch },
      cluster: { local: cluster.local !== undefined, kubeconfig: cluster.kubeconfig, namespace },
    };
    return result;
  } finally {
    live.finish();
    if (sampler) clearInterval(sampler);
    await operator?.stop(1000).catch(() => {});
    eventsStop.abort();
    await events?.stop().catch(() => {});
    await emulator?.stop().catch(() => {});
    await cluster?.stop().catch(() => {});
    if (result) result.wallSeconds = (performance.now() - wallStart) / 1000;
  }

  function notStarted(): DemoResult {
    result = {
      started: false,
      interrupted: true,
      summary: summarize([], { loadTargetPercent: policy.spec.metrics.serverLoad?.targetPercent ?? 70 }),
      rows: [],
      files: undefined,
      replaySeconds: 0,
      wallSeconds: 0,
      operator: { passes: 0, failedPasses: 0, meanPassMs: 0, meanPassIntervalSeconds: 0 },
      azureCalls: { armReads: 0, armWrites: 0, getBatch: 0 },
      cluster: { local: cluster?.local !== undefined, kubeconfig: cluster?.kubeconfig ?? "", namespace },
    };
    return result;
  }
}
