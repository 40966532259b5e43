import { describe, expect, it } from "vitest";
import type { SkuName } from "../capacity/index.js";
import { demoChartData, demoChartSpec, demoChartSvg, p2Spans } from "./chart.js";
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
