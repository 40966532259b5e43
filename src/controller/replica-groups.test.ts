import { describe, expect, it } from "vitest";
import type { MetricSample } from "../autoscale/samples.js";
import type { InstanceState } from "../azure/instances.js";
import {
  geoReplicasStatus,
  groupObservation,
  REPLICA_DISCOVERY_MS,
  REPLICA_RETRY_MS,
  ReplicaGroupReader,
  type ReplicaGroupReading,
} from "./replica-groups.js";

const PRIMARY =
  "/subscriptions/4f6c2b1e-8d3a-4c5e-9b7f-2a1d0e3c5b6a/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat";
const WEST = `${PRIMARY}/replicas/chat-westus`;
const ASIA = `${PRIMARY}/replicas/chat-asia`;

function member(resourceId: string, location: string, extra: Partial<InstanceState> = {}): InstanceState {
  return {
    resourceId,
    service: "SignalR",
    name: resourceId.split("/").at(-1) as string,
    location,
    sku: "Premium_P1",
    tier: "Premium",
    units: 10,
    provisioningState: "Succeeded",
    terminal: true,
    ...extra,
  } as InstanceState;
}

const sample = (time: string, connections: number | null) =>
  ({ time, connections }) as unknown as MetricSample;

function reading(fresh = true): ReplicaGroupReading {
  return {
    primaryId: PRIMARY,
    readAtMs: Date.parse("2025-03-03T10:00:00Z"),
    fresh,
    members: new Map([
      [
        PRIMARY,
        {
          state: member(PRIMARY, "eastus"),
          samples: [sample("2025-03-03T09:55:00Z", 5000)],
          policy: "chat/primary",
        },
      ],
      [
        WEST,
        {
          state: member(WEST, "westus", { serving: false, notServingReason: 'resourceStopped is "true"' }),
          samples: [sample("2025-03-03T09:56:00Z", 3000), sample("2025-03-03T09:55:00Z", null)],
        },
      ],
      [ASIA, { state: member(ASIA, "eastasia", { units: 20 }), samples: undefined, policy: "chat/asia" }],
    ]),
  };
}

describe("groupObservation", () => {
  it("lists every member with its serving state and its known connections, oldest first", () => {
    const o = groupObservation(`${PRIMARY.toLowerCase()}`, reading());
    expect(o?.self).toBe(PRIMARY);
    expect(o?.members.map((m) => [m.role, m.location, m.serving, m.units])).toEqual([
      ["Primary", "eastus", true, 10],
      ["Replica", "westus", false, 10],
      ["Replica", "eastasia", true, 20],
    ]);
    expect(o?.members[1]?.notServingReason).toBe('resourceStopped is "true"');
    // A bucket without a value is left out, never read as 0.
    expect(o?.members[1]?.connections).toEqual([
      { startMs: Date.parse("2025-03-03T09:56:00Z"), value: 3000 },
    ]);
    expect(o?.members[2]?.connections).toEqual([]);
  });

  it("says nothing of the replicas' serving state when their list did not answer this cycle", () => {
    const o = groupObservation(WEST, reading(false));
    expect(o?.members.map((m) => m.serving)).toEqual([true, undefined, undefined]);
  });

  it("is undefined without replicas", () => {
    const lone: ReplicaGroupReading = {
      ...reading(),
      members: new Map([[PRIMARY, { state: member(PRIMARY, "eastus"), samples: undefined }]]),
    };
    expect(groupObservation(PRIMARY, lone)).toBeUndefined();
    expect(groupObservation(PRIMARY, undefined)).toBeUndefined();
  });
});

describe("geoReplicasStatus", () => {
  it("lists the other members with their policies and counts the unmanaged ones", () => {
    const s = geoReplicasStatus(PRIMARY, reading());
    expect(s).toEqual({
      role: "Primary",
      primary: PRIMARY,
      members: [
        {
          resourceId: WEST,
          role: "Replica",
          location: "westus",
          sku: "Premium_P1",
          units: 10,
          serving: false,
          notServingReason: 'resourceStopped is "true"',
        },
        {
          resourceId: ASIA,
          role: "Replica",
          location: "eastasia",
          sku: "Premium_P1",
          units: 20,
          serving: true,
          policy: "chat/asia",
        },
      ],
      unmanaged: 1,
      readAt: "2025-03-03T10:00:00.000Z",
    });
    expect(geoReplicasStatus(ASIA, reading())?.role).toBe("Replica");
    expect(geoReplicasStatus(ASIA, reading())?.members.map((m) => m.policy)).toEqual([
      "chat/primary",
      undefined,
    ]);
  });
});

describe("ReplicaGroupReader", () => {
  const t0 = Date.parse("2025-03-03T10:00:00Z");
  const SUB = "4f6c2b1e-8d3a-4c5e-9b7f-2a1d0e3c5b6a";
  const OTHER = PRIMARY.replace("/chat", "/other");

  function counting(replicaIds: () => string[], failList = () => false) {
    const calls: string[] = [];
    const reader = new ReplicaGroupReader(
      async (id) => {
        calls.push(`list ${id}`);
        if (failList()) throw new Error("503");
        return replicaIds()
          .filter((r) => r.startsWith(`${id}/`))
          .map((r) => member(r, "westus"));
      },
      async (sub, service) => {
        calls.push(`find ${sub} ${service}`);
        return replicaIds();
      },
    );
    return { reader, calls };
  }

  it("finds replicas once per subscription and service, then lists only the groups that have some, every cycle", async () => {
    const { reader, calls } = counting(() => [WEST]);
    const targets = [{ resourceId: PRIMARY }, { resourceId: OTHER }];
    await reader.read(targets, t0, {});
    expect(calls).toEqual([`find ${SUB} SignalR`, `list ${PRIMARY}`]);
    expect(reader.group(WEST)?.replicas.map((r) => r.resourceId)).toEqual([WEST]);
    expect(reader.group(OTHER)).toBeUndefined();
    calls.length = 0;
    await reader.read(targets, t0 + 30_000, {});
    expect(calls).toEqual([`list ${PRIMARY}`]);
    calls.length = 0;
    await reader.read(targets, t0 + REPLICA_DISCOVERY_MS, {});
    expect(calls).toEqual([`find ${SUB} SignalR`, `list ${PRIMARY}`]);
  });

  it("lists a replica target's group even before discovery found it", async () => {
    const { reader, calls } = counting(() => []);
    await reader.read([{ resourceId: ASIA }], t0, {});
    expect(calls).toEqual([`find ${SUB} SignalR`, `list ${PRIMARY}`]);
  });

  it("forgets a group discovery no longer finds", async () => {
    let ids = [WEST];
    const { reader, calls } = counting(() => ids);
    await reader.read([{ resourceId: PRIMARY }], t0, {});
    ids = [];
    await reader.read([{ resourceId: PRIMARY }], t0 + REPLICA_DISCOVERY_MS, {});
    expect(reader.group(PRIMARY)).toBeUndefined();
    calls.length = 0;
    await reader.read([{ resourceId: PRIMARY }], t0 + REPLICA_DISCOVERY_MS + 30_000, {});
    expect(calls).toEqual([]);
  });

  it("keeps the last answer after a failed list and waits before the next try", async () => {
    let fail = false;
    const { reader, calls } = counting(
      () => [WEST],
      () => fail,
    );
    await reader.read([{ resourceId: WEST }], t0, {});
    fail = true;
    await reader.read([{ resourceId: WEST }], t0 + 30_000, {});
    expect(reader.group(PRIMARY)).toMatchObject({ readAtMs: t0, replicas: [{ resourceId: WEST }] });
    calls.length = 0;
    await reader.read([{ resourceId: WEST }], t0 + 30_000 + REPLICA_RETRY_MS - 1, {});
    expect(calls).toEqual([]);
    await reader.read([{ resourceId: WEST }], t0 + 30_000 + REPLICA_RETRY_MS, {});
    expect(calls).toEqual([`list ${PRIMARY}`]);
    reader.forget(WEST);
    expect(reader.group(PRIMARY)).toBeUndefined();
  });
});
