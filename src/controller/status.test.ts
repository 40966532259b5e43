import { describe, expect, it } from "vitest";
import type { PolicyCondition } from "../api/index.js";
import { blockedConditions } from "../autoscale/conditions.js";
import { type ConditionDraft, changedConditions, replacingPatch, withReady } from "./status.js";

describe("replacingPatch: objects replace the stored ones whole", () => {
  it("removes, at every depth, what the new value no longer has", () => {
    const stored = {
      anticipation: {
        mode: "Enabled",
        units: 40,
        drivenBy: "LeadingSignal",
        leading: { state: "Unavailable", reason: "NoData", message: "ignored: not read yet" },
      },
      current: { sku: "Premium_P1", units: 10, replicas: 3 },
      lastScaleTime: "2025-06-02T12:00:00Z",
    };
    const patch = {
      anticipation: { mode: "Enabled", leading: { state: "Ok", message: "12 new connections/s" } },
      current: { sku: "Premium_P1", units: 20, replicas: 4 },
      operation: null,
      conditions: [{ type: "Ready" }],
      skipped: undefined,
    };
    expect(replacingPatch(stored, patch)).toEqual({
      anticipation: {
        mode: "Enabled",
        units: null,
        drivenBy: null,
        leading: { state: "Ok", reason: null, message: "12 new connections/s" },
      },
      current: { sku: "Premium_P1", units: 20, replicas: 4 },
      operation: null,
      conditions: [{ type: "Ready" }],
    });
  });

  it("leaves top-level fields it does not set alone, and sets a new object as it is", () => {
    expect(replacingPatch(undefined, { current: { units: 2 } })).toEqual({ current: { units: 2 } });
    expect(
      replacingPatch({ lastSample: { connections: 5 }, current: { units: 1 } }, { current: { units: 2 } }),
    ).toEqual({
      current: { units: 2 },
    });
    // An array or a value replaces an object (merge patch replaces non-objects whole).
    expect(replacingPatch({ rules: { a: 1 } }, { rules: [1] })).toEqual({ rules: [1] });
  });
});

describe("withReady: the kstatus conditions", () => {
  const fallback: ConditionDraft = {
    type: "Fallback",
    status: "True",
    reason: "FallbackHold",
    message: "4 consecutive failures (threshold 3): holding the current capacity",
  };
  const get = (conditions: ConditionDraft[], type: string) => conditions.find((c) => c.type === type);

  it("Reconciling=True while an update runs", () => {
    const out = withReady([], undefined, true);
    expect(get(out, "Ready")).toMatchObject({ status: "True" });
    expect(get(out, "Reconciling")).toMatchObject({ status: "True", reason: "ScaleInProgress" });
    expect(get(out, "Stalled")).toMatchObject({ status: "False", reason: "NotStalled" });
  });

  it("a policy in fallback while its update runs is Stalled and not Reconciling (kstatus: Failed, as Argo CD's Degraded)", () => {
    const out = withReady([fallback], undefined, true);
    expect(get(out, "Ready")).toMatchObject({ status: "False", reason: "Fallback" });
    expect(get(out, "Stalled")).toMatchObject({
      status: "True",
      reason: "Fallback",
      message: fallback.message,
    });
    expect(get(out, "Reconciling")).toMatchObject({ status: "False", reason: "Stalled" });
    expect(get(out, "Reconciling")?.message).toContain("an ARM update of the instance runs");
  });

  it("Reconciling=False, Idle without an update", () => {
    const out = withReady([fallback], undefined, false);
    expect(get(out, "Reconciling")).toMatchObject({ status: "False", reason: "Idle" });
    expect(get(out, "Stalled")).toMatchObject({ status: "True" });
  });

  const ready = (status: "True" | "False", reason: string): ConditionDraft => ({
    type: "Ready",
    status,
    reason,
    message: `${reason}: details`,
  });

  it.each([
    "UpdateRefused",
    "ProgressDeadlineExceeded",
    "InstanceNotFound",
    "AuthorizationFailed",
    "InvalidRequest",
  ])("Ready=False %s waits for a person: Stalled=True, not Reconciling", (reason) => {
    const out = withReady([ready("False", reason)], undefined, true);
    expect(get(out, "Stalled")).toMatchObject({ status: "True", reason });
    expect(get(out, "Reconciling")).toMatchObject({ status: "False", reason: "Stalled" });
  });

  it("a throttle of known length is not stalled: Reconciling=True (kstatus: InProgress)", () => {
    const out = withReady([ready("False", "Throttled")], undefined, false);
    expect(get(out, "Ready")).toMatchObject({ status: "False", reason: "Throttled" });
    expect(get(out, "Stalled")).toMatchObject({ status: "False", reason: "NotStalled" });
    expect(get(out, "Reconciling")).toMatchObject({ status: "True", reason: "Throttled" });
  });

  it("a blocked pass writes every condition type (an instance that does not exist)", () => {
    const blocker = {
      reason: "InstanceNotFound" as const,
      message: "Azure refuses to read the instance (NotFound)",
    };
    const out = withReady(blockedConditions(blocker), blocker, false);
    expect(out.map((c) => c.type)).toEqual([
      "Ready",
      "MetricsAvailable",
      "AbleToScale",
      "ScalingActive",
      "ScalingLimited",
      "Fallback",
      "Conflict",
      "Anticipating",
      "Reconciling",
      "Stalled",
    ]);
    expect(get(out, "Ready")).toMatchObject({ status: "False", reason: "InstanceNotFound" });
    expect(get(out, "AbleToScale")).toMatchObject({ status: "False", reason: "InstanceNotFound" });
    expect(get(out, "MetricsAvailable")).toMatchObject({ status: "Unknown", reason: "InstanceNotFound" });
    expect(get(out, "Stalled")).toMatchObject({ status: "True", reason: "InstanceNotFound" });
  });
});

describe("changedConditions: what makes an Event", () => {
  const c = (
    type: PolicyCondition["type"],
    status: PolicyCondition["status"],
    reason: string,
  ): PolicyCondition => ({
    type,
    status,
    reason,
    message: reason,
    lastTransitionTime: "2025-06-02T12:00:00Z",
  });

  it("a status change, and Ready staying False for another reason; not the same reason again", () => {
    const before = [c("Ready", "False", "InstanceUnavailable"), c("AbleToScale", "False", "A")];
    const next = [c("Ready", "False", "InstanceNotFound"), c("AbleToScale", "False", "B")];
    expect(changedConditions(before, next).map((x) => `${x.condition.type}/${x.condition.reason}`)).toEqual([
      "Ready/InstanceNotFound",
    ]);
    expect(changedConditions(next, next)).toEqual([]);
    expect(changedConditions([c("Ready", "True", "Reconciled")], [c("Ready", "True", "Paused")])).toEqual([]);
  });
});
