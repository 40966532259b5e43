/**
 * Other owners of the app-server fields, by Kubernetes' own field ownership: a GitOps controller
 * that keeps `spec.replicas` (or the HPA's `spec.minReplicas`) at its value under its own field
 * manager, and a person's `kubectl scale`. The operator writes with server-side apply, not forced:
 * after the first conflict it writes no more, says who owns the field and how to hand it back, and
 * takes the field up again when the other manager lets go or a person hands it back.
 */
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { KIND } from "../../src/api/index.js";
import { TAKE_FROM_ANNOTATION } from "../../src/controller/field-owner.js";
import type { KubeClients } from "../../src/kube/client.js";
import { CHAT_HUB, controlPlane, kubectl } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import { operatorPerTest } from "./harness.js";
import { condition, createPolicy, getPolicy, policyManifest, sleep } from "./helpers.js";

const ops = operatorPerTest({ stepped: true });
const apply = () => setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply);

type Field = "deployment" | "hpa";

/** The value of the sized field: the Deployment's spec.replicas or the HPA's spec.minReplicas. */
async function sizedValue(kube: KubeClients, ns: string, field: Field): Promise<number | undefined> {
  if (field === "deployment") {
    return (await kube.apps.readNamespacedDeployment({ namespace: ns, name: "chat-hub" })).spec?.replicas;
  }
  return (await kube.autoscaling.readNamespacedHorizontalPodAutoscaler({ namespace: ns, name: "chat-hub" }))
    .spec?.minReplicas;
}

/** Applies the field as `manager` (server-side apply, forced, as Flux does); `value` undefined lets go of it. */
async function applyAs(
  kube: KubeClients,
  ns: string,
  field: Field,
  manager: string,
  value: number | undefined,
) {
  const labels = { "app.kubernetes.io/managed-by": manager };
  if (field === "deployment") {
    await kube.apps.patchNamespacedDeployment(
      {
        namespace: ns,
        name: "chat-hub",
        fieldManager: manager,
        force: true,
        body: {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "chat-hub", namespace: ns, labels },
          ...(value === undefined ? {} : { spec: { replicas: value } }),
        },
      },
      apply(),
    );
    return;
  }
  await kube.autoscaling.patchNamespacedHorizontalPodAutoscaler(
    {
      namespace: ns,
      name: "chat-hub",
      fieldManager: manager,
      force: true,
      body: {
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "chat-hub", namespace: ns, labels },
        ...(value === undefined ? {} : { spec: { minReplicas: value } }),
      },
    },
    apply(),
  );
}

/**
 * A GitOps controller in the test: keeps the field at `value` under the field manager `manager`,
 * reverting every change it sees (polled every 100 ms). `reverts` counts the changes it undid.
 */
function revertingController(kube: KubeClients, ns: string, field: Field, manager: string, value: number) {
  const state = { reverts: 0, stopped: false };
  const loop = (async () => {
    await applyAs(kube, ns, field, manager, value);
    while (!state.stopped) {
      const seen = await sizedValue(kube, ns, field);
      if (!state.stopped && seen !== value) {
        state.reverts++;
        await applyAs(kube, ns, field, manager, value);
      }
      await sleep(100);
    }
  })();
  return {
    state,
    async stop() {
      state.stopped = true;
      await loop;
    },
  };
}

/** The Warning Events of `reason` about the policy, with their aggregated counts. */
async function warnings(kube: KubeClients, ns: string, reason: string): Promise<number> {
  const list = await kube.core.listNamespacedEvent({ namespace: ns });
  return list.items
    .filter((e) => e.involvedObject.kind === KIND && e.involvedObject.name === "chat" && e.reason === reason)
    .filter((e) => e.type === "Warning")
    .reduce((n, e) => n + (e.series?.count ?? e.count ?? 1), 0);
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function createHpa(kube: KubeClients, ns: string, minReplicas: number) {
  await kube.autoscaling.createNamespacedHorizontalPodAutoscaler({
    namespace: ns,
    fieldManager: "kubectl-create",
    body: {
      metadata: { name: "chat-hub", namespace: ns },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "chat-hub" },
        minReplicas,
        maxReplicas: 30,
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

describe("field ownership of the app-server fields", () => {
  for (const field of ["deployment", "hpa"] as const) {
    const what = field === "deployment" ? "the Deployment's spec.replicas" : "the HPA's spec.minReplicas";
    const reason = field === "deployment" ? "ReplicasOwnedByOther" : "HpaFloorOwnedByOther";
    const held = field === "deployment" ? 3 : 2;
    it(`a controller that reverts ${what} under its own field manager: no write after the first conflict in 20 passes, Conflict True throughout; it lets go, the operator resumes`, async () => {
      const { kube, ns, id, harness } = await ops.start(`fo-${field}`);
      if (field === "hpa") await createHpa(kube, ns, held);
      const gitops = revertingController(kube, ns, field, "gitops-controller", held);
      stops.push(() => gitops.stop());
      await createPolicy(
        kube,
        policyManifest(ns, "chat", id, {
          units: { min: 10, max: 50 },
          appServer: { ...CHAT_HUB, ...(field === "hpa" ? { horizontalPodAutoscalerName: "chat-hub" } : {}) },
        }),
      );
      const passesOf = () => harness.reports.filter((r) => r.key === `${ns}/chat`).length;
      // 9,000 connections want 10 replicas: the operator's first sizing takes the field over, the
      // controller puts its value back, and from then on the operator leaves the field alone.
      harness.emulator.control.setDemand(id, { connections: 9000 });
      const conflicted = await harness.eventually(
        async () => {
          const p = await getPolicy(kube, ns, "chat");
          expect(condition(p, "Conflict")).toMatchObject({ status: "True", reason });
          return p;
        },
        60_000,
        200,
      );
      expect(gitops.state.reverts).toBe(1);
      const message = condition(conflicted, "Conflict")?.message ?? "";
      expect(message).toMatch(/is owned by gitops-controller \(Apply/);
      expect(message).toContain(`${TAKE_FROM_ANNOTATION}=gitops-controller`);
      expect(condition(conflicted, "Ready")).toMatchObject({ status: "False", reason: "Conflict" });

      const from = passesOf();
      while (passesOf() < from + 20) {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Conflict")?.status).toBe("True");
        // (10 when the operator's next pass came first.)
        expect([held, 10]).toContain(await sizedValue(kube, ns, field));
        await harness.sleep(100);
      }
      expect(gitops.state.reverts).toBe(1);
      const warningEvents = await warnings(kube, ns, reason);
      expect(warningEvents).toBe(1);

      // The operator co-owns the controller's value, so when the controller lets go (applies its
      // configuration without the field) the field keeps it — no fall to the API default of 1 —
      // and the operator takes it up.
      await gitops.stop();
      await applyAs(kube, ns, field, "gitops-controller", undefined);
      // (10 when the operator's next pass came first.)
      expect([held, 10]).toContain(await sizedValue(kube, ns, field));
      await harness.eventually(
        async () => {
          expect(await sizedValue(kube, ns, field)).toBe(10);
          expect(condition(await getPolicy(kube, ns, "chat"), "Conflict")?.status).toBe("False");
        },
        60_000,
        200,
      );
      recordFault({
        id: `field-owner-gitops-${field}`,
        endpoint: "kube-apiserver",
        fault: `a GitOps controller reverts ${what} under its own field manager after every change`,
        outcome:
          "Conflict=True naming the manager from the first conflict on, no write in 20 passes; resumes when it lets go",
        test: `test/operator/field-owners.test.ts › a controller that reverts ${what}`,
        figures: {
          operatorWritesReverted: gitops.state.reverts,
          passesWatched: 20,
          warningEvents,
          conflictReason: reason,
        },
      });
    });
  }

  it("kubectl scale by a person is left alone while kubectl owns spec.replicas; the hand-back the message gives resumes it", async () => {
    const { kube, ns, id, harness } = await ops.start("fo-person");
    await createPolicy(
      kube,
      policyManifest(ns, "chat", id, { units: { min: 10, max: 50 }, appServer: CHAT_HUB }),
    );
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => expect(await sizedValue(kube, ns, "deployment")).toBe(10),
      60_000,
      200,
    );

    await kubectl(["scale", "deployment/chat-hub", "-n", ns, "--replicas=4"]);
    // 12,000 connections want 13 replicas: the person's 4 stands.
    harness.emulator.control.setDemand(id, { connections: 12_000 });
    const conflicted = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Conflict")).toMatchObject({ status: "True", reason: "ReplicasOwnedByOther" });
        expect(p.status?.desired?.replicas).toBe(13);
        return p;
      },
      60_000,
      200,
    );
    const passesOf = () => harness.reports.filter((r) => r.key === `${ns}/chat`).length;
    const from = passesOf();
    while (passesOf() < from + 10) {
      expect(await sizedValue(kube, ns, "deployment")).toBe(4);
      await harness.sleep(100);
    }
    const message = condition(conflicted, "Conflict")?.message ?? "";
    expect(message).toMatch(/owned by kubectl \(Update through the scale subresource/);
    const command = /kubectl (annotate capacitypolicy .* --overwrite)$/.exec(message)?.[1];
    expect(command).toBeDefined();
    await kubectl((command ?? "").split(" "), controlPlane().kubeconfigAdmin);
    const handedBackAt = harness.emulator.clock.nowMs();
    await harness.eventually(
      async () => {
        expect(await sizedValue(kube, ns, "deployment")).toBe(13);
        expect(condition(await getPolicy(kube, ns, "chat"), "Conflict")?.status).toBe("False");
      },
      60_000,
      200,
    );
    recordFault({
      id: "field-owner-kubectl-scale",
      endpoint: "kube-apiserver",
      fault: "a person runs kubectl scale on the app-server Deployment",
      outcome:
        "the person's replicas stand while kubectl owns the field; the hand-back in the Conflict message resumes the operator",
      test: "test/operator/field-owners.test.ts › kubectl scale by a person",
      figures: {
        passesLeftAlone: 10,
        replicasKept: 4,
        secondsToResumeAfterHandBack: (harness.emulator.clock.nowMs() - handedBackAt) / 1000,
      },
    });
  });
});
