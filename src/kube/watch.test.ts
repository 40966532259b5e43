import { describe, expect, it } from "vitest";
import { GoneError, UnavailableError } from "./errors.js";
import {
  isWatchReady,
  type KubeObject,
  type ListResult,
  startResilientWatch,
  type WatchEvent,
  type WatchPhase,
  type WatchStarter,
} from "./watch.js";

interface Obj extends KubeObject {
  metadata: { name: string; namespace: string; resourceVersion: string };
  data?: string;
}

const obj = (name: string, rv: string, data?: string): Obj => ({
  metadata: { name, namespace: "ns", resourceVersion: rv },
  ...(data === undefined ? {} : { data }),
});

type Callback = (phase: string, object: unknown) => void;

class FakeRequest {
  readonly controller = new AbortController();
  open = true;
  constructor(
    readonly query: Record<string, string | number | boolean | undefined>,
    private readonly callback: Callback,
    private readonly doneCallback: (err: unknown) => void,
    private readonly onEnd: () => void,
  ) {
    this.controller.signal.addEventListener("abort", () =>
      this.end(new DOMException("aborted", "AbortError")),
    );
  }
  send(phase: string, object: unknown): void {
    if (this.open) this.callback(phase, object);
  }
  end(err: unknown = null): void {
    if (!this.open) return;
    this.open = false;
    this.onEnd();
    this.doneCallback(err);
  }
}

class FakeWatch implements WatchStarter {
  readonly requests: FakeRequest[] = [];
  openNow = 0;
  maxOpen = 0;
  /** When set, the next watch() call fails this way (before any response). */
  failNext: unknown[] = [];

  async watch(
    _path: string,
    query: Record<string, string | number | boolean | undefined>,
    callback: Callback,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    this.openNow++;
    this.maxOpen = Math.max(this.maxOpen, this.openNow);
    const request = new FakeRequest(query, callback, done, () => this.openNow--);
    this.requests.push(request);
    const failure = this.failNext.shift();
    if (failure !== undefined) request.end(failure);
    return request.controller;
  }

  last(): FakeRequest {
    const r = this.requests.at(-1);
    if (r === undefined) throw new Error("no request");
    return r;
  }
}

async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

function setup(lists: ListResult<Obj>[], extra: { silenceTimeoutMs?: number } = {}) {
  const fake = new FakeWatch();
  const events: WatchEvent<Obj>[] = [];
  const errors: { error: Error; phase: WatchPhase; retryInMs: number }[] = [];
  const controller = new AbortController();
  let listCalls = 0;
  const watch = startResilientWatch<Obj>({
    path: "/apis/x/v1/things",
    watch: fake,
    list: async () => {
      const result = lists[Math.min(listCalls, lists.length - 1)];
      listCalls++;
      if (result === undefined) throw new Error("no list");
      return result;
    },
    onEvent: (e) => events.push(e),
    onError: (error, phase, retryInMs) => errors.push({ error, phase, retryInMs }),
    signal: controller.signal,
    backoff: { initialMs: 10, maxMs: 40, factor: 2, jitter: 0.5 },
    random: () => 0,
    ...extra,
  });
  return { fake, events, errors, controller, watch, listCalls: () => listCalls };
}

describe("resilient watch", () => {
  it("lists, emits added + synced, then watches from the list's resourceVersion with bookmarks", async () => {
    const t = setup([{ items: [obj("a", "5"), obj("b", "6")], resourceVersion: "10" }]);
    await t.watch.synced;
    expect(t.events.map((e) => e.type)).toEqual(["added", "added", "synced"]);
    expect(t.events[2]).toEqual({ type: "synced", initial: true, count: 2 });
    await until(() => t.fake.requests.length === 1);
    expect(t.fake.last().query).toMatchObject({ resourceVersion: "10", allowWatchBookmarks: true });
    t.fake.last().send("MODIFIED", obj("a", "11", "x"));
    t.fake.last().send("ADDED", obj("c", "12"));
    t.fake.last().send("DELETED", obj("b", "13"));
    expect(t.events.slice(3).map((e) => e.type)).toEqual(["updated", "added", "deleted"]);
    expect(t.watch.list().map((o) => o.metadata?.name)).toEqual(["a", "c"]);
    expect(t.watch.health()).toMatchObject({ connected: true, synced: true, resourceVersion: "13" });
    await t.watch.stop();
    expect(t.watch.health()).toMatchObject({ running: false, connected: false });
    expect(t.fake.openNow).toBe(0);
  });

  it("re-watches from the last bookmark when the server ends the request", async () => {
    const t = setup([{ items: [], resourceVersion: "10" }]);
    await until(() => t.fake.requests.length === 1);
    t.fake.last().send("BOOKMARK", { metadata: { resourceVersion: "42" } });
    t.fake.last().end(null);
    await until(() => t.fake.requests.length === 2);
    expect(t.fake.last().query["resourceVersion"]).toBe("42");
    expect(t.listCalls()).toBe(1);
    expect(t.errors).toEqual([]);
    expect(t.watch.health().bookmarks).toBe(1);
    await t.watch.stop();
  });

  it("reports readiness from synced, running and recent contact", async () => {
    let clock = 1_000;
    const w = startResilientWatch<Obj>({
      path: "/x",
      watch: new FakeWatch(),
      list: async () => ({ items: [], resourceVersion: "1" }),
      onEvent: () => undefined,
      now: () => new Date(clock),
    });
    expect(isWatchReady(w.health(), new Date(clock), 50_000)).toBe(false);
    await w.synced;
    expect(isWatchReady(w.health(), new Date(clock), 50_000)).toBe(true);
    clock += 60_000;
    expect(isWatchReady(w.health(), new Date(clock), 50_000)).toBe(false);
    await w.stop();
    expect(isWatchReady(w.health(), new Date(1_000), 50_000)).toBe(false);
  });

  it("treats a server-ended request as healthy unless it ends at once without events", async () => {
    let clock = 0;
    const fake = new FakeWatch();
    const errors: number[] = [];
    const w = startResilientWatch<Obj>({
      path: "/x",
      watch: fake,
      list: async () => ({ items: [], resourceVersion: "3" }),
      onEvent: () => undefined,
      onError: (_e, _p, retry) => errors.push(retry),
      now: () => new Date(clock),
      backoff: { initialMs: 10, maxMs: 40, factor: 2, jitter: 0 },
    });
    await until(() => fake.requests.length === 1);
    clock += 25_000; // the server's timeoutSeconds elapsed, nothing happened
    fake.last().end(null);
    await until(() => fake.requests.length === 2);
    expect(errors).toEqual([]);
    expect(w.health().lastContactTime?.getTime()).toBe(25_000);
    expect(w.health().lastEventTime?.getTime()).toBe(0); // the list
    fake.last().end(null); // ended at once, with nothing: a failure, backed off
    await until(() => fake.requests.length === 3);
    expect(errors).toEqual([10]);
    // client-node's 30 s inactivity abort is a silent restart, not a failure.
    fake.last().end(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    await until(() => fake.requests.length === 4);
    expect(w.health()).toMatchObject({ silentRestarts: 1, lists: 1 });
    await w.stop();
  });

  it("relists on a 410 ERROR event and reconciles the store with added/updated/deleted", async () => {
    const t = setup([
      { items: [obj("a", "5"), obj("b", "6")], resourceVersion: "10" },
      { items: [obj("a", "20", "changed"), obj("c", "21")], resourceVersion: "22" },
    ]);
    await until(() => t.fake.requests.length === 1);
    const first = t.fake.last();
    first.send("ERROR", {
      kind: "Status",
      status: "Failure",
      code: 410,
      reason: "Expired",
      message: "too old resource version: 10 (20)",
    });
    await until(() => t.fake.requests.length === 2);
    // The expired request was aborted before the next one started; never two at once.
    expect(first.open).toBe(false);
    expect(t.fake.maxOpen).toBe(1);
    expect(t.listCalls()).toBe(2);
    expect(t.fake.last().query["resourceVersion"]).toBe("22");
    const afterExpiry = t.events.slice(3);
    expect(
      afterExpiry.map((e) =>
        e.type === "synced" ? `synced:${e.initial}` : `${e.type}:${e.object.metadata.name}`,
      ),
    ).toEqual(["updated:a", "added:c", "deleted:b", "synced:false"]);
    expect(t.errors[0]?.error).toBeInstanceOf(GoneError);
    expect(t.watch.health().lists).toBe(2);
    await t.watch.stop();
  });

  it("restarts a silent watch (no events, no bookmarks) after the silence timeout", async () => {
    const t = setup([{ items: [], resourceVersion: "7" }], { silenceTimeoutMs: 80 });
    await until(() => t.fake.requests.length === 1);
    const first = t.fake.last();
    await until(() => t.fake.requests.length === 2, 3000);
    expect(first.open).toBe(false);
    expect(t.fake.maxOpen).toBe(1);
    expect(t.fake.last().query["resourceVersion"]).toBe("7");
    expect(t.watch.health().silentRestarts).toBe(1);
    expect(t.listCalls()).toBe(1);
    await t.watch.stop();
  });

  it("backs off exponentially with jitter on errors, resumes without relisting, and resets after success", async () => {
    const t = setup([{ items: [], resourceVersion: "7" }]);
    const refused = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    t.fake.failNext.push(refused, refused, refused, refused);
    await until(() => t.fake.requests.length === 5);
    expect(t.errors.map((e) => e.retryInMs)).toEqual([10, 20, 40, 40]);
    expect(t.errors.every((e) => e.error instanceof UnavailableError)).toBe(true);
    expect(t.listCalls()).toBe(1);
    expect(t.fake.last().query["resourceVersion"]).toBe("7");
    t.fake.last().send("MODIFIED", obj("a", "8"));
    t.fake.last().end(null);
    await until(() => t.fake.requests.length === 6);
    expect(t.watch.health().consecutiveFailures).toBe(0);
    await t.watch.stop();
  });

  it("relists after a non-transient watch error (e.g. 403)", async () => {
    const t = setup([{ items: [], resourceVersion: "7" }]);
    t.fake.failNext.push(Object.assign(new Error("Forbidden"), { statusCode: 403 }));
    await until(() => t.fake.requests.length === 2);
    expect(t.listCalls()).toBe(2);
    await t.watch.stop();
  });

  it("retries a failing list with backoff until it succeeds", async () => {
    const fake = new FakeWatch();
    let calls = 0;
    const errors: number[] = [];
    const w = startResilientWatch<Obj>({
      path: "/x",
      watch: fake,
      list: async () => {
        calls++;
        if (calls < 3) throw Object.assign(new Error("Service Unavailable"), { code: 503, body: "{}" });
        return { items: [obj("a", "1")], resourceVersion: "3" };
      },
      onEvent: () => undefined,
      onError: (_e, _p, retry) => errors.push(retry),
      backoff: { initialMs: 5, maxMs: 100, factor: 2, jitter: 0 },
    });
    await w.synced;
    expect(calls).toBe(3);
    expect(errors).toEqual([5, 10]);
    await w.stop();
  });

  it("reports a throwing handler and keeps going", async () => {
    const fake = new FakeWatch();
    const phases: WatchPhase[] = [];
    const w = startResilientWatch<Obj>({
      path: "/x",
      watch: fake,
      list: async () => ({ items: [obj("a", "1")], resourceVersion: "3" }),
      onEvent: () => {
        throw new Error("boom");
      },
      onError: (_e, phase) => phases.push(phase),
    });
    await w.synced;
    await until(() => fake.requests.length === 1);
    expect(phases).toContain("handler");
    expect(w.health().lastError).toBeUndefined();
    await w.stop();
  });

  it("stops cleanly when the signal is aborted while backing off", async () => {
    const t = setup([{ items: [], resourceVersion: "7" }]);
    const never = Object.assign(new Error("Service Unavailable"), { statusCode: 503 });
    t.fake.failNext.push(never);
    await until(() => t.errors.length === 1);
    t.controller.abort();
    await t.watch.done;
    expect(t.watch.health().running).toBe(false);
    expect(t.fake.openNow).toBe(0);
  });
});
