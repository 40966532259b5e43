/**
 * deploy/ against a real API server: the kustomize base renders hardened, least-privilege
 * manifests; `kubectl apply --dry-run=server -k deploy/` passes; the ServiceAccount may do exactly
 * what the operator calls and is refused the rest; and the operator, authenticated as that
 * ServiceAccount with nothing but this RBAC, reconciles policies, scales a Deployment and an HPA
 * floor, records Events and holds (then releases) its one named Lease.
 *
 * A private control plane: the shared one must keep the operator identity unprivileged for the
 * other suites.
 */

import { RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { GROUP, PLURAL, VERSION } from "../../src/api/index.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { ForbiddenError, toKubeError } from "../../src/kube/errors.js";
import { LeaseClient } from "../../src/kube/lease.js";
import { type ControlPlane, startControlPlane } from "../../src/localcluster/index.js";
import { clientsFor, createDeployment, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import {
  canI,
  condition,
  createPolicy,
  getPolicy,
  kubectlAs,
  LEASE_NAME,
  OPERATOR_NAMESPACE,
  policyManifest,
  signalrId,
  startFastEmulator,
  startOperator,
  type TestOperator,
} from "./support.js";

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, checked field by field below
type Doc = Record<string, any>;

let cp: ControlPlane;
let admin: KubeClients;
let emulator: RunningEmulator | undefined;
let op: TestOperator | undefined;

const asAdmin = (args: string[]) => kubectlAs(cp.kubeconfigAdmin, args);

async function rendered(dir = "deploy/"): Promise<Doc[]> {
  const r = await asAdmin(["kustomize", dir]);
  expect(r.code, r.stderr).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Doc);
}

beforeAll(async () => {
  cp = await startControlPlane();
  await ensureCrd(cp.kubeconfigAdmin);
  admin = clientsFor(cp.kubeconfigAdmin);
}, 180_000);

afterAll(async () => {
  await op?.stop();
  await emulator?.stop();
  await cp?.stop();
}, 60_000);

describe("deploy/", () => {
  it("renders a hardened Deployment and RBAC without wildcards, Secrets or write access to specs and CRDs", async () => {
    const docs = await rendered();
    const kinds = docs.map((d) => `${d["kind"]}/${d["metadata"].name}`).sort();
    expect(kinds).toEqual([
      "ClusterRole/signalr-autoscaler",
      "ClusterRoleBinding/signalr-autoscaler",
      "Deployment/signalr-autoscaler",
      "Namespace/signalr-autoscaler-system",
      "PodDisruptionBudget/signalr-autoscaler",
      "Role/signalr-autoscaler-leader-election",
      "RoleBinding/signalr-autoscaler-leader-election",
      "Service/signalr-autoscaler-metrics",
      "ServiceAccount/signalr-autoscaler",
    ]);
    const byKind = (kind: string) => docs.find((d) => d["kind"] === kind) as Doc;

    for (const role of docs.filter((d) => d["kind"] === "ClusterRole" || d["kind"] === "Role")) {
      for (const rule of role["rules"] as Doc[]) {
        for (const field of ["apiGroups", "resources", "verbs", "resourceNames"]) {
          expect(rule[field] ?? [], `${role["metadata"].name} ${field}`).not.toContain("*");
        }
        expect(rule["resources"]).not.toContain("secrets");
        expect(rule["resources"]).not.toContain("customresourcedefinitions");
        if ((rule["resources"] as string[]).includes("capacitypolicies")) {
          expect(rule["verbs"]).toEqual(["get", "list", "watch"]);
        }
      }
    }
    const lease = byKind("Role")["rules"] as Doc[];
    expect(lease).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        resourceNames: [LEASE_NAME],
        verbs: ["get", "update"],
      },
    ]);

    const sa = byKind("ServiceAccount");
    expect(sa["metadata"].labels["azure.workload.identity/use"]).toBe("true");
    expect(sa["metadata"].annotations["azure.workload.identity/client-id"]).toMatch(/^[0-9a-f-]{36}$/);

    const deployment = byKind("Deployment");
    expect(deployment["spec"].replicas).toBe(2);
    const pod = deployment["spec"].template;
    expect(pod.metadata.labels["azure.workload.identity/use"]).toBe("true");
    expect(pod.spec.serviceAccountName).toBe("signalr-autoscaler");
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const container = (pod.spec.containers as Doc[])[0] as Doc;
    expect(container["image"]).toBe("signalr-autoscaler:0.1.0");
    expect(container["args"]).toEqual(["run", "--leader-elect"]);
    expect(container["securityContext"]).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container["livenessProbe"].httpGet).toEqual({ path: "/healthz", port: "metrics" });
    expect(container["readinessProbe"].httpGet).toEqual({ path: "/readyz", port: "metrics" });
    expect(container["resources"].requests).toBeDefined();
    expect(container["resources"].limits.memory).toBeDefined();
    const env = Object.fromEntries((container["env"] as Doc[]).map((e) => [e["name"], e]));
    expect(env["POD_NAME"]?.["valueFrom"].fieldRef.fieldPath).toBe("metadata.name");
    expect(env["POD_NAMESPACE"]?.["valueFrom"].fieldRef.fieldPath).toBe("metadata.namespace");
    expect(container["ports"]).toEqual([{ name: "metrics", containerPort: 8080, protocol: "TCP" }]);

    expect(byKind("Service")["spec"].ports).toEqual([
      { name: "metrics", port: 8080, targetPort: "metrics", protocol: "TCP" },
    ]);
    expect(byKind("PodDisruptionBudget")["spec"].minAvailable).toBe(1);

    // The tenancy overlay adds the map as a read-only file and TENANCY_FILE, nothing else.
    const tenancy = await rendered("deploy/tenancy/");
    expect(tenancy).toHaveLength(docs.length + 1);
    const withMap = tenancy.find((d) => d["kind"] === "Deployment") as Doc;
    const mounted = withMap["spec"].template.spec.containers[0];
    expect(mounted.env).toContainEqual({
      name: "TENANCY_FILE",
      value: "/etc/signalr-autoscaler/tenancy.yaml",
    });
    expect(mounted.volumeMounts).toContainEqual({
      name: "tenancy",
      mountPath: "/etc/signalr-autoscaler",
      readOnly: true,
    });
  });

  it("passes kubectl apply --dry-run=server -k deploy/ (and the tenancy overlay), persisting nothing", async () => {
    // A server-side dry run validates namespaced objects only in an existing namespace.
    const ns = await asAdmin(["apply", "-f", "deploy/base/namespace.yaml"]);
    expect(ns.code, ns.stderr).toBe(0);
    for (const dir of ["deploy/", "deploy/tenancy/"]) {
      const dry = await asAdmin(["apply", "--dry-run=server", "-k", dir]);
      expect(dry.code, dry.stderr).toBe(0);
      // The namespace enforces (and warns about) the restricted Pod Security Standard.
      expect(dry.stderr).not.toMatch(/warning/i);
      const lines = dry.stdout.trim().split("\n");
      expect(lines.length).toBeGreaterThanOrEqual(9);
      for (const line of lines) expect(line).toMatch(/\(server dry run\)$/);
    }
    const none = await asAdmin(["get", "clusterrole", "signalr-autoscaler"]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/NotFound/);
  });

  it("grants the ServiceAccount exactly what the operator uses and refuses the rest", async () => {
    const applied = await asAdmin(["apply", "-k", "deploy/"]);
    expect(applied.code, applied.stderr).toBe(0);
    const as = cp.kubeconfigOperator;
    const app = "tenant-apps";
    const allowed: string[][] = [
      ["list", "capacitypolicies.autoscaling.signalr.dev", "--all-namespaces"],
      ["watch", "capacitypolicies.autoscaling.signalr.dev", "--all-namespaces"],
      ["get", "capacitypolicies.autoscaling.signalr.dev", "-n", app],
      ["patch", "capacitypolicies.autoscaling.signalr.dev", "--subresource=status", "-n", app],
      ["get", "deployments.apps", "-n", app],
      ["patch", "deployments.apps", "-n", app],
      ["get", "horizontalpodautoscalers.autoscaling", "-n", app],
      ["list", "horizontalpodautoscalers.autoscaling", "-n", app],
      ["patch", "horizontalpodautoscalers.autoscaling", "-n", app],
      ["create", "events", "-n", app],
      ["patch", "events", "-n", app],
      ["create", "leases.coordination.k8s.io", "-n", OPERATOR_NAMESPACE],
      ["get", `leases.coordination.k8s.io/${LEASE_NAME}`, "-n", OPERATOR_NAMESPACE],
      ["update", `leases.coordination.k8s.io/${LEASE_NAME}`, "-n", OPERATOR_NAMESPACE],
    ];
    const refused: string[][] = [
      ["list", "secrets", "-n", app],
      ["get", "secrets", "-n", OPERATOR_NAMESPACE],
      ["list", "secrets", "--all-namespaces"],
      ["create", "capacitypolicies.autoscaling.signalr.dev", "-n", app],
      ["patch", "capacitypolicies.autoscaling.signalr.dev", "-n", app],
      ["update", "capacitypolicies.autoscaling.signalr.dev", "-n", app],
      ["delete", "capacitypolicies.autoscaling.signalr.dev", "-n", app],
      ["update", "capacitypolicies.autoscaling.signalr.dev", "--subresource=status", "-n", app],
      ["create", "customresourcedefinitions.apiextensions.k8s.io"],
      ["patch", "customresourcedefinitions.apiextensions.k8s.io"],
      ["delete", "customresourcedefinitions.apiextensions.k8s.io"],
      ["patch", "deployments.apps", "--subresource=scale", "-n", app],
      ["update", "deployments.apps", "-n", app],
      ["delete", "deployments.apps", "-n", app],
      ["list", "deployments.apps", "-n", app],
      ["create", "horizontalpodautoscalers.autoscaling", "-n", app],
      ["delete", "horizontalpodautoscalers.autoscaling", "-n", app],
      ["list", "pods", "-n", app],
      ["create", "pods", "-n", app],
      ["list", "configmaps", "-n", app],
      ["delete", "events", "-n", app],
      ["get", "leases.coordination.k8s.io/another-lease", "-n", OPERATOR_NAMESPACE],
      ["update", "leases.coordination.k8s.io/another-lease", "-n", OPERATOR_NAMESPACE],
      ["list", "leases.coordination.k8s.io", "-n", OPERATOR_NAMESPACE],
      ["create", "leases.coordination.k8s.io", "-n", "kube-system"],
      ["update", `leases.coordination.k8s.io/${LEASE_NAME}`, "-n", "kube-system"],
      ["create", "clusterrolebindings.rbac.authorization.k8s.io"],
      ["escalate", "clusterroles.rbac.authorization.k8s.io"],
      ["impersonate", "serviceaccounts"],
      ["*", "*"],
    ];
    const answers = await Promise.all([
      ...allowed.map(async (args) => [args.join(" "), await canI(as, args)] as const),
      ...refused.map(async (args) => [args.join(" "), await canI(as, args)] as const),
    ]);
    const expected = [
      ...allowed.map((a) => [a.join(" "), true]),
      ...refused.map((a) => [a.join(" "), false]),
    ];
    expect(answers).toEqual(expected);

    // Direct calls with the operator's identity are refused with 403.
    const operator = clientsFor(cp.kubeconfigOperator);
    const ns = await createNamespace(admin, "rbac-denied");
    await createPolicy(admin, policyManifest(ns, "denied", signalrId("denied")));
    await new LeaseClient(admin).create(OPERATOR_NAMESPACE, "another-lease", {
      holderIdentity: "someone",
      leaseDurationSeconds: 15,
      acquireTime: new Date(),
      renewTime: new Date(),
      leaseTransitions: 0,
    });
    const refusals = {
      listSecrets: () => operator.core.listNamespacedSecret({ namespace: ns }),
      patchSpec: () =>
        operator.customObjects.patchNamespacedCustomObject(
          {
            group: GROUP,
            version: VERSION,
            namespace: ns,
            plural: PLURAL,
            name: "denied",
            body: [{ op: "replace", path: "/spec/units/max", value: 1000 }],
          },
          undefined,
        ),
      createCrd: () =>
        operator.apiextensions.createCustomResourceDefinition({
          body: {
            metadata: { name: "things.example.com" },
            spec: {
              group: "example.com",
              names: { kind: "Thing", plural: "things" },
              scope: "Namespaced",
              versions: [
                { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } },
              ],
            },
          },
        }),
      takeOtherLease: () =>
        new LeaseClient(operator).tryAcquireOrRenew(
          "another-lease",
          OPERATOR_NAMESPACE,
          "operator",
          15,
          { wall: new Date(), monotonicMs: performance.now() },
          undefined,
        ),
      bindClusterAdmin: () =>
        operator.kubeConfig.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
          body: {
            metadata: { name: "escalate" },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
            subjects: [
              { kind: "User", name: "system:serviceaccount:signalr-autoscaler-system:signalr-autoscaler" },
            ],
          },
        }),
    };
    for (const [what, call] of Object.entries(refusals)) {
      const err = await (call as () => Promise<unknown>)().then(
        () => undefined,
        (e: unknown) => toKubeError(e, what),
      );
      expect(err, what).toBeInstanceOf(ForbiddenError);
    }
  });

  it("runs the operator as the ServiceAccount with exactly this RBAC: Ready, Deployment and HPA floor scaled, Events, the named Lease held and released", async () => {
    const ns = await createNamespace(admin, "rbac-run");
    emulator = await startFastEmulator();
    const viaDeployment = signalrId("rbac-chat");
    const viaHpa = signalrId("rbac-notify");
    emulator.control.addInstance({
      resourceId: viaDeployment,
      sku: "Premium_P1",
      units: 5,
      connections: 3000,
    });
    emulator.control.addInstance({ resourceId: viaHpa, sku: "Premium_P1", units: 5, connections: 3000 });
    await createDeployment(admin, ns, "chat-hub", 1);
    await createDeployment(admin, ns, "notify-hub", 1);
    await admin.autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: ns,
      body: {
        metadata: { name: "notify-hub" },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "notify-hub" },
          minReplicas: 1,
          maxReplicas: 20,
          metrics: [
            {
              type: "Resource",
              resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } },
            },
          ],
        },
      },
    });
    const appServer = { replicas: { min: 1, max: 20 }, connectionsPerReplica: 1000 };
    await createPolicy(
      admin,
      policyManifest(ns, "chat", viaDeployment, { appServer: { deploymentName: "chat-hub", ...appServer } }),
    );
    await createPolicy(
      admin,
      policyManifest(ns, "notify", viaHpa, {
        appServer: { deploymentName: "notify-hub", horizontalPodAutoscalerName: "notify-hub", ...appServer },
      }),
    );

    op = await startOperator({
      kube: clientsFor(cp.kubeconfigOperator),
      emulator,
      settings: {
        identity: "operator-0",
        leaderElection: {
          leaseName: LEASE_NAME,
          leaseNamespace: OPERATOR_NAMESPACE,
          identity: "operator-0",
          leaseDurationSeconds: 4,
          renewDeadlineSeconds: 3,
          retryPeriodSeconds: 0.5,
        },
      },
    });
    for (const name of ["chat", "notify"]) {
      await eventually(
        async () => {
          const p = await getPolicy(admin, ns, name);
          expect(condition(p, "Ready")).toMatchObject({ status: "True" });
          expect(condition(p, "Conflict")).toMatchObject({ status: "False" });
        },
        60_000,
        250,
      );
    }
    await eventually(
      async () => {
        const scale = await admin.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" });
        expect(scale.spec?.replicas).toBeGreaterThanOrEqual(3);
        const hpa = await admin.autoscaling.readNamespacedHorizontalPodAutoscaler({
          namespace: ns,
          name: "notify-hub",
        });
        expect(hpa.spec?.minReplicas).toBeGreaterThanOrEqual(3);
      },
      30_000,
      250,
    );
    await eventually(
      async () => {
        const reasons = (await admin.core.listNamespacedEvent({ namespace: ns })).items.map((e) => e.reason);
        expect(reasons).toContain("AppServersScaled");
        expect(reasons).toContain("HpaFloorSet");
      },
      10_000,
      200,
    );
    const lease = await new LeaseClient(admin).get(OPERATOR_NAMESPACE, LEASE_NAME);
    expect(lease?.record.holderIdentity).toBe("operator-0");

    // Nothing the operator tried was refused.
    expect(op.logs.text).not.toMatch(/forbidden|\b403\b/i);
    expect(op.reports.filter((r) => r.error)).toEqual([]);

    await op.stop();
    expect((await new LeaseClient(admin).get(OPERATOR_NAMESPACE, LEASE_NAME))?.record.holderIdentity).toBe(
      "",
    );
  });
});
