/**
 * An update that never ends: its deadline is 30 minutes or twice the longest scale measured on the
 * instance; past it the policy is Ready=False ProgressDeadlineExceeded (so Stalled) with the
 * update's age, still waiting for it and sending no other; when it ends, all clears.
 */
import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import type { InstanceView } from "./operation.js";
import { formatAge, MIN_UPDATE_DEADLINE_SECONDS, measuredScaleSeconds, updateAge } from "./overdue.js";
import { completePass, mergeStatus, type PassWrite, planPass } from "./pass.js";
import { NOW, policy, samples, spec } from "./testing.js";

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const event = (startedMs: number, tookMs: number) => ({
  time: iso(startedMs + tookMs),
  startedAt: iso(startedMs),
  fromSku: "Premium_P1" as const,
  fromUnits: 10,
  toSku: "Premium_P1" as const,
  toUnits: 20,
});

describe("updateAge", () => {
  it("30 minutes, or twice the longest measured scale when that is longer", () => {
    expect(updateAge(iso(NOW - 29 * MIN), NOW, [])).toMatchObject({
      deadlineSeconds: MIN_UPDATE_DEADLINE_SECONDS,
      overdue: false,
    });
    expect(updateAge(iso(NOW - 31 * MIN), NOW, []).overdue).toBe(true);
    // Scales measured at 5 and 25 minutes: 50 minutes.
    const events = [event(NOW - 5 * 3_600_000, 5 * MIN), event(NOW - 4 * 3_600_000, 25 * MIN)];
    expect(measuredScaleSeconds(events)).toEqual([300, 1500]);
    const age = updateAge(iso(NOW - 45 * MIN), NOW, events);
    expect(age).toMatchObject({ deadlineSeconds: 3000, overdue: false, ageSeconds: 2700 });
    expect(age.basis).toContain("25 min");
    // Anticipation's measured median counts too; a default one does not.
    expect(
      updateAge(iso(NOW), NOW, [], { scaleDurationSeconds: 1200, scaleDurationSource: "Measured" })
        .deadlineSeconds,
    ).toBe(2400);
    expect(
      updateAge(iso(NOW), NOW, [], { scaleDurationSeconds: 7200, scaleDurationSource: "Default" })
        .deadlineSeconds,
    ).toBe(1800);
  });

  it("formats ages as people read them", () => {
    expect([45, 720, 3900, 7 * 3600].map(formatAge)).toEqual(["45 s", "12 min", "1 h 05 min", "7 h 00 min"]);
  });
});

describe("an update that stays Updating for hours, through the planner", () => {
  /** P1 × 10 → 20 sent at NOW; the instance shows Updating until `endsMs`, then P1 × 20 Succeeded. */
  function run(endsMs: number, untilMs: number) {
    let status: Partial<CapacityPolicyStatus> = {
      current: { sku: "Premium_P1", units: 10 },
      operation: {
        startedAt: iso(NOW),
        from: { sku: "Premium_P1", units: 10 },
        to: { sku: "Premium_P1", units: 20 },
      },
    };
    const writes: { now: number; write: PassWrite; updates: number }[] = [];
    for (let now = NOW + 15_000; now < untilMs; now += 15_000) {
      const done = now >= endsMs;
      const instance: InstanceView = done
        ? { sku: "Premium_P1", units: 20, provisioningState: "Succeeded", terminal: true }
        : { sku: "Premium_P1", units: 10, provisioningState: "Updating", terminal: false };
      const plan = planPass({
        policy: policy(spec()),
        status,
        instance,
        samples: samples({ serverLoadPercent: 95 }, { now }),
        now,
      });
      const write = completePass(plan, {});
      writes.push({ now, write, updates: plan.update ? 1 : 0 });
      status = mergeStatus(status, write.patch);
    }
    return writes;
  }

  it("Ready until 30 minutes, then ProgressDeadlineExceeded with its age; no second update; clears when it ends", () => {
    const writes = run(NOW + 3 * 3_600_000, NOW + 3 * 3_600_000 + 5 * MIN);
    const ready = (w: PassWrite) => w.drafts.find((d) => d.type === "Ready");
    const before = writes.filter((w) => w.now <= NOW + 30 * MIN);
    const stuck = writes.filter((w) => w.now > NOW + 30 * MIN && w.now < NOW + 3 * 3_600_000);
    const after = writes.filter((w) => w.now >= NOW + 3 * 3_600_000);
    expect(before.every((w) => ready(w.write)?.status === "True")).toBe(true);
    expect(stuck.length).toBeGreaterThan(0);
    for (const w of stuck) {
      expect(ready(w.write)).toMatchObject({ status: "False", reason: "ProgressDeadlineExceeded" });
      expect(w.write.updateAge?.overdue).toBe(true);
    }
    expect(ready(stuck[0]?.write as PassWrite)?.message).toContain("has run for 30 min");
    expect(ready(stuck.at(-1)?.write as PassWrite)?.message).toMatch(
      /has run for 2 h 59 min, past its deadline of 30 min/,
    );
    expect(ready(stuck[0]?.write as PassWrite)?.message).toContain("ARM reports Updating");
    // While it runs, no other update is planned.
    expect([...before, ...stuck].reduce((n, w) => n + w.updates, 0)).toBe(0);
    expect(after[0]?.write.patch.operation).toBeNull();
    expect(after[0]?.write.updateAge).toBeUndefined();
    expect(ready(after[0]?.write as PassWrite)?.status).toBe("True");
    expect(after[0]?.write.events.map((e) => e.reason)).toContain("ScaleSucceeded");
  });
});
