/**
 * The SVG chart of a comparison: three panels over time — connections (demand and each
 * strategy's connection quota) and units on a symmetric-log scale, and true load (linear) with the
 * load target — one line per strategy. Drawn with the shared time chart of `chart/`.
 *
 * Long runs are downsampled to at most `maxPoints` points per line: per bucket of minutes
 * ({@link bucketMinutes}), the maximum of each quantity, so peaks stay visible.
 */
import type { TopLevelSpec } from "vega-lite";
import { CONNECTIONS_PER_UNIT } from "../capacity/index.js";
import { bucketLabel, bucketMinutes, type TimePoint, timeChartSpec } from "../chart/index.js";
import { MINUTE_MS, type StrategyRun } from "./engine.js";

/** One point of the chart's data: `series` is `demand` or a strategy's name. */
export type ChartPoint = TimePoint;

/** The chart's points: per bucket, the maximum of each quantity of each strategy. */
function chartData(
  startMs: number,
  demand: Float64Array,
  runs: readonly StrategyRun[],
  bucket: number,
): ChartPoint[] {
  const out: ChartPoint[] = [];
  for (let b = 0; b * bucket < demand.length; b++) {
    const from = b * bucket;
    const to = Math.min(demand.length, from + bucket);
    const time = new Date(startMs + from * MINUTE_MS).toISOString();
    let peak = 0;
    for (let m = from; m < to; m++) peak = Math.max(peak, demand[m] as number);
    out.push({ time, series: "demand", panel: "connections", value: peak });
    for (const run of runs) {
      let units = 0;
      let load = 0;
      for (let m = from; m < to; m++) {
        units = Math.max(units, run.units[m] as number);
        load = Math.max(load, run.loadPercent[m] as number);
      }
      out.push({ time, series: run.name, panel: "connections", value: units * CONNECTIONS_PER_UNIT });
      out.push({ time, series: run.name, panel: "units", value: units });
      out.push({ time, series: run.name, panel: "load", value: Math.round(load * 10) / 10 });
    }
  }
  return out;
}

/** The color of each series, shared with the frontier chart. */
export const SERIES_COLORS: Readonly<Record<string, string>> = {
  demand: "#222222",
  policy: "#1f77b4",
  "native-p1": "#e377c2",
  "native-p2": "#d62728",
  static: "#7f7f7f",
  oracle: "#2ca02c",
};

/** Options of {@link chartSpec}. */
export interface ChartOptions {
  title: string;
  loadTargetPercent: number;
  /** Most points per line (default 1,000). */
  maxPoints?: number;
  width?: number;
}

/** The Vega-Lite spec of the chart. */
export function chartSpec(
  startMs: number,
  demand: Float64Array,
  runs: readonly StrategyRun[],
  options: ChartOptions,
): TopLevelSpec {
  const bucket = bucketMinutes(demand.length, options.maxPoints);
  return timeChartSpec({
    title: options.title,
    subtitle: `${bucketLabel(bucket)}; dashed lines in the top panel: each strategy's connection quota`,
    values: chartData(startMs, demand, runs, bucket),
    panels: [
      { name: "connections", title: "connections", height: 160 },
      { name: "units", title: "units", height: 120 },
      { name: "load", title: `load % (target ${options.loadTargetPercent})`, height: 120 },
    ],
    width: options.width ?? 900,
    series: ["demand", ...runs.map((r) => r.name)],
    colorOf: (s) => SERIES_COLORS[s] ?? "#9467bd",
    strokeWidth: 1.2,
    // Demand solid; the strategies' lines dashed where they are connection quotas.
    strokeDash: (panel) => ({
      test: "datum.series === 'demand'",
      dash: [1, 0],
      otherwise: panel === "connections" ? [4, 2] : [1, 0],
    }),
    loadTargetPercent: options.loadTargetPercent,
  });
}
