/**
 * Prometheus metrics of the operator (prom-client), on a registry owned by one
 * {@link OperatorMetrics} instance that the operator builds at start and hands down.
 *
 * Families (all prefixed `signalr_autoscaler_`):
 * - `current_units`, `desired_units`, `current_replicas`, `desired_replicas` {namespace, policy}
 * - `last_sample` {namespace, policy, metric} and `last_sample_age_seconds` {namespace, policy}
 * - `status_condition` {namespace, policy, type, status} (1 for the status each condition type has
 *   now, 0 for the other two of True/False/Unknown, as kube-state-metrics exports conditions),
 *   `current_sku_info` and `desired_sku_info` {namespace, policy, sku} (1),
 *   `spec_min_units`, `spec_max_units`, `spec_poll_interval_seconds` {namespace, policy},
 *   `spec_target_percent` {namespace, policy, metric} (metric named as in `last_sample`) and
 *   `last_reconcile_timestamp_seconds` {namespace, policy} (Unix seconds, the operator's clock)
 * - `decisions_total` {namespace, policy, reason}
 * - `scale_operations_total` {namespace, policy, target="instance"|"replicas", result} (result
 *   `started`, `succeeded`, `not_applied`, `failed`, `conflict`, `refused`, `throttled`)
 * - `update_refused` {namespace, policy, refused_by} (1 while the policy's updates are held back
 *   after ARM refused the last one durably; refused_by Quota, Policy, Lock, Invalid, Unauthorized,
 *   NotFound; no series otherwise)
 * - `update_age_seconds` and `update_deadline_seconds` {namespace, policy}: how long the ARM
 *   update in flight has run and how long it may (src/autoscale/overdue.ts), seconds, as of the
 *   policy's last pass; no series while none runs
 * - `azure_requests_total` {api, status} and `azure_request_duration_seconds` {api} (api `token`:
 *   token requests), `azure_request_timeouts_total` {api} (calls that ended at their deadline),
 *   `poll_cycle_timeouts_total` (cycles whose Azure read passed the poll cycle deadline)
 * - `history_reads_total` {kind="full"|"incremental", result="success"|"failure"} (one per
 *   instance read), `history_requests_total` (getBatch calls of history refreshes) and
 *   `history_cached_instances` (demand histories held for seasonal forecasts)
 * - `arm_remaining_requests` {scope, kind} (ARM's x-ms-ratelimit-remaining-* headers: kind
 *   `subscription-reads`, `subscription-writes`, …, and `resource:<bucket>` for provider buckets)
 * - `azure_throttle_end_timestamp_seconds` {endpoint="arm"|"metrics", scope}: when Azure's
 *   throttling of a scope (subscription/region) ends, Unix seconds, as its Retry-After asked; a
 *   series exists only while the scope is throttled
 * - `status_writes_total` {result="written"|"skipped"} (a pass's status write, made or not needed:
 *   status-need.ts)
 * - `queue_depth`, `reconcile_duration_seconds`, `reconcile_errors_total`, `leader`
 * - Node.js process metrics (`signalr_autoscaler_process_*`, `signalr_autoscaler_nodejs_*`)
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import {
  CONDITION_STATUSES,
  CONDITION_TYPES,
  type ConditionStatus,
  type ConditionType,
} from "../api/constants.js";
import { SAMPLE_FIELDS, type SampleField } from "../autoscale/samples.js";
import type { HistoryRefreshReport } from "../azure/history.js";
import type { QuotaObservation } from "../azure/quota.js";
import { describeScope } from "../azure/scope.js";
import type { GatedScope } from "../azure/throttle.js";
import type { PrometheusQueryObservation } from "../prometheus/index.js";

const P = "signalr_autoscaler_";

/** The labels of a policy's series. */
const POLICY = ["namespace", "policy"] as const;

/** A scope Azure throttles now, and through which endpoint's gate. */
export interface ThrottledScope extends GatedScope {
  endpoint: "arm" | "metrics";
}

/** One observed sample, as the decision used it. Units: %, connections, messages/s, bytes/s. */
type SampleValues = Partial<Record<SampleField, number | null>>;

/** The signals whose target is a percentage, named as `last_sample`'s `metric` label names them. */
type TargetMetric = "serverLoadPercent" | "connectionQuotaUtilizationPercent";

/** What one reconcile pass of a policy shows beside its units (see {@link OperatorMetrics.observePolicy}). */
export interface PolicyView {
  /** spec.units bounds, units. */
  minUnits?: number | undefined;
  maxUnits?: number | undefined;
  /** spec.pollIntervalSeconds, seconds. */
  pollIntervalSeconds?: number | undefined;
  /** spec.metrics targets, %. */
  targetPercent?: Partial<Record<TargetMetric, number | undefined>>;
  /** The instance's SKU now and the SKU the decision asked for (e.g. "Premium_P1"). */
  currentSku?: string | undefined;
  desiredSku?: string | undefined;
  /** The conditions as written to status (absent: the pass wrote none). */
  conditions?: readonly { type: ConditionType; status: ConditionStatus }[] | undefined;
}

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly #now: () => number;
  readonly #sampleTimes = new Map<string, number>();
  /** The SKU series each policy has, by `namespace/policy`, so that a changed SKU replaces its series. */
  readonly #skus = new Map<string, { currentSku?: string; desiredSku?: string }>();
  /** The `refused_by` series each policy has, by `namespace/policy`. */
  readonly #refusals = new Map<string, string>();
  /** The field conflict series set per policy, to remove them when it ends. */
  readonly #fieldConflicts = new Map<string, { object: string; field: string; manager: string }[]>();
  #quotaSource: (() => readonly QuotaObservation[]) | undefined;
  #throttleSource: (() => readonly ThrottledScope[]) | undefined;

  readonly currentUnits = this.#gauge("current_units", "Units the Azure instance has now", POLICY);
  readonly desiredUnits = this.#gauge("desired_units", "Units the last decision asked for", POLICY);
  readonly currentReplicas = this.#gauge(
    "current_replicas",
    "App-server Deployment spec.replicas (or HPA minReplicas) now",
    POLICY,
  );
  readonly desiredReplicas = this.#gauge(
    "desired_replicas",
    "App-server replicas (or HPA floor) the last decision asked for",
    POLICY,
  );
  readonly lastSample = this.#gauge(
    "last_sample",
    "Newest metric values used by the decision (%, connections, messages/s, bytes/s by metric)",
    [...POLICY, "metric"],
  );
  readonly lastSampleAge = this.#gauge(
    "last_sample_age_seconds",
    "Age of the newest metric sample used, seconds",
    POLICY,
    () => this.#collectAges(),
  );
  readonly statusCondition = this.#gauge(
    "status_condition",
    "Status conditions of the policy: 1 for the status each type has now, 0 for the other statuses",
    [...POLICY, "type", "status"],
  );
  readonly currentSku = this.#gauge("current_sku_info", "SKU the Azure instance has now (always 1)", [
    ...POLICY,
    "sku",
  ]);
  readonly desiredSku = this.#gauge("desired_sku_info", "SKU the last decision asked for (always 1)", [
    ...POLICY,
    "sku",
  ]);
  readonly specMinUnits = this.#gauge("spec_min_units", "spec.units.min of the policy, units", POLICY);
  readonly specMaxUnits = this.#gauge("spec_max_units", "spec.units.max of the policy, units", POLICY);
  readonly specTarget = this.#gauge(
    "spec_target_percent",
    "Target of a signal in spec.metrics by metric (serverLoadPercent, connectionQuotaUtilizationPercent), %",
    [...POLICY, "metric"],
  );
  readonly specPollInterval = this.#gauge(
    "spec_poll_interval_seconds",
    "spec.pollIntervalSeconds of the policy, seconds",
    POLICY,
  );
  readonly lastReconcile = this.#gauge(
    "last_reconcile_timestamp_seconds",
    "When the last reconcile pass of the policy finished, Unix seconds",
    POLICY,
  );
  readonly decisions = this.#counter("decisions_total", "Decisions by reason code", [...POLICY, "reason"]);
  readonly scaleOperations = this.#counter(
    "scale_operations_total",
    "Scale operations by target and result (started, succeeded, failed, not_applied, conflict, refused, throttled)",
    [...POLICY, "target", "result"],
  );
  readonly clientsDisconnected = this.#counter(
    "scale_in_disconnected_clients_total",
    "Client connections the policy's scale-ins are expected to disconnect: the removed units' share of the window's peak connections (connections × removed ÷ old units) at each update sent",
    POLICY,
  );
  readonly updateRefused = this.#gauge(
    "update_refused",
    "1 while the policy's updates are held back because ARM refused the last one durably, by what refused it (Quota, Policy, Lock, Invalid, Unauthorized, NotFound)",
    [...POLICY, "refused_by"],
  );
  readonly fieldOwnedByOther = this.#gauge(
    "field_owned_by_other",
    "1 while another field manager owns the app-server field the policy sizes (the Deployment's spec.replicas or the HPA's spec.minReplicas) and the operator does not write it, by object, field and manager",
    [...POLICY, "object", "field", "manager"],
  );
  readonly updateAge = this.#gauge(
    "update_age_seconds",
    "How long the ARM update in flight has run, seconds, as of the policy's last pass (no series while none runs)",
    POLICY,
  );
  readonly updateDeadline = this.#gauge(
    "update_deadline_seconds",
    "How long the ARM update in flight may run before the policy is Stalled (ProgressDeadlineExceeded), seconds (no series while none runs)",
    POLICY,
  );
  readonly azureRequests = this.#counter(
    "azure_requests_total",
    "Azure calls by API and HTTP status (0 = no response)",
    ["api", "status"],
  );
  readonly azureTimeouts = this.#counter(
    "azure_request_timeouts_total",
    "Azure calls that ended at their deadline without an answer, by API (token: a token request)",
    ["api"],
  );
  readonly pollCycleTimeouts = this.#counter(
    "poll_cycle_timeouts_total",
    "Poll cycles whose Azure read passed the poll cycle deadline",
    [],
  );
  readonly azureLatency = this.#histogram(
    "azure_request_duration_seconds",
    "Azure call latency, seconds",
    ["api"],
    [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  readonly prometheusQueries = this.#counter(
    "prometheus_queries_total",
    "Leading-signal queries to Prometheus by server (base URL, no credentials) and outcome (ok or an error kind)",
    ["server", "outcome"],
  );
  readonly prometheusLatency = this.#histogram(
    "prometheus_query_duration_seconds",
    "Leading-signal query latency (queueing for the per-server bound included), seconds",
    ["server"],
    [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  readonly historyReads = this.#counter(
    "history_reads_total",
    "Demand-history reads of one instance (seasonal forecast) by kind (full, incremental) and result (success, failure)",
    ["kind", "result"],
  );
  readonly historyRequests = this.#counter(
    "history_requests_total",
    "metrics:getBatch requests sent to read demand history",
    [],
  );
  readonly historyCached = this.#gauge(
    "history_cached_instances",
    "Instances whose demand history is held for a seasonal forecast (per grain)",
  );
  readonly armRemaining = this.#gauge(
    "arm_remaining_requests",
    "ARM remaining-quota headers by scope (subscription/region) and kind (reads, writes, …)",
    ["scope", "kind"],
    () => this.#collectQuota(),
  );
  readonly throttleEnd = this.#gauge(
    "azure_throttle_end_timestamp_seconds",
    "When Azure's throttling of a scope ends (its Retry-After), Unix seconds, by endpoint (arm, metrics) and scope (subscription/region); present only while throttled",
    ["endpoint", "scope"],
    () => this.#collectThrottles(),
  );
  readonly queueDepth = this.#gauge("queue_depth", "Policies waiting for a reconcile pass");
  readonly passDuration = this.#histogram(
    "reconcile_duration_seconds",
    "Duration of one reconcile pass, seconds",
    [],
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  readonly passErrors = this.#counter(
    "reconcile_errors_total",
    "Reconcile passes that failed, by error kind",
    ["kind"],
  );
  readonly statusWrites = this.#counter(
    "status_writes_total",
    "Status writes of reconcile passes by result (written; skipped: nothing relied upon changed and the refresh interval had not passed)",
    ["result"],
  );
  readonly leader = this.#gauge("leader", "1 while this replica holds the leader lease");

  /** @param now epoch milliseconds (the operator's clock; virtual in the demo). */
  constructor(options: { now?: () => number; processMetrics?: boolean } = {}) {
    this.#now = options.now ?? Date.now;
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: P });
  }

  /** Records the values and time of the newest sample a decision used. */
  observeSample(namespace: string, policy: string, time: string | undefined, values: SampleValues): void {
    for (const metric of SAMPLE_FIELDS) {
      const value = values[metric];
      if (typeof value === "number") this.lastSample.set({ namespace, policy, metric }, value);
    }
    if (time) this.#sampleTimes.set(`${namespace}/${policy}`, Date.parse(time));
  }

  /**
   * Records what a finished pass of a policy shows: its spec bounds, targets and poll interval, the
   * SKUs, the conditions written and the time (the operator's clock). Fields left out keep their
   * series as they were; a changed SKU replaces the old series.
   */
  observePolicy(namespace: string, policy: string, view: PolicyView): void {
    const labels = { namespace, policy };
    // An invalid spec (reported as InvalidSpec) may hold anything: only finite numbers are exported.
    const ok = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
    const set = (g: Gauge<"namespace" | "policy">, v: number | undefined) => {
      if (ok(v)) g.set(labels, v);
    };
    set(this.specMinUnits, view.minUnits);
    set(this.specMaxUnits, view.maxUnits);
    set(this.specPollInterval, view.pollIntervalSeconds);
    for (const [metric, v] of Object.entries(view.targetPercent ?? {})) {
      if (ok(v)) this.specTarget.set({ ...labels, metric }, v);
    }
    const skus = this.#skus.get(`${namespace}/${policy}`) ?? {};
    for (const [which, gauge] of [
      ["currentSku", this.currentSku],
      ["desiredSku", this.desiredSku],
    ] as const) {
      const sku = view[which];
      if (typeof sku !== "string" || sku === skus[which]) continue;
      const before = skus[which];
      if (before !== undefined) gauge.remove({ ...labels, sku: before });
      gauge.set({ ...labels, sku }, 1);
      skus[which] = sku;
    }
    this.#skus.set(`${namespace}/${policy}`, skus);
    for (const c of view.conditions ?? []) {
      for (const status of CONDITION_STATUSES) {
        this.statusCondition.set({ ...labels, type: c.type, status }, c.status === status ? 1 : 0);
      }
    }
    this.lastReconcile.set(labels, this.#now() / 1000);
  }

  /**
   * Records why the policy's updates are held back: `refusedBy` while ARM's last answer was a
   * durable refusal; `undefined` removes the series.
   */
  observeRefusal(namespace: string, policy: string, refusedBy: string | undefined): void {
    const key = `${namespace}/${policy}`;
    const before = this.#refusals.get(key);
    if (before !== undefined && before !== refusedBy)
      this.updateRefused.remove({ namespace, policy, refused_by: before });
    if (refusedBy === undefined) this.#refusals.delete(key);
    else {
      this.updateRefused.set({ namespace, policy, refused_by: refusedBy }, 1);
      this.#refusals.set(key, refusedBy);
    }
  }

  /**
   * Records which field managers own the app-server field the policy sizes (one series each,
   * value 1); `undefined` (the operator owns it, or no app servers) removes them.
   */
  observeFieldConflict(
    namespace: string,
    policy: string,
    conflict: { object: string; field: string; managers: readonly string[] } | undefined,
  ): void {
    const key = `${namespace}/${policy}`;
    for (const labels of this.#fieldConflicts.get(key) ?? []) {
      this.fieldOwnedByOther.remove({ namespace, policy, ...labels });
    }
    const next = (conflict?.managers ?? []).map((manager) => ({
      object: conflict?.object ?? "",
      field: conflict?.field ?? "",
      manager,
    }));
    for (const labels of next) this.fieldOwnedByOther.set({ namespace, policy, ...labels }, 1);
    if (next.length > 0) this.#fieldConflicts.set(key, next);
    else this.#fieldConflicts.delete(key);
  }

  /** Records the age and deadline of the update in flight, seconds; `undefined` removes them. */
  observeUpdateAge(
    namespace: string,
    policy: string,
    age: { ageSeconds: number; deadlineSeconds: number } | undefined,
  ): void {
    const labels = { namespace, policy };
    if (!age) {
      this.updateAge.remove(labels);
      this.updateDeadline.remove(labels);
      return;
    }
    this.updateAge.set(labels, Math.round(age.ageSeconds));
    this.updateDeadline.set(labels, age.deadlineSeconds);
  }

  /**
   * Records one Azure call (API `token`: a token request). `status` 0 means no HTTP response
   * (timeout, reset); `timedOut` that the call ended at its deadline.
   */
  observeAzureCall(api: string, status: number, seconds: number, timedOut = false): void {
    this.azureRequests.inc({ api, status: String(status) });
    if (timedOut) this.azureTimeouts.inc({ api });
    this.azureLatency.observe({ api }, seconds);
  }

  /** Records one leading-signal query (the Prometheus client's observer). */
  observePrometheusQuery(o: PrometheusQueryObservation): void {
    this.prometheusQueries.inc({ server: o.server, outcome: o.outcome });
    this.prometheusLatency.observe({ server: o.server }, o.seconds);
  }

  /** Records one demand-history refresh; `cached` is how many histories the reader now holds. */
  observeHistoryRefresh(report: HistoryRefreshReport, cached: number): void {
    for (const r of report.reads) this.historyReads.inc({ kind: r.kind, result: r.result });
    this.historyRequests.inc(report.calls);
    this.historyCached.set(cached);
  }

  /**
   * Exports ARM's remaining quota from `source` (the adapters' QuotaRecorder snapshot) on every
   * scrape; `undefined` stops it.
   */
  trackArmQuota(source: (() => readonly QuotaObservation[]) | undefined): void {
    this.#quotaSource = source;
  }

  /**
   * Exports the end of every throttled scope from `source` (the adapters' throttle gates) on every
   * scrape; `undefined` stops it.
   */
  trackThrottles(source: (() => readonly ThrottledScope[]) | undefined): void {
    this.#throttleSource = source;
  }

  /** Forgets every series of a deleted policy. */
  forgetPolicy(namespace: string, policy: string): void {
    for (const g of [
      this.currentUnits,
      this.desiredUnits,
      this.currentReplicas,
      this.desiredReplicas,
      this.specMinUnits,
      this.specMaxUnits,
      this.specPollInterval,
      this.lastReconcile,
      this.updateAge,
      this.updateDeadline,
    ]) {
      g.remove({ namespace, policy });
    }
    this.observeRefusal(namespace, policy, undefined);
    this.observeFieldConflict(namespace, policy, undefined);
    for (const metric of SAMPLE_FIELDS) this.lastSample.remove({ namespace, policy, metric });
    for (const metric of ["serverLoadPercent", "connectionQuotaUtilizationPercent"]) {
      this.specTarget.remove({ namespace, policy, metric });
    }
    const skus = this.#skus.get(`${namespace}/${policy}`);
    if (skus?.currentSku) this.currentSku.remove({ namespace, policy, sku: skus.currentSku });
    if (skus?.desiredSku) this.desiredSku.remove({ namespace, policy, sku: skus.desiredSku });
    this.#skus.delete(`${namespace}/${policy}`);
    for (const type of CONDITION_TYPES) {
      for (const status of CONDITION_STATUSES)
        this.statusCondition.remove({ namespace, policy, type, status });
    }
    this.lastSampleAge.remove({ namespace, policy });
    this.#sampleTimes.delete(`${namespace}/${policy}`);
  }

  /** The text exposition format for `/metrics`. */
  async expose(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  // Each family is `signalr_autoscaler_<name>` on this registry.

  /** A gauge; `collect` runs on every scrape. */
  #gauge<L extends string = never>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    collect?: () => void,
  ): Gauge<L> {
    const config = { name: `${P}${name}`, help, labelNames, registers: [this.registry] };
    return new Gauge<L>(collect ? { ...config, collect } : config);
  }

  #counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return new Counter<L>({ name: `${P}${name}`, help, labelNames, registers: [this.registry] });
  }

  #histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) {
    return new Histogram<L>({ name: `${P}${name}`, help, labelNames, buckets, registers: [this.registry] });
  }

  #collectQuota(): void {
    if (!this.#quotaSource) return;
    this.armRemaining.reset();
    for (const o of this.#quotaSource()) {
      const scope = describeScope(o.scope);
      for (const [kind, value] of Object.entries(o.remaining)) this.armRemaining.set({ scope, kind }, value);
      for (const [bucket, value] of Object.entries(o.resource))
        this.armRemaining.set({ scope, kind: `resource:${bucket}` }, value);
    }
  }

  #collectThrottles(): void {
    this.throttleEnd.reset();
    for (const t of this.#throttleSource?.() ?? []) {
      this.throttleEnd.set(
        { endpoint: t.endpoint, scope: describeScope(t.scope) },
        t.notBefore.getTime() / 1000,
      );
    }
  }

  #collectAges(): void {
    const now = this.#now();
    for (const [key, time] of this.#sampleTimes) {
      const [namespace = "", policy = ""] = key.split("/");
      this.lastSampleAge.set({ namespace, policy }, Math.max(0, (now - time) / 1000));
    }
  }
}
