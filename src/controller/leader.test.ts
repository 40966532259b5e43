import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type AcquireResult, isLeaseHeld, type Lease, observeLease } from "../kube/lease.js";
import { LeaderElector, type LeaseOps } from "./leader.js";

/** An in-memory Lease with the API server's semantics for one object, judged as LeaseClient judges it. */
class MemoryLease {
  lease: Lease = {
    namespace: "ns",
    name: "l",
    resourceVersion: "0",
    record: {
      holderIdentity: undefined,
      leaseDurationSeconds: undefined,
      acquireTime: undefined,
      renewTime: undefined,
      leaseTransitions: 0,
    },
  };
  #write(record: Lease["record"]): Lease {
    this.lease = { ...this.lease, resourceVersion: String(Number(this.lease.resourceVersion) + 1), record };
    return this.lease;
  }
  ops(broken: { down: boolean }): LeaseOps {
    return {
      tryAcquireOrRenew: async (_n, _ns, id, duration, times, observed): Promise<AcquireResult> => {
        if (broken.down) throw new Error("connection refused");
        const seen = observeLease(observed, this.lease, times.monotonicMs);
        const ours = this.lease.record.holderIdentity === id;
        if (!ours && isLeaseHeld(seen, times.monotonicMs, duration)) {
          return { acquired: false, outcome: "heldByOther", lease: this.lease, observed: seen };
        }
        const old = this.lease.record;
        const lease = this.#write({
          holderIdentity: id,
          leaseDurationSeconds: duration,
          acquireTime: ours ? old.acquireTime : times.wall,
          renewTime: times.wall,
          leaseTransitions: old.leaseTransitions + (ours ? 0 : 1),
        });
        const outcome = ours ? "renewed" : "acquired";
        return {
          acquired: true,
          outcome,
          lease,
          observed: observeLease(undefined, lease, times.monotonicMs),
        };
      },
      release: async (_n, _ns, id, now) => {
        if (this.lease.record.holderIdentity !== id) return false;
        this.#write({ ...this.lease.record, holderIdentity: "", leaseDurationSeconds: 1, renewTime: now });
        return true;
      },
    };
  }
}

const log = pino({ level: "silent" });

describe("LeaderElector", () => {
  beforeEach(() => vi.useFakeTimers({ now: Date.parse("2026-01-01T00:00:00Z") }));
  afterEach(() => vi.useRealTimers());

  function elector(
    lease: MemoryLease,
    id: string,
    broken: { down: boolean },
    events: string[],
    wallSkewMs = 0,
  ) {
    return new LeaderElector({
      ops: lease.ops(broken),
      settings: { leaseName: "l", leaseNamespace: "ns", identity: id },
      callbacks: {
        onStartedLeading: () => events.push(`${Date.now()} ${id} start`),
        onStoppedLeading: (r) => events.push(`${Date.now()} ${id} stop ${r}`),
      },
      log,
      // Both share the (fake) monotonic time; each wall clock may be skewed.
      now: () => Date.now() + wallSkewMs,
      monotonic: () => Date.now(),
      random: () => 0,
    });
  }

  it("lets one replica lead; a leader that cannot renew stops writing before another takes over", async () => {
    const lease = new MemoryLease();
    const events: string[] = [];
    const aDown = { down: false };
    const a = elector(lease, "a", aDown, events);
    const b = elector(lease, "b", { down: false }, events);
    a.start();
    await vi.advanceTimersByTimeAsync(100);
    b.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(a.isLeader).toBe(true);
    expect(b.isLeader).toBe(false);
    expect(a.canWrite()).toBe(true);

    const cut = Date.now();
    aDown.down = true;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(a.isLeader).toBe(false);
    expect(b.isLeader).toBe(true);
    const stopA = events.find((e) => e.includes("a stop")) as string;
    const startB = events.find((e) => e.includes("b start")) as string;
    const stopAt = Number(stopA.split(" ")[0]);
    const startAt = Number(startB.split(" ")[0]);
    expect(stopAt).toBeLessThan(startAt);
    expect(stopAt - cut).toBeLessThanOrEqual(10_000);
    expect(startAt - stopAt).toBeGreaterThanOrEqual(3_000);
    await a.stop();
    await b.stop();
  });

  it("releases the lease on stop so the other replica takes over at once", async () => {
    const lease = new MemoryLease();
    const events: string[] = [];
    const a = elector(lease, "a", { down: false }, events);
    const b = elector(lease, "b", { down: false }, events);
    a.start();
    await vi.advanceTimersByTimeAsync(100);
    b.start();
    await vi.advanceTimersByTimeAsync(5_000);
    const signal = a.signal;
    await a.stop();
    expect(signal.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(b.isLeader).toBe(true);
    await b.stop();
  });

  it("judges expiry on its own monotonic clock: a candidate 20 s ahead does not take a live lease", async () => {
    const lease = new MemoryLease();
    const events: string[] = [];
    const a = elector(lease, "a", { down: false }, events);
    const b = elector(lease, "b", { down: false }, events, 20_000);
    a.start();
    await vi.advanceTimersByTimeAsync(100);
    const transitions = lease.lease.record.leaseTransitions;
    b.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(a.isLeader).toBe(true);
    expect(b.isLeader).toBe(false);
    expect(events.filter((e) => e.includes("b start"))).toEqual([]);
    expect(lease.lease.record).toMatchObject({ holderIdentity: "a", leaseTransitions: transitions });
    await a.stop();
    await b.stop();
  });

  it("replaces a dead leader whose clock ran 120 s ahead within one lease duration", async () => {
    const lease = new MemoryLease();
    const events: string[] = [];
    const aDown = { down: false };
    const a = elector(lease, "a", aDown, events, 120_000);
    const b = elector(lease, "b", { down: false }, events);
    a.start();
    await vi.advanceTimersByTimeAsync(100);
    b.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(a.isLeader).toBe(true);
    const diedAt = Date.now();
    aDown.down = true;
    await vi.advanceTimersByTimeAsync(30_000);
    const startB = Number((events.find((e) => e.includes("b start")) as string).split(" ")[0]);
    // 15 s lease + one 2 s retry after the last renewal that b saw.
    expect(startB - diedAt).toBeLessThanOrEqual(15_000 + 2_000);
    expect(lease.lease.record.holderIdentity).toBe("b");
    await a.stop();
    await b.stop();
  });

  it("refuses a renew deadline not shorter than the lease", () => {
    expect(
      () =>
        new LeaderElector({
          ops: new MemoryLease().ops({ down: false }),
          settings: {
            leaseName: "l",
            leaseNamespace: "n",
            identity: "x",
            leaseDurationSeconds: 10,
            renewDeadlineSeconds: 10,
          },
          callbacks: { onStartedLeading: () => {}, onStoppedLeading: () => {} },
          log,
        }),
    ).toThrow(RangeError);
  });
});
