/**
 * Azure endpoints that hang or drop the connection, end to end on the real API server, the HTTPS
 * emulator and the real operator (request timeout 1 s, poll cycle deadline 4 s):
 *
 * - the metrics endpoint of one region (westeurope) accepts requests and never answers, while
 *   another region (eastus) answers: the eastus policy's passes keep coming at its poll interval
 *   (its batch is handed over without waiting for westeurope's), and the westeurope policy gets
 *   `MetricsAvailable=False` with the timeout and is not scaled in although its load would ask
 *   for it;
 * - a connection reset on the ARM list and on a getBatch call is a transient failure of that
 *   cycle: `FetchFailed` once (no scale-in), and the next cycle reads again.
 *
 * The virtual clock runs 60 times faster than real time: the 15 s poll interval is 250 ms here.
 */
import { describe, expect, it } from "vitest";
import type { PassReport } from "../../src/controller/operator.js";
import type { FaultSpec } from "../../src/emulator/index.js";
import { eventually } from "../kube/support.js";
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

const SPEED = 60;
const POLL_MS = (15 * 1000) / SPEED;
const REQUEST_TIMEOUT_MS = 1000;
const CYCLE_TIMEOUT_MS = 4000;
/** Scheduling, the Azure read, the pass and its status write on a busy 2-core machine, ms. */
const MARGIN_MS = 1000;
const FILE = "test/operator/azure-deadlines.test.ts";

const requests = requestCollector();
const suite = operatorSuite("azdeadline", {
  emulator: { speed: SPEED, onRequest: requests.onRequest },
  azure: { requestTimeoutMs: REQUEST_TIMEOUT_MS },
  operator: { pollCycleTimeoutMs: CYCLE_TIMEOUT_MS },
});

const WEST = signalrId("west-chat");
const EAST = signalrId("east-chat");

describe("Azure endpoints that hang or reset", () => {
  it("a hanging regional metrics endpoint holds only its own region's policies, which are not scaled in", async () => {
    const { kube, ns, h } = suite;
    // 500 connections on 10 units would ask for 1 unit; 7,600 on 10 ask for 10.
    h.emulator.control.addInstance({
      resourceId: WEST,
      location: "westeurope",
      sku: "Premium_P1",
      units: 10,
      connections: 500,
    });
    h.emulator.control.addInstance({
      resourceId: EAST,
      location: "eastus",
      sku: "Premium_P1",
      units: 10,
      connections: 7600,
    });
    h.emulator.control.addFault({ path: "/metrics/westeurope/**", action: { kind: "hang" } });
    const passes = new Map<string, number[]>();
    const failed: PassReport[] = [];
    h.operator.onPass((r) => {
      if (r.error) failed.push(r);
      const at = passes.get(r.policy.metadata.name) ?? [];
      at.push(performance.now());
      passes.set(r.policy.metadata.name, at);
    });
    await createPolicy(kube, policyManifest(ns, "west", WEST));
    await createPolicy(kube, policyManifest(ns, "east", EAST));

    const west = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "west");
        expect(condition(p, "MetricsAvailable")).toMatchObject({ status: "False", reason: "FetchFailed" });
        return p;
      },
      30_000,
      100,
    );
    expect(condition(west, "MetricsAvailable")?.message).toContain("request timed out");
    const started = performance.now();
    // Past the scale-down stabilization window (300 s virtual, 5 s real) with westeurope hanging.
    await eventually(
      () => {
        expect(passes.get("east")?.length ?? 0).toBeGreaterThanOrEqual(20);
        expect(passes.get("west")?.length ?? 0).toBeGreaterThanOrEqual(3);
        expect(performance.now() - started).toBeGreaterThan(6_000);
      },
      30_000,
      100,
    );
    const gapsOf = (name: string) => {
      const at = (passes.get(name) ?? []).slice(1);
      return at.slice(1).map((t, i) => t - (at[i] as number));
    };
    const east = gapsOf("east");
    const westGaps = gapsOf("west");
    console.log(
      `[azure-deadlines] pass gaps (ms): east ${east.map(Math.round).join(" ")}; west ${westGaps.map(Math.round).join(" ")}`,
    );
    // eastus is not held by westeurope's hang: at most a poll interval plus the margin apart.
    expect(Math.max(...east)).toBeLessThan(POLL_MS + MARGIN_MS);
    // westeurope waits for its request timeout, within the cycle deadline.
    expect(Math.max(...westGaps)).toBeLessThan(CYCLE_TIMEOUT_MS + MARGIN_MS);
    expect(Math.min(...westGaps)).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(failed).toEqual([]);
    const eastPolicy = await getPolicy(kube, ns, "east");
    expect(condition(eastPolicy, "MetricsAvailable")?.status).toBe("True");
    // Unknown metrics never justify a scale-in.
    expect(armWritesFor(requests.all, WEST)).toEqual([]);
    expect(h.emulator.control.instance(WEST)).toMatchObject({ units: 10 });
    const stillWest = await getPolicy(kube, ns, "west");
    // Past fallback.failureThreshold (3): the fallback holds the current capacity.
    expect(condition(stillWest, "Ready")).toMatchObject({ status: "False", reason: "Fallback" });
    expect(condition(stillWest, "Fallback")).toMatchObject({ status: "True", reason: "FallbackHold" });
    expect(stillWest.status?.current).toMatchObject({ units: 10 });
    recordFault({
      id: "metrics-region-hang",
      endpoint: "Azure Monitor",
      fault: "one region's metrics endpoint accepts requests and never answers",
      outcome:
        "other regions' policies reconciled at their poll interval; the hanging region's policies MetricsAvailable=False (timeout), not scaled in",
      test: `${FILE} > a hanging regional metrics endpoint holds only its own region's policies`,
      figures: {
        requestTimeoutSeconds: REQUEST_TIMEOUT_MS / 1000,
        maxOtherRegionPassGapSeconds: Math.round(Math.max(...east)) / 1000,
        maxHangingRegionPassGapSeconds: Math.round(Math.max(...westGaps)) / 1000,
        armWrites: armWritesFor(requests.all, WEST).length,
        scaleInsOnUnknownData: 0,
        conditions: "MetricsAvailable=False FetchFailed; Fallback=True FallbackHold",
      },
    });
    h.emulator.control.clearFaults();
  });

  it("a connection reset on ARM and on getBatch fails one cycle as transient; the next reads again", async () => {
    const { kube, ns, h } = suite;
    // A subscription of its own: the ARM list of the other policies' cycles does not meet the fault.
    const sub = "11111111-1111-1111-1111-111111111111";
    const id = signalrId("reset-chat", "rg-chat", sub);
    h.emulator.control.addInstance({
      resourceId: id,
      location: "eastus",
      sku: "Premium_P1",
      units: 10,
      connections: 7600,
    });
    await createPolicy(kube, policyManifest(ns, "reset", id));
    await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "reset");
        expect(condition(p, "MetricsAvailable")?.status).toBe("True");
      },
      30_000,
      100,
    );
    const rules: ["ARM" | "getBatch", Omit<FaultSpec, "action">][] = [
      [
        "ARM",
        { method: "GET", path: `/subscriptions/${sub}/providers/Microsoft.SignalRService/SignalR`, times: 1 },
      ],
      // Both queries of the cycle's batch (Maximum, Total): one alone is a partial failure, the
      // other query's data kept (MetricsPartial).
      ["getBatch", { path: "/metrics/eastus/**", resourceIds: [id], times: 2 }],
    ];
    for (const [what, rule] of rules) {
      const failedAt = h.reports.length;
      const fault = h.emulator.control.addFault({ ...rule, action: { kind: "reset" } });
      const injected = performance.now();
      // One pass reads the failure …
      const report = await eventually(
        () => {
          const r = h.reports
            .slice(failedAt)
            .find(
              (x) =>
                x.policy.metadata.name === "reset" &&
                x.result?.decision?.reasons.some((c) => c.code === "FetchFailed"),
            );
          expect(r).toBeDefined();
          return r as PassReport;
        },
        20_000,
        50,
      );
      const detectSeconds = (performance.now() - injected) / 1000;
      expect(JSON.stringify(report.result?.decision?.reasons)).toMatch(/Network/);
      // … and a later one reads again.
      const after = h.reports.indexOf(report) + 1;
      await eventually(
        () => {
          const ok = h.reports
            .slice(after)
            .find(
              (x) =>
                x.policy.metadata.name === "reset" &&
                !x.result?.decision?.reasons.some((c) => c.code === "FetchFailed"),
            );
          expect(ok).toBeDefined();
        },
        20_000,
        50,
      );
      const recoverySeconds = (performance.now() - injected) / 1000;
      expect(h.emulator.control.faults().find((f) => f.id === fault.id)?.fired).toBe(rule.times);
      // No scale-in: whatever was sent went up from 10 units.
      expect(h.emulator.control.instance(id)?.units).toBeGreaterThanOrEqual(10);
      recordFault({
        id: `${what === "ARM" ? "arm" : "metrics"}-connection-reset`,
        endpoint: what === "ARM" ? "ARM" : "Azure Monitor",
        fault: `connection reset on the ${what === "ARM" ? "ARM instance list" : "getBatch call"}`,
        outcome:
          "transient failure of one cycle (FetchFailed, Network); read again on the next cycle; no scale",
        test: `${FILE} > a connection reset on ARM and on getBatch fails one cycle as transient`,
        figures: {
          secondsToDetect: Math.round(detectSeconds * 10) / 10,
          recoverySeconds: Math.round(recoverySeconds * 10) / 10,
          armWrites: armWritesFor(requests.all, id).length,
          scaleInsOnUnknownData: 0,
          conditions: "MetricsAvailable=False FetchFailed",
        },
      });
    }
  });
});
