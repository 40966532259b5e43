import { describe, expect, it } from "vitest";
import { DECISION_CONDITION_TYPES, PAUSE_ANNOTATION } from "../api/constants.js";
import type { CapacityPolicySpec } from "../api/index.js";
import { type Decision, decide } from "./decide.js";
import type { DemandPoint } from "./demand-history.js";
import { emptyHistory, recordScale } from "./history.js";
import { statusFields } from "./status.js";
import { input, NOW, policy, samples, spec } from "./testing.js";

const codes = (d: Decision) => d.reasons.map((r) => r.code);
const condition = (d: Decision, type: string) => d.conditions.find((c) => c.type === type);
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const load = (percent: number) => samples({ serverLoadPercent: percent });

describe("modes", () => {
  it("Auto scales", () => {
    const d = decide(input({ samples: load(90) }));
    expect(d.action).toBe("Scale");
    expect(d.desired).toMatchObject({ sku: "Premium_P1", units: 20 });
    expect(d.drivenBy).toBe("serverLoad");
  });

  it("Recommend decides but never acts", () => {
    const d = decide(input({ spec: spec({ mode: "Recommend" }), samples: load(90) }));
    expect(d.action).toBe("Recommend");
    expect(d.desired?.units).toBe(20);
    expect(codes(d)).toContain("RecommendOnly");
    expect(condition(d, "AbleToScale")?.reason).toBe("RecommendOnly");
  });

  it.each<[string, CapacityPolicySpec, Record<string, string> | undefined, boolean]>([
    ["mode Paused", spec({ mode: "Paused" }), undefined, true],
    ["the pause annotation", spec(), { [PAUSE_ANNOTATION]: "true" }, true],
    ["the annotation set to false", spec(), { [PAUSE_ANNOTATION]: "false" }, false],
  ])("%s pauses: %s", (_n, s, annotations, paused) => {
    const d = decide({ ...input({ samples: load(90) }), policy: policy(s, annotations) });
    expect(d.action).toBe(paused ? "None" : "Scale");
    expect(d.mode).toBe(paused ? "Paused" : "Auto");
    if (paused) {
      expect(codes(d)).toContain("Paused");
      expect(condition(d, "AbleToScale")).toMatchObject({ status: "False", reason: "Paused" });
      expect(condition(d, "ScalingActive")).toMatchObject({ status: "False", reason: "ScalingDisabled" });
      // what Auto would do is still shown
      expect(d.desired?.units).toBe(20);
    }
  });

  it("a conflict acts on nothing", () => {
    const d = decide(
      input({
        samples: load(90),
        conflict: {
          reason: "AzureAutoscaleSetting",
          message: "autoscale setting chat-autoscale targets the instance",
        },
      }),
    );
    expect(d.action).toBe("None");
    expect(condition(d, "Conflict")).toMatchObject({ status: "True", reason: "AzureAutoscaleSetting" });
    expect(condition(d, "AbleToScale")).toMatchObject({ status: "False", reason: "Conflict" });
  });

  it("no change → None with NoChange", () => {
    const d = decide(input({ samples: load(70) }));
    expect(d.action).toBe("None");
    expect(codes(d)).toEqual(expect.arrayContaining(["WithinTolerance", "NoChange"]));
    expect(condition(d, "ScalingLimited")).toMatchObject({ status: "False", reason: "DesiredWithinRange" });
  });
});

describe("bounds and schedules", () => {
  it.each<[string, CapacityPolicySpec, number, number, string | undefined]>([
    ["units.min snaps up to the ladder", spec({ units: { min: 15, max: 100 } }), 7, 20, "MinUnits"],
    // Saturated at 10 units asks for 20; units.max 15 snaps down to 10.
    ["units.max snaps down to the ladder", spec({ units: { min: 1, max: 15 } }), 100, 10, "MaxUnits"],
    ["inside the bounds nothing limits", spec({ units: { min: 1, max: 35 } }), 35, 5, undefined],
    [
      "an active schedule raises the floor",
      spec({
        schedules: [
          { name: "noon", cron: "0 11 * * *", timeZone: "UTC", durationMinutes: 120, minUnits: 50 },
        ],
      }),
      35,
      50,
      "ScheduleFloor",
    ],
    [
      "an inactive schedule does not",
      spec({
        schedules: [{ name: "night", cron: "0 1 * * *", timeZone: "UTC", durationMinutes: 60, minUnits: 50 }],
      }),
      35,
      5,
      undefined,
    ],
    [
      "the ceiling wins over a schedule",
      spec({
        units: { min: 1, max: 45 },
        schedules: [
          { name: "noon", cron: "0 11 * * *", timeZone: "UTC", durationMinutes: 120, minUnits: 45 },
        ],
      }),
      35,
      40,
      "NoRungInRange",
    ],
  ])("%s", (_n, s, percent, units, limitedBy) => {
    const d = decide(input({ spec: s, samples: load(percent) }));
    expect(d.desired?.units).toBe(units);
    if (limitedBy === "NoRungInRange") expect(codes(d)).toContain("NoRungInRange");
    else expect(d.limitedBy).toBe(limitedBy);
    if (limitedBy) expect(condition(d, "ScalingLimited")?.status).toBe("True");
  });
});

describe("SKUs and Premium_P2", () => {
  const p2 = spec({ skus: ["Premium_P1", "Premium_P2"], units: { max: 1000 } });
  const at = (sku: string, units: number) => ({ sku, units });
  it.each<
    [
      string,
      CapacityPolicySpec,
      { sku: string; units: number },
      number,
      { sku: string; units: number },
      string | undefined,
    ]
  >([
    ["140 units with P2 allowed → P2 200", p2, at("Premium_P1", 100), 98, at("Premium_P2", 200), undefined],
    [
      "140 units without P2 → P1 100, limited",
      spec(),
      at("Premium_P1", 100),
      98,
      at("Premium_P1", 100),
      "P2NotAllowed",
    ],
    ["back down from P2 when demand falls", p2, at("Premium_P2", 200), 20, at("Premium_P1", 60), undefined],
    [
      "P2 only: no lower than 100",
      spec({ skus: ["Premium_P2"], units: { min: 100, max: 1000 } }),
      at("Premium_P2", 200),
      20,
      at("Premium_P2", 100),
      undefined,
    ],
    [
      "S1 → P2 is not one online step: P1 100 first",
      spec({ skus: ["Standard_S1", "Premium_P1", "Premium_P2"], units: { max: 1000 } }),
      at("Standard_S1", 100),
      100,
      at("Premium_P1", 100),
      "SkuPath",
    ],
    [
      "a current SKU the policy no longer allows moves to an allowed one",
      spec(),
      at("Standard_S1", 10),
      70,
      at("Premium_P1", 10),
      undefined,
    ],
  ])("%s", (_n, s, current, percent, desired, limitedBy) => {
    const d = decide(
      input({ spec: s, current: current as { sku: "Premium_P1"; units: number }, samples: load(percent) }),
    );
    expect(d.desired).toMatchObject(desired);
    expect(d.limitedBy).toBe(limitedBy);
    if (desired.sku !== current.sku) expect(codes(d)).toContain("SkuChange");
  });

  it("Free_F1 is never scaled: no desired capacity, Ready=False", () => {
    const d = decide(input({ current: { sku: "Free_F1", units: 1 }, samples: load(90) }));
    expect(d.desired).toBeUndefined();
    expect(d.action).toBe("None");
    expect(condition(d, "Ready")).toMatchObject({ status: "False", reason: "UnsupportedSku" });
  });
});

describe("stabilization, settle window, scale-in windows", () => {
  const slow = spec({ behavior: { scaleDown: { stabilizationWindowSeconds: 600 } } });

  it("scale-in waits for the highest recommendation of the window", () => {
    const history = {
      ...emptyHistory(),
      recommendations: [{ time: ago(300), units: 10, sku: "Premium_P1" as const }],
    };
    const d = decide(input({ spec: slow, samples: load(20), history }));
    expect(d.desired?.units).toBe(10);
    expect(d.limitedBy).toBe("StabilizedDown");
    expect(condition(d, "AbleToScale")?.reason).toBe("ScaleDownStabilized");
    expect(d.history.recommendations.map((r) => r.units)).toEqual([10, 3]);
    const now = NOW + 301_000;
    const later = decide(
      input({ spec: slow, samples: samples({ serverLoadPercent: 20 }, { now }), history: d.history, now }),
    );
    expect(later.desired?.units).toBe(3);
  });

  it("a policy seen for the first time opens the scale-down window with the current size (like the HPA)", () => {
    const d = decide(input({ spec: slow, samples: load(20) }));
    expect(d.desired?.units).toBe(10);
    expect(d.limitedBy).toBe("StabilizedDown");
    expect(d.history.recommendations.map((r) => r.units)).toEqual([10, 3]);
  });

  it.each<[string, number, number, string | undefined]>([
    ["within the settle window: no scale-in", 120, 10, "Settling"],
    ["its samples still fill the window: no scale-in", 600, 10, "Settling"],
    ["a full window after it: scale-in", 900, 3, undefined],
  ])("%s", (_n, secondsAgo, units, limitedBy) => {
    const history = recordScale(emptyHistory(), {
      time: ago(secondsAgo),
      from: { sku: "Premium_P1", units: 5 },
      to: { sku: "Premium_P1", units: 10 },
    });
    const d = decide(input({ samples: load(20), history }));
    expect(d.desired?.units).toBe(units);
    expect(d.limitedBy).toBe(limitedBy);
  });

  it("the settle window never blocks scale-out", () => {
    const history = recordScale(emptyHistory(), {
      time: ago(400),
      from: { sku: "Premium_P1", units: 5 },
      to: { sku: "Premium_P1", units: 10 },
    });
    // Saturated at 10 units since the scale (and at 5 before it): at least double, 20 units,
    // while the settle window still holds scale-in.
    const d = decide(input({ samples: load(100), history }));
    expect(d.desired?.units).toBe(20);
    expect(d.scaleIn.blockedBy).toContain("Settling");
  });

  it("outside every scale-in window: no scale-in", () => {
    const s = spec({
      scaleInWindows: [{ name: "night", cron: "0 1 * * *", timeZone: "UTC", durationMinutes: 240 }],
    });
    const d = decide(input({ spec: s, samples: load(20) }));
    expect(d.desired?.units).toBe(10);
    expect(d.limitedBy).toBe("OutsideScaleInWindow");
    expect(d.scaleIn).toEqual({ allowed: false, blockedBy: ["OutsideScaleInWindow"] });
    const inside = decide(
      input({
        spec: s,
        samples: samples({ serverLoadPercent: 20 }, { now: Date.parse("2025-06-02T02:00:00Z") }),
        now: "2025-06-02T02:00:00Z",
      }),
    );
    expect(inside.desired?.units).toBe(3);
  });

  it("rate policies limit and say which", () => {
    const s = spec({
      behavior: { scaleUp: { policies: [{ type: "Steps", value: 1, periodSeconds: 300 }] } },
    });
    // Saturated at 5 units asks for 10; Steps 1 per 300 s (one 5-minute operation) allows 6.
    const d = decide(input({ spec: s, current: { sku: "Premium_P1", units: 5 }, samples: load(100) }));
    expect(d.desired?.units).toBe(6);
    expect(d.limitedBy).toBe("RateLimitedUp");
    expect(d.reasons.find((r) => r.code === "RateLimitedUp")?.name).toBe("Steps 1 per 300s");
  });

  it("a rate policy with a period shorter than one scale applies once per period of it", () => {
    // Units 1 per 60 s. Saturated at 5 units asks for 10. The declared 5-minute scale spans 5
    // periods: 5 + 5 = 10, not limited. Measured at 60 s (one update sent 12:58, done 12:59): 6.
    const s = spec({ behavior: { scaleUp: { policies: [{ type: "Units", value: 1, periodSeconds: 60 }] } } });
    const at5 = { sku: "Premium_P1" as const, units: 5 };
    const declared = decide(input({ spec: s, current: at5, samples: load(100) }));
    expect(declared.desired?.units).toBe(10);
    expect(declared.limitedBy).not.toBe("RateLimitedUp");
    // One update 4 → 5 an hour ago that took `seconds` (sent → observed complete).
    const took = (seconds: number) =>
      recordScale(emptyHistory(), {
        time: ago(3600),
        startedAt: ago(3600 + seconds),
        from: { sku: "Premium_P1", units: 4 },
        to: at5,
      });
    const measured = decide(input({ spec: s, current: at5, samples: load(100), history: took(60) }));
    expect(measured.desired?.units).toBe(6);
    expect(measured.reasons.find((r) => r.code === "RateLimitedUp")?.name).toBe("Units 1 per 60s");
    // A 3-minute scale: 3 periods, 8 units, and the message says so.
    const d = decide(input({ spec: s, current: at5, samples: load(100), history: took(180) }));
    expect(d.desired?.units).toBe(8);
    expect(d.reasons.find((r) => r.code === "RateLimitedUp")?.name).toBe(
      "Units 1 per 60s (× 3 per operation)",
    );
  });
});

describe("failures and fallback", () => {
  it("a failed fetch holds, counts, and says so", () => {
    const d = decide(
      input({ samples: load(20), failure: { kind: "Throttled", message: "429 Too Many Requests" } }),
    );
    expect(d.desired?.units).toBe(10);
    expect(d.history.consecutiveFailures).toBe(1);
    expect(d.limitedBy).toBe("FailureCounted");
    expect(codes(d)).toContain("FetchFailed");
    expect(condition(d, "MetricsAvailable")).toMatchObject({ status: "False", reason: "FetchFailed" });
    expect(condition(d, "Fallback")).toMatchObject({ status: "False", reason: "FailuresBelowThreshold" });
  });

  it.each<[string, number, number]>([
    ["Fixed above the current units goes there", 10, 30],
    ["Fixed below the current units holds", 40, 40],
  ])("%s", (_n, current, units) => {
    const s = spec({ fallback: { failureThreshold: 1, action: "Fixed", units: 25 } });
    const d = decide(
      input({
        spec: s,
        current: { sku: "Premium_P1", units: current },
        samples: [],
        failure: { kind: "Auth", message: "401" },
      }),
    );
    expect(d.desired?.units).toBe(units);
    expect(d.limitedBy).toBe("Fallback");
    expect(condition(d, "Fallback")).toMatchObject({ status: "True", reason: "FallbackFixed" });
  });
});

describe("app servers", () => {
  it("replicas follow the chosen units; a replica change alone is a Scale", () => {
    const s = spec({ appServer: { deploymentName: "chat-hub", replicas: { min: 1, max: 20 } } });
    const d = decide(
      input({ spec: s, current: { sku: "Premium_P1", units: 20, replicas: 5 }, samples: load(70) }),
    );
    expect(d.desired).toEqual({ sku: "Premium_P1", units: 20, replicas: 2 });
    expect(d.action).toBe("Scale");
    expect(codes(d)).toContain("ReplicasFromTable");
  });

  it("with an HPA named, the decision sets its minReplicas floor", () => {
    const s = spec({
      appServer: {
        deploymentName: "chat-hub",
        horizontalPodAutoscalerName: "chat-hub",
        replicas: { min: 1, max: 20 },
      },
    });
    const d = decide(
      input({
        spec: s,
        current: { sku: "Premium_P1", units: 10, replicas: 9, hpaMinReplicas: 1 },
        samples: load(90),
      }),
    );
    expect(d.desired).toEqual({ sku: "Premium_P1", units: 20, hpaMinReplicas: 2 });
  });
});

describe("reporting", () => {
  it("reports the newest sample used and its values", () => {
    const d = decide(input({ samples: samples({ serverLoadPercent: 50, connections: 1234 }) }));
    expect(d.newestSampleTime).toBe("2025-06-02T11:56:00.000Z");
    expect(d.lastSample).toEqual({
      time: "2025-06-02T11:56:00.000Z",
      serverLoadPercent: 50,
      connections: 1234,
    });
    expect(d.window).toMatchObject({
      from: "2025-06-02T11:52:00.000Z",
      to: "2025-06-02T11:57:00.000Z",
      ignoredTooNew: 3,
    });
  });

  it("every condition type is stated once", () => {
    const d = decide(input({ samples: load(50) }));
    expect(d.conditions.map((c) => c.type)).toEqual(DECISION_CONDITION_TYPES);
    for (const c of d.conditions) expect(c.reason).toMatch(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/);
  });
});

describe("status fields", () => {
  it("fills desired, lastSample, history and lastReasons", () => {
    const d = decide(input({ samples: load(90) }));
    const s = statusFields(d);
    expect(s.desired).toEqual({ sku: "Premium_P1", units: 20 });
    expect(s.lastSample?.serverLoadPercent).toBe(90);
    expect(s.consecutiveFailures).toBe(0);
    expect(s.recommendations).toEqual(d.history.recommendations);
    expect(s.lastReasons).toEqual(["SignalDesired", "SamplesIgnored", "LadderSnapped", "ScaleOut"]);
  });
});

describe("app servers while scale-in is blocked", () => {
  const withAppServer = spec({
    metrics: { serverLoad: { targetPercent: 70 }, connections: { targetPercent: 80 } },
    appServer: { deploymentName: "hub", replicas: { min: 1, max: 6 }, connectionsPerReplica: 1000 },
  });
  /** The decision at Premium_P1 × 10 with `replicas` app servers on `values` in every minute. */
  const at10 = (replicas: number, values: Parameters<typeof samples>[0]) =>
    decide(
      input({
        spec: withAppServer,
        current: { sku: "Premium_P1", units: 10, replicas },
        samples: samples(values),
      }),
    );

  it("keeps the replicas when a signal is unknown (no scale-in on missing data)", () => {
    const d = at10(4, { serverLoadPercent: 20, connections: null });
    expect(d.scaleIn.allowed).toBe(false);
    expect(d.desired?.replicas).toBe(4);
    expect(d.reasons.map((r) => r.code)).toContain("ReplicasHeld");
  });

  it("never holds above the policy's replica maximum", () => {
    const d = at10(9, { serverLoadPercent: 20, connections: null });
    expect(d.desired?.replicas).toBe(6);
  });

  it("lowers them when every signal is known", () => {
    const d = at10(4, { serverLoadPercent: 60, connections: 1500 });
    expect(d.desired?.replicas).toBe(2);
  });
});

describe("a unit range with no unit count of the allowed SKUs in it", () => {
  it("units 15..15 on Premium_P1 at 20 units with a load asking for 30: no scale, Ready=False InvalidSpec naming 10 and 20", () => {
    const d = decide(
      input({
        spec: spec({ units: { min: 15, max: 15 }, skus: ["Premium_P1"] }),
        current: { sku: "Premium_P1", units: 20 },
        // 20 units at 105 % server load with a 70 % target: 30 units asked for.
        samples: samples({ serverLoadPercent: 105 }),
      }),
    );
    expect(d.action).toBe("None");
    expect(d.desired).toBeUndefined();
    expect(d.limitedBy).toBeUndefined();
    const message =
      "spec.units: 15 holds no unit count Premium_P1 offers (1–10, 20, 30 … 100); the nearest are 10 and 20";
    expect(condition(d, "Ready")).toMatchObject({ status: "False", reason: "InvalidSpec", message });
    expect(condition(d, "AbleToScale")).toMatchObject({ status: "False", reason: "NoRungInRange" });
    expect(codes(d)).toEqual(["NoRungInRange"]);
  });

  it("runtime ladders without a count in the range: the same refusal, never a size outside it", () => {
    const d = decide(
      input({
        spec: spec({ units: { min: 12, max: 18 }, skus: ["Premium_P1"] }),
        current: { sku: "Premium_P1", units: 10 },
        samples: samples({ serverLoadPercent: 10 }),
        ladders: {
          Standard_S1: [1, 10, 20],
          Premium_P1: [1, 10, 20],
          Premium_P2: [100, 200],
        },
      }),
    );
    expect(d.desired).toBeUndefined();
    expect(condition(d, "Ready")?.message).toBe(
      "spec.units: 12..18 holds no unit count Premium_P1 offers (1, 10, 20); the nearest are 10 and 20",
    );
  });

  it("a size only a SKU two online changes away offers: Ready=False SkuPath, nothing outside the range", () => {
    const d = decide(
      input({
        spec: spec({ units: { min: 200, max: 300 }, skus: ["Standard_S1", "Premium_P2"] }),
        current: { sku: "Standard_S1", units: 50 },
        samples: samples({ serverLoadPercent: 90 }),
      }),
    );
    expect(d.desired).toBeUndefined();
    expect(condition(d, "Ready")).toMatchObject({ status: "False", reason: "SkuPath" });
  });
});

describe("a saturated instance right after a scale-out (AwaitingNewSize)", () => {
  // Connections only, 80 %; a 30-minute scale-down window. Premium_P1 2 → 4 sent at 11:55 and
  // observed complete at 12:00 (NOW); the scale-out's recommendation of 4 units opens the window.
  const s = spec({
    metrics: { connections: { targetPercent: 80 } },
    behavior: { scaleDown: { stabilizationWindowSeconds: 1800 } },
  });
  delete s.metrics.serverLoad;
  const scaled = recordScale(
    { ...emptyHistory(), recommendations: [{ time: ago(300), units: 4, sku: "Premium_P1" as const }] },
    {
      time: new Date(NOW).toISOString(),
      startedAt: ago(300),
      from: { sku: "Premium_P1", units: 2 },
      to: { sku: "Premium_P1", units: 4 },
    },
  );
  // The window (11:52–11:56, read 3 minutes late) was all served by 2 units: 2,010 connections is
  // the 2-unit quota (2,000 ± 1 %), full; 11:55 and 11:56 overlap the change, read at 2 units.
  // Against 4 units' 3,200 at 80 % that reads 2,010 ÷ 3,200 = 0.63 → ceil(2,010 ÷ 800) = 3 units,
  // below the current 4: the window's 4 holds it. The first bucket at 4 units is 12:00–12:01,
  // read from 12:04.
  const at4 = { sku: "Premium_P1" as const, units: 4 };

  it("names the real hold, not the scale-down window", () => {
    const d = decide(
      input({ spec: s, samples: samples({ connections: 2010 }), history: scaled, current: at4 }),
    );
    expect(d.recommendation?.units).toBe(3);
    expect(d.desired?.units).toBe(4);
    expect(d.limitedBy).toBe("AwaitingNewSize");
    expect(condition(d, "AbleToScale")).toMatchObject({ reason: "AwaitingNewSize" });
    expect(d.reasons.find((r) => r.code === "AwaitingNewSize")?.message).toBe(
      "the connection quota was full at 2 units (bucket 11:56 UTC) and no bucket at 4 units is read yet: the metrics only say the demand is above 2,000 connections; held at 4 units until the first is read, at about 12:04 UTC",
    );
    expect(codes(d)).not.toContain("StabilizedDown");
  });

  it("without a full quota at the smaller size it is the scale-down window", () => {
    const d = decide(
      input({ spec: s, samples: samples({ connections: 1500 }), history: scaled, current: at4 }),
    );
    expect(d.desired?.units).toBe(4);
    expect(d.limitedBy).toBe("StabilizedDown");
  });
});

describe("the seasonal history acts only with anticipation Enabled", () => {
  // Every day 6,000 connections, 12,000 from 15:00 to 20:00 UTC; now (12:00) 6,000 on 10 units.
  const points: DemandPoint[] = [];
  for (let t = NOW - 8 * 86_400_000; t < NOW - 300_000; t += 300_000) {
    const hour = new Date(t).getUTCHours();
    points.push({ timeMs: t, connections: hour >= 15 && hour < 20 ? 12_000 : 6_000, bytesPerSecond: null });
  }
  const weighed = (mode: "Enabled" | "ForecastOnly") =>
    decide(
      input({
        spec: spec({
          behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
          anticipation: { mode, seasonal: { historyDays: 7, grain: "5m" } },
        }),
        samples: samples({ serverLoadPercent: 20, connections: 6000 }),
        history: { ...emptyHistory(), lastScaleTime: new Date(NOW - 3_600_000).toISOString() },
        demandHistory: { grainSeconds: 300, readAtMs: NOW, points },
      }),
    ).disruption;

  it("Enabled: a scale-in's expected hold is read from the seasonal forecast (until the 15:00 rise)", () => {
    expect(weighed("Enabled")).toMatchObject({
      expectedHoldSeconds: 10_980,
      basis: "seasonal forecast, 7 past days",
    });
  });

  it("ForecastOnly: the forecast is shown, not weighed: the hold is the size's own since the last scale", () => {
    expect(weighed("ForecastOnly")).toMatchObject({
      expectedHoldSeconds: 3600,
      basis: "the size has held for 60 min since the last scale",
    });
  });
});
