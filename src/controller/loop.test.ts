/**
 * The loop stepped by hand, without a cluster or Azure: a fake policy source, a fake cycle reader
 * and leading reader, a fake pass, and a virtual clock the test moves. Each test calls `tick()`
 * and lets the passes run, then reads the tick's plan and each policy's record: policies due
 * together share one cycle, a pass puts its policy on the interval's grid, a failed one backs off,
 * a young cycle holds the policies due meanwhile, a leading signal holds only its own policy, a
 * change is due at once, a deleted policy is forgotten, and nothing moves while not leading.
 */
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { API_VERSION, type CapacityPolicy, KIND } from "../api/index.js";
import type { LeadingObservation } from "../autoscale/leading.js";
import { spec } from "../autoscale/testing.js";
import { objectKey } from "../kube/watch.js";
import type { OperatorClock } from "./clock.js";
import type { CycleReading, CycleReadOptions, CycleTarget } from "./fetch.js";
import { type PassReport, type PolicySource, PollLoop } from "./loop.js";
import { OperatorMetrics } from "./metrics.js";
import type { CycleReader, LeadingSource } from "./poll-cycle.js";
import type { PassResult } from "./reconcile.js";
import { nextPollTime } from "./schedule.js";
import { resourceIdOf, T0 } from "./testing.js";

const INTERVAL_MS = 30_000;

/** A virtual clock: `now` moves only when the test says; timers are kept, never fired. */
function virtualClock(start: number): OperatorClock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    scheduler: { setTimeout: () => ({}), clearTimeout: () => {} },
    advance: (ms) => {
      now += ms;
    },
  };
}

function policy(name: string, extra: { generation?: number; leading?: boolean; created?: string } = {}) {
  const s = spec({ target: { service: "SignalR", resourceId: resourceIdOf(name) } });
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      namespace: "ns",
      name,
      generation: extra.generation ?? 1,
      ...(extra.created ? { creationTimestamp: extra.created } : {}),
    },
    spec: {
      ...s,
      pollIntervalSeconds: INTERVAL_MS / 1000,
      ...(extra.leading
        ? {
            anticipation: {
              leadingSignal: { prometheus: { address: "http://prometheus:9090", query: "up" } },
            },
          }
        : {}),
    },
  } as CapacityPolicy;
}

/** The policies as a map the test edits, handing each change to the loop as a watch would. */
class FakeSource implements PolicySource {
  readonly #policies = new Map<string, CapacityPolicy>();
  loop: PollLoop | undefined;
  list() {
    return [...this.#policies.values()];
  }
  get(key: string) {
    return this.#policies.get(key);
  }
  put(p: CapacityPolicy) {
    const previous = this.#policies.get(objectKey(p));
    this.#policies.set(objectKey(p), p);
    this.loop?.policyEvent(
      previous ? { type: "updated", object: p, previous } : { type: "added", object: p },
    );
  }
  remove(p: CapacityPolicy) {
    this.#policies.delete(objectKey(p));
    this.loop?.policyEvent({ type: "deleted", object: p });
  }
}

/** Answers every target at once (or never, while `hang`), handing each on as it goes. */
class FakeReader implements CycleReader {
  readonly reads: string[][] = [];
  readonly forgotten: string[] = [];
  hang = false;
  constructor(readonly clock: OperatorClock) {}
  async read(targets: readonly CycleTarget[], _signal?: AbortSignal, options: CycleReadOptions = {}) {
    this.reads.push(targets.map((t) => t.key));
    await Promise.resolve();
    if (this.hang) return new Promise<Map<string, CycleReading>>(() => {});
    const out = new Map<string, CycleReading>();
    for (const t of targets) {
      const reading: CycleReading = { fetchedAt: this.clock.now(), target: { ok: true, ref: t.ref } };
      out.set(t.key, reading);
      options.onReady?.(t.key, reading);
    }
    return out;
  }
  forget(resourceId: string) {
    this.forgotten.push(resourceId);
  }
}

/** Leading reads that answer when the test resolves them. */
class FakeLeading implements LeadingSource {
  readonly pending = new Map<string, (o: LeadingObservation) => void>();
  readOne(t: { key: string }): Promise<LeadingObservation> {
    return new Promise((resolve) => this.pending.set(t.key, resolve));
  }
  forget() {}
}

/** Lets every settled promise run its continuations (the fakes answer at once). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

interface Rig {
  loop: PollLoop;
  clock: ReturnType<typeof virtualClock>;
  source: FakeSource;
  reader: FakeReader;
  leading: FakeLeading;
  passes: { key: string; reading: CycleReading | undefined }[];
  reports: PassReport[];
  /** Policies whose next pass throws. */
  failing: Set<string>;
  monotonic: { now: number };
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.loop.stop(0);
});

function rig(options: { lead?: boolean; pollCycleTimeoutMs?: number } = {}): Rig {
  const clock = virtualClock(T0);
  const source = new FakeSource();
  const reader = new FakeReader(clock);
  const leading = new FakeLeading();
  const passes: Rig["passes"] = [];
  const failing = new Set<string>();
  const monotonic = { now: 0 };
  const loop = new PollLoop(
    {
      policies: source,
      reader,
      leading,
      pass: async (p, reading): Promise<PassResult> => {
        passes.push({ key: objectKey(p), reading });
        if (failing.has(objectKey(p))) throw new Error("status write refused");
        return { requeueAfterMs: INTERVAL_MS, outcome: "steady" };
      },
      clock,
      monotonicNow: () => monotonic.now,
      metrics: new OperatorMetrics({ now: clock.now, processMetrics: false }),
      log: pino({ level: "silent" }),
      stop: new AbortController(),
    },
    { workers: 2, ...(options.pollCycleTimeoutMs ? { pollCycleTimeoutMs: options.pollCycleTimeoutMs } : {}) },
  );
  source.loop = loop;
  const reports: PassReport[] = [];
  loop.onPass((r) => reports.push(r));
  loop.start();
  if (options.lead !== false) loop.startLeading(new AbortController().signal);
  const r = { loop, clock, source, reader, leading, passes, reports, failing, monotonic };
  rigs.push(r);
  return r;
}

describe("PollLoop stepped on a virtual clock", () => {
  it("policies due together share one cycle; each pass puts its policy on the interval's grid", async () => {
    const r = rig();
    for (const n of ["alpha", "bravo", "charlie"]) r.source.put(policy(n));
    const first = r.loop.tick();
    expect(first.due).toEqual(["ns/alpha", "ns/bravo", "ns/charlie"]);
    expect(r.loop.record("ns/alpha")?.phase).toBe("reading");
    await settle();
    expect(r.reader.reads).toEqual([["ns/alpha", "ns/bravo", "ns/charlie"]]);
    expect(r.passes.map((p) => p.key).sort()).toEqual(["ns/alpha", "ns/bravo", "ns/charlie"]);
    expect(r.passes.every((p) => p.reading?.fetchedAt === T0)).toBe(true);
    const next = nextPollTime(T0, INTERVAL_MS);
    expect(r.loop.record("ns/alpha")).toMatchObject({ phase: "waiting", dueAt: next });

    // A second later nothing is due, and the plan says why.
    r.clock.advance(1000);
    r.monotonic.now += 1000;
    expect(r.loop.tick()).toEqual({
      due: [],
      skipped: ["ns/alpha", "ns/bravo", "ns/charlie"].map((key) => ({
        key,
        skip: { reason: "notDue", dueAt: next },
      })),
    });

    // At the grid point all three are due again, together.
    r.clock.advance(next - r.clock.now());
    r.monotonic.now += 1000;
    expect(r.loop.tick().due).toEqual(["ns/alpha", "ns/bravo", "ns/charlie"]);
    await settle();
    expect(r.reader.reads).toHaveLength(2);
    expect(r.passes).toHaveLength(6);
    expect(r.loop.record("ns/bravo")?.dueAt).toBe(next + INTERVAL_MS);
  });

  it("a failed pass backs off 5 s, then 10 s; a pass that succeeds goes back to the grid", async () => {
    const r = rig();
    r.source.put(policy("alpha"));
    r.failing.add("ns/alpha");
    r.loop.tick();
    await settle();
    expect(r.reports.at(-1)?.error).toBeInstanceOf(Error);
    expect(r.loop.record("ns/alpha")).toMatchObject({ phase: "backingOff", dueAt: T0 + 5_000 });
    r.clock.advance(4_999);
    r.monotonic.now += 1000;
    expect(r.loop.tick().skipped).toEqual([
      { key: "ns/alpha", skip: { reason: "backingOff", dueAt: T0 + 5_000 } },
    ]);
    r.clock.advance(1);
    expect(r.loop.tick().due).toEqual(["ns/alpha"]);
    await settle();
    expect(r.loop.record("ns/alpha")).toMatchObject({ phase: "backingOff", dueAt: T0 + 5_000 + 10_000 });
    r.failing.clear();
    r.clock.advance(10_000);
    r.monotonic.now += 1000;
    r.loop.tick();
    await settle();
    const readAt = T0 + 15_000;
    expect(r.loop.record("ns/alpha")).toMatchObject({
      phase: "waiting",
      dueAt: nextPollTime(readAt, INTERVAL_MS),
    });
  });

  it("a young cycle that has handed nothing over holds the policies due meanwhile, then lets them go", async () => {
    const r = rig({ pollCycleTimeoutMs: 100 });
    r.reader.hang = true;
    r.source.put(policy("alpha"));
    r.loop.tick();
    await settle();
    r.source.put(policy("bravo"));
    r.monotonic.now += 499;
    expect(r.loop.tick()).toEqual({
      due: [],
      skipped: [
        { key: "ns/alpha", skip: { reason: "held", by: "gathering" } },
        { key: "ns/bravo", skip: { reason: "held", by: "gathering" } },
      ],
    });
    r.monotonic.now += 1;
    const plan = r.loop.tick();
    expect(plan.due).toEqual(["ns/bravo"]);
    expect(plan.skipped).toEqual([{ key: "ns/alpha", skip: { reason: "reading" } }]);
    // Past the deadline and its grace the hung cycle hands its policy over as a failed read.
    await r.loop.cyclesSettled();
    await settle();
    const a = r.passes.find((p) => p.key === "ns/alpha");
    expect(a?.reading?.instanceError?.message).toBe(
      "Azure did not answer within the poll cycle deadline (0.1 s)",
    );
    expect(r.loop.azure.lastError).toBe("the poll cycle did not end within its deadline of 0.1 s");
  });

  it("a leading signal holds only its own policy's pass, which then gets the observation", async () => {
    const r = rig();
    r.source.put(policy("alpha", { leading: true }));
    r.source.put(policy("bravo"));
    r.loop.tick();
    await settle();
    expect(r.passes.map((p) => p.key)).toEqual(["ns/bravo"]);
    expect(r.loop.record("ns/alpha")?.phase).toBe("leading");
    r.monotonic.now += 1000;
    expect(r.loop.tick().skipped).toContainEqual({ key: "ns/alpha", skip: { reason: "leading" } });
    const observation = { readings: [] } as unknown as LeadingObservation;
    r.leading.pending.get("ns/alpha")?.(observation);
    await settle();
    expect(r.passes.map((p) => p.key)).toEqual(["ns/bravo", "ns/alpha"]);
    expect(r.passes[1]?.reading?.leading).toBe(observation);
  });

  it("a changed policy is due at once; an unchanged update is not", async () => {
    const r = rig();
    r.source.put(policy("alpha"));
    r.loop.tick();
    await settle();
    r.clock.advance(1000);
    r.source.put(policy("alpha"));
    r.monotonic.now += 1000;
    expect(r.loop.tick().due).toEqual([]);
    r.source.put(policy("alpha", { generation: 2 }));
    expect(r.loop.tick().due).toEqual(["ns/alpha"]);
  });

  it("a deleted policy is forgotten: no record, and its target's cached reads dropped", async () => {
    const r = rig();
    const a = policy("alpha");
    r.source.put(a);
    r.loop.tick();
    await settle();
    r.source.remove(a);
    expect(r.loop.record("ns/alpha")).toBeUndefined();
    expect(r.reader.forgotten).toEqual([resourceIdOf("alpha")]);
    r.monotonic.now += 1000;
    expect(r.loop.tick()).toEqual({ due: [], skipped: [] });
  });

  it("a younger policy naming an owned target is handed over refused, without an Azure read", async () => {
    const r = rig();
    r.source.put(policy("alpha", { created: "2025-03-01T00:00:00Z" }));
    const b = policy("bravo", { created: "2025-03-02T00:00:00Z" });
    r.source.put({
      ...b,
      spec: { ...b.spec, target: { service: "SignalR", resourceId: resourceIdOf("alpha") } },
    });
    r.loop.tick();
    await settle();
    expect(r.reader.reads).toEqual([["ns/alpha"]]);
    const refused = r.passes.find((p) => p.key === "ns/bravo")?.reading;
    expect(refused?.duplicate?.owner).toBe("ns/alpha");
  });

  it("while not leading nothing is read or passed; a new term polls every policy at once", async () => {
    const r = rig({ lead: false });
    r.source.put(policy("alpha"));
    expect(r.loop.tick().skipped).toEqual([{ key: "ns/alpha", skip: { reason: "held", by: "notLeading" } }]);
    await settle();
    expect(r.reader.reads).toEqual([]);
    r.clock.advance(7_000);
    r.loop.startLeading(new AbortController().signal);
    expect(r.loop.record("ns/alpha")?.dueAt).toBe(T0 + 7_000);
    expect(r.loop.tick().due).toEqual(["ns/alpha"]);
    await settle();
    expect(r.passes).toHaveLength(1);
  });
});
