/**
 * The demo's Kubernetes side: a cluster (the local control plane, built on first use, or an
 * existing one from a kubeconfig), the CRDs from crds/, a namespace, the app-server Deployment and
 * the CapacityPolicy.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { parse as parseYaml } from "yaml";
import { API_VERSION, type CapacityPolicy, GROUP, KIND, PLURAL, VERSION } from "../api/index.js";
import { createKubeClients, type KubeClients, loadKubeConfig } from "../kube/client.js";
import { NotFoundError, toKubeError } from "../kube/errors.js";
import {
  binariesPresent,
  type ControlPlane,
  controlPlaneBinaries,
  ensureControlPlaneBinaries,
  repoRoot,
  startControlPlane,
} from "../localcluster/index.js";

/** Field manager of what the demo applies. */
const DEMO_FIELD_MANAGER = "signalr-autoscaler-demo";

/** A cluster to run the demo against. */
export interface DemoCluster {
  kube: KubeClients;
  /** Kubeconfig file to reach it (for the user's own kubectl). */
  kubeconfig: string;
  /** kubectl to suggest, when the demo knows one. */
  kubectl?: string;
  /** The local control plane, when the demo started one. */
  local?: ControlPlane;
  /** Stops the local control plane (nothing for an existing cluster). Idempotent. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Use this cluster instead of starting the local control plane. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
  /** Lines about the build and start, for people. */
  onProgress: (line: string) => void;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Typical build time quoted while building (default "about 4 minutes on 2 cores"). */
  buildEstimate?: string;
}

function elapsed(sinceMs: number): string {
  const s = Math.floor((Date.now() - sinceMs) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/**
 * An existing cluster from `kubeconfig`, or the local control plane (kube-apiserver and etcd on
 * loopback), building its binaries first when they are not cached — with progress lines and a
 * heartbeat while the Go build is quiet.
 */
export async function prepareCluster(options: ClusterOptions): Promise<DemoCluster> {
  if (options.kubeconfig !== undefined) {
    const kc = loadKubeConfig({
      kind: "file",
      path: options.kubeconfig,
      ...(options.context !== undefined ? { context: options.context } : {}),
    });
    return {
      kube: createKubeClients(kc, { requestTimeoutMs: 15_000 }),
      kubeconfig: options.kubeconfig,
      stop: async () => {},
    };
  }
  const env = options.env ?? process.env;
  const wanted = controlPlaneBinaries({ env });
  const say = options.onProgress;
  if (!binariesPresent(wanted)) {
    const started = Date.now();
    const estimate = options.buildEstimate ?? "about 4 minutes on 2 cores";
    say(
      `Building the local control plane (kube-apiserver, etcd, kubectl ${wanted.versions.kubernetes}) from ` +
        `its Go modules — first run only, ${estimate}; cached in ${wanted.binDir}`,
    );
    const heartbeat = setInterval(() => say(`  [${elapsed(started)}] still building…`), 20_000);
    try {
      await ensureControlPlaneBinaries({
        env,
        onProgress: (line) => say(`  [${elapsed(started)}] ${line.replace(/^build-control-plane: /, "")}`),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } finally {
      clearInterval(heartbeat);
    }
    say(`Built in ${elapsed(started)}.`);
  }
  const started = Date.now();
  const local = await startControlPlane({ binaries: wanted });
  say(
    `Local control plane (Kubernetes ${wanted.versions.kubernetes}, etcd ${wanted.versions.etcd}) at ${local.server}, ` +
      `ready in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const kc = loadKubeConfig({ kind: "file", path: local.kubeconfigAdmin });
  return {
    kube: createKubeClients(kc, { requestTimeoutMs: 15_000 }),
    kubeconfig: local.kubeconfigAdmin,
    kubectl: wanted.kubectl,
    local,
    stop: () => local.stop(),
  };
}

/** The CRDs in crds/ (every YAML document of kind CustomResourceDefinition). */
async function readCrds(dir = join(repoRoot(), "crds")): Promise<Record<string, unknown>[]> {
  const files = (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort();
  const out: Record<string, unknown>[] = [];
  for (const f of files) {
    const text = await readFile(join(dir, f), "utf8");
    for (const part of text.split(/^---\s*$/m)) {
      const doc = parseYaml(part) as Record<string, unknown> | null;
      if (doc && doc["kind"] === "CustomResourceDefinition") out.push(doc);
    }
  }
  return out;
}

/**
 * Applies the CRDs (server-side apply) and waits until each is Established and the
 * CapacityPolicy API is served.
 */
export async function installCrds(
  kube: KubeClients,
  signal?: AbortSignal,
  timeoutMs = 60_000,
): Promise<string[]> {
  const crds = await readCrds();
  const names: string[] = [];
  for (const crd of crds) {
    const name = String((crd["metadata"] as { name?: unknown } | undefined)?.name ?? "");
    await kube.apiextensions.patchCustomResourceDefinition(
      { name, body: crd, fieldManager: DEMO_FIELD_MANAGER, force: true },
      setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply),
    );
    names.push(name);
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let ready = true;
    for (const name of names) {
      const crd = await kube.apiextensions.readCustomResourceDefinition({ name });
      const established = crd.status?.conditions?.some(
        (c) => c.type === "Established" && c.status === "True",
      );
      if (!established) ready = false;
    }
    if (ready) {
      try {
        await kube.customObjects.listCustomObjectForAllNamespaces({
          group: GROUP,
          version: VERSION,
          resourcePlural: PLURAL,
          limit: 1,
        });
        return names;
      } catch {
        // Discovery of a new group can lag behind Established by a moment.
      }
    }
    if (Date.now() > deadline || signal?.aborted) {
      throw new Error(`the CRDs ${names.join(", ")} did not become established within ${timeoutMs / 1000} s`);
    }
    await sleep(200, undefined, signal ? { signal } : {}).catch(() => {}); // aborted: the next round gives up
  }
}

/** Creates the namespace unless it exists. Returns true when it was created. */
export async function ensureNamespace(kube: KubeClients, name: string): Promise<boolean> {
  try {
    await kube.core.readNamespace({ name });
    return false;
  } catch (err) {
    if (!(toKubeError(err) instanceof NotFoundError)) throw toKubeError(err, `read namespace ${name}`);
  }
  await kube.core.createNamespace({
    body: { metadata: { name, labels: { "app.kubernetes.io/managed-by": DEMO_FIELD_MANAGER } } },
  });
  return true;
}

/**
 * The app-server Deployment (server-side apply): pause containers, which run anywhere and cost
 * nothing on a real cluster; the local control plane runs no Pods at all.
 */
export async function applyAppServers(
  kube: KubeClients,
  namespace: string,
  name: string,
  replicas: number,
): Promise<void> {
  const labels = { app: name, "app.kubernetes.io/part-of": "signalr-autoscaler-demo" };
  await kube.apps.patchNamespacedDeployment(
    {
      name,
      namespace,
      fieldManager: DEMO_FIELD_MANAGER,
      force: true,
      body: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name, namespace, labels },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                {
                  name: "hub",
                  image: "registry.k8s.io/pause:3.10",
                  resources: { requests: { cpu: "1m", memory: "8Mi" }, limits: { memory: "16Mi" } },
                },
              ],
            },
          },
        },
      },
    },
    setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply),
  );
}

/**
 * Creates the CapacityPolicy, replacing one of the same name left by an earlier demo (its status
 * would otherwise carry that run's history into this one).
 */
export async function createPolicy(kube: KubeClients, policy: CapacityPolicy): Promise<CapacityPolicy> {
  const { namespace, name } = policy.metadata;
  const ref = { group: GROUP, version: VERSION, namespace, plural: PLURAL, name };
  try {
    await kube.customObjects.deleteNamespacedCustomObject(ref);
    for (let i = 0; i < 100; i++) {
      await kube.customObjects.getNamespacedCustomObject(ref);
      await sleep(100);
    }
  } catch (err) {
    if (!(toKubeError(err) instanceof NotFoundError)) throw toKubeError(err, `replace ${KIND} ${name}`);
  }
  const body = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace, ...(policy.metadata.labels ? { labels: policy.metadata.labels } : {}) },
    spec: policy.spec,
  };
  return (await kube.customObjects.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: PLURAL,
    body,
  })) as CapacityPolicy;
}
