import { describe, expect, it } from "vitest";
import { DECISION_CONDITION_TYPES } from "../api/constants.js";
import type { CapacityPolicyStatus } from "../api/index.js";
import type { InstanceView } from "./operation.js";
import { completePass, mergeStatus, type PassInput, planPass } from "./pass.js";
import type { MetricSample } from "./samples.js";
import { NOW, policy, samples, spec } from "./testing.js";

const iso = (ms: number) => new Date(ms).toISOString();
const MIN = 60_000;
const ok = (units: number, sku = "Premium_P1"): InstanceView => ({
  sku,
  units,
  provisioningState: "Succeeded",
  terminal: true,
});
const updating = (units: number): InstanceView => ({
  sku: "Premium_P1",
  units,
  provisioningState: "Updating",
  terminal: false,
});
const hot = samples({ serverLoadPercent: 95 });

/** A pass input: P1 × 10 read as Succeeded, 95 % load, at NOW; `instance: undefined` = unread. */
function pass(p: Omit<Partial<PassInput>, "instance"> & { instance?: InstanceView | undefined }): PassInput {
  const { instance, ...rest } = p;
  const out: PassInput = { policy: policy(spec()), status: {}, samples: hot, now: NOW, ...rest };
  const read = "instance" in p ? instance : ok(10);
  if (read) out.instance = read;
  return out;
}

const inFlight = (sentAgoMs: number, from = 10, to = 20): NonNullable<CapacityPolicyStatus["operation"]> => ({
  startedAt: iso(NOW - sentAgoMs),
  from: { sku: "Premium_P1", units: from },
  to: { sku: "Premium_P1", units: to },
});

describe("planPass and completePass: the ARM update of a pass", () => {
  it("accepted: plans the update, keeps it in status.operation, records no scale event yet", () => {
    const plan = planPass(pass({}));
    expect(plan.update).toEqual({
      from: { sku: "Premium_P1", units: 10 },
      to: { sku: "Premium_P1", units: 20 },
      cause: "serverLoad",
      before: { serverLoadPercent: 95 },
    });
    const write = completePass(plan, { update: { kind: "accepted", startedAt: iso(NOW) } });
    expect(write.outcome).toBe("scaled");
    expect(write.patch.operation).toMatchObject({
      startedAt: iso(NOW),
      to: { units: 20 },
      before: { serverLoadPercent: 95 },
    });
    expect(write.patch.scaleEvents).toEqual([]);
    expect(write.patch.lastScaleTime).toBeNull();
    expect(write.events.map((e) => e.reason)).toEqual(["ScalingOut"]);
    expect(write.counts).toEqual([{ target: "instance", result: "started" }]);
    expect(write.requeueAfterMs).toBe(15_000);
    expect(write.drafts.find((d) => d.type === "AbleToScale")).toMatchObject({
      status: "False",
      reason: "ScaleInProgress",
    });
  });

  it("in progress after a restart: the stored update is kept, nothing is sent, AbleToScale=False", () => {
    const plan = planPass(pass({ status: { operation: inFlight(2 * MIN) }, instance: updating(10) }));
    expect(plan.update).toBeUndefined();
    const write = completePass(plan, {});
    expect(write.outcome).toBe("inProgress");
    expect(write.patch.operation).toEqual(inFlight(2 * MIN));
    expect(write.events).toEqual([]);
    expect(write.drafts.find((d) => d.type === "AbleToScale")?.reason).toBe("ScaleInProgress");
  });

  it("another writer's update (not terminal, nothing stored): waits, never stacks a second one", () => {
    const plan = planPass(pass({ instance: updating(10) }));
    expect(plan.update).toBeUndefined();
    expect(plan.waiting).toBe(true);
    const write = completePass(plan, {});
    expect(write.drafts.find((d) => d.type === "AbleToScale")?.message).toContain("waits for it");
    expect(write.patch.operation).toBeNull();
  });

  it("succeeded: the scale event carries when it was sent and when its completion was observed", () => {
    const status = { operation: inFlight(4 * MIN), lastScaleTime: iso(NOW - 3_600_000) };
    const write = completePass(planPass(pass({ status, instance: ok(20), samples: [] })), {});
    expect(write.patch.operation).toBeNull();
    expect(write.patch.lastScaleTime).toBe(iso(NOW));
    expect(write.patch.scaleEvents).toEqual([
      {
        time: iso(NOW),
        startedAt: iso(NOW - 4 * MIN),
        fromSku: "Premium_P1",
        fromUnits: 10,
        toSku: "Premium_P1",
        toUnits: 20,
      },
    ]);
    expect(write.events.map((e) => e.reason)).toEqual(["ScaleSucceeded"]);
    expect(write.counts).toContainEqual({ target: "instance", result: "succeeded" });
  });

  it("succeeded but not applied: the history stays as before the update (no settle window)", () => {
    const before = iso(NOW - 3_600_000);
    const status = { operation: inFlight(4 * MIN), lastScaleTime: before };
    const calm = samples({ serverLoadPercent: 20 }, { count: 20 });
    const plan = planPass(pass({ status, instance: ok(10), samples: calm }));
    const write = completePass(plan, {});
    expect(write.patch.lastScaleTime).toBe(before);
    expect(write.patch.scaleEvents).toEqual([]);
    expect(write.events.map((e) => e.reason)).toEqual(["ScaleNotApplied", "UpdateNotApplied"]);
    expect(write.counts).toContainEqual({ target: "instance", result: "not_applied" });
    // A low load right after is not held as Settling: it asks to scale in — after the backoff of
    // an ignored update (unapplied.ts).
    expect(plan.decision?.scaleIn.blockedBy).not.toContain("Settling");
    expect(plan.decision?.desired?.units).toBeLessThan(10);
    expect(plan.update).toBeUndefined();
    expect(plan.held?.notBeforeMs).toBe(NOW + MIN);
  });

  it("failed: the history stays as before the update, a Warning says how it ended", () => {
    const status = { operation: inFlight(4 * MIN) };
    const failed: InstanceView = {
      sku: "Premium_P1",
      units: 10,
      provisioningState: "Failed",
      terminal: true,
    };
    const write = completePass(planPass(pass({ status, instance: failed, samples: [] })), {});
    expect(write.patch.lastScaleTime).toBeNull();
    expect(write.patch.operation).toBeNull();
    expect(write.events[0]).toMatchObject({ type: "Warning", reason: "ScaleFailed" });
    expect(write.counts).toContainEqual({ target: "instance", result: "failed" });
  });

  it("a status of an earlier version, which recorded the event when the update was sent: moved, not doubled", () => {
    const status: Partial<CapacityPolicyStatus> = {
      operation: inFlight(4 * MIN),
      lastScaleTime: iso(NOW - 4 * MIN),
      scaleEvents: [
        { time: iso(NOW - 4 * MIN), fromSku: "Premium_P1", fromUnits: 10, toSku: "Premium_P1", toUnits: 20 },
      ],
    };
    const ended = completePass(planPass(pass({ status, instance: ok(20), samples: [] })), {});
    expect(ended.patch.scaleEvents).toHaveLength(1);
    expect(ended.patch.scaleEvents?.[0]?.time).toBe(iso(NOW));
    const failed = completePass(
      planPass(pass({ status, instance: { ...ok(10), provisioningState: "Failed" }, samples: [] })),
      {},
    );
    expect(failed.patch.scaleEvents).toEqual([]);
    expect(failed.patch.lastScaleTime).toBeNull();
  });

  it("409 from another writer: nothing stored, AbleToScale=False ScaleInProgress, a ScaleDeferred Warning", () => {
    const plan = planPass(pass({}));
    const write = completePass(plan, { update: { kind: "busy", message: "409 AnotherOperationInProgress" } });
    expect(write.patch.operation).toBeNull();
    expect(write.outcome).toBe("steady");
    expect(write.events).toEqual([
      { type: "Warning", reason: "ScaleDeferred", message: "409 AnotherOperationInProgress" },
    ]);
    expect(write.counts).toEqual([{ target: "instance", result: "conflict" }]);
    expect(write.drafts.find((d) => d.type === "AbleToScale")).toMatchObject({
      status: "False",
      reason: "ScaleInProgress",
    });
  });

  it("a refused update: FailedUpdateScale, nothing stored", () => {
    const write = completePass(planPass(pass({})), {
      update: { kind: "failed", message: "400 InvalidCapacity" },
    });
    expect(write.drafts.find((d) => d.type === "AbleToScale")?.reason).toBe("FailedUpdateScale");
    expect(write.events[0]?.reason).toBe("FailedScale");
  });

  it("the instance could not be read this pass: a stored update is still in flight", () => {
    const plan = planPass(
      pass({ status: { operation: inFlight(MIN), current: { sku: "Premium_P1", units: 10 } } }),
    );
    expect(plan.observation.busy).toBe(false);
    const unread = planPass(
      pass({
        status: { operation: inFlight(MIN), current: { sku: "Premium_P1", units: 10 } },
        instance: undefined,
        failure: { kind: "Network", message: "reset" },
      }),
    );
    expect(unread.observation.busy).toBe(true);
    expect(completePass(unread, {}).patch.operation).toEqual(inFlight(MIN));
  });

  it("an unknown instance with no stored size: InstanceUnavailable while the read may pass", () => {
    const plan = planPass(pass({ instance: undefined, failure: { kind: "Network", message: "reset" } }));
    const write = completePass(plan, {});
    expect(write.outcome).toBe("instanceUnavailable");
    expect(write.blocker).toEqual({ reason: "InstanceUnavailable", message: "Network: reset" });
  });

  it.each([
    ["NotFound", "InstanceNotFound", "check spec.target.resourceId"],
    ["Auth", "AuthorizationFailed", "grant the operator's identity its role"],
    ["InvalidRequest", "InvalidRequest", "refused as sent"],
  ])("an instance read refused durably (%s): %s, every condition", (kind, reason, fix) => {
    const failure = { kind, message: "instances.get: 4xx", read: "instance" as const };
    const write = completePass(planPass(pass({ instance: undefined, failure })), {});
    expect(write.blocker?.reason).toBe(reason);
    expect(write.blocker?.message).toContain(fix);
    expect(write.drafts.map((d) => d.type)).toEqual([...DECISION_CONDITION_TYPES]);
    expect(write.drafts.find((d) => d.type === "AbleToScale")).toMatchObject({ status: "False", reason });
    // With a stored size the decision is made, and Ready still names the refusal.
    const known = completePass(
      planPass(pass({ instance: undefined, failure, status: { current: { sku: "Premium_P1", units: 10 } } })),
      {},
    );
    expect(known.drafts.find((d) => d.type === "Ready")).toMatchObject({ status: "False", reason });
  });
});

describe("rebound after a scale-in (buckets that overlap a change)", () => {
  // Constant demand of 6.5 units of server load; Premium_P1 × 20 (32.5 %) scaled in to 10 (65 %).
  const steady = spec({
    behavior: {
      scaleDown: {
        stabilizationWindowSeconds: 0,
        policies: [{ type: "Percent", value: 50, periodSeconds: 600 }],
      },
    },
  });
  const loadAt = (units: number) => (6.5 / units) * 100;

  it("a bucket measured at 10 units that starts before the observed completion is read at 10 units", () => {
    // Sent at 11:50:00, applied at 11:53:04, observed at 11:53:15; now 12:00 (window 11:52–11:57).
    const applied = Date.parse("2025-06-02T11:53:04Z");
    const buckets: MetricSample[] = [];
    for (let t = NOW - 20 * MIN; t < NOW; t += MIN) {
      // The bucket's maximum: any part served at 10 units shows 65 %.
      const servedBy10 = t + MIN > applied;
      buckets.push({
        ...samples({}, { count: 1 })[0],
        time: iso(t),
        serverLoadPercent: loadAt(servedBy10 ? 10 : 20),
      } as MetricSample);
    }
    const status: Partial<CapacityPolicyStatus> = {
      current: { sku: "Premium_P1", units: 10 },
      lastScaleTime: "2025-06-02T11:53:15Z",
      scaleEvents: [
        {
          time: "2025-06-02T11:53:15Z",
          startedAt: "2025-06-02T11:50:00Z",
          fromSku: "Premium_P1",
          fromUnits: 20,
          toSku: "Premium_P1",
          toUnits: 10,
        },
      ],
    };
    const plan = planPass(pass({ policy: policy(steady), status, instance: ok(10), samples: buckets }));
    expect(plan.decision?.signals[0]?.value).toBeCloseTo(65, 5);
    expect(plan.update).toBeUndefined();
    expect(plan.decision?.reasons.map((r) => r.code)).toContain("WithinTolerance");
  });

  it("passes through the planner end to end: one scale-in, then no change for four hours", () => {
    let status: Partial<CapacityPolicyStatus> = {};
    let units = 20;
    let pending: { to: number; doneMs: number } | undefined;
    let appliedMs = Number.NEGATIVE_INFINITY;
    let prevUnits = 20;
    const updates: number[] = [];
    const start = NOW;
    for (let now = start; now < start + 4 * 3_600_000; now += 30_000) {
      if (pending && now >= pending.doneMs) {
        prevUnits = units;
        units = pending.to;
        appliedMs = pending.doneMs;
        pending = undefined;
      }
      const buckets: MetricSample[] = [];
      for (let t = Math.floor(now / MIN) * MIN - 15 * MIN; t < now - MIN; t += MIN) {
        const at = t + MIN > appliedMs ? units : prevUnits;
        buckets.push({
          ...samples({}, { count: 1 })[0],
          time: iso(t),
          serverLoadPercent: loadAt(at),
        } as MetricSample);
      }
      const instance = pending ? updating(units) : ok(units);
      const plan = planPass(pass({ policy: policy(steady), status, instance, samples: buckets, now }));
      const results = plan.update ? { update: { kind: "accepted" as const, startedAt: iso(now) } } : {};
      if (plan.update) {
        updates.push(plan.update.to.units);
        // Applied 3 min 4 s after it was sent, a few seconds into a minute.
        pending = { to: plan.update.to.units, doneMs: now + 184_000 };
      }
      status = mergeStatus(status, completePass(plan, results).patch);
    }
    expect(updates).toEqual([10]);
    expect(units).toBe(10);
  });
});
