import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVirtualClock } from "./clock.js";
import { handleControl } from "./control.js";
import { type RunningEmulator, startEmulator } from "./emulator.js";
import type { EmulatorResponse } from "./http.js";

const SUB = "11111111-1111-1111-1111-111111111111";
const PRIMARY = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat`;
const EAST = `${PRIMARY}/replicas/chat-eastus`;
const T0 = new Date("2025-03-03T12:00:30Z");

describe("control API: replicas and failover", () => {
  let emulator: RunningEmulator;
  const control = (
    method: string,
    path: string,
    body?: unknown,
    query: Record<string, string> = {},
  ): EmulatorResponse => {
    const res = handleControl(
      { method, path, query: new URLSearchParams(query), headers: {}, body, baseUrl: emulator.url },
      emulator.control,
    );
    if (!res) throw new Error(`no control route ${method} ${path}`);
    return res;
  };

  beforeAll(async () => {
    emulator = await startEmulator({
      clock: createVirtualClock({ start: T0, speed: 0 }),
      ingestionDelayMs: 0,
      noiseAmplitude: 0,
      instances: [{ resourceId: PRIMARY, location: "westeurope", units: 10, connections: 4_000 }],
    });
  });
  afterAll(() => emulator?.stop());

  it("adds a replica over POST /_emulator/instances and lists it under /_emulator/replicas and the state", () => {
    const added = control("POST", "/_emulator/instances", {
      resourceId: EAST,
      location: "eastus",
      units: 5,
      connections: 1_000,
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      resourceId: EAST,
      parentId: PRIMARY,
      location: "eastus",
      serving: true,
    });
    const listed = control("GET", "/_emulator/replicas", undefined, { resourceId: PRIMARY });
    expect((listed.body as { resourceId: string }[]).map((r) => r.resourceId)).toEqual([EAST]);
    const snapshot = control("GET", "/_emulator/state").body as { instances: { resourceId: string }[] };
    expect(snapshot.instances.map((i) => i.resourceId)).toEqual([PRIMARY, EAST]);
    const refused = control("POST", "/_emulator/instances", {
      resourceId: `${PRIMARY}/replicas/x-we`,
      location: "westeurope",
    });
    expect(refused.status).toBe(400);
  });

  it("POST /_emulator/failover stops a member; /restore brings it back; /failovers lists both", () => {
    emulator.control.advance(5 * 60_000);
    expect(control("POST", "/_emulator/failover", { resourceId: EAST, cause: "flood" }).status).toBe(400);
    expect(control("POST", "/_emulator/failover", {}).status).toBe(400);
    const failed = control("POST", "/_emulator/failover", { resourceId: EAST });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({
      resourceId: EAST,
      cause: "stopped",
      at: "2025-03-03T12:05:30.000Z",
      connections: 1_000,
      reconnects: [{ resourceId: PRIMARY, share: 1, connections: 1_000, refused: 0 }],
    });
    expect(control("POST", "/_emulator/failover", { resourceId: EAST }).status).toBe(409);
    expect(emulator.control.instance(EAST)).toMatchObject({ serving: false, outage: { cause: "stopped" } });
    emulator.control.advance(2 * 60_000);
    expect(emulator.control.traffic(PRIMARY)?.offeredConnections).toBe(5_000);
    expect(emulator.control.traffic(EAST)).toBeUndefined();
    const restored = control("POST", "/_emulator/restore", { resourceId: EAST });
    expect(restored.body).toMatchObject({ restoredAt: "2025-03-03T12:07:30.000Z" });
    expect(control("POST", "/_emulator/restore", { resourceId: EAST }).status).toBe(409);
    const list = control("GET", "/_emulator/failovers", undefined, { resourceId: PRIMARY });
    expect((list.body as { resourceId: string }[]).map((r) => r.resourceId)).toEqual([EAST]);
    expect(control("GET", "/_emulator/failovers", undefined, {}).status).toBe(400);
  });

  it("DELETE of the instance removes its replicas", () => {
    expect(control("DELETE", "/_emulator/instances", undefined, { resourceId: PRIMARY }).status).toBe(204);
    expect(emulator.control.instance(EAST)).toBeUndefined();
  });
});
