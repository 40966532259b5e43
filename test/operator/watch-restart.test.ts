/**
 * The policy watch survives a restart of the API server: on a control plane of its own, the
 * kube-apiserver is restarted under a running operator, and a spec change made afterwards is
 * picked up by the same operator.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { KubeClients } from "../../src/kube/client.js";
import { type ControlPlane, startControlPlane } from "../../src/localcluster/index.js";
import { clientsFor, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import { type Harness, signalrId, startHarness } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  getPolicy,
  patchPolicy,
  policyManifest,
  requestCollector,
} from "./helpers.js";

let own: ControlPlane | undefined;
let h: Harness | undefined;

afterAll(async () => {
  await h?.stop();
  await own?.stop();
}, 60_000);

describe("operator across an API server restart", () => {
  it("resumes its watch without a restart and picks up a later spec change", async () => {
    own = await startControlPlane();
    await ensureCrd(own.kubeconfigAdmin);
    const kube: KubeClients = clientsFor(own.kubeconfigAdmin);
    const ns = await createNamespace(kube, "restart-api");
    const requests = requestCollector();
    h = await startHarness(kube, {
      operator: { namespaces: [ns] },
      emulator: { speed: 60, onRequest: requests.onRequest },
    });
    const harness = h;
    const id = signalrId("chat");
    harness.emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 2000 });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")?.status).toBe("True");
        expect(p.status?.observedGeneration).toBe(1);
      },
      60_000,
      500,
    );
    const operator = harness.operator;

    const before = harness.reports.length;
    const restartStarted = Date.now();
    await own.restartApiServer();
    const restartSeconds = (Date.now() - restartStarted) / 1000;
    // Passes during the restart could not write status: the operator saw the API server go away.
    expect(harness.reports.slice(before).some((r) => r.error !== undefined)).toBe(true);

    // A spec change after the restart: a floor of 20 units (and a ceiling of 30).
    await patchPolicy(kube, ns, "chat", { spec: { units: { min: 20, max: 30 } } });
    await eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 60_000, 200);
    const changed = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.observedGeneration).toBe(2);
        expect(p.status?.current?.units).toBe(20);
        expect(condition(p, "Ready")?.status).toBe("True");
        return p;
      },
      60_000,
      500,
    );
    expect(changed.status?.scaleEvents?.at(-1)).toMatchObject({ fromUnits: 10, toUnits: 20 });
    expect(harness.operator).toBe(operator);
    expect(operator.policies().find((p) => p.metadata.name === "chat")?.spec.units).toEqual({
      min: 20,
      max: 30,
    });
    expect(operator.readiness()["watch"]?.()).toEqual({ ok: true });
    recordFault({
      id: "kube-apiserver-restart",
      endpoint: "kube-apiserver",
      fault: "kube-apiserver stopped and started again on the same port and data",
      outcome:
        "the watch resumes without an operator restart; a later spec change is applied with one ARM update",
      test: "test/operator/watch-restart.test.ts › resumes its watch",
      figures: { restartRealSeconds: restartSeconds, armWritesAfter: 1, operatorRestarts: 0 },
    });
  });
});
