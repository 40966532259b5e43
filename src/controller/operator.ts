/**
 * The operator: builds what the loop (`loop.ts`) works with — the policy watches
 * (`policy-watches.ts`), the poll cycle's Azure and Prometheus readers, the reconcile pass and its
 * Kubernetes clients, leader election — and serves their readiness.
 *
 * - Watch: one resilient watch per watched namespace (or one cluster-wide); its events go to the
 *   loop, which keeps one record per policy (`loop-plan.ts`).
 * - Poll cycle (`poll-cycle.ts`): the policies due at a tick read from Azure together and handed
 *   to their passes; those with a seasonal forecast get their demand history, refreshed hourly in
 *   the background (`fetch.ts`); leading signals are read from Prometheus beside Azure.
 * - Deadlines: every Azure call has its request timeout and every token request its own
 *   (`azure/connection.ts`), every Kubernetes call its request timeout (`kube/client.ts`), and a
 *   cycle's Azure read the poll cycle deadline (`pollCycleTimeoutMs`). `/readyz` fails while a
 *   cycle runs longer than its deadline plus `readinessMarginMs` (`cycle-watch.ts`).
 * - Ownership (`ownership.ts`): the oldest policy naming a target owns it; a duplicate's pass is
 *   refused (`Conflict=True`, DuplicatePolicy) and the cycle reads nothing from Azure for it.
 * - Status: written when a field someone relies on changed, else at most every
 *   `statusRefreshMs` (status-need.ts); between writes each pass reads the status the last one
 *   computed, kept in memory (status-memory.ts).
 * - Leader election (optional): only the leader polls and acts; a new leader rebuilds everything
 *   from the policies' status (history, in-flight update, last scale time).
 */
import type { TokenCredential } from "@azure/identity";
import type { CapacityPolicy } from "../api/index.js";
import type { AzureAdapters } from "../azure/index.js";
import type { KubeClients } from "../kube/client.js";
import { EventRecorder } from "../kube/events.js";
import { LeaseClient } from "../kube/lease.js";
import { PolicyClient } from "../kube/policies.js";
import { readSecretKey } from "../kube/secrets.js";
import { WorkloadClient } from "../kube/workloads.js";
import { PrometheusClient } from "../prometheus/index.js";
import type { DisconnectionModel } from "../traffic/disconnections.js";
import type { OperatorClock } from "./clock.js";
import { CycleFetcher } from "./fetch.js";
import { type LeaderElectionSettings, LeaderElector, type LeaseOps } from "./leader.js";
import { LeadingReader } from "./leading.js";
import type { Logger } from "./logging.js";
import { type PassReport, PollLoop } from "./loop.js";
import type { OperatorMetrics } from "./metrics.js";
import { PolicyWatches } from "./policy-watches.js";
import { reconcile } from "./reconcile.js";
import { SpecCache } from "./spec-cache.js";
import { StatusMemory } from "./status-memory.js";
import type { TenancyMap } from "./tenancy.js";

export type { PassReport } from "./loop.js";

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
  /** Which clients a unit change disconnects on the instances (default `RemovedUnits`; `run --disconnection`). */
  disconnection?: DisconnectionModel;
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

/** The poll cycle's Azure reader, its history refreshes reported to `deps`' log and metrics. */
function cycleFetcher(deps: OperatorDeps, settings: OperatorSettings, stop: AbortSignal): CycleFetcher {
  return new CycleFetcher(deps.azure, {
    now: deps.clock.now,
    ...(settings.conflictCheckMs !== undefined ? { conflictCheckMs: settings.conflictCheckMs } : {}),
    onHistoryRefresh: (outcome) => {
      if ("error" in outcome) {
        if (!stop.aborted) deps.log.warn({ err: String(outcome.error) }, "history refresh failed");
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
}

export class Operator {
  readonly #deps: OperatorDeps;
  readonly #settings: OperatorSettings;
  readonly #stop = new AbortController();
  readonly #watches = new PolicyWatches();
  readonly #fetcher: CycleFetcher;
  /** The Prometheus client this operator made (closed by stop()); undefined when given one. */
  readonly #ownPrometheus: PrometheusClient | undefined;
  readonly #statusMemory = new StatusMemory();
  readonly #loop: PollLoop;
  readonly #elector: LeaderElector | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(deps: OperatorDeps, settings: OperatorSettings = {}) {
    this.#deps = deps;
    this.#settings = settings;
    this.#fetcher = cycleFetcher(deps, settings, this.#stop.signal);
    this.#ownPrometheus = deps.prometheus
      ? undefined
      : new PrometheusClient({ observe: (o) => deps.metrics.observePrometheusQuery(o) });
    const specs = new SpecCache();
    const passDeps = {
      policies: new PolicyClient(deps.kube),
      workloads: new WorkloadClient(deps.kube),
      events: new EventRecorder(deps.kube, { instance: settings.identity ?? "signalr-autoscaler" }),
      instances: deps.azure.instances,
      log: deps.log,
      metrics: deps.metrics,
      now: deps.clock.now,
      tenancy: settings.tenancy,
      statusMemory: this.#statusMemory,
      specs,
      ...(settings.statusRefreshMs !== undefined ? { statusRefreshMs: settings.statusRefreshMs } : {}),
      ...(settings.disconnection ? { disconnection: settings.disconnection } : {}),
    };
    this.#loop = new PollLoop(
      {
        policies: this.#watches,
        reader: this.#fetcher,
        leading: new LeadingReader({
          client: deps.prometheus ?? (this.#ownPrometheus as PrometheusClient),
          now: deps.clock.now,
          readSecret: (namespace, name, key) => readSecretKey(deps.kube, namespace, name, key),
          ...(deps.azureCredential ? { azureCredential: deps.azureCredential } : {}),
        }),
        pass: (policy, reading, signal) =>
          reconcile(policy, reading, { ...passDeps, canWrite: () => this.#canWrite(), signal }),
        clock: deps.clock,
        monotonicNow: deps.monotonicNow ?? (() => performance.now()),
        metrics: deps.metrics,
        log: deps.log,
        stop: this.#stop,
        specs,
        onForget: (k, policy) => {
          this.#statusMemory.forget(k);
          deps.metrics.forgetPolicy(policy.metadata.namespace, policy.metadata.name);
        },
      },
      settings,
    );
    this.#elector = settings.leaderElection
      ? new LeaderElector({
          ops: deps.leaseOps ?? new LeaseClient(deps.kube),
          settings: settings.leaderElection,
          log: deps.log,
          callbacks: {
            onStartedLeading: (signal) => this.#startLeading(signal),
            onStoppedLeading: () => this.#stopLeading(),
          },
        })
      : undefined;
    if (!this.#elector) this.#loop.startLeading(this.#stop.signal);
  }

  /** Called after every pass (the demo's live view, tests). Returns an unsubscribe function. */
  onPass(listener: (report: PassReport) => void): () => void {
    return this.#loop.onPass(listener);
  }

  /** True while this replica acts (leader, or no election). */
  get isLeader(): boolean {
    return this.#loop.acting;
  }

  /** Starts watching, polling and acting. Resolves once every watch has listed the policies. */
  async start(): Promise<void> {
    this.#watches.start(this.#deps.kube, this.#settings.namespaces, {
      signal: this.#stop.signal,
      log: this.#deps.log,
      onEvent: (e) => this.#loop.policyEvent(e),
    });
    const { azure, metrics } = this.#deps;
    // Azure calls (API, status, latency) and ARM's remaining quota go to the metrics.
    this.#unsubscribe = azure.calls.subscribe((call) =>
      metrics.observeAzureCall(call.api, call.status, call.seconds, call.timedOut),
    );
    metrics.trackArmQuota(() => azure.quota.snapshot());
    metrics.trackThrottles(() => [
      ...azure.armGate.snapshot().map((g) => ({ ...g, endpoint: "arm" as const })),
      ...azure.metricsGate.snapshot().map((g) => ({ ...g, endpoint: "metrics" as const })),
    ]);
    metrics.leader.set(this.#loop.acting ? 1 : 0);
    this.#elector?.start();
    this.#loop.start();
    await this.#watches.synced();
  }

  /**
   * Stops: no new passes, waits for running passes (their Azure and Kubernetes calls are aborted
   * after `graceMs`), stops the watches, releases the lease.
   */
  async stop(graceMs = 10_000): Promise<void> {
    await this.#loop.stop(graceMs);
    await this.#fetcher.historySettled();
    await this.#watches.stop();
    await this.#elector?.stop();
    await this.#ownPrometheus?.close().catch(() => {});
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
      watch: () => this.#watches.check(new Date()),
      azure: () => {
        const error = this.#loop.azure.lastError;
        if (!this.#loop.acting || error === undefined) return { ok: true };
        return { ok: false, reason: `last Azure poll failed: ${error}` };
      },
      pollCycle: () => this.#loop.pollCycleCheck(),
    };
  }

  /** Current policies known from the watch. */
  policies(): CapacityPolicy[] {
    return this.#watches.list();
  }

  #startLeading(signal: AbortSignal): void {
    this.#loop.startLeading(signal);
    this.#deps.metrics.leader.set(1);
  }

  #stopLeading(): void {
    this.#loop.stopLeading();
    this.#deps.metrics.leader.set(0);
    // The new leader exports the policies' gauges now: a stale copy here would contradict it.
    for (const p of this.policies()) this.#deps.metrics.forgetPolicy(p.metadata.namespace, p.metadata.name);
    // A new term reads every policy's status from the API server.
    this.#statusMemory.clear();
  }

  #canWrite(): boolean {
    return !this.#stop.signal.aborted && (this.#elector?.canWrite() ?? true);
  }

  /** True when no poll cycle, pass or demand-history refresh runs (tests that step a virtual clock). */
  get idle(): boolean {
    return this.#loop.idle && !this.#fetcher.historyRefreshing;
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
    return this.#loop.azure.lastOk;
  }
}
