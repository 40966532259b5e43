/**
 * The Azure adapters the controller composes, built from one connection: they share the ARM
 * throttle gate and quota recorder; metrics have their own gate (Azure Monitor throttles
 * separately from ARM).
 */
import { AzureAutoscaleSettings } from "./autoscale-settings.js";
import { type AzureConnection, resolveConnection } from "./connection.js";
import { AzureInstances } from "./instances.js";
import { AzureMetrics } from "./metrics.js";
import { QuotaRecorder } from "./quota.js";
import { ThrottleGate } from "./throttle.js";

export interface AzureAdapters {
  instances: AzureInstances;
  metrics: AzureMetrics;
  autoscaleSettings: AzureAutoscaleSettings;
  /** ARM throttle gate (instances and autoscale settings). */
  armGate: ThrottleGate;
  /** Metrics throttle gate. */
  metricsGate: ThrottleGate;
  /** ARM remaining-quota headers per scope. */
  quota: QuotaRecorder;
}

/** Builds every adapter for `connection`. */
export function createAzureAdapters(connection: AzureConnection): AzureAdapters {
  const now = resolveConnection(connection).now;
  const armGate = new ThrottleGate(now);
  const metricsGate = new ThrottleGate(now);
  const quota = new QuotaRecorder();
  return {
    instances: new AzureInstances(connection, { gate: armGate, quota }),
    metrics: new AzureMetrics(connection, { gate: metricsGate }),
    autoscaleSettings: new AzureAutoscaleSettings(connection, { gate: armGate, quota }),
    armGate,
    metricsGate,
    quota,
  };
}
