/**
 * The operator against the stricter ARM answers of the emulator's control API
 * (`/_emulator/timing { readAfterWriteLagSeconds }`, instance `ladders` with
 * `ladderEnforcement`, `/_emulator/quotas`, `/_emulator/locks`, `/_emulator/policies`, the fault
 * kinds `longUpdate` and `cancelUpdate`), driven over HTTPS as a user of `signalr-autoscaler
 * emulator` would:
 * - a GET right after the 202 that still shows the old size with Succeeded is not "not applied";
 * - with a ladder the service enforces (1, 2, 5, 10, 20, 50, 100), refusing or ignoring other
 *   counts, the operator keeps scaling, on that ladder;
 * - a quota, a lock and an Azure Policy deny refuse the PATCH: Ready=False UpdateRefused,
 *   ScalingLimited naming what refused it;
 * - an update that runs past its deadline stalls the policy until it ends; a canceled one is an
 *   update that did not take.
 * ARM writes are counted from the emulator's request log.
 */
import { request } from "node:https";
import { describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import { type Harness, operatorPerTest, SUB, signalrId } from "./harness.js";
import { armWritesFor, condition, createPolicy, eventsFor, getPolicy, policyManifest } from "./helpers.js";

const MIN = 60_000;
const OLD_LADDER = [1, 2, 5, 10, 20, 50, 100];
const suite = operatorPerTest({ stepped: true });
const EMULATOR = {
  speed: 60,
  scaleDurationMs: 120_000,
  ingestionDelayMs: 120_000,
  noiseAmplitude: 0,
  armRateLimit: false,
};

/** POSTs `body` to the emulator's control API (`/_emulator/<path>`); throws unless 2xx. */
function control(emulator: RunningEmulator, path: string, body: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${emulator.controlEndpoint}/${path}`,
      { method: "POST", ca: emulator.caPem, headers: { "content-type": "application/json" }, timeout: 5_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) reject(new Error(`POST /_emulator/${path}: ${status} ${text}`));
          else resolve(text ? JSON.parse(text) : undefined);
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** The policy `chat` on P1 × 10 (10–100 units), once it is Ready. */
async function readyPolicy(
  harness: Harness,
  kube: Parameters<typeof createPolicy>[0],
  ns: string,
  id: string,
) {
  await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 100 } }));
  await harness.eventually(
    async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
    60_000,
    200,
  );
}

describe("read after write", () => {
  it("the old size with Succeeded for 40 s after the 202: still in flight, one ARM write, no ScaleNotApplied", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("raw-lag", EMULATOR);
    await control(harness.emulator, "timing", { readAfterWriteLagSeconds: 40 });
    await readyPolicy(harness, kube, ns, id);
    harness.emulator.control.setDemand(id, { connections: 9000 });
    const done = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBe(20);
        return p;
      },
      60_000,
      200,
    );
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    expect(done.status?.unappliedUpdates).toBeUndefined();
    expect(done.status?.unitLadders?.excluded).toBeUndefined();
    expect((await eventsFor(kube, ns, "chat")).some((e) => e.reason === "ScaleNotApplied")).toBe(false);
  });
});

describe.each(["refuse", "ignore"] as const)("a ladder the service enforces (%s)", (enforcement) => {
  it("the operator keeps scaling, on the service's ladder", async () => {
    const { kube, ns, requests, harness } = await suite.start(`ladder-${enforcement}`, EMULATOR);
    const id = signalrId("ladder-hub");
    await control(harness.emulator, "instances", {
      resourceId: id,
      sku: "Premium_P1",
      units: 20,
      connections: 17_000,
      ladders: { Premium_P1: OLD_LADDER },
      ladderEnforcement: enforcement,
    });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 1, max: 100 } }));
    // 17,000 connections at 80 % of 1,000 per unit: 21.25 units → 30 on the documented ladder, 50 here.
    const scaled = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBe(50);
        expect(condition(p, "Ready")?.status).toBe("True");
        return p;
      },
      90_000,
      200,
    );
    expect(harness.emulator.control.instance(id)).toMatchObject({
      units: 50,
      provisioningState: "Succeeded",
    });
    expect(armWritesFor(requests.all, id).length).toBeLessThanOrEqual(2);
    expect(scaled.status?.unitLadders?.source).toBe("Service");
    expect(scaled.status?.unitLadders?.service?.find((s) => s.sku === "Premium_P1")?.units).toEqual(
      OLD_LADDER,
    );
    expect(scaled.status?.lastReasons).toContain("UnitLadder");
  });
});

const REFUSALS = [
  {
    name: "the subscription's unit quota",
    setup: (e: RunningEmulator) =>
      control(e, "quotas", { subscriptionId: SUB, region: "westeurope", units: 15 }),
    refusedBy: "Quota",
    limited: "QuotaExceeded",
  },
  {
    name: "a ReadOnly lock",
    setup: (e: RunningEmulator) => control(e, "locks", { scope: signalrId("chat"), level: "ReadOnly" }),
    refusedBy: "Lock",
    limited: "ScopeLocked",
  },
  {
    name: "an Azure Policy deny",
    setup: (e: RunningEmulator) => control(e, "policies", { name: "max-15-units", deny: { maxUnits: 15 } }),
    refusedBy: "Policy",
    limited: "RequestDisallowedByPolicy",
  },
] as const;

describe.each(REFUSALS)("a PATCH refused by $name", (c) => {
  it(`Ready=False UpdateRefused, Stalled, ScalingLimited=${c.limited}; one ARM write until the backoff ends`, async () => {
    const { kube, ns, id, requests, harness } = await suite.start(
      `contract-${c.refusedBy.toLowerCase()}`,
      EMULATOR,
    );
    await c.setup(harness.emulator);
    await readyPolicy(harness, kube, ns, id);
    harness.emulator.control.setDemand(id, { connections: 9000 });
    const held = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "UpdateRefused" });
        return p;
      },
      60_000,
      100,
    );
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    expect(condition(held, "Stalled")?.status).toBe("True");
    expect(condition(held, "ScalingLimited")).toMatchObject({ status: "True", reason: c.limited });
    expect(held.status?.unappliedUpdates).toMatchObject({ lastOutcome: "Refused", refusedBy: c.refusedBy });
  });
});

describe("updates that run long or are canceled", () => {
  it("longUpdate: past 30 minutes Stalled ProgressDeadlineExceeded, one ARM write; clears when it ends", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("long-fault", { ...EMULATOR, speed: 120 });
    await control(harness.emulator, "faults", {
      method: "PATCH",
      path: "**/SignalR/chat",
      times: 1,
      action: { kind: "longUpdate", seconds: 45 * 60 },
    });
    await readyPolicy(harness, kube, ns, id);
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "ProgressDeadlineExceeded" });
        expect(condition(p, "Stalled")?.status).toBe("True");
      },
      60_000,
      200,
    );
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBe(20);
        expect(condition(p, "Stalled")?.status).toBe("False");
      },
      60_000,
      200,
    );
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
  });

  it("cancelUpdate: an update that did not take — Ready=False UpdateFailed (Canceled), the next after a backoff", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("cancel-fault", EMULATOR);
    await control(harness.emulator, "faults", {
      method: "PATCH",
      path: "**/SignalR/chat",
      times: 1,
      action: { kind: "cancelUpdate" },
    });
    await readyPolicy(harness, kube, ns, id);
    harness.emulator.control.setDemand(id, { connections: 9000 });
    const canceled = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.unappliedUpdates).toMatchObject({ lastOutcome: "Canceled", count: 1 });
        return p;
      },
      60_000,
      100,
    );
    expect(condition(canceled, "Ready")).toMatchObject({ status: "False", reason: "UpdateFailed" });
    await harness.eventually(
      async () => expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(20),
      60_000,
      200,
    );
    const writes = armWritesFor(requests.all, id);
    expect(writes).toHaveLength(2);
    expect(Date.parse(writes[1]?.at ?? "") - Date.parse(writes[0]?.at ?? "")).toBeGreaterThanOrEqual(MIN);
  });
});
