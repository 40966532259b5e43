/**
 * The operator: composes the watch, the poll cycle, the work queue, the reconcile passes, leader
 * election, metrics and probes.
 *
 * - Watch: one resilient watch per watched namespace (or one cluster-wide), keeping the current
 *   policies in memory. A new or changed policy (generation or annotations) is due at once; a
 *   deleted one is forgotten, and so are the native autoscale settings cached for its target (also
 *   for the old target of a retargeted one).
 * - Poll cycle: every tick, the policies whose poll time has come are read from Azure together
 *   (instances by subscription, metrics in getBatch groups of ≤ 50) and handed to the queue; those
 *   with a seasonal forecast get their demand history, refreshed hourly in the background. Leading
 *   signals are read from Prometheus beside Azure (`leading.ts`); a policy with one is handed to
 *   the queue once its own read is done (within its timeout), the others as soon as their own
 *   metrics batch is read. A cycle runs in the background: once it has handed a policy over and
 *   waits only for a slow batch (or after half a second), the next tick starts a cycle for the
 *   other due policies; before that they wait for it, so policies due together share their Azure
 *   calls.
 * - Deadlines: every Azure call has its request timeout and every token request its own
 *   (`azure/connection.ts`), every Kubernetes call its request timeout (`kube/client.ts`), and a
 *   cycle's Azure read the poll cycle deadline (`pollCycleTimeoutMs`): at the deadline its calls
 *   are aborted (transient failures of their policies) and, should the read still not end within a
 *   second, its remaining policies are handed to their passes as failed reads. `/readyz` fails
 *   while a cycle runs longer than its deadline plus `readinessMarginMs` (`cycle-watch.ts`).
 * - Ownership: each watched policy's claims (its instance, app-server Deployment and HPA) are
 *   kept from the watch events; the oldest policy naming a target owns it, the others are
 *   duplicates (`ownership.ts`). A duplicate's pass is refused (`Conflict=True`, DuplicatePolicy)
 *   and the cycle reads nothing from Azure for it. When a policy's verdict changes (its owner was
 *   deleted or retargeted, an older policy now names its target), it is due at once — or right
 *   after the pass it is in — so the next oldest takes over within one pass.
 * - Work queue: one entry per policy, never two passes of one policy at once; `workers` passes run
 *   concurrently. A failed pass is retried after a per-policy exponential backoff.
 * - Status: written when a field someone relies on changed, else at most every
 *   `statusRefreshMs` (status-need.ts); between writes each pass reads the status the last one
 *   computed, kept in memory (status-memory.ts).
 * - Leader election (optional): only the leader polls and acts; a new leader rebuilds everything
 *   from the policies' status (history, in-flight update, last scale time).
 */

import type { TokenCredential } from "@azure/identity";
import type { CapacityPolicy } from "../api/index.js";
import type { LeadingObservation } from "../autoscale/leading.js";
import type { AzureAdapters } from "../azure/index.js";
import type { ServiceKind } from "../capacity/skus.js";
import type { KubeClients } from "../kube/client.js";
import { EventRecorder } from "../kube/events.js";
import { LeaseClient } from "../kube/lease.js";
import { PolicyClient } from "../kube/policies.js";
import { readSecretKey } from "../kube/secrets.js";
import {
  isWatchReady,
  objectKey,
  type ResilientWatch,
  type WatchEvent,
  watchPolicies,
} from "../kube/watch.js";
import { WorkloadClient } from "../kube/workloads.js";
import { PrometheusClient } from "../prometheus/index.js";
import type { OperatorClock } from "./clock.js";
import { CycleWatch, DEFAULT_POLL_CYCLE_TIMEOUT_MS, DEFAULT_READINESS_MARGIN_MS } from "./cycle-watch.js";
import {
  CycleFetcher,
  type CycleReading,
  type CycleTarget,
  metricsReadTimes,
  seasonalHistory,
} from "./fetch.js";
import { type LeaderElectionSettings, LeaderElector, type LeaseOps } from "./leader.js";
import { LeadingReader } from "./leading.js";
import { type Logger, scrubSecrets } from "./logging.js";
import type { OperatorMetrics } from "./metrics.js";
import { ClaimIndex, type Duplicate, policyClaims } from "./ownership.js";
import { WorkQueue } from "./queue.js";
import { type PassDeps, type PassResult, reconcile } from "./reconcile.js";
import { nextPollTime } from "./schedule.js";
import { StatusMemory } from "./status-memory.js";
import { checkTarget, type TenancyMap } from "./tenancy.js";

export interface OperatorSettings {
  /** Namespaces to watch; all namespaces when empty or absent. */
  namespaces?: readonly string[];
  /** Namespace → allowed Azure scopes (see tenancy.ts). */
  tenancy?: TenancyMap;
  /** Concurrent reconcile passes (default 16). */
  workers?: number;
  /** How often the poll cycle looks for due policies, ms (default 1,000). */
  tickMs?: number;
  /** How often native autoscale settings are re-read per subscription, ms (default 300,000). */
  conflictCheckMs?: number;
  /** Leader election; without it this replica always acts. */
  leaderElection?: LeaderElectionSettings;
  /** The replica's name, for Events (default "signalr-autoscaler"). */
  identity?: string;
  /** Deadline of one poll cycle's Azure read, real ms (default 60,000). */
  pollCycleTimeoutMs?: number;
  /** How far past its deadline a poll cycle may run before `/readyz` fails, real ms (default 15,000). */
  readinessMarginMs?: number;
  /**
   * A status whose relied-upon fields did not change is written at most this often, ms (default
   * 300,000): the age bound of `status.lastSample` (kubectl's Load and Connections columns).
   */
  statusRefreshMs?: number;
}

export interface OperatorDeps {
  kube: KubeClients;
  azure: AzureAdapters;
  log: Logger;
  metrics: OperatorMetrics;
  clock: OperatorClock;
  /** The Lease operations of leader election (default: a LeaseClient on `kube`). */
  leaseOps?: LeaseOps;
  /**
   * The Prometheus client of leading signals (default: one whose calls `/metrics` counts). Closed
   * by the caller.
   */
  prometheus?: PrometheusClient;
  /** The operator's Azure credential, for leading signals with `useAzureCredential`. */
  azureCredential?: TokenCredential;
  /** Monotonic clock of deadlines and readiness, real ms (default `performance.now`). */
  monotonicNow?: () => number;
}

/** What one finished pass reports (for tests and the demo's live view). */
export interface PassReport {
  key: string;
  policy: CapacityPolicy;
  result?: PassResult;
  error?: unknown;
}

/**
 * What a policy's status knows of its instance's unit ladders, for the cycle (fetch.ts): when
 * `listSkus` last answered, and when an update was last found not applied (ms since the epoch).
 */
function ladderKnown(policy: CapacityPolicy): CycleTarget["ladder"] {
  const stored = policy.status?.unitLadders;
  const unapplied = policy.status?.unappliedUpdates;
  const readAtMs = stored?.readAt ? Date.parse(stored.readAt) : Number.NaN;
  const notApplied = [
    ...(stored?.excluded ?? []).map((e) => e.time),
    ...(unapplied?.lastOutcome === undefined || unapplied.lastOutcome === "NotApplied"
      ? [unapplied?.lastTime]
      : []),
  ];
  const wanted = Math.max(...notApplied.map((t) => (t ? Date.parse(t) : Number.NaN)).filter(Number.isFinite));
  if (!Number.isFinite(readAtMs) && !Number.isFinite(wanted)) return undefined;
  return {
    ...(Number.isFinite(readAtMs) ? { readAtMs } : {}),
    ...(Number.isFinite(wanted) ? { wantedAfterMs: wanted } : {}),
  };
}

/**
 * How long a new poll cycle waits for a running one that has handed no policy over yet, real ms:
 * policies due meanwhile then share the next cycle's Azure calls; past it, a slow cycle holds no
 * other policy.
 */
const CYCLE_GATHER_MS = 500;

/** How long a poll cycle's read may take to come back after its deadline aborted its calls, ms. */
const DEADLINE_GRACE_MS = 1000;

/**
 * `promise`'s value, or `"overdue"` when it has not settled `graceMs` after `deadline` fired.
 * @throws what `promise` rejects with (before it is overdue).
 */
async function settleByDeadline<T>(
  promise: Promise<T>,
  deadline: AbortSignal,
  graceMs: number,
): Promise<T | "overdue"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const overdue = new Promise<"overdue">((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve("overdue"), graceMs);
    };
    if (deadline.aborted) onAbort();
    else deadline.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, overdue]);
  } finally {
    clearTimeout(timer);
    if (onAbort) deadline.removeEventListener("abort", onAbort);
  }
}

/**
 * What a poll cycle reads for `due`: a target per policy whose instance Azure is asked about, and
 * a reading for each policy whose target the pass refuses anyway (a malformed resource ID,
 * InvalidSpec, one outside its namespace's tenancy scopes, OutOfScope, or a duplicate of an older
 * policy: `duplicateOf`) — Azure is not read for those. Policies without a SignalR or Web PubSub
 * target are in neither.
 */
function cycleTargets(
  due: readonly CapacityPolicy[],
  tenancy: Parameters<typeof checkTarget>[0],
  now: number,
  duplicateOf: (key: string) => Duplicate | undefined,
): { targets: CycleTarget[]; refused: Map<string, CycleReading> } {
  const targets: CycleTarget[] = [];
  const refused = new Map<string, CycleReading>();
  for (const p of due) {
    const target = p.spec?.target;
    if (!target?.resourceId || (target.service !== "SignalR" && target.service !== "WebPubSub")) continue;
    const check = checkTarget(tenancy, p.metadata.namespace, target.resourceId);
    if (!check.ok) {
      refused.set(objectKey(p), { fetchedAt: now, target: check });
      continue;
    }
    const duplicate = duplicateOf(objectKey(p));
    if (duplicate) {
      refused.set(objectKey(p), { fetchedAt: now, target: check, duplicate });
      continue;
    }
    const seasonal = seasonalHistory(p);
    const ladder = ladderKnown(p);
    targets.push({
      key: objectKey(p),
      resourceId: target.resourceId,
      ref: check.ref,
      service: target.service as ServiceKind,
      lookbackMs: metricsReadTimes(p).lookbackMs,
      ...(seasonal ? { seasonal } : {}),
      ...(ladder ? { ladder } : {}),
    });
  }
  return { targets, refused };
}

export class Operator {
  readonly #deps: OperatorDeps;
  readonly #settings: OperatorSettings;
  readonly #queue: WorkQueue;
  readonly #fetcher: CycleFetcher;
  readonly #leadingReader: LeadingReader;
  /** The Prometheus client this operator made (closed by stop()); undefined when given one. */
  readonly #ownPrometheus: PrometheusClient | undefined;
  readonly #policies: PolicyClient;
  readonly #passDeps: Omit<PassDeps, "canWrite" | "signal">;
  readonly #watches: ResilientWatch<CapacityPolicy>[] = [];
  readonly #nextPoll = new Map<string, number>();
  readonly #readings = new Map<string, CycleReading>();
  readonly #statusMemory = new StatusMemory();
  /** The watched policies' claims and the duplicates among them (ownership.ts). */
  readonly #claims = new ClaimIndex();
  /** Policies whose ownership changed while a pass of theirs was queued or ran: due again after it. */
  readonly #repoll = new Set<string>();
  /** Policies whose leading signal is still being read (their pass waits for it). */
  readonly #leadingPending = new Set<string>();
  readonly #listeners = new Set<(report: PassReport) => void>();
  readonly #stop = new AbortController();
  readonly #elector: LeaderElector | undefined;
  #leading = false;
  #termSignal: AbortSignal;
  #tickTimer: unknown;
  /** Policies whose poll cycle is still reading Azure for them. */
  readonly #inCycle = new Set<string>();
  readonly #cycleWatch: CycleWatch;
  readonly #cycleTimeoutMs: number;
  /** Cycles still running (stop() waits for them). */
  readonly #cycles = new Set<Promise<void>>();
  /**
   * When each running cycle that has handed no policy over yet started (monotonic ms): no new
   * cycle starts within {@link CYCLE_GATHER_MS} of one.
   */
  readonly #cyclesStarting = new Map<object, number>();
  readonly #monotonicNow: () => number;
  #workers: Promise<void>[] = [];
  #lastAzureOk: number | undefined;
  #lastAzureError: string | undefined;
  #stopping = false;
  #unsubscribe: (() => void) | undefined;

  constructor(deps: OperatorDeps, settings: OperatorSettings = {}) {
    this.#deps = deps;
    this.#settings = settings;
    this.#queue = new WorkQueue({ backoff: { initialMs: 5_000, maxMs: 300_000 } });
    this.#fetcher = new CycleFetcher(deps.azure, {
      now: deps.clock.now,
      ...(settings.conflictCheckMs !== undefined ? { conflictCheckMs: settings.conflictCheckMs } : {}),
      onHistoryRefresh: (outcome) => {
        if ("error" in outcome) {
          if (!this.#stop.signal.aborted)
            deps.log.warn({ err: String(outcome.error) }, "history refresh failed");
          return;
        }
        deps.metrics.observeHistoryRefresh(outcome.report, deps.azure.history.size);
        const failed = outcome.report.reads.filter((r) => r.result === "failure");
        if (failed.length > 0) {
          deps.log.warn(
            { resources: failed.length, first: failed[0]?.resourceId, err: failed[0]?.error },
            "history read failed",
          );
        }
      },
    });
    this.#ownPrometheus = deps.prometheus
      ? undefined
      : new PrometheusClient({ observe: (o) => deps.metrics.observePrometheusQuery(o) });
    this.#leadingReader = new LeadingReader({
      client: deps.prometheus ?? (this.#ownPrometheus as PrometheusClient),
      now: deps.clock.now,
      readSecret: (namespace, name, key) => readSecretKey(deps.kube, namespace, name, key),
      ...(deps.azureCredential ? { azureCredential: deps.azureCredential } : {}),
    });
    this.#policies = new PolicyClient(deps.kube);
    this.#passDeps = {
      policies: this.#policies,
      workloads: new WorkloadClient(deps.kube),
      events: new EventRecorder(deps.kube, { instance: settings.identity ?? "signalr-autoscaler" }),
      instances: deps.azure.instances,
      log: deps.log,
      metrics: deps.metrics,
      now: deps.clock.now,
      tenancy: settings.tenancy,
      statusMemory: this.#statusMemory,
      ...(settings.statusRefreshMs !== undefined ? { statusRefreshMs: settings.statusRefreshMs } : {}),
    };
    this.#termSignal = this.#stop.signal;
    this.#cycleTimeoutMs = settings.pollCycleTimeoutMs ?? DEFAULT_POLL_CYCLE_TIMEOUT_MS;
    this.#monotonicNow = deps.monotonicNow ?? (() => performance.now());
    this.#cycleWatch = new CycleWatch({
      deadlineMs: this.#cycleTimeoutMs,
      marginMs: settings.readinessMarginMs ?? DEFAULT_READINESS_MARGIN_MS,
      now: this.#monotonicNow,
    });
    if (settings.leaderElection) {
      this.#elector = new LeaderElector({
        ops: deps.leaseOps ?? new LeaseClient(deps.kube),
        settings: settings.leaderElection,
        log: deps.log,
        callbacks: {
          onStartedLeading: (signal) => this.#startLeading(signal),
          onStoppedLeading: () => this.#stopLeading(),
        },
      });
    } else {
      this.#leading = true;
    }
  }

  /** Called after every pass (the demo's live view, tests). Returns an unsubscribe function. */
  onPass(listener: (report: PassReport) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** True while this replica acts (leader, or no election). */
  get isLeader(): boolean {
    return this.#leading;
  }

  /** Starts watching, polling and acting. Resolves once every watch has listed the policies. */
  async start(): Promise<void> {
    const namespaces = this.#settings.namespaces?.length ? this.#settings.namespaces : [undefined];
    for (const namespace of namespaces) {
      this.#watches.push(
        watchPolicies(this.#deps.kube, {
          ...(namespace !== undefined ? { namespace } : {}),
          signal: this.#stop.signal,
          onEvent: (e) => this.#onWatchEvent(e),
          onError: (err, phase, retryInMs) =>
            this.#deps.log.warn({ err: err.message, phase, retryInMs }, "policy watch error"),
        }),
      );
    }
    const workers = this.#settings.workers ?? 16;
    this.#workers = Array.from({ length: workers }, () => this.#work());
    // Azure calls (API, status, latency) and ARM's remaining quota go to the metrics.
    this.#unsubscribe = this.#deps.azure.calls.subscribe((call) =>
      this.#deps.metrics.observeAzureCall(call.api, call.status, call.seconds, call.timedOut),
    );
    this.#deps.metrics.trackArmQuota(() => this.#deps.azure.quota.snapshot());
    this.#deps.metrics.trackThrottles(() => [
      ...this.#deps.azure.armGate.snapshot().map((g) => ({ ...g, endpoint: "arm" as const })),
      ...this.#deps.azure.metricsGate.snapshot().map((g) => ({ ...g, endpoint: "metrics" as const })),
    ]);
    this.#deps.metrics.leader.set(this.#leading ? 1 : 0);
    this.#elector?.start();
    this.#scheduleTick(0);
    await Promise.all(this.#watches.map((w) => w.synced));
  }

  /**
   * Stops: no new passes, waits for running passes (their Azure and Kubernetes calls are aborted
   * after `graceMs`), stops the watches, releases the lease.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.#stopping = true;
    this.#deps.clock.scheduler.clearTimeout(this.#tickTimer);
    this.#queue.shutDown();
    const grace = setTimeout(() => this.#stop.abort(new Error("operator stopping")), graceMs);
    await Promise.allSettled(this.#workers);
    clearTimeout(grace);
    this.#stop.abort(new Error("operator stopped"));
    await Promise.allSettled([...this.#cycles]);
    await this.#fetcher.historySettled();
    await Promise.all(this.#watches.map((w) => w.stop()));
    await this.#elector?.stop();
    await this.#ownPrometheus?.close().catch(() => {});
    this.#leading = false;
    this.#deps.metrics.leader.set(0);
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /**
   * Readiness: the watches are healthy (listed, in contact with the API server within 90 s, and
   * not failing now); when leading, the last poll of Azure did not fail everywhere, and no poll
   * cycle runs longer than its deadline plus the readiness margin.
   */
  readiness(): Record<string, () => { ok: boolean; reason?: string }> {
    return {
      watch: () => {
        const now = new Date();
        if (this.#watches.length === 0) return { ok: false, reason: "policy watch not started" };
        const bad = this.#watches.find((w) => {
          const health = w.health();
          const failing = health.consecutiveFailures > 0 && !health.connected;
          return failing || !isWatchReady(health, now, 90_000);
        });
        return bad
          ? {
              ok: false,
              reason: `policy watch not healthy: ${scrubSecrets(bad.health().lastError?.message ?? "no contact")}`,
            }
          : { ok: true };
      },
      azure: () => {
        if (!this.#leading || this.#lastAzureError === undefined) return { ok: true };
        return { ok: false, reason: `last Azure poll failed: ${this.#lastAzureError}` };
      },
      pollCycle: () => this.#cycleWatch.check(),
    };
  }

  /** Drops everything kept for a deleted policy: its schedule, reading, status memory, metrics. */
  #forget(k: string, policy: CapacityPolicy): void {
    const target = policy.spec?.target?.resourceId;
    this.#nextPoll.delete(k);
    this.#readings.delete(k);
    this.#statusMemory.forget(k);
    this.#queue.remove(k);
    this.#leadingReader.forget(k);
    this.#claims.delete(k);
    this.#repoll.delete(k);
    if (target) this.#fetcher.forget(target);
    this.#deps.metrics.forgetPolicy(policy.metadata.namespace, policy.metadata.name);
  }

  /** The policy of `k` as the watches hold it now. */
  #watched(k: string): CapacityPolicy | undefined {
    return this.#watches.map((w) => w.get(k)).find((p) => p !== undefined);
  }

  /** Current policies known from the watch. */
  policies(): CapacityPolicy[] {
    return this.#watches.flatMap((w) => w.list());
  }

  #onWatchEvent(e: WatchEvent<CapacityPolicy>): void {
    if (e.type === "synced") return;
    const k = objectKey(e.object);
    const target = e.object.spec?.target?.resourceId;
    if (e.type === "deleted") {
      this.#forget(k, e.object);
      return;
    }
    this.#claims.set(policyClaims(e.object, this.#settings.tenancy));
    const previousTarget = e.type === "updated" ? e.previous.spec?.target?.resourceId : undefined;
    if (previousTarget && previousTarget !== target) this.#fetcher.forget(previousTarget);
    const changed =
      e.type === "added" ||
      e.object.metadata.generation !== e.previous.metadata.generation ||
      JSON.stringify(e.object.metadata.annotations ?? {}) !==
        JSON.stringify(e.previous.metadata.annotations ?? {});
    if (changed) this.#nextPoll.set(k, this.#deps.clock.now());
  }

  #startLeading(signal: AbortSignal): void {
    this.#termSignal = AbortSignal.any([signal, this.#stop.signal]);
    this.#leading = true;
    this.#deps.metrics.leader.set(1);
    // Everything is rebuilt from status: poll every policy now.
    const now = this.#deps.clock.now();
    for (const p of this.policies()) this.#nextPoll.set(objectKey(p), now);
  }

  #stopLeading(): void {
    this.#leading = false;
    this.#deps.metrics.leader.set(0);
    this.#readings.clear();
    // The new leader exports the policies' gauges now: a stale copy here would contradict it.
    for (const p of this.policies()) this.#deps.metrics.forgetPolicy(p.metadata.namespace, p.metadata.name);
    // A new term reads every policy's status from the API server.
    this.#statusMemory.clear();
  }

  #canWrite(): boolean {
    if (this.#stop.signal.aborted) return false;
    return this.#elector ? this.#elector.canWrite() : true;
  }

  #scheduleTick(delayMs: number): void {
    if (this.#stopping || this.#stop.signal.aborted) return;
    this.#tickTimer = this.#deps.clock.scheduler.setTimeout(() => {
      void this.#tick().finally(() => this.#scheduleTick(this.#settings.tickMs ?? 1000));
    }, delayMs);
  }

  /** One tick: starts a poll cycle for every due policy that no cycle or pass holds. */
  async #tick(): Promise<void> {
    this.#deps.metrics.queueDepth.set(this.#queue.depth);
    this.#refreshOwnership();
    // A young cycle that has handed nothing over yet keeps the policies due meanwhile for the next
    // one (one getBatch per region for them all); once it waits only for a slow batch, or has
    // waited CYCLE_GATHER_MS, others go on.
    if (!this.#leading || this.#stopping || this.#gathering()) return;
    const now = this.#deps.clock.now();
    const due: CapacityPolicy[] = [];
    for (const p of this.policies()) {
      const k = objectKey(p);
      if (!this.#nextPoll.has(k)) this.#nextPoll.set(k, now);
      if (
        (this.#nextPoll.get(k) ?? now) > now ||
        this.#inCycle.has(k) ||
        this.#queue.isProcessing(k) ||
        this.#readings.has(k) ||
        this.#leadingPending.has(k)
      )
        continue;
      this.#repoll.delete(k);
      due.push(p);
    }
    if (due.length === 0) return;
    const cycle = this.#cycle(due, now);
    this.#cycles.add(cycle);
    void cycle.finally(() => this.#cycles.delete(cycle));
  }

  /**
   * Rebuilds the ownership verdicts after a watch event changed some policy's claims: a policy
   * whose verdict changed is due now, and again right after a pass of it already queued or running
   * (that pass used the old verdict).
   */
  #refreshOwnership(): void {
    const changed = this.#claims.refresh();
    if (changed.length === 0) return;
    const now = this.#deps.clock.now();
    for (const k of changed) {
      this.#nextPoll.set(k, now);
      this.#repoll.add(k);
    }
  }

  /** True while a cycle younger than {@link CYCLE_GATHER_MS} has handed no policy over yet. */
  #gathering(): boolean {
    const now = this.#monotonicNow();
    for (const at of this.#cyclesStarting.values()) if (now - at < CYCLE_GATHER_MS) return true;
    return false;
  }

  /**
   * One poll cycle: reads Azure for `due` at once, under the poll cycle deadline, and hands each
   * policy to its pass as soon as its own reading is complete.
   */
  async #cycle(due: readonly CapacityPolicy[], now: number): Promise<void> {
    for (const p of due) this.#inCycle.add(objectKey(p));
    const byKey = new Map(due.map((p) => [objectKey(p), p]));
    const { targets, refused } = cycleTargets(due, this.#settings.tenancy, now, (k) =>
      this.#claims.duplicateOf(k),
    );
    const leading = this.#startLeadingReads(due, refused);
    const handed = new Set<string>();
    const token = {};
    this.#cyclesStarting.set(token, this.#monotonicNow());
    const started = () => this.#cyclesStarting.delete(token);
    const hand = (k: string, reading: CycleReading | undefined) => {
      const p = byKey.get(k);
      if (!p || handed.has(k)) return;
      handed.add(k);
      if (!refused.has(k)) started();
      this.#inCycle.delete(k);
      if (!this.#leading || this.#stopping) return;
      this.#nextPoll.set(k, now + (p.spec?.pollIntervalSeconds ?? 30) * 1000);
      const observation = leading.get(k);
      if (!observation) {
        this.#enqueue(k, reading);
        return;
      }
      this.#leadingPending.add(k);
      void observation.then((o) => {
        this.#leadingPending.delete(k);
        if (!this.#leading || this.#stopping) return;
        if (reading) reading.leading = o;
        this.#enqueue(k, reading);
      });
    };
    for (const [k, reading] of refused) hand(k, reading);
    try {
      const deadline = AbortSignal.timeout(this.#cycleTimeoutMs);
      const watchId = this.#cycleWatch.begin();
      const read = this.#fetcher.read(targets, this.#termSignal, { deadline, onReady: hand });
      void read.then(
        () => this.#cycleWatch.end(watchId),
        () => this.#cycleWatch.end(watchId),
      );
      const { readings, overdue } = await this.#settleRead(
        read,
        deadline,
        now,
        () => targets.length - handed.size,
      );
      for (const t of targets) {
        hand(t.key, readings.get(t.key) ?? (overdue ? this.#overdueReading(t, now) : undefined));
      }
      for (const p of due) hand(objectKey(p), undefined);
    } finally {
      started();
    }
  }

  /**
   * Starts the leading-signal reads of `due` (Prometheus, each within its own timeout) while Azure
   * is read; a policy's pass waits for its own read only, so a slow or hanging Prometheus holds
   * neither the cycle nor any other policy's pass. Policies without one (or refused) forget theirs.
   */
  #startLeadingReads(
    due: readonly CapacityPolicy[],
    refused: ReadonlyMap<string, CycleReading>,
  ): Map<string, Promise<LeadingObservation>> {
    const leading = new Map<string, Promise<LeadingObservation>>();
    for (const p of due) {
      const a = p.spec?.anticipation;
      const k = objectKey(p);
      if (!a?.leadingSignal?.prometheus || a.mode === "Off" || refused.has(k)) {
        this.#leadingReader.forget(k);
        continue;
      }
      leading.set(
        k,
        this.#leadingReader.readOne({ key: k, namespace: p.metadata.namespace, spec: a.leadingSignal }),
      );
    }
    return leading;
  }

  /**
   * The cycle's readings once `read` settles or its deadline (plus grace) passes, recording how
   * Azure answered (`#lastAzureOk`, `#lastAzureError`, the timeout counter). Never throws.
   */
  async #settleRead(
    read: Promise<Map<string, CycleReading>>,
    deadline: AbortSignal,
    now: number,
    unhanded: () => number,
  ): Promise<{ readings: Map<string, CycleReading>; overdue: boolean }> {
    let readings = new Map<string, CycleReading>();
    let overdue = false;
    try {
      const result = await settleByDeadline(read, deadline, DEADLINE_GRACE_MS);
      if (result === "overdue") {
        overdue = true;
        read.catch(() => {});
      } else readings = result;
      if (deadline.aborted) this.#deps.metrics.pollCycleTimeouts.inc();
      const failures = [...readings.values()].filter((r) => r.instanceError && !r.instance);
      if (overdue) {
        this.#lastAzureError = `the poll cycle did not end within its deadline of ${this.#cycleTimeoutMs / 1000} s`;
        this.#deps.log.warn({ policies: unhanded() }, "poll cycle deadline passed");
      } else if (failures.length > 0 && failures.length === readings.size) {
        this.#lastAzureError = failures[0]?.instanceError?.message;
      } else {
        this.#lastAzureOk = now;
        this.#lastAzureError = undefined;
      }
    } catch (err) {
      // A malformed resource ID is caught by validation in the pass; anything else is logged.
      this.#deps.log.warn({ err: String(err) }, "poll cycle failed");
      this.#lastAzureError = String(err);
    }
    return { readings, overdue };
  }

  /** The reading of a target Azure did not answer for within the poll cycle's deadline. */
  #overdueReading(t: CycleTarget, now: number): CycleReading {
    return {
      fetchedAt: now,
      target: { ok: true, ref: t.ref },
      instanceError: {
        kind: "Network",
        message: `Azure did not answer within the poll cycle deadline (${this.#cycleTimeoutMs / 1000} s)`,
        cause: undefined,
      },
    };
  }

  /** Hands a policy's reading of this cycle to its pass. */
  #enqueue(k: string, reading: CycleReading | undefined): void {
    if (reading) this.#readings.set(k, reading);
    this.#queue.add(k);
  }

  async #work(): Promise<void> {
    for (;;) {
      const k = await this.#queue.get();
      if (k === undefined) return;
      const policy = this.#watched(k);
      const reading = this.#readings.get(k);
      this.#readings.delete(k);
      if (!policy) {
        this.#queue.done(k);
        continue;
      }
      const started = performance.now();
      const passStartedAt = this.#deps.clock.now();
      try {
        const result = await reconcile(policy, reading, {
          ...this.#passDeps,
          canWrite: () => this.#canWrite(),
          signal: this.#termSignal,
        });
        this.#queue.forget(k);
        if (result.outcome === "deleted" || this.#watched(k) === undefined) {
          // Deleted while the pass ran: what the pass left for it goes with it.
          this.#forget(k, policy);
        } else {
          // On the interval's grid, from when Azure was read: policies stay in one poll cycle.
          this.#nextPoll.set(k, nextPollTime(reading?.fetchedAt ?? passStartedAt, result.requeueAfterMs));
          // Its ownership changed after its reading was taken: due again with the new verdict.
          if (this.#repoll.delete(k)) this.#nextPoll.set(k, this.#deps.clock.now());
        }
        this.#emit({ key: k, policy, result });
      } catch (err) {
        const delay = this.#queue.nextBackoff(k);
        this.#nextPoll.set(k, this.#deps.clock.now() + delay);
        this.#deps.metrics.passErrors.inc({ kind: err instanceof Error ? err.name : "Error" });
        this.#deps.log.warn(
          {
            namespace: policy.metadata.namespace,
            policy: policy.metadata.name,
            err: String(err),
            retryInMs: delay,
          },
          "reconcile pass failed",
        );
        this.#emit({ key: k, policy, error: err });
      } finally {
        this.#deps.metrics.passDuration.observe((performance.now() - started) / 1000);
        this.#queue.done(k);
      }
    }
  }

  #emit(report: PassReport): void {
    for (const l of this.#listeners) {
      try {
        l(report);
      } catch {
        // A listener's failure does not stop the loop.
      }
    }
  }

  /** Resolves when no demand-history refresh runs (tests). */
  historySettled(): Promise<void> {
    return this.#fetcher.historySettled();
  }

  /** How many Azure resources have their native autoscale settings cached, for diagnostics. */
  get cachedResources(): number {
    return this.#fetcher.cachedResources;
  }

  /** When Azure last answered a poll cycle (ms since the epoch), for diagnostics. */
  get lastAzureOk(): number | undefined {
    return this.#lastAzureOk;
  }
}
