import { describe, expect, it } from "vitest";
import type { ScaleEvent } from "../api/index.js";
import { capacityTimeline, unitChanges } from "./capacity-timeline.js";

const NOW = Date.parse("2025-06-02T12:00:00Z");
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const event = (completedAgo: number, from: number, to: number, sentAgo?: number): ScaleEvent => ({
  time: ago(completedAgo),
  ...(sentAgo !== undefined ? { startedAt: ago(sentAgo) } : {}),
  fromSku: "Premium_P1",
  fromUnits: from,
  toSku: "Premium_P1",
  toUnits: to,
});

describe("capacityTimeline", () => {
  it("reads before, during and after two completed changes", () => {
    // 10 → 20 sent 1,500 s ago, observed 1,200 s ago; 20 → 30 sent 800 s ago, observed 600 s ago.
    const at = capacityTimeline(unitChanges([event(1200, 10, 20, 1500), event(600, 20, 30, 800)]), 30);
    expect(at.unitsAt(NOW - 1600_000)).toBe(10);
    expect(at.unitsAt(NOW - 1300_000)).toBe(10); // in flight: the smaller
    expect(at.overlapsChange(NOW - 1300_000)).toBe(true);
    expect(at.unitsAt(NOW - 1100_000)).toBe(20); // after the observed completion: the new size
    expect(at.overlapsChange(NOW - 1100_000)).toBe(false);
    expect(at.unitsAt(NOW - 700_000)).toBe(20);
    expect(at.unitsAt(NOW - 500_000)).toBe(30);
    expect(capacityTimeline([], 7).unitsAt(NOW)).toBe(7);
  });

  it("a bucket that starts before an observed scale-in completes is read at the smaller size", () => {
    // 20 → 10 sent at 12:00:00, applied a few seconds into 12:03, observed at 12:03:10.
    const sent = Date.parse("2025-06-02T12:00:00Z");
    const e: ScaleEvent = {
      time: "2025-06-02T12:03:10Z",
      startedAt: new Date(sent).toISOString(),
      fromSku: "Premium_P1",
      fromUnits: 20,
      toSku: "Premium_P1",
      toUnits: 10,
    };
    const at = capacityTimeline(unitChanges([e]), 10);
    expect(at.unitsAt(Date.parse("2025-06-02T11:59:00Z"))).toBe(20); // all before the request
    expect(at.unitsAt(Date.parse("2025-06-02T12:01:00Z"))).toBe(10); // during
    expect(at.unitsAt(Date.parse("2025-06-02T12:03:00Z"))).toBe(10); // the bucket of the completion
    expect(at.overlapsChange(Date.parse("2025-06-02T12:03:00Z"))).toBe(true);
    expect(at.unitsAt(Date.parse("2025-06-02T12:04:00Z"))).toBe(10);
    expect(at.overlapsChange(Date.parse("2025-06-02T12:04:00Z"))).toBe(false);
  });

  it("the same for a scale-out and a SKU change: the smaller unit count while both may serve", () => {
    const e: ScaleEvent = {
      time: ago(60),
      startedAt: ago(400),
      fromSku: "Premium_P1",
      fromUnits: 100,
      toSku: "Premium_P2",
      toUnits: 200,
    };
    const at = capacityTimeline(unitChanges([e]), 200);
    expect(at.unitsAt(NOW - 420_000)).toBe(100);
    expect(at.unitsAt(NOW - 300_000)).toBe(100);
    expect(at.unitsAt(NOW - 90_000)).toBe(100);
    expect(at.unitsAt(NOW - 60_000)).toBe(200); // starts when the completion was observed
    expect(at.unitsAt(NOW)).toBe(200);
  });

  it("an update in flight: every bucket since it was sent overlaps it", () => {
    const changes = unitChanges([], {
      startedAt: ago(300),
      from: { units: 20 },
      to: { units: 10 },
    });
    const at = capacityTimeline(changes, 20);
    expect(at.unitsAt(NOW - 600_000)).toBe(20);
    expect(at.overlapsChange(NOW - 600_000)).toBe(false);
    expect(at.unitsAt(NOW - 120_000)).toBe(10);
    expect(at.overlapsChange(NOW - 120_000)).toBe(true);
  });

  it("an event stored without startedAt counts as sent when it completed", () => {
    const [c] = unitChanges([event(100, 5, 6)]);
    expect(c?.startedMs).toBe(NOW - 100_000);
    expect(c?.completedMs).toBe(NOW - 100_000);
  });
});
