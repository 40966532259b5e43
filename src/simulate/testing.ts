/**
 * Builders for the simulation's tests: a connections-only workload (Web PubSub CloudEvents echo
 * with one message per sender every 10⁶ s — load is exactly connections ÷ quota, no app-server
 * connections) and demand series from runs of constant values. Not part of the public API.
 */
import type { WorkloadMix } from "../traffic/index.js";

/** A mix whose load is only connections ÷ (units × 1,000). */
export const CONNECTIONS_ONLY: WorkloadMix = {
  service: "WebPubSub",
  entries: [{ scenario: "cloudEventsEcho", share: 1, sendIntervalSeconds: 1e6 }],
  messageSizeBytes: 2048,
};

/** Demand from runs: `[[minutes, connections], …]`. */
export function steps(runs: readonly (readonly [number, number])[]): Float64Array {
  const out: number[] = [];
  for (const [minutes, connections] of runs) for (let i = 0; i < minutes; i++) out.push(connections);
  return Float64Array.from(out);
}

/** 2025-06-02T00:00:00Z, a whole minute. */
export const START = Date.parse("2025-06-02T00:00:00Z");

/** Minute index of a time in a run that starts at {@link START}. */
export function minuteOf(ms: number): number {
  return (ms - START) / 60_000;
}
