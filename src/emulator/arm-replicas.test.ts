import { describe, expect, it } from "vitest";
import { type ArmFaultFlags, handleArm } from "./arm.js";
import { createVirtualClock } from "./clock.js";
import type { EmulatorRequest, EmulatorResponse } from "./http.js";
import { EmulatorState } from "./state.js";

const SUB = "11111111-1111-1111-1111-111111111111";
const RG = `/subscriptions/${SUB}/resourceGroups/rg`;
const PRIMARY = `${RG}/providers/Microsoft.SignalRService/SignalR/chat`;
const EAST = `${PRIMARY}/replicas/chat-eastus`;
const WPS = `${RG}/providers/Microsoft.SignalRService/WebPubSub/hub`;
const T0 = new Date("2025-01-01T12:00:00Z");

function setup() {
  const clock = createVirtualClock({ start: T0, speed: 0 });
  const state = new EmulatorState({ clock, scaleDurationMs: 60_000, noiseAmplitude: 0 });
  state.addInstance({ resourceId: PRIMARY, location: "westeurope", units: 10, connections: 5_000 });
  state.addInstance({ resourceId: EAST, location: "eastus", units: 5, connections: 2_000 });
  state.addInstance({ resourceId: WPS, location: "westeurope", units: 2 });
  const call = (
    method: string,
    path: string,
    options: { apiVersion?: string; body?: unknown; flags?: ArmFaultFlags } = {},
  ): EmulatorResponse => {
    const req: EmulatorRequest = {
      method,
      path,
      query: new URLSearchParams({ "api-version": options.apiVersion ?? "2024-03-01" }),
      headers: {},
      body: options.body,
      baseUrl: "https://127.0.0.1:1",
    };
    const res = handleArm(req, { state }, options.flags ?? {});
    if (!res) throw new Error(`no route ${method} ${path}`);
    return res;
  };
  return { clock, state, call };
}

type Body = Record<string, unknown> & {
  sku: { name: string; capacity: number };
  properties: Record<string, string>;
};
const body = (res: EmulatorResponse) => res.body as Body;
const errorOf = (res: EmulatorResponse) =>
  (res.body as { error: { code: string; message: string; details?: { message: string }[] } }).error;
const patchBody = (name: string, capacity: number) => ({
  location: "eastus",
  sku: { name, tier: "Premium", capacity },
  properties: { resourceStopped: "false" },
});

describe("ARM replica routes (2024-03-01)", () => {
  it("Replicas_Get and Replicas_List read a replica as the specs' Replica; instance lists leave it out", () => {
    const { call } = setup();
    const get = call("GET", EAST);
    expect(get.status).toBe(200);
    expect(body(get)).toMatchObject({
      id: EAST,
      name: "chat-eastus",
      type: "Microsoft.SignalRService/SignalR/replicas",
      location: "eastus",
      sku: { name: "Premium_P1", tier: "Premium", size: "P1", capacity: 5 },
      properties: {
        provisioningState: "Succeeded",
        regionEndpointEnabled: "Enabled",
        resourceStopped: "false",
      },
    });
    expect(Object.keys(body(get).properties).sort()).toEqual([
      "provisioningState",
      "regionEndpointEnabled",
      "resourceStopped",
    ]);
    expect(body(get)["kind"]).toBeUndefined();
    const list = call("GET", `${PRIMARY}/replicas`);
    expect((list.body as { value: { id: string }[] }).value.map((r) => r.id)).toEqual([EAST]);
    const instances = call("GET", `/subscriptions/${SUB}/providers/Microsoft.SignalRService/SignalR`);
    expect((instances.body as { value: { id: string }[] }).value.map((r) => r.id)).toEqual([PRIMARY]);
    // Case-insensitive segments, as the specs' paths spell them (signalR).
    expect(
      call("GET", EAST.replace("/SignalR/", "/signalR/").replace("/replicas/", "/REPLICAS/")).status,
    ).toBe(200);
  });

  it("unknown replica or instance: 404; a version without replicas: 400 NoRegisteredProviderFound", () => {
    const { call } = setup();
    expect(errorOf(call("GET", `${PRIMARY}/replicas/chat-nowhere`)).code).toBe("ResourceNotFound");
    expect(call("GET", `${RG}/providers/Microsoft.SignalRService/SignalR/none/replicas`).status).toBe(404);
    const old = call("GET", EAST, { apiVersion: "2023-02-01" });
    expect(old.status).toBe(400);
    expect(errorOf(old)).toMatchObject({ code: "NoRegisteredProviderFound" });
    expect(errorOf(old).message).toContain(
      "for type 'SignalR/replicas'. The supported api-versions are '2024-03-01'.",
    );
    expect(errorOf(call("GET", EAST, { apiVersion: "junk" })).code).toBe("InvalidApiVersionParameter");
  });

  it("ListReplicaSkus: the Premium SKUs of type …/replicas with the replica's ladders", () => {
    const { call, state } = setup();
    state.patchInstance(EAST, { ladders: { Premium_P1: [1, 5, 10] } });
    const res = call("GET", `${EAST}/skus`);
    const value = (
      res.body as {
        value: { resourceType: string; sku: { name: string }; capacity: { allowedValues: number[] } }[];
      }
    ).value;
    expect(value.map((v) => [v.resourceType, v.sku.name])).toEqual([
      ["Microsoft.SignalRService/SignalR/replicas", "Premium_P1"],
      ["Microsoft.SignalRService/SignalR/replicas", "Premium_P2"],
    ]);
    expect(value[0]?.capacity.allowedValues).toEqual([1, 5, 10]);
  });

  it("Replicas_Update: 202 with the Replica and its polling URLs, 409 while it runs, Succeeded after the scale time", () => {
    const { clock, call } = setup();
    const accepted = call("PATCH", EAST, { body: patchBody("Premium_P1", 10) });
    expect(accepted.status).toBe(202);
    expect(accepted.headers?.["location"]).toMatch(/operationResults\//);
    expect(accepted.headers?.["azure-asyncoperation"]).toMatch(/\/locations\/eastus\/operationStatuses\//);
    expect(body(accepted)).toMatchObject({ id: EAST, properties: { provisioningState: "Updating" } });
    expect(errorOf(call("PATCH", EAST, { body: patchBody("Premium_P1", 20) })).code).toBe("Conflict");
    clock.advance(60_000);
    const result = new URL(accepted.headers?.["location"] as string);
    const done = call("GET", result.pathname);
    expect(done.status).toBe(200);
    expect(body(done)).toMatchObject({
      id: EAST,
      sku: { capacity: 10 },
      properties: { provisioningState: "Succeeded" },
    });
    // The primary is untouched.
    expect(body(call("GET", PRIMARY)).sku.capacity).toBe(10);
  });

  it("refuses a replica's Standard SKU, an instance with replicas leaving Premium, and units over the replica region's quota", () => {
    const { call, state } = setup();
    const standard = call("PATCH", EAST, {
      body: { location: "eastus", sku: { name: "Standard_S1", tier: "Standard", capacity: 1 } },
    });
    expect(standard.status).toBe(400);
    expect(errorOf(standard).details?.[0]?.message).toContain("Premium_P1 or Premium_P2");
    const primary = call("PATCH", PRIMARY, {
      body: { location: "westeurope", sku: { name: "Standard_S1", tier: "Standard", capacity: 1 } },
    });
    expect(errorOf(primary).details?.[0]?.message).toContain("has 1 replicas");
    state.refusals.setQuota({ region: "eastus", units: 8 });
    const over = call("PATCH", EAST, { body: patchBody("Premium_P1", 10) });
    expect(errorOf(over)).toMatchObject({ code: "OperationNotAllowed" });
    expect(errorOf(over).message).toContain(
      "region 'eastus'. Maximum allowed: 8, Current in use: 5, Additional requested: 5.",
    );
    // The primary's region has no such quota.
    expect(
      call("PATCH", PRIMARY, { body: { location: "westeurope", sku: { name: "Premium_P1", capacity: 20 } } })
        .status,
    ).toBe(202);
  });

  it("Replicas_CreateOrUpdate: 201 Creating in its own region; the primary's region or a missing location is 400", () => {
    const { clock, call, state } = setup();
    const id = `${PRIMARY}/replicas/chat-asia`;
    const created = call("PUT", id, {
      body: { location: "southeastasia", sku: { name: "Premium_P1", tier: "Premium", capacity: 2 } },
    });
    expect(created.status).toBe(201);
    expect(created.headers?.["azure-asyncoperation"]).toBeDefined();
    expect(body(created)).toMatchObject({
      id,
      location: "southeastasia",
      properties: { provisioningState: "Creating" },
    });
    clock.advance(60_000);
    expect(state.getInstance(id)).toMatchObject({
      provisioningState: "Succeeded",
      parentId: PRIMARY,
      units: 2,
    });
    const same = call("PUT", `${PRIMARY}/replicas/chat-we`, {
      body: { location: "westeurope", sku: { name: "Premium_P1", capacity: 1 } },
    });
    expect(same.status).toBe(400);
    expect(errorOf(same).message).toContain("another region");
    expect(call("PUT", `${PRIMARY}/replicas/chat-x`, { body: { sku: { name: "Premium_P1" } } }).status).toBe(
      400,
    );
    // A Web PubSub replica too.
    const wps = call("PUT", `${WPS}/replicas/hub-eastus`, {
      body: { location: "eastus", sku: { name: "Premium_P1", capacity: 1 } },
    });
    expect(body(wps)).toMatchObject({ type: "Microsoft.SignalRService/WebPubSub/replicas" });
  });

  it('a stopped member reads resourceStopped "true"; an outage reads as before', () => {
    const { clock, call, state } = setup();
    clock.advance(120_000);
    state.failover(EAST);
    expect(body(call("GET", EAST)).properties["resourceStopped"]).toBe("true");
    state.restore(EAST);
    state.failover(PRIMARY, "outage");
    expect(body(call("GET", PRIMARY)).properties).toMatchObject({
      resourceStopped: "false",
      provisioningState: "Succeeded",
    });
  });

  it("a write's properties.resourceStopped stops the replica when its operation succeeds, and starts it again", async () => {
    const { clock, call, state } = setup();
    clock.advance(120_000);
    const bad = call("PATCH", EAST, { body: { location: "eastus", properties: { resourceStopped: "yes" } } });
    expect(bad.status).toBe(400);
    const stop = call("PATCH", EAST, {
      body: { location: "eastus", properties: { resourceStopped: "true" } },
    });
    expect(stop.status).toBe(202);
    expect(state.getInstance(EAST)?.serving).toBe(true);
    clock.advance(60_000);
    expect(body(call("GET", EAST)).properties).toMatchObject({
      resourceStopped: "true",
      provisioningState: "Succeeded",
    });
    expect(state.getInstance(EAST)).toMatchObject({ serving: false, outage: { cause: "stopped" } });
    expect(state.failovers(EAST).map((f) => [f.atMs - T0.getTime(), f.connections])).toEqual([
      [180_000, 2_000],
    ]);
    call("PATCH", EAST, { body: { location: "eastus", properties: { resourceStopped: "false" } } });
    clock.advance(60_000);
    expect(body(call("GET", EAST)).properties["resourceStopped"]).toBe("false");
    expect(state.failovers(EAST)[0]?.restoredMs).toBe(T0.getTime() + 240_000);
  });

  it("a write's properties.regionEndpointEnabled disables and enables the replica's endpoint", () => {
    const { clock, call, state } = setup();
    clock.advance(120_000);
    const bad = call("PATCH", EAST, {
      body: { location: "eastus", properties: { regionEndpointEnabled: "Off" } },
    });
    expect(bad.status).toBe(400);
    call("PATCH", EAST, { body: { location: "eastus", properties: { regionEndpointEnabled: "Disabled" } } });
    clock.advance(60_000);
    expect(body(call("GET", EAST)).properties).toMatchObject({
      regionEndpointEnabled: "Disabled",
      resourceStopped: "false",
    });
    expect(state.getInstance(EAST)?.outage?.cause).toBe("endpointDisabled");
    // Starting it does not enable it: a start ends a stop only.
    call("PATCH", EAST, { body: { location: "eastus", properties: { resourceStopped: "false" } } });
    clock.advance(60_000);
    expect(state.getInstance(EAST)?.serving).toBe(false);
    call("PATCH", EAST, { body: { location: "eastus", properties: { regionEndpointEnabled: "Enabled" } } });
    clock.advance(60_000);
    expect(body(call("GET", EAST)).properties["regionEndpointEnabled"]).toBe("Enabled");
    expect(state.getInstance(EAST)?.serving).toBe(true);
  });

  it("a replica's reads lag an accepted write, and a failing fault ends its update Failed, unchanged", () => {
    const { clock, call, state } = setup();
    state.readAfterWriteLagMs = 30_000;
    expect(call("PATCH", EAST, { body: patchBody("Premium_P1", 10) }).status).toBe(202);
    expect(body(call("GET", EAST))).toMatchObject({
      sku: { capacity: 5 },
      properties: { provisioningState: "Succeeded" },
    });
    const listed = (call("GET", `${PRIMARY}/replicas`).body as { value: Body[] }).value[0];
    expect(listed?.sku.capacity).toBe(5);
    clock.advance(30_000);
    expect(body(call("GET", EAST)).properties["provisioningState"]).toBe("Updating");
    clock.advance(60_000);
    state.readAfterWriteLagMs = 0;
    const failing = call("PATCH", EAST, { body: patchBody("Premium_P1", 20), flags: { failUpdate: true } });
    expect(failing.status).toBe(202);
    clock.advance(60_000);
    expect(body(call("GET", EAST))).toMatchObject({
      sku: { capacity: 10 },
      properties: { provisioningState: "Failed" },
    });
  });
});
