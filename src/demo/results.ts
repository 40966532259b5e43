/**
 * The demo's results, after the replay: the timeline minute by minute from the emulator's history
 * (traffic as the emulator computed it, capacity from the {@link CapacityTracker}, replicas from
 * the passes), its summary, `timeline.csv` and `chart.svg` in the output directory, and the
 * operator's and Azure's figures of the run.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CONNECTIONS_PER_UNIT, type SkuName } from "../capacity/index.js";
import { demoChartSvg } from "./chart.js";
import type { Replay } from "./replay.js";
import type { DemoResult, DemoSettings } from "./settings.js";
import type { DemoStage } from "./setup.js";
import { summarize, type TimelineRow, timelineCsv } from "./timeline.js";
import { MINUTE_MS } from "./trace-window.js";

/** One row per minute of the window up to the last whole minute the clock reached. */
function demoTimeline(settings: DemoSettings, stage: DemoStage): TimelineRow[] {
  const { window, policy } = settings;
  const { clock, emulator, tracker, replicaLog } = stage;
  const resourceId = policy.spec.target.resourceId;
  const endMs = window.startMs + window.durationMs;
  const lastMinute = Math.min(endMs, Math.floor(clock.nowMs() / MINUTE_MS) * MINUTE_MS);
  const rows: TimelineRow[] = [];
  for (let m = window.startMs; m < lastMinute; m += MINUTE_MS) {
    const t = emulator.control.traffic(resourceId, new Date(m));
    if (!t) continue;
    const cap = tracker.at(m);
    const units = Math.round(t.connectionQuota / CONNECTIONS_PER_UNIT);
    const sku: SkuName = cap.units === units ? cap.sku : units > 100 ? "Premium_P2" : cap.sku;
    let r: number | undefined;
    for (const x of replicaLog) if (x.time < m + MINUTE_MS) r = x.replicas;
    rows.push({
      time: m,
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

/** The results of a replay (see the module comment); `wallSeconds` is left for the caller. */
export async function reportDemo(
  settings: DemoSettings,
  stage: DemoStage,
  replay: Replay,
): Promise<DemoResult> {
  const { policy } = settings;
  const { cluster, emulator, operatorMetrics } = stage;
  const { interrupted, passes } = replay;
  const rows = demoTimeline(settings, stage);
  const loadTargetPercent = policy.spec.metrics.serverLoad?.targetPercent ?? 70;
  const summary = summarize(rows, { loadTargetPercent });
  const endMs = settings.window.startMs + settings.window.durationMs;
  for (const d of emulator.control.disconnections(policy.spec.target.resourceId)) {
    if (d.atMs < settings.window.startMs || d.atMs >= endMs) continue;
    summary.disconnected.clients += Math.round(d.disconnected);
    summary.disconnected.refused += Math.round(d.refused);
  }
  const calls = emulator.control.calls();
  const durations = (await operatorMetrics.passDuration.get()).values;
  const sum = durations.find((v) => v.metricName?.endsWith("_sum"))?.value ?? 0;
  const count = durations.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;

  const queries = (await operatorMetrics.prometheusQueries.get()).values;
  const ok = queries.filter((v) => v.labels["outcome"] === "ok").reduce((a, v) => a + v.value, 0);
  const all = queries.reduce((a, v) => a + v.value, 0);

  let files: DemoResult["files"];
  if (rows.length > 0) {
    await mkdir(settings.outDir, { recursive: true });
    files = { timeline: join(settings.outDir, "timeline.csv"), chart: join(settings.outDir, "chart.svg") };
    await writeFile(files.timeline, timelineCsv(rows));
    const peak = settings.peakConnections.toLocaleString("en-US");
    await writeFile(
      files.chart,
      await demoChartSvg(rows, {
        title: `${policy.metadata.name}: ${settings.traceLabel}, peak ${peak} connections${interrupted ? " (interrupted)" : ""}`,
        loadTargetPercent,
      }),
    );
  }
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
        passes.count > 1 && passes.firstMs !== undefined && passes.lastMs !== undefined
          ? Math.round((passes.lastMs - passes.firstMs) / (passes.count - 1) / 100) / 10
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
  };
}
