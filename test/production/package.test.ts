/**
 * The production layout, as the Dockerfile assembles it (no container engine here): the esbuild
 * bundle of `npm run bundle` (its entry and chunks) and package.json in a temporary directory,
 * nothing else — no node_modules. `run`'s part of the bundle holds none of the chart renderer,
 * the progress bars or the emulator's certificate maker. From it, `--help` and `--version` work,
 * and `run` — as an unprivileged user (uid 65532, like the image) that cannot write to the
 * application tree — operates against the local control plane with exactly the deploy/ RBAC,
 * reports ready, keeps every credential out of its logs, the policy status and Events, and on
 * SIGTERM releases its lease and exits 0.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmod, chown, copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BUNDLE_ENTRY,
  bundleCli,
  type CliBundle,
  commandClosure,
  folderBytes,
} from "../../scripts/bundle.js";
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

/** The node flags of the image's ENTRYPOINT (Dockerfile), between the node binary and the entry. */
async function imageNodeFlags(): Promise<string[]> {
  const dockerfile = await readFile(join(ROOT, "Dockerfile"), "utf8");
  const line = dockerfile.split("\n").find((l) => l.startsWith("ENTRYPOINT "));
  const argv = JSON.parse(line?.slice("ENTRYPOINT ".length) ?? "[]") as string[];
  return argv.slice(1, argv.indexOf(BUNDLE_ENTRY));
}
/** The environment the image sets (its `ENV name=value` lines). */
async function imageEnv(): Promise<Record<string, string>> {
  const dockerfile = await readFile(join(ROOT, "Dockerfile"), "utf8");
  const pairs = dockerfile
    .split("\n")
    .filter((l) => l.startsWith("ENV "))
    .map((l) => {
      const pair = l.slice("ENV ".length).trim();
      const eq = pair.indexOf("=");
      return [pair.slice(0, eq), pair.slice(eq + 1)] as const;
    });
  return Object.fromEntries(pairs);
}
const NONROOT = 65532;
/** The token `run --azure-credential static` sends, and a connection string planted in an Azure error. */
const STATIC_TOKEN = "signalr-autoscaler-emulator";
const ACCESS_KEY = "LEAKED0ACCESS0KEY0abcdefghijklmnopqrstuvwxyz0123=";
const CONNECTION_STRING = `Endpoint=https://leak.service.signalr.net;AccessKey=${ACCESS_KEY};Version=1.0;`;

let app: string;
let bundle: CliBundle;
let cpl: ControlPlane | undefined;
let emulator: RunningEmulator | undefined;
let child: ChildProcess | undefined;
const figures: Record<string, string> = {};

/** The image's target: its content above the distroless base, MiB. */
const IMAGE_CONTENT_TARGET_MIB = 30;

beforeAll(async () => {
  const parent = await mkdtemp(join(tmpdir(), "signalr-autoscaler-image-"));
  app = join(parent, "app");
  // Build stage: `npm run bundle`, into the folder the image's /app is.
  const t = Date.now();
  bundle = await bundleCli(app);
  figures["bundle build"] = `${((Date.now() - t) / 1000).toFixed(1)} s`;
  await copyFile(join(ROOT, "package.json"), join(app, "package.json"));
  for (const dir of [parent, app, join(app, "chunks")]) await chmod(dir, 0o755);
  figures["total"] = `${((await folderBytes(app)) / 1024 / 1024).toFixed(1)} MiB`;
  console.log(`production layout: ${JSON.stringify(figures)}`);
}, 300_000);

afterAll(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await emulator?.stop();
  await cpl?.stop();
  if (app) await rm(dirname(app), { recursive: true, force: true });
}, 60_000);

describe("the production layout (the bundle and package.json)", () => {
  it("is the bundle's entry, its chunks and package.json, within the image's size target", async () => {
    const files = (await readdir(app, { recursive: true })).filter((f) => f !== "chunks").sort();
    expect(files.filter((f) => !/^chunks\/[\w-]+\.mjs$/.test(f))).toEqual(["package.json", BUNDLE_ENTRY]);
    expect((await folderBytes(app)) / 1024 / 1024).toBeLessThan(IMAGE_CONTENT_TARGET_MIB);
  });

  it("loads for run none of the chart renderer, the progress bars, the certificate maker or the other commands", () => {
    const forRun = [...commandClosure(bundle.metafile, "run")];
    expect(forRun).toContain("src/cli/commands/run.ts");
    expect(forRun.some((i) => i.startsWith("node_modules/@kubernetes/client-node/"))).toBe(true);
    const elsewhere =
      /^node_modules\/(vega|vega-[a-z]+|cli-progress|selfsigned)\/|^src\/(emulator|simulate|demo|chart|localcluster)\//;
    expect(forRun.filter((i) => elsewhere.test(i))).toEqual([]);
    // The same walk finds them where they are used.
    const forSimulate = [...commandClosure(bundle.metafile, "simulate")];
    expect(forSimulate.some((i) => i.startsWith("node_modules/vega/"))).toBe(true);
    expect(forSimulate.some((i) => i.startsWith("node_modules/cli-progress/"))).toBe(true);
    expect(
      [...commandClosure(bundle.metafile, "emulator")].some((i) => i.startsWith("node_modules/selfsigned/")),
    ).toBe(true);
  });

  it("sizes the heap from the memory limit with the image's node flags", async () => {
    const flags = await imageNodeFlags();
    expect(flags).toEqual(["--max-old-space-size-percentage=50", "--max-semi-space-size=16"]);
    const r = await exec(
      NODE,
      [
        ...flags,
        "-p",
        "JSON.stringify([require('v8').getHeapStatistics().heap_size_limit, process.constrainedMemory(), require('os').totalmem()])",
      ],
      {
        cwd: app,
        env: { PATH: "/usr/bin:/bin" },
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const [limit, constrained, total] = JSON.parse(r.stdout) as [number, number, number];
    // Node reads the cgroup's limit; without one (or "max"), the machine's memory.
    const memory = constrained > 0 && constrained < total ? constrained : total;
    // Half the memory for the old space, plus V8's young generation: three 16 MB semi-spaces'
    // worth (48 MB), not the 192 MB of Node 24's default 64 MB semi-spaces.
    expect(limit).toBeGreaterThanOrEqual(memory * 0.5 * 0.98);
    expect(limit).toBeLessThanOrEqual(memory * 0.5 + 48 * 2 ** 20);
  });

  it("answers --help and --version", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
    const version = await exec(NODE, [BUNDLE_ENTRY, "--version"], {
      cwd: app,
      env: { PATH: "/usr/bin:/bin" },
    });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toBe(`${pkg.version}\n`);
    const help = await exec(NODE, [BUNDLE_ENTRY, "--help"], {
      cwd: app,
      env: { PATH: "/usr/bin:/bin" },
    });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: signalr-autoscaler/m);
    expect(help.stdout).toMatch(/^\s+run\b/m);
    const run = await exec(NODE, [BUNDLE_ENTRY, "run", "--help"], {
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

  it("logs for people with --log-format pretty (pino-pretty inside the bundle)", async () => {
    // An API server that is not there: the operator starts, logs, and is stopped by the timeout's SIGTERM.
    const kubeconfig = join(dirname(app), "nowhere.kubeconfig");
    await writeFile(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: c, context: { cluster: c, user: u } }]
current-context: c
`,
    );
    const r = await exec(
      NODE,
      [
        BUNDLE_ENTRY,
        "run",
        `--kubeconfig=${kubeconfig}`,
        "--arm-endpoint=https://127.0.0.1:1",
        "--azure-credential=static",
        "--http-address=127.0.0.1:0",
        "--log-format=pretty",
      ],
      { cwd: app, env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent" }, timeoutMs: 8_000 },
    );
    expect(r.stdout, r.stderr).toMatch(/^\[[^\]]+\] INFO: starting$/m);
    expect(r.stdout).not.toMatch(/^\{/m);
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
      ...(await imageNodeFlags()),
      BUNDLE_ENTRY,
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
        `require("node:fs").writeFileSync(${JSON.stringify(join(app, "chunks", "probe"))}, "x")`,
      ]);
      expect(write.code).not.toBe(0);
      expect(write.stderr).toMatch(/EACCES/);
    }
    const [file, argv] = asRoot ? ["setpriv", [...setpriv, NODE, ...args]] : [NODE, args];
    let stdout = "";
    let stderr = "";
    const proc = spawn(file, argv as string[], {
      cwd: app,
      env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", ...(await imageEnv()) },
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
      const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${proc.pid}/status`, "utf8"))?.[1]);
      expect(rssKiB).toBeGreaterThan(0);
      console.log(`operator from the bundle, one policy reconciled: RSS ${(rssKiB / 1024).toFixed(1)} MiB`);
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
    expect(failed).toMatchObject({ level: 40, namespace: ns, policy: "chat", failure: "InvalidRequest" });
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
