import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePolicyYaml } from "../api/index.js";
import { compare } from "./compare.js";
import { fieldKnob, SWEEP_KNOBS, signalTargetKnob, unitsMinValues } from "./knobs.js";
import { planSweep, spreadIndices, sweep, sweepAsync } from "./sweep.js";
import { steps, testSetup, webPubSubPolicyYaml } from "./testing.js";

const ROOT = resolve(import.meta.dirname, "../..");
/** The example chat policy without its `spec.anticipation` block (a reactive policy). */
const CHAT_YAML = readFileSync(resolve(ROOT, "examples/signalr-chat.yaml"), "utf8").replace(
  /\n {2}anticipation:\n( {4}.*\n)+/,
  "\n",
);
const CHAT = parsePolicyYaml(CHAT_YAML);
/** A Web PubSub policy of 1–100 units scaling on connections at 80 %. */
const connectionsPolicy = (name: string) =>
  parsePolicyYaml(
    webPubSubPolicyYaml(
      name,
      `  units: { min: 1, max: 100 }
  metrics: { connections: { targetPercent: 80 } }
`,
    ),
  );
/** The reactive chat policy with `spec.anticipation.mode` (its spec is the file's last block). */
const withAnticipation = (mode: string) => parsePolicyYaml(`${CHAT_YAML}  anticipation: { mode: ${mode} }\n`);

describe("the sweep's variants", () => {
  it("are the grid of the default knobs on the chat policy: every signal's target × units.min", () => {
    const plan = planSweep(CHAT);
    expect(plan.knobs).toEqual([
      { name: "metrics.*.targetPercent", values: [50, 60, 70, 80, 90] },
      { name: "units.min", values: [2, 5, 10] },
    ]);
    expect(plan.policySettings).toEqual({ "metrics.*.targetPercent": "85/90/80", "units.min": 2 });
    expect(plan).toMatchObject({ combinations: 15, candidates: 15, sampled: false, skipped: [] });
    expect(plan.variants.map((v) => v.name)).toEqual(
      Array.from({ length: 15 }, (_, i) => `v${String(i + 1).padStart(2, "0")}`),
    );
    // Grid order: the first knob varies slowest.
    expect(plan.variants[0]?.settings).toEqual({ "metrics.*.targetPercent": 50, "units.min": 2 });
    expect(plan.variants[1]?.settings).toEqual({ "metrics.*.targetPercent": 50, "units.min": 5 });
    const v = plan.variants[4]?.policy.spec;
    expect(plan.variants[4]?.settings).toEqual({ "metrics.*.targetPercent": 60, "units.min": 5 });
    expect([v?.metrics.serverLoad?.targetPercent, v?.metrics.connections?.targetPercent]).toEqual([60, 60]);
    expect(v?.metrics.traffic?.targetPercent).toBe(60);
    expect(v?.units).toEqual({ min: 5, max: 300 });
    // The policy itself is never changed.
    expect(CHAT.spec.metrics.serverLoad?.targetPercent).toBe(85);
    expect(CHAT.spec.units.min).toBe(2);
  });

  it("switch anticipation off and on for a policy that has it", () => {
    const plan = planSweep(withAnticipation("ForecastOnly"));
    expect(plan.knobs.at(-2)).toEqual({ name: "anticipation.mode", values: ["Off", "Enabled"] });
    expect(plan.knobs.at(-1)).toEqual({ name: "anticipation.headroom.peakPercent", values: [0, 100] });
    expect(plan.policySettings["anticipation.mode"]).toBe("ForecastOnly");
    expect(plan).toMatchObject({ combinations: 60, candidates: 60, sampled: true });
    expect(planSweep(withAnticipation("Off")).knobs.at(-2)?.values).toEqual(["Off", "Enabled"]);
  });

  it("take one more knob as one line, and stay at most maxTrials, spread evenly over the grid", () => {
    const knobs = [...SWEEP_KNOBS.slice(0, 3), fieldKnob("anticipation.headroom.peakPercent", [0, 50])];
    // Without spec.anticipation the new knob does not apply.
    expect(planSweep(CHAT, knobs).combinations).toBe(15);
    const plan = planSweep(withAnticipation("Enabled"), knobs);
    expect(plan).toMatchObject({ combinations: 60, candidates: 60, sampled: true });
    expect(plan.variants).toHaveLength(30);
    expect(plan.variants[0]?.settings).toEqual({
      "metrics.*.targetPercent": 50,
      "units.min": 2,
      "anticipation.mode": "Off",
      "anticipation.headroom.peakPercent": 0,
    });
    expect(plan.variants[29]?.settings).toEqual({
      "metrics.*.targetPercent": 90,
      "units.min": 10,
      "anticipation.mode": "Enabled",
      "anticipation.headroom.peakPercent": 50,
    });
    expect(plan.variants[29]?.policy.spec.anticipation?.headroom.peakPercent).toBe(50);
    // 15 combinations, 4 runs: grid indices 0, 5, 9, 14 (3 floors per target).
    expect(
      planSweep(CHAT, SWEEP_KNOBS.slice(0, 3), 4).variants.map((x) => Object.values(x.settings)),
    ).toEqual([
      [50, 2],
      [60, 10],
      [80, 2],
      [90, 10],
    ]);
    expect(spreadIndices(15, 4)).toEqual([0, 5, 9, 14]);
    expect(spreadIndices(3, 5)).toEqual([0, 1, 2]);
    expect(() => planSweep(CHAT, SWEEP_KNOBS, 0)).toThrow(RangeError);
  });

  it("skip invalid combinations and the policy's own, and drop repeats", () => {
    const policy = connectionsPolicy("sweep");
    const knobs = [signalTargetKnob([80, 80]), fieldKnob("units.min", [1, 200])];
    const plan = planSweep(policy, knobs);
    // (80, 1) is the policy; (80, 200) is invalid; the second 80 repeats the first.
    expect(plan.combinations).toBe(4);
    expect(plan.variants).toEqual([]);
    expect(plan.skipped).toEqual([
      {
        settings: { "metrics.*.targetPercent": 80, "units.min": 200 },
        reason: "spec.units: min (200) must be <= max (100)",
      },
    ]);
    expect(unitsMinValues(policy.spec)).toEqual([1, 2, 5]);
    expect(unitsMinValues({ ...policy.spec, units: { min: 50, max: 100 } })).toEqual([50, 100]);
  });
});

describe("a sweep on a burst", () => {
  // Web PubSub, connections only: 3,000 connections for an hour, 15,000 for an hour, 3,000 again.
  const policy = connectionsPolicy("burst");
  const demand = steps([
    [60, 3_000],
    [60, 15_000],
    [60, 3_000],
  ]);
  const knobs = [signalTargetKnob([60, 80]), fieldKnob("units.min", [1, 20])];
  const input = { policy, ...testSetup(demand), knobs };

  it("places the policy and its variants on the cost-versus-refusals frontier, with the references beside it", () => {
    const progress: number[] = [];
    const s = sweep({ ...input, onProgress: (done) => progress.push(done) });
    // The comparison (oracle, policy, two native, static) and three variants, 180 minutes each.
    expect(progress.at(-1)).toBe(8 * 180);
    const by = Object.fromEntries(s.points.map((p) => [p.name, p]));
    expect(s.points.map((p) => [p.name, p.role])).toEqual([
      ["policy", "policy"],
      ["v01", "variant"],
      ["v02", "variant"],
      ["v03", "variant"],
      ["native-p1", "reference"],
      ["native-p2", "reference"],
      ["static", "reference"],
      ["oracle", "reference"],
    ]);
    expect(by["v03"]?.settings).toEqual({ "metrics.*.targetPercent": 80, "units.min": 20 });
    // A floor of 20 units (20,000 connections) at 80 %: holds 20 units all along (15,000 is 75 %),
    // never refuses: 60 unit-hours at 2 USD a unit-day.
    expect(by["v03"]).toMatchObject({ refusedConnectionMinutes: 0, onFrontier: true });
    expect(by["v03"]?.metrics.totalUnitHours).toBe(60);
    expect(by["v03"]?.costUsd).toBeCloseTo(5, 10);
    // At 60 % it scales 20 → 30 for the burst: the same (no) refusals, dearer — dominated by v03.
    expect(by["v02"]).toMatchObject({ refusedConnectionMinutes: 0, onFrontier: false, dominatedBy: "v03" });
    expect(by["v02"]?.metrics.peakUnits).toBe(30);
    // A floor of 1: the burst finds 5 units (5,000 connections) and refuses until the scale lands.
    for (const name of ["policy", "v01"]) {
      expect(by[name]?.refusedConnectionMinutes).toBeGreaterThan(10_000);
      expect(by[name]?.costUsd).toBeLessThan(5);
    }
    // The policy's point is the comparison's own policy run; a variant is the policy with its
    // settings, run on its own through the same engine.
    const alone = compare(input);
    expect(by["policy"]?.metrics).toEqual(alone.metrics[0]);
    expect(s.comparison.metrics).toEqual(alone.metrics);
    const at60 = structuredClone(policy);
    (at60.spec.metrics.connections as { targetPercent: number }).targetPercent = 60;
    expect({ ...by["v01"]?.metrics, name: "policy", description: "" }).toEqual({
      ...compare({ ...input, policy: at60 }).metrics[0],
      description: "",
    });
    // References are never on the frontier; the oracle refuses nothing.
    expect(by["oracle"]).toMatchObject({ onFrontier: false, refusedConnectionMinutes: 0 });
    expect(s.policy.onFrontier).toBe(by["policy"]?.onFrontier);
    expect(s.policy.onFrontier ? undefined : s.policy.safer).toBe(s.policy.onFrontier ? undefined : "v03");
    expect(s.plan.knobs.map((k) => k.name)).toEqual(["metrics.*.targetPercent", "units.min"]);
  });

  it("runs the same step by step and stops when aborted", async () => {
    expect((await sweepAsync(input)).points.map((p) => p.costUsd)).toEqual(
      sweep(input).points.map((p) => p.costUsd),
    );
    const abort = new AbortController();
    const stopped = sweepAsync(
      { ...input, onProgress: (done) => done > 5 * 180 && abort.abort(new Error("stop")) },
      abort.signal,
    );
    await expect(stopped).rejects.toThrow("stop");
  });
});
