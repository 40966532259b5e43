import { describe, expect, it } from "vitest";
import { createVirtualClock } from "./clock.js";
import { EmulatorState, StateError } from "./state.js";

const PRIMARY = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat";
const EAST = `${PRIMARY}/replicas/chat-eastus`;
const ASIA = `${PRIMARY}/replicas/chat-asia`;
const T0 = new Date("2025-01-01T12:00:30Z");
const MINUTE = 60_000;

/** A primary in westeurope (6,000 clients, 10 units) with replicas in eastus (3,000, 5 units) and asia (1,000, 2 units). */
function setup(options: { asiaUnits?: number } = {}) {
  const clock = createVirtualClock({ start: T0, speed: 0 });
  const state = new EmulatorState({ clock, ingestionDelayMs: 0, noiseAmplitude: 0, historyDays: 0.01 });
  state.addInstance({ resourceId: PRIMARY, location: "westeurope", units: 10, connections: 6_000 });
  state.addInstance({ resourceId: EAST, location: "eastus", units: 5, connections: 3_000 });
  state.addInstance({
    resourceId: ASIA,
    location: "southeastasia",
    units: options.asiaUnits ?? 2,
    connections: 1_000,
  });
  const minute = () => Math.floor(clock.nowMs() / MINUTE) * MINUTE;
  const offered = (id: string, at = minute()) => state.bucket(id, at)?.traffic.offeredConnections;
  return { clock, state, minute, offered };
}

function stateError(fn: () => unknown): StateError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StateError) return err;
    throw err;
  }
  throw new Error("no StateError");
}

describe("geo-replicas in the emulator's state", () => {
  it("a replica is an instance with a parent: its own region, SKU, units, demand, metrics and app servers", () => {
    const { clock, state } = setup();
    clock.advance(2 * MINUTE);
    const east = state.getInstance(EAST);
    expect(east).toMatchObject({
      parentId: PRIMARY,
      location: "eastus",
      sku: "Premium_P1",
      units: 5,
      serving: true,
    });
    expect(east?.ref).toMatchObject({
      name: "chat",
      replica: "chat-eastus",
      resourceType: "Microsoft.SignalRService/SignalR/replicas",
    });
    const minute = Math.floor(clock.nowMs() / MINUTE) * MINUTE - MINUTE;
    expect(state.bucket(EAST, minute)?.traffic.clientConnections).toBe(3_000);
    expect(state.bucket(PRIMARY, minute)?.traffic.clientConnections).toBe(6_000);
    expect(state.appServers("chat-eastus").resourceId).toBe(EAST);
    expect(state.replicasOf(PRIMARY).map((r) => r.resourceId)).toEqual([EAST, ASIA]);
    expect(state.listInstances({ replicas: false }).map((r) => r.resourceId)).toEqual([PRIMARY]);
    // Units count against the quota of the replica's own region.
    expect(state.unitsInUse("SignalR", "s", "eastus")).toBe(5);
    expect(state.unitsInUse("SignalR", "s", "westeurope")).toBe(10);
  });

  it("refuses a replica without a Premium instance, of another SKU, in a member's region, or a ninth", () => {
    const { state } = setup();
    const other = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/std";
    state.addInstance({ resourceId: other, location: "westeurope", sku: "Standard_S1", units: 1 });
    expect(
      stateError(() => state.addInstance({ resourceId: `${other}/replicas/r-1`, location: "eastus" }))
        .message,
    ).toContain("Premium");
    const missing =
      "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/none/replicas/r-1";
    expect(stateError(() => state.addInstance({ resourceId: missing, location: "eastus" })).status).toBe(404);
    expect(
      stateError(() =>
        state.addInstance({
          resourceId: `${PRIMARY}/replicas/r-s1`,
          location: "japaneast",
          sku: "Standard_S1",
        }),
      ).message,
    ).toContain("Premium_P1 or Premium_P2");
    expect(
      stateError(() => state.addInstance({ resourceId: `${PRIMARY}/replicas/r-we`, location: "West Europe" }))
        .message,
    ).toContain("'chat' is in westeurope");
    expect(
      stateError(() => state.addInstance({ resourceId: `${PRIMARY}/replicas/r-us`, location: "eastus" }))
        .message,
    ).toContain("'chat-eastus' is in eastus");
    expect(stateError(() => state.addInstance({ resourceId: `${PRIMARY}/replicas/r-none` })).code).toBe(
      "LocationRequired",
    );
    // Replacing a replica keeps its own region free for itself.
    state.addInstance({ resourceId: EAST, location: "eastus", units: 2, connections: 10 });
    for (const region of [
      "japaneast",
      "brazilsouth",
      "uksouth",
      "centralindia",
      "koreacentral",
      "canadacentral",
    ]) {
      state.addInstance({ resourceId: `${PRIMARY}/replicas/r-${region}`, location: region });
    }
    expect(state.replicasOf(PRIMARY)).toHaveLength(8);
    expect(
      stateError(() => state.addInstance({ resourceId: `${PRIMARY}/replicas/r-9`, location: "norwayeast" }))
        .message,
    ).toContain("at most 8");
  });

  it("removing the instance removes its replicas; removing a replica keeps the instance", () => {
    const { state } = setup();
    expect(state.removeInstance(ASIA)).toBe(true);
    expect(state.replicasOf(PRIMARY).map((r) => r.resourceId)).toEqual([EAST]);
    expect(state.removeInstance(PRIMARY)).toBe(true);
    expect(state.getInstance(EAST)).toBeUndefined();
    expect(state.listInstances()).toEqual([]);
  });

  it("a failover: the member's minutes have no data; its clients go to the serving members by their demand, refused where there is no room", () => {
    const { clock, state, minute, offered } = setup();
    clock.advance(3 * MINUTE);
    const record = state.failover(PRIMARY);
    expect(state.getInstance(PRIMARY)).toMatchObject({ serving: false, outage: { cause: "stopped" } });
    // 6,000 clients split 3:1 over eastus and asia.
    expect(record.connections).toBe(6_000);
    expect(record.reconnects.map((r) => [r.resourceId, r.share, r.connections])).toEqual([
      [EAST, 0.75, 4_500],
      [ASIA, 0.25, 1_500],
    ]);
    // Asia's 2 units have about 1,000 connections free: the rest are refused at every attempt.
    const asia = record.reconnects[1];
    expect(asia?.refused).toBeGreaterThan(400);
    expect(asia?.negotiations).toBeCloseTo(1_500 + 3 * (asia?.refused ?? 0), 6);
    const failedAt = minute();
    // Asia's app servers count the refused clients' retries at 2, 10 and 30 s (and the first
    // attempts as the jump in its demand's arrivals, spread over the minute).
    const n0 = state.appServers("chat-asia").negotiations;
    clock.advance(31_000);
    const retries = 3 * (asia?.refused ?? 0);
    expect(state.appServers("chat-asia").negotiations - n0).toBeGreaterThan(retries + 1_500 * (29 / 60) - 1);
    clock.advance(MINUTE - 31_000);
    expect(state.bucket(PRIMARY, failedAt)).toBeUndefined();
    expect(offered(EAST, failedAt)).toBe(7_500);
    expect(offered(ASIA, failedAt)).toBe(2_500);
    expect(state.bucket(ASIA, failedAt)?.traffic.clientConnections).toBeLessThan(2_000);
    expect(state.bucket(ASIA, failedAt)?.traffic.refusedConnections).toBeGreaterThan(400);
    // The minute before is unchanged.
    expect(offered(EAST, failedAt - MINUTE)).toBe(3_000);
    expect(stateError(() => state.failover(PRIMARY)).status).toBe(409);
    expect(state.failovers(PRIMARY)).toHaveLength(1);
  });

  it("a restore: the member has data again, and its moved clients drift back over the connection lifetime", () => {
    const { clock, state, minute, offered } = setup();
    clock.advance(3 * MINUTE);
    state.failover(EAST, "outage");
    // An outage shows nothing in ARM: only the serving flag of the emulator's own view.
    expect(state.getInstance(EAST)).toMatchObject({ serving: false, outage: { cause: "outage" } });
    clock.advance(10 * MINUTE);
    const restored = state.restore(EAST);
    expect(restored.restoredMs).toBe(clock.nowMs());
    const back = minute();
    clock.advance(60 * MINUTE);
    // Restored at the restore minute's middle: all still away then; 1,200 s lifetime: a minute
    // later, e^(−1/20) of them are.
    expect(offered(EAST, back)).toBe(0);
    const away1 = Math.exp(-60 / 1_200);
    expect(offered(EAST, back + MINUTE)).toBe(Math.round(3_000 * (1 - away1)));
    expect(offered(PRIMARY, back + MINUTE)).toBe(Math.round(6_000 + 3_000 * away1 * (6 / 7)));
    // 40 minutes on, e^(−2) of them are still on the siblings; the group's total is kept.
    const later = back + 40 * MINUTE;
    const total = [PRIMARY, EAST, ASIA].reduce((a, id) => a + (offered(id, later) ?? 0), 0);
    expect(total).toBeGreaterThanOrEqual(9_999);
    expect(total).toBeLessThanOrEqual(10_001);
    expect(offered(EAST, later)).toBe(Math.round(3_000 * (1 - Math.exp(-2))));
    expect(stateError(() => state.restore(EAST)).status).toBe(409);
  });

  it("a failover of a lone instance loses its clients; an unknown cause is refused", () => {
    const clock = createVirtualClock({ start: T0, speed: 0 });
    const state = new EmulatorState({ clock, ingestionDelayMs: 0, noiseAmplitude: 0, historyDays: 0.01 });
    state.addInstance({ resourceId: PRIMARY, location: "westeurope", units: 10, connections: 6_000 });
    clock.advance(2 * MINUTE);
    expect(stateError(() => state.failover(PRIMARY, "flood" as never)).status).toBe(400);
    expect(state.failover(PRIMARY).reconnects).toEqual([]);
  });

  it("a disabled endpoint drains: metrics go on, no one is disconnected, its clients move as their connections end", () => {
    const { clock, state, minute, offered } = setup();
    clock.advance(3 * MINUTE);
    const record = state.failover(EAST, "endpointDisabled");
    expect(record.reconnects.map((r) => [r.resourceId, r.share, r.connections, r.refused])).toEqual([
      [PRIMARY, 6 / 7, 0, 0],
      [ASIA, 1 / 7, 0, 0],
    ]);
    expect(state.getInstance(EAST)).toMatchObject({ serving: false, outage: { cause: "endpointDisabled" } });
    const from = minute();
    clock.advance(41 * MINUTE);
    // Still has data; 40 minutes after it was disabled (the minute's middle), e^(−2) of its
    // clients are still on it.
    const kept = Math.exp(-(40 * 60) / 1_200);
    expect(offered(EAST, from + 40 * MINUTE)).toBe(Math.round(3_000 * kept));
    expect(offered(PRIMARY, from + 40 * MINUTE)).toBe(Math.round(6_000 + 3_000 * (1 - kept) * (6 / 7)));
    expect(state.disconnections(EAST)).toEqual([]);
  });
});
