/**
 * Transient and permanent answers to the operator's reads, read the right way round, through the
 * running operator:
 * - four 429s with `Retry-After: 20` on the subscription's reads while an update to more units
 *   runs: a throttle of known length — the policy holds, says until when (`Ready=False`, reason
 *   Throttled, `Reconciling=True`), is never Stalled and never in fallback, and `status.desired`
 *   shows the running update's target; one ARM write;
 * - a resource ID that names nothing (404 ResourceNotFound) and a read the identity may not make
 *   (403 AuthorizationFailed): what a person must fix — `Ready=False` with a reason naming it,
 *   `Stalled=True`, one Warning Event, every condition type; no ARM write.
 */
import { describe, expect, it } from "vitest";
import { CONDITION_TYPES } from "../../src/api/constants.js";
import { recordFault } from "../reliability/record.js";
import { operatorPerTest, SUB, signalrId } from "./harness.js";
import { armWritesFor, condition, createPolicy, eventsOnce, getPolicy, policyManifest } from "./helpers.js";

const MIN = 60_000;
const suite = operatorPerTest({ stepped: true });
const EMULATOR = {
  speed: 60,
  scaleDurationMs: 10 * MIN,
  ingestionDelayMs: 120_000,
  noiseAmplitude: 0,
  armRateLimit: false,
};

describe("four 429s with Retry-After 20 s while an update runs", () => {
  it("holds without stalling, says until when, and shows the update's target as desired", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("throttled-reads", EMULATOR);
    const emulator = harness.emulator;
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 100 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    emulator.control.setDemand(id, { connections: 16_000 });
    const started = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.operation?.to.units).toBeGreaterThan(10);
        return p;
      },
      60_000,
      100,
    );
    const target = started.status?.operation?.to.units as number;
    const fault = emulator.control.addFault({
      method: "GET",
      path: `/subscriptions/${SUB}/**`,
      times: 4,
      action: {
        kind: "status",
        status: 429,
        code: "SubscriptionRequestsThrottled",
        message:
          "Number of read requests for subscription exceeded the limit of '12000' for time interval '01:00:00'.",
        retryAfterSeconds: 20,
      },
    });

    const seen = {
      stalled: [] as string[],
      fallback: 0,
      throttled: [] as string[],
      desired: new Set<number>(),
    };
    let lastFault = Number.POSITIVE_INFINITY;
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        const ready = condition(p, "Ready");
        if (condition(p, "Stalled")?.status === "True")
          seen.stalled.push(condition(p, "Stalled")?.reason ?? "");
        if (condition(p, "Fallback")?.status === "True") seen.fallback++;
        if (ready?.reason === "Throttled") {
          seen.throttled.push(ready.message);
          expect(condition(p, "Reconciling")).toMatchObject({ status: "True", reason: "Throttled" });
          // The update runs: nothing else is sent; the failed pass holds.
          expect(condition(p, "AbleToScale")).toMatchObject({ status: "False", reason: "ScaleInProgress" });
          expect(condition(p, "ScalingLimited")).toMatchObject({ status: "True", reason: "FailureCounted" });
        }
        if (p.status?.operation && p.status.desired) seen.desired.add(p.status.desired.units);
        const fired = emulator.control.requests().filter((r) => r.fault === fault.id);
        if (fired.length === 4) lastFault = Math.min(lastFault, Date.parse(fired[3]?.at ?? ""));
        // Until a minute after the fourth 429.
        expect(emulator.clock.nowMs()).toBeGreaterThan(lastFault + MIN);
      },
      60_000,
      50,
    );
    expect(seen.stalled).toEqual([]);
    expect(seen.fallback).toBe(0);
    expect(seen.throttled.length).toBeGreaterThan(0);
    expect(seen.throttled[0]).toMatch(/until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
    expect([...seen.desired]).toEqual([target]);
    const after = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBe(target);
        expect(condition(p, "Ready")?.status).toBe("True");
        return p;
      },
      60_000,
      200,
    );
    expect(condition(after, "Stalled")?.status).toBe("False");
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    recordFault({
      id: "arm-reads-429-retry-after-20s-four-times",
      endpoint: "ARM",
      fault: "four 429s with Retry-After: 20 on the subscription's reads while an update runs",
      outcome:
        "held, Ready=False Throttled with its end, Reconciling=True, never Stalled or in fallback; desired is the running update's target",
      test: "test/operator/read-failures.test.ts › four 429s with Retry-After 20 s while an update runs",
      figures: {
        armWrites: armWritesFor(requests.all, id).length,
        stalledPolls: seen.stalled.length,
        fallbackPolls: seen.fallback,
        desiredDuringThrottle: [...seen.desired].join(","),
      },
    });
  });
});

const PERMANENT = [
  {
    name: "a resource ID that names nothing (404 ResourceNotFound)",
    prefix: "not-found",
    policyOn: signalrId("nowhere", "rg-gone"),
    reason: "InstanceNotFound",
    faults: [] as { path: string; status: number; code: string; message: string }[],
    said: "ResourceNotFound",
  },
  {
    name: "an instance read the identity may not make (403 AuthorizationFailed)",
    prefix: "forbidden",
    policyOn: signalrId("chat"),
    reason: "AuthorizationFailed",
    faults: [
      {
        path: `/subscriptions/${SUB}/providers/Microsoft.SignalRService/SignalR`,
        status: 403,
        code: "AuthorizationFailed",
        message:
          "The client 'operator' does not have authorization to perform action 'Microsoft.SignalRService/SignalR/read'.",
      },
      {
        path: "**/SignalR/chat",
        status: 403,
        code: "AuthorizationFailed",
        message:
          "The client 'operator' does not have authorization to perform action 'Microsoft.SignalRService/SignalR/read'.",
      },
    ],
    said: "AuthorizationFailed",
  },
];

describe.each(PERMANENT)("$name", (c) => {
  it(`Ready=False ${c.reason}, Stalled=True, one Warning Event, every condition, no ARM write`, async () => {
    const { kube, ns, id, requests, harness } = await suite.start(c.prefix, EMULATOR);
    for (const f of c.faults) {
      harness.emulator.control.addFault({
        method: "GET",
        path: f.path,
        action: { kind: "status", status: f.status, code: f.code, message: f.message },
      });
    }
    await createPolicy(kube, policyManifest(ns, "chat", c.policyOn, { units: { min: 10, max: 100 } }));
    const p = await harness.eventually(
      async () => {
        const got = await getPolicy(kube, ns, "chat");
        expect(condition(got, "Ready")).toMatchObject({ status: "False", reason: c.reason });
        return got;
      },
      60_000,
      200,
    );
    expect(condition(p, "Stalled")).toMatchObject({ status: "True", reason: c.reason });
    expect(condition(p, "Ready")?.message).toContain(c.said);
    expect(p.status?.conditions?.map((x) => x.type).sort()).toEqual([...CONDITION_TYPES].sort());
    expect(condition(p, "AbleToScale")).toMatchObject({ status: "False", reason: c.reason });
    expect(condition(p, "ScalingLimited")).toMatchObject({ status: "Unknown", reason: c.reason });
    // A few more passes: still one Event.
    const from = harness.emulator.clock.nowMs();
    while (harness.emulator.clock.nowMs() < from + 2 * MIN) await harness.sleep(100);
    const events = await eventsOnce(kube, ns, "chat", (es) =>
      es.some((e) => e.type === "Warning" && e.reason === c.reason),
    );
    expect(events.filter((e) => e.type === "Warning" && e.reason === c.reason)).toHaveLength(1);
    expect(armWritesFor(requests.all, id)).toHaveLength(0);
    expect(armWritesFor(requests.all, c.policyOn)).toHaveLength(0);
    const later = await getPolicy(kube, ns, "chat");
    expect(condition(later, "Stalled")?.status).toBe("True");
    recordFault({
      id: `arm-instance-read-${c.prefix}`,
      endpoint: "ARM",
      fault: c.name,
      outcome: `Ready=False ${c.reason}, Stalled=True, one Warning Event, every condition type, no ARM write`,
      test: `test/operator/read-failures.test.ts › ${c.name}`,
      figures: { armWrites: 0, conditions: p.status?.conditions?.length ?? 0, warningEvents: 1 },
    });
  });
});
