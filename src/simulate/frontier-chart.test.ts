import { describe, expect, it } from "vitest";
import { renderSvg } from "../chart/index.js";
import { frontierChartSpec, roundTicks, shortSettings } from "./frontier-chart.js";
import type { StrategyMetrics } from "./metrics.js";
import type { SweepPoint } from "./sweep.js";

const point = (
  name: string,
  role: SweepPoint["role"],
  costUsd: number,
  refusedConnectionMinutes: number,
  onFrontier: boolean,
  settings: SweepPoint["settings"] = {},
): SweepPoint => ({
  name,
  role,
  settings,
  costUsd,
  refusedConnectionMinutes,
  clientsDisconnected: refusedConnectionMinutes / 10,
  onFrontier,
  metrics: {} as StrategyMetrics,
});

const POINTS = [
  point("policy", "policy", 313.7, 2_000_000, false, {
    "metrics.*.targetPercent": "70/80/80",
    "units.min": 2,
  }),
  point("v01", "variant", 290.1, 2_100_000, true, { "metrics.*.targetPercent": 90, "units.min": 2 }),
  point("v02", "variant", 800, 400_000, true, { "metrics.*.targetPercent": 50, "units.min": 10 }),
  point("v03", "variant", 800, 400_000, true, { "metrics.*.targetPercent": 60, "units.min": 10 }),
  point("v04", "variant", 900, 500_000, false, { "metrics.*.targetPercent": 70, "units.min": 10 }),
  point("native-p2", "reference", 11_053.9, 3_000, false),
  point("oracle", "reference", 190, 0, false),
];

describe("the frontier chart", () => {
  it("marks the policy, the frontier, the dominated variants and the references, one label per place", () => {
    const spec = frontierChartSpec(POINTS, { title: "t", subtitle: "s" }) as unknown as {
      data: { values: { name: string; kind: string; label: string }[] };
      hconcat: {
        layer: { encoding: { x: { scale: { type: string; domain?: number[] } }; y: { field: string } } }[];
      }[];
    };
    const byName = Object.fromEntries(spec.data.values.map((v) => [v.name, v]));
    expect(Object.values(byName).map((v) => [v.name, v.kind, v.label])).toEqual([
      ["policy", "policy", "policy"],
      ["v01", "frontier", "v01"],
      ["v02", "frontier", "v02, v03"],
      ["v03", "frontier", ""],
      ["v04", "dominated", ""],
      ["native-p2", "native-p2", "native-p2"],
      ["oracle", "oracle", "oracle"],
    ]);
    expect(spec.hconcat[0]?.layer[0]?.encoding.x.scale).toEqual({
      type: "log",
      domain: [100, 20_000],
      nice: false,
    });
    // Two panels on the same cost axis: refusals, then clients disconnected by scaling.
    expect(spec.hconcat.map((p) => p.layer[0]?.encoding.y.field)).toEqual([
      "refusedConnectionMinutes",
      "clientsDisconnected",
    ]);
  });

  it("renders to SVG", async () => {
    const svg = await renderSvg(frontierChartSpec(POINTS, { title: "chat on a trace", subtitle: "s" }));
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("refused connection-minutes");
    expect(svg).toContain("clients disconnected by scaling");
    expect(svg).toContain("v02, v03");
  });

  it("ticks cost on the 1-2-5 series around the data, and shortens settings", () => {
    expect(roundTicks(190, 11_053.9)).toEqual([100, 200, 500, 1000, 2000, 5000, 10_000, 20_000]);
    expect(roundTicks(6.95, 400)).toEqual([5, 10, 20, 50, 100, 200, 500]);
    expect(roundTicks(0.5, 1)).toEqual([0.5, 1]);
    expect(shortSettings({ "metrics.*.targetPercent": 60, "units.min": 5, "anticipation.mode": "Off" })).toBe(
      "60 %, min 5, Off",
    );
  });
});
