import { describe, expect, it } from "vitest";
import type { SkuName } from "../capacity/index.js";
import {
  GROUP_TIMELINE_HEADER,
  groupTimelineCsv,
  groupTotals,
  summarize,
  TIMELINE_HEADER,
  type TimelineRow,
  timelineCsv,
} from "./timeline.js";

const T0 = Date.UTC(2015, 3, 14, 22, 0);
const MIN = 60_000;

/** A row with the given size and demand; accepted up to the quota, load = accepted / quota. */
function row(i: number, sku: SkuName, units: number, demand: number, replicas?: number): TimelineRow {
  const quota = units * 1000;
  const connections = Math.min(demand, quota);
  return {
    time: T0 + i * MIN,
    demand,
    connections,
    refused: demand - connections,
    quota,
    loadPercent: (connections / quota) * 100,
    sku,
    units,
    ...(replicas !== undefined ? { replicas } : {}),
    updating: false,
  };
}

/**
 * Ten minutes by hand: 5 units, a crowd refused at 10 units, the P1 → P2 step to 200, the way
 * back to Premium_P1 × 50, then 20.
 */
const ROWS: TimelineRow[] = [
  row(0, "Premium_P1", 5, 3000, 2),
  row(1, "Premium_P1", 5, 4500, 2), // 90 % load
  row(2, "Premium_P1", 10, 12_000, 3), // 2,000 refused, 100 %
  row(3, "Premium_P1", 80, 60_000, 12), // 75 %
  row(4, "Premium_P2", 200, 150_000, 30), // 75 %
  row(5, "Premium_P2", 200, 90_000, 30),
  row(6, "Premium_P2", 100, 40_000, 8),
  row(7, "Premium_P1", 50, 20_000, 4),
  row(8, "Premium_P1", 50, 10_000, 2),
  row(9, "Premium_P1", 20, 8_000, 2),
];

describe("summarize", () => {
  const s = summarize(ROWS, { loadTargetPercent: 70 });

  it("counts each capacity change as a scale operation, out or in by units", () => {
    expect(s.scaleOperations).toEqual({ total: 6, out: 3, in: 3 });
    expect(
      s.changes.map((c) => `${c.time.slice(11, 16)} ${c.from.units}→${c.to.units} ${c.direction}`),
    ).toEqual([
      "22:02 5→10 out",
      "22:03 10→80 out",
      "22:04 80→200 out",
      "22:06 200→100 in",
      "22:07 100→50 in",
      "22:09 50→20 in",
    ]);
  });

  it("finds the Premium_P1 → Premium_P2 step and the first way back after it", () => {
    expect(s.p1ToP2).toMatchObject({
      time: "2015-04-14T22:04:00Z",
      from: { sku: "Premium_P1", units: 80 },
      to: { sku: "Premium_P2", units: 200 },
    });
    expect(s.p2ToP1).toMatchObject({
      time: "2015-04-14T22:07:00Z",
      from: { sku: "Premium_P2", units: 100 },
      to: { sku: "Premium_P1", units: 50 },
    });
    expect(s.p2Minutes).toBe(3);
  });

  it("sums unit-hours per SKU and in total", () => {
    // P1: 5+5+10+80+50+50+20 = 220 unit-minutes; P2: 200+200+100 = 500.
    expect(s.unitHours).toEqual({ Premium_P1: 3.7, Premium_P2: 8.3 });
    expect(s.totalUnitHours).toBe(12);
    expect(s.peakUnits).toBe(200);
    expect(s.meanUnits).toBe(72);
  });

  it("counts minutes above the load target and minutes refusing connections", () => {
    // Loads: 60, 90, 100, 75, 75, 45, 40, 40, 20, 40.
    expect(s.minutesAboveTarget).toBe(4);
    expect(s.minutesRefused).toBe(1);
    expect(s.refusedConnectionMinutes).toBe(2000);
    expect(s.peakRefused).toBe(2000);
    expect(s.peakDemand).toBe(150_000);
    expect(s.peakConnections).toBe(150_000);
  });

  it("spans the rows and reports the replica range", () => {
    expect(s.start).toBe("2015-04-14T22:00:00Z");
    expect(s.end).toBe("2015-04-14T22:10:00Z");
    expect(s.minutes).toBe(10);
    expect(s.replicas).toEqual({ min: 2, max: 30 });
  });

  it("gives no P2 step when the SKU never changes, and zeros for no rows", () => {
    const flat = summarize([row(0, "Premium_P1", 5, 100), row(1, "Premium_P1", 5, 100)], {
      loadTargetPercent: 70,
    });
    expect(flat.p1ToP2).toBeUndefined();
    expect(flat.p2ToP1).toBeUndefined();
    expect(flat.scaleOperations.total).toBe(0);
    expect(flat.replicas).toBeUndefined();
    const none = summarize([], { loadTargetPercent: 70 });
    expect(none).toMatchObject({ minutes: 0, totalUnitHours: 0, meanUnits: 0, start: "", end: "" });
  });

  it("does not count a return to Premium_P1 before any step up", () => {
    const s2 = summarize([row(0, "Premium_P2", 100, 50_000), row(1, "Premium_P1", 50, 20_000)], {
      loadTargetPercent: 70,
    });
    expect(s2.p1ToP2).toBeUndefined();
    expect(s2.p2ToP1).toBeUndefined();
  });
});

describe("timelineCsv", () => {
  it("writes a header and one line per minute", () => {
    const csv = timelineCsv(ROWS.slice(1, 3));
    const lines = csv.trimEnd().split("\n");
    expect(lines[0]).toBe(TIMELINE_HEADER);
    expect(lines[1]).toBe("2015-04-14T22:01:00Z,4500,4500,0,5000,90.0,Premium_P1,5,2,0");
    expect(lines[2]).toBe("2015-04-14T22:02:00Z,12000,10000,2000,10000,100.0,Premium_P1,10,3,0");
  });

  it("leaves replicas empty when unknown", () => {
    expect(timelineCsv([row(0, "Premium_P1", 1, 10)]).split("\n")[1]).toBe(
      "2015-04-14T22:00:00Z,10,10,0,1000,1.0,Premium_P1,1,,0",
    );
  });
});

describe("a replica group's timeline", () => {
  const member = (name: string, rows: TimelineRow[], serving: (i: number) => boolean) =>
    rows.map((r, i) => ({ ...r, member: name, serving: serving(i) }));
  // westus fails in minutes 2–3: no clients there; eastus takes them, refusing some in minute 2.
  const east = member(
    "eastus",
    [
      row(0, "Premium_P1", 10, 5000),
      row(1, "Premium_P1", 10, 6000),
      row(2, "Premium_P1", 10, 12_000),
      row(3, "Premium_P1", 20, 12_000),
    ],
    () => true,
  );
  const west = member(
    "westus",
    [
      row(0, "Premium_P1", 10, 5000),
      row(1, "Premium_P1", 10, 6000),
      { ...row(2, "Premium_P1", 10, 0), loadPercent: 0 },
      { ...row(3, "Premium_P1", 10, 0), loadPercent: 0 },
    ],
    (i) => i < 2,
  );

  it("writes a row per minute and member, with the serving flag", () => {
    const rows = [0, 1, 2, 3].flatMap((i) => [east[i], west[i]] as typeof east);
    const csv = groupTimelineCsv(rows).trimEnd().split("\n");
    expect(csv[0]).toBe(GROUP_TIMELINE_HEADER);
    expect(csv).toHaveLength(9);
    expect(csv[5]).toBe("2015-04-14T22:02:00Z,eastus,12000,10000,2000,10000,100.0,Premium_P1,10,,0,1");
    expect(csv[6]).toBe("2015-04-14T22:02:00Z,westus,0,0,0,10000,0.0,Premium_P1,10,,0,0");
  });

  it("totals the members: unit-hours and refusals summed, a minute counted once, and within the failover", () => {
    const members = [east, west].map((rows) => ({
      rows,
      summary: summarize(rows, { loadTargetPercent: 70 }),
    }));
    const t = groupTotals(members);
    expect(t.unitHours).toBe(Math.round(((10 + 10 + 10 + 20 + 40) / 60) * 10) / 10);
    expect(t.minutesRefused).toBe(1);
    expect(t.refusedConnectionMinutes).toBe(2000);
    expect(t.peakDemand).toBe(12_000);
    // Minutes above 70 %: eastus in minutes 2 (100 %), westus never above; minute 3 is 60 %.
    expect(t.minutesAboveTarget).toBe(1);
    expect(t.scaleOperations).toEqual({ total: 1, out: 1, in: 0 });
    const during = groupTotals(members, { fromMs: T0 + 3 * MIN, toMs: T0 + 4 * MIN });
    expect(during.minutesRefused).toBe(0);
    expect(during.refusedConnectionMinutes).toBe(0);
  });
});
