/**
 * Prometheus metrics of the operator (prom-client), on a registry owned by one
 * {@link OperatorMetrics} instance that the operator builds at start and hands down.
 *
 * Families (all prefixed `signalr_autoscaler_`):
 * - `current_units`, `desired_units`, `current_replicas`, `desired_replicas` {namespace, policy}
 * - `last_sample` {namespace, policy, metric} and `last_sample_age_seconds` {namespace, policy}
 * - `decisions_total` {namespace, policy, reason}
 * - `scale_operations_total` {namespace, policy, target="instance"|"replicas", result}
 * - `azure_requests_total` {api, status} and `azure_request_duration_seconds` {api}
 * - `arm_remaining_requests` {scope, kind} (ARM's x-ms-ratelimit-remaining-* headers: kind
 *   `subscription-reads`, `subscription-writes`, …, and `resource:<bucket>` for provider buckets)
 * - `queue_depth`, `reconcile_duration_seconds`, `reconcile_errors_total`, `leader`
 * - Node.js process metrics (`signalr_autoscaler_process_*`, `signalr_autoscaler_nodejs_*`)
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { SAMPLE_FIELDS, type SampleField } from "../autoscale/samples.js";
import type { QuotaObservation } from "../azure/quota.js";
import { describeScope } from "../azure/scope.js";

const P = "signalr_autoscaler_";

/** One observed sample, as the decision used it. Units: %, connections, messages/s, bytes/s. */
type SampleValues = Partial<Record<SampleField, number | null>>;

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly #now: () => number;
  readonly #sampleTimes = new Map<string, number>();
  #quotaSource: (() => readonly QuotaObservation[]) | undefined;

  readonly currentUnits = new Gauge({
    name: `${P}current_units`,
    help: "Units the Azure instance has now",
    labelNames: ["namespace", "policy"],
    registers: [this.registry],
  });
  readonly desiredUnits = new Gauge({
    name: `${P}desired_units`,
    help: "Units the last decision asked for",
    labelNames: ["namespace", "policy"],
    registers: [this.registry],
  });
  readonly currentReplicas = new Gauge({
    name: `${P}current_replicas`,
    help: "App-server Deployment spec.replicas (or HPA minReplicas) now",
    labelNames: ["namespace", "policy"],
    registers: [this.registry],
  });
  readonly desiredReplicas = new Gauge({
    name: `${P}desired_replicas`,
    help: "App-server replicas (or HPA floor) the last decision asked for",
    labelNames: ["namespace", "policy"],
    registers: [this.registry],
  });
  readonly lastSample = new Gauge({
    name: `${P}last_sample`,
    help: "Newest metric values used by the decision (%, connections, messages/s, bytes/s by metric)",
    labelNames: ["namespace", "policy", "metric"],
    registers: [this.registry],
  });
  readonly lastSampleAge = new Gauge({
    name: `${P}last_sample_age_seconds`,
    help: "Age of the newest metric sample used, seconds",
    labelNames: ["namespace", "policy"],
    registers: [this.registry],
    collect: () => this.#collectAges(),
  });
  readonly decisions = new Counter({
    name: `${P}decisions_total`,
    help: "Decisions by reason code",
    labelNames: ["namespace", "policy", "reason"],
    registers: [this.registry],
  });
  readonly scaleOperations = new Counter({
    name: `${P}scale_operations_total`,
    help: "Scale operations by target and result (started, succeeded, failed, not_applied, conflict)",
    labelNames: ["namespace", "policy", "target", "result"],
    registers: [this.registry],
  });
  readonly azureRequests = new Counter({
    name: `${P}azure_requests_total`,
    help: "Azure calls by API and HTTP status (0 = no response)",
    labelNames: ["api", "status"],
    registers: [this.registry],
  });
  readonly azureLatency = new Histogram({
    name: `${P}azure_request_duration_seconds`,
    help: "Azure call latency, seconds",
    labelNames: ["api"],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly armRemaining = new Gauge({
    name: `${P}arm_remaining_requests`,
    help: "ARM remaining-quota headers by scope (subscription/region) and kind (reads, writes, …)",
    labelNames: ["scope", "kind"],
    registers: [this.registry],
    collect: () => this.#collectQuota(),
  });
  readonly queueDepth = new Gauge({
    name: `${P}queue_depth`,
    help: "Policies waiting for a reconcile pass",
    registers: [this.registry],
  });
  readonly passDuration = new Histogram({
    name: `${P}reconcile_duration_seconds`,
    help: "Duration of one reconcile pass, seconds",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly passErrors = new Counter({
    name: `${P}reconcile_errors_total`,
    help: "Reconcile passes that failed, by error kind",
    labelNames: ["kind"],
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: `${P}leader`,
    help: "1 while this replica holds the leader lease",
    registers: [this.registry],
  });

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

  /** Records one Azure call. `status` 0 means no HTTP response (timeout, reset). */
  observeAzureCall(api: string, status: number, seconds: number): void {
    this.azureRequests.inc({ api, status: String(status) });
    this.azureLatency.observe({ api }, seconds);
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
