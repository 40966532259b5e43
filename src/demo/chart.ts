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

/** The colors of a replica group's members, in member order (then again). */
const MEMBER_COLORS = [
  "#1f77b4",
  "#2ca02c",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#17becf",
  "#bcbd22",
  "#7f7f7f",
  "#ff7f0e",
];
const GROUP_DEMAND = "demand (group)";

/** Options of {@link groupChartSpec}: those of the one-instance chart, and the failover's span. */
export interface GroupChartOptions extends DemoChartOptions {
  /** The members in order (their rows' `member`). */
  members: readonly string[];
  /** `[from, to)` of the failover, ms, and its member. */
  failover?: { fromMs: number; toMs: number; member: string } | undefined;
}

/**
 * Per bucket of `bucket` minutes, the maximum of each member's accepted connections, refused
 * connections, units and load, and of the group's demand (so peaks stay visible).
 */
export function groupChartData(
  rows: readonly (TimelineRow & { member: string })[],
  members: readonly string[],
  bucket: number,
): TimePoint[] {
  const byMember = members.map((m) => rows.filter((r) => r.member === m));
  const minutes = byMember[0]?.length ?? 0;
  const out: TimePoint[] = [];
  for (let from = 0; from < minutes; from += bucket) {
    const first = byMember[0]?.[from] as TimelineRow;
    const time = new Date(first.time).toISOString();
    let demand = 0;
    for (let i = from; i < Math.min(minutes, from + bucket); i++)
      demand = Math.max(
        demand,
        byMember.reduce((a, rs) => a + (rs[i]?.demand ?? 0), 0),
      );
    out.push({ time, series: GROUP_DEMAND, panel: "connections", value: Math.round(demand) });
    for (const [k, member] of members.entries()) {
      const slice = (byMember[k] ?? []).slice(from, from + bucket);
      if (slice.length === 0) continue;
      const max = (f: (r: TimelineRow) => number) => Math.max(...slice.map(f));
      out.push({ time, series: member, panel: "connections", value: Math.round(max((r) => r.connections)) });
      out.push({ time, series: member, panel: "refused", value: Math.round(max((r) => r.refused)) });
      out.push({ time, series: member, panel: "units", value: max((r) => r.units) });
      out.push({
        time,
        series: member,
        panel: "load",
        value: Math.round(max((r) => r.loadPercent) * 10) / 10,
      });
    }
  }
  return out;
}

/**
 * The Vega-Lite spec of a replica group's chart: four panels over time — each member's accepted
 * connections with the group's demand, each member's refused connections, units and server load —
 * with the failover's minutes shaded in every panel.
 */
export function groupChartSpec(
  rows: readonly (TimelineRow & { member: string })[],
  options: GroupChartOptions,
): TopLevelSpec {
  const minutes = rows.length / Math.max(1, options.members.length);
  const bucket = bucketMinutes(minutes, options.maxPoints ?? 1500);
  const f = options.failover;
  const span = f ? [{ from: isoMinute(f.fromMs), to: isoMinute(f.toMs), label: `${f.member} down` }] : [];
  const shade = (labelled: boolean) =>
    span.length === 0
      ? []
      : [
          {
            data: { values: span },
            mark: { type: "rect" as const, color: "#d62728", opacity: 0.12 },
            encoding: { x: utcTime("from"), x2: { field: "to" } },
          },
          ...(labelled
            ? [
                {
                  data: { values: span },
                  mark: {
                    type: "text" as const,
                    align: "left" as const,
                    baseline: "top" as const,
                    dx: 3,
                    dy: 3,
                    color: "#a02020",
                    fontSize: 11,
                  },
                  encoding: { x: utcTime("from"), y: { value: 0 }, text: { field: "label" } },
                },
              ]
            : []),
        ];
  const series = [GROUP_DEMAND, ...options.members];
  return timeChartSpec({
    title: options.title,
    subtitle: `${bucketLabel(bucket)}, UTC; one line per member${f ? `; shaded: ${f.member} not serving (failover)` : ""}`,
    values: groupChartData(rows, options.members, bucket),
    panels: [
      { name: "connections", title: "connections", height: 170, background: shade(true) },
      { name: "refused", title: "refused connections", height: 110, background: shade(false) },
      { name: "units", title: "units", height: UNITS_HEIGHT, background: shade(false) },
      {
        name: "load",
        title: `server load % (target ${options.loadTargetPercent})`,
        height: 110,
        background: shade(false),
      },
    ],
    width: options.width ?? 900,
    series,
    colorOf: (s) =>
      s === GROUP_DEMAND
        ? "#222222"
        : (MEMBER_COLORS[options.members.indexOf(s) % MEMBER_COLORS.length] as string),
    strokeWidth: 1.3,
    strokeDash: () => ({ test: `datum.series === '${GROUP_DEMAND}'`, dash: [4, 2], otherwise: [1, 0] }),
    loadTargetPercent: options.loadTargetPercent,
    loadDomain: [0, 100],
  });
}

/** A replica group's chart as SVG text. */
export async function groupChartSvg(
  rows: readonly (TimelineRow & { member: string })[],
  options: GroupChartOptions,
): Promise<string> {
  return await renderSvg(groupChartSpec(rows, options));
}
