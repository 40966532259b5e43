/**
 * The SVG chart of a frontier sweep, two panels side by side on the same cost axis: refused
 * connection-minutes up on the left, clients disconnected by scaling up on the right. One point
 * per policy run and reference strategy in each, cost (USD) across — the Pareto frontier (over all
 * three axes; a staircase through its points on the left) of the policy and its variants as a
 * staircase through its points, the policy under test as a diamond, the reference strategies
 * (native autoscale, static, oracle) as triangles in their colors of the time chart, the variants
 * off the frontier as hollow circles. Labels: the names of the policy (bold, on its left), the
 * references and the frontier points (one label for points at the same place: `v12, v15`); the
 * settings are in the table. Cost is on a logarithmic axis (the references cost from a fraction to a hundred times the
 * policy; symmetric-log when a cost is zero), refusals on a linear one from zero (the references
 * often refuse nothing). The simple rules of the reference (`reference.ts`), when given, are small
 * crosses, the one refusing the least at the policy's unit-hours and disconnections labelled.
 * Drawn with Vega-Lite, rendered by `chart/` like `chart.ts`.
 */
import type { TopLevelSpec } from "vega-lite";
import { SERIES_COLORS } from "./chart.js";
import type { ReferencePoint } from "./reference.js";
import { describeRule } from "./rules.js";
import type { KnobSettings, SweepPoint } from "./sweep.js";

/** The kind of the reference's simple rules (`reference.ts`), drawn as small crosses. */
const RULE_KIND = "simple rule";

/** One datum of the chart. */
interface FrontierDatum {
  name: string;
  /** For its mark and legend: `policy`, `frontier`, `dominated`, or a reference's name. */
  kind: string;
  costUsd: number;
  refusedConnectionMinutes: number;
  clientsDisconnected: number;
  onFrontier: boolean;
  label: string;
  settings: string;
}

/** A variant's settings in a few characters: `50 %, min 5, Off`. */
export function shortSettings(settings: KnobSettings): string {
  return Object.entries(settings)
    .map(([name, value]) =>
      name.endsWith("targetPercent") ? `${value} %` : name === "units.min" ? `min ${value}` : `${value}`,
    )
    .join(", ");
}

/**
 * The 1-2-5 series (…, 1, 2, 5, 10, 20, …) from the last value at or below `min` to the first at
 * or above `max`: the ticks of a logarithmic axis. `min` > 0.
 */
export function roundTicks(min: number, max: number): number[] {
  const series: number[] = [];
  for (let e = Math.floor(Math.log10(min)); 10 ** e <= max; e++) {
    for (const m of [1, 2, 5]) series.push(Number((m * 10 ** e).toPrecision(1)));
  }
  series.push(Number((10 ** Math.ceil(Math.log10(max))).toPrecision(1)));
  const from = series.findLastIndex((t) => t <= min);
  const to = series.findIndex((t) => t >= max);
  return series.slice(Math.max(0, from), to + 1);
}

/** Options of {@link frontierChartSpec}. */
export interface FrontierChartOptions {
  title: string;
  subtitle: string;
  width?: number;
  height?: number;
  /** The reference's kept rules, drawn beside the points. */
  rules?: readonly ReferencePoint[];
  /** The rule to label (the best at the policy's unit-hours and disconnections). */
  bestRule?: string | undefined;
}

const KIND_COLORS: Readonly<Record<string, string>> = {
  policy: SERIES_COLORS["policy"] as string,
  frontier: "#111111",
  dominated: "#9e9e9e",
  [RULE_KIND]: "#17becf",
};

/** The kind of a sweep point, for its mark and legend (see {@link FrontierDatum.kind}). */
function kindOf(p: SweepPoint): string {
  if (p.role === "reference") return p.name;
  if (p.role === "policy") return "policy";
  return p.onFrontier ? "frontier" : "dominated";
}

/** A rule of the reference as a datum (labelled by the caller when it is the one to label). */
function ruleDatum(r: ReferencePoint): FrontierDatum {
  return {
    name: r.name,
    kind: RULE_KIND,
    costUsd: Math.round(r.costUsd * 100) / 100,
    refusedConnectionMinutes: Math.round(r.refusedConnectionMinutes),
    clientsDisconnected: Math.round(r.clientsDisconnected),
    onFrontier: false,
    label: "",
    settings: describeRule(r.rule),
  };
}

/**
 * The chart's data: one datum per point (cost to the cent, refusals whole), one label per place;
 * then the rules, only `bestRule` labelled.
 */
function frontierData(
  sweepPoints: readonly SweepPoint[],
  rules: readonly ReferencePoint[] = [],
  bestRule?: string,
): FrontierDatum[] {
  const values: FrontierDatum[] = sweepPoints.map((p) => ({
    name: p.name,
    kind: kindOf(p),
    costUsd: Math.round(p.costUsd * 100) / 100,
    refusedConnectionMinutes: Math.round(p.refusedConnectionMinutes),
    clientsDisconnected: Math.round(p.clientsDisconnected),
    onFrontier: p.onFrontier,
    label: "",
    settings: shortSettings(p.settings),
  }));
  // One label per place: the names of the labelled points there.
  const labelled = new Map<string, FrontierDatum[]>();
  for (const v of values) {
    if (v.kind === "dominated") continue;
    const at = `${v.costUsd} ${v.refusedConnectionMinutes}`;
    labelled.set(at, [...(labelled.get(at) ?? []), v]);
  }
  for (const group of labelled.values())
    (group[0] as FrontierDatum).label = group.map((v) => v.name).join(", ");
  const ruleData = rules.map(ruleDatum);
  for (const d of ruleData) if (d.name === bestRule) d.label = d.name;
  return [...values, ...ruleData];
}

/** The cost axis: logarithmic on 1-2-5 ticks when every cost is above zero, else symmetric-log. */
function costAxis(values: readonly FrontierDatum[]) {
  const costs = values.map((v) => v.costUsd);
  const logCost = costs.every((c) => c > 0);
  const ticks = logCost ? roundTicks(Math.min(...costs), Math.max(...costs)) : [];
  return {
    field: "costUsd",
    type: "quantitative" as const,
    title: "cost, USD (list-price estimate)",
    scale: logCost
      ? { type: "log" as const, domain: [ticks[0] as number, ticks.at(-1) as number], nice: false }
      : { type: "symlog" as const },
    axis: { ...(logCost ? { values: ticks } : {}), labelExpr: "format(datum.value, ',')" },
  };
}

/** A harm axis: linear from zero, SI-formatted. */
function harmAxis(field: "refusedConnectionMinutes" | "clientsDisconnected", title: string) {
  return {
    field,
    type: "quantitative" as const,
    title,
    scale: { zero: true },
    axis: { labelExpr: "format(datum.value, '~s')" },
  };
}

/** The refusals axis. */
const REFUSALS_AXIS = harmAxis("refusedConnectionMinutes", "refused connection-minutes");
/** The disconnections axis. */
const DISCONNECTED_AXIS = harmAxis("clientsDisconnected", "clients disconnected by scaling");
type HarmAxis = typeof REFUSALS_AXIS | typeof DISCONNECTED_AXIS;

/** A point's shape by kind: the policy a diamond, variants circles, references triangles. */
function shapeOf(k: string): string {
  if (k === RULE_KIND) return "cross";
  return k === "policy" ? "diamond" : k === "frontier" || k === "dominated" ? "circle" : "triangle-up";
}

/** A kind's color: its own, else its series color of the time chart. */
function colorOf(k: string): string {
  return KIND_COLORS[k] ?? SERIES_COLORS[k] ?? "#9467bd";
}

/** A layer of point marks for the data passing `filter`, shaped and colored by kind (legend over `kinds`). */
function pointLayer(
  filter: string,
  filled: boolean,
  x: ReturnType<typeof costAxis>,
  y: HarmAxis,
  kinds: readonly string[],
) {
  const kind = { field: "kind", type: "nominal" as const, title: null };
  return {
    transform: [{ filter }],
    mark: { type: "point" as const, filled, opacity: 1, strokeWidth: 1.5 },
    encoding: {
      x,
      y,
      shape: { ...kind, scale: { domain: kinds, range: kinds.map(shapeOf) } },
      color: { ...kind, scale: { domain: kinds, range: kinds.map(colorOf) } },
      size: {
        condition: [
          { test: "datum.kind === 'policy'", value: 160 },
          { test: `datum.kind === '${RULE_KIND}'`, value: 28 },
        ],
        value: 70,
      },
      tooltip: [
        { field: "name" },
        { field: "settings" },
        { field: "costUsd", format: ",.2f" },
        { field: "refusedConnectionMinutes", format: "," },
        { field: "clientsDisconnected", format: "," },
      ],
    },
  };
}

/**
 * One panel: the points against `y`, labelled; the frontier's staircase when `line` (the refusals
 * panel: the frontier's line is drawn where it was first read).
 */
function panel(x: ReturnType<typeof costAxis>, y: HarmAxis, kinds: readonly string[], line: boolean) {
  return {
    layer: [
      ...(line
        ? [
            {
              transform: [{ filter: "datum.onFrontier" }],
              mark: {
                type: "line",
                interpolate: "step-after",
                color: KIND_COLORS["frontier"],
                strokeWidth: 1.2,
              },
              encoding: { x, y, order: { field: "costUsd", type: "quantitative" } },
            },
          ]
        : []),
      pointLayer("datum.kind !== 'dominated'", true, x, y, kinds),
      pointLayer("datum.kind === 'dominated'", false, x, y, kinds),
      {
        transform: [{ filter: "datum.label !== '' && datum.kind !== 'policy'" }],
        mark: { type: "text", align: "left", dx: 7, dy: -6, fontSize: 10 },
        encoding: { x, y, text: { field: "label" }, color: { value: "#333333" } },
      },
      // The policy's label on the left, clear of the variants next to it.
      {
        transform: [{ filter: "datum.label !== '' && datum.kind === 'policy'" }],
        mark: { type: "text", align: "right", dx: -9, dy: 4, fontSize: 11, fontWeight: "bold" },
        encoding: { x, y, text: { field: "label" }, color: { value: KIND_COLORS["policy"] } },
      },
    ],
  };
}

/** The Vega-Lite spec of the chart: the refusals panel and the disconnections panel. */
export function frontierChartSpec(
  sweepPoints: readonly SweepPoint[],
  options: FrontierChartOptions,
): TopLevelSpec {
  const values = frontierData(sweepPoints, options.rules, options.bestRule);
  const kinds = [
    "policy",
    "frontier",
    "dominated",
    ...sweepPoints.filter((p) => p.role === "reference").map((p) => p.name),
    RULE_KIND,
  ].filter((k) => values.some((v) => v.kind === k));
  const x = costAxis(values);
  const width = Math.round((options.width ?? 1000) / 2);
  const height = options.height ?? 460;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: options.title, subtitle: options.subtitle },
    data: { values },
    config: { font: "sans-serif", legend: { orient: "top" } },
    hconcat: [
      { width, height, ...panel(x, REFUSALS_AXIS, kinds, true) },
      { width, height, ...panel(x, DISCONNECTED_AXIS, kinds, false) },
    ],
  } as TopLevelSpec;
}
