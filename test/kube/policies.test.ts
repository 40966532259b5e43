import { beforeAll, describe, expect, it } from "vitest";
import {
  ConflictError,
  ForbiddenError,
  type KubeClients,
  NotFoundError,
  PolicyClient,
  type StatusPatch,
} from "../../src/kube/index.js";
import {
  adminClients,
  clientsFor,
  controlPlane,
  createNamespace,
  createPolicy,
  ensureCrd,
  kubectl,
} from "./support.js";

let clients: KubeClients;
let policies: PolicyClient;
let ns: string;

beforeAll(async () => {
  clients = adminClients();
  policies = new PolicyClient(clients);
  await ensureCrd();
  ns = await createNamespace(clients, "kube-policies");
}, 120_000);

const readyStatus = (message: string): StatusPatch => ({
  observedGeneration: 1,
  current: { sku: "Premium_P1", units: 2 },
  conditions: [
    {
      type: "Ready",
      status: "True",
      lastTransitionTime: "2025-01-01T00:00:00Z",
      reason: "Reconciled",
      message,
    },
  ],
});

describe("PolicyClient", { timeout: 60_000 }, () => {
  it("lists in a namespace and across namespaces, and gets one", async () => {
    await createPolicy(clients, ns, "alpha");
    await createPolicy(clients, ns, "beta");
    const inNs = await policies.list(ns);
    expect(inNs.items.map((p) => p.metadata.name).sort()).toEqual(["alpha", "beta"]);
    expect(inNs.resourceVersion).toMatch(/^\d+$/);
    const all = await policies.list();
    expect(all.items.filter((p) => p.metadata.namespace === ns)).toHaveLength(2);
    const paged = await policies.list(ns, { pageSize: 1 });
    expect(paged.items).toHaveLength(2);

    const alpha = await policies.get(ns, "alpha");
    expect(alpha.spec.target.service).toBe("SignalR");
    expect(alpha.spec.units).toEqual({ min: 1, max: 10 });
    // CRD defaults are applied by the API server.
    expect(alpha.spec.mode).toBe("Auto");
  });

  it("merge-patches status through the status subresource, leaving spec and generation alone", async () => {
    const before = await createPolicy(clients, ns, "status-me");
    const patched = await policies.patchStatus(ns, "status-me", readyStatus("first"));
    expect(patched.status?.current).toEqual({ sku: "Premium_P1", units: 2 });
    expect(patched.status?.conditions?.[0]?.message).toBe("first");
    expect(patched.spec).toEqual(before.spec);
    expect(patched.metadata.generation).toBe(before.metadata.generation);

    // A merge patch keeps other status fields; null removes one.
    const merged = await policies.patchStatus(ns, "status-me", { desired: { sku: "Premium_P1", units: 3 } });
    expect(merged.status?.current).toEqual({ sku: "Premium_P1", units: 2 });
    expect(merged.status?.desired?.units).toBe(3);
    const removed = await policies.patchStatus(ns, "status-me", { desired: null });
    expect(removed.status?.desired).toBeUndefined();

    // kubectl sees the status.
    const out = await kubectl([
      "get",
      "capol",
      "status-me",
      "-n",
      ns,
      "-o",
      "jsonpath={.status.current.units}",
    ]);
    expect(out).toBe("2");
  });

  it("writes conditionally with a resourceVersion: current succeeds, stale gets ConflictError", async () => {
    await createPolicy(clients, ns, "guarded");
    const read = await policies.get(ns, "guarded");
    const rv = read.metadata.resourceVersion;
    expect(rv).toBeDefined();
    const ok = await policies.patchStatus(ns, "guarded", readyStatus("fresh"), rv);
    expect(ok.metadata.resourceVersion).not.toBe(rv);

    const stale = await policies
      .patchStatus(ns, "guarded", readyStatus("stale"), rv)
      .catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(ConflictError);
    expect((stale as ConflictError).status).toBe(409);
    expect((await policies.get(ns, "guarded")).status?.conditions?.[0]?.message).toBe("fresh");
  });

  it("rejects a status the CRD schema refuses with a typed error", async () => {
    await createPolicy(clients, ns, "invalid-status");
    const err = await policies
      .patchStatus(ns, "invalid-status", { current: { sku: "Premium_P1", units: -5 } })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "Invalid", status: 422 });
  });

  it("maps 404 and 403 to NotFoundError and ForbiddenError", async () => {
    const missing = await policies.get(ns, "nope").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).status).toBe(404);
    const patchMissing = await policies.patchStatus(ns, "nope", {}).catch((e: unknown) => e);
    expect(patchMissing).toBeInstanceOf(NotFoundError);

    // The operator identity has no RBAC in the local control plane unless granted.
    const unprivileged = new PolicyClient(clientsFor(controlPlane().kubeconfigOperator));
    const denied = await unprivileged.list(ns).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(ForbiddenError);
    expect((denied as ForbiddenError).status).toBe(403);
  });
});
