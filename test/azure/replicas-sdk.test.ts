/**
 * The emulator's replica routes read and written with the real SDK client that has them,
 * `@azure/arm-webpubsub` 1.2.0's `webPubSubReplicas` (api-version 2024-03-01): get, list (paged),
 * listSkus of a replica, an update as a long-running operation polled to its end, and the
 * failover control action as the client reads it; and a replica read at `//subscriptions/…`, the
 * URL `@azure/arm-resources` 8.0.0's `resources.getById` makes of an ID (its template is
 * `/{+resourceId}`).
 */
import { WebPubSubManagementClient } from "@azure/arm-webpubsub";
import { Agent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import { SUB_A, startTestEmulator, staticCredential, webPubSubId } from "./helpers.js";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const PRIMARY = webPubSubId("pubsub");
const EAST = `${PRIMARY}/replicas/pubsub-eastus`;
const ASIA = `${PRIMARY}/replicas/pubsub-asia`;

let emulator: RunningEmulator;
let client: WebPubSubManagementClient;

beforeAll(async () => {
  emulator = await startTestEmulator({
    armPageSize: 1,
    instances: [
      { resourceId: PRIMARY, location: "westeurope", sku: "Premium_P1", units: 5, connections: 3_000 },
      { resourceId: EAST, location: "eastus", sku: "Premium_P1", units: 2, connections: 1_000 },
      { resourceId: ASIA, location: "southeastasia", sku: "Premium_P2", units: 100, connections: 500 },
    ],
  });
  client = new WebPubSubManagementClient(staticCredential(), SUB_A, {
    endpoint: emulator.armEndpoint,
    tlsOptions: { ca: emulator.caPem },
    retryOptions: { maxRetries: 0 },
  });
});

afterAll(async () => {
  await emulator?.stop();
});

describe("Web PubSub replicas through @azure/arm-webpubsub", () => {
  it("get, list over every page and listReplicaSkus", async () => {
    const east = await client.webPubSubReplicas.get("rg-chat", "pubsub", "pubsub-eastus");
    expect(east).toMatchObject({
      id: EAST,
      name: "pubsub-eastus",
      location: "eastus",
      sku: { name: "Premium_P1", capacity: 2 },
      provisioningState: "Succeeded",
      resourceStopped: "false",
    });
    const all = [];
    for await (const r of client.webPubSubReplicas.list("rg-chat", "pubsub")) all.push(r);
    expect(all.map((r) => [r.name, r.location, r.sku?.name, r.sku?.capacity])).toEqual([
      ["pubsub-eastus", "eastus", "Premium_P1", 2],
      ["pubsub-asia", "southeastasia", "Premium_P2", 100],
    ]);
    const skus = await client.webPubSub.listReplicaSkus("rg-chat", "pubsub", "pubsub-eastus");
    expect(skus.value?.map((s) => [s.resourceType, s.sku?.name])).toEqual([
      ["Microsoft.SignalRService/WebPubSub/replicas", "Premium_P1"],
      ["Microsoft.SignalRService/WebPubSub/replicas", "Premium_P2"],
    ]);
  });

  it("beginUpdate: accepted, Updating, then polled through Location to the replica at its new size", async () => {
    const poller = await client.webPubSubReplicas.beginUpdate("rg-chat", "pubsub", "pubsub-eastus", {
      location: "eastus",
      sku: { name: "Premium_P1", tier: "Premium", capacity: 5 },
    });
    expect((await client.webPubSubReplicas.get("rg-chat", "pubsub", "pubsub-eastus")).provisioningState).toBe(
      "Updating",
    );
    emulator.control.advance(10 * 60_000);
    await poller.poll();
    expect(poller.isDone()).toBe(true);
    expect(poller.getResult()).toMatchObject({
      id: EAST,
      sku: { capacity: 5 },
      provisioningState: "Succeeded",
    });
    expect(emulator.control.instance(EAST)?.units).toBe(5);
    expect(emulator.control.instance(PRIMARY)?.units).toBe(5);
    const writes = emulator.control.requests().filter((r) => r.kind === "armWrite");
    expect(writes.map((r) => [r.method, r.path, r.apiVersion])).toEqual([
      [
        "PATCH",
        `/subscriptions/${SUB_A}/resourceGroups/rg-chat/providers/Microsoft.SignalRService/webPubSub/pubsub/replicas/pubsub-eastus`,
        "2024-03-01",
      ],
    ]);
  });

  it('a stopped replica reads resourceStopped "true" until it is restored', async () => {
    emulator.control.failover(ASIA);
    expect((await client.webPubSubReplicas.get("rg-chat", "pubsub", "pubsub-asia")).resourceStopped).toBe(
      "true",
    );
    emulator.control.restore(ASIA);
    expect((await client.webPubSubReplicas.get("rg-chat", "pubsub", "pubsub-asia")).resourceStopped).toBe(
      "false",
    );
  });

  it("reads `//subscriptions/…` as the path it is (what @azure/arm-resources' getById sends for an ID with its leading slash)", async () => {
    const agent = new Agent({ connect: { ca: emulator.caPem } });
    try {
      const res = await fetch(`${emulator.armEndpoint}/${EAST}?api-version=2024-03-01`, {
        dispatcher: agent,
        headers: { authorization: "Bearer t" },
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { id: string }).id).toBe(EAST);
    } finally {
      await agent.close();
    }
  });
});
