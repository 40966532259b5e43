/**
 * The chart against a real API server: `helm install` into a fresh namespace creates the CRD (as
 * crds/ has it) and the operator's objects; the operator, run as `run` with the installed
 * Deployment's arguments and environment, the installed tenancy map and a token of the installed
 * ServiceAccount — so with nothing but the chart's RBAC — reconciles the policies of the watched
 * namespace, keeps out-of-scope ones out, and holds the chart's Lease; `helm uninstall` removes
 * every object but the CRD, which keeps the policies.
 *
 * A private control plane: the shared one already has the CRD, not owned by any release.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PolicyV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { CRD_NAME } from "../../src/api/index.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { LeaseClient } from "../../src/kube/lease.js";
import { type ControlPlane, startControlPlane } from "../../src/localcluster/index.js";
import {
  CHAT_HUB,
  clientsFor,
  createDeployment,
  createNamespace,
  eventually,
  waitEstablished,
} from "../kube/support.js";
import {
  condition,
  createPolicy,
  getPolicy,
  kubectlAs,
  policyManifest,
  ROOT,
  SUB,
  signalrId,
} from "../production/support.js";
import { CHART, type Doc, helm } from "./support.js";

const RELEASE = "sa";
const FULLNAME = "sa-signalr-autoscaler";
const POD_NAME = `${FULLNAME}-0`;

let cp: ControlPlane;
let admin: KubeClients;
let rbac: RbacAuthorizationV1Api;
let policy: PolicyV1Api;
let emulator: RunningEmulator | undefined;
let child: ChildProcess | undefined;
let dir = "";

beforeAll(async () => {
  cp = await startControlPlane();
  admin = clientsFor(cp.kubeconfigAdmin);
  rbac = admin.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  policy = admin.kubeConfig.makeApiClient(PolicyV1Api);
  dir = await mkdtemp(join(tmpdir(), "signalr-autoscaler-chart-"));
}, 180_000);

afterAll(async () => {
  child?.kill("SIGKILL");
  await emulator?.stop();
  await cp?.stop();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

/** Kubernetes' answer to reading an object: its status code (200 when it exists). */
async function status(read: () => Promise<unknown>): Promise<number> {
  try {
    await read();
    return 200;
  } catch (err) {
    return (err as { code?: number }).code ?? 0;
  }
}

/** The container's environment as `run` sees it in a pod named POD_NAME in `namespace`. */
function podEnv(env: Doc[], namespace: string): Record<string, string> {
  const fields: Record<string, string> = { "metadata.name": POD_NAME, "metadata.namespace": namespace };
  return Object.fromEntries(
    env.map((e) => {
      const field = e["valueFrom"]?.fieldRef?.fieldPath as string | undefined;
      const value = field === undefined ? e["value"] : fields[field];
      if (typeof value !== "string") throw new Error(`env ${e["name"]}: cannot resolve ${JSON.stringify(e)}`);
      return [e["name"] as string, value];
    }),
  );
}

describe("helm install", () => {
  it("installs the CRD and the operator, which reconciles as the chart's ServiceAccount; helm uninstall keeps the CRD", async () => {
    const ns = `helm-${randomBytes(3).toString("hex")}`;
    const app = await createNamespace(admin, "helm-chat");
    const unwatched = await createNamespace(admin, "helm-other");
    const values = join(dir, "values.yaml");
    await writeFile(
      values,
      stringify({
        azure: { clientId: "12345678-1234-1234-1234-123456789abc" },
        watchNamespaces: [app],
        tenancy: { namespaces: { [app]: [{ subscriptionId: SUB, resourceGroup: "rg-chat" }] } },
      }),
    );
    const kubeconfig = `--kubeconfig=${cp.kubeconfigAdmin}`;
    const installed = await helm(
      ["install", RELEASE, CHART, kubeconfig, "-n", ns, "--create-namespace", "-f", values],
      120_000,
    );
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("STATUS: deployed");
    expect(installed.stdout).toContain(`kubectl -n ${ns} get lease ${FULLNAME}`);

    // The CRD as crds/ has it (the enum value Off is a string, not false), kept on uninstall.
    await waitEstablished(admin);
    const crd = await admin.apiextensions.readCustomResourceDefinition({ name: CRD_NAME });
    expect(crd.metadata?.annotations?.["helm.sh/resource-policy"]).toBe("keep");
    expect(crd.metadata?.annotations?.["meta.helm.sh/release-name"]).toBe(RELEASE);
    const stored = await kubectlAs(cp.kubeconfigAdmin, ["get", "crd", CRD_NAME, "-o", "json"]);
    expect(stored.stdout.replace(/\s+/g, "")).toContain('"enum":["Off","ForecastOnly","Enabled"]');

    // The namespaced RBAC: a RoleBinding in the watched namespace, no ClusterRoleBinding.
    const binding = await rbac.readNamespacedRoleBinding({ namespace: app, name: FULLNAME });
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: FULLNAME, namespace: ns }]);
    expect(await status(() => rbac.readClusterRoleBinding({ name: FULLNAME }))).toBe(404);

    // Azure and the app servers: one instance inside the namespace's scope, one outside.
    emulator = await startEmulator({ noiseAmplitude: 0, ingestionDelayMs: 120_000 });
    const inScope = signalrId("helm-chat", "rg-chat");
    const outOfScope = signalrId("helm-billing", "rg-billing");
    for (const resourceId of [inScope, outOfScope]) {
      emulator.control.addInstance({ resourceId, sku: "Premium_P1", units: 2, connections: 1200 });
    }
    await createDeployment(admin, app, "chat-hub", 1);
    await createPolicy(
      admin,
      policyManifest(app, "chat", inScope, { appServer: CHAT_HUB, pollIntervalSeconds: 10 }),
    );
    await createPolicy(admin, policyManifest(app, "billing", outOfScope, { pollIntervalSeconds: 10 }));
    await createPolicy(admin, policyManifest(unwatched, "chat", inScope, { pollIntervalSeconds: 10 }));

    // What the pod would get: the installed Deployment's arguments and environment, the installed
    // tenancy ConfigMap as a file, and a token of the installed ServiceAccount.
    const deployment = await admin.apps.readNamespacedDeployment({ namespace: ns, name: FULLNAME });
    const container = deployment.spec?.template.spec?.containers[0] as Doc;
    expect(deployment.spec?.template.spec?.serviceAccountName).toBe(FULLNAME);
    const env = podEnv(container["env"] as Doc[], ns);
    expect(env).toMatchObject({ WATCH_NAMESPACES: app, LEASE_NAME: FULLNAME, POD_NAMESPACE: ns });
    const tenancy = await admin.core.readNamespacedConfigMap({ namespace: ns, name: `${FULLNAME}-tenancy` });
    const tenancyFile = join(dir, "tenancy.yaml");
    await writeFile(tenancyFile, tenancy.data?.["tenancy.yaml"] ?? "");
    const token = await kubectlAs(cp.kubeconfigAdmin, ["create", "token", FULLNAME, "-n", ns]);
    expect(token.code, token.stderr).toBe(0);
    const operatorKubeconfig = join(dir, "kubeconfig");
    await writeFile(
      operatorKubeconfig,
      stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "local", cluster: { server: cp.server, "certificate-authority": cp.caFile } }],
        users: [{ name: FULLNAME, user: { token: token.stdout.trim() } }],
        contexts: [{ name: "local", context: { cluster: "local", user: FULLNAME } }],
        "current-context": "local",
      }),
      { mode: 0o600 },
    );
    const ca = join(dir, "azure-ca.pem");
    await writeFile(ca, emulator.caPem);

    let stdout = "";
    let stderr = "";
    const proc = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "src/cli/main.ts",
        ...(container["args"] as string[]),
        `--kubeconfig=${operatorKubeconfig}`,
        `--arm-endpoint=${emulator.armEndpoint}`,
        `--metrics-endpoint=${emulator.metricsEndpointTemplate}`,
        `--ca-file=${ca}`,
        "--azure-credential=static",
        "--lease-duration=4",
        "--renew-deadline=3",
        "--retry-period=0.5",
      ],
      {
        cwd: ROOT,
        env: {
          ...env,
          // Loopback only, on a free port, instead of the pod's :8080.
          HTTP_ADDRESS: "127.0.0.1:0",
          TENANCY_FILE: tenancyFile,
          PATH: process.env["PATH"] ?? "/usr/bin:/bin",
          HOME: dir,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child = proc;
    proc.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    proc.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once("exit", (code, signal) => resolve({ code, signal })),
    );

    try {
      await eventually(
        async () => {
          expect(condition(await getPolicy(admin, app, "chat"), "Ready")?.status, stderr).toBe("True");
        },
        90_000,
        250,
      );
      await eventually(
        async () =>
          expect(condition(await getPolicy(admin, app, "billing"), "Ready"), stderr).toMatchObject({
            status: "False",
            reason: "OutOfScope",
          }),
        30_000,
        250,
      );
      await eventually(
        async () =>
          expect(
            (await admin.apps.readNamespacedDeploymentScale({ namespace: app, name: "chat-hub" })).spec
              ?.replicas,
          ).toBe(2),
        30_000,
        250,
      );
      expect((await new LeaseClient(admin).get(ns, FULLNAME))?.record.holderIdentity).toBe(POD_NAME);
      // Outside the watched namespaces nothing is read or written.
      expect((await getPolicy(admin, unwatched, "chat")).status ?? {}).toEqual({});
      expect(stdout).not.toMatch(/forbidden|\b403\b/i);
    } finally {
      proc.kill("SIGTERM");
    }
    const exit = await Promise.race([
      exited,
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 30_000)),
    ]);
    expect(exit, stderr).toEqual({ code: 0, signal: null });
    child = undefined;

    // Uninstall: everything but the CRD goes; the CRD and so the policies stay.
    const uninstalled = await helm(["uninstall", RELEASE, kubeconfig, "-n", ns], 120_000);
    expect(uninstalled.code, uninstalled.stderr).toBe(0);
    expect(uninstalled.stdout).toContain(`[CustomResourceDefinition] ${CRD_NAME}`);
    expect(await status(() => admin.apiextensions.readCustomResourceDefinition({ name: CRD_NAME }))).toBe(
      200,
    );
    expect(condition(await getPolicy(admin, app, "chat"), "Ready")?.status).toBe("True");
    const gone = {
      deployment: () => admin.apps.readNamespacedDeployment({ namespace: ns, name: FULLNAME }),
      serviceAccount: () => admin.core.readNamespacedServiceAccount({ namespace: ns, name: FULLNAME }),
      service: () => admin.core.readNamespacedService({ namespace: ns, name: `${FULLNAME}-metrics` }),
      tenancy: () => admin.core.readNamespacedConfigMap({ namespace: ns, name: `${FULLNAME}-tenancy` }),
      clusterRole: () => rbac.readClusterRole({ name: FULLNAME }),
      roleBinding: () => rbac.readNamespacedRoleBinding({ namespace: app, name: FULLNAME }),
      leaseRole: () => rbac.readNamespacedRole({ namespace: ns, name: `${FULLNAME}-leader-election` }),
      disruptionBudget: () => policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: FULLNAME }),
    };
    for (const [what, read] of Object.entries(gone)) expect(await status(read), what).toBe(404);
    const list = await helm(["list", kubeconfig, "-n", ns, "-o", "json"]);
    expect(JSON.parse(list.stdout)).toEqual([]);
    expect(await readFile(tenancyFile, "utf8")).toContain("rg-chat");
  });
});
