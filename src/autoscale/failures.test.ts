/**
 * Transient and durable read failures through the planner: a throttle of known length holds the
 * capacity without the fallback and says until when; past an hour (its end, or the run of
 * throttled passes) it is read as any other failure; a read Azure refuses durably (404, 401/403,
 * 400) makes the policy Ready=False with a reason naming it; while an update runs, a failed pass
 * holds (and shows as desired) the size the update is reaching.
 */
import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import { durableFailure, nearThrottleEnd, THROTTLE_NEAR_MS } from "./failures.js";
import type { PassFailure } from "./fallback.js";
import { completePass, mergeStatus, planPass } from "./pass.js";
import { NOW, policy, samples, spec } from "./testing.js";

const iso = (ms: number) => new Date(ms).toISOString();
const MIN = 60_000;
const throttled = (endMs: number, read: "instance" | "metrics" = "instance"): PassFailure => ({
  kind: "Throttled",
  message: `instances.listBySubscription: throttled (429); retry after 20s, at ${iso(endMs)}`,
  read,
  notBefore: iso(endMs),
});

describe("nearThrottleEnd", () => {
  it("is the throttle's end while it is at most an hour away and the throttled run is under an hour", () => {
    expect(nearThrottleEnd(throttled(NOW + 20_000), NOW, 1, 30)).toBe(NOW + 20_000);
    expect(nearThrottleEnd(throttled(NOW + THROTTLE_NEAR_MS), NOW, 1, 30)).toBe(NOW + THROTTLE_NEAR_MS);
    // An end already passed is now.
    expect(nearThrottleEnd(throttled(NOW - 5_000), NOW, 1, 30)).toBe(NOW);
    // Over an hour away, or after 120 throttled passes of 30 s: not near.
    expect(nearThrottleEnd(throttled(NOW + THROTTLE_NEAR_MS + 1), NOW, 1, 30)).toBeUndefined();
    expect(nearThrottleEnd(throttled(NOW + 20_000), NOW, 121, 30)).toBeUndefined();
    expect(nearThrottleEnd(throttled(NOW + 20_000), NOW, 120, 30)).toBe(NOW + 20_000);
  });

  it("is undefined for any other failure, and for a throttle of unknown end", () => {
    expect(nearThrottleEnd({ kind: "Network", message: "reset" }, NOW, 1, 30)).toBeUndefined();
    expect(nearThrottleEnd({ kind: "Throttled", message: "429" }, NOW, 1, 30)).toBeUndefined();
    expect(
      nearThrottleEnd({ kind: "Throttled", message: "429", notBefore: "soon" }, NOW, 1, 30),
    ).toBeUndefined();
    expect(nearThrottleEnd(undefined, NOW, 1, 30)).toBeUndefined();
  });
});

describe("durableFailure", () => {
  it.each([
    ["NotFound", "InstanceNotFound"],
    ["Auth", "AuthorizationFailed"],
    ["InvalidRequest", "InvalidRequest"],
  ])("%s → %s, naming the read and Azure's message", (kind, reason) => {
    const d = durableFailure({ kind, message: "instances.get: 4xx Code: text", read: "metrics" });
    expect(d?.reason).toBe(reason);
    expect(d?.message).toContain("its metrics");
    expect(d?.message).toContain("4xx Code: text");
  });

  it.each(["Throttled", "Network", "NoData", "ApiError", "Credential"])("%s is not durable", (kind) => {
    expect(durableFailure({ kind, message: "x" })).toBeUndefined();
  });
});

/** P1 × 30 with an update to 60 in flight (Updating); the instance read fails `failure` on every pass. */
function throttledRun(failure: (nowMs: number) => PassFailure, passes: number) {
  let status: Partial<CapacityPolicyStatus> = {
    current: { sku: "Premium_P1", units: 30 },
    operation: {
      startedAt: iso(NOW - MIN),
      from: { sku: "Premium_P1", units: 30 },
      to: { sku: "Premium_P1", units: 60 },
    },
  };
  const writes = [];
  for (let i = 0; i < passes; i++) {
    const now = NOW + i * 10_000;
    const plan = planPass({
      policy: policy(spec({ pollIntervalSeconds: 10, fallback: { failureThreshold: 3, action: "Hold" } })),
      status,
      failure: failure(now),
      samples: samples({ serverLoadPercent: 95 }, { now }),
      now,
    });
    const write = completePass(plan, {});
    writes.push(write);
    status = mergeStatus(status, write.patch);
  }
  return { writes, status };
}

describe("a throttle of known length", () => {
  it("four 429s with Retry-After 20 s: held, not stalled, no fallback; desired is the update's target", () => {
    const { writes, status } = throttledRun((now) => throttled(now + 20_000), 4);
    expect(status.consecutiveFailures).toBe(4);
    for (const w of writes) {
      const ready = w.drafts.find((d) => d.type === "Ready");
      expect(ready).toMatchObject({ status: "False", reason: "Throttled" });
      expect(ready?.message).toMatch(/until \d{4}-\d\d-\d\dT/);
      expect(w.drafts.find((d) => d.type === "Fallback")).toMatchObject({
        status: "False",
        reason: "Throttled",
      });
      expect(w.decision?.fallback.active).toBe(false);
      // The update to 60 runs: that is what the policy wants and holds.
      expect(w.patch.desired).toMatchObject({ sku: "Premium_P1", units: 60 });
      expect(w.patch.operation).toMatchObject({ to: { units: 60 } });
    }
    expect(writes.at(-1)?.decision?.reasons.find((r) => r.code === "FailureCounted")?.message).toContain(
      "holding Premium_P1 60 (the update in flight)",
    );
  });

  it("a throttle whose end is over an hour away is any failure: the fallback applies at the threshold", () => {
    const { writes } = throttledRun((now) => throttled(now + THROTTLE_NEAR_MS + MIN), 3);
    expect(writes.at(-1)?.decision?.fallback.active).toBe(true);
    expect(writes.at(-1)?.drafts.find((d) => d.type === "Fallback")?.status).toBe("True");
    expect(writes.at(-1)?.patch.desired).toMatchObject({ units: 60 });
  });

  it("a transient failure (no known end) falls back at the threshold, as before", () => {
    const { writes } = throttledRun(() => ({ kind: "Network", message: "reset", read: "instance" }), 3);
    expect(writes.map((w) => w.decision?.fallback.active)).toEqual([false, false, true]);
    expect(writes.at(-1)?.drafts.find((d) => d.type === "Fallback")).toMatchObject({
      status: "True",
      reason: "FallbackHold",
    });
  });
});

describe("a read Azure refuses durably, with the instance's size known", () => {
  it.each([
    ["NotFound", "InstanceNotFound"],
    ["Auth", "AuthorizationFailed"],
  ])("%s on the instance read: Ready=False %s at once, holding the size", (kind, reason) => {
    const plan = planPass({
      policy: policy(spec()),
      status: { current: { sku: "Premium_P1", units: 10 } },
      failure: { kind, message: "instances.get: refused", read: "instance" },
      samples: [],
      now: NOW,
    });
    const write = completePass(plan, {});
    expect(write.drafts.find((d) => d.type === "Ready")).toMatchObject({ status: "False", reason });
    expect(write.patch.desired).toMatchObject({ units: 10 });
    expect(plan.update).toBeUndefined();
  });
});
