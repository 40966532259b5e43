import { beforeAll, describe, expect, it } from "vitest";
import {
  ConflictError,
  conflictingManagers,
  FIELD_MANAGER,
  type KubeClients,
  NotFoundError,
  POLICY_ANNOTATION,
  WorkloadClient,
} from "../../src/kube/index.js";

import { adminClients, createNamespace, deploymentManifest, kubectl } from "./support.js";

let clients: KubeClients;
let workloads: WorkloadClient;
let ns: string;

beforeAll(async () => {
  clients = adminClients();
  workloads = new WorkloadClient(clients);
  ns = await createNamespace(clients, "kube-workloads");
}, 60_000);

async function createDeployment(name: string, replicas = 1): Promise<void> {
  await clients.apps.createNamespacedDeployment({
    namespace: ns,
    body: deploymentManifest(ns, name, replicas),
    fieldManager: "kubectl-create",
  });
}

async function createHpa(
  name: string,
  target: string,
  minReplicas: number,
  maxReplicas: number,
  kind = "Deployment",
) {
  await clients.autoscaling.createNamespacedHorizontalPodAutoscaler({
    namespace: ns,
    body: {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name, namespace: ns },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind, name: target },
        minReplicas,
        maxReplicas,
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } },
          },
        ],
      },
    },
    fieldManager: "kubectl-create",
  });
}

describe("WorkloadClient", { timeout: 60_000 }, () => {
  it("applies spec.replicas server-side: ours, refused while another manager owns it, forced on request", async () => {
    await createDeployment("hub", 2);
    const created = await workloads.deploymentReplicasOwnership(ns, "hub");
    expect(created).toMatchObject({ replicas: 2, appliedFor: undefined });
    expect(created.managers.map((m) => m.manager)).toEqual(["kubectl-create"]);

    // The creator owns it: a plain apply is refused, naming the manager; force takes it.
    const refused = await workloads
      .applyDeploymentReplicas(ns, "hub", 5, { policy: `${ns}/chat` })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);
    expect(conflictingManagers((refused as Error).message)).toEqual(["kubectl-create"]);
    const taken = await workloads.applyDeploymentReplicas(ns, "hub", 5, {
      policy: `${ns}/chat`,
      force: true,
    });
    expect(taken).toMatchObject({ replicas: 5, appliedFor: `${ns}/chat` });
    expect(taken.managers.map((m) => m.manager)).toEqual([FIELD_MANAGER]);
    const deployment = await clients.apps.readNamespacedDeployment({ namespace: ns, name: "hub" });
    expect(deployment.spec?.replicas).toBe(5);
    expect(deployment.metadata?.annotations?.[POLICY_ANNOTATION]).toBe(`${ns}/chat`);
    // Nothing else changed hands: the pod template is still the creator's.
    expect(deployment.spec?.template.spec?.containers.length).toBe(1);
    // No controller-manager runs: status is untouched.
    expect(deployment.status?.replicas ?? 0).toBe(0);

    // Ours now: a plain apply goes through.
    const again = await workloads.applyDeploymentReplicas(ns, "hub", 6, { policy: `${ns}/chat` });
    expect(again.replicas).toBe(6);

    const missing = await workloads.deploymentReplicasOwnership(ns, "absent").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
  });

  it("tells who manages spec.replicas from managedFields, and keeps the operator's entry after losing the field", async () => {
    await createDeployment("managed", 1);
    await workloads.applyDeploymentReplicas(ns, "managed", 3, { policy: `${ns}/chat`, force: true });
    const ours = await workloads.deploymentReplicasOwnership(ns, "managed");
    expect(ours.replicas).toBe(3);
    expect(ours.managers[0]).toMatchObject({ manager: FIELD_MANAGER, operation: "Apply" });
    expect(ours.managers.map((m) => m.manager)).not.toContain("kubectl-create");

    // Someone else scales it with kubectl: they now own spec.replicas; the operator's entry (the
    // annotation) says it had applied there for this policy.
    await kubectl(["scale", "deployment/managed", "-n", ns, "--replicas=7"]);
    const theirs = await workloads.deploymentReplicasOwnership(ns, "managed");
    expect(theirs.replicas).toBe(7);
    expect(theirs.managers.map((m) => m.manager)).toEqual(["kubectl"]);
    expect(theirs.managers[0]).toMatchObject({ operation: "Update", subresource: "scale" });
    expect(theirs.appliedFor).toBe(`${ns}/chat`);
    const refused = await workloads
      .applyDeploymentReplicas(ns, "managed", 4, { policy: `${ns}/chat` })
      .catch((e: unknown) => e);
    expect(conflictingManagers((refused as Error).message)).toEqual(["kubectl"]);
    expect((await workloads.deploymentReplicasOwnership(ns, "managed")).replicas).toBe(7);
  });

  it("finds the HPA that targets a Deployment", async () => {
    await createDeployment("web");
    await createHpa("web", "web", 2, 10);
    await createHpa("other", "not-web", 1, 5);
    await createHpa("sts", "web", 1, 5, "StatefulSet");
    const found = await workloads.findHpasForDeployment(ns, "web");
    expect(found.map((h) => h.name)).toEqual(["web"]);
    expect(found[0]).toMatchObject({
      minReplicas: 2,
      maxReplicas: 10,
      target: { kind: "Deployment", name: "web" },
    });
    expect(await workloads.findHpasForDeployment(ns, "nothing-targets-me")).toEqual([]);
  });

  it("raises an HPA's minReplicas server-side, clamps at maxReplicas without raising it, and skips no-op writes", async () => {
    await createDeployment("api");
    await createHpa("api", "api", 2, 8);
    const policy = { policy: `${ns}/chat` };

    const before = await workloads.readHpa(ns, "api");
    expect(before.minReplicasOwnership.managers.map((m) => m.manager)).not.toContain(FIELD_MANAGER);
    const refused = await workloads.applyHpaMinReplicas(ns, "api", 5, policy).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConflictError);

    const raised = await workloads.applyHpaMinReplicas(ns, "api", 5, { ...policy, force: true });
    expect(raised).toMatchObject({ requested: 5, applied: 5, clamped: undefined, changed: true });
    expect(raised.hpa.minReplicas).toBe(5);
    expect(raised.hpa.minReplicasOwnership).toMatchObject({ appliedFor: `${ns}/chat` });
    expect(raised.hpa.maxReplicas).toBe(8);

    const clamped = await workloads.applyHpaMinReplicas(ns, "api", 12, policy);
    expect(clamped).toMatchObject({ requested: 12, applied: 8, clamped: "maxReplicas", changed: true });
    const hpa = await workloads.readHpa(ns, "api");
    expect(hpa).toMatchObject({ minReplicas: 8, maxReplicas: 8 });

    const again = await workloads.applyHpaMinReplicas(ns, "api", 8, policy);
    expect(again).toMatchObject({ changed: false, applied: 8 });
    expect(again.hpa.resourceVersion).toBe(hpa.resourceVersion);

    const floor = await workloads.applyHpaMinReplicas(ns, "api", 0, policy);
    expect(floor).toMatchObject({ applied: 1, clamped: "minimum", changed: true });
  });
});
