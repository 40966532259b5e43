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

  it("draws the reference's simple rules as crosses, only the best at the policy's cost labelled", async () => {
    const rule = (name: string, costUsd: number, refused: number) => ({
      name,
      rule: {
        multiplier: 1.5,
        spareConnections: 1000,
        holdHalfLifeMinutes: 30,
        saturationJump: 3,
        scaleDownStabilizationMinutes: 15,
        scaleDownPercent: 100,
      },
      refusedMinutes: refused / 1000,
      refusedConnectionMinutes: refused,
      unitHours: costUsd * 12,
      costUsd,
      clientsDisconnected: 5000,
      scaleOperations: 3,
      minutesAboveTarget: 0,
      minutesThrottled: 0,
    });
    const rules = [rule("r0001", 250, 2_500_000), rule("r0002", 310, 1_800_000)];
    const spec = frontierChartSpec(POINTS, {
      title: "t",
      subtitle: "s",
      rules,
      bestRule: "r0002",
    }) as unknown as {
      data: { values: { name: string; kind: string; label: string; settings: string }[] };
    };
    const ruleData = spec.data.values.filter((v) => v.kind === "simple rule");
    expect(ruleData.map((v) => [v.name, v.label])).toEqual([
      ["r0001", ""],
      ["r0002", "r0002"],
    ]);
    expect(ruleData[0]?.settings).toBe(
      "demand × 1.5 + 1,000, peak held (half-life 30 min), 3× the quota when saturated, scale-in stabilized 15 min",
    );
    const svg = await renderSvg(
      frontierChartSpec(POINTS, { title: "t", subtitle: "s", rules, bestRule: "r0002" }),
    );
    expect(svg).toContain("simple rule");
    expect(svg).toContain("r0002");
  });
});
