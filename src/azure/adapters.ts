/**
 * The Azure adapters the controller composes, built from one connection: they share the ARM
 * throttle gate and quota recorder; metrics have their own gate (Azure Monitor throttles
 * separately from ARM), which the history reader shares (its calls are getBatch calls too). Every HTTP call of every adapter is reported to the listeners of
 * `calls` (and to the connection's own `observeCall`).
 */
import { AzureAutoscaleSettings } from "./autoscale-settings.js";
import {
  type AzureCall,
  type AzureCallObserver,
  type AzureConnection,
  resolveConnection,
} from "./connection.js";
import { HistoryReader } from "./history.js";
import { AzureInstances } from "./instances.js";
import { AzureMetrics } from "./metrics.js";
import { QuotaRecorder } from "./quota.js";
import { ThrottleGate } from "./throttle.js";

export interface AzureAdapters {
  instances: AzureInstances;
  metrics: AzureMetrics;
  /** Demand over past days (seasonal forecast), through `metrics`. */
  history: HistoryReader;
  autoscaleSettings: AzureAutoscaleSettings;
  /** ARM throttle gate (instances and autoscale settings). */
  armGate: ThrottleGate;
  /** Metrics throttle gate. */
  metricsGate: ThrottleGate;
  /** ARM remaining-quota headers per scope. */
  quota: QuotaRecorder;
  /** Every HTTP call the adapters make: API, status, latency. */
  calls: AzureCallListeners;
}

/** Listeners of the adapters' Azure calls. */
export class AzureCallListeners {
  readonly #listeners = new Set<AzureCallObserver>();

  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: AzureCallObserver): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Tells every listener (a listener's exception is ignored). */
  emit(call: AzureCall): void {
    for (const listener of this.#listeners) {
      try {
        listener(call);
      } catch {
        // A listener's failure never fails the call.
      }
    }
  }
}

/** Builds every adapter for `connection`. */
export function createAzureAdapters(given: AzureConnection): AzureAdapters {
  const calls = new AzureCallListeners();
  const own = given.observeCall;
  const connection: AzureConnection = {
    ...given,
    observeCall: (call) => {
      own?.(call);
      calls.emit(call);
    },
  };
  const now = resolveConnection(connection).now;
  const armGate = new ThrottleGate(now);
  const metricsGate = new ThrottleGate(now);
  const quota = new QuotaRecorder();
  const metrics = new AzureMetrics(connection, { gate: metricsGate });
  return {
    instances: new AzureInstances(connection, { gate: armGate, quota }),
    metrics,
    history: new HistoryReader(metrics),
    autoscaleSettings: new AzureAutoscaleSettings(connection, { gate: armGate, quota }),
    armGate,
    metricsGate,
    quota,
    calls,
  };
}
