/**
 * App servers (`spec.appServer`): how many replicas the Deployment behind the instance needs.
 *
 * Pinned semantics:
 * - With `connectionsPerReplica`: `ceil(peak connections / connectionsPerReplica)`.
 * - With `eventsPerSecondPerReplica` (Web PubSub event handlers, or SignalR hubs): inbound
 *   events/s = peak inbound bytes/s ÷ messageSizeBytes; `ceil(events/s / eventsPerSecondPerReplica)`.
 *   With both, the larger count.
 * - Otherwise SignalR uses the tier table's app-server count for the chosen units (default mode)
 *   for the workload's scenarios (the echo table when the policy names none). Web PubSub has no
 *   table: the replicas are kept.
 * - A measured input that is unknown keeps the current count; one that is incomplete may raise it
 *   but not lower it (never scale in blind).
 * - The result is clamped to `replicas.min..max`. With a HorizontalPodAutoscaler named, it is the
 *   floor for the HPA's minReplicas (`hpaMinReplicas`), not a replica count.
 * - "Current" is the Deployment's spec.replicas (never status: a rollout's surge pods must not
 *   ratchet the count up), or the HPA's minReplicas when an HPA is named.
 */
import type { AppServerSpec } from "../api/index.js";
import { appServersFor } from "../capacity/sizing.js";
import type { ServiceKind } from "../capacity/skus.js";
import type { ScenarioName } from "../capacity/tier-tables.js";
import { ceilSafe } from "./behavior.js";
import { type Reason, reason } from "./reasons.js";
import type { SeriesStatus } from "./samples.js";
import { fmt } from "./signals.js";

/** A measured input of the replica count. */
export interface MeasuredInput {
  /** Peak over the window; undefined when unknown. */
  value?: number | undefined;
  status: SeriesStatus;
}

/** Everything {@link decideReplicas} reads. */
export interface ReplicaInput {
  appServer: AppServerSpec;
  service: ServiceKind;
  /** Scenarios of the policy's traffic workload (empty when none). */
  scenarios: readonly ScenarioName[];
  /** The units the decision chose. */
  units: number;
  connections: MeasuredInput;
  /** Inbound events/s. */
  events: MeasuredInput;
  /** Deployment spec.replicas. */
  currentReplicas?: number | undefined;
  /** The HPA's current minReplicas. */
  currentHpaMinReplicas?: number | undefined;
}

/** The app-server part of a decision. */
export interface ReplicaDecision {
  /** Replica count to set on the Deployment (no HPA named). */
  replicas?: number;
  /** minReplicas floor to set on the HPA (HPA named). */
  hpaMinReplicas?: number;
  basis: "table" | "connections" | "events" | "held";
  /** The count before clamping (undefined when held without a rule). */
  computed?: number;
  reasons: Reason[];
}

/** Sizes the app servers (see the module comment). Pure. */
export function decideReplicas(input: ReplicaInput): ReplicaDecision {
  const { appServer } = input;
  const hpa = appServer.horizontalPodAutoscalerName !== undefined;
  const current = hpa ? input.currentHpaMinReplicas : input.currentReplicas;
  const reasons: Reason[] = [];
  const parts: { n: number; basis: ReplicaDecision["basis"] }[] = [];
  let mayLower = true;
  let held = false;

  const measured = (
    perReplica: number | undefined,
    m: MeasuredInput,
    what: string,
    code: "ReplicasFromConnections" | "ReplicasFromEvents",
  ) => {
    if (perReplica === undefined) return;
    if (m.value === undefined || (m.status !== "Ok" && m.status !== "Incomplete")) {
      held = true;
      reasons.push(reason("ReplicasHeld", `${what} unknown: app-server replicas kept`));
      return;
    }
    const n = ceilSafe(m.value / perReplica);
    parts.push({ n, basis: code === "ReplicasFromConnections" ? "connections" : "events" });
    if (m.status !== "Ok") mayLower = false;
    reasons.push(
      reason(code, `${fmt(m.value)} ${what} ÷ ${fmt(perReplica)} per replica = ${n} replicas`, { units: n }),
    );
  };

  measured(appServer.connectionsPerReplica, input.connections, "connections", "ReplicasFromConnections");
  measured(appServer.eventsPerSecondPerReplica, input.events, "events/s", "ReplicasFromEvents");

  if (appServer.connectionsPerReplica === undefined && appServer.eventsPerSecondPerReplica === undefined) {
    if (input.service === "SignalR") {
      const scenarios: readonly ScenarioName[] = input.scenarios.length > 0 ? input.scenarios : ["echo"];
      const n = appServersFor(input.service, scenarios, input.units);
      parts.push({ n, basis: "table" });
      reasons.push(
        reason(
          "ReplicasFromTable",
          `tier table (${scenarios.join(", ")}) suggests ${n} app servers at ${input.units} units`,
          { units: n },
        ),
      );
    } else {
      held = true;
      reasons.push(
        reason(
          "ReplicasHeld",
          "Web PubSub has no app-server table and no per-replica rate is set: replicas kept",
        ),
      );
    }
  }

  const top = parts.reduce<(typeof parts)[number] | undefined>(
    (a, p) => (a === undefined || p.n > a.n ? p : a),
    undefined,
  );
  const basis: ReplicaDecision["basis"] = top?.basis ?? "held";
  const computed = top?.n;
  let value = computed ?? current ?? appServer.replicas.min;
  if (held && current !== undefined) value = Math.max(value, current);
  if (!mayLower && current !== undefined && value < current) {
    value = current;
    reasons.push(reason("ReplicasHeld", "measured input incomplete: app-server replicas not lowered"));
  }
  const { min, max } = appServer.replicas;
  if (value < min || value > max) {
    const clamped = Math.min(max, Math.max(min, value));
    reasons.push(
      reason("ReplicasClamped", `${value} replicas clamped to ${clamped} (replicas ${min}..${max})`, {
        units: clamped,
      }),
    );
    value = clamped;
  }
  const out: ReplicaDecision = { basis, reasons };
  if (computed !== undefined) out.computed = computed;
  if (hpa) {
    out.hpaMinReplicas = value;
    reasons.push(
      reason(
        "HpaFloor",
        `HorizontalPodAutoscaler ${appServer.horizontalPodAutoscalerName} owns the replicas: minReplicas floor ${value}`,
        { name: appServer.horizontalPodAutoscalerName, units: value },
      ),
    );
  } else {
    out.replicas = value;
  }
  return out;
}
