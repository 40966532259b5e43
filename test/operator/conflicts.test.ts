/**
 * Other owners of the capacity: an HPA on the app-server Deployment (named in the policy: its
 * minReplicas is raised; not named: Conflict, replicas left alone) and a native Azure autoscale
 * setting on the instance (Conflict, no ARM update).
 */
import { describe, expect, it } from "vitest";
import { GROUP, PLURAL, VERSION } from "../../src/api/index.js";
import { CHAT_HUB } from "../kube/support.js";
import { operatorPerTest, signalrId } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  eventsOnce,
  getPolicy,
  patchPolicy,
  policyManifest,
} from "./helpers.js";

const ops = operatorPerTest({ stepped: true });

async function createHpa(ns: string, name: string, minReplicas: number, maxReplicas: number) {
  await ops.kube.autoscaling.createNamespacedHorizontalPodAutoscaler({
    namespace: ns,
    body: {
      metadata: { name, namespace: ns },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "chat-hub" },
        minReplicas,
        maxReplicas,
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } },
          },
        ],
      },
    },
  });
}

const hpaMin = async (ns: string, name: string) =>
  (await ops.kube.autoscaling.readNamespacedHorizontalPodAutoscaler({ namespace: ns, name })).spec
    ?.minReplicas;
const replicasOf = async (ns: string) =>
  (await ops.kube.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" })).spec?.replicas;

const appServer = CHAT_HUB;

describe("conflicts", () => {
  it("raises the floor of the HPA the policy names instead of setting replicas", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("hpa-named");
    await createHpa(ns, "chat-hub", 2, 30);
    await createPolicy(
      kube,
      policyManifest(ns, "chat", id, {
        units: { min: 10, max: 50 },
        appServer: { ...appServer, horizontalPodAutoscalerName: "chat-hub" },
      }),
    );

    // 2,000+ connections → a floor of 3.
    await harness.eventually(
      async () => {
        expect(await hpaMin(ns, "chat-hub")).toBe(3);
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "Reconciled" });
        expect(condition(p, "Conflict")?.status).toBe("False");
        expect(p.status?.current?.replicas).toBe(3);
      },
      60_000,
      500,
    );

    // 9,000 connections → 20 units and a floor of 10; the Deployment itself is never written.
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(async () => expect(await hpaMin(ns, "chat-hub")).toBe(10), 60_000, 500);
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current).toMatchObject({ units: 20, replicas: 10 });
        expect(p.status?.desired?.replicas).toBe(10);
      },
      60_000,
      500,
    );
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    expect(await replicasOf(ns)).toBe(3);
    const hpa = await kube.autoscaling.readNamespacedHorizontalPodAutoscaler({
      namespace: ns,
      name: "chat-hub",
    });
    expect(hpa.spec?.maxReplicas).toBe(30);
    const deployment = await kube.apps.readNamespacedDeployment({ namespace: ns, name: "chat-hub" });
    expect(deployment.metadata?.managedFields?.some((m) => m.subresource === "scale")).toBe(false);
    const events = await eventsOnce(kube, ns, "chat", (es) => es.some((e) => e.reason === "HpaFloorSet"));
    expect(events.some((e) => e.reason === "HpaFloorSet" && /minReplicas 3 → 10/.test(e.message))).toBe(true);
    expect(events.some((e) => e.reason === "AppServersScaled")).toBe(false);
  });

  it("reports Conflict and leaves replicas alone when an HPA it does not name targets the Deployment", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("hpa-unnamed");
    await createHpa(ns, "chat-hub-cpu", 2, 30);
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 }, appServer }));

    const conflicted = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Conflict")).toMatchObject({ status: "True", reason: "HpaOwnsReplicas" });
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "Conflict" });
        return p;
      },
      60_000,
      500,
    );
    expect(condition(conflicted, "Conflict")?.message).toMatch(
      /HorizontalPodAutoscaler chat-hub-cpu scales Deployment chat-hub/,
    );
    expect(condition(conflicted, "Conflict")?.message).toMatch(/horizontalPodAutoscalerName/);

    // A rise that would need 10 replicas: the instance is still sized, the replicas are not.
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBe(20);
        expect(p.status?.desired?.replicas).toBe(10);
      },
      60_000,
      500,
    );
    const seen = harness.reports.length;
    await harness.eventually(
      () => expect(harness.reports.length).toBeGreaterThanOrEqual(seen + 2),
      30_000,
      200,
    );
    expect(await replicasOf(ns)).toBe(3);
    expect(await hpaMin(ns, "chat-hub-cpu")).toBe(2);
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    const p = await getPolicy(kube, ns, "chat");
    expect(condition(p, "Conflict")?.status).toBe("True");
    expect(p.status?.current?.replicas).toBe(3);
    const events = await eventsOnce(kube, ns, "chat", (es) => es.some((e) => e.reason === "HpaOwnsReplicas"));
    expect(events.some((e) => e.type === "Warning" && e.reason === "HpaOwnsReplicas")).toBe(true);
    expect(events.some((e) => e.reason === "AppServersScaled" || e.reason === "HpaFloorSet")).toBe(false);
  });

  it("reports Conflict and sends no ARM update while a native Azure autoscale setting manages the instance", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("native");
    harness.emulator.control.addAutoscaleSetting({ targetResourceId: id, name: "chat-autoscale" });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));

    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Conflict")).toMatchObject({ status: "True", reason: "NativeAutoscale" });
        expect(condition(p, "Conflict")?.message).toMatch(/chat-autoscale/);
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "Conflict" });
      },
      60_000,
      500,
    );

    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.lastSample?.connections).toBeGreaterThan(9000);
      },
      60_000,
      500,
    );
    const seen = harness.reports.length;
    await harness.eventually(
      () => expect(harness.reports.length).toBeGreaterThanOrEqual(seen + 3),
      30_000,
      200,
    );
    expect(armWritesFor(requests.all, id)).toEqual([]);
    expect(harness.emulator.control.instance(id)?.units).toBe(10);
    const held = harness.reports.slice(seen).flatMap((r) => (r.result?.decision ? [r.result.decision] : []));
    expect(held.every((d) => d.action === "None")).toBe(true);
    const events = await eventsOnce(kube, ns, "chat", (es) => es.some((e) => e.reason === "NativeAutoscale"));
    expect(events.some((e) => e.type === "Warning" && e.reason === "NativeAutoscale")).toBe(true);

    // Once the setting is gone (re-checked every 5 virtual minutes), the operator acts.
    harness.emulator.control.clearAutoscaleSettings();
    await harness.eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 60_000, 500);
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Conflict")?.status).toBe("False");
      },
      30_000,
      500,
    );
  });

  it("forgets the native autoscale settings it read for a retargeted or deleted policy", async () => {
    const { kube, ns, id, harness } = await ops.start("native-forget");
    const other = signalrId("chat-other");
    harness.emulator.control.addInstance({
      resourceId: other,
      sku: "Premium_P1",
      units: 20,
      connections: 2000,
    });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    await harness.eventually(
      async () => {
        expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(10);
        expect(harness.operator.cachedResources).toBe(1);
      },
      60_000,
      500,
    );

    // Retargeted: the new target's settings are read, the old target's are dropped.
    await patchPolicy(kube, ns, "chat", { spec: { target: { service: "SignalR", resourceId: other } } });
    await harness.eventually(
      async () => expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(20),
      60_000,
      500,
    );
    expect(harness.operator.cachedResources).toBe(1);

    await kube.customObjects.deleteNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
      name: "chat",
    });
    await harness.eventually(() => expect(harness.operator.cachedResources).toBe(0), 30_000, 200);
  });
});
