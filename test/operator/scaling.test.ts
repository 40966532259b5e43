/**
 * The scaling loop end to end: a policy reconciles to Ready; a load rise in the emulator leads to
 * one ARM update, then status and Events; a fall leads to scale-in only once the scale-down
 * stabilization window has passed (measured on the emulator's virtual clock); the app-server
 * Deployment follows through its scale subresource.
 */
import { describe, expect, it } from "vitest";
import { CHAT_HUB, createDeployment } from "../kube/support.js";
import { operatorSuite, signalrId } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  eventsFor,
  eventsOnce,
  getPolicy,
  policyManifest,
  requestCollector,
} from "./helpers.js";

const WINDOW_S = 300;

const requests = requestCollector();

const suite = operatorSuite("scale", {
  stepped: true,
  emulator: { speed: 60, scaleDurationMs: 240_000, onRequest: requests.onRequest },
});

describe("scaling", () => {
  it("is Ready, scales out on a rise, scales in only after the stabilization window, and the Deployment follows", async () => {
    const { kube, ns, h } = suite;
    const id = signalrId("chat");
    h.emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 2000 });
    await createDeployment(kube, ns, "chat-hub", 1);
    await createPolicy(
      kube,
      policyManifest(ns, "chat", id, {
        units: { min: 10, max: 50 },
        appServer: CHAT_HUB,
      }),
    );

    // Ready, with the instance's capacity and the Deployment's replicas in status.
    const ready = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "Reconciled" });
        expect(condition(p, "MetricsAvailable")?.status).toBe("True");
        expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 10, replicas: 3 });
        return p;
      },
      60_000,
      500,
    );
    expect(ready.status?.observedGeneration).toBe(ready.metadata.generation);
    // Client connections plus the app servers' own (the Endpoint dimension's server value).
    expect(ready.status?.lastSample?.connections).toBeGreaterThan(2000);
    expect(ready.status?.lastSample?.connections).toBeLessThan(2100);
    expect(armWritesFor(requests.all, id)).toHaveLength(0);
    // The first pass already sized the Deployment: 2,000+ connections at 1,000 per replica.
    expect(
      (await kube.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" })).spec?.replicas,
    ).toBe(3);

    // Rise (within the connection quota of 10 units): 9,000 connections at 80 % need 12 units →
    // 20 on the P1 ladder, in one step.
    const riseAt = h.emulator.clock.nowMs();
    h.emulator.control.setDemand(id, { connections: 9000 });
    await suite.h.eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 60_000, 200);
    const out = armWritesFor(requests.all, id)[0];
    expect(out?.method).toBe("PATCH");
    expect(Date.parse(out?.at ?? "")).toBeGreaterThan(riseAt);

    // While the update runs, status shows it; then the capacity in place and no operation.
    // (the update takes 4 virtual minutes, 4 s here).
    const during = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.operation?.to).toEqual({ sku: "Premium_P1", units: 20 });
        return p;
      },
      10_000,
      100,
    );
    expect(during.status?.operation?.from).toEqual({ sku: "Premium_P1", units: 10 });
    expect(condition(during, "AbleToScale")).toMatchObject({ status: "False", reason: "ScaleInProgress" });
    const scaledOut = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 20 });
        expect(p.status?.operation).toBeUndefined();
        expect(p.status?.lastScaleTime).toBeDefined();
        return p;
      },
      60_000,
      500,
    );
    expect(h.emulator.control.instance(id)).toMatchObject({ units: 20, provisioningState: "Succeeded" });
    // The scale event stands for the change in place: it is dated when the update was seen
    // complete (4 virtual minutes after the PATCH), not when it was sent.
    const event = scaledOut.status?.scaleEvents?.at(-1);
    expect(event).toMatchObject({ fromUnits: 10, toUnits: 20 });
    expect(Date.parse(event?.time ?? "")).toBeGreaterThanOrEqual(Date.parse(out?.at ?? "") + 240_000);
    expect(event?.time).toBe(scaledOut.status?.lastScaleTime);
    const events = await suite.h.eventually(async () => {
      const e = await eventsFor(kube, ns, "chat");
      expect(e.map((x) => x.reason)).toEqual(expect.arrayContaining(["ScalingOut", "ScaleSucceeded"]));
      return e;
    }, 20_000);
    expect(events.find((e) => e.reason === "ScalingOut")).toMatchObject({
      type: "Normal",
      message: expect.stringMatching(/Premium_P1 × 10 → Premium_P1 × 20 units/),
    });

    // The Deployment follows through the scale subresource: 9,000 client connections (plus the
    // app servers' own) at 1,000 per replica → 10 replicas, as status.desired says.
    await suite.h.eventually(
      async () => {
        const scale = await kube.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" });
        expect(scale.spec?.replicas).toBe(10);
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.desired?.replicas).toBe(10);
        expect(p.status?.current?.replicas).toBe(10);
      },
      60_000,
      500,
    );
    const deployment = await kube.apps.readNamespacedDeployment({ namespace: ns, name: "chat-hub" });
    expect(
      deployment.metadata?.managedFields?.some(
        (m) => m.manager === "signalr-autoscaler" && m.operation === "Apply" && !m.subresource,
      ),
    ).toBe(true);
    await eventsOnce(kube, ns, "chat", (es) =>
      es.some((e) => e.reason === "AppServersScaled" && /replicas 3 → 10/.test(e.message)),
    );

    // Fall: back to 2,000 connections (units.min 10). No scale-in inside the window, one scale-in after it.
    const fallAt = h.emulator.clock.nowMs();
    h.emulator.control.setDemand(id, { connections: 2000 });
    await suite.h.eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(2), 80_000, 200);
    const scaleIn = armWritesFor(requests.all, id)[1];
    const inAt = Date.parse(scaleIn?.at ?? "");
    expect(inAt - fallAt).toBeGreaterThanOrEqual(WINDOW_S * 1000);

    // Measured against the recommendations: the last pass that still wanted 20 units is at least a
    // window before the scale-in, and the scale-in came within a few polls after that.
    const passes = h.reports.flatMap((r) => (r.result?.decision ? [r.result.decision] : []));
    const high = passes.filter((d) => (d.recommendation?.units ?? 0) >= 20 && Date.parse(d.now) >= fallAt);
    const lastHigh = Math.max(...high.map((d) => Date.parse(d.now)));
    expect(Number.isFinite(lastHigh)).toBe(true);
    expect(inAt - lastHigh).toBeGreaterThanOrEqual(WINDOW_S * 1000);
    // (generous: a busy machine delays passes, and at 60× a real second is a virtual minute)
    expect(inAt - lastHigh).toBeLessThanOrEqual((WINDOW_S + 240) * 1000);
    // Inside the window the decision held 20 and said why.
    const held = passes.filter((d) => {
      const t = Date.parse(d.now);
      return t > lastHigh && t < inAt && d.desired?.units === 20;
    });
    expect(held.length).toBeGreaterThan(0);
    expect(held.every((d) => d.limitedBy === "StabilizedDown")).toBe(true);

    const scaledIn = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBe(10);
        expect(p.status?.operation).toBeUndefined();
        return p;
      },
      60_000,
      500,
    );
    expect(condition(scaledIn, "Ready")?.status).toBe("True");
    expect(h.emulator.control.instance(id)?.units).toBe(10);
    await eventsOnce(kube, ns, "chat", (es) => es.some((e) => e.reason === "ScalingIn"));
    await suite.h.eventually(
      async () => {
        const scale = await kube.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" });
        expect(scale.spec?.replicas).toBe(3);
      },
      30_000,
      500,
    );
    expect(armWritesFor(requests.all, id)).toHaveLength(2);
  });
});
