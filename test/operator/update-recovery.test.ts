/**
 * A lost status write right after an accepted ARM update: the update in flight is not in
 * `status.operation`, so the operator learns of it from the instance (src/autoscale/recovery.ts).
 * One demand change (P1 × 10, 2,000 → 9,000 connections) gives exactly one ARM write (10 → 20)
 * and no reversal, counted from the emulator's request log, whether the same operator retries
 * after a 503 on that status write or a fresh one starts after the first stopped as the PATCH
 * landed. The 503 comes from a real loopback proxy in front of the kube-apiserver. With two
 * replicas, a leader killed as the PATCH lands: test/production/ha.test.ts; a status write that
 * hangs instead of failing: kube-hang.test.ts.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import {
  adminClients,
  clientsFor,
  controlPlane,
  createNamespace,
  ensureCrd,
  eventually,
} from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import { type Harness, signalrId, startHarness } from "./harness.js";
import {
  armWritesFor,
  condition,
  eventsFor,
  eventsOnce,
  getPolicy,
  readyOnP1x10,
  requestCollector,
} from "./helpers.js";
import { type KubeProxy, startKubeProxy } from "./kube-proxy.js";

const MIN = 60_000;
const TEST = "test/operator/update-recovery.test.ts";

let kube: KubeClients;
let ns: string;
let emulator: RunningEmulator;
let proxy: KubeProxy;
let dir: string;
const harnesses: Harness[] = [];
const requests = requestCollector();
/** Called with each request the emulator serves (set per test). */
let onArm: ((path: string) => void) | undefined;

beforeAll(async () => {
  await ensureCrd();
  kube = adminClients();
  ns = await createNamespace(kube, "lost-write");
  dir = await mkdtemp(join(tmpdir(), "lost-write-"));
  const cp = controlPlane();
  const upstreamCa = await readFile(cp.caFile, "utf8");
  proxy = await startKubeProxy({ upstream: cp.server, upstreamCa, token: cp.adminToken, dir });
  emulator = await startEmulator({
    speed: 60,
    scaleDurationMs: 120_000,
    ingestionDelayMs: 120_000,
    noiseAmplitude: 0,
    armRateLimit: false,
    onRequest: (r) => {
      requests.onRequest(r);
      if (r.kind === "armWrite") onArm?.(r.path);
    },
  });
});

afterAll(async () => {
  for (const h of harnesses) await h.stop();
  await emulator?.stop();
  await proxy?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** An operator whose Kubernetes calls go through the proxy (`viaProxy`) or straight to the API server. */
async function operator(viaProxy: boolean): Promise<Harness> {
  const clients = viaProxy ? clientsFor(proxy.kubeconfig) : kube;
  const h = await startHarness(clients, { operator: { namespaces: [ns] }, emulatorInstance: emulator });
  harnesses.push(h);
  return h;
}

async function stopOperator(h: Harness): Promise<void> {
  harnesses.splice(harnesses.indexOf(h), 1);
  await h.stop();
}

/**
 * The policy `name` on P1 × 10 with 2,000 connections, Ready; then demand rises to 9,000 and the
 * status write after the accepted PATCH answers 503 (`onLost` runs then). Returns when the update
 * has completed and the operator has recorded 20 units, with the virtual seconds that took.
 */
async function lostWriteCase(name: string, first: Harness, onLost: () => void) {
  const id = signalrId(name);
  await readyOnP1x10(kube, emulator, ns, name, id);
  expect(armWritesFor(requests.all, id)).toHaveLength(0);
  let lostAt = 0;
  onArm = (path) => {
    if (path.toLowerCase() !== id.toLowerCase()) return;
    onArm = undefined;
    // The PATCH is accepted: the next status write of this policy is lost.
    proxy.failNext({
      method: "PATCH",
      path: new RegExp(`/namespaces/${ns}/capacitypolicies/${name}/status$`),
      status: 503,
      onFire: () => {
        lostAt = emulator.clock.nowMs();
        onLost();
      },
    });
  };
  const failedBefore = proxy.failed.length;
  emulator.control.setDemand(id, { connections: 9000 });
  await eventually(() => expect(proxy.failed.length).toBe(failedBefore + 1), 60_000, 100);
  expect(armWritesFor(requests.all, id)).toHaveLength(1);
  expect((await getPolicy(kube, ns, name)).status?.operation).toBeUndefined();
  const recorded = await eventually(
    async () => {
      const p = await getPolicy(kube, ns, name);
      expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 20 });
      expect(p.status?.scaleEvents?.at(-1)).toMatchObject({ fromUnits: 10, toUnits: 20 });
      return p;
    },
    60_000,
    200,
  );
  expect(first).toBeDefined();
  return { id, lostAt, recoveredAt: emulator.clock.nowMs(), recorded };
}

/** Lets `minutes` of virtual time pass with the demand steady; returns the AbleToScale reasons seen. */
async function steadyFor(name: string, minutes: number): Promise<string[]> {
  const until = emulator.clock.nowMs() + minutes * MIN;
  const seen = new Set<string>();
  await eventually(
    async () => {
      const reason = condition(await getPolicy(kube, ns, name), "AbleToScale")?.reason;
      if (reason) seen.add(reason);
      expect(emulator.clock.nowMs()).toBeGreaterThanOrEqual(until);
    },
    (minutes * MIN) / 60 + 60_000,
    250,
  );
  return [...seen];
}

describe("a lost status write after an accepted update", () => {
  it("one 503 on that status write: the same operator retries, one ARM write, no reversal", async () => {
    const h = await operator(true);
    try {
      await oneRetry(h);
    } finally {
      if (harnesses.includes(h)) await stopOperator(h);
    }
  });

  async function oneRetry(h: Harness): Promise<void> {
    const { id, lostAt, recoveredAt, recorded } = await lostWriteCase("chat-503", h, () => {});
    expect(recorded.status?.scaleEvents?.at(-1)).toMatchObject({ recovered: true });
    const seen = await steadyFor("chat-503", 20);
    const writes = armWritesFor(requests.all, id);
    expect(writes).toHaveLength(1);
    expect(emulator.control.instance(id)).toMatchObject({ units: 20, provisioningState: "Succeeded" });
    const events = await eventsOnce(kube, ns, "chat-503", (es) =>
      es.some((e) => e.reason === "UnrecordedScale"),
    );
    // The Events of the pass whose status write was lost are lost with it; the recovery says what happened.
    expect(events.filter((e) => e.reason === "ScalingOut").length).toBeLessThanOrEqual(1);
    expect(events.some((e) => e.reason === "UnrecordedScale")).toBe(true);
    expect(events.some((e) => e.reason === "ScalingIn")).toBe(false);
    recordFault({
      id: "kube-status-503-after-arm-patch",
      endpoint: "kube-apiserver",
      fault: "one 503 on the status write right after an accepted ARM PATCH (loopback proxy)",
      outcome: "the change is recovered from the instance: one ARM write for one demand change, no reversal",
      test: `${TEST} > one 503 on that status write`,
      figures: {
        armWrites: writes.length,
        scaleInsOnUnknownData: 0,
        recoveryVirtualSeconds: Math.round((recoveredAt - lostAt) / 1000),
        observedMinutesAfter: 20,
        conditionsSeen: seen.join(","),
      },
    });
  }

  it("the operator stopped as the PATCH lands: a fresh operator makes no second ARM write", async () => {
    const first = await operator(true);
    let stopped: Promise<void> | undefined;
    let second: Harness | undefined;
    const stopAndRestart = () => {
      // The status write never lands and the process is gone; a fresh one starts from status.
      stopped = stopOperator(first).then(async () => {
        second = await operator(false);
      });
    };
    const { id, lostAt, recoveredAt, recorded } = await lostWriteCase("chat-stop", first, stopAndRestart);
    await stopped;
    expect(second).toBeDefined();
    expect(recorded.status?.scaleEvents?.at(-1)).toMatchObject({ recovered: true });
    const seen = await steadyFor("chat-stop", 20);
    const writes = armWritesFor(requests.all, id);
    expect(writes).toHaveLength(1);
    expect(emulator.control.instance(id)).toMatchObject({ units: 20, provisioningState: "Succeeded" });
    const events = await eventsFor(kube, ns, "chat-stop");
    expect(events.some((e) => e.reason === "ScalingIn")).toBe(false);
    expect(condition(await getPolicy(kube, ns, "chat-stop"), "Ready")?.status).toBe("True");
    recordFault({
      id: "operator-stopped-as-arm-patch-lands",
      endpoint: "operator",
      fault:
        "the operator stopped as its ARM PATCH was accepted, its status write lost; a fresh operator started",
      outcome: "the change is recovered from the instance: one ARM write for one demand change, no reversal",
      test: `${TEST} > the operator stopped as the PATCH lands`,
      figures: {
        armWrites: writes.length,
        scaleInsOnUnknownData: 0,
        recoveryVirtualSeconds: Math.round((recoveredAt - lostAt) / 1000),
        observedMinutesAfter: 20,
        conditionsSeen: seen.join(","),
      },
    });
  });
});
