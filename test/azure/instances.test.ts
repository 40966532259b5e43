/**
 * ARM instances through the real SDK clients against the emulator over HTTPS: reads, listSkus,
 * a scale through the long-running operation to completion and its verification, conflicts,
 * an update that reports success without applying, paging, native autoscale settings.
 */
import { SignalRManagementClient } from "@azure/arm-signalr";
import { WebPubSubManagementClient } from "@azure/arm-webpubsub";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { OperationInProgressError, ResourceIdError, UnknownServiceError } from "../../src/azure/index.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import {
  adaptersFor,
  caught,
  SUB_A,
  SUB_B,
  signalrId,
  startTestEmulator,
  staticCredential,
  T0,
  webPubSubId,
} from "./helpers.js";

const CHAT = signalrId("chat-prod");
const PUBSUB = webPubSubId("notify-prod");

describe("ARM instances against the emulator", { timeout: 30_000 }, () => {
  let emu: RunningEmulator;

  beforeAll(async () => {
    emu = await startTestEmulator({
      armPageSize: 2,
      instances: [
        { resourceId: CHAT, location: "westeurope", sku: "Premium_P1", units: 10, connections: 8000 },
        { resourceId: PUBSUB, location: "eastus", sku: "Standard_S1", units: 2, connections: 500 },
      ],
    });
  });
  afterAll(async () => {
    await emu?.stop();
  });
  beforeEach(() => {
    emu.control.clearFaults();
    emu.control.setClock({ time: T0 });
  });

  it("serves resources in the published shape: the SDKs deserialize them without help", async () => {
    const credential = staticCredential();
    const options = { endpoint: emu.armEndpoint, $host: emu.armEndpoint, tlsOptions: { ca: emu.caPem } };
    const signalr = new SignalRManagementClient(credential, SUB_A, options);
    const r = await signalr.signalR.get("rg-chat", "chat-prod");
    expect(r.id).toBe(CHAT);
    expect(r.name).toBe("chat-prod");
    expect(r.type).toBe("Microsoft.SignalRService/SignalR");
    expect(r.location).toBe("westeurope");
    expect(r.sku).toEqual({ name: "Premium_P1", tier: "Premium", size: "P1", capacity: 10 });
    expect(r.provisioningState).toBe("Succeeded");
    expect(r.hostName).toBe("chat-prod.service.signalr.net");
    expect(r.kind).toBe("SignalR");
    expect(r.systemData?.createdAt).toBeInstanceOf(Date);

    const skus = await signalr.signalR.listSkus("rg-chat", "chat-prod");
    const p2 = skus.value?.find((s) => s.sku?.name === "Premium_P2");
    expect(p2?.resourceType).toBe("Microsoft.SignalRService/SignalR");
    expect(p2?.capacity?.allowedValues).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    expect(p2?.capacity?.minimum).toBe(100);
    expect(p2?.capacity?.scaleType).toBe("Automatic");

    const webpubsub = new WebPubSubManagementClient(credential, SUB_A, options);
    const w = await webpubsub.webPubSub.get("rg-chat", "notify-prod");
    expect(w.type).toBe("Microsoft.SignalRService/WebPubSub");
    expect(w.sku?.capacity).toBe(2);
    expect(w.hostName).toBe("notify-prod.webpubsub.azure.com");
    expect(credential.calls).toBeGreaterThan(0);
  });

  it("reads SKU, units, provisioning state and region", async () => {
    const { instances } = adaptersFor(emu);
    expect(await instances.get(CHAT)).toEqual({
      resourceId: CHAT,
      service: "SignalR",
      name: "chat-prod",
      location: "westeurope",
      sku: "Premium_P1",
      tier: "Premium",
      units: 10,
      provisioningState: "Succeeded",
      terminal: true,
    });
    expect(instances.regionOf(CHAT)).toBe("westeurope");
    const w = await instances.get(PUBSUB);
    expect([w.service, w.sku, w.units, w.location]).toEqual(["WebPubSub", "Standard_S1", 2, "eastus"]);
  });

  it("reads the allowed unit counts with listSkus", async () => {
    const { instances } = adaptersFor(emu);
    const allowed = await instances.listSkus(PUBSUB);
    expect(allowed.fromService).toEqual(["Standard_S1", "Premium_P1", "Premium_P2"]);
    expect(allowed.ladders.Premium_P1).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100,
    ]);
    expect(allowed.skus.find((s) => s.sku === "Free_F1")?.allowedValues).toEqual([1]);
  });

  it("starts a scale without waiting, observes it, and verifies the new capacity", async () => {
    const { instances } = adaptersFor(emu);
    const id = signalrId("scale-me");
    emu.control.addInstance({ resourceId: id, location: "westeurope", sku: "Premium_P1", units: 10 });
    const op = await instances.beginScale(id, { sku: "Premium_P1", units: 20 });
    expect(op.acceptedWith).toBe(202);
    expect(op.operationUrl).toContain("/operationStatuses/");
    expect(op.startedAt.toISOString()).toBe(T0.toISOString());
    expect(op.resumeToken).toContain("operationLocation");

    const running = await instances.observeUpdate(id, op.target);
    expect(running.state).toBe("inProgress");
    expect(running.instance.provisioningState).toBe("Updating");
    expect(running.instance.units).toBe(10);

    // A second update while the first runs gets 409: wait, don't stack.
    const conflict = await caught(() => instances.beginScale(id, { sku: "Premium_P1", units: 30 }));
    expect(conflict).toBeInstanceOf(OperationInProgressError);
    expect((conflict as OperationInProgressError).status).toBe(409);

    emu.control.advance(120_000);
    const done = await instances.observeUpdate(id, op.target);
    expect(done.state).toBe("applied");
    expect(done.instance).toMatchObject({ sku: "Premium_P1", units: 20, provisioningState: "Succeeded" });
  });

  it("scales P1 → P2 and Web PubSub too", async () => {
    const { instances } = adaptersFor(emu);
    const id = signalrId("big-one");
    const wps = webPubSubId("big-two");
    emu.control.addInstance({ resourceId: id, location: "westeurope", sku: "Premium_P1", units: 100 });
    emu.control.addInstance({ resourceId: wps, location: "eastus", sku: "Standard_S1", units: 1 });
    const a = await instances.beginScale(id, { sku: "Premium_P2", units: 200 });
    const b = await instances.beginScale(wps, { sku: "Premium_P1", units: 2 });
    emu.control.advance(120_000);
    expect((await instances.observeUpdate(id, a.target)).state).toBe("applied");
    expect((await instances.observeUpdate(wps, b.target)).instance).toMatchObject({
      sku: "Premium_P1",
      units: 2,
    });
  });

  it("completes update and create operations through the SDKs' own pollers", async () => {
    const fast = await startEmulator({
      start: T0,
      speed: 1,
      scaleDurationMs: 1_200,
      instances: [{ resourceId: CHAT, location: "westeurope", sku: "Premium_P1", units: 1 }],
    });
    try {
      const client = new SignalRManagementClient(staticCredential(), SUB_A, {
        endpoint: fast.armEndpoint,
        $host: fast.armEndpoint,
        tlsOptions: { ca: fast.caPem },
      });
      const webpubsub = new WebPubSubManagementClient(staticCredential(), SUB_A, {
        endpoint: fast.armEndpoint,
        $host: fast.armEndpoint,
        tlsOptions: { ca: fast.caPem },
      });
      const poller = await client.signalR.beginUpdate("rg-chat", "chat-prod", {
        location: "westeurope",
        sku: { name: "Premium_P1", capacity: 5 },
      });
      // PUT of a new instance: created through the same long-running operation protocol.
      const [updated, created] = await Promise.all([
        poller.pollUntilDone(),
        webpubsub.webPubSub.beginCreateOrUpdateAndWait("rg-chat", "new-pubsub", {
          location: "eastus",
          sku: { name: "Standard_S1", capacity: 2 },
        }),
      ]);
      expect(updated.sku?.capacity).toBe(5);
      expect(updated.provisioningState).toBe("Succeeded");
      expect(created.id).toBe(webPubSubId("new-pubsub"));
      expect(created.sku).toMatchObject({ name: "Standard_S1", capacity: 2 });
      expect(created.provisioningState).toBe("Succeeded");
    } finally {
      await fast.stop();
    }
  });

  it("detects an update that reports success without applying", async () => {
    const { instances } = adaptersFor(emu);
    const id = signalrId("liar");
    emu.control.addInstance({ resourceId: id, location: "westeurope", sku: "Premium_P1", units: 2 });
    emu.control.addFault({
      method: "PATCH",
      path: "**/SignalR/liar",
      action: { kind: "notApplied" },
      times: 1,
    });
    const op = await instances.beginScale(id, { sku: "Premium_P1", units: 4 });
    emu.control.advance(120_000);
    const seen = await instances.observeUpdate(id, op.target);
    expect(seen.state).toBe("notApplied");
    expect(seen.instance).toMatchObject({ provisioningState: "Succeeded", units: 2 });
  });

  it("lists instances of a subscription across pages", async () => {
    const { instances } = adaptersFor(emu);
    for (const n of ["page-a", "page-b", "page-c"]) {
      emu.control.addInstance({ resourceId: signalrId(n, SUB_B), location: "northeurope" });
    }
    const listed = await instances.listBySubscription(SUB_B, "SignalR");
    expect(listed.map((i) => i.name).sort()).toEqual(["page-a", "page-b", "page-c"]);
    expect(instances.regionOf(signalrId("page-b", SUB_B))).toBe("northeurope");
  });

  it("finds a native autoscale setting targeting the instance", async () => {
    const { autoscaleSettings } = adaptersFor(emu);
    emu.control.addAutoscaleSetting({
      targetResourceId: CHAT.toLowerCase(),
      minimum: 2,
      maximum: 20,
      default: 2,
    });
    const found = await autoscaleSettings.findFor([CHAT, PUBSUB]);
    expect(found.get(PUBSUB)).toEqual([]);
    expect(found.get(CHAT)).toEqual([
      expect.objectContaining({
        enabled: true,
        minimum: 2,
        maximum: 20,
        default: 2,
        profiles: 1,
        name: "chat-prod-autoscale",
      }),
    ]);
    emu.control.clearAutoscaleSettings();
  });

  it("rejects a malformed resource ID and an unknown service before any request", async () => {
    const { instances } = adaptersFor(emu);
    emu.control.resetRequests();
    const err = await caught(() =>
      instances.get(`/subscriptions/${SUB_A}/resourceGroups/rg/providers/Microsoft.Web/sites/app`),
    );
    expect(err).toBeInstanceOf(ResourceIdError);
    expect((err as Error).message).toMatch(/provider "Microsoft.Web" is not Microsoft.SignalRService/);
    // A service name from untyped input.
    const service = JSON.parse('"Redis"') as "SignalR";
    const unknown = await caught(() => instances.listBySubscription(SUB_A, service));
    expect(unknown).toBeInstanceOf(UnknownServiceError);
    expect((unknown as Error).message).toBe('unknown service "Redis": expected SignalR or WebPubSub');
    expect(emu.control.calls().total).toBe(0);
  });

  it("records ARM's remaining-quota headers per scope", async () => {
    const { instances, quota } = adaptersFor(emu);
    await instances.get(CHAT);
    await instances.get(CHAT);
    const seen = quota.get({ subscriptionId: SUB_A, region: "westeurope" });
    expect(seen?.remaining["subscription-reads"]).toBeGreaterThan(200);
    expect(seen?.servedBy).toBe("emulator");
  });
});
