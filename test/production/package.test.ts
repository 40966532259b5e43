/**
 * The production layout, as the Dockerfile assembles it (no container engine here): compiled
 * output plus `npm ci --omit=dev` in a temporary directory, nothing else. From it, `--help`
 * works, and `run` — as an unprivileged user (uid 65532, like the image) that cannot write to
 * the application tree — operates against the local control plane with exactly the deploy/
 * RBAC, reports ready, keeps every credential out of its logs, the policy status and Events, and
 * on SIGTERM releases its lease and exits 0.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, chown, copyFile, cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import { startEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { LeaseClient } from "../../src/kube/lease.js";
import { type ControlPlane, startControlPlane } from "../../src/localcluster/index.js";
import {
  CHAT_HUB,
  clientsFor,
  createDeployment,
  createNamespace,
  ensureCrd,
  eventually,
} from "../kube/support.js";
import {
  condition,
  createPolicy,
  exec,
  getPolicy,
  httpGet,
  kubectlAs,
  LEASE_NAME,
  OPERATOR_NAMESPACE,
  policyManifest,
  ROOT,
  signalrId,
} from "./support.js";

const NODE = process.execPath;
const NONROOT = 65532;
/** The token `run --azure-credential static` sends, and a connection string planted in an Azure error. */
const STATIC_TOKEN = "signalr-autoscaler-emulator";
const ACCESS_KEY = "LEAKED0ACCESS0KEY0abcdefghijklmnopqrstuvwxyz0123=";
const CONNECTION_STRING = `Endpoint=https://leak.service.signalr.net;AccessKey=${ACCESS_KEY};Version=1.0;`;

let app: string;
let cpl: ControlPlane | undefined;
let emulator: RunningEmulator | undefined;
let child: ChildProcess | undefined;
const figures: Record<string, string> = {};

async function sizeKiB(path: string): Promise<number> {
  const r = await exec("du", ["-sk", path]);
  return Number(r.stdout.split(/\s/)[0]);
}

beforeAll(async () => {
  app = await mkdtemp(join(tmpdir(), "signalr-autoscaler-image-"));
  await chmod(app, 0o755);
  // Build stage: compiled output only (tsconfig.build.json excludes tests).
  let t = Date.now();
  const build = await exec(
    NODE,
    [
      join(ROOT, "node_modules/typescript/bin/tsc"),
      "-p",
      "tsconfig.build.json",
      "--outDir",
      join(app, "dist"),
    ],
    { cwd: ROOT, timeoutMs: 240_000 },
  );
  expect(build.code, build.stdout + build.stderr).toBe(0);
  figures["tsc build"] = `${((Date.now() - t) / 1000).toFixed(1)} s`;
  // Deps stage: production dependencies only, from the lock file.
  for (const f of ["package.json", "package-lock.json"]) await copyFile(join(ROOT, f), join(app, f));
  await cp(join(ROOT, "crds"), join(app, "crds"), { recursive: true });
  t = Date.now();
  const ci = await exec("npm", ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: app,
    env: { ...process.env, npm_config_update_notifier: "false" },
    timeoutMs: 300_000,
  });
  expect(ci.code, ci.stderr).toBe(0);
  figures["npm ci --omit=dev"] = `${((Date.now() - t) / 1000).toFixed(1)} s`;
  figures["node_modules"] = `${((await sizeKiB(join(app, "node_modules"))) / 1024).toFixed(0)} MiB`;
  figures["dist"] = `${((await sizeKiB(join(app, "dist"))) / 1024).toFixed(1)} MiB`;
  figures["total"] = `${((await sizeKiB(app)) / 1024).toFixed(0)} MiB`;
  console.log(`production layout: ${JSON.stringify(figures)}`);
}, 600_000);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await emulator?.stop();
  await cpl?.stop();
  if (app) await rm(app, { recursive: true, force: true });
}, 60_000);

describe("the production layout (compiled output + production dependencies)", () => {
  it("holds no dev dependency or test, and answers --help", async () => {
    const modules = await readdir(join(app, "node_modules"));
    for (const dev of ["typescript", "vitest", "tsx", "vite", "fast-check", "node"])
      expect(modules).not.toContain(dev);
    expect(await readdir(join(app, "node_modules/@biomejs")).catch(() => [])).toEqual([]);
    const files = await readdir(join(app, "dist"), { recursive: true });
    expect(files.filter((f) => /\.test\.js$/.test(f))).toEqual([]);
    expect(files).toContain("cli/main.js");

    const help = await exec(NODE, ["dist/cli/main.js", "--help"], {
      cwd: app,
      env: { PATH: "/usr/bin:/bin" },
    });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: signalr-autoscaler/m);
    expect(help.stdout).toMatch(/^\s+run\b/m);
    const run = await exec(NODE, ["dist/cli/main.js", "run", "--help"], {
      cwd: app,
      env: { PATH: "/usr/bin:/bin" },
    });
    expect(run.code, run.stderr).toBe(0);
    for (const flag of [
      "--leader-elect",
      "--lease-duration",
      "--renew-deadline",
      "--retry-period",
      "--log-level",
    ]) {
      expect(run.stdout).toContain(flag);
    }
  });

  it("runs as uid 65532 against the local control plane with the deploy/ RBAC: ready, reconciling, no credential in logs, status or Events; SIGTERM releases the lease and exits 0", async () => {
    cpl = await startControlPlane();
    await ensureCrd(cpl.kubeconfigAdmin);
    const applied = await kubectlAs(cpl.kubeconfigAdmin, ["apply", "-k", "deploy/"]);
    expect(applied.code, applied.stderr).toBe(0);
    const admin: KubeClients = clientsFor(cpl.kubeconfigAdmin);
    const ns = await createNamespace(admin, "pkg");
    // Real time: the operator runs on the wall clock.
    emulator = await startEmulator({ noiseAmplitude: 0, ingestionDelayMs: 120_000 });
    const id = signalrId("pkg-chat");
    emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 2, connections: 1200 });
    await createDeployment(admin, ns, "chat-hub", 1);
    await createPolicy(
      admin,
      policyManifest(ns, "chat", id, {
        appServer: CHAT_HUB,
        pollIntervalSeconds: 10,
      }),
    );

    // What the pod gets: a kubeconfig (in-cluster: the projected token) and the CA, readable by it.
    const secrets = await mkdtemp(join(tmpdir(), "signalr-autoscaler-pod-"));
    const kubeconfig = join(secrets, "kubeconfig");
    const ca = join(secrets, "ca.pem");
    await copyFile(cpl.kubeconfigOperator, kubeconfig);
    await writeFile(ca, emulator.caPem);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      await chmod(secrets, 0o755);
      for (const f of [kubeconfig, ca]) await chown(f, NONROOT, NONROOT);
    }
    const args = [
      "dist/cli/main.js",
      "run",
      `--kubeconfig=${kubeconfig}`,
      `--namespace=${ns}`,
      `--arm-endpoint=${emulator.armEndpoint}`,
      `--metrics-endpoint=${emulator.metricsEndpointTemplate}`,
      `--ca-file=${ca}`,
      "--azure-credential=static",
      "--http-address=127.0.0.1:0",
      "--leader-elect",
      `--lease-namespace=${OPERATOR_NAMESPACE}`,
      "--identity=pkg-0",
      "--lease-duration=4",
      "--renew-deadline=3",
      "--retry-period=0.5",
      "--log-level=trace",
    ];
    const setpriv = [`--reuid=${NONROOT}`, `--regid=${NONROOT}`, "--clear-groups", "--"];
    if (asRoot) {
      // As in the image: the application tree is not writable by the process's user.
      const write = await exec("setpriv", [
        ...setpriv,
        NODE,
        "-e",
        `require("node:fs").writeFileSync(${JSON.stringify(join(app, "dist", "probe"))}, "x")`,
      ]);
      expect(write.code).not.toBe(0);
      expect(write.stderr).toMatch(/EACCES/);
    }
    const [file, argv] = asRoot ? ["setpriv", [...setpriv, NODE, ...args]] : [NODE, args];
    let stdout = "";
    let stderr = "";
    const proc = spawn(file, argv as string[], {
      cwd: app,
      env: { PATH: "/usr/bin:/bin", NODE_ENV: "production", HOME: "/nonexistent" },
      stdio: ["ignore", "pipe", "pipe"],
    });
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
      const lines = () =>
        stdout
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      const starting = await eventually(
        () => {
          const line = lines().find((l) => l["msg"] === "starting");
          expect(line, stderr).toBeDefined();
          return line as { http: string };
        },
        30_000,
        100,
      );
      if (asRoot) {
        // setpriv execs node in place: the process's real and effective uids are 65532.
        const status = await readFile(`/proc/${proc.pid}/status`, "utf8");
        expect(status).toMatch(new RegExp(`^Uid:\\s+${NONROOT}\\s+${NONROOT}\\s`, "m"));
      }
      await eventually(
        async () => expect((await httpGet(`${starting.http}/readyz`)).status).toBe(200),
        30_000,
        200,
      );
      expect((await httpGet(`${starting.http}/healthz`)).status).toBe(200);
      await eventually(
        async () => expect(condition(await getPolicy(admin, ns, "chat"), "Ready")?.status).toBe("True"),
        60_000,
        250,
      );
      await eventually(
        async () =>
          expect(
            (await admin.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" })).spec
              ?.replicas,
          ).toBe(2),
        30_000,
        250,
      );
      const metrics = await httpGet(`${starting.http}/metrics`);
      expect(metrics.body).toMatch(
        /signalr_autoscaler_azure_requests_total\{api="GET SignalR",status="200"\} [1-9]/,
      );
      expect(metrics.body).toMatch(/^signalr_autoscaler_leader 1$/m);
      expect((await new LeaseClient(admin).get(OPERATOR_NAMESPACE, LEASE_NAME))?.record.holderIdentity).toBe(
        "pkg-0",
      );

      // Azure answers with an error that echoes the bearer token and a connection string.
      emulator.control.addFault({
        path: "**/metrics:getBatch",
        action: {
          kind: "status",
          status: 400,
          code: "BadRequest",
          message: `Request rejected. Authorization: Bearer ${STATIC_TOKEN}; the instance's connection string is ${CONNECTION_STRING}`,
        },
      });
      const failing = await eventually(
        async () => {
          const p = await getPolicy(admin, ns, "chat");
          expect(condition(p, "MetricsAvailable")?.status).toBe("False");
          return p;
        },
        60_000,
        250,
      );
      expect(JSON.stringify(failing.status)).toContain("[redacted]");
      expect(condition(failing, "MetricsAvailable")?.message).toContain(
        `Bearer [redacted]; the instance's connection string is Endpoint=https://leak.service.signalr.net;AccessKey=[redacted];`,
      );
    } finally {
      proc.kill("SIGTERM");
    }
    const termAt = Date.now();
    const exit = await Promise.race([
      exited,
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 30_000)),
    ]);
    expect(exit, stderr).toEqual({ code: 0, signal: null });
    expect(Date.now() - termAt).toBeLessThan(15_000);
    const lease = await new LeaseClient(admin).get(OPERATOR_NAMESPACE, LEASE_NAME);
    expect(lease?.record.holderIdentity).toBe("");

    // Logs: JSON only, ending with a clean stop.
    const logLines = stdout.split("\n").filter((l) => l.trim() !== "");
    const parsed = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.map((l) => l["msg"])).toEqual(
      expect.arrayContaining(["starting", "became leader", "stopping", "stopped"]),
    );
    expect(parsed.at(-1)?.["msg"]).toBe("stopped");
    // The Azure error was logged — scrubbed — by the pass's child logger.
    const failed = parsed.find((l) => l["msg"] === "Azure read failed");
    expect(failed).toMatchObject({ level: 40, namespace: ns, policy: "chat", failure: "ApiError" });
    expect(failed?.["err"]).toContain("AccessKey=[redacted]");

    // No credential anywhere a person or a log pipeline would see it.
    const status = await kubectlAs(cpl.kubeconfigAdmin, ["get", "capacitypolicies", "-n", ns, "-o", "json"]);
    const events = await kubectlAs(cpl.kubeconfigAdmin, ["get", "events", "-n", ns, "-o", "json"]);
    expect(status.code).toBe(0);
    expect(events.stdout).toContain("[redacted]");
    const leaks = [STATIC_TOKEN, ACCESS_KEY, cpl.operatorToken, cpl.adminToken];
    for (const [where, text] of Object.entries({
      stdout,
      stderr,
      status: status.stdout,
      events: events.stdout,
    })) {
      for (const secret of leaks) expect(text.includes(secret), `${where} contains a credential`).toBe(false);
    }
    await rm(secrets, { recursive: true, force: true });
  });
});
