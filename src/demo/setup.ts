/**
 * The demo's set-up, up to the moment the traffic starts: the cluster (local control plane or an
 * existing one), the CRDs and the namespace, the Azure emulator with its clock stopped and one
 * instance replaying the trace window (or, with `--replicas`, a primary and its geo-replicas, each
 * with its share of it: `group.ts`), the app-server Deployment and the CapacityPolicy (one each
 * per member), the Events watch, and the operator on the emulator's clock (not started yet). Each part is recorded
 * in {@link Started} as soon as it runs, so that whatever started is stopped even when a later
 * step fails.
 */
import type { TokenCredential } from "@azure/identity";
import type { CoreV1Event } from "@kubernetes/client-node";
import type { CapacityPolicy } from "../api/index.js";
import { createAzureAdapters } from "../azure/index.js";
import { CONNECTIONS_PER_UNIT, candidates, isScalableSku, type SkuName } from "../capacity/index.js";
import { scaledClock } from "../controller/clock.js";
import { createLogger } from "../controller/logging.js";
import { OperatorMetrics } from "../controller/metrics.js";
import { Operator } from "../controller/operator.js";
import { createVirtualClock, type VirtualClock } from "../emulator/clock.js";
import { type RunningEmulator, startEmulator } from "../emulator/emulator.js";
import type { KubeClients } from "../kube/client.js";
import type { ResilientWatch } from "../kube/watch.js";
import type { LocalPrometheus } from "../localcluster/index.js";
import {
  DEFAULT_CONNECTION_LIFETIME_SECONDS,
  type DemandSpec,
  defaultMix,
  demandFunction,
  type WorkloadMix,
} from "../traffic/index.js";
import {
  applyAppServers,
  createPolicy,
  type DemoCluster,
  ensureNamespace,
  installCrds,
  prepareCluster,
} from "./cluster.js";
import { watchEvents } from "./events.js";
import { type DemoMember, demoMembers } from "./group.js";
import type { LiveView } from "./live.js";
import {
  appServerJob,
  pointedAt,
  SCRAPE_VIRTUAL_SECONDS,
  startDemoPrometheus,
  withoutLeadingSignal,
} from "./prometheus.js";
import type { DemoIo, DemoSettings } from "./settings.js";
import { MINUTE_MS } from "./trace-window.js";
import { CapacityTracker } from "./tracker.js";

/** The initial size: what the window's first minute needs at the connection target, within the policy. */
function initialSize(policy: CapacityPolicy, connections: number): { sku: SkuName; units: number } {
  const spec = policy.spec;
  const target = (spec.metrics.connections?.targetPercent ?? 80) / 100;
  const need = Math.max(spec.units.min, Math.ceil(connections / (CONNECTIONS_PER_UNIT * target)));
  const sizes = candidates(spec.skus.filter(isScalableSku)).filter(
    (s) => s.units >= spec.units.min && s.units <= spec.units.max,
  );
  return sizes.find((s) => s.units >= need) ?? sizes[sizes.length - 1] ?? { sku: "Premium_P1", units: 1 };
}

/** The initial app-server replicas for `connections`. */
function initialReplicas(policy: CapacityPolicy, connections: number): number | undefined {
  const app = policy.spec.appServer;
  if (!app) return undefined;
  const want = app.connectionsPerReplica
    ? Math.ceil(connections / app.connectionsPerReplica)
    : app.replicas.min;
  return Math.min(app.replicas.max, Math.max(app.replicas.min, want));
}

/** The emulator's workload: the policy's traffic mix when it has one, else the service's default. */
function mixOf(policy: CapacityPolicy): WorkloadMix {
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

/** Resolves when `signal` aborts (at once when it already has). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** When the instance was created: six hours before the window, so its history has no gap. */
function createdMs(settings: DemoSettings): number {
  return settings.window.startMs - 6 * 60 * MINUTE_MS;
}

/**
 * The members the demo creates: the policy's instance alone, or the replica group of
 * `settings.group` (`group.ts`).
 */
function membersOf(settings: DemoSettings): DemoMember[] {
  const { policy } = settings;
  if (settings.group)
    return demoMembers(policy, settings.group.members, { failoverRule: settings.group.failoverRule });
  const resourceId = policy.spec.target.resourceId;
  return [
    {
      name: "",
      role: "Primary",
      resourceId,
      location: "",
      share: 1,
      policy,
      appServerName: resourceId.split("/").pop() ?? "",
    },
  ];
}

/**
 * The emulator, its clock stopped at the start of the window until everything is in place, with
 * each member (the policy's instance, or the group's) at its initial size and its share of the
 * window's demand.
 */
async function startDemoEmulator(settings: DemoSettings, members: readonly DemoMember[]) {
  const { policy, window } = settings;
  const leading = policy.spec.anticipation?.leadingSignal !== undefined && settings.prometheus !== false;
  const startMs = window.startMs;
  const demandOf = (share: number): DemandSpec => ({
    kind: "trace",
    trace: window.trace,
    peakConnections: settings.peakConnections * share,
    startAt: new Date(window.replayStartMs),
  });
  const sized = members.map((m) => {
    const firstDemand = demandFunction(demandOf(m.share), new Date(startMs))(new Date(startMs));
    return { member: m, firstDemand, size: initialSize(m.policy, firstDemand) };
  });
  const clock = createVirtualClock({ start: new Date(startMs), speed: 0 });
  const emulator = await startEmulator({
    clock,
    scaleDurationMs: settings.scaleDurationMs,
    ingestionDelayMs: settings.ingestionDelayMs,
    // The app servers' /metrics on plain HTTP, for the demo's Prometheus.
    ...(leading ? { appServerHttpPort: 0 } : {}),
    instances: sized.map(({ member, size }) => ({
      resourceId: member.resourceId,
      ...(member.location !== "" ? { location: member.location } : {}),
      sku: size.sku,
      units: size.units,
      mix: mixOf(policy),
      demand: demandOf(member.share),
      createdAt: new Date(createdMs(settings)),
    })),
  });
  return { emulator, clock, sized };
}

/** The operator for the demo's namespace, on the emulator's clock and against its endpoints. */
function createDemoOperator(
  settings: DemoSettings,
  io: DemoIo,
  kube: KubeClients,
  emulator: RunningEmulator,
  clock: VirtualClock,
): { operator: Operator; operatorMetrics: OperatorMetrics } {
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
  const operatorMetrics = new OperatorMetrics({ now: opClock.now, processMetrics: false });
  const operator = new Operator(
    { kube, azure, log, metrics: operatorMetrics, clock: opClock },
    {
      namespaces: [settings.policy.metadata.namespace],
      workers: 2,
      // About 10 ms of real time between poll ticks, whatever the speed.
      tickMs: Math.max(1000, Math.round(settings.speed * 10)),
      identity: "signalr-autoscaler-demo",
    },
  );
  return { operator, operatorMetrics };
}

/** What the demo has started so far; the end of the run stops each one that is set. */
export interface Started {
  cluster?: DemoCluster | undefined;
  emulator?: RunningEmulator | undefined;
  events?: ResilientWatch<CoreV1Event> | undefined;
  /** Stops the Events watch. */
  readonly eventsStop: AbortController;
  operator?: Operator | undefined;
  /** The demo's Prometheus (a policy with a leading signal, unless --no-prometheus). */
  prometheus?: LocalPrometheus | undefined;
  /** The timer sampling the members' capacity during the replay. */
  sampler?: NodeJS.Timeout | undefined;
}

/** A member of the run as staged: the policy's instance alone, or one of the group's. */
export interface StagedMember extends DemoMember {
  /** Its policy as applied (leading signal pointed at the demo's Prometheus, or left out). */
  policy: CapacityPolicy;
  tracker: CapacityTracker;
  /** Its app-server replicas over virtual time: the initial count, then each change the passes report. */
  replicaLog: { time: number; replicas: number }[];
}

/** Everything in place for the replay. */
export interface DemoStage {
  cluster: DemoCluster;
  emulator: RunningEmulator;
  /** The emulator's virtual clock, stopped at the start of the window. */
  clock: VirtualClock;
  /** The operator, on that clock, not started. */
  operator: Operator;
  operatorMetrics: OperatorMetrics;
  /** The first member's (the policy's instance's) capacity. */
  tracker: CapacityTracker;
  /** The first member's app-server replicas over virtual time: the initial count, then each change the passes report. */
  replicaLog: { time: number; replicas: number }[];
  /** Every member, the primary first: one without `--replicas`. */
  members: StagedMember[];
  /** The leading signal as the demo runs it: from its Prometheus, or left out. */
  leading?: { prometheus?: { url: string; version: string; scrapeIntervalMs: number }; removed?: string };
}

/** The leading signal of each member's policy: from the demo's Prometheus, or left out. */
async function leadingSignalOf(
  settings: DemoSettings,
  io: DemoIo,
  say: (text: string) => void,
  emulator: RunningEmulator,
  members: DemoMember[],
  started: Started,
): Promise<{ policies: CapacityPolicy[]; leading: DemoStage["leading"] }> {
  const policies = members.map((m) => m.policy);
  if (!settings.policy.spec.anticipation?.leadingSignal) return { policies, leading: undefined };
  if (settings.prometheus === false) {
    say("Leading signal left out (--no-prometheus): the policy reads Azure Monitor alone");
    return {
      policies: policies.map(withoutLeadingSignal),
      leading: { removed: "--no-prometheus: the leading signal is left out" },
    };
  }
  const { prometheus, scrapeIntervalMs } = await startDemoPrometheus({
    policy: settings.policy,
    emulator,
    speed: settings.speed,
    onProgress: (line) => say(`[prometheus] ${line}`),
    signal: io.signal,
    ...(settings.group
      ? { targets: members.map((m) => ({ job: appServerJob(m.policy), appServerName: m.appServerName })) }
      : {}),
  });
  started.prometheus = prometheus;
  say(
    `Prometheus ${prometheus.version} at ${prometheus.url} scrapes the emulated app servers' negotiate calls ` +
      `(their clients stay ${DEFAULT_CONNECTION_LIFETIME_SECONDS / 60} minutes on average) every ${scrapeIntervalMs} ms (${SCRAPE_VIRTUAL_SECONDS} virtual seconds)`,
  );
  return {
    policies: policies.map((p) => pointedAt(p, prometheus.url)),
    leading: { prometheus: { url: prometheus.url, version: prometheus.version, scrapeIntervalMs } },
  };
}

/** What the emulator says of the members at the start. */
function emulatorLine(
  settings: DemoSettings,
  emulator: RunningEmulator,
  sized: { member: DemoMember; size: { sku: SkuName; units: number } }[],
): string {
  const { policy } = settings;
  const first = sized[0] as (typeof sized)[number];
  const head = `Azure emulator at ${emulator.armEndpoint}: ${policy.spec.target.service} ${first.member.resourceId.split("/").pop()}`;
  if (!settings.group) return `${head} starts at ${first.size.sku} × ${first.size.units}`;
  const pct = (share: number) => `${Math.round(share * 1000) / 10} %`;
  const each = sized.map(
    ({ member, size }) =>
      `${member.role === "Primary" ? "primary" : `replica ${member.resourceId.split("/").pop()}`} in ${member.location} ` +
      `(${pct(member.share)} of the demand) at ${size.sku} × ${size.units}`,
  );
  return `${head} with ${sized.length - 1} geo-replica(s): ${each.join("; ")}`;
}

/**
 * Sets the demo up (see the module comment), saying what it does through `live`. Undefined when
 * the signal aborted before the traffic could start.
 */
export async function setUpDemo(
  settings: DemoSettings,
  io: DemoIo,
  live: LiveView,
  started: Started,
): Promise<DemoStage | undefined> {
  const say = (text: string) => live.note(text);
  const namespace = settings.policy.metadata.namespace;
  const startMs = settings.window.startMs;

  const cluster = await prepareCluster({
    kubeconfig: settings.kubeconfig,
    context: settings.context,
    onProgress: say,
    signal: io.signal,
    ...(io.env ? { env: io.env } : {}),
  });
  started.cluster = cluster;
  if (io.signal.aborted) return undefined;
  const kube = cluster.kube;
  const crds = await installCrds(kube, io.signal);
  const created = await ensureNamespace(kube, namespace);
  say(`CRD ${crds.join(", ")} established; namespace ${namespace} ${created ? "created" : "exists"}`);

  const { emulator, clock, sized } = await startDemoEmulator(settings, membersOf(settings));
  started.emulator = emulator;
  say(emulatorLine(settings, emulator, sized));

  const signal = await leadingSignalOf(
    settings,
    io,
    say,
    emulator,
    sized.map((x) => x.member),
    started,
  );
  const leading = signal.leading;
  if (io.signal.aborted) return undefined;

  const members: StagedMember[] = [];
  for (const [i, { member, firstDemand, size }] of sized.entries()) {
    const policy = signal.policies[i] as CapacityPolicy;
    const replicaLog: StagedMember["replicaLog"] = [];
    const replicas = initialReplicas(policy, firstDemand);
    const app = policy.spec.appServer;
    if (app && replicas !== undefined) {
      await applyAppServers(kube, namespace, app.deploymentName, replicas);
      replicaLog.push({ time: startMs, replicas });
    }
    await createPolicy(kube, policy);
    const ruleOff =
      settings.group?.failoverRule === false
        ? " (the Failover anticipation rule off: --no-failover-rule)"
        : "";
    say(
      `Deployment ${app ? `${app.deploymentName} (${replicas} replicas)` : "—"} and CapacityPolicy ${policy.metadata.name} applied${ruleOff}`,
    );
    const tracker = new CapacityTracker(
      { fromMs: createdMs(settings), ...size },
      emulator,
      member.resourceId,
    );
    members.push({ ...member, policy, tracker, replicaLog });
  }
  if (cluster.kubectl) {
    say(`Watch along: ${cluster.kubectl} --kubeconfig ${cluster.kubeconfig} -n ${namespace} get capol -w`);
  }

  // Events, as the API server serves them (only those created from now on).
  const memberOf = new Map(members.map((m) => [m.policy.metadata.name, m.name]));
  const events = watchEvents(
    kube,
    namespace,
    live,
    () => clock.nowMs(),
    started.eventsStop.signal,
    settings.group ? (name) => memberOf.get(name) : undefined,
  );
  started.events = events;
  await Promise.race([events.synced, untilAborted(io.signal)]);
  if (io.signal.aborted) return undefined;

  const { operator, operatorMetrics } = createDemoOperator(settings, io, kube, emulator, clock);
  started.operator = operator;
  return {
    cluster,
    emulator,
    clock,
    operator,
    operatorMetrics,
    tracker: (members[0] as StagedMember).tracker,
    replicaLog: (members[0] as StagedMember).replicaLog,
    members,
    ...(leading ? { leading } : {}),
  };
}
