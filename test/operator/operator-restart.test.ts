/**
 * An operator restart during an ARM update: the update in flight is kept in status.operation, so
 * a new operator waits for it and finishes it — exactly one PATCH reaches Azure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { adminClients, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import { type Harness, signalrId, startHarness } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  eventsFor,
  getPolicy,
  policyManifest,
  requestCollector,
} from "./helpers.js";

const HOUR = 3_600_000;

let kube: KubeClients;
let ns: string;
let emulator: RunningEmulator;
const harnesses: Harness[] = [];
const requests = requestCollector();

beforeAll(async () => {
  await ensureCrd();
  kube = adminClients();
  ns = await createNamespace(kube, "op-restart");
  emulator = await startEmulator({
    speed: 60,
    scaleDurationMs: 120_000,
    ingestionDelayMs: 120_000,
    noiseAmplitude: 0,
    armRateLimit: false,
    onRequest: requests.onRequest,
  });
});

afterAll(async () => {
  for (const h of harnesses) await h.stop();
  await emulator?.stop();
});

async function operator(): Promise<Harness> {
  const h = await startHarness(kube, { operator: { namespaces: [ns] }, emulatorInstance: emulator });
  harnesses.push(h);
  return h;
}

describe("operator restart during an ARM update", () => {
  it("resumes the update in flight without sending a second one", async () => {
    const id = signalrId("chat");
    emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 2000 });
    const first = await operator();
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    await eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      500,
    );

    // A long update (an hour of virtual time), started by the first operator.
    emulator.control.setTiming({ scaleDurationMs: HOUR });
    emulator.control.setDemand(id, { connections: 9000 });
    await eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 60_000, 200);
    const started = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.operation?.to).toEqual({ sku: "Premium_P1", units: 20 });
        return p;
      },
      30_000,
      100,
    );
    expect(emulator.control.instance(id)?.provisioningState).toBe("Updating");
    expect(started.status?.operation?.from).toEqual({ sku: "Premium_P1", units: 10 });

    // The first operator goes away mid-update; a new one starts from the policies' status.
    await first.stop();
    harnesses.splice(harnesses.indexOf(first), 1);
    expect(emulator.control.instance(id)?.provisioningState).toBe("Updating");
    const second = await operator();

    // It sees the update running and waits: several passes, no new PATCH.
    await eventually(
      () =>
        expect(
          second.reports.filter((r) => r.result?.outcome === "inProgress").length,
        ).toBeGreaterThanOrEqual(3),
      30_000,
      200,
    );
    const waiting = await getPolicy(kube, ns, "chat");
    expect(waiting.status?.operation?.to).toEqual({ sku: "Premium_P1", units: 20 });
    expect(waiting.status?.operation?.startedAt).toBe(started.status?.operation?.startedAt);
    expect(condition(waiting, "AbleToScale")).toMatchObject({ status: "False", reason: "ScaleInProgress" });
    expect(armWritesFor(requests.all, id)).toHaveLength(1);

    // The update finishes (the clock jumps past it); the new operator records the result.
    emulator.control.advance(HOUR);
    const done = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.operation).toBeUndefined();
        expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 20 });
        return p;
      },
      30_000,
      200,
    );
    expect(emulator.control.instance(id)).toMatchObject({ units: 20, provisioningState: "Succeeded" });
    expect(done.status?.scaleEvents?.at(-1)).toMatchObject({ fromUnits: 10, toUnits: 20 });
    const events = await eventsFor(kube, ns, "chat");
    expect(events.filter((e) => e.reason === "ScalingOut")).toHaveLength(1);
    expect(events.some((e) => e.reason === "ScaleSucceeded")).toBe(true);

    // More passes on the new capacity: still that one PATCH.
    const seen = second.reports.length;
    await eventually(() => expect(second.reports.length).toBeGreaterThanOrEqual(seen + 4), 30_000, 200);
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    expect(requests.all.filter((r) => r.kind === "armWrite")).toHaveLength(1);
    expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True");
  });
});
