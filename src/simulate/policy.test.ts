import { describe, expect, it } from "vitest";
import { parsePolicyYaml } from "../api/index.js";
import { simulate } from "./engine.js";
import { PolicyStrategy } from "./strategies/policy.js";
import { minuteOf, steps, testSetup, webPubSubPolicyYaml } from "./testing.js";

const POLICY = webPubSubPolicyYaml(
  "spike",
  `  units: { min: 1, max: 100 }
  skus: [Premium_P1]
  metrics:
    serverLoad: { targetPercent: 70 }
    window: 5m
    ingestionDelay: 3m
  behavior:
    scaleUp: { stabilizationWindowSeconds: 0, policies: [{ type: Percent, value: 100, periodSeconds: 60 }] }
    scaleDown: { stabilizationWindowSeconds: 1200, policies: [{ type: Percent, value: 100, periodSeconds: 60 }] }
  pollIntervalSeconds: 30
`,
);

describe("policy strategy (the real decide)", () => {
  // 3,000 connections at 5 units (60 %) for 30 minutes, a spike to 12,000 for 20 minutes, back to 3,000.
  const demand = steps([
    [30, 3_000],
    [20, 12_000],
    [70, 3_000],
  ]);
  const run = () => {
    const strategy = new PolicyStrategy(
      parsePolicyYaml(POLICY),
      { sku: "Premium_P1", units: 5 },
      { keepLog: true },
    );
    const result = simulate(strategy, testSetup(demand));
    return { strategy, result };
  };

  it("scales out soon after the spike shows in the metrics, and never before", () => {
    const { result } = run();
    const outs = result.operations.filter((o) => o.to.units > o.from.units);
    expect(outs.length).toBeGreaterThan(0);
    const first = minuteOf(outs[0]?.startedMs ?? 0);
    // The first hot minute (30) is ingested at 34; the decision at 34 sees it.
    expect(first).toBe(34);
    // Load is capped at 100 % while connections are refused, so it takes a few steps (and
    // 5-minute scales) to reach 20 units, which carry 12,000 at 60 %.
    expect(Math.max(...result.units)).toBe(20);
    expect(result.refused[30]).toBe(7_000);
  });

  it("scales in only after the scale-down stabilization window (20 min) past the last high recommendation", () => {
    const { result, strategy } = run();
    const ins = result.operations.filter((o) => o.to.units < o.from.units);
    expect(ins.length).toBeGreaterThan(0);
    // The last hot minute (49) is ingested at 53; recommendations stay high until the 5-minute
    // window has no hot bucket (poll 58). No scale-in before 53 + 20 = 73.
    const firstIn = minuteOf(ins[0]?.startedMs ?? 0);
    expect(firstIn).toBeGreaterThanOrEqual(73);
    expect(firstIn).toBeLessThanOrEqual(80);
    // Back to the 3,000-connection size: 5 units (60 %).
    expect(result.units[119]).toBe(5);
    expect(strategy.log.every((d) => d.action === "Scale")).toBe(true);
  });

  it("records each applied scale in the history when its completion is observed", () => {
    const { result, strategy } = run();
    const last = result.operations.at(-1);
    // Polls every minute: the completion is observed at the poll of the minute it completes.
    expect(strategy.history.lastScaleTime).toBe(new Date(last?.completedMs ?? 0).toISOString());
    expect(strategy.status.operation).toBeUndefined();
  });

  it("simulates a Recommend policy as if it acted, and says so", () => {
    const recommend = POLICY.replace("pollIntervalSeconds: 30", "pollIntervalSeconds: 30\n  mode: Recommend");
    const strategy = new PolicyStrategy(parsePolicyYaml(recommend), { sku: "Premium_P1", units: 5 });
    expect(strategy.overrides).toEqual(["mode Recommend simulated as Auto"]);
    const result = simulate(strategy, testSetup(demand));
    expect(result.operations.length).toBeGreaterThan(0);
  });
});
