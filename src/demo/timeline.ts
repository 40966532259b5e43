/**
 * The demo's timeline — one row per virtual minute, as the emulated instance lived it — its CSV
 * form and the summary computed from it. Pure.
 *
 * CSV columns: `time` (start of the minute, RFC 3339 UTC), `demand_connections` (client
 * connections wanted), `connections` (accepted), `refused_connections`, `connection_quota`
 * (units × 1,000), `load_percent` (server load as Azure Monitor reports it, 0–100), `sku`,
 * `units`, `replicas` (app-server Deployment, empty when unknown), `updating` (1 while an ARM
 * update ran during the minute).
 */
import type { SkuName } from "../capacity/index.js";

/** One minute of the demo. */
export interface TimelineRow {
  /** Start of the minute, ms since the epoch. */
  time: number;
  /** Client connections that wanted the service. */
  demand: number;
  /** Client connections accepted. */
  connections: number;
  /** Client connections refused (over the quota). */
  refused: number;
  /** Connection quota, connections. */
  quota: number;
  /** Server load as reported, %. */
  loadPercent: number;
  sku: SkuName;
  units: number;
  /** App-server replicas at the end of the minute. */
  replicas?: number;
  /** An ARM update ran during the minute. */
  updating: boolean;
}

export const TIMELINE_HEADER =
  "time,demand_connections,connections,refused_connections,connection_quota,load_percent,sku,units,replicas,updating";

/** RFC 3339 without milliseconds. */
export function isoMinute(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z");
}

/** The timeline as CSV text (header first, one line per row). */
export function timelineCsv(rows: readonly TimelineRow[]): string {
  const lines = rows.map(
    (r) =>
      `${isoMinute(r.time)},${Math.round(r.demand)},${Math.round(r.connections)},${Math.round(r.refused)},${r.quota},${r.loadPercent.toFixed(1)},${r.sku},${r.units},${r.replicas ?? ""},${r.updating ? 1 : 0}`,
  );
  return `${[TIMELINE_HEADER, ...lines].join("\n")}\n`;
}

/** A SKU and unit count. */
export interface Size {
  sku: SkuName;
  units: number;
}

/** A capacity change seen in the timeline: the first minute with the new size. */
export interface CapacityChange {
  time: string;
  from: Size;
  to: Size;
  direction: "out" | "in";
}

/** What the demo did, from its timeline. */
export interface DemoSummary {
  start: string;
  /** End of the last minute. */
  end: string;
  minutes: number;
  loadTargetPercent: number;
  peakDemand: number;
  peakConnections: number;
  /** Capacity changes (each completed ARM scale), and how many went out and in. */
  scaleOperations: { total: number; out: number; in: number };
  changes: CapacityChange[];
  /** The first Premium_P1 → Premium_P2 step and the first way back after it. */
  p1ToP2?: CapacityChange;
  p2ToP1?: CapacityChange;
  p2Minutes: number;
  /** Unit-hours per SKU used, and in total. */
  unitHours: Partial<Record<SkuName, number>>;
  totalUnitHours: number;
  peakUnits: number;
  meanUnits: number;
  /** Minutes with the reported server load above the target. */
  minutesAboveTarget: number;
  /** Minutes with at least one refused connection. */
  minutesRefused: number;
  /** Refused connections summed over the minutes, connection-minutes. */
  refusedConnectionMinutes: number;
  peakRefused: number;
  /**
   * Clients the completed scale operations disconnected (the emulator's traffic model: the removed
   * units' share at a scale-in), and the reconnects of theirs refused for want of room.
   */
  disconnected: { clients: number; refused: number };
  /** Fewest and most app-server replicas, when known. */
  replicas?: { min: number; max: number };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Sums up a timeline. An empty timeline gives zeros. */
export function summarize(rows: readonly TimelineRow[], options: { loadTargetPercent: number }): DemoSummary {
  const first = rows[0];
  const last = rows[rows.length - 1];
  const summary: DemoSummary = {
    start: first ? isoMinute(first.time) : "",
    end: last ? isoMinute(last.time + 60_000) : "",
    minutes: rows.length,
    loadTargetPercent: options.loadTargetPercent,
    peakDemand: 0,
    peakConnections: 0,
    scaleOperations: { total: 0, out: 0, in: 0 },
    changes: [],
    p2Minutes: 0,
    unitHours: {},
    totalUnitHours: 0,
    peakUnits: 0,
    meanUnits: 0,
    minutesAboveTarget: 0,
    minutesRefused: 0,
    refusedConnectionMinutes: 0,
    peakRefused: 0,
    disconnected: { clients: 0, refused: 0 },
  };
  let unitMinutes = 0;
  let prev: TimelineRow | undefined;
  let replicasMin = Number.POSITIVE_INFINITY;
  let replicasMax = Number.NEGATIVE_INFINITY;
  const perSku: Partial<Record<SkuName, number>> = {};
  for (const r of rows) {
    summary.peakDemand = Math.max(summary.peakDemand, Math.round(r.demand));
    summary.peakConnections = Math.max(summary.peakConnections, Math.round(r.connections));
    summary.peakUnits = Math.max(summary.peakUnits, r.units);
    unitMinutes += r.units;
    perSku[r.sku] = (perSku[r.sku] ?? 0) + r.units;
    if (r.sku === "Premium_P2") summary.p2Minutes++;
    if (r.loadPercent > options.loadTargetPercent) summary.minutesAboveTarget++;
    if (r.refused > 0) {
      summary.minutesRefused++;
      summary.refusedConnectionMinutes += Math.round(r.refused);
      summary.peakRefused = Math.max(summary.peakRefused, Math.round(r.refused));
    }
    if (r.replicas !== undefined) {
      replicasMin = Math.min(replicasMin, r.replicas);
      replicasMax = Math.max(replicasMax, r.replicas);
    }
    if (prev && (prev.sku !== r.sku || prev.units !== r.units)) recordChange(summary, prev, r);
    prev = r;
  }
  for (const [sku, minutes] of Object.entries(perSku) as [SkuName, number][]) {
    summary.unitHours[sku] = round1(minutes / 60);
  }
  summary.totalUnitHours = round1(unitMinutes / 60);
  summary.meanUnits = rows.length > 0 ? round1(unitMinutes / rows.length) : 0;
  if (replicasMax >= replicasMin) summary.replicas = { min: replicasMin, max: replicasMax };
  return summary;
}

/**
 * Adds the size change from `prev` to `r` (a minute later) to `summary`: its changes, its scale
 * operation counts (out when the units do not fall), and the first P1 → P2 and, after it, the
 * first P2 → P1.
 */
function recordChange(summary: DemoSummary, prev: TimelineRow, r: TimelineRow): void {
  const from = { sku: prev.sku, units: prev.units };
  const to = { sku: r.sku, units: r.units };
  const direction = to.units >= from.units ? "out" : "in";
  const change: CapacityChange = { time: isoMinute(r.time), from, to, direction };
  summary.changes.push(change);
  summary.scaleOperations.total++;
  summary.scaleOperations[direction]++;
  if (!summary.p1ToP2 && from.sku === "Premium_P1" && to.sku === "Premium_P2") summary.p1ToP2 = change;
  if (summary.p1ToP2 && !summary.p2ToP1 && from.sku === "Premium_P2" && to.sku === "Premium_P1")
    summary.p2ToP1 = change;
}

/** One minute of one member of a replica group (`--replicas`). */
export interface MemberTimelineRow extends TimelineRow {
  /** The member's name (`--replicas`). */
  member: string;
  /** It served clients in the minute (false while failed over: no metrics, no clients). */
  serving: boolean;
}

/** The CSV header of a replica group's timeline: a row per minute and member. */
export const GROUP_TIMELINE_HEADER =
  "time,member,demand_connections,connections,refused_connections,connection_quota,load_percent,sku,units,replicas,updating,serving";

/**
 * A replica group's timeline as CSV text: per minute one row per member, in member order, with
 * the columns of {@link TIMELINE_HEADER} after `time` and `member`, and `serving` (0 while it
 * did not serve).
 */
export function groupTimelineCsv(rows: readonly MemberTimelineRow[]): string {
  const lines = rows.map(
    (r) =>
      `${isoMinute(r.time)},${r.member},${Math.round(r.demand)},${Math.round(r.connections)},${Math.round(r.refused)},${r.quota},${r.loadPercent.toFixed(1)},${r.sku},${r.units},${r.replicas ?? ""},${r.updating ? 1 : 0},${r.serving ? 1 : 0}`,
  );
  return `${[GROUP_TIMELINE_HEADER, ...lines].join("\n")}\n`;
}

/** A replica group's figures as a whole, from its members' timelines. */
export interface GroupTotals {
  unitHours: number;
  /** Minutes in which any member refused a connection. */
  minutesRefused: number;
  /** Refused connections summed over minutes and members, connection-minutes. */
  refusedConnectionMinutes: number;
  /** Most connections the group refused in one minute. */
  peakRefused: number;
  /** Minutes in which any member's load was above the target. */
  minutesAboveTarget: number;
  /** Most connections the group's members wanted in one minute together. */
  peakDemand: number;
  scaleOperations: { total: number; out: number; in: number };
}

/**
 * The group's totals from each member's rows and summary (see {@link GroupTotals}); `within`
 * restricts the minute counts to `[fromMs, toMs)`.
 */
export function groupTotals(
  members: readonly { rows: readonly TimelineRow[]; summary: DemoSummary }[],
  within?: { fromMs: number; toMs: number },
): GroupTotals {
  const byMinute = new Map<number, { refused: number; demand: number; above: boolean }>();
  for (const { rows, summary } of members) {
    for (const r of rows) {
      if (within && (r.time < within.fromMs || r.time >= within.toMs)) continue;
      const m = byMinute.get(r.time) ?? { refused: 0, demand: 0, above: false };
      m.refused += r.refused;
      m.demand += r.demand;
      m.above ||= r.loadPercent > summary.loadTargetPercent;
      byMinute.set(r.time, m);
    }
  }
  const minutes = [...byMinute.values()];
  const sum = (f: (s: DemoSummary) => number) => round1(members.reduce((a, m) => a + f(m.summary), 0));
  return {
    unitHours: sum((s) => s.totalUnitHours),
    minutesRefused: minutes.filter((m) => m.refused > 0).length,
    refusedConnectionMinutes: Math.round(minutes.reduce((a, m) => a + m.refused, 0)),
    peakRefused: Math.round(Math.max(0, ...minutes.map((m) => m.refused))),
    minutesAboveTarget: minutes.filter((m) => m.above).length,
    peakDemand: Math.round(Math.max(0, ...minutes.map((m) => m.demand))),
    scaleOperations: {
      total: sum((s) => s.scaleOperations.total),
      out: sum((s) => s.scaleOperations.out),
      in: sum((s) => s.scaleOperations.in),
    },
  };
}
