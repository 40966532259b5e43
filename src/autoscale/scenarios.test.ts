/**
 * Situations users of autoscalers have reported, each pinned as a test: what the decision must do.
 */
import { describe, expect, it } from "vitest";
import { type Decision, decide } from "./decide.js";
import type { DecisionHistory } from "./history.js";
import type { MetricSample } from "./samples.js";
import { input, NOW, samples, spec } from "./testing.js";

const condition = (d: Decision, type: string) => d.conditions.find((c) => c.type === type);

describe("scenarios from public reports", () => {
  // Azure Monitor's newest buckets are often still filling: a 0 and a null right after a steady
  // load must not read as "load dropped to zero".
  const steadyThenZeroAndNull = (): MetricSample[] => {
    const s = samples({ serverLoadPercent: 65, connections: 7500 }, { newestMinutesAgo: 1, count: 20 });
    const n = s.length;
    s[n - 2] = { ...(s[n - 2] as MetricSample), serverLoadPercent: 0, connections: 0 };
    s[n - 1] = { ...(s[n - 1] as MetricSample), serverLoadPercent: null, connections: null };
    return s;
  };

  it("newest two buckets 0 and null after steady load: hold (ingestion delay)", () => {
    const s = spec({ metrics: { connections: { targetPercent: 80 } } });
    const d = decide(input({ spec: s, samples: steadyThenZeroAndNull() }));
    expect(d.desired).toEqual({ sku: "Premium_P1", units: 10 });
    expect(d.action).toBe("None");
    expect(d.reasons.map((r) => r.code)).toContain("SamplesIgnored");
    expect(condition(d, "MetricsAvailable")?.status).toBe("True");
  });

  it("newest two buckets 0 and null after steady load: hold even with no ingestion delay", () => {
    const s = spec({ metrics: { connections: { targetPercent: 80 }, ingestionDelay: "0s" } });
    const d = decide(input({ spec: s, samples: steadyThenZeroAndNull() }));
    expect(d.desired).toEqual({ sku: "Premium_P1", units: 10 });
    expect(d.scaleIn.blockedBy).toContain("MetricsIncomplete");
  });

  it("every value null: MetricsAvailable=False, hold", () => {
    const s = spec({ metrics: { connections: { targetPercent: 80 } } });
    const d = decide(input({ spec: s, samples: samples({}) }));
    expect(d.desired).toEqual({ sku: "Premium_P1", units: 10 });
    expect(d.action).toBe("None");
    expect(condition(d, "MetricsAvailable")).toMatchObject({ status: "False", reason: "NoMetrics" });
    expect(condition(d, "ScalingActive")).toMatchObject({ status: "False", reason: "FailedGetMetrics" });
    expect(d.history.consecutiveFailures).toBe(1);
    expect(d.reasons.map((r) => r.code)).toEqual(
      expect.arrayContaining(["SignalUnknown", "MetricsUnavailable", "FailureCounted"]),
    );
  });

  describe("one of two signals failing", () => {
    const s = spec({ metrics: { connections: { targetPercent: 80 } } });
    it("scale-out on the signal that is present is allowed", () => {
      const d = decide(input({ spec: s, samples: samples({ serverLoadPercent: 95, connections: null }) }));
      expect(d.desired?.units).toBe(20);
      expect(d.action).toBe("Scale");
      expect(condition(d, "MetricsAvailable")).toMatchObject({
        status: "True",
        reason: "SomeMetricsMissing",
      });
    });
    it("scale-in is blocked", () => {
      const d = decide(input({ spec: s, samples: samples({ serverLoadPercent: 10, connections: null }) }));
      expect(d.recommendation?.units).toBe(2);
      expect(d.desired?.units).toBe(10);
      expect(d.limitedBy).toBe("MetricsIncomplete");
      // an untrusted lower recommendation is not stored either
      expect(d.history.recommendations).toEqual([]);
    });
  });

  it("need of 13 units on Standard_S1 → 20 (the ladder has no 13)", () => {
    const s = spec({ skus: ["Standard_S1"] });
    // 91 % at 10 units = 9.1 units of demand → 13 at 70 %.
    const d = decide(
      input({
        spec: s,
        current: { sku: "Standard_S1", units: 10 },
        samples: samples({ serverLoadPercent: 91 }),
      }),
    );
    expect(d.signals[0]?.desiredUnits).toBe(13);
    expect(d.desired).toEqual({ sku: "Standard_S1", units: 20 });
    expect(d.reasons.map((r) => r.code)).toContain("LadderSnapped");
  });

  describe("need of 140 units", () => {
    // 98 % at 100 units = 98 units of demand → 140 at 70 %.
    const at100 = { sku: "Premium_P1", units: 100 } as const;
    it("with Premium_P2 allowed → Premium_P2 200", () => {
      const s = spec({ skus: ["Premium_P1", "Premium_P2"], units: { max: 1000 } });
      const d = decide(input({ spec: s, current: at100, samples: samples({ serverLoadPercent: 98 }) }));
      expect(d.signals[0]?.desiredUnits).toBe(140);
      expect(d.desired).toEqual({ sku: "Premium_P2", units: 200 });
      expect(d.limitedBy).toBeUndefined();
    });
    it("without Premium_P2 → 100, limited", () => {
      const d = decide(input({ current: at100, samples: samples({ serverLoadPercent: 98 }) }));
      expect(d.desired).toEqual({ sku: "Premium_P1", units: 100 });
      expect(d.limitedBy).toBe("P2NotAllowed");
      expect(condition(d, "ScalingLimited")).toMatchObject({ status: "True", reason: "P2NotAllowed" });
    });
  });

  it("fallback only after the threshold, steady while failing, reset after one success", () => {
    const s = spec({ fallback: { failureThreshold: 3, action: "Fixed", units: 30 } });
    let history: DecisionHistory | undefined;
    let current = { sku: "Premium_P1" as const, units: 10 };
    const steps: { units: number | undefined; fallback: string | undefined; failures: number }[] = [];
    const pass = (i: number, failed: boolean) => {
      const now = NOW + i * 30_000;
      const d = decide(
        input({
          spec: s,
          current,
          now,
          ...(history ? { history } : {}),
          samples: failed ? [] : samples({ serverLoadPercent: 70 }, { now }),
          ...(failed ? { failure: { kind: "ApiError", message: "500 Internal Server Error" } } : {}),
        }),
      );
      history = d.history;
      if (d.desired) current = { sku: "Premium_P1", units: d.desired.units };
      steps.push({
        units: d.desired?.units,
        fallback: condition(d, "Fallback")?.reason,
        failures: d.history.consecutiveFailures,
      });
    };
    [true, true, true, true, true, false, true].forEach((failed, i) => {
      pass(i, failed);
    });
    expect(steps).toEqual([
      { units: 10, fallback: "FailuresBelowThreshold", failures: 1 },
      { units: 10, fallback: "FailuresBelowThreshold", failures: 2 },
      { units: 30, fallback: "FallbackFixed", failures: 3 },
      { units: 30, fallback: "FallbackFixed", failures: 4 },
      { units: 30, fallback: "FallbackFixed", failures: 5 },
      { units: 30, fallback: "MetricsHealthy", failures: 0 },
      { units: 30, fallback: "FailuresBelowThreshold", failures: 1 },
    ]);
  });
});
