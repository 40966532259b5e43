import { describe, expect, it } from "vitest";
import { CHAT_HUB, createDeployment, kubectl } from "../kube/support.js";
import { operatorSuite, signalrId } from "./harness.js";
import { condition, createPolicy, getPolicy, policyManifest } from "./helpers.js";

const suite = operatorSuite("op", { stepped: true });

describe("operator against the local control plane and the emulator", () => {
  it("reconciles a policy to Ready, scales out on a load rise and the Deployment follows", async () => {
    const { kube, ns, h } = suite;
    const id = signalrId("chat");
    h.emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 2, connections: 1200 });
    await createDeployment(kube, ns, "chat-hub", 1);
    await createPolicy(
      kube,
      policyManifest(ns, "chat", id, {
        appServer: CHAT_HUB,
        behavior: { scaleDown: { stabilizationWindowSeconds: 600 }, settleSeconds: 60 },
        pollIntervalSeconds: 30,
      }),
    );

    const ready = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")?.status).toBe("True");
        expect(p.status?.current?.units).toBeGreaterThanOrEqual(2);
        return p;
      },
      60_000,
      500,
    );
    expect(ready.status?.observedGeneration).toBe(ready.metadata.generation);

    // Load rise: 9,000 connections need 12 → 20 units at 80 %.
    h.emulator.control.setDemand(id, { connections: 9000 });
    const scaled = await suite.h.eventually(
      async () => {
        const inst = h.emulator.control.instance(id);
        expect(inst?.units).toBe(20);
        return inst;
      },
      90_000,
      500,
    );
    expect(scaled?.sku).toBe("Premium_P1");

    await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBe(20);
        expect(p.status?.operation).toBeUndefined();
      },
      60_000,
      500,
    );
    // The Deployment follows the measured connections: 9,000 need 9 replicas, once a pass reads
    // them at the new size.
    await suite.h.eventually(
      async () => {
        const scale = await kube.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" });
        expect(scale.spec?.replicas).toBeGreaterThanOrEqual(9);
      },
      60_000,
      500,
    );
    // Events are recorded after the status write that saw the update end.
    await suite.h.eventually(
      async () => {
        const events = await kubectl(["get", "events", "-n", ns, "-o", "jsonpath={.items[*].reason}"]);
        expect(events).toMatch(/ScalingOut/);
        expect(events).toMatch(/ScaleSucceeded/);
      },
      10_000,
      200,
    );

    const table = await kubectl(["get", "capol", "-n", ns]);
    expect(table).toMatch(/SERVICE\s+SKU\s+UNITS\s+DESIRED/);
    expect(table).toMatch(/chat\s+SignalR\s+Premium_P1\s+20/);
  });
});
