import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Recommendation } from "../api/index.js";
import { stabilize } from "./behavior.js";
import {
  compactRecommendations,
  historyFromStatus,
  normalizeHistory,
  pruneScaleEvents,
  recordScale,
} from "./history.js";

const NOW = Date.parse("2025-06-02T12:00:00Z");
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();

describe("compactRecommendations", () => {
  it("drops recommendations not newer than the longest window, keeping the newest", () => {
    const recs: Recommendation[] = [
      { time: ago(700), units: 5, sku: "Premium_P1" },
      { time: ago(600), units: 6, sku: "Premium_P1" },
      { time: ago(10), units: 7, sku: "Premium_P1" },
    ];
    expect(compactRecommendations(recs, NOW, 600).map((r) => r.units)).toEqual([7]);
    expect(compactRecommendations(recs.slice(0, 1), NOW, 0).map((r) => r.units)).toEqual([5]);
  });

  it("stays within the bound", () => {
    const recs = Array.from({ length: 200 }, (_, i) => ({
      time: ago(200 - i),
      units: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30][i % 12] as number,
      sku: "Premium_P1" as const,
    }));
    expect(compactRecommendations(recs, NOW, 3600).length).toBeLessThanOrEqual(60);
  });

  it("never changes a stabilization result at a later time (property)", () => {
    const ladder = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...ladder), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 0, max: 1800 }),
        fc.integer({ min: 0, max: 1800 }),
        fc.integer({ min: 0, max: 600 }),
        fc.constantFrom(...ladder),
        fc.constantFrom(...ladder),
        (units, upW, downW, later, current, fresh) => {
          // One recommendation every 10 s, the newest at NOW.
          const recs: Recommendation[] = units.map((u, i) => ({
            time: ago((units.length - 1 - i) * 10),
            units: u,
            sku: "Premium_P1",
          }));
          const keep = Math.max(upW, downW);
          // With the 60-entry bound and one ladder (19 unit counts) nothing needed is ever dropped.
          const compacted = compactRecommendations(recs, NOW, keep);
          expect(compacted.length).toBeLessThanOrEqual(60);
          const at = NOW + later * 1000;
          const args = {
            current: { sku: "Premium_P1" as const, units: current },
            recommendation: { sku: "Premium_P1" as const, units: fresh },
            nowMs: at,
            scaleUpWindowSeconds: upW,
            scaleDownWindowSeconds: downW,
          };
          const full = stabilize({ ...args, history: recs });
          const small = stabilize({ ...args, history: compacted });
          expect(small.size).toEqual(full.size);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("scale events", () => {
  it("recordScale appends, sets lastScaleTime and keeps at most 30", () => {
    let h = historyFromStatus(undefined);
    for (let i = 0; i < 35; i++) {
      h = recordScale(h, {
        time: ago(100 - i),
        from: { sku: "Premium_P1", units: i + 1 },
        to: { sku: "Premium_P1", units: i + 2 },
      });
    }
    expect(h.scaleEvents).toHaveLength(30);
    expect(h.scaleEvents[29]?.toUnits).toBe(36);
    expect(h.lastScaleTime).toBe(ago(66));
  });

  it("pruneScaleEvents keeps events newer than the horizon", () => {
    const e = (s: number) => ({
      time: ago(s),
      fromSku: "Premium_P1" as const,
      fromUnits: 1,
      toSku: "Premium_P1" as const,
      toUnits: 2,
    });
    expect(pruneScaleEvents([e(900), e(600), e(100)], NOW, 600).map((x) => x.time)).toEqual([ago(100)]);
  });
});

describe("normalizeHistory", () => {
  it("drops unreadable entries, sorts by time and cleans the failure count", () => {
    const h = normalizeHistory({
      recommendations: [
        { time: ago(10), units: 5, sku: "Premium_P1" },
        { time: "garbage", units: 5, sku: "Premium_P1" },
        { time: ago(20), units: 6, sku: "Premium_P1" },
        { time: ago(5), units: 6, sku: "Free_F1" as "Premium_P1" },
      ],
      scaleEvents: [],
      consecutiveFailures: -3.5,
      lastScaleTime: "not a time",
    });
    expect(h.recommendations.map((r) => r.units)).toEqual([6, 5]);
    expect(h.consecutiveFailures).toBe(0);
    expect(h.lastScaleTime).toBeUndefined();
  });

  it("reads times later than now as now: no window is held open by a time to come", () => {
    const later = "2999-01-01T00:00:00Z";
    const h = normalizeHistory(
      {
        recommendations: [{ time: later, units: 100, sku: "Premium_P1" }],
        scaleEvents: [
          {
            time: later,
            startedAt: later,
            fromSku: "Premium_P1",
            fromUnits: 1,
            toSku: "Premium_P1",
            toUnits: 100,
          },
        ],
        consecutiveFailures: 0,
        lastScaleTime: later,
      },
      NOW,
    );
    const nowIso = new Date(NOW).toISOString();
    expect(h.recommendations[0]?.time).toBe(nowIso);
    expect(h.scaleEvents[0]?.time).toBe(nowIso);
    expect(h.scaleEvents[0]?.startedAt).toBe(nowIso);
    expect(h.lastScaleTime).toBe(nowIso);
    // Without now, times are kept as stored.
    expect(normalizeHistory({ ...h, lastScaleTime: later }).lastScaleTime).toBe(later);
  });
});
