/**
 * The soak (bench/soak.ts) at its documented policy count and speed, on a shorter span than
 * `npm run soak`'s default: 300 policies, 13 virtual minutes of random faults (about 3 rules a
 * minute) after a 3-minute warm-up and before the 3-minute drain, at 6× real time, seed "soak"
 * (3.2 minutes of real time) — the operator in its own process against the shared control plane
 * and the HTTPS emulator. What must never happen is counted and must be zero; the operator's heap
 * after a full collection must stay flat.
 */
import { describe, expect, it } from "vitest";
import { runSoak } from "../../bench/soak.js";
import { controlPlane, ensureCrd } from "../kube/support.js";
import { recordFault } from "./record.js";

describe("soak: 300 policies, 13 virtual minutes of random faults", () => {
  it("makes no duplicate ARM write, no scale-in on unknown data, no stalled cycle, and holds its heap", async () => {
    await ensureCrd();
    const r = await runSoak({
      kubeconfig: controlPlane().kubeconfigAdmin,
      policies: 300,
      virtualMinutes: 13,
      warmupMinutes: 3,
      speed: 6,
      seed: "soak",
      log: (line) => console.log(`[soak] ${line}`),
    });
    console.log(`[soak] ${JSON.stringify(r)}`);
    const first = r.memory[0];
    const last = r.memory.at(-1);
    recordFault({
      id: "soak",
      endpoint: "all",
      fault: `${r.faultRules} random fault rules over ${r.virtualMinutes} virtual minutes, ${r.policies} policies (seed ${r.seed})`,
      outcome: "no duplicate ARM write, no scale-in on unknown data, no stalled cycle, flat heap",
      test: "test/reliability/soak.test.ts",
      figures: {
        faultedRequests: r.faultedRequests,
        armWritesAccepted: r.armWritesAccepted,
        duplicateArmWrites: r.duplicateArmWrites,
        scaleInsOnUnknownData: r.scaleInsOnUnknownData,
        scaleIns: r.scaleIns,
        scaleInsAfterRise: r.scaleInsAfterRise,
        scaleInsBelowConnections: r.scaleInsBelowConnections,
        stalledPolicies: r.stalledPolicies,
        stalledCycles: r.stalledCycles,
        maxPassGapSeconds: r.maxPassGapSeconds,
        rssStartMb: first?.rssMb ?? 0,
        rssEndMb: last?.rssMb ?? 0,
        heapAfterGcStartMb: first?.heapAfterGcMb ?? 0,
        heapAfterGcEndMb: last?.heapAfterGcMb ?? 0,
        realSeconds: r.realSeconds,
      },
    });

    // The faults happened and the operator worked through them.
    // About 3 rules a virtual minute (bench/soak.ts), at least one on average.
    expect(r.faultRules).toBeGreaterThan(r.virtualMinutes);
    expect(r.faultedRequests).toBeGreaterThan(10);
    expect(r.armWritesAccepted).toBeGreaterThan(0);
    // At least one pass per policy per virtual minute (the poll interval is 30 s).
    expect(r.passes).toBeGreaterThan(r.policies * (r.warmupMinutes + r.virtualMinutes));
    // What must never happen.
    expect(r.duplicateSamples).toEqual([]);
    expect(r.duplicateArmWrites).toBe(0);
    expect(r.scaleIns).toBeGreaterThan(0);
    expect(r.scaleInsOnUnknownData).toBe(0);
    expect(r.stalledPolicies).toBe(0);
    expect(r.stalledCycles).toBe(0);
    // Flat memory: the heap after a full collection at the end within 25 % (+10 MB) of the start.
    expect(first).toBeDefined();
    expect(last?.heapAfterGcMb ?? Number.POSITIVE_INFINITY).toBeLessThan(
      (first?.heapAfterGcMb ?? 0) * 1.25 + 10,
    );
  }, 1_200_000);
});
