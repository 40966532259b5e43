import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubeClients, loadKubeConfig } from "./client.js";
import { UnavailableError } from "./errors.js";
import { PolicyClient } from "./policies.js";

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
  const seen: { userAgent: string | undefined }[] = [];

  beforeAll(async () => {
    // Accepts requests and never answers.
    silent = createServer((req) => {
      seen.push({ userAgent: req.headers["user-agent"] });
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
