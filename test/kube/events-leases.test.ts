import { beforeAll, describe, expect, it } from "vitest";
import {
  ConflictError,
  EventRecorder,
  type KubeClients,
  LeaseClient,
  PolicyClient,
  policySubject,
} from "../../src/kube/index.js";
import { adminClients, createNamespace, createPolicy, ensureCrd, kubectl } from "./support.js";

let clients: KubeClients;
let ns: string;

beforeAll(async () => {
  clients = adminClients();
  await ensureCrd();
  ns = await createNamespace(clients, "kube-events");
}, 120_000);

const t0 = new Date("2030-01-01T00:00:00Z");
const at = (seconds: number): Date => new Date(t0.getTime() + seconds * 1000);

describe("EventRecorder", { timeout: 60_000 }, () => {
  it("creates core/v1 Events about a policy and aggregates repeats within the window", async () => {
    await createPolicy(clients, ns, "noisy");
    const policy = await new PolicyClient(clients).get(ns, "noisy");
    const recorder = new EventRecorder(clients, { instance: "pod-a", dedupeWindowMs: 5 * 60_000 });
    const subject = policySubject(policy);
    const scaled = { type: "Normal", reason: "ScaledUp", message: "units 2 -> 3", action: "Scale" } as const;

    const first = await recorder.record(subject, scaled, at(0));
    expect(first).toMatchObject({ created: true, count: 1 });
    const second = await recorder.record(subject, scaled, at(60));
    const third = await recorder.record(subject, scaled, at(120));
    expect(second).toMatchObject({ created: false, count: 2, name: first.name });
    expect(third).toMatchObject({ created: false, count: 3, name: first.name });

    // A different message, or the same one after the window, is a new Event.
    const other = await recorder.record(subject, { ...scaled, message: "units 3 -> 4" }, at(130));
    expect(other.created).toBe(true);
    const late = await recorder.record(subject, scaled, at(120 + 6 * 60));
    expect(late).toMatchObject({ created: true, count: 1 });
    expect(late.name).not.toBe(first.name);

    const event = await clients.core.readNamespacedEvent({ namespace: ns, name: first.name });
    expect(event).toMatchObject({
      type: "Normal",
      reason: "ScaledUp",
      message: "units 2 -> 3",
      count: 3,
      reportingComponent: "signalr-autoscaler",
      reportingInstance: "pod-a",
      source: { component: "signalr-autoscaler", host: "pod-a" },
      involvedObject: {
        apiVersion: "autoscaling.signalr.dev/v1alpha1",
        kind: "CapacityPolicy",
        name: "noisy",
        namespace: ns,
        uid: policy.metadata.uid,
        resourceVersion: policy.metadata.resourceVersion,
      },
    });
    expect(event.firstTimestamp?.toISOString()).toBe(at(0).toISOString());
    expect(event.lastTimestamp?.toISOString()).toBe(at(120).toISOString());

    // What a user sees.
    const described = await kubectl(["describe", "capol", "noisy", "-n", ns]);
    expect(described).toMatch(/Normal\s+ScaledUp/);
  });

  it("serialises concurrent records of the same event and recreates an Event deleted meanwhile", async () => {
    await createPolicy(clients, ns, "busy");
    const subject = policySubject(await new PolicyClient(clients).get(ns, "busy"));
    const recorder = new EventRecorder(clients);
    const warn = { type: "Warning", reason: "MetricsUnavailable", message: "no samples" } as const;
    const results = await Promise.all([0, 1, 2, 3].map((i) => recorder.record(subject, warn, at(i))));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results.map((r) => r.count).sort()).toEqual([1, 2, 3, 4]);
    const name = results[0]?.name ?? "";

    await clients.core.deleteNamespacedEvent({ namespace: ns, name });
    const recreated = await recorder.record(subject, warn, at(10));
    expect(recreated).toMatchObject({ created: true, count: 1 });
  });
});

describe("LeaseClient", { timeout: 60_000 }, () => {
  /** The times of a step `seconds` after t0, on a wall clock `skew` seconds off and the shared monotonic clock. */
  const times = (seconds: number, skew = 0) => ({ wall: at(seconds + skew), monotonicMs: seconds * 1000 });

  it("creates, renews, refuses while held, takes over after expiry on its own clock, and loses races", async () => {
    const leases = new LeaseClient(clients);
    const name = "signalr-autoscaler-leader";

    const a1 = await leases.tryAcquireOrRenew(name, ns, "a", 15, times(0), undefined);
    expect(a1).toMatchObject({ acquired: true, outcome: "created" });
    expect(a1.lease?.record).toMatchObject({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    });
    expect(a1.lease?.record.renewTime?.toISOString()).toBe(at(0).toISOString());

    const a2 = await leases.tryAcquireOrRenew(name, ns, "a", 15, times(5), a1.observed);
    expect(a2).toMatchObject({ acquired: true, outcome: "renewed" });
    expect(a2.lease?.record.renewTime?.toISOString()).toBe(at(5).toISOString());
    expect(a2.lease?.record.acquireTime?.toISOString()).toBe(at(0).toISOString());

    // b first sees the lease at 20 s, its wall clock 20 s ahead: the recorded renewTime (5 s) is
    // not compared with it, so the lease is held for 15 s from b's sighting.
    const b1 = await leases.tryAcquireOrRenew(name, ns, "b", 15, times(20, 20), undefined);
    expect(b1).toMatchObject({ acquired: false, outcome: "heldByOther" });
    expect(b1.lease?.record.holderIdentity).toBe("a");
    expect(b1.observed?.seenAtMs).toBe(20_000);
    const b2 = await leases.tryAcquireOrRenew(name, ns, "b", 15, times(34.9, 20), b1.observed);
    expect(b2).toMatchObject({ acquired: false, outcome: "heldByOther" });
    expect(b2.observed?.seenAtMs).toBe(20_000);

    // Unchanged for 15 s on b's clock: b takes over and the transition is counted.
    const b3 = await leases.tryAcquireOrRenew(name, ns, "b", 10, times(35, 20), b2.observed);
    expect(b3).toMatchObject({ acquired: true, outcome: "acquired" });
    expect(b3.lease?.record).toMatchObject({
      holderIdentity: "b",
      leaseDurationSeconds: 10,
      leaseTransitions: 1,
    });

    // a, waking up late, sees a changed record held by b.
    expect(await leases.tryAcquireOrRenew(name, ns, "a", 15, times(40), a2.observed)).toMatchObject({
      acquired: false,
      outcome: "heldByOther",
    });

    // kubectl sees the holder.
    expect(await kubectl(["get", "lease", name, "-n", ns, "-o", "jsonpath={.spec.holderIdentity}"])).toBe(
      "b",
    );

    // A stale resourceVersion is a ConflictError at the primitive level...
    const seen = await leases.get(ns, name);
    if (seen === undefined) throw new Error("lease vanished");
    await leases.tryAcquireOrRenew(name, ns, "b", 10, times(41), b3.observed);
    const stale = await leases.update(seen, { ...seen.record, renewTime: at(42) }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ConflictError);
    // ...and creating an existing Lease is one too (AlreadyExists).
    const exists = await leases.create(ns, name, seen.record).catch((e: unknown) => e);
    expect(exists instanceof ConflictError && exists.alreadyExists).toBe(true);
  });

  it("lets exactly one of two candidates win an expired lease at the same moment", async () => {
    const leases = new LeaseClient(clients);
    const name = "race";
    await leases.tryAcquireOrRenew(name, ns, "old", 10, times(0), undefined);
    const [c0, d0] = await Promise.all([
      leases.tryAcquireOrRenew(name, ns, "c", 10, times(1), undefined),
      leases.tryAcquireOrRenew(name, ns, "d", 10, times(1), undefined),
    ]);
    expect([c0.outcome, d0.outcome]).toEqual(["heldByOther", "heldByOther"]);
    const [c, d] = await Promise.all([
      leases.tryAcquireOrRenew(name, ns, "c", 10, times(60), c0.observed),
      leases.tryAcquireOrRenew(name, ns, "d", 10, times(60), d0.observed),
    ]);
    expect([c.acquired, d.acquired].filter(Boolean)).toHaveLength(1);
    const loser = c.acquired ? d : c;
    expect(loser.outcome === "lostRace" || loser.outcome === "heldByOther").toBe(true);
    const holder = (await leases.get(ns, name))?.record.holderIdentity;
    expect(holder).toBe(c.acquired ? "c" : "d");
    expect((await leases.get(ns, name))?.record.leaseTransitions).toBe(1);

    // Two candidates creating a missing lease at once: one creates, the other loses.
    const [e, f] = await Promise.all([
      leases.tryAcquireOrRenew("fresh", ns, "e", 10, times(0), undefined),
      leases.tryAcquireOrRenew("fresh", ns, "f", 10, times(0), undefined),
    ]);
    // (The loser either lost the create race or already read the winner's fresh lease.)
    const outcomes = [e.outcome, f.outcome].sort();
    expect(outcomes[0]).toBe("created");
    expect(["heldByOther", "lostRace"]).toContain(outcomes[1]);
  });

  it("releases a held lease so another candidate takes over at once", async () => {
    const leases = new LeaseClient(clients);
    const g = await leases.tryAcquireOrRenew("handover", ns, "g", 30, times(0), undefined);
    const h0 = await leases.tryAcquireOrRenew("handover", ns, "h", 30, times(0.5), undefined);
    expect(h0.outcome).toBe("heldByOther");
    expect(await leases.release("handover", ns, "h", at(1))).toBe(false);
    expect(await leases.release("handover", ns, "g", at(1))).toBe(true);
    expect(g.acquired).toBe(true);
    const h = await leases.tryAcquireOrRenew("handover", ns, "h", 30, times(1), h0.observed);
    expect(h).toMatchObject({ acquired: true, outcome: "acquired" });
    expect(h.lease?.record.leaseTransitions).toBe(1);
  });
});
