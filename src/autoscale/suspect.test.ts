import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import type { InstanceView } from "./operation.js";
import { completePass, mergeStatus, planPass } from "./pass.js";
import type { MetricSample } from "./samples.js";
import { suspectServerLoad } from "./suspect.js";
import { blank, NOW, policy, spec } from "./testing.js";

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Runs passes every 30 s (15 s while an update runs; updates take 3 minutes) for `hours`, with
 * buckets from `bucket(start, unitsServing)`; returns the units of every update sent.
 */
function run(bucket: (start: number, units: number) => Partial<MetricSample>, hours: number): number[] {
  const s = spec({
    units: { min: 1, max: 100 },
    metrics: { serverLoad: { targetPercent: 70 }, connections: { targetPercent: 80 } },
  });
  let status: Partial<CapacityPolicyStatus> = { current: { sku: "Premium_P1", units: 10 } };
  let units = 10;
  const changes: { at: number; units: number }[] = [{ at: 0, units: 10 }];
  let pending: { to: number; doneMs: number } | undefined;
  const updates: number[] = [];
  for (let now = NOW; now < NOW + hours * 3_600_000; now += status.operation ? 15_000 : 30_000) {
    if (pending && now >= pending.doneMs) {
      units = pending.to;
      changes.push({ at: pending.doneMs, units });
      pending = undefined;
    }
    const servedAt = (t: number) => changes.filter((c) => c.at <= t).at(-1)?.units ?? 10;
    const buckets: MetricSample[] = [];
    for (let t = Math.floor(now / MIN) * MIN - 15 * MIN; t < now - MIN; t += MIN) {
      buckets.push({ ...blank(t), ...bucket(t, servedAt(t + MIN - 1)) });
    }
    const instance: InstanceView = {
      sku: "Premium_P1",
      units,
      provisioningState: pending ? "Updating" : "Succeeded",
      terminal: !pending,
    };
    const plan = planPass({ policy: policy(s), status, instance, samples: buckets, now });
    if (plan.update) {
      updates.push(plan.update.to.units);
      pending = { to: plan.update.to.units, doneMs: now + 180_000 };
    }
    const write = completePass(
      plan,
      plan.update ? { update: { kind: "accepted", startedAt: iso(now) } } : {},
    );
    status = mergeStatus(status, write.patch);
  }
  return updates;
}

describe("a signal that does not respond to capacity", () => {
  it("server load stuck at 95 % with 1,100–2,000 connections: one scale-out an hour, not six", () => {
    const stuck = run((t) => ({ serverLoadPercent: 95, connections: 1100 + ((t / MIN) % 10) * 90 }), 1);
    expect(stuck).toEqual([20]);
    const twoHours = run((t) => ({ serverLoadPercent: 95, connections: 1100 + ((t / MIN) % 10) * 90 }), 2.2);
    expect(twoHours.length).toBeLessThanOrEqual(3);
  });

  it("a real, growing load is never held: server load follows connections that grow", () => {
    // Demand doubles every 20 minutes from 9 units' worth; load = demand ÷ the units serving.
    const demandUnits = (t: number) => 9 * 2 ** ((t - NOW) / (20 * MIN));
    const growing = run(
      (t, units) => ({
        serverLoadPercent: Math.min(100, (demandUnits(t) / units) * 100),
        connections: Math.min(units * 1000, demandUnits(t) * 1000),
      }),
      1,
    );
    expect(growing.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...growing)).toBeGreaterThanOrEqual(60);
  });

  it("says why, and holds only server load", () => {
    const event = {
      time: iso(NOW - 20 * MIN),
      fromSku: "Premium_P1" as const,
      fromUnits: 10,
      toSku: "Premium_P1" as const,
      toUnits: 20,
      before: { serverLoadPercent: 95, connections: 2000 },
    };
    const levels = (l: { serverLoadPercent?: number; connections?: number }) => () => l;
    const held = suspectServerLoad(event, levels({ serverLoadPercent: 94, connections: 1900 }), NOW);
    expect(held?.message).toContain("did not respond to the scale-out 10 → 20");
    // It fell as expected: trusted.
    expect(suspectServerLoad(event, levels({ serverLoadPercent: 48, connections: 2000 }), NOW)).toBe(
      undefined,
    );
    // Connections doubled: the load is real.
    expect(suspectServerLoad(event, levels({ serverLoadPercent: 95, connections: 4000 }), NOW)).toBe(
      undefined,
    );
    // Nothing absolute to check with: never held on a guess.
    expect(suspectServerLoad(event, levels({ serverLoadPercent: 95 }), NOW)).toBe(undefined);
    // No bucket after the completion yet, or more than an hour after it: not judged.
    expect(suspectServerLoad(event, levels({}), NOW)).toBe(undefined);
    expect(
      suspectServerLoad(event, levels({ serverLoadPercent: 95, connections: 2000 }), NOW + 41 * MIN),
    ).toBe(undefined);
    // A scale-in is never a reason.
    const scaleIn = { ...event, fromUnits: 20, toUnits: 10 };
    expect(suspectServerLoad(scaleIn, levels({ serverLoadPercent: 95, connections: 2000 }), NOW)).toBe(
      undefined,
    );
  });
});
