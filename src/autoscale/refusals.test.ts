/**
 * PATCHes ARM refuses outright, through the planner: a durable refusal (a quota, an Azure Policy
 * deny, a resource lock, an invalid request, a missing role, a missing instance) backs off as an
 * update that did not take — 1, 2, 4, 8 minutes, none after 5 until the spec changes — with
 * Ready=False UpdateRefused, AbleToScale=False, ScalingLimited naming what refused it with
 * Azure's code and message, and one Warning Event per refusal. A throttled or transiently failed
 * PATCH is not one: it is sent again on a later pass.
 */
import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus, RefusalCause } from "../api/index.js";
import type { InstanceView, UpdateResult } from "./operation.js";
import { completePass, mergeStatus, type PassWrite, planPass } from "./pass.js";
import { NOW, policy, samples, spec } from "./testing.js";
import { UNAPPLIED_LIMIT } from "./unapplied.js";

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const instance: InstanceView = {
  sku: "Premium_P1",
  units: 10,
  provisioningState: "Succeeded",
  terminal: true,
};

/** Passes every 30 s for `minutes` at 95 % load on P1 × 10; every PATCH is answered `answer`. */
function run(
  answer: (nowMs: number) => UpdateResult,
  minutes: number,
  status0: Partial<CapacityPolicyStatus> = {},
  generation = 1,
) {
  const p = policy(spec({ units: { min: 10, max: 100 } }));
  p.metadata = { generation };
  let status = status0;
  const sent: number[] = [];
  const writes: PassWrite[] = [];
  for (let now = NOW; now < NOW + minutes * MIN; now += 30_000) {
    const plan = planPass({
      policy: p,
      status,
      instance,
      samples: samples({ serverLoadPercent: 95 }, { now }),
      now,
    });
    if (plan.update) sent.push(now);
    const write = completePass(plan, plan.update ? { update: answer(now) } : {});
    writes.push(write);
    status = mergeStatus(status, write.patch);
  }
  return { sent, writes, status };
}

const refused = (by: RefusalCause, code: string, text: string): UpdateResult => ({
  kind: "refused",
  message: `instances.beginScale (sub/westeurope): refused (${code}: ${text})`,
  refusal: { by, code, message: `instances.beginScale (sub/westeurope): refused (${code}: ${text})` },
});

describe.each([
  ["Quota", "QuotaExceeded", "QuotaExceeded", "Operation results in exceeding quota limits of 150 units"],
  ["Policy", "RequestDisallowedByPolicy", "RequestDisallowedByPolicy", "Resource was disallowed by policy"],
  ["Lock", "ScopeLocked", "ScopeLocked", "The scope cannot perform write operation because it is locked"],
  ["Invalid", "InvalidRequestContent", "InvalidRequest", "The request content was invalid"],
  ["Unauthorized", "AuthorizationFailed", "AuthorizationFailed", "does not have authorization"],
  ["NotFound", "ResourceNotFound", "InstanceNotFound", "was not found"],
] as const)("a PATCH refused by %s (%s)", (by, code, limitedReason, text) => {
  it(`${UNAPPLIED_LIMIT} tries in 40 minutes with backoff, Ready=False UpdateRefused, ScalingLimited=${limitedReason}`, () => {
    const { sent, writes, status } = run(() => refused(by, code, text), 40);
    expect(sent).toHaveLength(UNAPPLIED_LIMIT);
    const gaps = sent.slice(1).map((t, i) => (t - (sent[i] as number)) / MIN);
    // Refused at once (no update runs): waits of 1, 2, 4, 8 minutes on the 30 s grid.
    expect(gaps).toEqual([1, 2, 4, 8]);
    expect(status.unappliedUpdates).toMatchObject({
      count: UNAPPLIED_LIMIT,
      lastOutcome: "Refused",
      refusedBy: by,
      code,
      // A count refused as invalid is not asked for again (ladders.ts): the tries walk the ladder.
      to: { sku: "Premium_P1", units: by === "Invalid" ? 60 : 20 },
    });
    expect(status.unappliedUpdates?.message).toContain(text);
    for (const w of writes.slice(1)) {
      const d = (type: string) => w.drafts.find((x) => x.type === type);
      expect(d("Ready")).toMatchObject({ status: "False", reason: "UpdateRefused" });
      expect(d("AbleToScale")).toMatchObject({ status: "False", reason: "UpdateRefused" });
      expect(d("ScalingLimited")).toMatchObject({ status: "True", reason: limitedReason });
      expect(d("ScalingLimited")?.message).toContain(code);
      expect(d("ScalingLimited")?.message).toContain(text);
    }
    // One Warning per refusal, none on the passes between.
    const warnings = writes.flatMap((w) => w.events).filter((e) => e.type === "Warning");
    expect(warnings.map((e) => e.reason)).toEqual(Array(UNAPPLIED_LIMIT).fill("ScaleRefused"));
    expect(writes.flatMap((w) => w.counts).filter((c) => c.result === "refused")).toHaveLength(
      UNAPPLIED_LIMIT,
    );
    expect(writes.at(-1)?.drafts.find((x) => x.type === "Ready")?.message).toContain(
      "no more are sent until the spec or the instance changes",
    );
    // A day later: still none. The spec changes: one more try.
    expect(run(() => refused(by, code, text), 10, status).sent).toEqual([]);
    expect(run(() => refused(by, code, text), 1, status, 2).sent).toEqual([NOW]);
  });
});

describe("answers that are not durable refusals", () => {
  it("a throttled PATCH waits for the throttle's end, not the backoff; no Event for a gate refusal", () => {
    const { sent, writes, status } = run(
      (now) => ({ kind: "throttled", message: "429", notBefore: iso(now + 20_000), sent: now === NOW }),
      3,
    );
    // Sent again on every pass (the adapter's throttle gate refuses locally until its end).
    expect(sent).toHaveLength(6);
    expect(status.unappliedUpdates).toBeUndefined();
    expect(writes[0]?.drafts.find((d) => d.type === "AbleToScale")).toMatchObject({
      status: "False",
      reason: "Throttled",
    });
    expect(writes[0]?.drafts.find((d) => d.type === "Ready")?.status).toBe("True");
    expect(writes.flatMap((w) => w.events).map((e) => e.reason)).toEqual(["ScaleThrottled"]);
  });

  it("a transient failure is sent again on the next pass", () => {
    const { sent, status } = run(() => ({ kind: "failed", message: "503 ServiceUnavailable" }), 2);
    expect(sent).toHaveLength(4);
    expect(status.unappliedUpdates).toBeUndefined();
  });

  it("a refused update that then applies clears the count", () => {
    const first = run(() => refused("Quota", "QuotaExceeded", "over quota"), 1).status;
    expect(first.unappliedUpdates?.count).toBe(1);
    const later = run(() => ({ kind: "accepted", startedAt: iso(NOW + 2 * MIN) }), 1, {
      ...first,
      unappliedUpdates: {
        ...(first.unappliedUpdates as NonNullable<CapacityPolicyStatus["unappliedUpdates"]>),
        lastTime: iso(NOW - 10 * MIN),
      },
    });
    expect(later.sent).toEqual([NOW]);
    expect(later.status.operation).toBeDefined();
  });
});

describe("a PATCH refused as invalid", () => {
  it("leaves its count out of the ladder: the next try asks for the next count", () => {
    const { status } = run(() => refused("Invalid", "InvalidCapacity", "capacity 20 is not allowed"), 1);
    expect(status.unitLadders?.excluded).toEqual([
      expect.objectContaining({ sku: "Premium_P1", units: 20, outcome: "Refused" }),
    ]);
    const plan = planPass({
      policy: { ...policy(spec({ units: { min: 10, max: 100 } })), metadata: { generation: 1 } },
      status: {
        ...status,
        unappliedUpdates: {
          ...(status.unappliedUpdates as NonNullable<CapacityPolicyStatus["unappliedUpdates"]>),
          lastTime: iso(NOW - 10 * MIN),
        },
      },
      instance,
      samples: samples({ serverLoadPercent: 95 }, { now: NOW + 10 * MIN }),
      now: NOW + 10 * MIN,
    });
    expect(plan.update?.to).toEqual({ sku: "Premium_P1", units: 30 });
  });
});
