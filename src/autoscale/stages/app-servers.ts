/**
 * Stage 8, the app servers (replicas.ts): replicas, or the HPA's minReplicas floor, for the chosen
 * units and the window's peak connections and events. Whatever blocks scaling the instance in
 * (unknown or failing metrics, settling, outside the scale-in windows, a failed pass) blocks
 * lowering the app servers too: they are kept at what they have (at most `replicas.max`).
 */
import type { ScenarioName } from "../../capacity/tier-tables.js";
import type { WindowConnections } from "../connections.js";
import { type Reason, reason } from "../reasons.js";
import { decideReplicas, type ReplicaDecision } from "../replicas.js";
import { known, type SampleWindow, series } from "../samples.js";
import type { DecisionFrame } from "./stage.js";

/** The app servers as they are: Deployment spec.replicas, the HPA's spec.minReplicas. */
export interface AppServersNow {
  replicas?: number | undefined;
  hpaMinReplicas?: number | undefined;
}

/** What the decision wants of the app servers. */
export interface AppServers {
  /** Absent when the policy configures no app servers. */
  decision: ReplicaDecision | undefined;
  replicas?: number;
  hpaMinReplicas?: number;
  /** `ReplicasHeld` when a blocker kept them from going down. */
  reasons: Reason[];
}

/** Stage 8 (see the module comment). `units`: the units chosen; `blockers`: of a scale-in. */
export function appServers(
  frame: DecisionFrame,
  observed: { window: SampleWindow },
  measured: { connections: WindowConnections },
  units: number,
  now: AppServersNow,
  blockers: readonly string[],
): AppServers {
  const { spec, failure } = frame;
  if (!spec.appServer) return { decision: undefined, reasons: [] };
  const traffic = spec.metrics.traffic;
  const msgSize = traffic?.messageSizeBytes ?? 2048;
  const { window } = observed;
  const { connections } = measured;
  const conn = series(window, (b) => connections.get(b.start)?.value);
  const events = series(window, (b) => {
    const i = b.sample?.inboundBytesPerSecond;
    return known(i) ? i / msgSize : null;
  });
  const peakOf = (s: typeof conn) =>
    s.points.length > 0 ? Math.max(...s.points.map((p) => p.value)) : undefined;
  const scenarios: ScenarioName[] = (traffic?.workload ?? [])
    .filter((w) => w.share > 0)
    .map((w) => w.scenario);
  const decision = decideReplicas({
    appServer: spec.appServer,
    service: spec.target.service,
    scenarios,
    units,
    connections: { value: peakOf(conn), status: failure ? "Unknown" : conn.status },
    events: { value: peakOf(events), status: failure ? "Unknown" : events.status },
    currentReplicas: now.replicas,
    currentHpaMinReplicas: now.hpaMinReplicas,
  });
  if (blockers.length === 0 && !failure) return { decision, ...wanted(decision), reasons: [] };
  return { decision, ...keptUp(decision, now, spec.appServer.replicas.max, blockers) };
}

/** The replica fields the replica decision sets. */
function wanted(d: ReplicaDecision): { replicas?: number; hpaMinReplicas?: number } {
  const out: { replicas?: number; hpaMinReplicas?: number } = {};
  if (d.replicas !== undefined) out.replicas = d.replicas;
  if (d.hpaMinReplicas !== undefined) out.hpaMinReplicas = d.hpaMinReplicas;
  return out;
}

/** The wanted replica fields, none below what the app servers have now (capped at `ceiling`). */
function keptUp(
  d: ReplicaDecision,
  now: AppServersNow,
  ceiling: number,
  blockers: readonly string[],
): { replicas?: number; hpaMinReplicas?: number; reasons: Reason[] } {
  const out = wanted(d);
  const held: string[] = [];
  const keep = (want: number, have: number | undefined) =>
    have !== undefined && want < Math.min(have, ceiling) ? Math.min(have, ceiling) : want;
  if (out.replicas !== undefined && keep(out.replicas, now.replicas) !== out.replicas) {
    out.replicas = keep(out.replicas, now.replicas);
    held.push(`replicas ${out.replicas}`);
  }
  if (
    out.hpaMinReplicas !== undefined &&
    keep(out.hpaMinReplicas, now.hpaMinReplicas) !== out.hpaMinReplicas
  ) {
    out.hpaMinReplicas = keep(out.hpaMinReplicas, now.hpaMinReplicas);
    held.push(`HPA minReplicas ${out.hpaMinReplicas}`);
  }
  if (held.length === 0) return { ...out, reasons: [] };
  const why = blockers.length > 0 ? blockers.join(", ") : "this pass failed";
  return {
    ...out,
    reasons: [reason("ReplicasHeld", `scale-in blocked (${why}): app servers kept at ${held.join(", ")}`)],
  };
}
