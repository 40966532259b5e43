/**
 * PATCHes ARM refuses outright — an Azure Policy deny (403 RequestDisallowedByPolicy), a resource
 * lock (409 ScopeLocked), the subscription's unit quota (400 QuotaExceeded) — through the running
 * operator: 5 tries with backoff (1, 2, 4, 8 minutes), then none until the spec changes, counted
 * from the emulator's request log; Ready=False UpdateRefused, Stalled=True, AbleToScale=False,
 * ScalingLimited naming what refused it with Azure's code and message; one Warning Event per
 * refusal; `signalr_autoscaler_update_refused` in /metrics. A PATCH answered 503 twice is not a
 * refusal: the third is sent on the next pass and applies.
 */
import { describe, expect, it } from "vitest";
import { UNAPPLIED_LIMIT } from "../../src/autoscale/unapplied.js";
import { recordFault } from "../reliability/record.js";
import { operatorPerTest } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  eventsOnce,
  getPolicy,
  patchPolicy,
  policyManifest,
} from "./helpers.js";

const MIN = 60_000;
const suite = operatorPerTest({ stepped: true });

const CASES = [
  {
    name: "an Azure Policy deny",
    prefix: "refused-policy",
    status: 403,
    code: "RequestDisallowedByPolicy",
    message: "Resource 'chat' was disallowed by policy. Policy identifiers: 'allowed-skus'.",
    refusedBy: "Policy",
    limited: "RequestDisallowedByPolicy",
  },
  {
    name: "a resource lock",
    prefix: "refused-lock",
    status: 409,
    code: "ScopeLocked",
    message:
      "The scope '/subscriptions/…/SignalR/chat' cannot perform write operation because following scope(s) are locked: 'chat'.",
    refusedBy: "Lock",
    limited: "ScopeLocked",
  },
  {
    name: "the subscription's unit quota",
    prefix: "refused-quota",
    status: 400,
    code: "QuotaExceeded",
    message:
      "Operation results in exceeding quota limits of SignalR units. Maximum allowed: 150, current usage: 150.",
    refusedBy: "Quota",
    limited: "QuotaExceeded",
  },
] as const;

describe.each(CASES)("a PATCH refused by $name ($status $code)", (c) => {
  it(`${UNAPPLIED_LIMIT} tries with backoff, then none; Ready=False UpdateRefused, Stalled, ScalingLimited=${c.limited}`, async () => {
    const { kube, ns, id, requests, harness } = await suite.start(c.prefix, {
      speed: 60,
      scaleDurationMs: 120_000,
      ingestionDelayMs: 120_000,
      noiseAmplitude: 0,
      armRateLimit: false,
    });
    const emulator = harness.emulator;
    emulator.control.addFault({
      method: "PATCH",
      path: "**/SignalR/chat",
      action: { kind: "status", status: c.status, code: c.code, message: c.message },
    });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 100 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 60_000, 100);
    const firstMs = Date.parse(armWritesFor(requests.all, id)[0]?.at ?? "");

    // After the first refusal: held, stalled, what refused it named.
    const held = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "UpdateRefused" });
        return p;
      },
      30_000,
      100,
    );
    expect(condition(held, "Stalled")).toMatchObject({ status: "True", reason: "UpdateRefused" });
    expect(condition(held, "AbleToScale")).toMatchObject({ status: "False", reason: "UpdateRefused" });
    expect(condition(held, "ScalingLimited")).toMatchObject({ status: "True", reason: c.limited });
    expect(condition(held, "ScalingLimited")?.message).toContain(c.code);
    expect(condition(held, "ScalingLimited")?.message).toContain(c.message);
    expect(held.status?.conditions).toHaveLength(10);
    // /metrics follows the pass's status write.
    await harness.eventually(
      async () =>
        expect((await harness.metrics.expose()).body).toContain(
          `signalr_autoscaler_update_refused{namespace="${ns}",policy="chat",refused_by="${c.refusedBy}"} 1`,
        ),
      10_000,
      50,
    );

    // 25 virtual minutes: 5 tries, 1, 2, 4, 8 minutes apart, then none.
    const untilMs = firstMs + 25 * MIN;
    await harness.eventually(
      () => expect(emulator.clock.nowMs()).toBeGreaterThanOrEqual(untilMs),
      60_000,
      250,
    );
    const writes = armWritesFor(requests.all, id);
    expect(writes).toHaveLength(UNAPPLIED_LIMIT);
    expect(writes.every((r) => r.status === c.status)).toBe(true);
    const gaps = writes.slice(1).map((r, i) => (Date.parse(r.at) - Date.parse(writes[i]?.at ?? "")) / MIN);
    // The backoff counts from the pass that saw the refusal; the emulator logs each PATCH when it
    // arrives, after that pass's reads: two arrivals can be closer by the difference of two passes'
    // read latencies (well under 10 virtual seconds).
    const slack = 10 / 60;
    gaps.forEach((g, i) => {
      expect(g).toBeGreaterThanOrEqual(2 ** i - slack);
      expect(g).toBeLessThan(2 ** i + 1);
    });
    const stopped = await getPolicy(kube, ns, "chat");
    expect(stopped.status?.unappliedUpdates).toMatchObject({
      count: UNAPPLIED_LIMIT,
      lastOutcome: "Refused",
      refusedBy: c.refusedBy,
      code: c.code,
      to: { sku: "Premium_P1", units: 20 },
    });
    expect(condition(stopped, "Ready")?.message).toContain(
      "no more are sent until the spec or the instance changes",
    );
    expect(stopped.status?.current?.units).toBe(10);
    const events = await eventsOnce(kube, ns, "chat", (es) =>
      es.some((e) => e.type === "Warning" && e.reason === "ScaleRefused"),
    );
    expect(
      events
        .filter((e) => e.type === "Warning" && e.reason === "ScaleRefused")
        .every((e) => e.message.includes(c.code)),
    ).toBe(true);
    // Ready=False, UpdateRefused: one Event, not one per pass.
    expect(
      events.filter((e) => e.reason === "UpdateRefused" && e.message.startsWith("Ready=False")),
    ).toHaveLength(1);

    // The spec changes: one more try.
    await patchPolicy(kube, ns, "chat", { spec: { units: { min: 10, max: 90 } } });
    await harness.eventually(
      () => expect(armWritesFor(requests.all, id)).toHaveLength(UNAPPLIED_LIMIT + 1),
      60_000,
      200,
    );

    recordFault({
      id: `arm-patch-refused-${c.refusedBy.toLowerCase()}`,
      endpoint: "ARM",
      fault: `every PATCH answered ${c.status} ${c.code}`,
      outcome: `backoff 1, 2, 4, 8 min, none after ${UNAPPLIED_LIMIT} until the spec changes; Ready=False UpdateRefused (Stalled), ScalingLimited=${c.limited} with Azure's code and message, a Warning Event per refusal`,
      test: `test/operator/refusals.test.ts › ${c.name}`,
      figures: {
        armWritesIn25Minutes: writes.length,
        gapsMinutes: gaps.map((g) => g.toFixed(1)).join(","),
        ready: `${condition(stopped, "Ready")?.status}/${condition(stopped, "Ready")?.reason}`,
        scalingLimited: condition(stopped, "ScalingLimited")?.reason ?? "",
      },
    });
  });
});

describe("a PATCH answered 503 twice", () => {
  it("is not a refusal: sent again on the next passes, the third applies, never stalled", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("patch-503", {
      speed: 60,
      scaleDurationMs: 120_000,
      ingestionDelayMs: 120_000,
      noiseAmplitude: 0,
      armRateLimit: false,
    });
    harness.emulator.control.addFault({
      method: "PATCH",
      path: "**/SignalR/chat",
      times: 2,
      action: { kind: "status", status: 503, code: "ServiceUnavailable", message: "try again" },
    });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 100 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    harness.emulator.control.setDemand(id, { connections: 9000 });
    const stalled = new Set<string>();
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        const s = condition(p, "Stalled");
        if (s?.status === "True") stalled.add(s.reason);
        expect(p.status?.current?.units).toBe(20);
      },
      60_000,
      200,
    );
    const writes = armWritesFor(requests.all, id);
    // One PATCH per pass (the adapters do not retry): no backoff of minutes between them.
    expect(writes.filter((r) => r.status === 503)).toHaveLength(2);
    expect(writes.filter((r) => r.status >= 200 && r.status < 300)).toHaveLength(1);
    expect(Date.parse(writes.at(-1)?.at ?? "") - Date.parse(writes[0]?.at ?? "")).toBeLessThan(MIN);
    expect([...stalled]).toEqual([]);
    const p = await getPolicy(kube, ns, "chat");
    expect(p.status?.unappliedUpdates).toBeUndefined();
  });
});
