/** Shared helpers of the operator integration tests (not a test file). */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { API_VERSION, type CapacityPolicy, GROUP, KIND, PLURAL, VERSION } from "../../src/api/index.js";
import type { RequestRecord, RunningEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { mergePatchOptions } from "../../src/kube/client.js";
import { scalar } from "../cluster/prometheus-query.js";
import { condition, createPolicyObject, eventually, getPolicy } from "../kube/support.js";

export { condition, createPolicyObject as createPolicy, getPolicy } from "../kube/support.js";

type Spec = Record<string, unknown>;

/**
 * Scale-up in one step, scale-down after a 300 s window in one step, settle 60 s. Scale-ins are
 * not weighed against their disconnections (`disruption.policy: Ignore`): these tests pin the
 * window, the reads and the writes; the weighing has its own tests (stages/disruption.test.ts).
 */
export const TEST_BEHAVIOR = {
  scaleUp: { stabilizationWindowSeconds: 0, policies: [{ type: "Units", value: 1000, periodSeconds: 60 }] },
  scaleDown: {
    stabilizationWindowSeconds: 300,
    policies: [{ type: "Percent", value: 100, periodSeconds: 60 }],
    disruption: { policy: "Ignore" },
  },
  settleSeconds: 60,
};

/**
 * A small policy for tests: Premium_P1 1–50 units, connections and server load, scale-up in one
 * step, scale-down after a 300 s window in one step, settle 60 s, poll every 15 s. `spec`
 * overrides top-level spec fields (shallowly).
 */
export function policyManifest(
  namespace: string,
  name: string,
  resourceId: string,
  spec: Spec = {},
  metadata: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace, ...metadata },
    spec: {
      target: { service: "SignalR", resourceId },
      units: { min: 1, max: 50 },
      skus: ["Premium_P1"],
      metrics: {
        connections: { targetPercent: 80 },
        serverLoad: { targetPercent: 70 },
        window: "5m",
        ingestionDelay: "3m",
      },
      behavior: TEST_BEHAVIOR,
      pollIntervalSeconds: 15,
      ...spec,
    },
  };
}

/** Merge-patches a policy (spec or metadata), as a user would with kubectl patch --type merge. */
export async function patchPolicy(
  kube: KubeClients,
  namespace: string,
  name: string,
  body: Record<string, unknown>,
): Promise<CapacityPolicy> {
  return (await kube.customObjects.patchNamespacedCustomObject(
    { group: GROUP, version: VERSION, namespace, plural: PLURAL, name, body },
    mergePatchOptions(),
  )) as CapacityPolicy;
}

/** The ARM writes (PATCH/PUT) the emulator served for one instance, in order. */
export function armWritesFor(requests: readonly RequestRecord[], resourceId: string): RequestRecord[] {
  const id = resourceId.toLowerCase();
  return requests.filter((r) => r.kind === "armWrite" && r.path.toLowerCase() === id);
}

/** Collects every request the emulator serves (the emulator's own log keeps only the last 2,000). */
export function requestCollector(): { onRequest: (r: RequestRecord) => void; all: RequestRecord[] } {
  const all: RequestRecord[] = [];
  return { all, onRequest: (r) => all.push({ ...r }) };
}

/**
 * The instance `id` in the emulator on Premium_P1 × 10 with 2,000 connections, and the policy
 * `name` on it (10–50 units, `spec` overrides top-level fields), once it is Ready (within 60 s).
 */
export async function readyOnP1x10(
  kube: KubeClients,
  emulator: RunningEmulator,
  ns: string,
  name: string,
  id: string,
  spec: Spec = {},
): Promise<void> {
  emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 2000 });
  await createPolicyObject(kube, policyManifest(ns, name, id, { units: { min: 10, max: 50 }, ...spec }));
  await eventually(
    async () => expect(condition(await getPolicy(kube, ns, name), "Ready")?.status).toBe("True"),
    60_000,
    200,
  );
}

/** Scrapes that span more than a minute at a 15-virtual-second scrape interval. */
const SCRAPES_PAST_A_MINUTE = 6;

/**
 * Waits (up to 30 s) until the Prometheus at `url` holds a series of `selector` scraped for longer
 * than a minute at the emulator's virtual now ({@link SCRAPES_PAST_A_MINUTE} samples within the last
 * 5 minutes), as in a cluster where Prometheus ran before the operator. Until then a `rate(…[1m])`
 * reads low: Prometheus extrapolates at most half a scrape interval before a series' first sample,
 * so 30 s into a new series it sees about 60 % of the rate, and the leading signal's first lifetime
 * pairs would be measured long (`src/autoscale/leading.ts`: the median of the first 3 pairs).
 */
export async function untilScrapedForAMinute(
  url: string,
  selector: string,
  emulator: RunningEmulator,
): Promise<void> {
  await eventually(
    async () => {
      const samples = await scalar(url, `max(count_over_time(${selector}[5m]))`, emulator.clock.nowMs());
      expect(samples).toBeGreaterThanOrEqual(SCRAPES_PAST_A_MINUTE);
    },
    30_000,
    100,
  );
}

/** Events about one object in a namespace: reason → messages. */
export async function eventsFor(
  kube: KubeClients,
  namespace: string,
  name: string,
): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await kube.core.listNamespacedEvent({ namespace });
  return list.items
    .filter((e) => e.involvedObject.name === name && e.involvedObject.kind === KIND)
    .map((e) => ({ type: e.type ?? "", reason: e.reason ?? "", message: e.message ?? "" }));
}

/**
 * The policy's Events once `ready(events)` holds (polled up to `timeoutMs`). Events are recorded
 * after the status write of the pass that caused them, so a test that has just seen the status or
 * the ARM update waits for them here instead of reading them once.
 */
export async function eventsOnce(
  kube: KubeClients,
  namespace: string,
  name: string,
  ready: (events: { type: string; reason: string; message: string }[]) => boolean,
  timeoutMs = 10_000,
): Promise<{ type: string; reason: string; message: string }[]> {
  return eventually(
    async () => {
      const events = await eventsFor(kube, namespace, name);
      expect(ready(events), `Events of ${namespace}/${name}: ${JSON.stringify(events)}`).toBe(true);
      return events;
    },
    timeoutMs,
    100,
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the real kubectl with `input` on stdin; never throws for a non-zero exit. */
export async function kubectlWithInput(
  kubectlPath: string,
  kubeconfig: string,
  args: readonly string[],
  input: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cacheDir = await mkdtemp(join(tmpdir(), "kubectl-cache-"));
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(kubectlPath, [`--kubeconfig=${kubeconfig}`, `--cache-dir=${cacheDir}`, ...args], {
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: cacheDir },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      child.on("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      child.stdin.end(input);
    });
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}
