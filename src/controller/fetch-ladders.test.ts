/**
 * The poll cycle's unit ladders: `listSkus` once per instance, in the background (the cycle never
 * waits for it), handed to the policy from the next cycle on; re-read every 6 hours — counting an
 * answer stored in status, so a restart reads none again — and once after an update was not
 * applied; a failed read keeps the last answer and is not tried again for 15 minutes; never a read
 * per pass.
 */
import { describe, expect, it } from "vitest";
import { type AllowedUnits, type AzureAdapters, TransientError } from "../azure/index.js";
import { DEFAULT_LADDERS } from "../capacity/skus.js";
import { CycleFetcher, type CycleTarget, LADDER_REFRESH_MS, LADDER_RETRY_MS } from "./fetch.js";
import { cycleTarget, instanceState, resourceIdOf, T0 } from "./testing.js";

const POLL = 30_000;
const id = resourceIdOf;
const OLD_LADDER = [1, 2, 5, 10, 20, 50, 100];
const target = (name: string, ladder?: CycleTarget["ladder"]) => cycleTarget(name, ladder ? { ladder } : {});

/** Adapters whose `listSkus` answers the old P1 ladder (or fails while `failing`), counting calls. */
function adapters(names: readonly string[]) {
  const calls: string[] = [];
  const state: { failing: boolean; gate?: Promise<void> } = { failing: false };
  const azure = {
    instances: {
      listBySubscription: async () => names.map((n) => instanceState(id(n))),
      listSkus: async (resourceId: string): Promise<AllowedUnits> => {
        calls.push(resourceId.split("/").at(-1) ?? "");
        await state.gate;
        if (state.failing) throw new TransientError("listSkus: 503", { operation: "instances.listSkus" });
        return {
          ladders: { ...DEFAULT_LADDERS, Premium_P1: OLD_LADDER },
          fromService: ["Premium_P1"],
          skus: [],
        };
      },
    },
    metrics: {
      read: async () => ({ samples: new Map(names.map((n) => [id(n), []])), failures: [], calls: 1 }),
    },
    autoscaleSettings: { findFor: async () => new Map() },
    history: { want: () => {}, get: () => undefined, due: () => false, forget: () => {} },
  } as unknown as AzureAdapters;
  return { azure, calls, state };
}

describe("CycleFetcher: unit ladders", () => {
  it("reads each instance's ladders once, hands them out, and reads again only after 6 hours", async () => {
    const { azure, calls, state } = adapters(["hub-a", "hub-b"]);
    let now = T0;
    const fetcher = new CycleFetcher(azure, { now: () => now });
    const targets = [target("hub-a"), target("hub-b")];
    let release = () => {};
    state.gate = new Promise((go) => {
      release = go;
    });
    // listSkus hangs: the cycle does not wait for it.
    const first = await fetcher.read(targets);
    expect(first.get("ns/hub-a")?.ladder).toBeUndefined();
    expect(first.get("ns/hub-a")?.samples).toEqual([]);
    release();
    await fetcher.laddersSettled();
    expect(calls.sort()).toEqual(["hub-a", "hub-b"]);
    // The next cycle has them.
    now += POLL;
    const second = await fetcher.read(targets);
    expect(second.get("ns/hub-a")?.ladder).toEqual({
      service: { Premium_P1: OLD_LADDER },
      readAt: new Date(T0).toISOString(),
    });
    // 6 hours of passes: no other read.
    for (; now < T0 + LADDER_REFRESH_MS - POLL; now += POLL) await fetcher.read(targets);
    await fetcher.laddersSettled();
    expect(calls).toHaveLength(2);
    now = T0 + LADDER_REFRESH_MS;
    await fetcher.read(targets);
    await fetcher.laddersSettled();
    expect(calls).toHaveLength(4);
  });

  it("after a restart, an answer stored in status counts: no read until it is 6 hours old", async () => {
    const { azure, calls } = adapters(["hub-a"]);
    let now = T0;
    const fetcher = new CycleFetcher(azure, { now: () => now });
    const stored = target("hub-a", { readAtMs: T0 - 3_600_000 });
    await fetcher.read([stored]);
    await fetcher.laddersSettled();
    expect(calls).toEqual([]);
    now = T0 + 5 * 3_600_000;
    await fetcher.read([stored]);
    await fetcher.laddersSettled();
    expect(calls).toEqual(["hub-a"]);
  });

  it("reads again once after an update was found not applied", async () => {
    const { azure, calls } = adapters(["hub-a"]);
    let now = T0;
    const fetcher = new CycleFetcher(azure, { now: () => now });
    await fetcher.read([target("hub-a")]);
    await fetcher.laddersSettled();
    now += 10 * POLL;
    const wanted = target("hub-a", { readAtMs: T0, wantedAfterMs: now - POLL });
    await fetcher.read([wanted]);
    await fetcher.laddersSettled();
    expect(calls).toEqual(["hub-a", "hub-a"]);
    now += POLL;
    await fetcher.read([wanted]);
    await fetcher.laddersSettled();
    expect(calls).toHaveLength(2);
  });

  it("a failed read keeps the last answer, never fails the cycle, and is tried again after 15 minutes", async () => {
    const { azure, calls, state } = adapters(["hub-a"]);
    let now = T0;
    const fetcher = new CycleFetcher(azure, { now: () => now });
    await fetcher.read([target("hub-a")]);
    await fetcher.laddersSettled();
    state.failing = true;
    now = T0 + LADDER_REFRESH_MS;
    const during = await fetcher.read([target("hub-a")]);
    await fetcher.laddersSettled();
    expect(calls).toHaveLength(2);
    expect(during.get("ns/hub-a")?.metricsError).toBeUndefined();
    for (let t = now; t < T0 + LADDER_REFRESH_MS + LADDER_RETRY_MS; t += POLL) {
      now = t;
      const r = await fetcher.read([target("hub-a")]);
      expect(r.get("ns/hub-a")?.ladder?.service.Premium_P1).toEqual(OLD_LADDER);
    }
    await fetcher.laddersSettled();
    expect(calls).toHaveLength(2);
    now = T0 + LADDER_REFRESH_MS + LADDER_RETRY_MS;
    await fetcher.read([target("hub-a")]);
    await fetcher.laddersSettled();
    expect(calls).toHaveLength(3);
  });

  it("reads no ladder for an instance the cycle could not read", async () => {
    const { azure, calls } = adapters([]);
    (azure.instances as unknown as { get: () => Promise<never> }).get = async () => {
      throw new TransientError("get: 503", { operation: "instances.get" });
    };
    const fetcher = new CycleFetcher(azure, { now: () => T0 });
    await fetcher.read([target("gone")]);
    await fetcher.laddersSettled();
    expect(calls).toEqual([]);
  });
});
