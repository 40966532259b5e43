import { describe, expect, it } from "vitest";
import { DEFAULT_LADDERS, type SkuUnits } from "../../capacity/skus.js";
import type { DemandHistory, DemandPoint } from "../demand-history.js";
import { emptyHistory, type ScaleEvent } from "../history.js";
import { forecastHold } from "../hold-forecast.js";
import { historyHold, recordHeldScaleIn, recordScaleIns, type ScaleInRecord } from "../scale-ins.js";
import { SizeList } from "../sizes.js";
import { spec as specWith } from "../testing.js";
import { disruption } from "./disruption.js";
import { type DecisionFrame, policyTimes } from "./stage.js";

const NOW = Date.parse("2025-03-03T12:00:00Z");
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A frame at Premium_P1 × `units`, scale-down window 1800 s, 1,000 clients per unit-hour. */
function frameAt(
  units: number,
  opts: { window?: number; k?: number; policy?: "Weigh" | "Ignore"; scaleIns?: ScaleInRecord[] } = {},
): DecisionFrame {
  const spec = specWith({
    units: { min: 1, max: 100 },
    behavior: {
      scaleDown: {
        stabilizationWindowSeconds: opts.window ?? 1800,
        disruption: { policy: opts.policy ?? "Weigh", maxDisconnectionsPerUnitHour: opts.k ?? 1000 },
      },
    },
  });
  const current: SkuUnits = { sku: "Premium_P1", units };
  return {
    spec,
    nowMs: NOW,
    nowIso: iso(NOW),
    mode: "Auto",
    paused: false,
    history: { ...emptyHistory(), ...(opts.scaleIns ? { scaleIns: opts.scaleIns } : {}) },
    times: policyTimes(spec),
    failure: undefined,
    inFlight: undefined,
    conflict: undefined,
    current,
    sizes: new SizeList(["Premium_P1"], current, DEFAULT_LADDERS),
    scaleDownWindow: {
      seconds: spec.behavior.scaleDown.stabilizationWindowSeconds,
    },
  };
}

const to8: SkuUnits = { sku: "Premium_P1", units: 8 };
const input = (connections: number | undefined, demandHistory?: DemandHistory) => ({
  connections,
  needUnits: 7,
  demandHistory,
  windowToMs: NOW - 3 * MIN,
});

describe("disruption: a scale-in is made when the smaller size repays what it disconnects", () => {
  it("holds 10 → 8 units at 6,000 connections: 1,200 clients need 36 min, the 30 min window says 30", () => {
    // clients = 6,000 × 2 ÷ 10 = 1,200; required = 3,600 × 1,200 ÷ (2 × 1,000) = 2,160 s.
    const out = disruption(frameAt(10), to8, input(6000));
    expect(out.size).toEqual({ sku: "Premium_P1", units: 10 });
    expect(out.limit?.code).toBe("DisruptionHeld");
    expect(out.reasons).toHaveLength(1);
    expect(out.reasons[0]).toMatchObject({ code: "DisruptionHeld", clients: 1200, units: 10 });
    expect(out.reasons[0]?.message).toBe(
      "scale-in to Premium_P1 8 held: it would disconnect about 1,200 clients (the removed units' share of 6,000); at 1,000 clients per unit-hour saved it must hold 36 min, but it is expected to hold 30 min (the need has stayed below it for the 1800s stabilization window)",
    );
    expect(out.weighing).toEqual({
      held: true,
      to: to8,
      clients: 1200,
      connections: 6000,
      requiredHoldSeconds: 2160,
      expectedHoldSeconds: 1800,
      basis: "the need has stayed below it for the 1800s stabilization window",
    });
  });

  it("expects a size to hold as long as it has held since the last scale: 2 h held makes what 30 min held", () => {
    // The same 1,200 clients need 2,160 s; the size has held 7,200 s since the last scale.
    const frame = frameAt(10);
    const steady = { ...frame, history: { ...frame.history, lastScaleTime: iso(NOW - 2 * 3_600_000) } };
    const out = disruption(steady, to8, input(6000));
    expect(out.size).toEqual(to8);
    expect(out.weighing).toMatchObject({
      held: false,
      requiredHoldSeconds: 2160,
      expectedHoldSeconds: 7200,
      basis: "the size has held for 2 h since the last scale",
    });
    // 20 minutes since the last scale: the 30-minute window is the longer basis, and it holds.
    const recent = { ...frame, history: { ...frame.history, lastScaleTime: iso(NOW - 20 * MIN) } };
    expect(disruption(recent, to8, input(6000)).weighing).toMatchObject({
      held: true,
      expectedHoldSeconds: 1800,
    });
  });

  it("makes 10 → 8 units at 4,000 connections: 800 clients need 24 min, less than the 30 min expected", () => {
    // clients = 4,000 × 2 ÷ 10 = 800; required = 3,600 × 800 ÷ 2,000 = 1,440 s.
    const out = disruption(frameAt(10), to8, input(4000));
    expect(out.size).toEqual(to8);
    expect(out.limit).toBeUndefined();
    expect(out.reasons).toEqual([
      {
        code: "DisruptionRepaid",
        units: 8,
        clients: 800,
        message:
          "the scale-in to Premium_P1 8 disconnects about 800 clients (the removed units' share of 4,000); at 1,000 clients per unit-hour saved it must hold 24 min and it is expected to hold 30 min (the need has stayed below it for the 1800s stabilization window)",
      },
    ]);
    expect(out.weighing).toMatchObject({ held: false, requiredHoldSeconds: 1440, expectedHoldSeconds: 1800 });
  });

  it("counts every client under the Everyone model: 4,000 clients need 2 h for 2 units, held", () => {
    // clients = 4,000 (all); required = 3,600 × 4,000 ÷ (2 × 1,000) = 7,200 s > 1,800 s.
    const out = disruption(frameAt(10), to8, { ...input(4000), disconnection: "Everyone" });
    expect(out.size.units).toBe(10);
    expect(out.weighing).toMatchObject({ held: true, clients: 4000, requiredHoldSeconds: 7200 });
    expect(out.reasons[0]?.message).toContain(
      "about 4,000 clients (all 4,000: every unit change disconnects everyone)",
    );
  });

  it("the stricter setting holds what the default makes: 250 clients per unit-hour need 96 min for 800 clients", () => {
    const out = disruption(frameAt(10, { k: 250 }), to8, input(4000));
    expect(out.size.units).toBe(10);
    expect(out.weighing?.requiredHoldSeconds).toBe(5760);
  });

  it("holds a scale-in the instance's past ones say is soon reversed: median 15 min to a reversal", () => {
    // Holds: 10 min (reversed), 15 min (reversed), 20 min and still holding. Kaplan–Meier:
    // S(10 min) = 2/3, S(15 min) = 1/3 ≤ ½ → median 15 min < the 24 min 800 clients need.
    const scaleIns: ScaleInRecord[] = [
      { time: iso(NOW - 90 * MIN), fromUnits: 10, toUnits: 8, endedAt: iso(NOW - 80 * MIN), reversed: true },
      { time: iso(NOW - 60 * MIN), fromUnits: 10, toUnits: 8, endedAt: iso(NOW - 45 * MIN), reversed: true },
      { time: iso(NOW - 20 * MIN), fromUnits: 10, toUnits: 9 },
    ];
    const out = disruption(frameAt(10, { scaleIns }), to8, input(4000));
    expect(out.size.units).toBe(10);
    expect(out.weighing).toMatchObject({
      held: true,
      expectedHoldSeconds: 900,
      basis: "3 past scale-ins, 2 reversed: median hold 15 min",
    });
  });

  it("with maxDisconnectionsPerUnitHour 0 holds any scale-in that disconnects a client", () => {
    const out = disruption(frameAt(10, { k: 0 }), to8, input(10));
    expect(out.size.units).toBe(10);
    expect(out.weighing?.requiredHoldSeconds).toBe(Number.POSITIVE_INFINITY);
    expect(out.reasons[0]?.message).toContain("maxDisconnectionsPerUnitHour is 0");
  });

  it("weighs nothing with policy Ignore, unknown connections, no one disconnected, a scale-out or no basis", () => {
    const none = (f: DecisionFrame, c: number | undefined, size: SkuUnits = to8) => {
      const out = disruption(f, size, input(c));
      expect(out).toEqual({ size, reasons: [] });
    };
    none(frameAt(10, { policy: "Ignore" }), 6000);
    none(frameAt(10), undefined);
    none(frameAt(10), 0);
    none(frameAt(10), 6000, { sku: "Premium_P1", units: 20 });
    // A window of 0 and no past scale-ins: nothing to expect a hold from.
    none(frameAt(10, { window: 0 }), 6000);
  });

  it("never holds a current size above units.max: the ceiling wins", () => {
    const f = frameAt(10);
    const capped = { ...f, spec: { ...f.spec, units: { min: 1, max: 8 } } };
    expect(disruption(capped, to8, input(6000)).size).toEqual(to8);
  });
});

describe("forecastHold: how long the same span of past days stayed below the smaller size", () => {
  /** 8 days of 5-minute buckets: 1,000 connections, 2,000 from 15:00 to 20:00 each day. */
  function dailyHistory(): DemandHistory {
    const points: DemandPoint[] = [];
    const start = NOW - 8 * 86_400_000;
    for (let t = start; t < NOW - 5 * MIN; t += 5 * MIN) {
      const hour = new Date(t).getUTCHours();
      points.push({ timeMs: t, connections: hour >= 15 && hour < 20 ? 2000 : 1000, bytesPerSecond: null });
    }
    return { grainSeconds: 300, readAtMs: NOW, points };
  }

  it("is the median time to the first bucket above it: 3 h before the 15:00 rise", () => {
    // A need of 6 units at 1,000 connections puts 8 units at 1,333 connections: above from 15:00.
    const hold = forecastHold(dailyHistory(), {
      refMs: NOW,
      levelMs: 5 * MIN,
      horizonMs: 86_400_000,
      needUnits: 6,
      units: 8,
    });
    expect(hold).toEqual({ state: "Ok", seconds: 3 * 3600, cycles: 7, cycle: "Daily" });
  });

  it("is the whole horizon when the rise never reaches the smaller size, and the stage then makes the scale-in", () => {
    const query = { refMs: NOW, levelMs: 5 * MIN, horizonMs: 86_400_000, needUnits: 4, units: 8 };
    expect(forecastHold(dailyHistory(), query)).toMatchObject({ state: "Ok", seconds: 86_400 });
    // 6,000 connections on 10 units → 8: 1,200 clients need 36 min; the forecast says 3 h at a need of 7.
    const out = disruption(frameAt(10), to8, input(6000, dailyHistory()));
    expect(out.size).toEqual(to8);
    expect(out.weighing).toMatchObject({ held: false, basis: "seasonal forecast, 7 past days" });
  });

  it("says so with too little history", () => {
    const short = { ...dailyHistory() };
    short.points = short.points.slice(-288 * 2);
    expect(
      forecastHold(short, { refMs: NOW, levelMs: 5 * MIN, horizonMs: 86_400_000, needUnits: 10, units: 8 })
        .state,
    ).toBe("InsufficientHistory");
  });
});

describe("recordScaleIns and historyHold", () => {
  const event = (minAgo: number, from: number, to: number, sentMinAgo = minAgo + 5): ScaleEvent => ({
    time: iso(NOW - minAgo * MIN),
    startedAt: iso(NOW - sentMinAgo * MIN),
    fromSku: "Premium_P1",
    fromUnits: from,
    toSku: "Premium_P1",
    toUnits: to,
  });

  it("records each scale-in once and ends it at the next change: a scale-out reverses it", () => {
    const events = [event(100, 10, 8), event(70, 8, 10), event(40, 10, 6), event(20, 6, 5)];
    const once = recordScaleIns(undefined, events);
    expect(once).toEqual([
      { time: iso(NOW - 100 * MIN), fromUnits: 10, toUnits: 8, endedAt: iso(NOW - 75 * MIN), reversed: true },
      { time: iso(NOW - 40 * MIN), fromUnits: 10, toUnits: 6, endedAt: iso(NOW - 25 * MIN) },
      { time: iso(NOW - 20 * MIN), fromUnits: 6, toUnits: 5 },
    ]);
    // The same events again (they stay in the history for a while) change nothing.
    expect(recordScaleIns(once, events)).toEqual(once);
    // Holds 15 min and 20 min (not reversed), then 25 min (reversed, the last at risk): the
    // Kaplan–Meier survival falls from 1 to 0 at 25 min, the median.
    expect(historyHold(once, NOW)).toEqual({
      seconds: 1500,
      censored: false,
      scaleIns: 3,
      reversals: 1,
      sinceSeconds: 0,
      lastedSince: 3,
    });
    // Reversed first, at 10 min, of three: survival 2/3 and no median — the longest hold, a lower bound.
    const early = recordScaleIns(undefined, [
      event(100, 10, 8),
      event(95, 8, 10, 90),
      event(60, 10, 8),
      event(30, 8, 7),
    ]);
    expect(historyHold(early, NOW)).toEqual({
      seconds: 1800,
      censored: true,
      scaleIns: 3,
      reversals: 1,
      sinceSeconds: 0,
      lastedSince: 3,
    });
  });

  it("keeps the newest 10 and says nothing with fewer than 3", () => {
    const events = Array.from({ length: 24 }, (_, i) =>
      i % 2 === 0 ? event(500 - i * 20, 10, 8) : event(500 - i * 20, 8, 10),
    );
    const records = recordScaleIns(undefined, events);
    expect(records).toHaveLength(10);
    expect(records.at(-1)?.time).toBe(iso(NOW - 500 * MIN + 22 * 20 * MIN));
    expect(historyHold(records.slice(0, 2), NOW)).toBeUndefined();
  });
});

describe("held scale-ins: the record learns while the weighing holds", () => {
  const at = (minAgo: number) => iso(NOW - minAgo * MIN);
  // A crowd's decline: six scale-ins reversed within 5–19 min, four further scale-ins (censored).
  const decline: ScaleInRecord[] = [5, 8, 11, 14, 17, 19, 6, 9, 12, 15].map((held, i) => ({
    time: at(600 - i * 30),
    fromUnits: 20,
    toUnits: 10,
    endedAt: at(600 - i * 30 - held),
    ...(i < 6 ? { reversed: true } : {}),
  }));
  // The newest nine of them, beside a held entry (at most ten in all).
  const nine = decline.slice(1);
  const pass = (minAgo: number, extra: Partial<Parameters<typeof recordHeldScaleIn>[1]> = {}) => ({
    nowIso: at(minAgo),
    currentUnits: 6,
    inFlight: false,
    ...extra,
  });

  it("opens an entry at the first held pass, raises it to the largest held size, and drops it when the need rises above it", () => {
    const opened = recordHeldScaleIn(decline, pass(60, { heldToUnits: 3, recommendedUnits: 3 }));
    expect(opened.at(-1)).toEqual({ time: at(60), fromUnits: 6, toUnits: 3, held: true });
    // At most 10 entries in all: the oldest scale-in leaves for it.
    expect(opened).toHaveLength(10);
    expect(opened[0]).toEqual(decline[1]);
    // The window's highest recommendation is 4 while the need is 3: the hold goes to 4.
    const raised = recordHeldScaleIn(opened, pass(50, { heldToUnits: 4, recommendedUnits: 3 }));
    expect(raised.at(-1)).toEqual({ time: at(60), fromUnits: 6, toUnits: 4, held: true });
    // A pass that holds nothing (the window holds the size) keeps it open while the need stays at 4.
    expect(recordHeldScaleIn(raised, pass(40, { recommendedUnits: 4 }))).toEqual(raised);
    // A smaller held proposal later does not lower it: the need has stayed at or below 4 since.
    expect(recordHeldScaleIn(raised, pass(45, { heldToUnits: 3, recommendedUnits: 3 }))).toEqual(raised);
    // The need rises to 5 while the pass holds a scale-in to 5: the need has stayed at or below 5
    // since the entry opened; it is raised and keeps its time.
    expect(recordHeldScaleIn(raised, pass(35, { heldToUnits: 5, recommendedUnits: 5 })).at(-1)).toEqual({
      time: at(60),
      fromUnits: 6,
      toUnits: 5,
      held: true,
    });
    // The need rises to 5 and nothing is held: a scale-in to 4 made then would have been reversed; the entry leaves.
    expect(recordHeldScaleIn(raised, pass(30, { recommendedUnits: 5 }))).toEqual(decline.slice(1));
    // Nothing opens while a change is in flight, nor without a hold.
    expect(recordHeldScaleIn(decline, pass(60, { heldToUnits: 3, inFlight: true }))).toEqual(decline);
    expect(recordHeldScaleIn(decline, pass(60, { recommendedUnits: 3 }))).toEqual(decline);
  });

  it("ends the held entry at the next change: a scale-in made ends the hold and is recorded itself", () => {
    const open = [...nine, { time: at(60), fromUnits: 6, toUnits: 3, held: true }];
    const made: ScaleEvent = {
      time: at(5),
      startedAt: at(10),
      fromSku: "Premium_P1",
      fromUnits: 6,
      toSku: "Premium_P1",
      toUnits: 3,
    };
    const after = recordScaleIns(open, [made]);
    expect(after.filter((r) => r.held)).toEqual([]);
    expect(after.at(-1)).toEqual({ time: at(5), fromUnits: 6, toUnits: 3 });
    expect(after).toHaveLength(10);
    // An open held entry stays last (and the same events again change nothing).
    expect(recordScaleIns(open, [])).toEqual(open);
  });

  it("reads the median remaining hold past the time the need has already stayed low", () => {
    // Without a hold open: six reversals of ten, the Kaplan–Meier median at 14 min.
    expect(historyHold(decline, NOW)).toMatchObject({ seconds: 14 * 60, censored: false, sinceSeconds: 0 });
    // Held for 10 min, beside the newest nine (reversed at 8, 11, 14, 17, 19 min; censored at 6,
    // 9, 12, 15): the survival at 10 min is 7/8 = 0.875; it halves (to ≤ 0.4375) at the reversal
    // at 17 min (0.875 × 5/6 × 3/4 × 1/2 = 0.273, the censored ones leaving the risk set): 7 min
    // more.
    const ten = [...nine, { time: at(10), fromUnits: 6, toUnits: 3, held: true }];
    expect(historyHold(ten, NOW)).toMatchObject({ seconds: 7 * 60, censored: false, sinceSeconds: 600 });
    // Held for 40 min: none of the past holds lasted that long and was reversed after it — no
    // median; at least as long again.
    const forty = [...nine, { time: at(40), fromUnits: 6, toUnits: 3, held: true }];
    expect(historyHold(forty, NOW)).toMatchObject({
      seconds: 40 * 60,
      censored: true,
      sinceSeconds: 2400,
      lastedSince: 0,
    });
  });

  it("halves the survival from where it stands at the held entry's age, not from 1", () => {
    // Holds of 2, 4, 6, 20 and 30 min reversed; 25 and 40 min not. Held for 10 min: S(10) =
    // 6/7 × 5/6 × 4/5 = 0.571. S(20) = 0.429 is below one half but 0.75 of S(10); S(30) = 0.214
    // is 0.375 of it: the median remaining hold is 30 − 10 = 20 min (not the 10 min that halving
    // from 1 would give).
    const lives: ScaleInRecord[] = [
      [2, true],
      [4, true],
      [6, true],
      [20, true],
      [25, false],
      [30, true],
      [40, false],
    ].map(([held, reversed], i) => ({
      time: at(500 - i * 60),
      fromUnits: 10,
      toUnits: 8,
      endedAt: at(500 - i * 60 - Number(held)),
      ...(reversed ? { reversed: true } : {}),
    }));
    const records = [...lives, { time: at(10), fromUnits: 6, toUnits: 3, held: true }];
    expect(historyHold(records, NOW)).toEqual({
      seconds: 20 * 60,
      censored: false,
      scaleIns: 7,
      reversals: 5,
      sinceSeconds: 600,
      lastedSince: 4,
      heldUnits: 3,
    });
  });

  it("says which holds it read: none lasted that long, or too few of those were reversed", () => {
    const to3: SkuUnits = { sku: "Premium_P1", units: 3 };
    const basis = (scaleIns: ScaleInRecord[]) =>
      disruption(frameAt(6, { k: 250, scaleIns }), to3, { ...input(900), needUnits: 2.5 }).weighing?.basis;
    // Held 40 min, longer than any of the nine held (19 min at most).
    expect(basis([...nine, { time: at(40), fromUnits: 6, toUnits: 3, held: true }])).toBe(
      "9 past scale-ins, 5 reversed; the need has stayed at or below 3 units for 40 min, longer than any of them held: at least as long again, 40 min",
    );
    // The 19-min reversal replaced by a 60-min hold not reversed; held 18 min: that hold alone
    // lasted so long, and it was not reversed — at least 60 − 18 = 42 min more.
    const longer = nine.map((r) =>
      r.endedAt === at(450 - 19) ? { time: r.time, fromUnits: 20, toUnits: 10, endedAt: at(450 - 60) } : r,
    );
    expect(basis([...longer, { time: at(18), fromUnits: 6, toUnits: 3, held: true }])).toBe(
      "9 past scale-ins, 4 reversed; the need has stayed at or below 3 units for 18 min, and of the 1 hold that lasted that long too few were reversed after it for a median: at least 42 min more",
    );
  });

  it("tells a held scale-in's required and expected holds apart when they round alike", () => {
    // 6 → 3 at 900 clients, 250 per unit-hour: 36 min required; held 26.7 min, the seasonal-free
    // record gives a median remaining hold of 35.7 min (the reversal at 62.4 min).
    const to3: SkuUnits = { sku: "Premium_P1", units: 3 };
    const records: ScaleInRecord[] = [10, 20, 62.4].map((held, i) => ({
      time: at(500 - i * 100),
      fromUnits: 10,
      toUnits: 8,
      endedAt: at(500 - i * 100 - held),
      reversed: true,
    }));
    const out = disruption(
      frameAt(6, {
        k: 250,
        scaleIns: [...records, { time: at(26.7), fromUnits: 6, toUnits: 3, held: true }],
      }),
      to3,
      { ...input(900), needUnits: 2.5 },
    );
    expect(out.weighing).toMatchObject({ held: true, requiredHoldSeconds: 2160 });
    expect(out.weighing?.expectedHoldSeconds).toBeCloseTo(35.7 * 60, 6);
    expect(out.reasons[0]?.message).toContain("it must hold 36 min, but it is expected to hold 35.7 min");
  });

  it("makes the scale-in once the need has stayed low long enough: the decline's reversals do not hold it for good", () => {
    // 6 → 3 units at 900 clients: 450 clients at 250 per unit-hour saved need 36 min.
    const to3: SkuUnits = { sku: "Premium_P1", units: 3 };
    const weigh = (scaleIns: ScaleInRecord[]) =>
      disruption(frameAt(6, { k: 250, scaleIns }), to3, { ...input(900), needUnits: 2.5 });
    const held = weigh([...nine, { time: at(10), fromUnits: 6, toUnits: 3, held: true }]);
    expect(held.weighing).toMatchObject({ held: true, expectedHoldSeconds: 420 });
    expect(held.reasons[0]?.message).toContain(
      "it is expected to hold 7 min (9 past scale-ins, 5 reversed; the need has stayed at or below 3 units for 10 min, and of the 6 holds that lasted that long: median remaining hold 7 min)",
    );
    const made = weigh([...nine, { time: at(40), fromUnits: 6, toUnits: 3, held: true }]);
    expect(made.size).toEqual(to3);
    expect(made.weighing).toMatchObject({ held: false, expectedHoldSeconds: 2400 });
  });
});
