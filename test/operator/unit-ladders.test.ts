/**
 * The unit ladders through the running operator: `listSkus` is read once per instance (not per
 * pass) and the ladder it reports is the one the decision uses (`status.unitLadders`); an update
 * answered Succeeded that did not apply its count makes the operator re-read the ladder once and
 * ask for the next count instead of stopping; a `listSkus` that fails keeps the documented ladder
 * and never blocks scaling. Requests are counted from the emulator's request log.
 */
import { describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/emulator/index.js";
import { recordFault } from "../reliability/record.js";
import { type Harness, operatorPerTest } from "./harness.js";
import { armWritesFor, condition, createPolicy, eventsOnce, getPolicy, policyManifest } from "./helpers.js";

const MIN = 60_000;
const suite = operatorPerTest({ stepped: true });
const EMULATOR = {
  speed: 60,
  scaleDurationMs: 120_000,
  ingestionDelayMs: 120_000,
  noiseAmplitude: 0,
  armRateLimit: false,
};

const skuReads = (requests: readonly RequestRecord[], id: string) =>
  requests.filter((r) => r.method === "GET" && r.path.toLowerCase() === `${id.toLowerCase()}/skus`);

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

describe("unit ladders from listSkus", () => {
  it("are read once per instance, not per pass, and shown in status", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("ladders-read", EMULATOR);
    await readyPolicy(harness, kube, ns, id);
    const from = harness.emulator.clock.nowMs();
    const p = await harness.eventually(
      async () => {
        const got = await getPolicy(kube, ns, "chat");
        expect(got.status?.unitLadders?.source).toBe("Service");
        expect(harness.emulator.clock.nowMs()).toBeGreaterThan(from + 30 * MIN);
        return got;
      },
      60_000,
      250,
    );
    expect(p.status?.unitLadders?.readAt).toBeDefined();
    expect(p.status?.unitLadders?.service?.find((s) => s.sku === "Premium_P1")?.units).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100,
    ]);
    const passes = harness.reports.filter((r) => r.result?.decision).length;
    expect(passes).toBeGreaterThan(60);
    expect(skuReads(requests.all, id)).toHaveLength(1);
  });

  it("an update to a count answered but not applied: re-read once, the next count asked for, scaling goes on", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("ladders-skip", EMULATOR);
    harness.emulator.control.addFault({
      method: "PATCH",
      path: "**/SignalR/chat",
      times: 1,
      action: { kind: "notApplied" },
    });
    await readyPolicy(harness, kube, ns, id);
    harness.emulator.control.setDemand(id, { connections: 9000 });
    const scaled = await harness.eventually(
      async () => {
        const got = await getPolicy(kube, ns, "chat");
        expect(got.status?.current?.units).toBe(30);
        expect(condition(got, "Ready")?.status).toBe("True");
        return got;
      },
      60_000,
      200,
    );
    expect(harness.emulator.control.instance(id)).toMatchObject({
      units: 30,
      provisioningState: "Succeeded",
    });
    expect(armWritesFor(requests.all, id)).toHaveLength(2);
    expect(scaled.status?.unitLadders?.excluded).toEqual([
      expect.objectContaining({ sku: "Premium_P1", units: 20, outcome: "NotApplied" }),
    ]);
    expect(scaled.status?.unappliedUpdates).toBeUndefined();
    expect(scaled.status?.lastReasons).toContain("UnitLadder");
    expect(condition(scaled, "Stalled")?.status).toBe("False");
    // 9,000 connections need 11.25 units: 20 is left out, so 30 is what the metrics ask for.
    expect(condition(scaled, "ScalingLimited")).toMatchObject({
      status: "False",
      reason: "DesiredWithinRange",
    });
    expect(skuReads(requests.all, id)).toHaveLength(2);
    const events = await eventsOnce(kube, ns, "chat", (es) => es.some((e) => e.reason === "ScaleSucceeded"));
    expect(events.some((e) => e.reason === "ScaleNotApplied")).toBe(true);
    recordFault({
      id: "arm-update-count-not-applied-once",
      endpoint: "ARM",
      fault: "the first update (to 20 units) answered Succeeded without applying",
      outcome: "20 left out of the ladder, listSkus re-read once, the next update asks for 30 and applies",
      test: "test/operator/unit-ladders.test.ts › an update to a count answered but not applied",
      figures: { armWrites: 2, listSkusReads: skuReads(requests.all, id).length, finalUnits: 30 },
    });
  });

  it("a listSkus that fails keeps the documented ladder and never blocks scaling; tried again after 15 minutes", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("ladders-fail", EMULATOR);
    harness.emulator.control.addFault({
      method: "GET",
      path: "**/SignalR/chat/skus",
      action: { kind: "status", status: 503, code: "ServiceUnavailable", message: "try later" },
    });
    await readyPolicy(harness, kube, ns, id);
    const from = harness.emulator.clock.nowMs();
    harness.emulator.control.setDemand(id, { connections: 9000 });
    const scaled = await harness.eventually(
      async () => {
        const got = await getPolicy(kube, ns, "chat");
        expect(got.status?.current?.units).toBe(20);
        return got;
      },
      60_000,
      200,
    );
    expect(scaled.status?.unitLadders?.source).toBe("BuiltIn");
    expect(condition(scaled, "Ready")?.status).toBe("True");
    expect(condition(scaled, "Stalled")?.status).toBe("False");
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    await harness.eventually(
      () => expect(harness.emulator.clock.nowMs()).toBeGreaterThan(from + 20 * MIN),
      60_000,
      250,
    );
    const reads = skuReads(requests.all, id);
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(reads.length).toBeLessThanOrEqual(3);
    const gaps = reads.slice(1).map((r, i) => Date.parse(r.at) - Date.parse(reads[i]?.at ?? ""));
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(15 * MIN);
  });
});
