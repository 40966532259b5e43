/**
 * Shared pieces of the production-readiness tests (not a test file): operators built like `run`
 * builds them, a private control plane for tests that change cluster-wide RBAC, kubectl with an
 * exit code, a TCP relay that can cut a client off from the API server, and HTTP scrapes.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createAzureAdapters } from "../../src/azure/index.js";
import { scaledClock } from "../../src/controller/clock.js";
import { startProbeServer } from "../../src/controller/http.js";
import type { LeaseOps } from "../../src/controller/leader.js";
import { createLogger, type LogLevel } from "../../src/controller/logging.js";
import { OperatorMetrics } from "../../src/controller/metrics.js";
import { Operator, type OperatorSettings, type PassReport } from "../../src/controller/operator.js";
import { type EmulatorOptions, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { repoRoot } from "../../src/localcluster/index.js";
import { staticCredential } from "../azure/helpers.js";
import { controlPlane } from "../kube/support.js";
import { policyManifest as operatorPolicyManifest, TEST_BEHAVIOR } from "../operator/helpers.js";

export { condition, createPolicyObject as createPolicy, getPolicy } from "../kube/support.js";

export const ROOT = repoRoot();
export const SUB = "00000000-0000-0000-0000-000000000000";
export const OTHER_SUB = "11111111-1111-1111-1111-111111111111";
export const OPERATOR_NAMESPACE = "signalr-autoscaler-system";
export const LEASE_NAME = "signalr-autoscaler";

export function signalrId(name: string, rg = "rg-chat", sub = SUB): string {
  return `/subscriptions/${sub}/resourceGroups/${rg}/providers/Microsoft.SignalRService/SignalR/${name}`;
}

/** An emulator at 60× (a virtual minute per real second), no noise, no ARM rate limit. */
export function startFastEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return startEmulator({
    speed: 60,
    scaleDurationMs: 120_000,
    ingestionDelayMs: 120_000,
    noiseAmplitude: 0,
    armRateLimit: false,
    ...options,
  });
}

/** JSON log lines kept in memory (the operator's pino output, with the production redaction). */
export class LogCapture {
  readonly lines: Record<string, unknown>[] = [];
  text = "";
  readonly stream = new Writable({
    write: (chunk: Buffer, _enc, done) => {
      const text = chunk.toString("utf8");
      this.text += text;
      for (const line of text.split("\n")) {
        if (line.trim() === "") continue;
        this.lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
}

export interface TestOperator {
  operator: Operator;
  metrics: OperatorMetrics;
  reports: PassReport[];
  logs: LogCapture;
  azure: ReturnType<typeof createAzureAdapters>;
  /** The probe server's URL when `probes` was asked for. */
  probesUrl?: string;
  stop(graceMs?: number): Promise<void>;
}

/**
 * The real Operator wired as `run` wires it (adapters with the call observer, metrics, a JSON
 * logger with the production redaction, optionally the probe server), on the emulator's clock.
 */
export async function startOperator(options: {
  kube: KubeClients;
  emulator: RunningEmulator;
  settings?: OperatorSettings;
  leaseOps?: LeaseOps;
  probes?: boolean;
  logLevel?: LogLevel;
  token?: string;
  start?: boolean;
}): Promise<TestOperator> {
  const { emulator } = options;
  const clock = scaledClock(emulator.clock);
  const azure = createAzureAdapters({
    credential: staticCredential(options.token ?? "test-token"),
    armEndpoint: emulator.armEndpoint,
    metricsEndpoint: emulator.metricsEndpoint,
    ca: emulator.caPem,
    now: () => new Date(clock.now()),
    requestTimeoutMs: 5_000,
  });
  const logs = new LogCapture();
  const log = createLogger({ level: options.logLevel ?? "debug", destination: logs.stream });
  const metrics = new OperatorMetrics({ now: clock.now });
  const operator = new Operator(
    {
      kube: options.kube,
      azure,
      log,
      metrics,
      clock,
      ...(options.leaseOps ? { leaseOps: options.leaseOps } : {}),
    },
    { tickMs: 1000, ...options.settings },
  );
  const reports: PassReport[] = [];
  operator.onPass((r) => reports.push(r));
  const probes = options.probes
    ? await startProbeServer({
        address: "127.0.0.1:0",
        metrics: () => metrics.expose(),
        readiness: operator.readiness(),
      })
    : undefined;
  if (options.start !== false) await operator.start();
  let stopped = false;
  return {
    operator,
    metrics,
    reports,
    logs,
    azure,
    ...(probes ? { probesUrl: probes.url } : {}),
    async stop(graceMs = 2000) {
      if (stopped) return;
      stopped = true;
      await operator.stop(graceMs);
      await probes?.close();
    },
  };
}

/**
 * A CapacityPolicy manifest: the operator tests' policy (Premium_P1 1–50 units on connections and
 * server load, polled every 15 s), scaling down after a 600 s window at the default rate.
 */
export function policyManifest(
  namespace: string,
  name: string,
  resourceId: string,
  spec: Record<string, unknown> = {},
): Record<string, unknown> {
  return operatorPolicyManifest(namespace, name, resourceId, {
    behavior: { ...TEST_BEHAVIOR, scaleDown: { stabilizationWindowSeconds: 600 } },
    ...spec,
  });
}

export interface Exec {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program; never throws for a non-zero exit (the result has the code). */
export function exec(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Exec> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({
          code,
          stdout: String(stdout),
          stderr: String(stderr) || (err && code === 1 ? err.message : ""),
        });
      },
    );
  });
}

/** kubectl (the control plane's) with `kubeconfig`, returning the exit code instead of throwing. */
export async function kubectlAs(kubeconfig: string, args: readonly string[]): Promise<Exec> {
  const home = await mkdtemp(join(tmpdir(), "kubectl-home-"));
  try {
    return await exec(
      controlPlane().kubectl,
      [`--kubeconfig=${kubeconfig}`, `--cache-dir=${home}`, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home },
        timeoutMs: 60_000,
      },
    );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** `kubectl auth can-i` as the holder of `kubeconfig`: true for "yes". */
export async function canI(kubeconfig: string, args: readonly string[]): Promise<boolean> {
  const r = await kubectlAs(kubeconfig, ["auth", "can-i", ...args]);
  const answer = r.stdout.trim();
  if (answer !== "yes" && answer !== "no")
    throw new Error(`kubectl auth can-i ${args.join(" ")}: ${r.stderr}`);
  return answer === "yes";
}

/**
 * A TCP relay to `target` (host:port) on a free loopback port. `cut()` closes the listener and
 * every relayed connection, so clients see the server as down (connection refused);
 * `restore()` listens on the same port again.
 */
export async function startRelay(target: { host: string; port: number }): Promise<{
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      sockets.clear();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return {
    port,
    cut,
    restore: () => listen(port),
    close: cut,
  };
}

/** GET `url`: status and body. */
export async function httpGet(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text() };
}

/** The sum of every sample of `name` whose labels include `labels`. */
export function sampleSum(body: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of body.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/** One sample of a Prometheus text exposition: the value of `name{labels…}` (labels matched as given). */
export function sampleValue(
  body: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of body.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const ok = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (!ok) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) return value;
  }
  return undefined;
}
