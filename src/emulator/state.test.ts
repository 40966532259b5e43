import { describe, expect, it } from "vitest";
import { createVirtualClock } from "./clock.js";
import { EmulatorState, parseLadders, StateError } from "./state.js";

const ID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/hub-1";
const T0 = new Date("2025-01-01T12:00:00Z");

function setup() {
  const clock = createVirtualClock({ start: T0, speed: 0 });
  const state = new EmulatorState({
    clock,
    scaleDurationMs: 60_000,
    ingestionDelayMs: 120_000,
    noiseAmplitude: 0,
  });
  state.addInstance({ resourceId: ID, sku: "Premium_P1", units: 1, connections: 800 });
  return { clock, state };
}

describe("EmulatorState", () => {
  it("a completed scale-in disconnects the removed units' clients, who negotiate again at 0, 2, 10, 30 s", () => {
    const clock = createVirtualClock({ start: T0, speed: 0 });
    const state = new EmulatorState({ clock, scaleDurationMs: 60_000, noiseAmplitude: 0 });
    state.addInstance({ resourceId: ID, sku: "Premium_P1", units: 30, connections: 18_000 });
    const before = state.appServers("hub-1").negotiations;
    state.beginUpdate(ID, { units: 20 });
    clock.advance(60_000);
    const [d] = state.disconnections(ID);
    // A third of the units go: a third of the 18,000 clients; the 20 units have room for them all.
    expect(d?.disconnected).toBeCloseTo(6_000, 6);
    expect(d).toMatchObject({ from: { units: 30 }, to: { units: 20 }, refused: 0 });
    clock.advance(30_000);
    const steady = (18_000 / 1_200) * 90; // 90 s of Little's-law arrivals (D / W)
    expect(state.appServers("hub-1").negotiations - before).toBeCloseTo(steady + 6_000, 3);
    // A scale-out disconnects none.
    state.beginUpdate(ID, { units: 30 });
    clock.advance(60_000);
    expect(state.disconnections(ID)).toHaveLength(1);
  });

  it("in the pessimistic model every change disconnects everyone, and a reconnect without room is refused", () => {
    const clock = createVirtualClock({ start: T0, speed: 0 });
    const state = new EmulatorState({
      clock,
      scaleDurationMs: 60_000,
      noiseAmplitude: 0,
      disconnection: "Everyone",
    });
    state.addInstance({ resourceId: ID, sku: "Premium_P1", units: 10, connections: 9_000 });
    state.beginUpdate(ID, { units: 5 });
    clock.advance(60_000);
    const [d] = state.disconnections(ID);
    expect(d?.disconnected).toBe(9_000);
    expect(d?.reconnected).toBeLessThanOrEqual(5_000);
    expect((d?.reconnected ?? 0) + (d?.refused ?? 0)).toBe(9_000);
    expect(d?.negotiations).toBe(9_000 + 3 * (d?.refused ?? 0));
  });

  it("runs an update: Updating, 409 for a second one, Succeeded with the new capacity after the scale time", () => {
    const { clock, state } = setup();
    const op = state.beginUpdate(ID, { units: 2 });
    expect(state.getInstance(ID)).toMatchObject({ provisioningState: "Updating", units: 1 });
    expect(() => state.beginUpdate(ID, { units: 3 })).toThrow(StateError);
    clock.advance(59_999);
    expect(state.getOperation(op.id)?.status).toBe("Running");
    clock.advance(1);
    expect(state.getOperation(op.id)?.status).toBe("Succeeded");
    expect(state.getInstance(ID)).toMatchObject({ provisioningState: "Succeeded", units: 2 });
  });

  it("an update that does not apply still reports success", () => {
    const { clock, state } = setup();
    state.beginUpdate(ID, { units: 2 }, { outcome: "notApplied" });
    clock.advance(60_000);
    expect(state.getInstance(ID)).toMatchObject({ provisioningState: "Succeeded", units: 1 });
  });

  it("refuses a SKU that does not exist and a unit count that is not a whole number > 0", () => {
    const { state } = setup();
    expect(() => state.beginUpdate(ID, { sku: "Basic_B9" })).toThrow("is not valid");
    expect(() => state.beginUpdate(ID, { units: 2.5 })).toThrow("whole number");
    expect(() => state.beginUpdate(ID, { units: 0 })).toThrow("whole number");
    expect(state.isBusy(ID)).toBe(false);
  });

  it("computes buckets from the capacity and demand in force at each minute", () => {
    const { clock, state } = setup();
    const before = Date.parse("2025-01-01T11:50:00Z");
    state.beginUpdate(ID, { units: 2 });
    clock.advance(60_000);
    state.setDemand(ID, { connections: 1_500 });
    clock.advance(10 * 60_000);
    const old = state.bucket(ID, before);
    expect(old?.traffic).toMatchObject({ connectionQuota: 1000, clientConnections: 800 });
    const now = state.bucket(ID, Date.parse("2025-01-01T12:05:00Z"));
    expect(now?.traffic).toMatchObject({ connectionQuota: 2000, clientConnections: 1_500 });
  });

  it("follows the ingestion delay: complete, partial, not yet", () => {
    const { state } = setup();
    expect(state.bucket(ID, Date.parse("2025-01-01T11:57:00Z"))?.ingested).toBe(1);
    expect(state.bucket(ID, Date.parse("2025-01-01T11:58:00Z"))?.ingested).toBe(0);
    expect(state.bucket(ID, Date.parse("2025-01-01T12:00:00Z"))).toBeUndefined();
    // Instances have 28 days of past metrics by default, and nothing before.
    expect(state.bucket(ID, Date.parse("2024-12-04T12:00:00Z"))?.ingested).toBe(1);
    expect(state.bucket(ID, Date.parse("2024-12-04T11:58:00Z"))).toBeUndefined();
  });

  it("creates instances through ARM: Creating, then Succeeded", () => {
    const { clock, state } = setup();
    const id = ID.replace("hub-1", "hub-2");
    state.beginCreate(id, { location: "eastus", sku: "Standard_S1", units: 2 });
    expect(state.getInstance(id)).toMatchObject({ provisioningState: "Creating", location: "eastus" });
    clock.advance(60_000);
    expect(state.getInstance(id)?.provisioningState).toBe("Succeeded");
  });

  it("ends an update as its outcome says: Canceled and Failed leave SKU and units unchanged", () => {
    const { clock, state } = setup();
    const op = state.beginUpdate(ID, { units: 2 }, { outcome: "canceled" });
    clock.advance(60_000);
    expect(state.getOperation(op.id)).toMatchObject({ status: "Canceled", endMs: T0.getTime() + 60_000 });
    expect(state.getInstance(ID)).toMatchObject({ provisioningState: "Canceled", units: 1 });
    const failed = state.beginUpdate(ID, { units: 2 }, { outcome: "failed", durationMs: 5_000 });
    clock.advance(4_999);
    expect(state.getOperation(failed.id)?.status).toBe("Running");
    clock.advance(1);
    expect(state.getInstance(ID)).toMatchObject({ provisioningState: "Failed", units: 1 });
  });

  it("ARM reads show the instance as before an accepted update for the read-after-write lag", () => {
    const { clock, state } = setup();
    state.readAfterWriteLagMs = 90_000;
    state.beginUpdate(ID, { sku: "Premium_P1", units: 5 });
    expect(state.armView(ID)).toMatchObject({ units: 1, provisioningState: "Succeeded" });
    expect(state.getInstance(ID)).toMatchObject({ units: 1, provisioningState: "Updating" });
    // The lag outlasts the update: still the old units after it completed.
    clock.advance(60_000);
    expect(state.getInstance(ID)?.units).toBe(5);
    expect(state.armView(ID)).toMatchObject({ units: 1, provisioningState: "Succeeded" });
    clock.advance(30_000);
    expect(state.armView(ID)).toMatchObject({ units: 5, provisioningState: "Succeeded" });
    expect(state.armInstances().map((v) => v.units)).toEqual([5]);
  });

  it("counts the units a subscription holds in a region per service, a running update at its larger size", () => {
    const { state } = setup();
    const other = ID.replace("hub-1", "hub-2");
    const east = ID.replace("hub-1", "hub-3");
    const pubsub = ID.replace("SignalR/hub-1", "WebPubSub/hub-4");
    const free = ID.replace("hub-1", "hub-5");
    state.addInstance({ resourceId: other, location: "westeurope", sku: "Premium_P1", units: 20 });
    state.addInstance({ resourceId: east, location: "eastus", sku: "Premium_P1", units: 30 });
    state.addInstance({ resourceId: pubsub, location: "westeurope", sku: "Premium_P1", units: 40 });
    state.addInstance({ resourceId: free, location: "westeurope", sku: "Free_F1", units: 1 });
    expect(state.unitsInUse("SignalR", "S", "West Europe")).toBe(21);
    state.beginUpdate(other, { units: 50 });
    expect(state.unitsInUse("SignalR", "s", "westeurope")).toBe(51);
    expect(state.unitsHeldBy(other)).toBe(50);
    state.beginUpdate(ID, { units: 2 }, { outcome: "notApplied" });
    expect(state.unitsHeldBy(ID)).toBe(1);
    expect(state.unitsInUse("WebPubSub", "s", "westeurope")).toBe(40);
    expect(state.unitsHeldBy(ID.replace("hub-1", "nope"))).toBe(0);
  });

  it("keeps each instance's ladders and enforcement; units set directly may be on either ladder", () => {
    const { state } = setup();
    const id = ID.replace("hub-1", "hub-9");
    const view = state.addInstance({
      resourceId: id,
      sku: "Premium_P1",
      units: 30,
      ladders: { Premium_P1: [100, 1, 50, 2, 2] },
      ladderEnforcement: "ignore",
    });
    expect(view.ladders).toEqual({ Premium_P1: [1, 2, 50, 100] });
    expect(view.ladderEnforcement).toBe("ignore");
    expect(state.ladderOf(id, "Premium_P1")).toEqual([1, 2, 50, 100]);
    expect(state.ladderOf(id, "Premium_P2")).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    expect(() => state.patchInstance(id, { units: 15 })).toThrow("allowed values: 1, 2, 3");
    const patched = state.patchInstance(id, {
      ladders: { Standard_S1: [1, 3] },
      ladderEnforcement: "refuse",
    });
    expect(patched.ladders).toEqual({ Premium_P1: [1, 2, 50, 100], Standard_S1: [1, 3] });
    expect(patched.ladderEnforcement).toBe("refuse");
    expect(() => state.patchInstance(id, { ladderEnforcement: "maybe" as never })).toThrow(StateError);
  });

  it.each([
    [[], "must be an object"],
    [{ Basic_B1: [1] }, 'unknown SKU "Basic_B1"'],
    [{ Premium_P1: [] }, "non-empty list"],
    [{ Premium_P1: [1, 2.5] }, "whole numbers > 0"],
    [{ Premium_P1: [0] }, "whole numbers > 0"],
  ])("refuses the ladders %j", (ladders, message) => {
    expect(() => parseLadders(ladders)).toThrow(message);
  });
});
