import { beforeAll, describe, expect, it } from "vitest";
import {
  ConflictError,
  FIELD_MANAGER,
  type KubeClients,
  NotFoundError,
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
  });
}

describe("WorkloadClient", { timeout: 60_000 }, () => {
  it("reads and patches spec.replicas through the scale subresource", async () => {
    await createDeployment("hub", 2);
    const read = await workloads.readDeploymentScale(ns, "hub");
    expect(read).toMatchObject({ namespace: ns, name: "hub", replicas: 2 });

    const patched = await workloads.patchDeploymentReplicas(ns, "hub", 5);
    expect(patched.replicas).toBe(5);
    const deployment = await clients.apps.readNamespacedDeployment({ namespace: ns, name: "hub" });
    expect(deployment.spec?.replicas).toBe(5);
    // No controller-manager runs: status is untouched, and the adapter never reports it.
    expect(deployment.status?.replicas ?? 0).toBe(0);

    // Conditional write with a stale resourceVersion.
    const stale = await workloads
      .patchDeploymentReplicas(ns, "hub", 6, { resourceVersion: read.resourceVersion ?? "" })
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ConflictError);
    const current = await workloads.patchDeploymentReplicas(ns, "hub", 6, {
      resourceVersion: patched.resourceVersion ?? "",
    });
    expect(current.replicas).toBe(6);

    const missing = await workloads.readDeploymentScale(ns, "absent").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
  });

  it("tells who manages spec.replicas from managedFields", async () => {
    await createDeployment("managed", 1);
    const initial = await workloads.deploymentReplicasOwnership(ns, "managed");
    expect(initial.managers.map((m) => m.manager)).toEqual(["kubectl-create"]);

    await workloads.patchDeploymentReplicas(ns, "managed", 3);
    const ours = await workloads.deploymentReplicasOwnership(ns, "managed");
    expect(ours.replicas).toBe(3);
    expect(ours.managers[0]).toMatchObject({
      manager: FIELD_MANAGER,
      subresource: "scale",
      operation: "Update",
    });
    expect(ours.managers.map((m) => m.manager)).not.toContain("kubectl-create");

    // Someone else scales it with kubectl: they now own spec.replicas.
    await kubectl(["scale", "deployment/managed", "-n", ns, "--replicas=7"]);
    const theirs = await workloads.deploymentReplicasOwnership(ns, "managed");
    expect(theirs.replicas).toBe(7);
    expect(theirs.managers[0]?.manager).not.toBe(FIELD_MANAGER);
    expect(theirs.managers[0]?.manager).toMatch(/^kubectl/);
    expect(theirs.managers.map((m) => m.manager)).not.toContain(FIELD_MANAGER);
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

  it("raises an HPA's minReplicas, clamps at maxReplicas without raising it, and skips no-op writes", async () => {
    await createDeployment("api");
    await createHpa("api", "api", 2, 8);

    const raised = await workloads.setHpaMinReplicas(ns, "api", 5);
    expect(raised).toMatchObject({ requested: 5, applied: 5, clamped: undefined, changed: true });
    expect(raised.hpa.minReplicas).toBe(5);

    const clamped = await workloads.setHpaMinReplicas(ns, "api", 12);
    expect(clamped).toMatchObject({ requested: 12, applied: 8, clamped: "maxReplicas", changed: true });
    const hpa = await workloads.readHpa(ns, "api");
    expect(hpa).toMatchObject({ minReplicas: 8, maxReplicas: 8 });

    const again = await workloads.setHpaMinReplicas(ns, "api", 8);
    expect(again).toMatchObject({ changed: false, applied: 8 });
    expect(again.hpa.resourceVersion).toBe(hpa.resourceVersion);

    const floor = await workloads.setHpaMinReplicas(ns, "api", 0);
    expect(floor).toMatchObject({ applied: 1, clamped: "minimum", changed: true });
  });
});
