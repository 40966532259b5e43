import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import { effectiveIngestionDelay, fillingBuckets, observeIngestion } from "./ingestion.js";
import { completePass, mergeStatus, planPass } from "./pass.js";
import type { MetricSample } from "./samples.js";
import { blank, NOW, policy, spec } from "./testing.js";

const MIN = 60_000;
const traffic = (start: number, bytes: number): MetricSample => ({
  ...blank(start),
  inboundBytesPerSecond: bytes / 2,
  outboundBytesPerSecond: bytes / 2,
});

describe("observeIngestion", () => {
  it("a bucket that grew after it was seen was still filling then: its age then is the observation", () => {
    const start = NOW - 3 * MIN; // ended 2 minutes before NOW
    const first = observeIngestion(undefined, [traffic(start, 500)], NOW);
    expect(first.observedDelaySeconds).toBeUndefined();
    const later = observeIngestion(first, [traffic(start, 1000)], NOW + 30_000);
    expect(later.observedDelaySeconds).toBe(120);
    expect(later.observedAt).toBe(new Date(NOW + 30_000).toISOString());
    // Unchanged totals observe nothing more; the observation stays.
    const again = observeIngestion(later, [traffic(start, 1000)], NOW + 60_000);
    expect(again.observedDelaySeconds).toBe(120);
  });

  it("forgets an observation after 6 hours when a new one comes", () => {
    const old = { observedDelaySeconds: 300, observedAt: new Date(NOW - 7 * 3_600_000).toISOString() };
    expect(observeIngestion(old, [], NOW).observedDelaySeconds).toBeUndefined();
    const fresh = { observedDelaySeconds: 300, observedAt: new Date(NOW - 3_600_000).toISOString() };
    expect(observeIngestion(fresh, [], NOW).observedDelaySeconds).toBe(300);
  });

  it("remembers at most the 10 newest buckets", () => {
    const many = Array.from({ length: 30 }, (_, i) => traffic(NOW - (30 - i) * MIN, 100));
    expect(observeIngestion(undefined, many, NOW).buckets).toHaveLength(10);
  });

  it("the delay used is the policy's or the observed one rounded up to a whole minute", () => {
    expect(effectiveIngestionDelay(180, undefined)).toBe(180);
    expect(effectiveIngestionDelay(60, { observedDelaySeconds: 119 })).toBe(120);
    expect(effectiveIngestionDelay(60, { observedDelaySeconds: 120 })).toBe(180);
    expect(effectiveIngestionDelay(300, { observedDelaySeconds: 119 })).toBe(300);
  });
});

describe("a stored observed delay is read within the bounds of spec.metrics.ingestionDelay", () => {
  const at = new Date(NOW - 60_000).toISOString();
  it.each([
    [1e9, 3_600],
    [3_599, 3_600],
    [Number.NaN, 180],
    [Number.POSITIVE_INFINITY, 180],
    [-600, 180],
  ])("observedDelaySeconds %d: the delay in use is %i s", (stored, used) => {
    const state = { observedDelaySeconds: stored, observedAt: at };
    expect(effectiveIngestionDelay(180, state)).toBe(used);
    // What the pass writes back is within the bound too (or dropped).
    const next = observeIngestion(state, [], NOW).observedDelaySeconds;
    expect(next === undefined || (next >= 0 && next <= 3_600)).toBe(true);
    expect(effectiveIngestionDelay(180, observeIngestion(state, [], NOW))).toBe(used);
  });

  it("a decision on a status with observedDelaySeconds 1e9 still reads its window, 1 h back at most", () => {
    const status: Partial<CapacityPolicyStatus> = {
      current: { sku: "Premium_P1", units: 10 },
      ingestion: { observedDelaySeconds: 1e9, observedAt: at },
    };
    // Full buckets for the last 2 hours: the window ends an hour before now.
    const buckets = Array.from({ length: 120 }, (_, i) => ({
      ...blank(NOW - (120 - i) * MIN),
      serverLoadPercent: 50,
    }));
    const instance = { sku: "Premium_P1", units: 10, provisioningState: "Succeeded", terminal: true };
    const s1 = spec({ metrics: { maxSampleAge: "2h" } });
    const plan = planPass({ policy: policy(s1), status, instance, samples: buckets, now: NOW });
    const codes = plan.decision?.reasons.map((r) => r.code) ?? [];
    expect(codes).toContain("IngestionDelayObserved");
    expect(plan.decision?.reasons.find((r) => r.code === "IngestionDelayObserved")?.message).toContain(
      "still filling 3600s after they ended: reading buckets at least 3600s old",
    );
    expect(plan.decision?.conditions.find((c) => c.type === "MetricsAvailable")?.status).toBe("True");
    expect(completePass(plan, {}).patch.ingestion?.observedDelaySeconds).toBe(3_600);
  });

  it("an observation dated later than now is read as made now, so it is forgotten in time", () => {
    const future = { observedDelaySeconds: 300, observedAt: "2999-01-01T00:00:00Z" };
    const now = observeIngestion(future, [], NOW);
    expect(now.observedAt).toBe(new Date(NOW).toISOString());
    expect(observeIngestion(now, [], NOW + 7 * 3_600_000).observedDelaySeconds).toBeUndefined();
    const unreadable = { observedDelaySeconds: 300, observedAt: "yesterday" };
    expect(observeIngestion(unreadable, [], NOW).observedDelaySeconds).toBeUndefined();
  });
});

describe("buckets still filling are never read as complete", () => {
  it("a bucket the last pass saw with other totals, already as old as the delay, is still filling", () => {
    const start = NOW - 3 * MIN; // 120 s old at NOW
    const first = observeIngestion(undefined, [traffic(start, 500)], NOW);
    expect(fillingBuckets(undefined, first, start, start + MIN, 120)).toEqual([]);
    const grew = observeIngestion(first, [traffic(start, 900)], NOW + 30_000);
    expect(fillingBuckets(first, grew, start, start + MIN, 120)).toEqual([start]);
    const same = observeIngestion(grew, [traffic(start, 900)], NOW + 60_000);
    expect(fillingBuckets(grew, same, start, start + MIN, 120)).toEqual([]);
  });

  it("a bucket the last pass saw younger than the delay was expected to change: not filling now", () => {
    const start = NOW - 3 * MIN; // 120 s old at NOW, 150 s at the next pass
    const first = observeIngestion(undefined, [traffic(start, 500)], NOW);
    const grew = observeIngestion(first, [traffic(start, 900)], NOW + 30_000);
    expect(fillingBuckets(first, grew, start, start + MIN, 150)).toEqual([]);
    expect(fillingBuckets(first, grew, start, start + MIN, 121)).toEqual([]);
    expect(fillingBuckets(first, grew, start, start + MIN, 120)).toEqual([start]);
  });

  // Traffic-only policy, window 1m and ingestionDelay 1m, on an instance whose buckets take 2
  // minutes after their end to fill (linearly over the minute before). Constant traffic that
  // 10 units carry at about 75 % of the target's capacity.
  const s = spec({
    metrics: {
      traffic: { workload: [{ scenario: "echo", share: 1 }], messageSizeBytes: 1024, targetPercent: 80 },
      window: "1m",
      ingestionDelay: "1m",
    },
    behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
  });
  delete s.metrics.serverLoad;
  // 75 % of what Premium_P1 × 10 carries on echo (80 % target): inside the tolerance band.
  const bytes = 30_700_000;

  it("holds the right size, learns the real delay and reports it", () => {
    const fill = (start: number, now: number) => Math.min(1, Math.max(0, (now - start - 2 * MIN) / MIN));
    let status: Partial<CapacityPolicyStatus> = { current: { sku: "Premium_P1", units: 10 } };
    const updates: number[] = [];
    let reasons: string[] = [];
    for (let now = NOW + 15_000; now < NOW + 2 * 3_600_000; now += 30_000) {
      const buckets: MetricSample[] = [];
      for (let t = Math.floor(now / MIN) * MIN - 10 * MIN; t < now; t += MIN) {
        const f = fill(t, now);
        if (f > 0) buckets.push(traffic(t, bytes * f));
      }
      const instance = { sku: "Premium_P1", units: 10, provisioningState: "Succeeded", terminal: true };
      const plan = planPass({ policy: policy(s), status, instance, samples: buckets, now });
      if (plan.update) updates.push(plan.update.to.units);
      reasons = plan.decision?.reasons.map((r) => r.code) ?? [];
      status = mergeStatus(status, completePass(plan, {}).patch);
    }
    expect(updates).toEqual([]);
    expect(status.ingestion?.observedDelaySeconds).toBeGreaterThan(60);
    expect(status.ingestion?.observedDelaySeconds).toBeLessThanOrEqual(120);
    expect(reasons).toContain("IngestionDelayObserved");
  });

  // With a pass a minute, every bucket enters the window at the pass after one that saw it
  // filling. Once the delay is learned that is expected, and it must not block scale-in for ever:
  // falling traffic scales in, whatever the phase of the passes against the minute.
  it.each([5_000, 15_000, 29_000, 45_000, 59_000])(
    "scales in on falling traffic once the delay is learned (a pass a minute, at +%i ms)",
    (phase) => {
      const fill = (start: number, now: number) => Math.min(1, Math.max(0, (now - start - 2 * MIN) / MIN));
      let status: Partial<CapacityPolicyStatus> = { current: { sku: "Premium_P1", units: 10 } };
      const updates: number[] = [];
      const end = NOW + 3 * 3_600_000;
      for (let now = NOW + phase; now < end; now += 60_000) {
        // Full for an hour, then a tenth of it.
        const level = (t: number) => (t < NOW + 3_600_000 ? bytes : bytes / 10);
        const buckets: MetricSample[] = [];
        for (let t = Math.floor(now / MIN) * MIN - 10 * MIN; t < now; t += MIN) {
          const f = fill(t, now);
          if (f > 0) buckets.push(traffic(t, level(t) * f));
        }
        const units = status.current?.units ?? 10;
        const instance = { sku: "Premium_P1", units, provisioningState: "Succeeded", terminal: true };
        const plan = planPass({ policy: policy(s), status, instance, samples: buckets, now });
        status = mergeStatus(status, completePass(plan, {}).patch);
        if (plan.update) {
          updates.push(plan.update.to.units);
          status = { ...status, current: plan.update.to };
        }
      }
      expect(status.ingestion?.observedDelaySeconds).toBeGreaterThan(60);
      expect(updates.length).toBeGreaterThan(0);
      expect(Math.min(...updates)).toBeLessThan(10);
    },
  );
});
