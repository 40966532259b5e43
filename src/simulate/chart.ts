/**
 * The SVG chart of a comparison: three panels over time — connections (demand and each
 * strategy's connection quota) and units on a symmetric-log scale, and true load (linear) with the
 * load target — one line per strategy. Built as a Vega-Lite spec and rendered headless by Vega to SVG.
 *
 * Long runs are downsampled to at most `maxPoints` points per line: per bucket of minutes (1, 5,
 * 10, 15, 30 minutes, 1, 2, 6, 12 hours or 1 day — the smallest that fits), the maximum of each
 * quantity, so peaks stay visible.
 */
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import { CONNECTIONS_PER_UNIT } from "../capacity/index.js";
import { MINUTE_MS, type StrategyRun } from "./engine.js";

const BUCKETS = [1, 5, 10, 15, 30, 60, 120, 360, 720, 1440];

/** The bucket size, minutes, for `minutes` minutes in at most `maxPoints` points. */
export function bucketMinutes(minutes: number, maxPoints = 1000): number {
  for (const b of BUCKETS) if (Math.ceil(minutes / b) <= maxPoints) return b;
  return Math.ceil(minutes / maxPoints / 1440) * 1440;
}

/** One point of the chart's data. */
export interface ChartPoint {
  time: string;
  series: string;
  panel: "connections" | "units" | "load";
  value: number;
}

/** The chart's points: per bucket, the maximum of each quantity of each strategy. */
export function chartData(
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

const UNIT_TICKS = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
const CONNECTION_TICKS = [0, 100, 1_000, 10_000, 100_000, 1_000_000];

const COLORS: Readonly<Record<string, string>> = {
  demand: "#222222",
  policy: "#1f77b4",
  native: "#d62728",
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
  const values = chartData(startMs, demand, runs, bucket);
  const series = ["demand", ...runs.map((r) => r.name)];
  const color = {
    field: "series",
    type: "nominal" as const,
    title: null,
    scale: { domain: series, range: series.map((s) => COLORS[s] ?? "#9467bd") },
  };
  const x = { field: "time", type: "temporal" as const, title: null, scale: { type: "utc" as const } };
  const width = options.width ?? 900;
  const per = bucket === 1 ? "per minute" : `max per ${bucket >= 60 ? `${bucket / 60} h` : `${bucket} min`}`;
  const panel = (name: ChartPoint["panel"], title: string, height: number) => ({
    width,
    height,
    transform: [{ filter: `datum.panel === '${name}'` }],
    layer: [
      {
        mark: { type: "line" as const, interpolate: "step-after" as const, strokeWidth: 1.2 },
        encoding: {
          x,
          y: {
            field: "value",
            type: "quantitative" as const,
            title,
            // Log-like for sizes (flash crowds dwarf the rest), linear for load.
            ...(name === "load"
              ? {}
              : {
                  scale: { type: "symlog" as const },
                  axis: {
                    values: name === "units" ? UNIT_TICKS : CONNECTION_TICKS,
                    labelExpr: "format(datum.value, ',')",
                  },
                }),
          },
          color,
          strokeDash: {
            condition: { test: "datum.series === 'demand'", value: [1, 0] },
            value: name === "connections" ? [4, 2] : [1, 0],
          },
        },
      },
      ...(name === "load"
        ? [
            {
              data: { values: [{ target: options.loadTargetPercent }] },
              mark: { type: "rule" as const, strokeDash: [2, 2], color: "#ff7f0e" },
              encoding: { y: { field: "target", type: "quantitative" as const } },
            },
          ]
        : []),
    ],
  });
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: {
      text: options.title,
      subtitle: `${per}; dashed lines in the top panel: each strategy's connection quota`,
    },
    data: { values },
    config: { font: "sans-serif", legend: { orient: "top" } },
    vconcat: [
      panel("connections", "connections", 160),
      panel("units", "units", 120),
      panel("load", `load % (target ${options.loadTargetPercent})`, 120),
    ],
    resolve: { scale: { color: "shared" } },
  } as TopLevelSpec;
}

/** Renders a Vega-Lite spec to SVG, headless. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
