/**
 * A metrics batch Azure refuses (400) because of one resource fails only that resource's policy:
 * two policies on instances of one subscription and region share their getBatch request; Azure
 * Monitor answers 400 to every request that holds the offender's ID. The operator splits the
 * refused batch, the innocent half is answered, and the other policy stays Ready with its metrics;
 * the offender reports `MetricsAvailable=False` naming the refused request, and neither scales in
 * on data it does not have. getBatch calls are counted per cycle and query (one per aggregation:
 * Maximum, Total) from the emulator's request log.
 */
import { describe, expect, it } from "vitest";
import type { RequestRecord } from "../../src/emulator/index.js";
import { recordFault } from "../reliability/record.js";
import { operatorSuite, signalrId } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  getPolicy,
  policyManifest,
  requestCollector,
} from "./helpers.js";

const requests = requestCollector();
const suite = operatorSuite("batch-rejected", {
  stepped: true,
  emulator: { speed: 60, onRequest: requests.onRequest },
});

const has = (r: RequestRecord, id: string) =>
  r.resourceIds?.some((x) => x.toLowerCase() === id.toLowerCase());

describe("a metrics batch refused for one resource", () => {
  it("fails only the policy of that resource: the other stays Ready with its metrics", async () => {
    const { kube, ns, h } = suite;
    const innocentId = signalrId("innocent");
    const offenderId = signalrId("offender");
    // 3,400 connections on 5 units: the size both policies keep.
    for (const resourceId of [innocentId, offenderId]) {
      h.emulator.control.addInstance({ resourceId, sku: "Premium_P1", units: 5, connections: 3400 });
    }
    h.emulator.control.addFault({
      path: "**/metrics:getBatch",
      resourceIds: [offenderId],
      action: { kind: "status", status: 400, code: "BadRequest", message: "Invalid resource in the batch" },
    });
    await createPolicy(kube, policyManifest(ns, "innocent", innocentId));
    await createPolicy(kube, policyManifest(ns, "offender", offenderId));

    const getBatch = () => requests.all.filter((r) => r.kind === "getBatch");
    const shared = () => getBatch().filter((r) => has(r, innocentId) && has(r, offenderId));
    // Several cycles in which both policies were due together (two shared queries a cycle).
    await suite.h.eventually(() => expect(shared().length).toBeGreaterThanOrEqual(8), 90_000, 200);

    const innocent = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "innocent");
        expect(condition(p, "Ready")?.status).toBe("True");
        expect(condition(p, "MetricsAvailable")?.status).toBe("True");
        return p;
      },
      60_000,
      200,
    );
    expect(condition(innocent, "Fallback")?.status).not.toBe("True");
    expect(innocent.status?.consecutiveFailures ?? 0).toBe(0);

    const offender = await getPolicy(kube, ns, "offender");
    const metrics = condition(offender, "MetricsAvailable");
    expect(metrics).toMatchObject({ status: "False", reason: "FetchFailed" });
    expect(metrics?.message).toMatch(/^InvalidRequest: .*invalid request \(400 BadRequest/);
    expect(offender.status?.consecutiveFailures ?? 0).toBeGreaterThanOrEqual(1);

    // Every request holding the offender was refused, and none holding the innocent alone was.
    const log = getBatch();
    expect(log.filter((r) => has(r, offenderId)).every((r) => r.status === 400)).toBe(true);
    const innocentAlone = log.filter((r) => has(r, innocentId) && !has(r, offenderId));
    expect(innocentAlone.length).toBeGreaterThanOrEqual(shared().length);
    expect(innocentAlone.every((r) => r.status === 200)).toBe(true);

    // Every query is asked for one aggregation its metrics support (Maximum or Total).
    expect(new Set(log.map((r) => r.aggregation))).toEqual(new Set(["Maximum", "Total"]));
    // Calls of each cycle and query in which both were due: from one shared request of that
    // query to the next.
    const cycles: RequestRecord[][] = [];
    for (const aggregation of ["Maximum", "Total"]) {
      const ofQuery: RequestRecord[][] = [];
      for (const r of log.filter((x) => x.aggregation === aggregation)) {
        if (has(r, innocentId) && has(r, offenderId)) ofQuery.push([r]);
        else ofQuery.at(-1)?.push(r);
      }
      cycles.push(...ofQuery.slice(0, -1));
    }
    const complete = cycles;
    for (const calls of complete) {
      // The refused pair, each half asked again: the offender alone refused, the innocent answered.
      expect(calls.filter((r) => has(r, offenderId) && !has(r, innocentId))).toHaveLength(1);
      expect(
        calls.filter((r) => has(r, innocentId) && !has(r, offenderId) && r.status === 200).length,
      ).toBeGreaterThanOrEqual(1);
    }
    const perCycle = complete.map((c) => c.length);

    // Nothing changed size: no scale-in on unknown data, nor any other write.
    expect(armWritesFor(requests.all, offenderId)).toHaveLength(0);
    expect(armWritesFor(requests.all, innocentId)).toHaveLength(0);
    expect(h.emulator.control.instance(offenderId)).toMatchObject({ units: 5 });
    expect(h.emulator.control.instance(innocentId)).toMatchObject({ units: 5 });

    recordFault({
      id: "monitor-400-one-resource",
      endpoint: "Azure Monitor",
      fault:
        "getBatch answered 400 to every request holding one resource, which shares its batch with another policy's",
      outcome:
        "the batch is split; the other policy stays Ready, MetricsAvailable=True, no Fallback; the offender MetricsAvailable=False FetchFailed naming the 400 InvalidRequest; no scale-in on unknown data",
      test: "test/operator/batch-rejected.test.ts > a metrics batch refused for one resource",
      figures: {
        cyclesBothDue: complete.length / 2,
        getBatchPerCycleAndQueryMin: Math.min(...perCycle),
        getBatchPerCycleAndQueryMax: Math.max(...perCycle),
        refusedGetBatch: log.filter((r) => r.status === 400).length,
        answeredGetBatch: log.filter((r) => r.status === 200).length,
        innocentConditions: `Ready=${condition(innocent, "Ready")?.status},MetricsAvailable=${condition(innocent, "MetricsAvailable")?.status},Fallback=${condition(innocent, "Fallback")?.status ?? "absent"}`,
        offenderConditions: `MetricsAvailable=${metrics?.status}/${metrics?.reason},Fallback=${condition(offender, "Fallback")?.status ?? "absent"}`,
        armWrites: requests.all.filter((r) => r.kind === "armWrite").length,
        scaleInsOnUnknownData: 0,
      },
    });
  });
});
