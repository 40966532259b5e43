/**
 * The demo's results, after the replay: the timeline minute by minute from the emulator's history
 * (traffic as the emulator computed it, capacity from the {@link CapacityTracker}, replicas from
 * the passes), its summary, `timeline.csv` and `chart.svg` in the output directory, and the
 * operator's and Azure's figures of the run.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CONNECTIONS_PER_UNIT, type SkuName } from "../capacity/index.js";
import { demoChartSvg, groupChartSvg } from "./chart.js";
import type { Replay } from "./replay.js";
import type { DemoResult, DemoSettings, GroupResult, MemberResult } from "./settings.js";
import type { DemoStage, StagedMember } from "./setup.js";
import {
  type DemoSummary,
  groupTimelineCsv,
  groupTotals,
  type MemberTimelineRow,
  summarize,
  type TimelineRow,
  timelineCsv,
} from "./timeline.js";
import { MINUTE_MS } from "./trace-window.js";

/** `[atMs, restoredMs)` of the failover, when the member failed (open when not restored). */
type Outage = { atMs: number; restoredMs?: number | undefined } | undefined;

const down = (outage: Outage, ms: number) =>
  outage !== undefined &&
  ms + MINUTE_MS > outage.atMs &&
  (outage.restoredMs === undefined || ms + MINUTE_MS <= outage.restoredMs);

/**
 * The app-server replicas at the end of the minute starting at `minuteMs`: the last entry of the
 * log before it ends (the member's Deployment, whether or not the member served).
 */
function replicasAt(
  log: readonly { time: number; replicas: number }[],
  minuteMs: number,
): number | undefined {
  let r: number | undefined;
  for (const x of log) if (x.time < minuteMs + MINUTE_MS) r = x.replicas;
  return r;
}

/**
 * One row per minute of the window up to the last whole minute the clock reached, for a member
 * (the policy's instance without a group); while it did not serve, its minute has no traffic (its
 * clients are at the others): a row of zeros at its capacity then, `serving` false.
 */
function demoTimeline(
  settings: DemoSettings,
  stage: DemoStage,
  member: StagedMember,
  outage?: Outage,
): MemberTimelineRow[] {
  const { window } = settings;
  const { clock, emulator } = stage;
  const { tracker, replicaLog, resourceId } = member;
  const endMs = window.startMs + window.durationMs;
  const lastMinute = Math.min(endMs, Math.floor(clock.nowMs() / MINUTE_MS) * MINUTE_MS);
  const rows: MemberTimelineRow[] = [];
  for (let m = window.startMs; m < lastMinute; m += MINUTE_MS) {
    const cap = tracker.at(m);
    const t = emulator.control.traffic(resourceId, new Date(m));
    const r = replicasAt(replicaLog, m);
    if (!t) {
      if (down(outage, m))
        rows.push({
          time: m,
          member: member.name,
          serving: false,
          demand: 0,
          connections: 0,
          refused: 0,
          quota: cap.units * CONNECTIONS_PER_UNIT,
          loadPercent: 0,
          ...cap,
          ...(r !== undefined ? { replicas: r } : {}),
          updating: tracker.updating(m),
        });
      continue;
    }
    const units = Math.round(t.connectionQuota / CONNECTIONS_PER_UNIT);
    const sku: SkuName = cap.units === units ? cap.sku : units > 100 ? "Premium_P2" : cap.sku;
    rows.push({
      time: m,
      member: member.name,
      serving: !down(outage, m),
      demand: t.offeredConnections,
      connections: t.clientConnections,
      refused: t.refusedConnections,
      quota: t.connectionQuota,
      loadPercent: t.serverLoadPercent,
      sku,
      units,
      ...(r !== undefined ? { replicas: r } : {}),
      updating: tracker.updating(m),
    });
  }
  return rows;
}

/** A member's summary from its rows, with the clients its completed updates disconnected in the window. */
function memberSummary(
  settings: DemoSettings,
  stage: DemoStage,
  member: StagedMember,
  rows: readonly TimelineRow[],
): DemoSummary {
  const loadTargetPercent = member.policy.spec.metrics.serverLoad?.targetPercent ?? 70;
  const summary = summarize(rows, { loadTargetPercent });
  const endMs = settings.window.startMs + settings.window.durationMs;
  for (const d of stage.emulator.control.disconnections(member.resourceId)) {
    if (d.atMs < settings.window.startMs || d.atMs >= endMs) continue;
    summary.disconnected.clients += Math.round(d.disconnected);
    summary.disconnected.refused += Math.round(d.refused);
  }
  return summary;
}

/** The group as one instance, minute by minute: members' traffic and units summed, the highest load, the primary's SKU. */
function summedRows(perMember: readonly MemberTimelineRow[][]): TimelineRow[] {
  const primary = perMember[0] ?? [];
  return primary.map((p, i) => {
    const at = perMember.map((rows) => rows[i]).filter((r): r is MemberTimelineRow => r?.time === p.time);
    const sum = (f: (r: TimelineRow) => number) => at.reduce((a, r) => a + f(r), 0);
    return {
      time: p.time,
      demand: sum((r) => r.demand),
      connections: sum((r) => r.connections),
      refused: sum((r) => r.refused),
      quota: sum((r) => r.quota),
      loadPercent: Math.max(...at.map((r) => r.loadPercent)),
      sku: p.sku,
      units: sum((r) => r.units),
      updating: at.some((r) => r.updating),
    };
  });
}

/** The failover's figures: when, how long, its clients, and the group's refusals in its minutes. */
function failoverResult(
  settings: DemoSettings,
  replay: Replay,
  members: readonly { rows: readonly TimelineRow[]; summary: DemoSummary }[],
): GroupResult["failover"] {
  const plan = settings.group?.failover;
  const record = replay.failover;
  if (!plan || !record) return undefined;
  const fromMs = Math.floor(record.atMs / MINUTE_MS) * MINUTE_MS;
  const within = { fromMs, toMs: fromMs + plan.durationMs };
  const t = groupTotals(members, within);
  const minutes = new Set(
    members.flatMap((m) => m.rows.map((r) => r.time)).filter((x) => x >= within.fromMs && x < within.toMs),
  ).size;
  return {
    member: plan.member,
    cause: record.cause,
    startMs: record.atMs,
    ...(record.restoredMs !== undefined ? { restoredMs: record.restoredMs } : {}),
    durationMs: plan.durationMs,
    connections: Math.round(record.connections),
    minutes,
    minutesRefused: t.minutesRefused,
    refusedConnectionMinutes: t.refusedConnectionMinutes,
  };
}

/**
 * A survivor's first scale-out sent while the failed member was down — from the failover to its
 * restore (to the end of the planned duration when the run ended first) — in whole minutes after
 * the failover (rounded, as `simulate --replicas` counts them); undefined when it sent none then.
 */
export function firstScaleOutWhileDown(
  replay: Pick<Replay, "scaleOuts">,
  member: string,
  failover: { startMs: number; restoredMs?: number | undefined; durationMs: number },
): number | undefined {
  const untilMs = failover.restoredMs ?? failover.startMs + failover.durationMs;
  const times = replay.scaleOuts
    .filter((x) => x.member === member && x.time >= failover.startMs && x.time < untilMs)
    .map((x) => x.time);
  return times.length === 0 ? undefined : Math.round((Math.min(...times) - failover.startMs) / MINUTE_MS);
}

/**
 * A survivor's size in the minute the member failed — its timeline row of the minute holding
 * `startMs` (the last row before it when none does) — with its policy's `units.max`; nothing when
 * the timeline has no row then.
 */
export function sizeAtFailover(
  member: Pick<StagedMember, "policy">,
  rows: readonly MemberTimelineRow[],
  startMs: number,
): Pick<MemberResult, "atFailover"> {
  const minute = Math.floor(startMs / MINUTE_MS) * MINUTE_MS;
  const row = rows.filter((r) => r.time <= minute).at(-1);
  if (!row) return {};
  return { atFailover: { sku: row.sku, units: row.units, maxUnits: member.policy.spec.units.max } };
}

/** A replica group's timeline, summaries and failover figures (`--replicas`). */
function groupResults(
  settings: DemoSettings,
  stage: DemoStage,
  replay: Replay,
): { rows: MemberTimelineRow[]; summed: TimelineRow[]; group: GroupResult } {
  const record = replay.failover;
  const perMember = stage.members.map((m) => demoTimeline(settings, stage, m, outageOf(m, record)));
  const figures = stage.members.map((m, i) => {
    const rows = perMember[i] as MemberTimelineRow[];
    return { member: m, rows, summary: memberSummary(settings, stage, m, rows) };
  });
  const failover = failoverResult(settings, replay, figures);
  const members: MemberResult[] = figures.map(({ member, rows, summary }) => {
    const first =
      failover && member.name !== failover.member
        ? firstScaleOutWhileDown(replay, member.name, failover)
        : undefined;
    return {
      name: member.name,
      role: member.role,
      resourceId: member.resourceId,
      location: member.location,
      share: member.share,
      policy: member.policy.metadata.name,
      summary,
      minutesNotServing: rows.filter((r) => !r.serving).length,
      ...(first !== undefined ? { firstScaleOutMinutes: first } : {}),
      ...(failover && member.name !== failover.member ? sizeAtFailover(member, rows, failover.startMs) : {}),
    };
  });
  const rows: MemberTimelineRow[] = [];
  const minutes = perMember[0]?.length ?? 0;
  for (let i = 0; i < minutes; i++) for (const r of perMember) if (r[i]) rows.push(r[i] as MemberTimelineRow);
  return {
    rows,
    summed: summedRows(perMember),
    group: {
      members,
      failoverRule: settings.group?.failoverRule !== false,
      total: groupTotals(figures),
      ...(failover ? { failover } : {}),
    },
  };
}

/** The failover's outage of `member`, when it is the one that failed. */
function outageOf(member: StagedMember, record: Replay["failover"]): Outage {
  if (!record || record.resourceId.toLowerCase() !== member.resourceId.toLowerCase()) return undefined;
  return { atMs: record.atMs, restoredMs: record.restoredMs };
}

/** Writes timeline.csv and chart.svg of a run; undefined when it has no minute. */
async function writeFiles(
  settings: DemoSettings,
  interrupted: boolean,
  rows: readonly TimelineRow[],
  group: { rows: MemberTimelineRow[]; result: GroupResult } | undefined,
): Promise<DemoResult["files"]> {
  if (rows.length === 0) return undefined;
  const { policy } = settings;
  const loadTargetPercent = policy.spec.metrics.serverLoad?.targetPercent ?? 70;
  await mkdir(settings.outDir, { recursive: true });
  const files = {
    timeline: join(settings.outDir, "timeline.csv"),
    chart: join(settings.outDir, "chart.svg"),
  };
  const peak = settings.peakConnections.toLocaleString("en-US");
  const title = `${policy.metadata.name}: ${settings.traceLabel}, peak ${peak} connections${interrupted ? " (interrupted)" : ""}`;
  if (!group) {
    await writeFile(files.timeline, timelineCsv(rows));
    await writeFile(files.chart, await demoChartSvg(rows, { title, loadTargetPercent }));
    return files;
  }
  const f = group.result.failover;
  await writeFile(files.timeline, groupTimelineCsv(group.rows));
  await writeFile(
    files.chart,
    await groupChartSvg(group.rows, {
      title: `${title}, ${group.result.members.length} members`,
      loadTargetPercent,
      members: group.result.members.map((m) => m.name),
      failover: f
        ? { fromMs: f.startMs, toMs: f.restoredMs ?? f.startMs + f.durationMs, member: f.member }
        : undefined,
    }),
  );
  return files;
}

/** The results of a replay (see the module comment); `wallSeconds` is left for the caller. */
export async function reportDemo(
  settings: DemoSettings,
  stage: DemoStage,
  replay: Replay,
): Promise<DemoResult> {
  const { policy } = settings;
  const { cluster, emulator, operatorMetrics } = stage;
  const { interrupted, passes } = replay;
  const loadTargetPercent = policy.spec.metrics.serverLoad?.targetPercent ?? 70;
  let rows: TimelineRow[];
  let summary: DemoSummary;
  let group: { rows: MemberTimelineRow[]; result: GroupResult } | undefined;
  if (settings.group) {
    const g = groupResults(settings, stage, replay);
    rows = g.summed;
    summary = summarize(rows, { loadTargetPercent });
    for (const m of g.group.members) {
      summary.disconnected.clients += m.summary.disconnected.clients;
      summary.disconnected.refused += m.summary.disconnected.refused;
    }
    group = { rows: g.rows, result: g.group };
  } else {
    const member = stage.members[0] as StagedMember;
    // The one instance's rows, as TimelineRow (no member, no serving flag).
    rows = demoTimeline(settings, stage, member).map(({ member: _, serving: __, ...r }) => r);
    summary = memberSummary(settings, stage, member, rows);
  }
  const calls = emulator.control.calls();
  const durations = (await operatorMetrics.passDuration.get()).values;
  const sum = durations.find((v) => v.metricName?.endsWith("_sum"))?.value ?? 0;
  const count = durations.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;

  const queries = (await operatorMetrics.prometheusQueries.get()).values;
  const ok = queries.filter((v) => v.labels["outcome"] === "ok").reduce((a, v) => a + v.value, 0);
  const all = queries.reduce((a, v) => a + v.value, 0);

  const files = await writeFiles(settings, interrupted, rows, group);
  // Passes of every member's policy: the interval is per policy.
  const policies = stage.members.length;
  return {
    started: true,
    interrupted,
    summary,
    rows,
    files,
    replaySeconds: replay.replaySeconds,
    wallSeconds: 0,
    operator: {
      passes: passes.count,
      failedPasses: passes.failed,
      meanPassMs: count > 0 ? Math.round((sum / count) * 10_000) / 10 : 0,
      meanPassIntervalSeconds:
        passes.count > policies && passes.firstMs !== undefined && passes.lastMs !== undefined
          ? Math.round((((passes.lastMs - passes.firstMs) / (passes.count - 1)) * policies) / 100) / 10
          : 0,
    },
    azureCalls: { armReads: calls.armReads, armWrites: calls.armWrites, getBatch: calls.getBatch },
    anticipation: { mode: policy.spec.anticipation?.mode ?? "Off", scaleOuts: replay.anticipated },
    ...(stage.leading ? { leading: { ...stage.leading, queries: { ok, failed: all - ok } } } : {}),
    cluster: {
      local: cluster.local !== undefined,
      kubeconfig: cluster.kubeconfig,
      namespace: policy.metadata.namespace,
    },
    ...(group ? { group: group.result } : {}),
  };
}
