/**
 * Builders for the simulation's tests: a connections-only workload (Web PubSub CloudEvents echo
 * with one message per sender every 10⁶ s — load is exactly connections ÷ quota, no app-server
 * connections) and demand series from runs of constant values. Not part of the public API.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type CapacityPolicy, parsePolicyYaml } from "../api/index.js";
import { defaultMix, parseTrace, traceDemand, type WorkloadMix } from "../traffic/index.js";
import { demandSeries, MINUTE_MS, type SimulationSetup } from "./engine.js";

/** A mix whose load is only connections ÷ (units × 1,000). */
export const CONNECTIONS_ONLY: WorkloadMix = {
  service: "WebPubSub",
  entries: [{ scenario: "cloudEventsEcho", share: 1, sendIntervalSeconds: 1e6 }],
  messageSizeBytes: 2048,
};

/** The shipped examples' SignalR chat workload: broadcast 30 %, echo 70 %, 1,024-byte messages. */
export const CHAT_MIX: WorkloadMix = {
  service: "SignalR",
  entries: [
    { scenario: "broadcast", share: 0.3 },
    { scenario: "echo", share: 0.7 },
  ],
  messageSizeBytes: 1024,
};

/** Demand from runs: `[[minutes, connections], …]`. */
export function steps(runs: readonly (readonly [number, number])[]): Float64Array {
  const out: number[] = [];
  for (const [minutes, connections] of runs) for (let i = 0; i < minutes; i++) out.push(connections);
  return Float64Array.from(out);
}

/** 2025-06-02T00:00:00Z, a whole minute. */
export const START = Date.parse("2025-06-02T00:00:00Z");

/**
 * The run most tests simulate: `demand` of {@link CONNECTIONS_ONLY} from {@link START}, scales of
 * 5 minutes, metrics complete 3 minutes late, seed "t", no noise; `extra` overrides any of it.
 */
export function testSetup(demand: Float64Array, extra: Partial<SimulationSetup> = {}): SimulationSetup {
  return {
    startMs: START,
    demand,
    mix: CONNECTIONS_ONLY,
    scaleDurationMs: 5 * 60_000,
    metricDelayMs: 3 * 60_000,
    seed: "t",
    noiseAmplitude: 0,
    ...extra,
  };
}

/**
 * The YAML of a CapacityPolicy `name` in namespace `test` for the Web PubSub instance `name`;
 * `spec` is the rest of its spec, YAML lines indented by two spaces.
 */
export function webPubSubPolicyYaml(name: string, spec: string): string {
  return `apiVersion: autoscaling.signalr.dev/v1alpha1
kind: CapacityPolicy
metadata: { name: ${name}, namespace: test }
spec:
  target:
    service: WebPubSub
    resourceId: /subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/WebPubSub/${name}
${spec}`;
}

/** Minute index of a time in a run that starts at {@link START}. */
export function minuteOf(ms: number): number {
  return (ms - START) / 60_000;
}

/**
 * The steady case: the README-shaped policy of `test/fixtures/simulate/steady-policy.yaml` on the
 * constant trace `test/fixtures/traces/constant.csv` (a day of 5-minute points at one value) scaled
 * to 6,000 connections of SignalR echo, on an instance found at Premium_P1 × 20.
 *
 * Why 6,000: the load is connections ÷ quota, 30 % at 20 units and 60 % at 10. Decisions read the
 * window's peak of ServerLoad's per-minute Maximum, which runs up to 10 % above the minute's value,
 * and the noise adds ±5 %: peaks of 30–34.7 % at 20 units ask for 9–10 units (at most 35 % keeps
 * the ask at 10, so the scale-down rate policy, 50 % per 10 minutes, allows 20 → 10 in one step),
 * and peaks of 57–69.3 % at 10 units stay far below a scale-out (77 %, the 10 % tolerance above
 * the 70 % target); the asks for 9 there never last the 30-minute stabilization. The oracle's
 * answer is 9 units (66.7 % true load); within its tolerance the policy holds 10.
 */
export const STEADY = {
  policyFile: "test/fixtures/simulate/steady-policy.yaml",
  traceFile: "test/fixtures/traces/constant.csv",
  peakConnections: 6000,
  initial: { sku: "Premium_P1", units: 20 },
  right: { sku: "Premium_P1", units: 10 },
} as const satisfies Record<string, unknown>;

/** The steady case read from its fixtures under `root` (the checkout), for `minutes` from `startMs` (default: the trace's day). */
export function steadyCase(
  root: string,
  slice: { startMs?: number; minutes?: number } = {},
): { policy: CapacityPolicy; startMs: number; demand: Float64Array; mix: WorkloadMix } {
  const policy = parsePolicyYaml(readFileSync(join(root, STEADY.policyFile), "utf8"));
  const trace = parseTrace(readFileSync(join(root, STEADY.traceFile), "utf8"), STEADY.traceFile);
  const first = (trace.points[0] as { t: number }).t;
  const startMs = slice.startMs ?? first;
  const minutes = slice.minutes ?? trace.durationMs / MINUTE_MS;
  const demand = demandSeries(traceDemand(trace, new Date(first), STEADY.peakConnections), startMs, minutes);
  return { policy, startMs, demand, mix: defaultMix(policy.spec.target.service) };
}
