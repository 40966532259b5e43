/**
 * One policy per target: two policies naming one Azure instance (in two namespaces) or one
 * app-server Deployment. The older owns it and acts; the other reports `Conflict=True,
 * DuplicatePolicy` naming the owner, `Ready=False`, and sends nothing to Azure or to the
 * Deployment; when the owner is deleted, the next one takes over within one pass.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CapacityPolicy, GROUP, PLURAL, VERSION } from "../../src/api/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { adminClients, CHAT_HUB, createDeployment, createNamespace, ensureCrd } from "../kube/support.js";
import { type Harness, signalrId, startHarness } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  getPolicy,
  patchPolicy,
  policyManifest,
  requestCollector,
  sleep,
} from "./helpers.js";

let kube: KubeClients;
let harness: Harness | undefined;

beforeAll(async () => {
  await ensureCrd();
  kube = adminClients();
});
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

/** An operator (on a stepped clock; real budgets count at 60×) watching `namespaces`, with every request recorded. */
async function start(namespaces: string[]) {
  const requests = requestCollector();
  harness = await startHarness(kube, {
    operator: { namespaces },
    emulator: { speed: 60, onRequest: requests.onRequest },
    stepped: true,
  });
  return { h: harness, requests };
}

/** The pass reports of one policy (namespace/name) from `from` on. */
const passesOf = (h: Harness, key: string, from = 0) => h.reports.slice(from).filter((r) => r.key === key);

/** The policy's Events with their counts (an Event repeated within the recorder's window is counted, not re-created). */
async function eventsWithCount(ns: string, name: string) {
  const list = await kube.core.listNamespacedEvent({ namespace: ns });
  return list.items
    .filter((e) => e.involvedObject.name === name && e.involvedObject.kind === "CapacityPolicy")
    .map((e) => ({ type: e.type, reason: e.reason, count: e.count ?? 1, message: e.message ?? "" }));
}

/**
 * Creates the younger policy at least a second after the older one: creation timestamps have
 * one-second resolution, and the test wants the age, not the name, to decide.
 */
async function createYounger(older: CapacityPolicy, manifest: Record<string, unknown>) {
  const olderMs = Date.parse(older.metadata.creationTimestamp ?? "");
  const wait = olderMs + 1100 - Date.now();
  if (wait > 0) await sleep(wait);
  await createPolicy(kube, manifest);
}

/** Deletes a policy, as `kubectl delete capol` does. */
const deletePolicy = (namespace: string, name: string) =>
  kube.customObjects.deleteNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: PLURAL,
    name,
  });

/** Asserts the duplicate's conditions: Conflict=True DuplicatePolicy naming `owner`, Ready=False. */
function expectDuplicate(p: CapacityPolicy, owner: string, target: RegExp) {
  const conflict = condition(p, "Conflict");
  expect(conflict).toMatchObject({ status: "True", reason: "DuplicatePolicy" });
  expect(conflict?.message).toContain(`CapacityPolicy ${owner} already manages`);
  expect(conflict?.message).toMatch(target);
  expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "Conflict" });
  expect(condition(p, "Stalled")?.status).toBe("True");
}

describe("duplicate policies", () => {
  it("two policies on one instance in two namespaces: one ARM write in 30 minutes, the copy held; deleting the owner hands over within one pass, no extra write", async () => {
    const nsA = await createNamespace(kube, "dup-a");
    const nsB = await createNamespace(kube, "dup-b");
    const { h, requests } = await start([nsA, nsB]);
    const id = signalrId("chat");
    h.emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 3000 });
    const keyA = `${nsA}/chat`;
    const keyB = `${nsB}/chat-copy`;

    // A: at least 20 units — one scale-out from 10. B, the copy: at least 2 — on its own it would
    // scale the instance in to 4 units for 3,000 connections (and A back out: a fight).
    await createPolicy(kube, policyManifest(nsA, "chat", id, { units: { min: 20, max: 50 } }));
    const a = await h.eventually(
      async () => {
        const p = await getPolicy(kube, nsA, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "True" });
        return p;
      },
      60_000,
      200,
    );
    // B names the instance in another spelling of the same ID (ARM IDs are case-insensitive).
    const spelled = signalrId("Chat", "RG-Chat");
    await createYounger(a, policyManifest(nsB, "chat-copy", spelled, { units: { min: 2, max: 50 } }));
    await h.eventually(
      async () => expectDuplicate(await getPolicy(kube, nsB, "chat-copy"), keyA, /SignalR instance/),
      30_000,
      200,
    );

    // 30 virtual minutes at constant demand, checked every virtual minute — and 25 checks at least,
    // however long the API server takes to answer them (on a busy machine the window grows).
    const t0 = h.emulator.clock.nowMs();
    const seen = h.reports.length;
    let checks = 0;
    while (h.emulator.clock.nowMs() < t0 + 30 * 60_000 || checks < 25) {
      const b = await getPolicy(kube, nsB, "chat-copy");
      expectDuplicate(b, keyA, /SignalR instance/);
      // B never read the instance: nothing observed, nothing decided.
      expect(b.status?.current).toBeUndefined();
      expect(b.status?.desired).toBeUndefined();
      expect(b.status?.lastSample).toBeUndefined();
      const pa = await getPolicy(kube, nsA, "chat");
      expect(condition(pa, "Conflict")?.status).toBe("False");
      checks++;
      await h.sleep(1000);
    }
    expect(checks).toBeGreaterThanOrEqual(25);
    const writes = armWritesFor(requests.all, id);
    expect(writes).toHaveLength(1);
    expect(h.emulator.control.instance(id)?.units).toBe(20);
    const passesB = passesOf(h, keyB, seen);
    expect(passesB.length).toBeGreaterThanOrEqual(60);
    expect(passesB.every((r) => r.result?.outcome === "duplicate")).toBe(true);
    expect(passesOf(h, keyA, seen).length).toBeGreaterThanOrEqual(60);
    expect((await getPolicy(kube, nsA, "chat")).status?.current?.units).toBe(20);
    // The Warnings came once (when Conflict turned True), not once per pass.
    const events = await eventsWithCount(nsB, "chat-copy");
    const duplicateEvents = events.filter((e) => e.reason === "DuplicatePolicy");
    expect(duplicateEvents).toHaveLength(1);
    expect(duplicateEvents[0]).toMatchObject({ type: "Warning", count: 1 });
    expect(duplicateEvents[0]?.message).toContain(`CapacityPolicy ${keyA}`);
    expect(events.every((e) => e.count === 1)).toBe(true);

    // B now asks what A asks (at least 20 units); it is still held while A owns the instance.
    await patchPolicy(kube, nsB, "chat-copy", { spec: { units: { min: 20, max: 50 } } });
    const patched = passesOf(h, keyB).length;
    await h.eventually(
      () => expect(passesOf(h, keyB).length).toBeGreaterThanOrEqual(patched + 2),
      30_000,
      100,
    );
    expect(passesOf(h, keyB, seen).every((r) => r.result?.outcome === "duplicate")).toBe(true);

    // Deleting A: B's next pass is admitted (at most the one pass already under way used the old
    // verdict), and at constant demand it finds the instance at its size: no ARM write.
    const beforeDelete = h.reports.length;
    const deletedAt = Date.now();
    await deletePolicy(nsA, "chat");
    const admitted = await h.eventually(
      () => {
        const after = passesOf(h, keyB, beforeDelete);
        const i = after.findIndex((r) => r.result?.outcome !== "duplicate");
        expect(i).toBeGreaterThanOrEqual(0);
        return { index: i, passes: after };
      },
      30_000,
      50,
    );
    expect(admitted.index).toBeLessThanOrEqual(1);
    expect(Date.now() - deletedAt).toBeLessThan(10_000);
    await h.eventually(
      async () => {
        const b = await getPolicy(kube, nsB, "chat-copy");
        expect(condition(b, "Conflict")).toMatchObject({ status: "False", reason: "NoConflict" });
        expect(condition(b, "Ready")?.status, JSON.stringify(b.status?.conditions)).toBe("True");
        expect(b.status?.current?.units).toBe(20);
      },
      30_000,
      200,
    );
    // Ten more virtual minutes (past the 300 s scale-down window): still the one write.
    const t1 = h.emulator.clock.nowMs();
    await h.eventually(() => expect(h.emulator.clock.nowMs()).toBeGreaterThan(t1 + 10 * 60_000), 30_000, 500);
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    const after = passesOf(h, keyB, beforeDelete);
    expect(after.slice(admitted.index).every((r) => r.result?.outcome === "steady")).toBe(true);
    expect((await getPolicy(kube, nsB, "chat-copy")).status?.desired?.units).toBe(20);
  }, 180_000);

  it("two policies naming one Deployment: only the older sizes it, the other sends nothing anywhere; its deletion hands the Deployment over", async () => {
    const ns = await createNamespace(kube, "dup-deploy");
    const { h, requests } = await start([ns]);
    const east = signalrId("chat-east");
    const west = signalrId("chat-west");
    h.emulator.control.addInstance({ resourceId: east, sku: "Premium_P1", units: 10, connections: 2000 });
    h.emulator.control.addInstance({ resourceId: west, sku: "Premium_P1", units: 10, connections: 2000 });
    await createDeployment(kube, ns, "chat-hub", 1);
    const replicas = async () =>
      (await kube.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" })).spec?.replicas;

    // East: 1,000 connections per replica for its 2,000. West: 250 per replica (four times as
    // many) and at least 20 units — on its own it would scale its instance out and the Deployment up.
    await createPolicy(
      kube,
      policyManifest(ns, "east", east, { units: { min: 10, max: 50 }, appServer: CHAT_HUB }),
    );
    const e = await h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "east");
        expect(condition(p, "Ready")?.status).toBe("True");
        expect(p.status?.desired?.replicas).toBeDefined();
        expect(await replicas()).toBe(p.status?.desired?.replicas);
        return p;
      },
      60_000,
      200,
    );
    const eastReplicas = e.status?.desired?.replicas as number;
    expect(eastReplicas).toBeGreaterThan(1);
    await createYounger(
      e,
      policyManifest(ns, "west", west, {
        units: { min: 20, max: 50 },
        appServer: { ...CHAT_HUB, connectionsPerReplica: 250 },
      }),
    );
    await h.eventually(
      async () =>
        expectDuplicate(
          await getPolicy(kube, ns, "west"),
          `${ns}/east`,
          new RegExp(`Deployment ${ns}/chat-hub`),
        ),
      30_000,
      200,
    );

    // Ten virtual minutes: the Deployment stays at east's size, west's instance is never written.
    const t0 = h.emulator.clock.nowMs();
    const seen = h.reports.length;
    while (h.emulator.clock.nowMs() < t0 + 10 * 60_000) {
      expect(await replicas()).toBe(eastReplicas);
      expectDuplicate(await getPolicy(kube, ns, "west"), `${ns}/east`, /Deployment/);
      const pe = await getPolicy(kube, ns, "east");
      expect(condition(pe, "Conflict")?.status).toBe("False");
      await h.sleep(1000);
    }
    expect(armWritesFor(requests.all, west)).toEqual([]);
    expect(armWritesFor(requests.all, east)).toEqual([]);
    const passesWest = passesOf(h, `${ns}/west`, seen);
    expect(passesWest.length).toBeGreaterThanOrEqual(20);
    expect(passesWest.every((r) => r.result?.outcome === "duplicate")).toBe(true);

    // East deleted: west takes the Deployment (its own, larger size) and its instance (20 units).
    const beforeDelete = h.reports.length;
    await deletePolicy(ns, "east");
    await h.eventually(
      () => {
        const after = passesOf(h, `${ns}/west`, beforeDelete);
        const i = after.findIndex((r) => r.result?.outcome !== "duplicate");
        expect(i).toBeGreaterThanOrEqual(0);
        expect(i).toBeLessThanOrEqual(1);
      },
      30_000,
      50,
    );
    await h.eventually(
      async () => {
        const w = await getPolicy(kube, ns, "west");
        expect(w.status?.desired?.replicas).toBeGreaterThan(eastReplicas);
        expect(await replicas()).toBe(w.status?.desired?.replicas);
        expect(condition(w, "Conflict")?.status).toBe("False");
        expect(w.status?.current?.units).toBe(20);
      },
      60_000,
      200,
    );
    expect(armWritesFor(requests.all, west)).toHaveLength(1);
    expect(armWritesFor(requests.all, east)).toEqual([]);
  }, 180_000);
});
