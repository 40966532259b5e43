/**
 * The Vega-Lite spec of a chart over time: panels stacked vertically, each drawing the lines of
 * the data points of its panel (`connections`, `units` or `load`), one line per series, with one
 * color per series shared by every panel and the legend on top. Connections and units use a
 * symmetric-log scale — a flash crowd dwarfs the rest, and changes at a handful of units should
 * stay visible next to it — with round ticks; load is linear, with its target as a dashed rule.
 * Pure.
 */
import type { TopLevelSpec } from "vega-lite";

/** The quantity a panel shows (`refused`: connections refused, on the connections scale). */
export type PanelName = "connections" | "refused" | "units" | "load";

/** One point of a chart's data: the value of a series at a time, in one panel. */
export interface TimePoint<S extends string = string> {
  /** RFC 3339, UTC. */
  time: string;
  series: S;
  panel: PanelName;
  value: number;
}

/** A dash pattern of the lines: `dash` where the Vega expression `test` holds, `otherwise` elsewhere. */
export interface StrokeDash {
  test: string;
  dash: number[];
  otherwise: number[];
}

/** One panel, top to bottom. */
export interface TimePanel {
  name: PanelName;
  /** The y axis title. */
  title: string;
  height: number;
  /** Layers drawn under the lines, each with its own data (shaded spans, labels). */
  background?: readonly object[];
}

/** What {@link timeChartSpec} draws. */
export interface TimeChart<S extends string = string> {
  title: string;
  subtitle: string;
  values: readonly TimePoint<S>[];
  panels: readonly TimePanel[];
  width: number;
  /** Every series, in legend order, and its color. */
  series: readonly S[];
  colorOf: (series: S) => string;
  strokeWidth: number;
  strokeDash: (panel: PanelName) => StrokeDash;
  /** The load panel's target, drawn as a dashed rule. */
  loadTargetPercent: number;
  /** A fixed domain of the load axis (default: fitted to the data). */
  loadDomain?: [number, number];
}

const UNIT_TICKS = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
const CONNECTION_TICKS = [0, 100, 1_000, 10_000, 100_000, 1_000_000];

/** The time axis of a layer: UTC. */
export function utcTime(field: string) {
  return { field, type: "temporal" as const, scale: { type: "utc" as const } };
}

/** The Vega-Lite spec of the chart. */
export function timeChartSpec<S extends string>(chart: TimeChart<S>): TopLevelSpec {
  const color = {
    field: "series",
    type: "nominal" as const,
    title: null,
    scale: { domain: [...chart.series], range: chart.series.map(chart.colorOf) },
  };
  const x = { field: "time", type: "temporal" as const, title: null, scale: { type: "utc" as const } };
  const panel = ({ name, title, height, background = [] }: TimePanel) => {
    const dash = chart.strokeDash(name);
    return {
      width: chart.width,
      height,
      layer: [
        ...background,
        {
          transform: [{ filter: `datum.panel === '${name}'` }],
          mark: { type: "line" as const, interpolate: "step-after" as const, strokeWidth: chart.strokeWidth },
          encoding: {
            x,
            y: {
              field: "value",
              type: "quantitative" as const,
              title,
              ...(name === "load"
                ? chart.loadDomain
                  ? { scale: { domain: chart.loadDomain } }
                  : {}
                : {
                    scale: { type: "symlog" as const },
                    axis: {
                      values: name === "units" ? UNIT_TICKS : CONNECTION_TICKS,
                      labelExpr: "format(datum.value, ',')",
                    },
                  }),
            },
            color,
            strokeDash: { condition: { test: dash.test, value: dash.dash }, value: dash.otherwise },
          },
        },
        ...(name === "load"
          ? [
              {
                data: { values: [{ target: chart.loadTargetPercent }] },
                mark: { type: "rule" as const, strokeDash: [2, 2], color: "#ff7f0e" },
                encoding: { y: { field: "target", type: "quantitative" as const } },
              },
            ]
          : []),
      ],
    };
  };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: chart.title, subtitle: chart.subtitle },
    data: { values: chart.values },
    config: { font: "sans-serif", legend: { orient: "top" } },
    vconcat: chart.panels.map(panel),
    resolve: { scale: { color: "shared" } },
  } as TopLevelSpec;
}
