/**
 * ARM instances through the real SDK clients against the emulator over HTTPS: reads, listSkus,
 * a scale through the long-running operation to completion and its verification, conflicts,
 * an update that reports success without applying, paging, native autoscale settings; the
 * api-version every request carries and the PATCH bodies against that version's schema; updates
 * that are canceled, run long, are read back late, or go off the ladder the service enforces.
 */
import { SignalRManagementClient } from "@azure/arm-signalr";
import { WebPubSubManagementClient } from "@azure/arm-webpubsub";
import { isRestError } from "@azure/core-rest-pipeline";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  InvalidRequestError,
  OperationInProgressError,
  ResourceIdError,
  SIGNALR_API_VERSION,
  UnknownServiceError,
  WEBPUBSUB_API_VERSION,
} from "../../src/azure/index.js";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import {
  adaptersFor,
  caught,
  resetEmulator,
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

    // The SDK's own api-version (2023-02-01) has no Premium_P2; 2024-03-01 has it, and replicas.
    const old = await signalr.signalR.listSkus("rg-chat", "chat-prod");
    expect(old.value?.map((s) => s.sku?.name)).toEqual(["Free_F1", "Standard_S1", "Premium_P1"]);
    const current = new SignalRManagementClient(credential, SUB_A, {
      ...options,
      apiVersion: SIGNALR_API_VERSION,
    });
    const skus = await current.signalR.listSkus("rg-chat", "chat-prod");
    expect(skus.value?.filter((s) => s.resourceType?.endsWith("/replicas")).map((s) => s.sku?.name)).toEqual([
      "Premium_P1",
      "Premium_P2",
    ]);
    const p2 = skus.value?.find(
      (s) => s.sku?.name === "Premium_P2" && s.resourceType === "Microsoft.SignalRService/SignalR",
    );
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
      role: "Primary",
      primaryId: CHAT,
      location: "westeurope",
      sku: "Premium_P1",
      tier: "Premium",
      units: 10,
      provisioningState: "Succeeded",
      terminal: true,
      serving: true,
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

/**
 * `ResourceSku` and `SignalRSkuTier` / `WebPubSubSkuTier` of api-version 2024-03-01, as the
 * specs state them (Azure/azure-rest-api-specs, `specification/signalr/resource-manager/
 * Microsoft.SignalRService/stable/2024-03-01/signalr.json` at e6eec14c and `specification/
 * webpubsub/resource-manager/Microsoft.SignalRService/stable/2024-03-01/webpubsub.json` at
 * c9388702): `sku.name` "Allowed values: Standard_S1, Free_F1, Premium_P1, Premium_P2", the tier
 * enum, and the `capacity` values "If present, following values are allowed".
 */
const SPEC_2024_03_01 = {
  names: ["Standard_S1", "Free_F1", "Premium_P1", "Premium_P2"],
  tiers: ["Free", "Basic", "Standard", "Premium"],
  tierOf: { Free_F1: "Free", Standard_S1: "Standard", Premium_P1: "Premium", Premium_P2: "Premium" },
  capacity: {
    Free_F1: [1],
    Standard_S1: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
    Premium_P1: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
    Premium_P2: [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000],
  },
} as const;

/**
 * The 200 body of the official example `SignalR_ListSkus.json` of 2024-03-01
 * (`specification/signalr/resource-manager/Microsoft.SignalRService/stable/2024-03-01/examples/`,
 * Azure/azure-rest-api-specs at f7b84a5c, MIT): Free_F1 and Standard_S1 of the instance's type,
 * and Premium_P1 of its replicas (`Microsoft.SignalRService/SignalR/replicas`).
 */
const S1_P1_VALUES = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
const LIST_SKUS_EXAMPLE = {
  value: [
    {
      resourceType: "Microsoft.SignalRService/SignalR",
      sku: { name: "Free_F1", tier: "Free" },
      capacity: { minimum: 0, maximum: 1, default: 1, allowedValues: [1], scaleType: "Manual" },
    },
    {
      resourceType: "Microsoft.SignalRService/SignalR",
      sku: { name: "Standard_S1", tier: "Standard" },
      capacity: { minimum: 0, maximum: 100, default: 1, allowedValues: S1_P1_VALUES, scaleType: "Manual" },
    },
    {
      resourceType: "Microsoft.SignalRService/SignalR/replicas",
      sku: { name: "Premium_P1", tier: "Standard" },
      capacity: { minimum: 0, maximum: 100, default: 1, allowedValues: S1_P1_VALUES, scaleType: "Automatic" },
    },
  ],
};

describe("ARM against the published contract", { timeout: 30_000 }, () => {
  let emu: RunningEmulator;
  const HUB = signalrId("contract-hub");
  const PUB = webPubSubId("contract-pubsub");

  beforeAll(async () => {
    emu = await startTestEmulator({ armPageSize: 1 });
  });
  afterAll(async () => {
    await emu?.stop();
  });
  beforeEach(() => {
    resetEmulator(emu);
    emu.control.setTiming({ readAfterWriteLagMs: 0 });
    for (const v of emu.control.instances()) emu.control.removeInstance(v.resourceId);
    emu.control.addInstance({ resourceId: HUB, location: "westeurope", sku: "Premium_P1", units: 100 });
    emu.control.addInstance({ resourceId: PUB, location: "eastus", sku: "Premium_P1", units: 10 });
  });

  it.each([
    ["SignalR", () => HUB, SIGNALR_API_VERSION, { sku: "Premium_P2", units: 200 }, "westeurope"],
    ["WebPubSub", () => PUB, WEBPUBSUB_API_VERSION, { sku: "Premium_P1", units: 20 }, "eastus"],
  ] as const)(
    "%s: every request carries api-version 2024-03-01, and the PATCH body is of its schema",
    async (service, id, apiVersion, target, region) => {
      expect(apiVersion).toBe("2024-03-01");
      emu.control.addInstance({ resourceId: id().replace(/-(hub|pubsub)$/, "-second"), location: region });
      const { instances } = adaptersFor(emu);
      await instances.get(id());
      await instances.listSkus(id());
      // Two instances of the service, one per page: the second page is fetched from nextLink.
      expect((await instances.listBySubscription(SUB_A, service)).length).toBe(2);
      const op = await instances.beginScale(id(), target);
      expect(op.pollWarning).toBeUndefined();
      emu.control.advance(120_000);
      expect((await instances.observeUpdate(id(), op.target)).state).toBe("applied");

      const sent = emu.control.requests();
      const kinds = sent.map((r) =>
        r.path.includes("/operationStatuses/")
          ? "poll"
          : r.path.endsWith("/skus")
            ? "listSkus"
            : r.method === "PATCH"
              ? "PATCH"
              : /\/providers\/Microsoft\.SignalRService\/(SignalR|WebPubSub)$/i.test(r.path)
                ? "list"
                : "GET",
      );
      expect(new Set(kinds)).toEqual(new Set(["GET", "listSkus", "list", "PATCH", "poll"]));
      expect(kinds.filter((k) => k === "list")).toHaveLength(2);
      expect(sent.filter((r) => r.apiVersion !== apiVersion)).toEqual([]);

      const patches = sent.filter((r) => r.method === "PATCH");
      expect(patches).toHaveLength(1);
      const body = patches[0]?.body as {
        location: string;
        sku: { name: string; tier: string; capacity: number };
        properties?: unknown;
      };
      // The SDK serializes the flattened properties as an empty object: nothing else is sent.
      expect(Object.keys(body).sort()).toEqual(["location", "properties", "sku"]);
      expect(body.properties).toEqual({});
      expect(body.location).toBe(region);
      expect(SPEC_2024_03_01.names).toContain(body.sku.name);
      expect(SPEC_2024_03_01.tiers).toContain(body.sku.tier);
      const name = body.sku.name as keyof typeof SPEC_2024_03_01.capacity;
      expect(body.sku.tier).toBe(SPEC_2024_03_01.tierOf[name]);
      expect(SPEC_2024_03_01.capacity[name]).toContain(body.sku.capacity);
      expect(body.sku).toEqual({
        name: target.sku,
        tier: SPEC_2024_03_01.tierOf[name],
        capacity: target.units,
      });
    },
  );

  it("the SDK's default api-version (2023-02-01) cannot ask for Premium_P2: the emulator refuses it as that version's enum does", async () => {
    const client = new SignalRManagementClient(staticCredential(), SUB_A, {
      endpoint: emu.armEndpoint,
      $host: emu.armEndpoint,
      tlsOptions: { ca: emu.caPem },
    });
    const err = await caught(() =>
      client.signalR.beginUpdate("rg-chat", "contract-hub", {
        location: "westeurope",
        sku: { name: "Premium_P2", tier: "Premium", capacity: 200 },
      }),
    );
    expect(isRestError(err) ? [err.statusCode, err.code, err.message] : err).toEqual([
      400,
      "BadArgument",
      "Invalid arguments",
    ]);
    expect(emu.control.requests().map((r) => r.apiVersion)).toEqual(["2023-02-01"]);
    // A version ARM does not have for the type is refused before anything else.
    const future = new SignalRManagementClient(staticCredential(), SUB_A, {
      endpoint: emu.armEndpoint,
      $host: emu.armEndpoint,
      tlsOptions: { ca: emu.caPem },
      apiVersion: "2026-01-01",
    });
    const refused = await caught(() => future.signalR.get("rg-chat", "contract-hub"));
    expect(isRestError(refused) ? [refused.statusCode, refused.code] : refused).toEqual([
      400,
      "NoRegisteredProviderFound",
    ]);
  });

  it("listSkus as the official example answers it: only the instance's own resource type counts", async () => {
    const { instances } = adaptersFor(emu);
    emu.control.addFault({
      method: "GET",
      path: "**/contract-hub/skus",
      times: 1,
      action: { kind: "respond", body: LIST_SKUS_EXAMPLE },
    });
    const allowed = await instances.listSkus(HUB);
    // The replicas' Premium_P1 is not the instance's: Premium_P1 and Premium_P2 keep the documented ladders.
    expect(allowed.fromService).toEqual(["Standard_S1"]);
    expect(allowed.skus.map((s) => [s.resourceType, s.sku])).toEqual([
      ["Microsoft.SignalRService/SignalR", "Free_F1"],
      ["Microsoft.SignalRService/SignalR", "Standard_S1"],
    ]);
    expect(allowed.ladders.Standard_S1).toEqual(S1_P1_VALUES);
    expect(allowed.ladders.Premium_P2).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  });

  it("listSkus reads the ladder the service enforces for the instance, not its replicas'", async () => {
    const { instances } = adaptersFor(emu);
    emu.control.updateInstance(HUB, { ladders: { Premium_P1: [1, 2, 5, 10, 20, 50, 100] } });
    const allowed = await instances.listSkus(HUB);
    expect(allowed.fromService).toEqual(["Standard_S1", "Premium_P1", "Premium_P2"]);
    expect(allowed.ladders.Premium_P1).toEqual([1, 2, 5, 10, 20, 50, 100]);
    expect(allowed.skus.every((s) => s.resourceType === "Microsoft.SignalRService/SignalR")).toBe(true);
  });

  it("an update off that ladder: refused (400) or, when the service ignores it, answered but not applied", async () => {
    const { instances } = adaptersFor(emu);
    emu.control.updateInstance(PUB, { ladders: { Premium_P1: [1, 2, 5, 10, 20, 50, 100] } });
    const refused = (await caught(() =>
      instances.beginScale(PUB, { sku: "Premium_P1", units: 30 }),
    )) as InvalidRequestError;
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect([refused.status, refused.code]).toEqual([400, "BadArgument"]);
    expect(refused.message).toContain(
      "The capacity 30 is not valid for Premium_P1. Allowed values: 1, 2, 5, 10, 20, 50, 100.",
    );

    emu.control.updateInstance(PUB, { ladderEnforcement: "ignore" });
    const op = await instances.beginScale(PUB, { sku: "Premium_P1", units: 30 });
    expect(op.acceptedWith).toBe(202);
    expect((await instances.observeUpdate(PUB, op.target)).state).toBe("inProgress");
    emu.control.advance(120_000);
    const seen = await instances.observeUpdate(PUB, op.target);
    expect(seen.state).toBe("notApplied");
    expect(seen.instance).toMatchObject({ units: 10, provisioningState: "Succeeded" });
  });

  it("a canceled update is seen Canceled with SKU and units unchanged", async () => {
    const { instances } = adaptersFor(emu);
    emu.control.addFault({
      method: "PATCH",
      path: "**/contract-hub",
      times: 1,
      action: { kind: "cancelUpdate" },
    });
    const op = await instances.beginScale(HUB, { sku: "Premium_P2", units: 200 });
    emu.control.advance(120_000);
    const seen = await instances.observeUpdate(HUB, op.target);
    expect(seen.state).toBe("failed");
    expect(seen.instance).toMatchObject({
      provisioningState: "Canceled",
      terminal: true,
      sku: "Premium_P1",
      units: 100,
    });
  });

  it("a long update stays in progress for its seconds, then applies", async () => {
    const { instances } = adaptersFor(emu);
    emu.control.addFault({
      method: "PATCH",
      path: "**/contract-hub",
      times: 1,
      action: { kind: "longUpdate", seconds: 3 * 3600 },
    });
    const op = await instances.beginScale(HUB, { sku: "Premium_P2", units: 200 });
    emu.control.advance(3 * 3600_000 - 1_000);
    expect((await instances.observeUpdate(HUB, op.target)).instance.provisioningState).toBe("Updating");
    emu.control.advance(1_000);
    expect((await instances.observeUpdate(HUB, op.target)).state).toBe("applied");
  });

  it("a read right after the 202 shows the old size with Succeeded, for the read-after-write lag", async () => {
    const { instances } = adaptersFor(emu);
    emu.control.setTiming({ readAfterWriteLagMs: 45_000 });
    const op = await instances.beginScale(HUB, { sku: "Premium_P2", units: 200 });
    const early = await instances.observeUpdate(HUB, op.target);
    expect(early.state).toBe("notApplied");
    expect(early.instance).toMatchObject({ sku: "Premium_P1", units: 100, provisioningState: "Succeeded" });
    emu.control.advance(45_000);
    expect((await instances.observeUpdate(HUB, op.target)).state).toBe("inProgress");
    emu.control.advance(120_000);
    expect((await instances.observeUpdate(HUB, op.target)).state).toBe("applied");
  });
});
