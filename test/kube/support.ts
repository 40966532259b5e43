/** Shared helpers of the kube adapter integration tests (not a test file). */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { inject } from "vitest";
import {
  API_VERSION,
  type CapacityPolicy,
  CRD_NAME,
  GROUP,
  KIND,
  PLURAL,
  VERSION,
} from "../../src/api/index.js";
import { createKubeClients, type KubeClients, loadKubeConfig } from "../../src/kube/index.js";
import { repoRoot } from "../../src/localcluster/index.js";

const execFileAsync = promisify(execFile);

export const CRD_FILE = join(repoRoot(), "crds", `${CRD_NAME}.yaml`);

export function controlPlane() {
  return inject("controlPlane");
}

export function clientsFor(kubeconfig: string): KubeClients {
  return createKubeClients(loadKubeConfig({ kind: "file", path: kubeconfig }), { requestTimeoutMs: 15_000 });
}

export function adminClients(): KubeClients {
  return clientsFor(controlPlane().kubeconfigAdmin);
}

/** Runs the real kubectl with `kubeconfig` (default: admin); throws with stderr on failure. */
export async function kubectl(
  args: readonly string[],
  kubeconfig = controlPlane().kubeconfigAdmin,
): Promise<string> {
  const cacheDir = await mkdtemp(join(tmpdir(), "kubectl-cache-"));
  try {
    const { stdout } = await execFileAsync(
      controlPlane().kubectl,
      [`--kubeconfig=${kubeconfig}`, `--cache-dir=${cacheDir}`, ...args],
      { env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: cacheDir }, timeout: 60_000 },
    );
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(" ")}: ${e.stderr ?? e.message}`);
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}

/** Applies the generated CRD with kubectl and waits until it is Established. */
export async function ensureCrd(kubeconfig = controlPlane().kubeconfigAdmin): Promise<void> {
  if (!existsSync(CRD_FILE)) throw new Error(`${CRD_FILE} is missing; run npm run gen:crds`);
  await kubectl(["apply", "--server-side", "--force-conflicts", "-f", CRD_FILE], kubeconfig);
  const clients = clientsFor(kubeconfig);
  await waitEstablished(clients);
  // Discovery of the new group can lag behind Established by a moment.
  await eventually(async () => {
    await clients.customObjects.listCustomObjectForAllNamespaces({
      group: GROUP,
      version: VERSION,
      resourcePlural: PLURAL,
      limit: 1,
    });
  }, 30_000);
}

/**
 * Waits (up to 60 s) until the API server says the CapacityPolicy CRD is `Established`. Polled
 * through the API rather than with `kubectl wait --for=condition=Established`, which fails at once
 * (".status.conditions accessor error: <nil>") when it reads the CRD before the API server has
 * written any condition — as it can right after an apply on a busy machine.
 */
export async function waitEstablished(clients: KubeClients): Promise<void> {
  await eventually(
    async () => {
      const crd = await clients.apiextensions.readCustomResourceDefinition({ name: CRD_NAME });
      const established = crd.status?.conditions?.find((c) => c.type === "Established");
      if (established?.status !== "True") throw new Error(`CRD ${CRD_NAME} is not Established yet`);
    },
    60_000,
    100,
  );
}

/** A fresh namespace named `<prefix>-<random>`. (No namespace controller runs, so none is deleted.) */
export async function createNamespace(clients: KubeClients, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString("hex")}`;
  await clients.core.createNamespace({ body: { metadata: { name } } });
  return name;
}

export function samplePolicy(namespace: string, name: string, extra: Partial<CapacityPolicy["spec"]> = {}) {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace },
    spec: {
      target: {
        service: "SignalR",
        resourceId: `/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/${name}`,
      },
      units: { min: 1, max: 10 },
      ...extra,
    },
  };
}

export async function createPolicy(
  clients: KubeClients,
  namespace: string,
  name: string,
  extra: Partial<CapacityPolicy["spec"]> = {},
): Promise<CapacityPolicy> {
  return createPolicyObject(clients, samplePolicy(namespace, name, extra));
}

/** Creates the CapacityPolicy `manifest` (in the namespace its metadata names), as kubectl create would. */
export async function createPolicyObject(
  clients: KubeClients,
  manifest: Record<string, unknown>,
): Promise<CapacityPolicy> {
  const namespace = (manifest["metadata"] as { namespace: string }).namespace;
  return (await clients.customObjects.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: PLURAL,
    body: manifest,
  })) as CapacityPolicy;
}

export async function getPolicy(
  clients: KubeClients,
  namespace: string,
  name: string,
): Promise<CapacityPolicy> {
  return (await clients.customObjects.getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: PLURAL,
    name,
  })) as CapacityPolicy;
}

export function condition(p: CapacityPolicy, type: string) {
  return p.status?.conditions?.find((c) => c.type === type);
}

export function deploymentManifest(namespace: string, name: string, replicas = 1) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "registry.invalid/app:1" }] },
      },
    },
  };
}

/** Creates the app-server Deployment `name` of {@link deploymentManifest} in `namespace`. */
export async function createDeployment(
  clients: KubeClients,
  namespace: string,
  name: string,
  replicas = 1,
): Promise<void> {
  await clients.apps.createNamespacedDeployment({
    namespace,
    body: deploymentManifest(namespace, name, replicas),
    // As a person would create it: the operator takes spec.replicas over on its first sizing.
    fieldManager: "kubectl-create",
  });
}

/** The app servers of the test policies: the Deployment `chat-hub`, 1–20 replicas of 1,000 connections. */
export const CHAT_HUB = {
  deploymentName: "chat-hub",
  replicas: { min: 1, max: 20 },
  connectionsPerReplica: 1000,
};

/** Retries `check` until it stops throwing, or rethrows its last error after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
