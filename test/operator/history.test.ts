/**
 * The operator reads demand history for the policies with a seasonal forecast only: against the
 * real API server and the HTTPS emulator, a policy with `spec.anticipation.seasonal` gets one full
 * history read (on /metrics) while it keeps reconciling on its one-minute metrics, and a policy
 * without one causes none.
 */
import { describe, expect, it } from "vitest";
import { operatorSuite, signalrId } from "./harness.js";
import { condition, createPolicy, getPolicy, policyManifest } from "./helpers.js";

// 12:20 virtual: the next hourly refresh (13:10) is 50 virtual minutes (50 s) away.
const suite = operatorSuite("history", {
  stepped: true,
  emulator: { speed: 60, start: new Date("2025-03-03T12:20:00Z") },
});

describe("demand history in the poll cycle", () => {
  it("is read once for a seasonal policy, and not for the others", async () => {
    const { kube, ns, h } = suite;
    const seasonal = signalrId("seasonal-hub");
    const plain = signalrId("plain-hub");
    for (const id of [seasonal, plain])
      h.emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 2000 });
    await createPolicy(
      kube,
      policyManifest(ns, "seasonal", seasonal, {
        anticipation: { mode: "ForecastOnly", seasonal: { historyDays: 7, grain: "1h" } },
      }),
    );
    await createPolicy(kube, policyManifest(ns, "plain", plain));
    await suite.h.eventually(
      async () => {
        for (const name of ["seasonal", "plain"]) {
          const p = await getPolicy(kube, ns, name);
          expect(condition(p, "Ready")?.status).toBe("True");
        }
        const { body } = await h.metrics.expose();
        expect(body).toContain('signalr_autoscaler_history_reads_total{kind="full",result="success"} 1');
        expect(body).toContain("signalr_autoscaler_history_cached_instances 1");
      },
      60_000,
      500,
    );
    // Ten virtual minutes of polls (every 15 s) later: many passes, still the one read — two
    // getBatch requests, one per aggregation (the Maximum gauges, the Total counters).
    const passes = h.reports.length;
    await h.sleep(10_000);
    await h.operator.historySettled();
    expect(h.reports.length).toBeGreaterThan(passes + 40);
    const { body } = await h.metrics.expose();
    expect(body).toContain("signalr_autoscaler_history_requests_total 2");
    expect(body).toContain('signalr_autoscaler_history_reads_total{kind="full",result="success"} 1');
    expect(body).not.toContain('result="failure"');
  });
});
