/**
 * Geo-replicas through the adapters against the emulator over HTTPS: an instance with two replicas
 * in other regions, listed (Replicas_List), read (Replicas_Get) and scaled (Replicas_Update, a
 * long-running operation) each on its own resource, their ladders (ListReplicaSkus), what ARM
 * shows of a replica that stopped serving and again once it serves, and their metrics read in
 * their own namespace at their own region's endpoint.
 *
 * These need the emulator's replica routes and its failover control action; with an emulator that
 * has none (no `control.failover`), every test here is skipped.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import { adaptersFor, resetEmulator, SUB_A, signalrId, startTestEmulator, webPubSubId } from "./helpers.js";

const CHAT = signalrId("chat-geo");
const EAST = `${CHAT}/replicas/chat-geo-eastus`;
const ASIA = `${CHAT}/replicas/chat-geo-asia`;
const NOTIFY = webPubSubId("notify-geo");
const NOTIFY_EAST = `${NOTIFY}/replicas/notify-geo-eastus`;
const MINUTE = 60_000;

/** The emulator's replica control actions, where it has them. */
interface ReplicaControl {
  failover(resourceId: string, options?: { cause?: "stopped" | "outage" }): unknown;
  restore(resourceId: string): unknown;
}

describe("geo-replicas against the emulator", { timeout: 30_000 }, () => {
  let emu: RunningEmulator;
  let control: ReplicaControl | undefined;

  beforeAll(async () => {
    emu = await startTestEmulator();
    const c = emu.control as unknown as Partial<ReplicaControl>;
    if (typeof c.failover !== "function" || typeof c.restore !== "function") return;
    control = c as ReplicaControl;
    emu.control.addInstance({
      resourceId: CHAT,
      location: "westeurope",
      sku: "Premium_P1",
      units: 10,
      connections: 6000,
    });
    emu.control.addInstance({
      resourceId: EAST,
      location: "eastus",
      sku: "Premium_P1",
      units: 5,
      connections: 3000,
    });
    emu.control.addInstance({
      resourceId: ASIA,
      location: "southeastasia",
      sku: "Premium_P1",
      units: 2,
      connections: 1000,
    });
    emu.control.addInstance({
      resourceId: NOTIFY,
      location: "westeurope",
      sku: "Premium_P1",
      units: 1,
      connections: 100,
    });
    emu.control.addInstance({
      resourceId: NOTIFY_EAST,
      location: "eastus",
      sku: "Premium_P1",
      units: 1,
      connections: 100,
    });
  });
  afterAll(async () => {
    await emu?.stop();
  });
  beforeEach((ctx) => {
    if (!control) ctx.skip();
    resetEmulator(emu);
  });

  it("lists an instance's replicas, each in its own region with its SKU and units, and reads one", async () => {
    const { instances } = adaptersFor(emu);
    const replicas = await instances.listReplicas(CHAT);
    expect(
      replicas.map((r) => [r.resourceId, r.role, r.primaryId, r.location, r.sku, r.units, r.serving]),
    ).toEqual([
      [EAST, "Replica", CHAT, "eastus", "Premium_P1", 5, true],
      [ASIA, "Replica", CHAT, "southeastasia", "Premium_P1", 2, true],
    ]);
    expect(instances.regionOf(EAST)).toBe("eastus");
    expect(instances.scopeOf(ASIA).region).toBe("southeastasia");
    const east = await instances.get(EAST);
    expect(east).toMatchObject({
      resourceId: EAST,
      name: "chat-geo",
      replica: "chat-geo-eastus",
      units: 5,
      terminal: true,
    });
    const primary = await instances.get(CHAT);
    expect([primary.role, primary.primaryId, primary.units, primary.serving]).toEqual([
      "Primary",
      CHAT,
      10,
      true,
    ]);
    const wps = await instances.listReplicas(NOTIFY);
    expect(wps.map((r) => [r.resourceId, r.service, r.location])).toEqual([
      [NOTIFY_EAST, "WebPubSub", "eastus"],
    ]);
    // Every request carried 2024-03-01 and matched a route of the specs.
    expect(new Set(emu.control.requests().map((r) => r.apiVersion))).toEqual(new Set(["2024-03-01"]));
  });

  it("finds every replica of a subscription and service in one generic list", async () => {
    const { instances } = adaptersFor(emu);
    expect((await instances.listReplicaIds(SUB_A, "SignalR")).sort()).toEqual([ASIA, EAST].sort());
    expect(await instances.listReplicaIds(SUB_A, "WebPubSub")).toEqual([NOTIFY_EAST]);
    const lists = emu.control.requests().filter((r) => r.path.toLowerCase().endsWith("/resources"));
    expect(lists.map((r) => r.apiVersion)).toEqual(["2025-04-01", "2025-04-01"]);
  });

  it("scales a replica on its own resource: the PATCH goes to the replica, the instance keeps its units", async () => {
    const { instances } = adaptersFor(emu);
    const op = await instances.beginScale(EAST, { sku: "Premium_P1", units: 20 });
    expect(op.resourceId).toBe(EAST);
    expect([201, 202]).toContain(op.acceptedWith);
    const patches = emu.control.requests().filter((r) => r.method === "PATCH");
    expect(patches.map((r) => [r.path.toLowerCase(), r.apiVersion, r.body])).toEqual([
      [
        `${CHAT}/replicas/chat-geo-eastus`.toLowerCase(),
        "2024-03-01",
        { location: "eastus", sku: { name: "Premium_P1", tier: "Premium", capacity: 20 } },
      ],
    ]);
    expect((await instances.observeUpdate(EAST, op.target)).state).toBe("inProgress");
    emu.control.advance(2 * MINUTE);
    const done = await instances.observeUpdate(EAST, op.target);
    expect(done.state).toBe("applied");
    expect(done.instance.units).toBe(20);
    expect((await instances.get(CHAT)).units).toBe(10);
    expect((await instances.get(ASIA)).units).toBe(2);
  });

  it("reads a replica's ladders from its own SKU list", async () => {
    const { instances } = adaptersFor(emu);
    const allowed = await instances.listSkus(ASIA);
    expect(allowed.fromService).toContain("Premium_P1");
    expect(allowed.ladders.Premium_P1).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100,
    ]);
    expect(allowed.skus.every((s) => s.resourceType?.toLowerCase().endsWith("/replicas") ?? true)).toBe(true);
  });

  it("a stopped replica is not serving in ARM's words, and serves again once restored", async () => {
    const { instances } = adaptersFor(emu);
    control?.failover(ASIA, { cause: "stopped" });
    const down = await instances.get(ASIA);
    expect([down.serving, down.notServingReason]).toEqual([false, 'resourceStopped is "true"']);
    const listed = await instances.listReplicas(CHAT);
    expect(listed.find((r) => r.resourceId === ASIA)?.serving).toBe(false);
    expect(listed.find((r) => r.resourceId === EAST)?.serving).toBe(true);
    control?.restore(ASIA);
    const up = await instances.get(ASIA);
    expect([up.serving, up.notServingReason]).toEqual([true, undefined]);
  });

  it("reads a replica's metrics in its namespace at its region's endpoint, apart from its instance", async () => {
    const { metrics } = adaptersFor(emu);
    emu.control.advance(10 * MINUTE);
    const end = new Date(emu.clock.now().getTime());
    const start = new Date(end.getTime() - 10 * MINUTE);
    const read = await metrics.read(
      [
        { resourceId: CHAT, region: "westeurope" },
        { resourceId: EAST, region: "eastus" },
        { resourceId: ASIA, region: "southeastasia" },
      ],
      { start, end },
    );
    expect(read.failures).toEqual([]);
    const newest = (id: string) =>
      read.samples
        .get(id)
        ?.filter((s) => s.connections !== null)
        .at(-1)?.connections;
    expect(newest(CHAT)).toBeGreaterThan(0);
    expect(newest(EAST)).toBeGreaterThan(0);
    expect(newest(ASIA)).toBeGreaterThan(0);
    // One batch per region and type: the instance's and each replica's, to its own region's endpoint.
    const batches = emu.control.requests().filter((r) => r.kind === "getBatch");
    expect(new Set(batches.map((r) => `${r.region} ${(r.resourceIds ?? []).join(",")}`))).toEqual(
      new Set([`westeurope ${CHAT}`, `eastus ${EAST}`, `southeastasia ${ASIA}`]),
    );
  });
});
