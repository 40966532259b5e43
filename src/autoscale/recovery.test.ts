import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import { unitChanges } from "./capacity-timeline.js";
import type { InstanceView } from "./operation.js";
import { completePass, mergeStatus, type PassResults, planPass } from "./pass.js";
import { recoverChange } from "./recovery.js";
import type { MetricSample } from "./samples.js";
import { NOW, policy, samples, spec } from "./testing.js";

const iso = (ms: number) => new Date(ms).toISOString();
const MIN = 60_000;
const P1 = (units: number) => ({ sku: "Premium_P1" as const, units });
const view = (units: number, terminal = true): InstanceView => ({
  sku: "Premium_P1",
  units,
  provisioningState: terminal ? "Succeeded" : "Updating",
  terminal,
});

describe("recoverChange", () => {
  it("a size the stored status does not know, terminal: a recovered scale event, no start", () => {
    const r = recoverChange({ current: P1(10) }, view(20), iso(NOW));
    expect(r.scale).toEqual({ time: iso(NOW), from: P1(10), to: P1(20), recovered: true });
    expect(r.operation).toBeUndefined();
    expect(r.events.map((e) => [e.type, e.reason])).toEqual([["Normal", "UnrecordedScale"]]);
  });

  it("ARM already shows the target while the update runs: kept as a recovered update in flight", () => {
    const r = recoverChange({ current: P1(10) }, view(20, false), iso(NOW));
    expect(r.operation).toEqual({ startedAt: iso(NOW), from: P1(10), to: P1(20), recovered: true });
    expect(r.scale).toBeUndefined();
  });

  it.each([
    ["the same size", { current: P1(10) }, view(10)],
    ["no stored size (a new policy)", {}, view(20)],
    [
      "an update of ours stored",
      { current: P1(10), operation: { startedAt: iso(NOW), from: P1(10), to: P1(20) } },
      view(20),
    ],
    ["no read", { current: P1(10) }, undefined],
    ["a SKU it does not scale", { current: P1(10) }, { ...view(1), sku: "Free_F1" }],
  ] as const)("nothing to recover: %s", (_, status, instance) => {
    const r = recoverChange(
      status as Partial<CapacityPolicyStatus>,
      instance as InstanceView | undefined,
      iso(NOW),
    );
    expect(r).toEqual({ events: [] });
  });

  it("a recovered change overlaps every bucket before its completion", () => {
    const changes = unitChanges([
      {
        time: iso(NOW),
        recovered: true,
        fromSku: "Premium_P1",
        fromUnits: 10,
        toSku: "Premium_P1",
        toUnits: 20,
      },
    ]);
    expect(changes[0]?.startedMs).toBe(Number.NEGATIVE_INFINITY);
    const inFlight = unitChanges([], { startedAt: iso(NOW), from: P1(10), to: P1(20), recovered: true });
    expect(inFlight[0]?.startedMs).toBe(Number.NEGATIVE_INFINITY);
  });
});

/**
 * Passes every 30 s through the planner over two hours: P1 × 10, server-load demand of 2 units
 * rising to 9 at the start (target 70 %: 10 → 20 units is the one right update). The update
 * takes 3 min 4 s; the status write of the pass that sent it is lost. `showsTarget`: ARM reports
 * the new size while the update runs (the emulator shows the old one until it completes).
 */
function lostWriteRun(showsTarget: boolean): {
  updates: number[];
  units: number;
  status: Partial<CapacityPolicyStatus>;
} {
  const steady = spec({
    units: { min: 10, max: 50 },
    behavior: {
      scaleDown: {
        stabilizationWindowSeconds: 300,
        policies: [{ type: "Percent", value: 100, periodSeconds: 60 }],
      },
    },
  });
  let status: Partial<CapacityPolicyStatus> = {};
  let units = 10;
  let pending: { to: number; doneMs: number } | undefined;
  let appliedMs = Number.NEGATIVE_INFINITY;
  let prevUnits = 10;
  const updates: number[] = [];
  const riseMs = NOW + 10 * MIN;
  for (let now = NOW; now < NOW + 2 * 3_600_000; now += 30_000) {
    if (pending && now >= pending.doneMs) {
      prevUnits = units;
      units = pending.to;
      appliedMs = pending.doneMs;
      pending = undefined;
    }
    const buckets: MetricSample[] = [];
    for (let t = Math.floor(now / MIN) * MIN - 15 * MIN; t < now - MIN; t += MIN) {
      const demand = t + MIN > riseMs ? 9 : 2;
      // The bucket's maximum: any part served by the smaller size shows its load.
      const at = t + MIN > appliedMs ? units : Math.min(units, prevUnits);
      buckets.push({
        ...samples({}, { count: 1 })[0],
        time: iso(t),
        serverLoadPercent: (demand / at) * 100,
      } as MetricSample);
    }
    const instance = pending ? view(showsTarget ? pending.to : units, false) : view(units);
    const plan = planPass({ policy: policy(steady), status, instance, samples: buckets, now });
    const results: PassResults = plan.update ? { update: { kind: "accepted", startedAt: iso(now) } } : {};
    const lost = plan.update !== undefined;
    if (plan.update) {
      updates.push(plan.update.to.units);
      pending = { to: plan.update.to.units, doneMs: now + 184_000 };
    }
    const write = completePass(plan, results);
    if (!lost) status = mergeStatus(status, write.patch);
  }
  return { updates, units, status };
}

describe("a lost status write after an accepted update", () => {
  it("one demand change, one update: the change is recovered from the instance, never read at the new size", () => {
    const { updates, units, status } = lostWriteRun(false);
    expect(updates).toEqual([20]);
    expect(units).toBe(20);
    expect(status.scaleEvents?.at(-1)).toMatchObject({ fromUnits: 10, toUnits: 20, recovered: true });
    expect(status.scaleEvents?.at(-1)?.startedAt).toBeUndefined();
  });

  it("the same when ARM shows the target while the update runs", () => {
    const { updates, units, status } = lostWriteRun(true);
    expect(updates).toEqual([20]);
    expect(units).toBe(20);
    expect(status.scaleEvents?.at(-1)).toMatchObject({ fromUnits: 10, toUnits: 20, recovered: true });
  });
});
