/**
 * Recommend mode and the pause annotation: the operator reads and decides but writes nothing to
 * Azure or the Deployment — checked in the emulator's request log.
 */
import { describe, expect, it } from "vitest";
import { PAUSE_ANNOTATION } from "../../src/api/index.js";
import { CHAT_HUB } from "../kube/support.js";
import { operatorPerTest } from "./harness.js";
import { armWritesFor, condition, createPolicy, getPolicy, patchPolicy, policyManifest } from "./helpers.js";

const ops = operatorPerTest({ stepped: true });

async function setUp(prefix: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) {
  const chat = await ops.start(prefix);
  await createPolicy(
    chat.kube,
    policyManifest(
      chat.ns,
      "chat",
      chat.id,
      {
        units: { min: 10, max: 50 },
        appServer: CHAT_HUB,
        ...spec,
      },
      metadata,
    ),
  );
  return chat;
}

const replicasOf = async (ns: string) =>
  (await ops.kube.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" })).spec?.replicas;

describe("modes", () => {
  it("Recommend: status.desired shows the recommendation, no PATCH reaches Azure, replicas untouched", async () => {
    const { kube, ns, id, requests, harness } = await setUp("recommend", { mode: "Recommend" });
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "RecommendOnly" });
        expect(condition(p, "AbleToScale")?.reason).toBe("RecommendOnly");
      },
      60_000,
      500,
    );

    harness.emulator.control.setDemand(id, { connections: 9000 });
    const recommended = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.desired).toEqual({ sku: "Premium_P1", units: 20, replicas: 10 });
        return p;
      },
      60_000,
      500,
    );
    expect(recommended.status?.current).toEqual({ sku: "Premium_P1", units: 10, replicas: 3 });
    expect(recommended.status?.lastSample?.connections).toBeGreaterThan(9000);
    expect(recommended.status?.operation).toBeUndefined();
    expect(recommended.status?.scaleEvents ?? []).toEqual([]);
    expect(condition(recommended, "Ready")?.reason).toBe("RecommendOnly");

    // A few more polls: still nothing written anywhere.
    const seen = harness.reports.length;
    await harness.eventually(
      () => expect(harness.reports.length).toBeGreaterThanOrEqual(seen + 3),
      30_000,
      200,
    );
    expect(armWritesFor(requests.all, id)).toEqual([]);
    expect(requests.all.filter((r) => r.kind === "armWrite")).toEqual([]);
    expect(harness.emulator.control.calls().armWrites).toBe(0);
    expect(harness.emulator.control.instance(id)).toMatchObject({
      units: 10,
      provisioningState: "Succeeded",
    });
    expect(await replicasOf(ns)).toBe(3);
    const outcomes = harness.reports.map((r) => r.result?.outcome);
    expect(outcomes).toContain("recommended");
    expect(outcomes).not.toContain("scaled");
  });

  it("the pause annotation stops actions; removing it lets the operator act again", async () => {
    const { kube, ns, id, requests, harness } = await setUp("paused", {});
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "Reconciled" });
        expect(p.status?.current?.replicas).toBe(3);
      },
      60_000,
      500,
    );

    await patchPolicy(kube, ns, "chat", { metadata: { annotations: { [PAUSE_ANNOTATION]: "true" } } });
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "Paused" });
      },
      30_000,
      200,
    );

    // Load that would need 20 units and 10 replicas: seen in status, not acted on.
    harness.emulator.control.setDemand(id, { connections: 9000 });
    const paused = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.lastSample?.connections).toBeGreaterThan(9000);
        return p;
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
    expect(condition(paused, "Ready")?.reason).toBe("Paused");
    expect(paused.status?.current).toMatchObject({ units: 10, replicas: 3 });
    expect(armWritesFor(requests.all, id)).toEqual([]);
    expect(harness.emulator.control.instance(id)?.units).toBe(10);
    expect(await replicasOf(ns)).toBe(3);
    const pausedPasses = harness.reports
      .slice(seen)
      .flatMap((r) => (r.result?.decision ? [r.result.decision] : []));
    expect(pausedPasses.length).toBeGreaterThan(0);
    expect(pausedPasses.every((d) => d.mode === "Paused" && d.action === "None")).toBe(true);

    // Unpaused: the same load is acted on at once.
    await patchPolicy(kube, ns, "chat", { metadata: { annotations: { [PAUSE_ANNOTATION]: null } } });
    await harness.eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 30_000, 200);
    await harness.eventually(async () => expect(await replicasOf(ns)).toBe(10), 30_000, 200);
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBe(20);
        expect(condition(p, "Ready")?.reason).toBe("Reconciled");
      },
      60_000,
      500,
    );
  });
});
