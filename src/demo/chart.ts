/**
 * The demo's SVG chart, from its timeline: three panels over time — connections (demand, accepted
 * and the connection quota), units, and server load with its target — with the minutes on
 * Premium_P2 shaded in every panel. A Vega-Lite spec rendered headless by Vega (the renderer and
 * the downsampling buckets are simulate's).
 *
 * Connections and units use a symmetric-log scale: a flash crowd dwarfs the rest of the day, and
 * the scale-outs and scale-ins at a handful of units should stay visible next to it.
 */
import type { TopLevelSpec } from "vega-lite";
import { bucketMinutes, renderSvg } from "../simulate/chart.js";
import { isoMinute, type TimelineRow } from "./timeline.js";

/** One point of the chart's data. */
export interface DemoChartPoint {
  time: string;
  series: (typeof SERIES)[number];
  panel: "connections" | "units" | "load";
  value: number;
}

/** A span of minutes on Premium_P2, `[from, to)`. */
export interface SkuSpan {
  from: string;
  to: string;
  label: string;
}

const SERIES = ["demand", "connections", "connection quota", "units", "server load"] as const;
const COLORS: Readonly<Record<(typeof SERIES)[number], string>> = {
  demand: "#222222",
  connections: "#1f77b4",
  "connection quota": "#7f7f7f",
  units: "#2ca02c",
  "server load": "#d62728",
};
const UNITS_HEIGHT = 130;
const UNIT_TICKS = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
const CONNECTION_TICKS = [0, 100, 1_000, 10_000, 100_000, 1_000_000];

/** Per bucket of `bucket` minutes, the maximum of each quantity (so peaks stay visible). */
export function demoChartData(rows: readonly TimelineRow[], bucket: number): DemoChartPoint[] {
  const out: DemoChartPoint[] = [];
  for (let from = 0; from < rows.length; from += bucket) {
    const slice = rows.slice(from, from + bucket);
    const time = new Date((slice[0] as TimelineRow).time).toISOString();
    const max = (f: (r: TimelineRow) => number) => Math.max(...slice.map(f));
    out.push({ time, series: "demand", panel: "connections", value: Math.round(max((r) => r.demand)) });
    out.push({
      time,
      series: "connections",
      panel: "connections",
      value: Math.round(max((r) => r.connections)),
    });
    out.push({ time, series: "connection quota", panel: "connections", value: max((r) => r.quota) });
    out.push({ time, series: "units", panel: "units", value: max((r) => r.units) });
    out.push({
      time,
      series: "server load",
      panel: "load",
      value: Math.round(max((r) => r.loadPercent) * 10) / 10,
    });
  }
  return out;
}

/** The spans of consecutive minutes on Premium_P2. */
export function p2Spans(rows: readonly TimelineRow[]): SkuSpan[] {
  const spans: SkuSpan[] = [];
  let start: number | undefined;
  for (let i = 0; i <= rows.length; i++) {
    const r = rows[i];
    const onP2 = r?.sku === "Premium_P2";
    if (onP2 && start === undefined) start = r.time;
    if (!onP2 && start !== undefined) {
      const end = r ? r.time : (rows[i - 1] as TimelineRow).time + 60_000;
      spans.push({ from: isoMinute(start), to: isoMinute(end), label: "Premium_P2" });
      start = undefined;
    }
  }
  return spans;
}

/** Options of {@link demoChartSpec}. */
export interface DemoChartOptions {
  title: string;
  loadTargetPercent: number;
  /** Most points per line (default 1,500: a day per minute). */
  maxPoints?: number;
  width?: number;
}

/** The Vega-Lite spec of the chart. */
export function demoChartSpec(rows: readonly TimelineRow[], options: DemoChartOptions): TopLevelSpec {
  const bucket = bucketMinutes(rows.length, options.maxPoints ?? 1500);
  const values = demoChartData(rows, bucket);
  const spans = p2Spans(rows);
  const color = {
    field: "series",
    type: "nominal" as const,
    title: null,
    scale: { domain: [...SERIES], range: SERIES.map((s) => COLORS[s]) },
  };
  const x = { field: "time", type: "temporal" as const, title: null, scale: { type: "utc" as const } };
  const width = options.width ?? 900;
  const per = bucket === 1 ? "per minute" : `max per ${bucket >= 60 ? `${bucket / 60} h` : `${bucket} min`}`;
  const shade = (labelled: boolean) =>
    spans.length === 0
      ? []
      : [
          {
            data: { values: spans },
            mark: { type: "rect" as const, color: "#ff7f0e", opacity: 0.15 },
            encoding: {
              x: { field: "from", type: "temporal" as const, scale: { type: "utc" as const } },
              x2: { field: "to" },
            },
          },
          ...(labelled
            ? [
                {
                  data: { values: spans },
                  mark: {
                    type: "text" as const,
                    align: "left" as const,
                    baseline: "bottom" as const,
                    dx: 3,
                    dy: -3,
                    color: "#c55a00",
                    fontSize: 11,
                  },
                  encoding: {
                    x: { field: "from", type: "temporal" as const, scale: { type: "utc" as const } },
                    y: { value: UNITS_HEIGHT },
                    text: { field: "label" },
                  },
                },
              ]
            : []),
        ];
  const panel = (name: DemoChartPoint["panel"], title: string, height: number) => ({
    width,
    height,
    layer: [
      ...shade(name === "units"),
      {
        transform: [{ filter: `datum.panel === '${name}'` }],
        mark: { type: "line" as const, interpolate: "step-after" as const, strokeWidth: 1.3 },
        encoding: {
          x,
          y: {
            field: "value",
            type: "quantitative" as const,
            title,
            ...(name === "load"
              ? { scale: { domain: [0, 100] } }
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
            condition: { test: "datum.series === 'connection quota'", value: [4, 2] },
            value: [1, 0],
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
      subtitle: `${per}, UTC; shaded: minutes on Premium_P2; dashed: the connection quota (units × 1,000)`,
    },
    data: { values },
    config: { font: "sans-serif", legend: { orient: "top" } },
    vconcat: [
      panel("connections", "connections", 170),
      panel("units", "units", UNITS_HEIGHT),
      panel("load", `server load % (target ${options.loadTargetPercent})`, 110),
    ],
    resolve: { scale: { color: "shared" } },
  } as TopLevelSpec;
}

/** The chart as SVG text. */
export async function demoChartSvg(rows: readonly TimelineRow[], options: DemoChartOptions): Promise<string> {
  return await renderSvg(demoChartSpec(rows, options));
}
