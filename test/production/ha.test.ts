/**
 * High availability: two operator replicas (the real Operator, leader election on a real Lease)
 * against one control plane and one emulator. Only the leader acts; when the leader can no longer
 * renew, it stops every write at its renew deadline, before the lease can pass; the new leader
 * picks up the in-flight ARM update from the policy's status and finishes it without a second
 * PATCH; a replica that stops releases the lease so the other takes over at once. A leader killed
 * as its ARM PATCH lands (no status write, no lease release) is replaced after the lease duration,
 * and the new leader learns of the update from the instance: one ARM write in all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AzureCall } from "../../src/azure/index.js";
import type { LeaseOps } from "../../src/controller/leader.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { LeaseClient } from "../../src/kube/lease.js";
import {
  adminClients,
  CHAT_HUB,
  clientsFor,
  controlPlane,
  createDeployment,
  createNamespace,
  ensureCrd,
  eventually,
  kubectl,
} from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import {
  condition,
  createPolicy,
  getPolicy,
  policyManifest,
  signalrId,
  startFastEmulator,
  startOperator,
  type TestOperator,
} from "./support.js";

const TEST = "test/production/ha.test.ts";
const LEASE = { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.5 };

interface Write {
  replica: string;
  what: string;
  /** Wall-clock ms when the call was made. */
  at: number;
}

/**
 * The replica's kube clients, recording every write call (create/patch/replace/delete) it makes;
 * once `killed.value` is set, every call fails without reaching the API server, as if the process
 * were gone.
 */
function recordingClients(
  kube: KubeClients,
  replica: string,
  writes: Write[],
  killed: { value: boolean },
): KubeClients {
  const wrap = <T extends object>(api: T): T =>
    new Proxy(api, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== "function" || typeof prop !== "string") return value;
        if (killed.value) return () => Promise.reject(new Error("killed"));
        if (!/^(create|patch|replace|delete)/.test(prop)) return value;
        return (...args: unknown[]) => {
          writes.push({ replica, what: prop, at: Date.now() });
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return {
    ...kube,
    core: wrap(kube.core),
    apps: wrap(kube.apps),
    autoscaling: wrap(kube.autoscaling),
    customObjects: wrap(kube.customObjects),
  };
}

/** Lease operations that can be cut off, as if this replica lost its way to the API server for leases. */
class CuttableLease implements LeaseOps {
  cut = false;
  constructor(private readonly inner: LeaseClient) {}
  tryAcquireOrRenew(...args: Parameters<LeaseOps["tryAcquireOrRenew"]>) {
    if (this.cut) return Promise.reject(new Error("lease renewals cut off"));
    return this.inner.tryAcquireOrRenew(...args);
  }
  release(...args: Parameters<LeaseOps["release"]>) {
    if (this.cut) return Promise.reject(new Error("lease renewals cut off"));
    return this.inner.release(...args);
  }
}

interface Replica {
  name: string;
  op: TestOperator;
  lease: CuttableLease;
  azureCalls: (AzureCall & { at: number })[];
  /**
   * Kills the replica at once, as SIGKILL would: no further Kubernetes call reaches the API
   * server (so no status write and no lease release), its passes and Azure calls are aborted.
   */
  kill(): void;
}

let admin: KubeClients;
let ns: string;
let emulator: RunningEmulator;
const writes: Write[] = [];
const replicas: Replica[] = [];

/** Called with the path of each ARM write the emulator serves, before it answers (set per test). */
let onArmWrite: ((path: string) => void) | undefined;

async function startReplica(name: string): Promise<Replica> {
  const killed = { value: false };
  const kube = recordingClients(clientsFor(controlPlane().kubeconfigAdmin), name, writes, killed);
  const lease = new CuttableLease(new LeaseClient(kube));
  const op = await startOperator({
    kube,
    emulator,
    leaseOps: lease,
    settings: {
      namespaces: [ns],
      identity: name,
      leaderElection: { leaseName: "signalr-autoscaler", leaseNamespace: ns, identity: name, ...LEASE },
    },
  });
  const azureCalls: Replica["azureCalls"] = [];
  op.azure.calls.subscribe((c) => azureCalls.push({ ...c, at: Date.now() - c.seconds * 1000 }));
  const kill = () => {
    killed.value = true;
    lease.cut = true;
    void op.stop(0);
  };
  return { name, op, lease, azureCalls, kill };
}

/** The one replica of `group` that leads, once there is exactly one (within 20 s). */
function leaderOf(group: readonly Replica[]): Promise<Replica> {
  return eventually(
    () => {
      const leading = group.filter((r) => r.op.operator.isLeader);
      expect(leading).toHaveLength(1);
      return leading[0] as Replica;
    },
    20_000,
    100,
  );
}

const isWrite = (c: AzureCall) => /^(PATCH|PUT|DELETE) /.test(c.api);

beforeAll(async () => {
  await ensureCrd();
  admin = adminClients();
  ns = await createNamespace(admin, "ha");
  // A scale takes 15 virtual minutes: 15 s of real time, long enough to hand over in the middle.
  emulator = await startFastEmulator({
    scaleDurationMs: 900_000,
    onRequest: (r) => {
      if (r.kind === "armWrite") onArmWrite?.(r.path);
    },
  });
});

afterAll(async () => {
  for (const r of replicas) await r.op.stop();
  await emulator?.stop();
});

describe("two replicas, one Lease", () => {
  it("only the leader acts; a leader that cannot renew stops writing before the other takes over; the new leader finishes the in-flight update without a second PATCH; stopping releases the lease", async () => {
    const id = signalrId("ha-chat");
    emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 1200 });
    await createDeployment(admin, ns, "chat-hub", 1);

    const [a, b] = await Promise.all([startReplica("replica-a"), startReplica("replica-b")]);
    replicas.push(a as Replica, b as Replica);
    const leader = await leaderOf(replicas);
    const follower = replicas.find((r) => r !== leader) as Replica;

    await createPolicy(
      admin,
      policyManifest(ns, "chat", id, {
        // One step: 9,000 connections at 80 % need 12 units → 20 on the ladder.
        units: { min: 10, max: 50 },
        appServer: CHAT_HUB,
      }),
    );
    await eventually(
      async () => expect(condition(await getPolicy(admin, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      250,
    );

    // Only the leader acts: the follower made no write and no Azure call at all.
    expect(follower.op.operator.isLeader).toBe(false);
    expect(writes.filter((w) => w.replica === follower.name)).toEqual([]);
    expect(follower.azureCalls).toEqual([]);
    expect(
      writes.some((w) => w.replica === leader.name && w.what === "patchNamespacedCustomObjectStatus"),
    ).toBe(true);
    expect(leader.azureCalls.some((c) => c.api === "POST metrics:getBatch")).toBe(true);
    expect(await leader.op.metrics.leader.get()).toMatchObject({ values: [{ value: 1 }] });
    expect(await follower.op.metrics.leader.get()).toMatchObject({ values: [{ value: 0 }] });

    // A load rise: the leader starts an ARM update (10 s of real time) and records it in status.
    emulator.control.setDemand(id, { connections: 9000 });
    const inFlight = await eventually(
      async () => {
        const p = await getPolicy(admin, ns, "chat");
        expect(p.status?.operation?.to).toMatchObject({ sku: "Premium_P1", units: 20 });
        return p;
      },
      60_000,
      100,
    );
    expect(emulator.control.instance(id)?.provisioningState).not.toBe("Succeeded");
    expect(leader.azureCalls.filter(isWrite).map((c) => c.api)).toEqual(["PATCH SignalR"]);

    // The leader can no longer renew (its other calls still work): it must stop acting.
    const leaseClient = new LeaseClient(admin);
    const before = await leaseClient.get(ns, "signalr-autoscaler");
    expect(before?.record.holderIdentity).toBe(leader.name);
    const cutAt = Date.now();
    leader.lease.cut = true;

    await eventually(() => expect(follower.op.operator.isLeader).toBe(true), 20_000, 50);
    // The update is still running when the new leader starts.
    expect(emulator.control.instance(id)?.provisioningState).not.toBe("Succeeded");
    const after = await leaseClient.get(ns, "signalr-autoscaler");
    expect(after?.record.holderIdentity).toBe(follower.name);
    expect(after?.record.leaseTransitions).toBe((before?.record.leaseTransitions ?? 0) + 1);
    const takenAt = after?.record.acquireTime?.getTime() ?? Number.NaN;
    expect(leader.op.operator.isLeader).toBe(false);

    // Every write of the old leader, Kubernetes or Azure, was made before its renew deadline
    // (≤ 3 s after its last renewal, which came before the cut) and so before the takeover.
    const oldLeaderWrites = [
      ...writes.filter((w) => w.replica === leader.name).map((w) => w.at),
      ...leader.azureCalls.filter(isWrite).map((c) => c.at),
    ];
    const lastWrite = Math.max(...oldLeaderWrites);
    expect(lastWrite).toBeLessThan(cutAt + LEASE.renewDeadlineSeconds * 1000);
    expect(lastWrite).toBeLessThan(takenAt);
    expect(takenAt - cutAt).toBeGreaterThan((LEASE.leaseDurationSeconds - LEASE.renewDeadlineSeconds) * 1000);

    // The new leader rebuilt the in-flight update from status: it waits for it, records its
    // success, and never sends a second PATCH.
    const done = await eventually(
      async () => {
        const p = await getPolicy(admin, ns, "chat");
        expect(p.status?.operation).toBeUndefined();
        expect(p.status?.current?.units).toBe(20);
        return p;
      },
      60_000,
      250,
    );
    expect(done.status?.lastScaleTime).toBeDefined();
    expect(emulator.control.instance(id)).toMatchObject({ units: 20, provisioningState: "Succeeded" });
    const patches = emulator.control
      .requests()
      .filter((r) => r.method === "PATCH" && r.path.includes("ha-chat"));
    expect(patches).toHaveLength(1);
    expect(follower.azureCalls.filter(isWrite)).toEqual([]);
    expect(
      writes.some((w) => w.replica === follower.name && w.what === "patchNamespacedCustomObjectStatus"),
    ).toBe(true);
    expect(writes.filter((w) => w.replica === leader.name && w.at > takenAt)).toEqual([]);
    const hosts = await kubectl([
      "get",
      "events",
      "-n",
      ns,
      "-o",
      'jsonpath={range .items[*]}{.reason}={.source.host}{"\\n"}{end}',
    ]);
    expect(hosts).toContain(`ScalingOut=${leader.name}`);
    expect(hosts).toContain(`ScaleSucceeded=${follower.name}`);
    expect(inFlight.status?.operation?.startedAt).toBeDefined();

    // Graceful stop: the new leader releases the lease; the old one (renewing again) takes over
    // at once instead of waiting out the lease duration.
    leader.lease.cut = false;
    const stoppedAt = Date.now();
    await follower.op.stop();
    const released = await leaseClient.get(ns, "signalr-autoscaler");
    expect(released?.record.holderIdentity === "" || released?.record.holderIdentity === leader.name).toBe(
      true,
    );
    await eventually(() => expect(leader.op.operator.isLeader).toBe(true), 10_000, 50);
    expect(Date.now() - stoppedAt).toBeLessThan(LEASE.leaseDurationSeconds * 1000);
    await leader.op.stop();
    expect((await leaseClient.get(ns, "signalr-autoscaler"))?.record.holderIdentity).toBe("");
  }, 180_000);

  it("a leader killed as its ARM PATCH lands (no status write, no lease release): the other takes over after the lease duration and makes no second ARM write", async () => {
    const id = signalrId("ha-killed");
    emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 2000 });
    const [c, d] = await Promise.all([startReplica("replica-c"), startReplica("replica-d")]);
    replicas.push(c as Replica, d as Replica);
    const pair = [c, d] as Replica[];
    const leader = await leaderOf(pair);
    const survivor = pair.find((r) => r !== leader) as Replica;
    // One step: 9,000 connections at 80 % need 12 units → 20 on the ladder.
    await createPolicy(admin, policyManifest(ns, "killed", id, { units: { min: 10, max: 50 } }));
    await eventually(
      async () => expect(condition(await getPolicy(admin, ns, "killed"), "Ready")?.status).toBe("True"),
      60_000,
      250,
    );
    const leaseClient = new LeaseClient(admin);
    const before = await leaseClient.get(ns, "signalr-autoscaler");
    expect(before?.record.holderIdentity).toBe(leader.name);

    // The leader is killed the moment Azure accepts its PATCH, before it can write status.
    let killedAt = 0;
    onArmWrite = (path) => {
      if (path.toLowerCase() !== id.toLowerCase()) return;
      onArmWrite = undefined;
      killedAt = Date.now();
      leader.kill();
    };
    const armWrites = () =>
      emulator.control
        .requests()
        .filter((r) => r.kind === "armWrite" && r.path.toLowerCase() === id.toLowerCase());
    try {
      emulator.control.setDemand(id, { connections: 9000 });
      await eventually(() => expect(killedAt).toBeGreaterThan(0), 60_000, 50);
    } finally {
      onArmWrite = undefined;
    }
    expect(armWrites()).toHaveLength(1);
    // Nothing of the update reached the policy, and the lease still names the dead leader.
    const orphan = await getPolicy(admin, ns, "killed");
    expect(orphan.status?.operation).toBeUndefined();
    expect(orphan.status?.current).toMatchObject({ sku: "Premium_P1", units: 10 });
    expect((await leaseClient.get(ns, "signalr-autoscaler"))?.record.holderIdentity).toBe(leader.name);

    // The other replica waits out the lease duration, then takes over.
    await eventually(() => expect(survivor.op.operator.isLeader).toBe(true), 30_000, 50);
    const takeoverMs = Date.now() - killedAt;
    const after = await leaseClient.get(ns, "signalr-autoscaler");
    expect(after?.record.holderIdentity).toBe(survivor.name);
    expect(after?.record.leaseTransitions).toBe((before?.record.leaseTransitions ?? 0) + 1);
    // Its last renewal came at most a retry period (plus jitter) before the kill.
    const { leaseDurationSeconds, retryPeriodSeconds } = LEASE;
    expect(takeoverMs).toBeGreaterThan((leaseDurationSeconds - retryPeriodSeconds * 1.2) * 1000 - 100);
    expect(takeoverMs).toBeLessThan((leaseDurationSeconds + 5) * 1000);
    // The update still runs when the new leader starts: it must wait for it, not stack a second one,
    // and record the change from the instance once it completes.
    expect(emulator.control.instance(id)?.provisioningState).not.toBe("Succeeded");
    const seen = new Set<string>();
    const done = await eventually(
      async () => {
        const p = await getPolicy(admin, ns, "killed");
        for (const type of ["Ready", "AbleToScale"]) {
          const c = condition(p, type);
          if (c) seen.add(`${type}=${c.status}/${c.reason}`);
        }
        expect(p.status?.operation).toBeUndefined();
        expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 20 });
        expect(p.status?.scaleEvents?.at(-1)).toMatchObject({ fromUnits: 10, toUnits: 20, recovered: true });
        expect(condition(p, "Ready")?.status).toBe("True");
        return p;
      },
      60_000,
      100,
    );
    const readyMs = Date.now() - killedAt;
    expect(done.status?.lastScaleTime).toBeDefined();
    // While the update ran, the new leader reported it in progress (from the instance) and waited.
    expect([...seen]).toContain("AbleToScale=False/ScaleInProgress");
    expect(emulator.control.instance(id)).toMatchObject({ units: 20, provisioningState: "Succeeded" });

    // Ten more virtual minutes: no second write (no 20 → 30 → 20), from either replica.
    const until = emulator.clock.nowMs() + 10 * 60_000;
    await eventually(() => expect(emulator.clock.nowMs()).toBeGreaterThan(until), 30_000, 200);
    expect(armWrites()).toHaveLength(1);
    expect(leader.azureCalls.filter(isWrite).map((x) => x.api)).toEqual(["PATCH SignalR"]);
    expect(survivor.azureCalls.filter(isWrite)).toEqual([]);
    expect(writes.filter((w) => w.replica === leader.name && w.at >= killedAt)).toEqual([]);
    const reasons = await kubectl([
      "get",
      "events",
      "-n",
      ns,
      "--field-selector",
      "involvedObject.name=killed",
      "-o",
      'jsonpath={range .items[*]}{.reason}={.source.host}{"\\n"}{end}',
    ]);
    expect(reasons).toContain(`UnrecordedScale=${survivor.name}`);
    expect(reasons).not.toContain("ScalingIn");

    console.log(
      `[ha] killed ${leader.name} as its PATCH landed; ${survivor.name} led after ${takeoverMs} ms, Ready at 20 units after ${readyMs} ms; ARM writes ${armWrites().length}; seen ${[...seen].join(", ")}`,
    );
    recordFault({
      id: "leader-killed-as-arm-patch-lands",
      endpoint: "operator",
      fault:
        "two replicas, one Lease: the leader killed as its ARM PATCH was accepted (no status write, lease not released)",
      outcome:
        "the other replica takes over after the lease duration, finds the update on the instance (recovered) and reaches Ready: one ARM write for one demand change, no reversal",
      test: `${TEST} > a leader killed as its ARM PATCH lands`,
      figures: {
        armWrites: armWrites().length,
        leaseDurationSeconds,
        takeoverSeconds: Math.round(takeoverMs / 100) / 10,
        readySeconds: Math.round(readyMs / 100) / 10,
        observedMinutesAfter: 10,
        conditionsSeen: [...seen].join(","),
      },
    });
    await Promise.all(pair.map((r) => r.op.stop()));
  }, 180_000);
});
