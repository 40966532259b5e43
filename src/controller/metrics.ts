/**
 * Prometheus metrics of the operator (prom-client), on a registry owned by one
 * {@link OperatorMetrics} instance that the operator builds at start and hands down.
 *
 * Families (all prefixed `signalr_autoscaler_`):
 * - `current_units`, `desired_units`, `current_replicas`, `desired_replicas` {namespace, policy}
 * - `last_sample` {namespace, policy, metric} and `last_sample_age_seconds` {namespace, policy}
 * - `decisions_total` {namespace, policy, reason}
 * - `scale_operations_total` {namespace, policy, target="instance"|"replicas", result}
 * - `azure_requests_total` {api, status} and `azure_request_duration_seconds` {api} (api `token`:
 *   token requests), `azure_request_timeouts_total` {api} (calls that ended at their deadline),
 *   `poll_cycle_timeouts_total` (cycles whose Azure read passed the poll cycle deadline)
 * - `history_reads_total` {kind="full"|"incremental", result="success"|"failure"} (one per
 *   instance read), `history_requests_total` (getBatch calls of history refreshes) and
 *   `history_cached_instances` (demand histories held for seasonal forecasts)
 * - `arm_remaining_requests` {scope, kind} (ARM's x-ms-ratelimit-remaining-* headers: kind
 *   `subscription-reads`, `subscription-writes`, …, and `resource:<bucket>` for provider buckets)
 * - `queue_depth`, `reconcile_duration_seconds`, `reconcile_errors_total`, `leader`
 * - Node.js process metrics (`signalr_autoscaler_process_*`, `signalr_autoscaler_nodejs_*`)
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { SAMPLE_FIELDS, type SampleField } from "../autoscale/samples.js";
import type { HistoryRefreshReport } from "../azure/history.js";
import type { QuotaObservation } from "../azure/quota.js";
import { describeScope } from "../azure/scope.js";
import type { PrometheusQueryObservation } from "../prometheus/index.js";

const P = "signalr_autoscaler_";

/** The labels of a policy's series. */
const POLICY = ["namespace", "policy"] as const;

/** One observed sample, as the decision used it. Units: %, connections, messages/s, bytes/s. */
type SampleValues = Partial<Record<SampleField, number | null>>;

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly #now: () => number;
  readonly #sampleTimes = new Map<string, number>();
  #quotaSource: (() => readonly QuotaObservation[]) | undefined;

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
  readonly decisions = this.#counter("decisions_total", "Decisions by reason code", [...POLICY, "reason"]);
  readonly scaleOperations = this.#counter(
    "scale_operations_total",
    "Scale operations by target and result (started, succeeded, failed, not_applied, conflict)",
    [...POLICY, "target", "result"],
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

  /** Forgets every series of a deleted policy. */
  forgetPolicy(namespace: string, policy: string): void {
    for (const g of [this.currentUnits, this.desiredUnits, this.currentReplicas, this.desiredReplicas]) {
      g.remove({ namespace, policy });
    }
    for (const metric of SAMPLE_FIELDS) this.lastSample.remove({ namespace, policy, metric });
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

  #collectAges(): void {
    const now = this.#now();
    for (const [key, time] of this.#sampleTimes) {
      const [namespace = "", policy = ""] = key.split("/");
      this.lastSampleAge.set({ namespace, policy }, Math.max(0, (now - time) / 1000));
    }
  }
}
