/**
 * Metrics failures: Azure Monitor answers with series without values (emulator fault
 * `nullSeries`) → MetricsAvailable=False and the units are held (never scale in blind); after
 * `failureThreshold` failed polls Fallback=True; once the fault is gone everything resets and the
 * operator scales in on the real load.
 */
import { describe, expect, it } from "vitest";
import { recordFault } from "../reliability/record.js";
import { operatorSuite, signalrId } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  eventsOnce,
  getPolicy,
  policyManifest,
  requestCollector,
} from "./helpers.js";

const requests = requestCollector();

const suite = operatorSuite("fallback", {
  stepped: true,
  emulator: { speed: 60, onRequest: requests.onRequest },
});

describe("metrics failures", () => {
  it("holds the units while metrics are missing, falls back after the threshold, and recovers", async () => {
    const { kube, ns, h } = suite;
    const id = signalrId("chat");
    // 10 units for 2,000 connections: with metrics, the operator would scale in at once.
    h.emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 2000 });
    const fault = h.emulator.control.addFault({
      path: "**/metrics:getBatch",
      resourceIds: [id],
      action: { kind: "nullSeries" },
    });
    const base = policyManifest(ns, "chat", id);
    const spec = base["spec"] as Record<string, Record<string, unknown>>;
    await createPolicy(kube, {
      ...base,
      spec: {
        ...spec,
        behavior: { ...spec["behavior"], scaleDown: { stabilizationWindowSeconds: 0 } },
        fallback: { failureThreshold: 3, action: "Hold" },
      },
    });

    // Below the threshold: metrics unavailable, units held, no fallback yet.
    const early = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "MetricsAvailable")).toMatchObject({ status: "False", reason: "NoMetrics" });
        expect(p.status?.consecutiveFailures).toBeGreaterThanOrEqual(1);
        return p;
      },
      60_000,
      200,
    );
    if ((early.status?.consecutiveFailures ?? 0) < 3) {
      expect(condition(early, "Fallback")).toMatchObject({
        status: "False",
        reason: "FailuresBelowThreshold",
      });
    }

    // From the third failed poll: Fallback=True (Hold), Ready=False.
    const fallen = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Fallback")).toMatchObject({ status: "True", reason: "FallbackHold" });
        return p;
      },
      60_000,
      200,
    );
    expect(fallen.status?.consecutiveFailures).toBeGreaterThanOrEqual(3);
    expect(condition(fallen, "Ready")).toMatchObject({ status: "False", reason: "Fallback" });
    expect(condition(fallen, "ScalingActive")?.status).toBe("False");
    expect(fallen.status?.current?.units).toBe(10);
    expect(fallen.status?.desired?.units).toBe(10);
    expect(fallen.status?.lastSample).toBeUndefined();

    // Every failed pass held 10 units; the fallback switched on exactly at the threshold.
    // (a pass is reported just after its status write)
    const passes = await suite.h.eventually(() => {
      const decided = h.reports.flatMap((r) => (r.result?.decision ? [r.result.decision] : []));
      expect(decided.length).toBeGreaterThanOrEqual(3);
      return decided;
    }, 10_000);
    for (const d of passes) {
      expect(d.desired?.units).toBe(10);
      expect(d.fallback.active).toBe(d.fallback.consecutiveFailures >= 3);
    }
    expect(passes.map((d) => d.fallback.consecutiveFailures).slice(0, 3)).toEqual([1, 2, 3]);
    expect(armWritesFor(requests.all, id)).toEqual([]);
    recordFault({
      id: "metrics-null-series",
      endpoint: "Azure Monitor",
      fault: "getBatch answers series whose data points have no values",
      outcome:
        "MetricsAvailable=False NoMetrics; units held; Fallback Hold from the 3rd failed poll; scale-in only once data returns",
      test: "test/operator/fallback.test.ts › holds the units while metrics are missing",
      figures: { passesWithoutData: passes.length, scaleInsOnUnknownData: 0, fallbackAtFailure: 3 },
    });
    await eventsOnce(kube, ns, "chat", (es) =>
      es.some((e) => e.type === "Warning" && e.reason === "FallbackHold"),
    );

    // The fault goes: metrics come back, the counters reset, and the operator scales in.
    h.emulator.control.removeFault(fault.id);
    const healthy = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "MetricsAvailable")?.status).toBe("True");
        expect(condition(p, "Fallback")).toMatchObject({ status: "False", reason: "MetricsHealthy" });
        expect(p.status?.consecutiveFailures).toBe(0);
        return p;
      },
      60_000,
      200,
    );
    expect(healthy.status?.lastSample?.connections).toBeGreaterThan(2000);
    await suite.h.eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 60_000, 200);
    await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.current?.units).toBeLessThan(10);
        expect(condition(p, "Ready")?.status).toBe("True");
      },
      60_000,
      500,
    );
  });
});
