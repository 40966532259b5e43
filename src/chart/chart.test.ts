import { describe, expect, it } from "vitest";
import { bucketLabel, bucketMinutes, renderSvg, type TimeChart, timeChartSpec } from "./index.js";

const chart: TimeChart<"demand" | "quota"> = {
  title: "a day",
  subtitle: "per minute",
  values: [
    { time: "2015-04-14T12:00:00.000Z", series: "demand", panel: "connections", value: 900 },
    { time: "2015-04-14T12:00:00.000Z", series: "quota", panel: "connections", value: 1000 },
    { time: "2015-04-14T12:00:00.000Z", series: "quota", panel: "units", value: 1 },
    { time: "2015-04-14T12:00:00.000Z", series: "quota", panel: "load", value: 64.5 },
    { time: "2015-04-14T12:01:00.000Z", series: "demand", panel: "connections", value: 2500 },
    { time: "2015-04-14T12:01:00.000Z", series: "quota", panel: "connections", value: 3000 },
    { time: "2015-04-14T12:01:00.000Z", series: "quota", panel: "units", value: 3 },
    { time: "2015-04-14T12:01:00.000Z", series: "quota", panel: "load", value: 81 },
  ],
  panels: [
    { name: "connections", title: "connections", height: 100 },
    { name: "units", title: "units", height: 80 },
    { name: "load", title: "load %", height: 80 },
  ],
  width: 400,
  series: ["demand", "quota"],
  colorOf: (s) => (s === "demand" ? "#222222" : "#1f77b4"),
  strokeWidth: 1,
  strokeDash: () => ({ test: "datum.series === 'quota'", dash: [4, 2], otherwise: [1, 0] }),
  loadTargetPercent: 70,
};

describe("buckets", () => {
  it("picks the smallest bucket that keeps a run within the points", () => {
    expect(bucketMinutes(180)).toBe(1);
    expect(bucketMinutes(2 * 1440)).toBe(5);
    expect(bucketMinutes(1440, 1500)).toBe(1);
    expect(bucketMinutes(365 * 1440)).toBe(720);
    expect(bucketMinutes(10_000 * 1440)).toBe(10 * 1440);
  });

  it("says what a point stands for", () => {
    expect(bucketLabel(1)).toBe("per minute");
    expect(bucketLabel(15)).toBe("max per 15 min");
    expect(bucketLabel(120)).toBe("max per 2 h");
  });
});

describe("time chart", () => {
  it("stacks the panels: sizes on a symmetric-log scale, load linear with its target", () => {
    const spec = timeChartSpec(chart) as unknown as { vconcat: { layer: Record<string, unknown>[] }[] };
    expect(spec.vconcat).toHaveLength(3);
    const [connections, units, load] = spec.vconcat.map((p) => JSON.stringify(p));
    expect(connections).toContain('"type":"symlog"');
    expect(connections).toContain("100000");
    expect(units).toContain('"type":"symlog"');
    expect(load).not.toContain("symlog");
    expect(spec.vconcat[2]?.layer.at(-1)).toMatchObject({ data: { values: [{ target: 70 }] } });
    expect(JSON.stringify(timeChartSpec({ ...chart, loadDomain: [0, 100] }))).toContain('"domain":[0,100]');
  });

  it("draws background layers under the lines", () => {
    const shade = { data: { values: [] }, mark: "rect" };
    const spec = timeChartSpec({
      ...chart,
      panels: [{ name: "units", title: "units", height: 80, background: [shade] }],
    }) as unknown as { vconcat: { layer: unknown[] }[] };
    expect(spec.vconcat[0]?.layer[0]).toEqual(shade);
  });

  it("renders to SVG headless", async () => {
    const svg = await renderSvg(timeChartSpec(chart));
    expect(svg.startsWith("<svg")).toBe(true);
    for (const text of ["a day", "per minute", "connections", "units", "load %", "demand", "quota"])
      expect(svg).toContain(text);
  });
});
