/**
 * A Kubernetes call that hangs, on the real API server through a loopback proxy: the status PATCH
 * of one policy is accepted by the proxy and never answered (not forwarded) from the moment its
 * ARM update (P1 × 10 → 20 for 2,000 → 9,000 connections) lands, for a while, then answered again.
 * The operator's Kubernetes calls have a 2 s deadline here (`--kube-request-timeout`).
 *
 * - The pass of that policy ends at the deadline (the proxy sees the client give up after it) and
 *   is retried; the passes of another policy keep their pace meanwhile (gaps bounded by the poll
 *   interval plus a margin) and `/readyz` stays ready — the operator is not frozen, a restart
 *   would not help, and the other policies are served.
 * - No second ARM update for the hanging policy: its retried passes find the update from the
 *   instance (src/autoscale/recovery.ts); one ARM write in all, counted from the emulator's log.
 * - Once the proxy answers again the status is written: 20 units and the scale event, `recovered`.
 *
 * The virtual clock runs 60 times faster than real time: the 15 s poll interval is 250 ms here, the
 * 2 s deadline is real time.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PassReport } from "../../src/controller/operator.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { createKubeClients, type KubeClients, loadKubeConfig } from "../../src/kube/client.js";
import { UnavailableError } from "../../src/kube/errors.js";
import { adminClients, controlPlane, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import { type Harness, signalrId, startHarness } from "./harness.js";
import { armWritesFor, condition, eventsOnce, getPolicy, readyOnP1x10, requestCollector } from "./helpers.js";
import { type KubeProxy, startKubeProxy } from "./kube-proxy.js";

const TEST = "test/operator/kube-hang.test.ts";
const SPEED = 60;
const POLL_SECONDS = 15;
/** The operator's Kubernetes request deadline, real ms. */
const DEADLINE_MS = 2000;
/** How long the status writes of the policy hang, real ms: several deadlines. */
const HANG_MS = 9000;
/** The poll interval in real time, ms. */
const POLL_MS = (POLL_SECONDS * 1000) / SPEED;
/**
 * Scheduling, the Azure read, the pass and its status write on a busy 2-core machine, ms (the
 * poll grid adds up to half an interval: `nextPollTime`).
 */
const MARGIN_MS = 1500;

let admin: KubeClients;
let ns: string;
let dir: string;
let proxy: KubeProxy;
let emulator: RunningEmulator;
let h: Harness;
const requests = requestCollector();
/** Called with each ARM write the emulator serves (set by the test). */
let onArmWrite: ((path: string) => void) | undefined;

beforeAll(async () => {
  await ensureCrd();
  admin = adminClients();
  ns = await createNamespace(admin, "kube-hang");
  dir = await mkdtemp(join(tmpdir(), "kube-hang-"));
  const cp = controlPlane();
  proxy = await startKubeProxy({
    upstream: cp.server,
    upstreamCa: await readFile(cp.caFile, "utf8"),
    token: cp.adminToken,
    dir,
  });
  emulator = await startEmulator({
    speed: SPEED,
    scaleDurationMs: 120_000,
    ingestionDelayMs: 120_000,
    noiseAmplitude: 0,
    armRateLimit: false,
    onRequest: (r) => {
      requests.onRequest(r);
      if (r.kind === "armWrite") onArmWrite?.(r.path);
    },
  });
  const kube = createKubeClients(loadKubeConfig({ kind: "file", path: proxy.kubeconfig }), {
    requestTimeoutMs: DEADLINE_MS,
  });
  h = await startHarness(kube, { operator: { namespaces: [ns] }, emulatorInstance: emulator });
});

afterAll(async () => {
  await h?.stop();
  await emulator?.stop();
  await proxy?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const gapsOf = (at: readonly number[]) => at.slice(1).map((t, i) => t - (at[i] as number));

describe("a status write that hangs", () => {
  it("ends at the deadline and is retried; other policies keep their pace; one ARM write; written once answered", async () => {
    const stuck = signalrId("hang-stuck");
    const steady = signalrId("hang-steady");
    await readyOnP1x10(admin, emulator, ns, "stuck", stuck, { pollIntervalSeconds: POLL_SECONDS });
    await readyOnP1x10(admin, emulator, ns, "steady", steady, { pollIntervalSeconds: POLL_SECONDS });
    expect(armWritesFor(requests.all, stuck)).toHaveLength(0);

    // From the moment the ARM PATCH of `stuck` lands, its status writes hang.
    let hungAt = 0;
    onArmWrite = (path) => {
      if (path.toLowerCase() !== stuck.toLowerCase()) return;
      onArmWrite = undefined;
      hungAt = performance.now();
      proxy.hang({ method: "PATCH", path: new RegExp(`/namespaces/${ns}/capacitypolicies/stuck/status$`) });
    };
    const passes = new Map<string, { at: number; report: PassReport }[]>();
    const unsubscribe = h.operator.onPass((report) => {
      if (hungAt === 0) return;
      const name = report.policy.metadata.name;
      passes.set(name, [...(passes.get(name) ?? []), { at: performance.now(), report }]);
    });
    const readiness = h.operator.readiness();
    const notReady = new Set<string>();
    const probe = setInterval(() => {
      for (const [check, fn] of Object.entries(readiness)) {
        const r = fn();
        if (!r.ok) notReady.add(`${check}: ${r.reason}`);
      }
    }, 100);
    let releasedAt = 0;
    try {
      emulator.control.setDemand(stuck, { connections: 9000 });
      await eventually(() => expect(hungAt).toBeGreaterThan(0), 60_000, 50);
      // Hold for a while: the pass ends at each deadline and is retried.
      await eventually(
        () => expect(performance.now() - hungAt).toBeGreaterThan(HANG_MS),
        HANG_MS + 5_000,
        100,
      );
      // The update completed meanwhile; the status still knows nothing of it.
      expect(emulator.control.instance(stuck)).toMatchObject({ units: 20, provisioningState: "Succeeded" });
      const during = await getPolicy(admin, ns, "stuck");
      expect(during.status?.current).toMatchObject({ sku: "Premium_P1", units: 10 });
      expect(during.status?.operation).toBeUndefined();
      expect(armWritesFor(requests.all, stuck)).toHaveLength(1);
      proxy.release();
      releasedAt = performance.now();
    } finally {
      onArmWrite = undefined;
      proxy.release();
      clearInterval(probe);
    }

    // Once answered: the status shows the change, recovered from the instance.
    const written = await eventually(
      async () => {
        const p = await getPolicy(admin, ns, "stuck");
        expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 20 });
        expect(p.status?.scaleEvents?.at(-1)).toMatchObject({ fromUnits: 10, toUnits: 20 });
        return p;
      },
      30_000,
      100,
    );
    const recoveryMs = performance.now() - releasedAt;
    unsubscribe();
    expect(written.status?.scaleEvents?.at(-1)).toMatchObject({ recovered: true });
    expect(condition(written, "Ready")?.status).toBe("True");

    // Each held write was given up by the client at the deadline, not before and not much after.
    const held = proxy.held.filter((r) => r.waitedMs !== undefined);
    expect(held.length).toBeGreaterThanOrEqual(3);
    const waited = held.map((r) => r.waitedMs as number);
    expect(Math.min(...waited)).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(Math.max(...waited)).toBeLessThan(DEADLINE_MS + MARGIN_MS);

    // The passes of `stuck` while it hung: each failed with the deadline and was retried.
    const stuckPasses = (passes.get("stuck") ?? []).filter((p) => p.at <= releasedAt + 100);
    const failed = stuckPasses.filter((p) => p.report.error !== undefined);
    expect(failed.length).toBeGreaterThanOrEqual(3);
    for (const p of failed) {
      expect(p.report.error).toBeInstanceOf(UnavailableError);
      expect(String(p.report.error)).toMatch(/patch status of capacitypolicies .*\/stuck: request timed out/);
    }
    // One retry after another: a deadline, the backoff (≤ 5 min virtual, 5 s real) and a poll read.
    const retryGaps = gapsOf(failed.map((p) => p.at));
    expect(Math.min(...retryGaps)).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(Math.max(...retryGaps)).toBeLessThan(DEADLINE_MS + 5_000 + MARGIN_MS);

    // `steady` kept its pace while `stuck` hung, without a failure.
    const steadyPasses = (passes.get("steady") ?? []).filter((p) => p.at <= releasedAt);
    expect(steadyPasses.length).toBeGreaterThanOrEqual(Math.floor(HANG_MS / (POLL_MS + MARGIN_MS)));
    expect(steadyPasses.filter((p) => p.report.error !== undefined)).toEqual([]);
    const steadyGaps = gapsOf(steadyPasses.map((p) => p.at));
    expect(Math.max(...steadyGaps)).toBeLessThan(POLL_MS + MARGIN_MS);
    // Readiness stayed true: the watch, the Azure poll and the poll cycles were healthy throughout.
    expect([...notReady]).toEqual([]);
    const errors = await h.metrics.passErrors.get();
    expect(errors.values.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThanOrEqual(failed.length);

    // A few more virtual minutes: still one ARM write, no reversal.
    const until = emulator.clock.nowMs() + 10 * 60_000;
    await eventually(() => expect(emulator.clock.nowMs()).toBeGreaterThan(until), 30_000, 200);
    const writes = armWritesFor(requests.all, stuck);
    expect(writes).toHaveLength(1);
    expect(emulator.control.instance(stuck)).toMatchObject({ units: 20, provisioningState: "Succeeded" });
    const events = await eventsOnce(admin, ns, "stuck", (es) =>
      es.some((e) => e.reason === "UnrecordedScale"),
    );
    expect(events.some((e) => e.reason === "UnrecordedScale")).toBe(true);
    expect(events.some((e) => e.reason === "ScalingIn")).toBe(false);
    expect(armWritesFor(requests.all, steady)).toHaveLength(0);

    console.log(
      `[kube-hang] held ${proxy.held.length} status writes, waited ${waited.map(Math.round).join(" ")} ms; ` +
        `retry gaps ${retryGaps.map(Math.round).join(" ")} ms; steady gaps max ${Math.round(Math.max(...steadyGaps))} ms; ` +
        `written ${Math.round(recoveryMs)} ms after the release`,
    );
    recordFault({
      id: "kube-status-write-hangs",
      endpoint: "kube-apiserver",
      fault: `the status PATCH of one policy accepted and never answered for ${HANG_MS / 1000} s, from its ARM update on (loopback proxy)`,
      outcome:
        "each pass ends at the Kubernetes deadline and is retried; other policies keep their pace, /readyz stays ready; one ARM write; status written once answered (recovered)",
      test: `${TEST} > a status write that hangs`,
      figures: {
        deadlineSeconds: DEADLINE_MS / 1000,
        heldStatusWrites: proxy.held.length,
        clientWaitMaxMs: Math.round(Math.max(...waited)),
        retryGapMaxMs: Math.round(Math.max(...retryGaps)),
        otherPolicyPassGapMaxMs: Math.round(Math.max(...steadyGaps)),
        armWrites: writes.length,
        recoverySeconds: Math.round(recoveryMs / 100) / 10,
        readyzFailures: notReady.size,
        conditionsSeen: `Ready=${condition(written, "Ready")?.status}`,
      },
    });
  }, 120_000);
});
