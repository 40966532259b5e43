import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeClients, loadKubeConfig } from "./client.js";
import { UnavailableError } from "./errors.js";
import { EventRecorder } from "./events.js";
import { LeaseClient } from "./lease.js";
import { PolicyClient } from "./policies.js";
import { readSecretKey } from "./secrets.js";
import { WorkloadClient } from "./workloads.js";

let dir = "";

const kubeconfig = (server: string): string =>
  [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: one",
    `  cluster: { server: "${server}", insecure-skip-tls-verify: true }`,
    "- name: two",
    '  cluster: { server: "http://127.0.0.2:8080", insecure-skip-tls-verify: true }',
    "users:",
    "- name: u",
    "  user: { token: t }",
    "contexts:",
    "- name: first",
    "  context: { cluster: one, user: u }",
    "- name: second",
    "  context: { cluster: two, user: u }",
    "current-context: first",
    "",
  ].join("\n");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kube-client-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(server: string): Promise<string> {
  const path = join(dir, `config-${Math.random().toString(16).slice(2)}`);
  await writeFile(path, kubeconfig(server));
  return path;
}

describe("loadKubeConfig", () => {
  it("loads a file and switches context on request", async () => {
    const path = await writeConfig("http://127.0.0.1:9");
    expect(loadKubeConfig({ kind: "file", path }).getCurrentCluster()?.server).toBe("http://127.0.0.1:9");
    const second = loadKubeConfig({ kind: "file", path, context: "second" });
    expect(second.getCurrentCluster()?.server).toBe("http://127.0.0.2:8080");
    expect(() => loadKubeConfig({ kind: "file", path, context: "third" })).toThrow(/no context 'third'/);
    expect(() => loadKubeConfig({ kind: "file", path: join(dir, "missing") })).toThrow();
  });

  it("refuses in-cluster loading outside a cluster", () => {
    if (process.env["KUBERNETES_SERVICE_HOST"] !== undefined) return;
    expect(() => loadKubeConfig({ kind: "inCluster" })).toThrow(/not running in a cluster/);
  });
});

describe("createKubeClients", () => {
  let silent: Server;
  let port = 0;
  const seen: { method: string | undefined; path: string; userAgent: string | undefined }[] = [];

  beforeAll(async () => {
    // Accepts requests and never answers.
    silent = createServer((req) => {
      const path = (req.url ?? "/").split("?")[0] as string;
      seen.push({ method: req.method, path, userAgent: req.headers["user-agent"] });
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    port = (silent.address() as AddressInfo).port;
  });
  afterAll(async () => {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });

  it("times requests out as UnavailableError and sends its User-Agent", async () => {
    const path = await writeConfig(`http://127.0.0.1:${port}`);
    const clients = createKubeClients(loadKubeConfig({ kind: "file", path }), { requestTimeoutMs: 200 });
    const started = Date.now();
    const err = await new PolicyClient(clients).get("ns", "p").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toMatch(/get capacitypolicies ns\/p: request timed out/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(seen[0]?.userAgent).toBe("signalr-autoscaler");
  });

  it("puts the deadline on every call the operator makes: reads, status and scale patches, Events, Leases, Secrets", async () => {
    const path = await writeConfig(`http://127.0.0.1:${port}`);
    const clients = createKubeClients(loadKubeConfig({ kind: "file", path }), { requestTimeoutMs: 300 });
    const policies = new PolicyClient(clients);
    const workloads = new WorkloadClient(clients);
    const leases = new LeaseClient(clients);
    const events = new EventRecorder(clients);
    const subject = {
      apiVersion: "autoscaling.signalr.dev/v1alpha1",
      kind: "CapacityPolicy",
      namespace: "d",
      name: "p",
    };
    const record = {
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      acquireTime: new Date(0),
      renewTime: new Date(0),
      leaseTransitions: 0,
    };
    const calls: Record<string, () => Promise<unknown>> = {
      "GET /apis/autoscaling.signalr.dev/v1alpha1/namespaces/d/capacitypolicies": () => policies.list("d"),
      "GET /apis/autoscaling.signalr.dev/v1alpha1/namespaces/d/capacitypolicies/p": () =>
        policies.get("d", "p"),
      "PATCH /apis/autoscaling.signalr.dev/v1alpha1/namespaces/d/capacitypolicies/p/status": () =>
        policies.patchStatus("d", "p", { observedGeneration: 1 }, "7"),
      "POST /api/v1/namespaces/d/events": () =>
        events.record(subject, { type: "Normal", reason: "Test", message: "m" }, new Date(0)),
      "PATCH /apis/apps/v1/namespaces/d/deployments/hub": () =>
        workloads.applyDeploymentReplicas("d", "hub", 3, { policy: "d/p" }),
      "GET /apis/apps/v1/namespaces/d/deployments/hub": () =>
        workloads.deploymentReplicasOwnership("d", "hub"),
      "GET /apis/autoscaling/v2/namespaces/d/horizontalpodautoscalers/hub": () =>
        workloads.applyHpaMinReplicas("d", "hub", 3, { policy: "d/p" }),
      "GET /apis/autoscaling/v2/namespaces/d/horizontalpodautoscalers": () =>
        workloads.findHpasForDeployment("d", "hub"),
      "GET /apis/coordination.k8s.io/v1/namespaces/l/leases/lease": () =>
        leases.tryAcquireOrRenew("lease", "l", "a", 15, { wall: new Date(0), monotonicMs: 0 }, undefined),
      "POST /apis/coordination.k8s.io/v1/namespaces/l/leases": () => leases.create("l", "lease", record),
      "PUT /apis/coordination.k8s.io/v1/namespaces/l/leases/lease": () =>
        leases.update({ namespace: "l", name: "lease", resourceVersion: "7", record }, record),
      "GET /api/v1/namespaces/d/secrets/token": () => readSecretKey(clients, "d", "token", "key"),
    };
    seen.length = 0;
    const started = performance.now();
    const outcomes = await Promise.all(
      Object.entries(calls).map(async ([what, call]) => ({
        what,
        err: await call().then(
          () => undefined,
          (e: unknown) => e,
        ),
      })),
    );
    const elapsed = performance.now() - started;
    for (const { what, err } of outcomes) {
      expect(err, what).toBeInstanceOf(UnavailableError);
      expect((err as Error).message, what).toMatch(/timed out/);
    }
    // Each call reached the server (the deadline, not a local failure, ended it), all at once.
    expect(new Set(seen.map((r) => `${r.method} ${r.path}`))).toEqual(new Set(Object.keys(calls)));
    expect(elapsed).toBeLessThan(10_000);
  });

  it("reports a refused connection as UnavailableError", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const path = await writeConfig(`http://127.0.0.1:${freePort}`);
    const clients = createKubeClients(loadKubeConfig({ kind: "file", path }));
    const err = await new PolicyClient(clients).list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toMatch(/ECONNREFUSED|fetch failed/);
  });
});
