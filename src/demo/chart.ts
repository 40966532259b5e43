/**
 * The demo's SVG chart, from its timeline: three panels over time — connections (demand, accepted
 * and the connection quota), units, and server load with its target — with the minutes on
 * Premium_P2 shaded in every panel. Drawn with the shared time chart of `chart/` (connections and
 * units on a symmetric-log scale, load linear), rendered headless to SVG.
 */
import type { TopLevelSpec } from "vega-lite";
import {
  bucketLabel,
  bucketMinutes,
  renderSvg,
  type TimePoint,
  timeChartSpec,
  utcTime,
} from "../chart/index.js";
import { isoMinute, type TimelineRow } from "./timeline.js";

/** One point of the chart's data. */
export type DemoChartPoint = TimePoint<(typeof SERIES)[number]>;

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
  const spans = p2Spans(rows);
  const shade = (labelled: boolean) =>
    spans.length === 0
      ? []
      : [
          {
            data: { values: spans },
            mark: { type: "rect" as const, color: "#ff7f0e", opacity: 0.15 },
            encoding: { x: utcTime("from"), x2: { field: "to" } },
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
                  encoding: { x: utcTime("from"), y: { value: UNITS_HEIGHT }, text: { field: "label" } },
                },
              ]
            : []),
        ];
  return timeChartSpec({
    title: options.title,
    subtitle: `${bucketLabel(bucket)}, UTC; shaded: minutes on Premium_P2; dashed: the connection quota (units × 1,000)`,
    values: demoChartData(rows, bucket),
    panels: [
      { name: "connections", title: "connections", height: 170, background: shade(false) },
      { name: "units", title: "units", height: UNITS_HEIGHT, background: shade(true) },
      {
        name: "load",
        title: `server load % (target ${options.loadTargetPercent})`,
        height: 110,
        background: shade(false),
      },
    ],
    width: options.width ?? 900,
    series: SERIES,
    colorOf: (s) => COLORS[s],
    strokeWidth: 1.3,
    strokeDash: () => ({ test: "datum.series === 'connection quota'", dash: [4, 2], otherwise: [1, 0] }),
    loadTargetPercent: options.loadTargetPercent,
    loadDomain: [0, 100],
  });
}

/** The chart as SVG text. */
export async function demoChartSvg(rows: readonly TimelineRow[], options: DemoChartOptions): Promise<string> {
  return await renderSvg(demoChartSpec(rows, options));
}
