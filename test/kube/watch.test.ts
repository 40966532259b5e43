import { RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CapacityPolicy, GROUP, PLURAL, VERSION } from "../../src/api/index.js";
import {
  GoneError,
  type KubeClients,
  type ListResult,
  mergePatchOptions,
  PolicyClient,
  policiesPath,
  type ResilientWatch,
  startResilientWatch,
  UnavailableError,
  type WatchEvent,
  type WatchStarter,
  watchPolicies,
} from "../../src/kube/index.js";
import { type ControlPlane, OPERATOR_USER, startControlPlane } from "../../src/localcluster/index.js";
import { recordFault } from "../reliability/record.js";
import {
  adminClients,
  clientsFor,
  controlPlane,
  createNamespace,
  createPolicy,
  ensureCrd,
  eventually,
} from "./support.js";

/** Wraps a Watch to count requests that are open (started, not yet ended or aborted by us). */
function countingWatch(inner: WatchStarter) {
  let open = 0;
  let max = 0;
  let started = 0;
  const starter: WatchStarter = {
    async watch(path, query, callback, done) {
      open++;
      started++;
      max = Math.max(max, open);
      let closed = false;
      const close = (): void => {
        if (!closed) {
          closed = true;
          open--;
        }
      };
      try {
        const controller = await inner.watch(path, query, callback, (err) => {
          close();
          done(err);
        });
        if (controller.signal.aborted) close();
        else controller.signal.addEventListener("abort", close, { once: true });
        return controller;
      } catch (err) {
        close();
        throw err;
      }
    },
  };
  return { starter, stats: () => ({ open, max, started }) };
}

function collector() {
  const events: WatchEvent<CapacityPolicy>[] = [];
  const names = (type: WatchEvent<CapacityPolicy>["type"]): string[] =>
    events.flatMap((e) => (e.type === type && e.type !== "synced" ? [e.object.metadata.name] : []));
  return { events, names, onEvent: (e: WatchEvent<CapacityPolicy>) => events.push(e) };
}

async function updateSpec(clients: KubeClients, ns: string, name: string, max: number): Promise<void> {
  await clients.customObjects.patchNamespacedCustomObject(
    {
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL,
      name,
      body: { spec: { units: { min: 1, max } } },
    },
    mergePatchOptions(),
  );
}

async function deletePolicy(clients: KubeClients, ns: string, name: string): Promise<void> {
  await clients.customObjects.deleteNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns,
    plural: PLURAL,
    name,
  });
}

describe("policy watch against the shared control plane", { timeout: 60_000 }, () => {
  let clients: KubeClients;
  let ns: string;
  const running: ResilientWatch<CapacityPolicy>[] = [];

  beforeAll(async () => {
    clients = adminClients();
    await ensureCrd();
    ns = await createNamespace(clients, "kube-watch");
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((w) => w.stop()));
  });

  it("lists, syncs, then sees add, update and delete, one request at a time", async () => {
    await createPolicy(clients, ns, "existing");
    const counting = countingWatch(clients.watch);
    const policies = new PolicyClient(clients);
    const seen = collector();
    const watch = startResilientWatch<CapacityPolicy>({
      path: policiesPath(ns),
      watch: counting.starter,
      list: () => policies.list(ns),
      onEvent: seen.onEvent,
    });
    running.push(watch);
    await watch.synced;
    expect(seen.events[0]).toMatchObject({ type: "added", object: { metadata: { name: "existing" } } });
    expect(seen.events[1]).toEqual({ type: "synced", initial: true, count: 1 });

    await eventually(() => expect(watch.health().connected).toBe(true));
    await createPolicy(clients, ns, "fresh");
    await eventually(() => expect(seen.names("added")).toContain("fresh"));
    await updateSpec(clients, ns, "fresh", 20);
    await eventually(() => expect(seen.names("updated")).toContain("fresh"));
    const updated = seen.events.find((e) => e.type === "updated");
    expect(updated?.type === "updated" && updated.previous.spec.units.max).toBe(10);
    expect(watch.get(`${ns}/fresh`)?.spec.units.max).toBe(20);
    await deletePolicy(clients, ns, "fresh");
    await eventually(() => expect(seen.names("deleted")).toEqual(["fresh"]));
    expect(watch.list().map((p) => p.metadata.name)).toEqual(["existing"]);

    const health = watch.health();
    expect(health).toMatchObject({
      running: true,
      connected: true,
      synced: true,
      lists: 1,
      consecutiveFailures: 0,
    });
    expect(health.lastEventTime).toBeInstanceOf(Date);
    await watch.stop();
    expect(watch.health()).toMatchObject({ running: false, connected: false });
    expect(counting.stats()).toMatchObject({ open: 0, max: 1 });
  });

  it("relists when the API server answers 410 Gone to a too-old resourceVersion", async () => {
    await createPolicy(clients, ns, "before-expiry");
    const policies = new PolicyClient(clients);
    const errors: Error[] = [];
    let lists = 0;
    const seen = collector();
    const watch = startResilientWatch<CapacityPolicy>({
      path: policiesPath(ns),
      watch: clients.watch,
      // The first list pretends to be ancient, so the watch from it is refused with 410 Expired.
      list: async (): Promise<ListResult<CapacityPolicy>> => {
        lists++;
        const list = await policies.list(ns);
        return lists === 1 ? { items: list.items, resourceVersion: "1" } : list;
      },
      onEvent: seen.onEvent,
      onError: (e) => errors.push(e),
    });
    running.push(watch);
    await eventually(() => expect(watch.health().lists).toBe(2));
    expect(errors[0]).toBeInstanceOf(GoneError);
    expect((errors[0] as GoneError).status).toBe(410);
    expect(
      seen.events.filter((e) => e.type === "synced").map((e) => e.type === "synced" && e.initial),
    ).toEqual([true, false]);
    // Still live after the relist.
    await eventually(() => expect(watch.health().connected).toBe(true));
    await createPolicy(clients, ns, "after-expiry");
    await eventually(() => expect(seen.names("added")).toContain("after-expiry"));
    await watch.stop();
    recordFault({
      id: "watch-410-gone",
      endpoint: "kube-apiserver",
      fault: "410 Gone (Expired) to the watch's resourceVersion",
      outcome: "one relist, then live again; later objects seen",
      test: "test/kube/watch.test.ts › relists when the API server answers 410 Gone",
      figures: { lists: watch.health().lists, errors: errors.length },
    });
  });

  it("has the server end each request after serverTimeoutSeconds and resumes without errors", async () => {
    const errors: Error[] = [];
    const watch = watchPolicies(clients, {
      namespace: ns,
      onEvent: () => undefined,
      onError: (e) => errors.push(e),
      serverTimeoutSeconds: 2,
    });
    running.push(watch);
    await watch.synced;
    await eventually(() => expect(watch.health().watches).toBeGreaterThanOrEqual(3), 15_000, 200);
    const health = watch.health();
    expect(health).toMatchObject({ lists: 1, consecutiveFailures: 0, silentRestarts: 0 });
    expect(errors).toEqual([]);
    expect(health.lastContactTime?.getTime()).toBeGreaterThan(health.lastSyncTime?.getTime() ?? 0);
    await watch.stop();
  });

  it("advances its resourceVersion from bookmarks when other namespaces change", async () => {
    const other = await createNamespace(clients, "kube-watch-other");
    const watch = watchPolicies(clients, {
      namespace: ns,
      onEvent: () => undefined,
      serverTimeoutSeconds: 4,
    });
    running.push(watch);
    await watch.synced;
    await eventually(() => expect(watch.health().connected).toBe(true));
    const startRv = Number(watch.health().resourceVersion);
    const created = await createPolicy(clients, other, "elsewhere");
    const createdRv = Number(created.metadata.resourceVersion);
    expect(createdRv).toBeGreaterThan(startRv);
    // The watch of `ns` gets no event for it, but a bookmark (~2 s before each request's end).
    await eventually(() => expect(watch.health().bookmarks).toBeGreaterThanOrEqual(1), 15_000, 100);
    expect(Number(watch.health().resourceVersion)).toBeGreaterThanOrEqual(createdRv);
    expect(watch.get(`${other}/elsewhere`)).toBeUndefined();
    await watch.stop();
  });

  it("restarts a watch that stays silent longer than the silence timeout", async () => {
    const seen = collector();
    const watch = watchPolicies(clients, {
      namespace: ns,
      onEvent: seen.onEvent,
      silenceTimeoutMs: 1_000,
      serverTimeoutSeconds: 20, // first bookmark only ~18 s in: the watch is silent until then
    });
    running.push(watch);
    await watch.synced;
    await eventually(() => expect(watch.health().silentRestarts).toBeGreaterThanOrEqual(2), 10_000, 100);
    expect(watch.health().lists).toBe(1);
    await eventually(() => expect(watch.health().connected).toBe(true));
    await createPolicy(clients, ns, "after-silence");
    await eventually(() => expect(seen.names("added")).toContain("after-silence"));
    await watch.stop();
    recordFault({
      id: "watch-silence",
      endpoint: "kube-apiserver",
      fault: "a watch that stays silent (no event, no bookmark) past the silence timeout (1 s here)",
      outcome: "the watch is restarted without a relist; later objects seen",
      test: "test/kube/watch.test.ts › restarts a watch that stays silent",
      figures: { silentRestarts: watch.health().silentRestarts, lists: watch.health().lists },
    });
  });

  it("retries with backoff while the collection is forbidden, and works once access is granted", async () => {
    // The operator identity has no RBAC until we grant it.
    const operator = clientsFor(controlPlane().kubeconfigOperator);
    const errors: Error[] = [];
    const watch = watchPolicies(operator, {
      namespace: ns,
      onEvent: () => undefined,
      onError: (e) => errors.push(e),
      backoff: { initialMs: 100, maxMs: 400 },
    });
    running.push(watch);
    await eventually(() => expect(errors.length).toBeGreaterThanOrEqual(2));
    expect(errors[0]).toMatchObject({ kind: "Forbidden", status: 403 });
    expect(watch.health().synced).toBe(false);

    const rbac = clients.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: "watch-policies" },
        rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ["get", "list", "watch"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: "watch-policies" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "watch-policies" },
        subjects: [{ kind: "User", name: OPERATOR_USER }],
      },
    });
    await watch.synced;
    await eventually(() => expect(watch.health().connected).toBe(true));
    await watch.stop();
  });
});

describe("policy watch across an API server restart", { timeout: 120_000 }, () => {
  let own: ControlPlane | undefined;

  afterAll(async () => {
    await own?.stop();
  }, 60_000);

  it("reconnects with backoff after restartApiServer() and keeps delivering events", async () => {
    own = await startControlPlane();
    await ensureCrd(own.kubeconfigAdmin);
    const clients = clientsFor(own.kubeconfigAdmin);
    const ns = await createNamespace(clients, "kube-restart");
    await createPolicy(clients, ns, "survivor");

    const counting = countingWatch(clients.watch);
    const policies = new PolicyClient(clients);
    const seen = collector();
    const errors: Error[] = [];
    const controller = new AbortController();
    const watch = startResilientWatch<CapacityPolicy>({
      path: policiesPath(),
      watch: counting.starter,
      list: () => policies.list(),
      onEvent: seen.onEvent,
      onError: (e) => errors.push(e),
      signal: controller.signal,
      backoff: { initialMs: 200, maxMs: 2_000 },
    });
    await watch.synced;
    expect(watch.get(`${ns}/survivor`)).toBeDefined();
    await eventually(() => expect(watch.health().connected).toBe(true));

    await own.restartApiServer();
    await createPolicy(clients, ns, "after-restart");
    await eventually(() => expect(seen.names("added")).toContain("after-restart"), 30_000, 100);
    await eventually(() => expect(watch.health().connected).toBe(true), 10_000);

    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors.some((e) => e instanceof UnavailableError || e instanceof GoneError)).toBe(true);
    expect(
      watch
        .list()
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(["after-restart", "survivor"]);
    expect(seen.names("deleted")).toEqual([]);

    controller.abort();
    await watch.done;
    expect(counting.stats()).toMatchObject({ open: 0, max: 1 });
  });
});
