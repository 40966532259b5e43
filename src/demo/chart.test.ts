import { describe, expect, it } from "vitest";
import type { SkuName } from "../capacity/index.js";
import {
  demoChartData,
  demoChartSpec,
  demoChartSvg,
  groupChartData,
  groupChartSpec,
  groupChartSvg,
  p2Spans,
} from "./chart.js";
import type { TimelineRow } from "./timeline.js";

const T0 = Date.UTC(2015, 3, 14, 22, 0);
const rows: TimelineRow[] = (
  [
    ["Premium_P1", 10],
    ["Premium_P1", 80],
    ["Premium_P2", 200],
    ["Premium_P2", 300],
    ["Premium_P1", 50],
  ] as [SkuName, number][]
).map(([sku, units], i) => ({
  time: T0 + i * 60_000,
  demand: units * 900,
  connections: units * 800,
  refused: units * 100,
  quota: units * 1000,
  loadPercent: 80,
  sku,
  units,
  updating: false,
}));

describe("demo chart", () => {
  it("shades the minutes on Premium_P2", () => {
    expect(p2Spans(rows)).toEqual([
      { from: "2015-04-14T22:02:00Z", to: "2015-04-14T22:04:00Z", label: "Premium_P2" },
    ]);
    expect(p2Spans([...rows.slice(0, 3)])).toEqual([
      { from: "2015-04-14T22:02:00Z", to: "2015-04-14T22:03:00Z", label: "Premium_P2" },
    ]);
  });

  it("keeps the maximum of each quantity per bucket", () => {
    const points = demoChartData(rows, 5);
    expect(points.filter((p) => p.series === "units")).toEqual([
      { time: "2015-04-14T22:00:00.000Z", series: "units", panel: "units", value: 300 },
    ]);
    expect(points.find((p) => p.series === "demand")?.value).toBe(270_000);
  });

  it("renders load, connections and units to SVG", async () => {
    const svg = await demoChartSvg(rows, { title: "chat: test", loadTargetPercent: 70 });
    expect(svg.startsWith("<svg")).toBe(true);
    for (const text of [
      "chat: test",
      "units",
      "connections",
      "server load",
      "Premium_P2",
      "connection quota",
    ])
      expect(svg).toContain(text);
    const spec = JSON.stringify(demoChartSpec(rows, { title: "t", loadTargetPercent: 70 }));
    expect(spec).toContain('"type":"symlog"');
  });
});

describe("replica group chart", () => {
  const group = rows.flatMap((r) => [
    { ...r, member: "eastus" },
    { ...r, member: "westus", connections: r.connections / 2, demand: r.demand / 2 },
  ]);

  it("draws each member's connections, refused, units and load, and the group's demand", () => {
    const data = groupChartData(group, ["eastus", "westus"], 1);
    const first = data.filter((d) => d.time === "2015-04-14T22:00:00.000Z");
    expect(first.find((d) => d.series === "demand (group)")?.value).toBe(9000 + 4500);
    expect(first.filter((d) => d.series === "westus").map((d) => [d.panel, d.value])).toEqual([
      ["connections", 4000],
      ["refused", 1000],
      ["units", 10],
      ["load", 80],
    ]);
  });

  it("shades the failover and renders to SVG", async () => {
    const options = {
      title: "group",
      loadTargetPercent: 70,
      members: ["eastus", "westus"],
      failover: { fromMs: T0 + 60_000, toMs: T0 + 3 * 60_000, member: "westus" },
    };
    expect(JSON.stringify(groupChartSpec(group, options))).toContain('"label":"westus down"');
    const svg = await groupChartSvg(group, options);
    for (const text of ["westus down", "refused connections", "eastus", "demand (group)"])
      expect(svg).toContain(text);
  });
});
