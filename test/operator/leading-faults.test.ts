/**
 * A leading signal whose Prometheus fails, end to end on the real API server, the HTTPS emulator
 * and the real operator: four policies, each on its own instance (Premium_P1 × 10, 2,000
 * connections), whose `spec.anticipation.leadingSignal` points at a fake Prometheus on loopback
 * that (a) is a closed port, (b) never answers, (c) answers 503 and (d) answers 400 bad_data.
 *
 * - The operator keeps reconciling on Azure Monitor alone: every policy is Ready, and
 *   `status.anticipation.leading` is Unavailable with the failure's kind as its reason
 *   (Unreachable, Timeout, Http, QueryError), which the Anticipating condition reports as
 *   LeadingSignalUnavailable.
 * - The hang does not stall the poll cycle: with a timeout of 1 s, consecutive passes of the
 *   policy whose Prometheus hangs come at most one poll interval plus the timeout plus a margin
 *   apart, and those of the other policies at most one poll interval plus the margin (a policy's
 *   pass waits for its own Prometheus read only).
 * - A load rise in the emulator still scales every instance out, driven by Azure's metrics.
 *
 * The virtual clock runs 60 times faster than real time: the policies' 15 s poll interval is
 * 250 ms here, while the Prometheus timeout is real time (1 s).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CapacityPolicy } from "../../src/api/index.js";
import type { PassReport } from "../../src/controller/operator.js";
import {
  type FakePrometheus,
  hangingAnswer,
  jsonAnswer,
  startFakePrometheus,
} from "../../src/prometheus/fake-server.js";
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
const POLL_SECONDS = 15;
const TIMEOUT_MS = 1000;
/** The poll interval in real time, ms. */
const POLL_MS = (POLL_SECONDS * 1000) / SPEED;
/**
 * Scheduling, the Azure read, the pass and its status write on a busy 2-core machine, ms (the
 * poll grid adds up to half an interval: `nextPollTime`).
 */
const MARGIN_MS = 600;
/** Real time between two passes of the policy whose Prometheus hangs, at most. */
const MAX_HANGING_GAP_MS = POLL_MS + TIMEOUT_MS + MARGIN_MS;
/** Real time between two passes of any other policy, at most. */
const MAX_GAP_MS = POLL_MS + MARGIN_MS;

const requests = requestCollector();
const suite = operatorSuite("leadfault", {
  emulator: { speed: SPEED, scaleDurationMs: 120_000, onRequest: requests.onRequest },
});

/** One policy of the file: its fake Prometheus and the reason its failure must be reported with. */
interface Case {
  name: string;
  reason: string;
  prometheus: FakePrometheus;
  id: string;
}

const cases: Case[] = [];
const live: FakePrometheus[] = [];

beforeAll(async () => {
  const refused = await startFakePrometheus(hangingAnswer);
  await refused.close();
  const answering = async (handler: Parameters<typeof startFakePrometheus>[0]) => {
    const f = await startFakePrometheus(handler);
    live.push(f);
    return f;
  };
  const hanging = await answering(hangingAnswer);
  const unavailable = await answering(
    jsonAnswer(503, { status: "error", errorType: "unavailable", error: "too many queries" }),
  );
  const bad = await answering(
    jsonAnswer(400, { status: "error", errorType: "bad_data", error: "1:5: parse error: unexpected }" }),
  );
  cases.push(
    { name: "refused", reason: "Unreachable", prometheus: refused, id: signalrId("lead-refused") },
    { name: "hanging", reason: "Timeout", prometheus: hanging, id: signalrId("lead-hanging") },
    { name: "unavailable", reason: "Http", prometheus: unavailable, id: signalrId("lead-unavailable") },
    { name: "bad-query", reason: "QueryError", prometheus: bad, id: signalrId("lead-bad-query") },
  );
});

afterAll(async () => {
  await Promise.all(live.map((f) => f.close()));
});

/** A policy of 10–50 units on connections and server load with a leading signal read from `url`. */
function manifest(ns: string, c: Case): Record<string, unknown> {
  return policyManifest(ns, c.name, c.id, {
    units: { min: 10, max: 50 },
    pollIntervalSeconds: POLL_SECONDS,
    anticipation: {
      mode: "Enabled",
      leadingSignal: {
        prometheus: {
          serverAddress: c.prometheus.url,
          query: 'sum(rate(http_server_request_duration_seconds_count{http_route="/chat/negotiate"}[1m]))',
          timeout: `${TIMEOUT_MS / 1000}s`,
        },
        measures: "NewConnectionsPerSecond",
        connectionLifetime: "20m",
      },
    },
  });
}

describe("a failing leading signal", () => {
  it("is reported Unavailable with its reason while the policies reconcile on Azure Monitor", async () => {
    const { kube, ns, h } = suite;
    for (const c of cases) {
      h.emulator.control.addInstance({ resourceId: c.id, sku: "Premium_P1", units: 10, connections: 2000 });
      await createPolicy(kube, manifest(ns, c));
    }
    for (const c of cases) {
      const p: CapacityPolicy = await eventually(
        async () => {
          const p = await getPolicy(kube, ns, c.name);
          expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "Reconciled" });
          expect(p.status?.anticipation?.leading).toMatchObject({ state: "Unavailable", reason: c.reason });
          return p;
        },
        30_000,
        200,
      );
      expect(condition(p, "MetricsAvailable")?.status).toBe("True");
      expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 10 });
      expect(p.status?.lastSample?.connections).toBeGreaterThan(2000);
      const anticipating = condition(p, "Anticipating");
      expect(anticipating).toMatchObject({ status: "True", reason: "LeadingSignalUnavailable" });
      expect(anticipating?.message).toContain(`leading signal (${c.reason}): ignored: `);
      expect(p.status?.anticipation?.leading?.message).toContain(c.prometheus.url);
    }
    // Each was asked (the refused port could not be), with the query at the operator's time.
    for (const c of cases.filter((x) => x.name !== "refused")) {
      expect(c.prometheus.seen.length).toBeGreaterThanOrEqual(1);
      const time = Number(c.prometheus.seen[0]?.params.get("time"));
      expect(Math.abs(time * 1000 - h.emulator.clock.nowMs())).toBeLessThan(30 * 60_000);
    }
    // Nothing to change: no ARM update.
    for (const c of cases) expect(armWritesFor(requests.all, c.id)).toHaveLength(0);
    recordFault({
      id: "prometheus-down",
      endpoint: "Prometheus",
      fault: "the leading signal's Prometheus: closed port, 503, a query it refuses (400)",
      outcome:
        "Ready=True on Azure Monitor; leading.state Unavailable with Unreachable / Http / QueryError; no update",
      test: "test/operator/leading-faults.test.ts › is reported Unavailable",
      figures: { policies: cases.length, armWrites: 0 },
    });
  });

  it("does not stall the poll cycle: passes keep coming at the poll interval plus the timeout", async () => {
    const { h } = suite;
    const passes = new Map<string, number[]>();
    const failed: PassReport[] = [];
    const unsubscribe = h.operator.onPass((r) => {
      if (r.error) failed.push(r);
      const at = passes.get(r.policy.metadata.name) ?? [];
      at.push(performance.now());
      passes.set(r.policy.metadata.name, at);
    });
    const started = performance.now();
    try {
      await eventually(
        () => {
          for (const c of cases) expect(passes.get(c.name)?.length ?? 0).toBeGreaterThanOrEqual(6);
        },
        20_000,
        100,
      );
    } finally {
      unsubscribe();
    }
    const elapsed = performance.now() - started;
    expect(failed).toEqual([]);
    const gaps = new Map<string, number[]>();
    for (const c of cases) {
      const at = passes.get(c.name) ?? [];
      gaps.set(
        c.name,
        at.slice(1).map((t, i) => t - (at[i] as number)),
      );
    }
    console.log(
      `[leading-faults] pass gaps (ms): ${[...gaps]
        .map(([name, g]) => `${name} ${g.map((x) => Math.round(x)).join(" ")}`)
        .join("; ")} in ${Math.round(elapsed)} ms`,
    );
    // Every query of the hanging server takes the whole timeout: its passes are no closer than it,
    // and no further apart than the poll interval plus the timeout.
    const hanging = gaps.get("hanging") ?? [];
    expect(Math.min(...hanging)).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(Math.max(...hanging)).toBeLessThan(MAX_HANGING_GAP_MS);
    // The others are not held by it.
    for (const c of cases.filter((x) => x.name !== "hanging"))
      expect(Math.max(...(gaps.get(c.name) ?? [])), c.name).toBeLessThan(MAX_GAP_MS);
    expect(elapsed).toBeLessThan(7 * MAX_HANGING_GAP_MS);
    const others = cases.filter((x) => x.name !== "hanging").flatMap((c) => gaps.get(c.name) ?? []);
    recordFault({
      id: "prometheus-hang",
      endpoint: "Prometheus",
      fault: "the leading signal's Prometheus accepts the query and never answers",
      outcome:
        "leading.state Unavailable (Timeout); that policy's passes at poll + query timeout; no other policy held",
      test: "test/operator/leading-faults.test.ts › does not stall the poll cycle",
      figures: {
        hangingPassGapMaxMs: Math.round(Math.max(...hanging)),
        otherPassGapMaxMs: Math.round(Math.max(...others)),
        failingPasses: failed.length,
      },
    });
  });

  it("still scales out on a load rise measured by Azure Monitor", async () => {
    const { kube, ns, h } = suite;
    // 9,000 connections at 80 % need 12 units → 20 on the P1 ladder.
    for (const c of cases) h.emulator.control.setDemand(c.id, { connections: 9000 });
    for (const c of cases) {
      const p = await eventually(
        async () => {
          const p = await getPolicy(kube, ns, c.name);
          expect(p.status?.current).toMatchObject({ sku: "Premium_P1", units: 20 });
          expect(p.status?.operation).toBeUndefined();
          return p;
        },
        30_000,
        200,
      );
      expect(armWritesFor(requests.all, c.id)).toHaveLength(1);
      expect(h.emulator.control.instance(c.id)).toMatchObject({ units: 20, provisioningState: "Succeeded" });
      expect(p.status?.anticipation?.leading).toMatchObject({ state: "Unavailable", reason: c.reason });
      expect(condition(p, "Anticipating")?.reason).toBe("LeadingSignalUnavailable");
    }
    // The scale-out was Azure Monitor's: a measured signal drove it, the leading signal asked nothing.
    const scaled = h.reports.filter((r) => r.result?.outcome === "scaled");
    expect(new Set(scaled.map((r) => r.policy.metadata.name))).toEqual(new Set(cases.map((c) => c.name)));
    for (const r of scaled) {
      expect(["connections", "serverLoad"]).toContain(r.result?.decision?.drivenBy);
      expect(r.result?.decision?.anticipation?.rules?.map((x) => x.rule) ?? []).not.toContain(
        "LeadingSignal",
      );
    }
  });
});
