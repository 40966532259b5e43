import { describe, expect, it } from "vitest";
import type { AnticipationSpec, AnticipationStatus, CapacityPolicySpec } from "../api/index.js";
import { type AnticipationInput, anticipate } from "./anticipation.js";
import { decide } from "./decide.js";
import type { DemandHistory } from "./demand-history.js";
import { seasonalForecast } from "./forecast.js";
import { leadingSignal } from "./leading.js";
import { censorByQuota, demandSeries } from "./signals/common.js";
import type { DemandPoint, DemandSeries } from "./signals.js";
import { input, NOW, samples, spec } from "./testing.js";
import { theilSen } from "./trend.js";

const MIN = 60_000;
/** The window's newest bucket starts 4 minutes before NOW (ingestion delay 3 min). */
const NEWEST = NOW - 4 * MIN;

const enabled = (extra: Partial<AnticipationSpec> = {}): AnticipationSpec => ({
  mode: "Enabled",
  scaleDuration: "4m",
  headroom: { peakPercent: 0, horizon: "1h" },
  ...extra,
});

/** A demand series of `units` per bucket, the last one starting at NEWEST. */
function series(signal: DemandSeries["signal"], units: number[], saturated = false): DemandSeries {
  return {
    signal,
    saturated,
    points: units.map((u, i) => ({
      start: NEWEST - (units.length - 1 - i) * MIN,
      units: u,
      saturated: saturated && u >= Math.max(...units),
    })),
  };
}

/** A stored status.anticipation with `extra`. */
function stored(extra: Partial<AnticipationStatus>): AnticipationStatus {
  return {
    mode: "Enabled",
    leadTimeSeconds: 450,
    scaleDurationSeconds: 240,
    scaleDurationSource: "Default",
    applied: false,
    message: "",
    ...extra,
  };
}

/** A connections-only (80 %) spec with `anticipation`. */
function connectionsOnly(anticipation: AnticipationSpec): CapacityPolicySpec {
  const s = spec({ metrics: { connections: { targetPercent: 80 } }, anticipation });
  delete s.metrics.serverLoad;
  return s;
}

/** Poll every 30 s, scale 4 min: capacity decided now is sized for NOW + 4.5 min, 8 min past the newest bucket's middle. */
function base(extra: Partial<AnticipationInput> = {}): AnticipationInput {
  return {
    spec: enabled(),
    nowMs: NOW,
    pollSeconds: 30,
    tolerance: 0.1,
    ingestionDelaySeconds: 180,
    windowSeconds: 300,
    windowToMs: NEWEST + MIN,
    demand: [],
    scaleEvents: [],
    connectionsPerUnit: 800,
    ...extra,
  };
}

describe("trend (Theil–Sen)", () => {
  it("a linear ramp: slope, tau 1, the line through the points", () => {
    const t = theilSen([0, 1, 2, 3, 4].map((i) => ({ timeMs: i * MIN, value: 10 + 2 * i })));
    expect(t?.perMinute).toBe(2);
    expect(t?.lowerPerMinute).toBe(2);
    expect(t?.tau).toBe(1);
    expect(t?.at(10 * MIN)).toBe(30);
  });

  it("one noisy bucket in five moves neither the slope nor the line", () => {
    const t = theilSen([10, 11, 30, 13, 14].map((v, i) => ({ timeMs: i * MIN, value: v })));
    expect(t?.perMinute).toBe(1);
    expect(t?.lowerPerMinute).toBe(1);
    expect(t?.tau).toBeCloseTo(0.6, 10);
    expect(t?.at(4 * MIN)).toBe(14);
  });
});

describe("anticipate", () => {
  it("Off or no spec: nothing", () => {
    expect(anticipate(base({ spec: undefined }))).toBeUndefined();
    expect(anticipate(base({ spec: enabled({ mode: "Off" }) }))).toBeUndefined();
  });

  it("projects a linear ramp over the lead time: 14 units rising 1/min → 22 units 8 min later", () => {
    const a = anticipate(base({ demand: [series("connections", [10, 11, 12, 13, 14])] }));
    expect(a?.leadTimeSeconds).toBe(180 + 240 + 30);
    expect(a?.scaleDurationSource).toBe("Default");
    expect(a?.asks[0]?.rule).toBe("Trend");
    expect(a?.asks[0]?.units).toBeCloseTo(22, 10);
    expect(a?.status.units).toBe(22);
    expect(a?.status.drivenBy).toBe("Trend");
    // The growth is kept for censored demand: 1 unit/min at 14 units.
    expect(a?.status.growth).toEqual({
      time: new Date(NEWEST + 30_000).toISOString(),
      units: 14,
      perMinute: 1,
    });
  });

  it("the same ramp with one noisy bucket projects the same: 22 units", () => {
    const a = anticipate(base({ demand: [series("connections", [10, 11, 4, 13, 14])] }));
    expect(a?.asks[0]?.rule).toBe("Trend");
    expect(a?.asks[0]?.units).toBeCloseTo(22, 10);
  });

  it("noise around a flat level asks for nothing", () => {
    const a = anticipate(base({ demand: [series("serverLoad", [20, 21, 19, 20.5, 19.5])] }));
    expect(a?.asks).toEqual([]);
    expect(a?.status.units).toBeUndefined();
    expect(a?.status.message).toMatch(/nothing expected/);
  });

  it("a rise of a signal's own need within twice the tolerance band across the window is not a trend", () => {
    // Server load (a noisy measurement): 100 → 104 over 4 minutes, tau 1 but only 4 % (tolerance 10 %).
    const a = anticipate(base({ demand: [series("serverLoad", [100, 101, 102, 103, 104])] }));
    expect(a?.asks).toEqual([]);
    // 100 → 118: less than twice the band of the peak (2 × 10 % × 118), and five noisy buckets do
    // rise by chance.
    const b = anticipate(base({ demand: [series("serverLoad", [100, 104.5, 109, 113.5, 118])] }));
    expect(b?.asks).toEqual([]);
    // 100 → 130: more than 2 × 10 % × 130 = 26, a trend.
    const c = anticipate(base({ demand: [series("serverLoad", [100, 107.5, 115, 122.5, 130])] }));
    expect(c?.asks[0]?.rule).toBe("Trend");
  });

  it("the clients' growth: a steady rise of the connection count that leaves the band by the target time raises every need", () => {
    // A morning ramp: 10 → 10.8 connection-units over 4 minutes (0.2/min, 2 % a minute), 8 %
    // across the window — short of two 10 % bands — but 0.2 × 8 = 1.6 units by the target, 8
    // minutes past the newest bucket's middle: more than the band (10 % × 10.8). Server load
    // needs 11.34 units now; with the clients, × (10.8 + 1.6) ÷ 10.8 = 12.98 units.
    const connections = series("connections", [10, 10.2, 10.4, 10.6, 10.8]);
    const load = series("serverLoad", [10.5, 10.71, 10.92, 11.13, 11.34]);
    const a = anticipate(base({ demand: [load, connections] }));
    expect(a?.asks).toHaveLength(1);
    expect(a?.asks[0]?.rule).toBe("Trend");
    expect(a?.asks[0]?.units).toBeCloseTo(11.34 * (12.4 / 10.8), 6);
    expect(a?.asks[0]?.message).toMatch(
      /^connections rising at least 160\/min over 5 buckets \(tau 1\): × 1\.15 by \d\d:\d\d UTC, the serverLoad need of 11\.34 units with them: 13\.02 units$/,
    );
    // Slower, it stays within the band by then (0.1/min × 8 = 0.8 < 1.04): nothing.
    const slow = series("connections", [10, 10.1, 10.2, 10.3, 10.4]);
    expect(anticipate(base({ demand: [load, slow] }))?.asks).toEqual([]);
    // Noise around a flat count, or a rise its scatter explains, is no growth.
    const flat = series("connections", [10.4, 10.1, 10.6, 10.2, 10.5]);
    expect(anticipate(base({ demand: [load, flat] }))?.asks).toEqual([]);
    // A full quota is left to CensoredDemand.
    const full = series("connections", [10, 10.2, 10.4, 10.6, 10.8], true);
    expect(anticipate(base({ demand: [load, full] }))?.asks.map((x) => x.rule)).not.toContain("Trend");
  });

  it("censored demand: a full quota extends the growth measured before it", () => {
    const growth = { time: new Date(NEWEST - 3 * MIN + 30_000).toISOString(), units: 16, perMinute: 2 };
    const previous = stored({ growth });
    const a = anticipate(base({ previous, demand: [series("connections", [18, 20, 20, 20, 20], true)] }));
    // 16 units + 2/min × 11 min (growth time → NOW + 4.5 min) = 38 units, in one step.
    const ask = a?.asks.find((x) => x.rule === "CensoredDemand");
    expect(ask?.units).toBeCloseTo(38, 10);
    expect(a?.status.growth).toEqual(growth);
  });

  it("censored demand: the climb into the ceiling is a lower bound of the growth", () => {
    // 16 → 20 (full) in a minute: at least 4 units/min, from the first full bucket's middle
    // (NEWEST − 1.5 min) to NOW + 4.5 min = 10 min → 20 + 40 = 60 units.
    const a = anticipate(base({ demand: [series("connections", [10, 16, 20, 20, 20], true)] }));
    const ask = a?.asks.find((x) => x.rule === "CensoredDemand");
    expect(ask?.units).toBeCloseTo(60, 10);
    // 12 → 20: 8 units/min would give 100, but one pass goes at most to 4 × the ceiling.
    const steep = anticipate(base({ demand: [series("connections", [10, 12, 20, 20, 20], true)] }));
    expect(steep?.asks.find((x) => x.rule === "CensoredDemand")?.units).toBe(80);
    expect(a?.status.growth).toEqual({
      time: new Date(NEWEST - 2 * MIN + 30_000).toISOString(),
      units: 20,
      perMinute: 4,
    });
  });

  it("censored demand without a measured growth (or an old one) asks for nothing of its own", () => {
    const old = { time: new Date(NOW - 45 * MIN).toISOString(), units: 16, perMinute: 2 };
    const previous = stored({ growth: old });
    const a = anticipate(base({ previous, demand: [series("connections", [20, 20, 20, 20, 20], true)] }));
    expect(a?.asks.find((x) => x.rule === "CensoredDemand")).toBeUndefined();
    expect(a?.status.growth).toBeUndefined();
  });

  it("headroom: 50 % of a 40-unit peak 30 min ago, decaying over 1 h → 10 units", () => {
    const previous = stored({ peaks: [{ time: new Date(NOW - 30 * MIN).toISOString(), units: 40 }] });
    const a = anticipate(
      base({
        spec: enabled({ headroom: { peakPercent: 50, horizon: "1h" } }),
        previous,
        demand: [series("connections", [4, 4, 4, 4, 4])],
      }),
    );
    const ask = a?.asks.find((x) => x.rule === "Headroom");
    expect(ask?.units).toBeCloseTo(10, 10);
    // Gone after the horizon.
    const later = anticipate(
      base({
        spec: enabled({ headroom: { peakPercent: 50, horizon: "1h" } }),
        previous,
        nowMs: NOW + 31 * MIN,
        demand: [],
      }),
    );
    expect(later?.asks).toEqual([]);
    expect(later?.status.peaks).toBeUndefined();
  });

  it("headroom on a steady instance keeps nothing above its need", () => {
    const d = decide(
      input({
        spec: connectionsOnly(enabled({ headroom: { peakPercent: 100, horizon: "2h" } })),
        samples: samples({ connections: 8000 }),
      }),
    );
    expect(d.desired?.units).toBe(10);
    expect(d.action).toBe("None");
    expect(d.anticipation?.applied).toBe(false);
  });

  it("the scale duration is the median of the recent completed updates", () => {
    const event = (sentMinAgo: number, tookSeconds: number) => ({
      time: new Date(NOW - sentMinAgo * MIN + tookSeconds * 1000).toISOString(),
      startedAt: new Date(NOW - sentMinAgo * MIN).toISOString(),
      fromSku: "Premium_P1" as const,
      fromUnits: 10,
      toSku: "Premium_P1" as const,
      toUnits: 20,
    });
    const a = anticipate(base({ scaleEvents: [event(60, 120), event(40, 600), event(20, 180)] }));
    expect(a?.scaleDurationSeconds).toBe(180);
    expect(a?.scaleDurationSource).toBe("Measured");
    expect(a?.leadTimeSeconds).toBe(180 + 180 + 30);
    // Kept once the events are pruned from the history.
    const b = anticipate(base({ previous: a?.status }));
    expect(b?.scaleDurationSeconds).toBe(180);
  });

  it("a scale duration read back from status is at most 2 h, and one that is no duration is ignored", () => {
    const huge = anticipate(
      base({ previous: stored({ scaleDurationSeconds: 1e9, scaleDurationSource: "Measured" }) }),
    );
    expect(huge?.scaleDurationSeconds).toBe(7_200);
    for (const bad of [Number.NaN, -60, 0]) {
      const a = anticipate(
        base({ previous: stored({ scaleDurationSeconds: bad, scaleDurationSource: "Measured" }) }),
      );
      expect(a?.scaleDurationSeconds).toBe(240);
      expect(a?.scaleDurationSource).toBe("Default");
    }
    // Events whose send time is long before their completion: measured up to 2 h too.
    const long = {
      time: new Date(NOW - MIN).toISOString(),
      startedAt: "2000-01-01T00:00:00Z",
      fromSku: "Premium_P1" as const,
      fromUnits: 10,
      toSku: "Premium_P1" as const,
      toUnits: 20,
    };
    expect(anticipate(base({ scaleEvents: [long] }))?.scaleDurationSeconds).toBe(7_200);
  });
});

/** `days` of 5-minute history ending at NOW: `level(t)` connections. */
function history(days: number, level: (t: number) => number): DemandHistory {
  const points = [];
  const grain = 5 * MIN;
  const end = Math.floor(NOW / grain) * grain;
  for (let t = end - days * 86_400_000; t < end; t += grain) {
    points.push({ timeMs: t, connections: level(t), bytesPerSecond: null });
  }
  return { grainSeconds: 300, readAtMs: NOW, points };
}

describe("seasonal forecast", () => {
  // NOW is Monday 12:00 UTC. Every Monday from 12:00 to 13:00 demand triples; other days it
  // does not.
  const weekly = (t: number) => {
    const d = new Date(t);
    return d.getUTCDay() === 1 && d.getUTCHours() === 12 ? 3000 : 1000;
  };
  const window = { refMs: NOW - 3 * MIN, horizonMs: 12 * MIN, levelMs: 5 * MIN };

  it("a weekly cycle, forecast one lead time ahead: ×3 from the same Mondays", () => {
    const f = seasonalForecast(history(28, weekly), window);
    expect(f.state).toBe("Ok");
    expect(f.cycle).toBe("Weekly");
    expect(f.cycles).toBe(3);
    expect(f.ratio).toBe(3);
    expect(f.upperRatio).toBe(3);
  });

  // The last Monday rose × 3.6, the two before × 3.
  const spread = (t: number) => (weekly(t) === 3000 && NOW - t < 8 * 86_400_000 ? 3600 : weekly(t));

  it("gives the past cycles' upper quartile beside their median: × 3.6 over × 3", () => {
    const f = seasonalForecast(history(28, spread), window);
    expect(f.ratio).toBe(3);
    expect(f.upperRatio).toBeCloseTo(3.6, 10);
  });

  // A size decided at NOW (12:00, newest bucket read 11:57) lands at 12:04:30 (4 min scale, 30 s
  // poll) and is all there is until a scale sent when it lands completes, at 12:08:30.
  it("reads past cycles over all the span a size serves: until the next scale could complete", () => {
    const stepAt = (minute: number) => (t: number) => {
      const d = new Date(t);
      return d.getUTCHours() === 12 && d.getUTCMinutes() >= minute ? 3000 : 1000;
    };
    const seasonalAsk = (minute: number) =>
      anticipate(
        base({
          spec: enabled({ seasonal: { historyDays: 14, grain: "5m" } }),
          demand: [series("connections", [10, 10, 10, 10, 10])],
          demandHistory: history(14, stepAt(minute)),
        }),
      )?.asks.find((a) => a.rule === "Seasonal");
    // The 12:05 bucket is past the landing, within the span it serves: × 3, 30 units.
    expect(seasonalAsk(5)?.units).toBe(30);
    expect(seasonalAsk(5)?.message).toMatch(/×3\.00 over the next 12 min/);
    // The 12:10 bucket is the next scale's to serve: nothing asked now.
    expect(seasonalAsk(10)).toBeUndefined();
  });

  it("scales out before the rise when Enabled, shows it only when ForecastOnly", () => {
    const s = (mode: "Enabled" | "ForecastOnly") =>
      connectionsOnly(enabled({ mode, seasonal: { historyDays: 28, grain: "5m" } }));
    const at = (mode: "Enabled" | "ForecastOnly") =>
      decide(
        input({
          spec: s(mode),
          samples: samples({ connections: 8000 }),
          demandHistory: history(28, weekly),
        }),
      );
    const on = at("Enabled");
    expect(on.anticipation?.drivenBy).toBe("Seasonal");
    expect(on.anticipation?.forecast?.ratio).toBe(3);
    expect(on.desired?.units).toBe(30);
    expect(on.action).toBe("Scale");
    expect(on.reasons.map((r) => r.code)).toContain("Anticipated");
    expect(on.conditions.find((c) => c.type === "Anticipating")?.status).toBe("True");
    const shown = at("ForecastOnly");
    expect(shown.anticipation?.units).toBe(30);
    expect(shown.anticipation?.applied).toBe(false);
    expect(shown.desired?.units).toBe(10);
    expect(shown.action).toBe("None");
  });

  describe("a forecast between two rungs", () => {
    // Connections at 80 % of 1,000 a unit; P1's ladder 1…10, 20…100; P2's 100…1,000.
    const s = {
      ...connectionsOnly(
        enabled({
          seasonal: { historyDays: 28, grain: "5m" },
          headroom: { peakPercent: 100, horizon: "2h" },
        }),
      ),
      units: { min: 1, max: 1000 },
      skus: ["Premium_P1", "Premium_P2"] as CapacityPolicySpec["skus"],
    };
    // Every Monday 12:00–13:00 demand is 6 % above the rest of the week.
    const mild = (t: number) => {
      const d = new Date(t);
      return d.getUTCDay() === 1 && d.getUTCHours() === 12 ? 1060 : 1000;
    };
    const at = (
      connections: number,
      units: number,
      level: (t: number) => number = weekly,
      peakUnits?: number,
    ) =>
      decide(
        input({
          spec: s,
          current: { sku: "Premium_P1", units },
          samples: samples({ connections }),
          demandHistory: history(28, level),
          ...(peakUnits !== undefined
            ? {
                history: {
                  recommendations: [],
                  scaleEvents: [],
                  consecutiveFailures: 0,
                  anticipation: stored({
                    peaks: [{ time: new Date(NOW - MIN).toISOString(), units: peakUnits }],
                  }),
                },
              }
            : {}),
        }),
      );

    it("a forecast within the scale-up tolerance of the rung below takes it; a measured need the rung at or above it", () => {
      // 29,300 × 3 = 87,900 connections: 110 units, within 10 % of 100: P1 100.
      const near = at(29_300, 40);
      expect(near.anticipation?.drivenBy).toBe("Seasonal");
      expect(near.desired).toEqual({ sku: "Premium_P1", units: 100 });
      expect(near.reasons.find((r) => r.code === "LadderSnapped")?.message).toBe(
        "anticipated need of 110 units → Premium_P1 100 (a forecast within the scale-up tolerance, 10 %, of it: Premium_P2 200 is 82 % above it)",
      );
      // 29,600 × 3 = 88,800: 111 units, 11 % above 100: P2 200.
      expect(at(29_600, 40).desired).toEqual({ sku: "Premium_P2", units: 200 });
      // The same 87,900 measured (no forecast above it): 110 units, rounded up to P2 200.
      const measured = decide(
        input({
          spec: { ...s, anticipation: enabled({ mode: "Off" }) },
          current: { sku: "Premium_P1", units: 90 },
          samples: samples({ connections: 87_900 }),
        }),
      );
      expect(measured.desired).toEqual({ sku: "Premium_P2", units: 200 });
    });

    it("takes the rung below only within the tolerance: 11 units → 10, 12 → 20", () => {
      // 2,900 × 3 = 8,700 connections: 11 units (10.9); 3,000 × 3: 12 units (11.25). Measured: 4.
      expect(at(2_900, 5).desired).toEqual({ sku: "Premium_P1", units: 10 });
      expect(at(3_000, 5).desired).toEqual({ sku: "Premium_P1", units: 20 });
    });

    it("takes the rung below only when the forecast's upper quartile fits it too: 10.9 units (13.1 one week in four) → 20", () => {
      // The median × 3 gives 10.9 units as above; the last Monday's × 3.6 gives 13.1, 31 % above 10.
      const d = at(2_900, 5, spread);
      expect(d.anticipation?.units).toBe(11);
      expect(d.desired).toEqual({ sku: "Premium_P1", units: 20 });
      expect(d.reasons.find((r) => r.code === "LadderSnapped")?.message).toBe(
        "need of 11 units → Premium_P1 20 (the next unit count of the ladder)",
      );
    });

    it("never below the measured need's rung: measured 105, forecast 112 → Premium_P2 200", () => {
      // 84,000 connections on 90 units: 105 units measured; × 1.06 = 89,040: 112 units, nearer to 100.
      const d = at(84_000, 90, mild);
      expect(d.anticipation?.drivenBy).toBe("Seasonal");
      expect(d.anticipation?.units).toBe(112);
      expect(d.desired).toEqual({ sku: "Premium_P2", units: 200 });
    });

    it("never below another rule's floor: Headroom 105 beside a forecast of 110 → Premium_P2 200", () => {
      const forecastOnly = at(29_300, 40);
      expect(forecastOnly.desired).toEqual({ sku: "Premium_P1", units: 100 });
      // A peak of 106 units a minute ago, kept at 100 % decaying over 2 h: 105.1 units.
      const withFloor = at(29_300, 40, weekly, 106);
      expect(withFloor.anticipation?.drivenBy).toBe("Seasonal");
      expect(withFloor.anticipation?.rules?.map((r) => r.rule)).toContain("Headroom");
      expect(withFloor.desired).toEqual({ sku: "Premium_P2", units: 200 });
    });

    it("holds the current size when the forecast is within its tolerance, and says so", () => {
      // 110 units at 100: within the scale-up tolerance, the current size is the rung taken.
      const d = at(29_300, 100);
      expect(d.desired).toEqual({ sku: "Premium_P1", units: 100 });
      expect(d.action).toBe("None");
      expect(d.anticipation?.applied).toBe(true);
      expect(d.reasons.find((r) => r.code === "Anticipated")?.message).toMatch(
        /^Seasonal asks for 110 units/,
      );
      expect(d.reasons.find((r) => r.code === "LadderSnapped")?.message).toMatch(
        /^anticipated need of 110 units → Premium_P1 100 \(a forecast within the scale-up tolerance/,
      );
    });

    it("scales out from the current size when the forecast's upper quartile leaves its tolerance", () => {
      // 110 units at 100 by the median; 132 by the last Monday's × 3.6: Premium_P2 200.
      const d = at(29_300, 100, spread);
      expect(d.anticipation?.units).toBe(110);
      expect(d.desired).toEqual({ sku: "Premium_P2", units: 200 });
      expect(d.action).toBe("Scale");
    });

    it("is not applied when the rate policies bring both to the same size", () => {
      // 4,600 connections on 5 units: 6 units measured; × 3 = 13,800: 18 units → 20. One rung a
      // 5-minute scale (Steps 1 per 300 s) allows 6 either way; two rungs allow 7 only with the
      // forecast.
      const rated = (steps: number) =>
        decide(
          input({
            spec: {
              ...s,
              behavior: {
                ...s.behavior,
                scaleUp: {
                  ...s.behavior.scaleUp,
                  policies: [{ type: "Steps", value: steps, periodSeconds: 300 }],
                },
              },
            },
            current: { sku: "Premium_P1", units: 5 },
            samples: samples({ connections: 4_600 }),
            demandHistory: history(28, weekly),
          }),
        );
      const one = rated(1);
      expect(one.anticipation?.units).toBe(18);
      expect(one.desired).toEqual({ sku: "Premium_P1", units: 6 });
      expect(one.anticipation?.applied).toBe(false);
      const two = rated(2);
      expect(two.desired).toEqual({ sku: "Premium_P1", units: 7 });
      expect(two.anticipation?.applied).toBe(true);
    });

    it("is not applied when it lands on the rung the measured need takes", () => {
      // 9,600 connections: 12 units (rung 20); × 1.06: 13 units, nearer to 10 but the floor is 12.
      const d = at(9_600, 10, mild);
      expect(d.anticipation?.units).toBe(13);
      expect(d.desired).toEqual({ sku: "Premium_P1", units: 20 });
      expect(d.anticipation?.applied).toBe(false);
      expect(d.reasons.find((r) => r.code === "ScaleOut")?.message).not.toMatch(/anticipated/);
    });
  });

  it("too little history: reactive only, and the condition says so", () => {
    const f = seasonalForecast(history(3, weekly), window);
    expect(f.state).toBe("InsufficientHistory");
    expect(f.message).toBe("3.0 days of history, 7 needed: reactive only");
    const d = decide(
      input({
        spec: spec({ anticipation: enabled({ seasonal: { historyDays: 14, grain: "5m" } }) }),
        samples: samples({ serverLoadPercent: 70 }),
        demandHistory: history(3, weekly),
      }),
    );
    expect(d.desired?.units).toBe(10);
    const c = d.conditions.find((x) => x.type === "Anticipating");
    expect(c?.status).toBe("True");
    expect(c?.reason).toBe("InsufficientHistory");
    expect(c?.message).toMatch(/3\.0 days of history, 7 needed/);
  });

  it("historyDays 7 is enough: a week read an hour ago (its newest buckets not in yet)", () => {
    const week = history(7, weekly);
    const hourAgo = { ...week, points: week.points.filter((p) => p.timeMs < NOW - 3_600_000) };
    const f = seasonalForecast(hourAgo, window);
    expect(f.state).toBe("Ok");
    expect(f.cycle).toBe("Daily");
    expect(f.cycles).toBe(6);
  });

  it("a history that could not be read is Unavailable, never a scale", () => {
    const f = seasonalForecast({ grainSeconds: 300, readAtMs: NOW, points: [], error: "Throttled" }, window);
    expect(f).toEqual({ state: "Unavailable", message: "history could not be read: Throttled" });
  });
});

/** `c`: censored (a lower bound, not saturated: the old ceiling during a change); `s`: saturated. */
type Mark = "" | "c" | "s";

/** A series of `[units, mark]` per bucket, the last one starting at NEWEST. */
function marked(signal: DemandSeries["signal"], pts: readonly (readonly [number, Mark])[]): DemandSeries {
  const points: DemandPoint[] = pts.map(([units, mark], i) => ({
    start: NEWEST - (pts.length - 1 - i) * MIN,
    units,
    saturated: mark === "s",
    censored: mark !== "",
  }));
  return { signal, points, saturated: points.at(-1)?.saturated ?? false };
}

describe("growth our capacity uncovered is not demand growth", () => {
  it("CensoredDemand: a full quota after a scale-out from a full quota asks for nothing of its own", () => {
    // A fixed 40,000 clients (50 units at 80 %) on 10 units, then 20: the quota was full at
    // 10,000 (12.5 units), the buckets of the change stayed at the old ceiling, the new quota is
    // full at 20,000 (25 units). The climb 12.5 → 25 is the quota rising, not the need.
    const connections = marked("connections", [
      [12.5, "s"],
      [12.5, "c"],
      [12.5, "c"],
      [12.5, "c"],
      [25, "s"],
    ]);
    const a = anticipate(base({ demand: [connections] }));
    expect(a?.asks.find((x) => x.rule === "CensoredDemand")).toBeUndefined();
    expect(a?.status.growth).toBeUndefined();
    // The same buckets read as measured (the rule before): 12.5 units/min from the last bucket of
    // the change, extended 10 min to 4 × the ceiling.
    const uncensored = marked("connections", [
      [12.5, "s"],
      [12.5, ""],
      [12.5, ""],
      [12.5, ""],
      [25, "s"],
    ]);
    expect(
      anticipate(base({ demand: [uncensored] }))?.asks.find((x) => x.rule === "CensoredDemand")?.units,
    ).toBe(100);
  });

  it("CensoredDemand: the climb is measured from the last bucket that measures the demand", () => {
    // 10 units measured, then the quota full at 12.5, the change's buckets at the old ceiling, the
    // new quota full at 25: at least 2.5 units/min (10 → 12.5 in a minute), from the first
    // censored bucket's middle (NEWEST − 2.5 min) to NOW + 4.5 min = 11 min: 12.5 + 27.5 = 40.
    const connections = marked("connections", [
      [10, ""],
      [12.5, "s"],
      [12.5, "c"],
      [12.5, "c"],
      [25, "s"],
    ]);
    const ask = anticipate(base({ demand: [connections] }))?.asks.find((x) => x.rule === "CensoredDemand");
    expect(ask?.units).toBeCloseTo(40, 10);
    expect(ask?.message).toMatch(/the need grew 2\.5 units\/min/);
  });

  it("CensoredDemand keeps the stored growth while the newest bucket is censored", () => {
    const growth = { time: new Date(NEWEST - 3 * MIN + 30_000).toISOString(), units: 16, perMinute: 2 };
    const previous = stored({ growth });
    // The newest bucket overlaps a change at the old ceiling: not a measurement of the demand, so
    // the growth measured before is neither replaced nor dropped.
    const connections = marked("connections", [
      [18, ""],
      [20, "s"],
      [20, "s"],
      [20, "c"],
      [20, "c"],
    ]);
    expect(anticipate(base({ previous, demand: [connections] }))?.status.growth).toEqual(growth);
  });

  it("Trend: a rise out of censored buckets is not a trend; measured buckets rising still are", () => {
    // 10 → 20 while the quota rose under a fixed demand: the two measured buckets are flat.
    const uncovered = marked("connections", [
      [10, "s"],
      [13, "c"],
      [16, "c"],
      [20, ""],
      [20, ""],
    ]);
    expect(anticipate(base({ demand: [uncovered] }))?.asks).toEqual([]);
    // Read as measured (the rule before), the same buckets asked for a trend.
    const asMeasured = marked("connections", [
      [10, ""],
      [13, ""],
      [16, ""],
      [20, ""],
      [20, ""],
    ]);
    expect(anticipate(base({ demand: [asMeasured] }))?.asks[0]?.rule).toBe("Trend");
    // Three measured buckets rising 4 units/min after the quota rose: a trend, fitted on them only
    // (14, 18, 22 → 22 + 4 × 8 min = 54 units by NOW + 4.5 min).
    const growing = marked("connections", [
      [10, "s"],
      [10, "c"],
      [14, ""],
      [18, ""],
      [22, ""],
    ]);
    const trend = anticipate(base({ demand: [growing] }))?.asks.find((x) => x.rule === "Trend");
    expect(trend?.units).toBeCloseTo(54, 10);
  });

  it("Trend: server load read while the quota was full is censored too", () => {
    // Server load 100 % at 10 units (14.3 units at 70 %) while the quota was full, then 57 % at 20
    // units (16.3 units): the clients let in by the larger quota, not a rising need.
    const load = marked("serverLoad", [
      [14.29, "s"],
      [14.29, "s"],
      [15.1, ""],
      [16.3, ""],
      [16.3, ""],
    ]);
    const connections = marked("connections", [
      [12.5, "s"],
      [12.5, "s"],
      [12.5, "c"],
      [14.3, ""],
      [14.3, ""],
    ]);
    censorByQuota([connections, load]);
    expect(load.points.map((p) => p.censored)).toEqual([true, true, true, false, false]);
    expect(anticipate(base({ demand: [connections, load] }))?.asks).toEqual([]);
  });

  it("demandSeries: a bucket of a change is censored when it reached the smaller size's ceiling", () => {
    const s = {
      status: "Complete" as const,
      points: [
        { start: 0, value: 10_000 },
        { start: MIN, value: 9_000 },
        { start: 2 * MIN, value: 10_000 },
        { start: 3 * MIN, value: 14_000 },
      ],
      knownBuckets: 4,
      expectedBuckets: 4,
    };
    const quota = 10_000;
    const d = demandSeries(
      "connections",
      s as never,
      1 / 800,
      (v) => v >= quota * 0.99 && v <= quota * 1.01,
      (start) => start >= MIN,
      (v) => v >= quota * 0.99,
    );
    expect(d.points.map((p) => [p.saturated, p.censored])).toEqual([
      [true, true],
      [false, false],
      [false, true],
      [false, true],
    ]);
  });
});

describe("the leading signal's lifetime is measured on uncensored buckets only", () => {
  it("a bucket of a change at the old ceiling is not paired", () => {
    // λ = 10/s; Azure measured 12,000 connections (W = 1,200 s) on three buckets, and 6,000 on
    // three at the old ceiling of a change (they would say W = 600 s: a median of 900 s).
    const points: DemandPoint[] = [12_000, 12_000, 12_000, 6_000, 6_000, 6_000].map((c, i) => ({
      start: NEWEST - (5 - i) * MIN,
      units: c / 800,
      saturated: false,
      censored: i >= 3,
    }));
    const readings = points.map((p) => ({ timeMs: p.start + MIN, value: 10 }));
    const out = leadingSignal({
      spec: {
        prometheus: { serverAddress: "http://p:9090", query: "q", timeout: "5s" },
        measures: "NewConnectionsPerSecond",
      },
      observation: { readings },
      nowMs: NEWEST + MIN,
      targetMs: NEWEST + 10 * MIN,
      connectionsPerUnit: 800,
      tolerance: 0.1,
      connections: { signal: "connections", points, saturated: false },
    });
    expect(out.status.lifetimeSeconds).toBe(1200);
  });
});
