/**
 * Clock skew between replicas and leader election on a real Lease: two LeaderElectors in this
 * process share the monotonic clock (performance.now) while their wall clocks, written into the
 * Lease, are skewed. A candidate whose wall clock runs 20 s ahead does not take over a lease that
 * is being renewed; a leader whose wall clock ran 120 s ahead and died is replaced within one lease
 * duration, not when its far-future renewTime has passed.
 */
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaderElector, type LeaseOps } from "../../src/controller/leader.js";
import type { KubeClients } from "../../src/kube/client.js";
import { LeaseClient } from "../../src/kube/lease.js";
import { adminClients, createNamespace, eventually } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";

const LEASE = { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.5 };
const TEST_FILE = "test/production/lease-skew.test.ts";

let admin: KubeClients;
let ns: string;
const electors: LeaderElector[] = [];

beforeAll(async () => {
  admin = adminClients();
  ns = await createNamespace(admin, "lease-skew");
});

afterAll(async () => {
  for (const e of electors) await e.stop();
});

/** Lease operations that fail once `dead` is set, as if the replica's process had died. */
class MortalLease implements LeaseOps {
  dead = false;
  constructor(private readonly inner: LeaseClient) {}
  tryAcquireOrRenew(...args: Parameters<LeaseOps["tryAcquireOrRenew"]>) {
    if (this.dead) return Promise.reject(new Error("replica died"));
    return this.inner.tryAcquireOrRenew(...args);
  }
  release(...args: Parameters<LeaseOps["release"]>) {
    if (this.dead) return Promise.reject(new Error("replica died"));
    return this.inner.release(...args);
  }
}

interface Candidate {
  elector: LeaderElector;
  ops: MortalLease;
  /** performance.now() of each start and stop of leading. */
  started: number[];
  stopped: number[];
}

/** A candidate on lease `leaseName` whose wall clock is `skewMs` off; the monotonic clock is shared. */
function candidate(leaseName: string, identity: string, skewMs: number): Candidate {
  const ops = new MortalLease(new LeaseClient(admin));
  const started: number[] = [];
  const stopped: number[] = [];
  const elector = new LeaderElector({
    ops,
    settings: { leaseName, leaseNamespace: ns, identity, ...LEASE },
    callbacks: {
      onStartedLeading: () => started.push(performance.now()),
      onStoppedLeading: () => stopped.push(performance.now()),
    },
    log: pino({ level: "silent" }),
    now: () => Date.now() + skewMs,
    monotonic: () => performance.now(),
  });
  electors.push(elector);
  return { elector, ops, started, stopped };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("leader election under clock skew", { timeout: 60_000 }, () => {
  it.concurrent("a candidate 20 s ahead does not take over a lease renewed moments ago", async () => {
    const a = candidate("skew-ahead", "replica-a", 0);
    a.elector.start();
    await eventually(() => expect(a.elector.isLeader).toBe(true), 10_000, 50);
    const leases = new LeaseClient(admin);
    const before = await leases.get(ns, "skew-ahead");
    const b = candidate("skew-ahead", "replica-b", 20_000);
    b.elector.start();
    // Three lease durations: the old rule (renewTime + 4 s < the candidate's wall clock) took
    // over at b's first attempt.
    const watchMs = 3 * LEASE.leaseDurationSeconds * 1000;
    await sleep(watchMs);
    const after = await leases.get(ns, "skew-ahead");
    expect(b.started).toEqual([]);
    expect(b.elector.isLeader).toBe(false);
    expect(a.elector.isLeader).toBe(true);
    expect(a.stopped).toEqual([]);
    expect(after?.record.holderIdentity).toBe("replica-a");
    expect(after?.record.leaseTransitions).toBe(before?.record.leaseTransitions);
    // a kept renewing: renewTime moved, as a's own clock reads it.
    expect(after?.record.renewTime?.getTime()).toBeGreaterThan(before?.record.renewTime?.getTime() ?? 0);
    recordFault({
      id: "lease-candidate-clock-ahead",
      endpoint: "operator",
      fault: "a standby replica's wall clock 20 s ahead of the leader's",
      outcome: "the standby never takes over a lease the leader keeps renewing",
      test: `${TEST_FILE} › a candidate 20 s ahead does not take over a lease renewed moments ago`,
      figures: {
        clockSkewSeconds: 20,
        watchedSeconds: watchMs / 1000,
        takeovers: b.started.length,
        leaseTransitions: (after?.record.leaseTransitions ?? 0) - (before?.record.leaseTransitions ?? 0),
      },
    });
    await b.elector.stop();
    await a.elector.stop();
  });

  it.concurrent("a leader 120 s ahead that dies is replaced within the lease duration", async () => {
    const a = candidate("skew-dead", "replica-a", 120_000);
    a.elector.start();
    await eventually(() => expect(a.elector.isLeader).toBe(true), 10_000, 50);
    const b = candidate("skew-dead", "replica-b", 0);
    b.elector.start();
    await sleep(2_000);
    const leases = new LeaseClient(admin);
    const before = await leases.get(ns, "skew-dead");
    // The record carries a's clock: its renewTime is two minutes in the future.
    expect((before?.record.renewTime?.getTime() ?? 0) - Date.now()).toBeGreaterThan(100_000);
    expect(b.elector.isLeader).toBe(false);

    const diedAt = performance.now();
    a.ops.dead = true;
    await eventually(() => expect(b.elector.isLeader).toBe(true), 30_000, 50);
    const takeoverSeconds = ((b.started[0] ?? Number.NaN) - diedAt) / 1000;
    // b waits a full lease duration after the last renewal it saw (made before a died, seen at
    // most one retry period later), plus up to one retry period and the API round trips.
    const bound = LEASE.leaseDurationSeconds + 1.2 * LEASE.retryPeriodSeconds + 3;
    expect(takeoverSeconds).toBeLessThan(bound);
    expect(takeoverSeconds).toBeGreaterThan(
      LEASE.leaseDurationSeconds - 1.2 * LEASE.retryPeriodSeconds - 0.1,
    );
    // a stopped acting at its renew deadline, before b started.
    expect(a.elector.isLeader).toBe(false);
    expect(a.stopped[0]).toBeLessThan(b.started[0] ?? Number.NaN);
    const after = await leases.get(ns, "skew-dead");
    expect(after?.record.holderIdentity).toBe("replica-b");
    expect(after?.record.leaseTransitions).toBe((before?.record.leaseTransitions ?? 0) + 1);
    recordFault({
      id: "lease-dead-leader-clock-ahead",
      endpoint: "operator",
      fault: "the leader, its wall clock 120 s ahead, dies without releasing the lease",
      outcome: `a standby takes over within leaseDuration + retry + margin (${bound.toFixed(1)} s), not after the leader's future renewTime`,
      test: `${TEST_FILE} › a leader 120 s ahead that dies is replaced within the lease duration`,
      figures: {
        clockSkewSeconds: 120,
        leaseDurationSeconds: LEASE.leaseDurationSeconds,
        takeoverSeconds: Number(takeoverSeconds.toFixed(2)),
        leaderStoppedAfterSeconds: Number((((a.stopped[0] ?? Number.NaN) - diedAt) / 1000).toFixed(2)),
      },
    });
    await b.elector.stop();
  });
});
