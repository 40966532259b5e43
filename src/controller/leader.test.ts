import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AcquireResult } from "../kube/lease.js";
import { LeaderElector, type LeaseOps } from "./leader.js";

/** An in-memory Lease with the API server's semantics for one object. */
class MemoryLease {
  holder: string | undefined;
  renewMs = 0;
  durationS = 0;
  ops(broken: { down: boolean }): LeaseOps {
    return {
      tryAcquireOrRenew: async (_n, _ns, id, duration, now): Promise<AcquireResult> => {
        if (broken.down) throw new Error("connection refused");
        const expired = this.holder === undefined || this.renewMs + this.durationS * 1000 < now.getTime();
        if (this.holder === id || expired) {
          const outcome = this.holder === id ? "renewed" : "acquired";
          this.holder = id;
          this.renewMs = now.getTime();
          this.durationS = duration;
          return { acquired: true, outcome, lease: undefined };
        }
        return { acquired: false, outcome: "heldByOther", lease: undefined };
      },
      release: async (_n, _ns, id) => {
        if (this.holder !== id) return false;
        this.holder = undefined;
        return true;
      },
    };
  }
}

const log = pino({ level: "silent" });

describe("LeaderElector", () => {
  beforeEach(() => vi.useFakeTimers({ now: Date.parse("2026-01-01T00:00:00Z") }));
  afterEach(() => vi.useRealTimers());

  function elector(lease: MemoryLease, id: string, broken: { down: boolean }, events: string[]) {
    return new LeaderElector({
      ops: lease.ops(broken),
      settings: { leaseName: "l", leaseNamespace: "ns", identity: id },
      callbacks: {
        onStartedLeading: () => events.push(`${Date.now()} ${id} start`),
        onStoppedLeading: (r) => events.push(`${Date.now()} ${id} stop ${r}`),
      },
      log,
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
