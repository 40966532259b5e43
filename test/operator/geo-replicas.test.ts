/**
 * Geo-replicas end to end: a Premium instance with two replicas in other regions, a policy on each
 * member and the demand split unevenly. Each member is decided on its own metrics (its own metric
 * namespace and region) and scaled by a PATCH on its own resource — never on the primary — and
 * each policy lists the rest of its group in `status.geoReplicas`, with the policy that scales each
 * member; a member left without a policy is named in a Warning `UnmanagedReplicas`.
 */
import { describe, expect, it } from "vitest";
import { operatorSuite, signalrId } from "./harness.js";
import {
  armWritesFor,
  createPolicy,
  eventsOnce,
  getPolicy,
  policyManifest,
  requestCollector,
} from "./helpers.js";

const requests = requestCollector();

const suite = operatorSuite("georeplicas", {
  stepped: true,
  emulator: { speed: 60, scaleDurationMs: 240_000, onRequest: requests.onRequest },
});

describe("geo-replicas", () => {
  it("scales each member on its own metrics, by a write on its own resource, and lists the group in status", async () => {
    const { kube, ns, h } = suite;
    const primary = signalrId("chat-geo");
    const west = `${primary}/replicas/chat-geo-westus`;
    const asia = `${primary}/replicas/chat-geo-asia`;
    h.emulator.control.addInstance({
      resourceId: primary,
      location: "eastus",
      sku: "Premium_P1",
      units: 10,
      connections: 2000,
    });
    h.emulator.control.addInstance({
      resourceId: west,
      location: "westus",
      sku: "Premium_P1",
      units: 10,
      connections: 2000,
    });
    h.emulator.control.addInstance({
      resourceId: asia,
      location: "eastasia",
      sku: "Premium_P1",
      units: 10,
      connections: 3000,
    });
    const spec = { units: { min: 10, max: 50 } };
    await createPolicy(kube, policyManifest(ns, "primary", primary, spec));
    await createPolicy(kube, policyManifest(ns, "west", west, spec));

    // The primary's policy lists both replicas: west scaled by its policy, asia by none.
    const listed = await h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "primary");
        expect(p.status?.geoReplicas?.members.map((m) => [m.resourceId, m.location, m.policy])).toEqual([
          [west, "westus", `${ns}/west`],
          [asia, "eastasia", undefined],
        ]);
        return p;
      },
      60_000,
      500,
    );
    expect(listed.status?.geoReplicas).toMatchObject({ role: "Primary", primary, unmanaged: 1 });
    expect(listed.status?.geoReplicas?.members.every((m) => m.serving === true && m.units === 10)).toBe(true);
    const warned = await eventsOnce(kube, ns, "primary", (es) =>
      es.some((e) => e.reason === "UnmanagedReplicas"),
    );
    expect(warned.find((e) => e.reason === "UnmanagedReplicas")?.message).toContain(asia);
    const replicaView = await getPolicy(kube, ns, "west");
    expect(replicaView.status?.geoReplicas).toMatchObject({ role: "Replica", primary, unmanaged: 1 });
    expect(replicaView.status?.current).toMatchObject({ sku: "Premium_P1", units: 10 });

    // West alone rises: 9,000 connections at 80 % of 1,000 a unit need 12 units → 20 on the ladder.
    await createPolicy(kube, policyManifest(ns, "asia", asia, spec));
    const riseAt = h.emulator.clock.nowMs();
    h.emulator.control.setDemand(west, { connections: 9000 });
    await h.eventually(() => expect(armWritesFor(requests.all, west)).toHaveLength(1), 60_000, 200);
    const write = armWritesFor(requests.all, west)[0];
    expect(write?.method).toBe("PATCH");
    expect(Date.parse(write?.at ?? "")).toBeGreaterThan(riseAt);
    await h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "west");
        expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 20 });
        // Its samples are its own: the replica's 9,000, not the primary's 2,000.
        expect(p.status?.lastSample?.connections).toBeGreaterThan(8500);
      },
      60_000,
      500,
    );
    expect(
      h.emulator.control.replicas(primary).find((r) => r.resourceId.toLowerCase() === west.toLowerCase())
        ?.units,
    ).toBe(20);
    // Nothing was written on the primary or on the other replica.
    expect(armWritesFor(requests.all, primary)).toHaveLength(0);
    expect(armWritesFor(requests.all, asia)).toHaveLength(0);
    await h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "primary");
        expect(p.status?.geoReplicas?.unmanaged).toBe(0);
        expect(p.status?.geoReplicas?.members.find((m) => m.resourceId === west)?.units).toBe(20);
      },
      60_000,
      500,
    );
  });

  it("a replica stops serving: the survivor that takes most of its clients scales out at the next poll, before its metrics show them", async () => {
    const { kube, ns, h } = suite;
    const primary = signalrId("chat-fo");
    const west = `${primary}/replicas/chat-fo-westus`;
    const asia = `${primary}/replicas/chat-fo-asia`;
    const add = (resourceId: string, location: string, connections: number) =>
      h.emulator.control.addInstance({ resourceId, location, sku: "Premium_P1", units: 10, connections });
    add(primary, "eastus", 6000);
    add(west, "westus", 4000);
    add(asia, "eastasia", 3000);
    const spec = { units: { min: 10, max: 50 }, anticipation: { mode: "Enabled" } };
    for (const [name, id] of [
      ["fo-primary", primary],
      ["fo-west", west],
      ["fo-asia", asia],
    ] as const) {
      await createPolicy(kube, policyManifest(ns, name, id, spec));
    }
    await h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "fo-primary");
        expect(p.status?.geoReplicas?.members.every((m) => m.serving === true)).toBe(true);
        expect(p.status?.lastSample?.connections).toBeGreaterThan(5900);
      },
      60_000,
      500,
    );
    expect(armWritesFor(requests.all, primary)).toHaveLength(0);

    // West stops serving: its 4,000 clients reconnect to the others by their demand (6,000 : 3,000),
    // so the primary is about to hold 8,667 — above 80 % of its 10 units.
    const failAt = h.emulator.clock.nowMs();
    h.emulator.control.failover(west, { cause: "stopped" });
    await h.eventually(() => expect(armWritesFor(requests.all, primary)).toHaveLength(1), 60_000, 200);
    const sentAt = Date.parse(armWritesFor(requests.all, primary)[0]?.at ?? "");
    // Within one poll (15 s) of ARM showing it, and long before a bucket with the arrivals is read
    // (the ingestion delay is 3 minutes).
    expect(sentAt - failAt).toBeLessThanOrEqual(15_000 + 5_000);
    const p = await getPolicy(kube, ns, "fo-primary");
    expect(p.status?.desired?.units).toBe(20);
    expect(p.status?.anticipation?.failover?.lost.map((l) => [l.resourceId, l.cause])).toEqual([
      [west, "NotServing"],
    ]);
    expect(p.status?.geoReplicas?.members.find((m) => m.resourceId === west)).toMatchObject({
      serving: false,
      notServingReason: 'resourceStopped is "true"',
    });
    const events = await eventsOnce(kube, ns, "fo-primary", (es) =>
      es.some((e) => e.reason === "AnticipatedScaleOut"),
    );
    expect(events.find((e) => e.reason === "AnticipatedScaleOut")?.message).toMatch(/Failover/);
    // The stopped replica itself is not scaled in on its vanished connections.
    const stopped = await getPolicy(kube, ns, "fo-west");
    expect(stopped.status?.notServing?.reason).toContain("resourceStopped");
    expect(armWritesFor(requests.all, west)).toHaveLength(0);
  });
});
