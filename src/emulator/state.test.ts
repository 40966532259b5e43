import { describe, expect, it } from "vitest";
import { createVirtualClock } from "./clock.js";
import { EmulatorState, StateError } from "./state.js";

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
  it("runs an update: Updating, 409 for a second one, Succeeded with the new capacity after the scale time", () => {
    const { clock, state } = setup();
    const op = state.beginUpdate(ID, { units: 2 });
    expect(state.getInstance(ID)).toMatchObject({ provisioningState: "Updating", units: 1 });
    expect(() => state.beginUpdate(ID, { units: 3 })).toThrow(StateError);
    clock.advance(59_999);
    expect(state.getOperation(op.id)?.status).toBe("InProgress");
    clock.advance(1);
    expect(state.getOperation(op.id)?.status).toBe("Succeeded");
    expect(state.getInstance(ID)).toMatchObject({ provisioningState: "Succeeded", units: 2 });
  });

  it("an update that does not apply still reports success", () => {
    const { clock, state } = setup();
    state.beginUpdate(ID, { units: 2 }, false);
    clock.advance(60_000);
    expect(state.getInstance(ID)).toMatchObject({ provisioningState: "Succeeded", units: 1 });
  });

  it("validates SKU and units against the ladders", () => {
    const { state } = setup();
    expect(() => state.beginUpdate(ID, { units: 15 })).toThrow("allowed values: 1, 2, 3");
    expect(() => state.beginUpdate(ID, { sku: "Premium_P2", units: 50 })).toThrow("allowed values: 100, 200");
    expect(() => state.beginUpdate(ID, { sku: "Basic_B9" })).toThrow("is not valid");
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
});
