import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type CapacityPolicy, parsePolicyYaml } from "../api/index.js";
import type { Decision } from "../autoscale/index.js";
import { simulate } from "./engine.js";
import { PolicyStrategy } from "./strategies/policy.js";
import { CHAT_MIX, testSetup } from "./testing.js";

const EXAMPLE = resolve(import.meta.dirname, "../../examples/signalr-chat.yaml");
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/**
 * A crowd: 1,000 clients for 20 minutes, then 8,000 more a minute for 12 minutes (97,000), held
 * 40 minutes, on the example (as `adjust` leaves it) from Premium_P1 × 2.
 */
function crowd(adjust: (policy: CapacityPolicy) => void = () => {}) {
  const demand = new Float64Array(90).fill(1_000);
  for (let m = 20; m < 72; m++) demand[m] = 1_000 + 8_000 * Math.min(12, m - 19);
  const policy = parsePolicyYaml(readFileSync(EXAMPLE, "utf8"));
  adjust(policy);
  const strategy = new PolicyStrategy(policy, { sku: "Premium_P1", units: 2 });
  const decisions: Decision[] = [];
  const poll = strategy.poll.bind(strategy);
  strategy.poll = (ctx) => {
    const want = poll(ctx);
    if (strategy.lastDecision) decisions.push(strategy.lastDecision);
    return want;
  };
  const run = simulate(strategy, { ...testSetup(demand, { seed: "simulate" }), mix: CHAT_MIX });
  const operations = run.operations.map((o) => `${hhmm(o.startedMs)} ${o.from.units} → ${o.to.units}`);
  const catchUps = decisions.flatMap((d) =>
    d.reasons.filter((r) => r.code === "CatchUp").map((r) => r.message),
  );
  return { operations, catchUps, refused: run.refused.reduce((a, b) => a + b, 0) };
}

describe("catch-up: rate policies over the periods a saturated run of scales takes", () => {
  it("the example's Percent 100 per 60s compounds from the second scale-out of a crowd", () => {
    // Each step takes a scale (5 min) and a window read at the new size (3 + 1 min): 9 minutes.
    // The saturated signals ask twice the full quota; one period of Percent 100 allows that, and
    // from the second scale-out of the run two periods let the ladder's next size above it
    // through: 4 → 10 (one period: 8), 80 → 200 (one period: 160, not on Premium_P2's ladder).
    const r = crowd();
    expect(r.operations).toEqual([
      "00:24 2 → 4",
      "00:33 4 → 10",
      "00:42 10 → 20",
      "00:51 20 → 40",
      "01:00 40 → 80",
      "01:09 80 → 200",
    ]);
    expect(r.catchUps[0]).toBe(
      "rate policy Percent 100 per 60s applied 2 times over (a signal at its ceiling, scale-out 2 of a run; 300s a scale): up to 16 units",
    );
  });

  it("the same policy written per 300s (one period a scale, counted back over the last) takes longer and refuses more", () => {
    const once = crowd((p) => {
      for (const x of p.spec.behavior.scaleUp.policies) x.periodSeconds = 300;
    });
    const r = crowd();
    expect(once.catchUps).toEqual([]);
    expect(once.operations).toEqual([
      "00:24 2 → 4",
      "00:34 4 → 8",
      "00:44 8 → 10",
      "00:49 10 → 20",
      "00:58 20 → 30",
      "01:07 30 → 40",
    ]);
    // Refused connection-minutes: 3,275,080 against 3,880,800.
    expect(Math.round(r.refused)).toBe(3_275_080);
    expect(Math.round(once.refused)).toBe(3_880_800);
  });
});
