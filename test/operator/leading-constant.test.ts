/**
 * Constant demand with the shipped leading-signal example, end to end: the real API server, the
 * HTTPS emulator (its app servers' `/metrics`, reconnects counted as negotiations), a real
 * Prometheus scraping them, and the real operator querying it.
 *
 * 20,000 clients stay on Premium_P1 × 50 (26 units at the example's 85 % server load, 30 on the
 * ladder): one scale-in is due. Its 8,000 disconnected clients reconnect within 30 s, each
 * negotiating again — a burst of negotiations the leading signal must not read as new demand, which
 * Prometheus's rate() reads × 60 ÷ 45 (it extrapolates the increase between the samples within its
 * minute). At most that one scale-in, and no scale-out.
 *
 * The span: 2 virtual hours at 120× (one real minute). The scale-in comes after the example's
 * 10-minute scale-down stabilization and the disruption weighing (at about 16 virtual minutes),
 * completes 5 minutes later, and its reconnects are over within 30 s; the span then covers the
 * leading signal's reconnect window (3 min), the ingestion delay, a whole further stabilization
 * window and four connection lifetimes (20 min: the projection has converged). After that every pass
 * reads the same constant demand, the same capacity and no recent change, so nothing can differ
 * from what the span has seen; `src/simulate/reconnects.test.ts` replays the same fixture for the
 * whole 8 hours through the same planner.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { parsePolicyYaml } from "../../src/api/index.js";
import { type LocalPrometheus, startPrometheus } from "../../src/localcluster/index.js";
import { CHAT_MIX } from "../../src/simulate/testing.js";
import { eventually } from "../kube/support.js";
import { operatorPerTest, signalrId } from "./harness.js";
import { armWritesFor, createPolicy, getPolicy, policyManifest, untilScrapedForAMinute } from "./helpers.js";

const START = new Date("2025-03-03T10:00:00Z");
const SPEED = 120;
const SPAN_MS = 2 * 3600_000;
const EXAMPLE = resolve(import.meta.dirname, "../../examples/leading-signal.yaml");

const ops = operatorPerTest();
let prometheus: LocalPrometheus | undefined;

afterAll(async () => {
  await prometheus?.stop();
});

describe("constant demand with the leading signal, on the operator", () => {
  it("one scale-in from an oversized start, its reconnects not read as demand: no scale-out", async () => {
    const { kube, ns, requests, harness } = await ops.start("leadconst", {
      start: START,
      speed: SPEED,
      scaleDurationMs: 300_000,
      appServerHttpPort: 0,
    });
    const emulator = harness.emulator;
    const id = signalrId("const-hub");
    emulator.control.addInstance({
      resourceId: id,
      sku: "Premium_P1",
      units: 50,
      connections: 20_000,
      mix: CHAT_MIX,
    });
    prometheus = await startPrometheus({
      binary: inject("prometheusBinary"),
      targets: [{ job: "const-hub", url: `${emulator.appServerHttpUrl}/appservers/const-hub/metrics` }],
      scrapeIntervalMs: (15 * 1000) / SPEED,
    });
    // Scraped for more than the queries' 1-minute rate window before the policy reads it.
    await untilScrapedForAMinute(
      prometheus.url,
      'http_server_request_duration_seconds_count{job="const-hub"}',
      emulator,
    );
    // The example as shipped, pointed at this Prometheus and instance; without its app-server
    // Deployment (none runs here: the instance's decisions are what is measured).
    const example = parsePolicyYaml(readFileSync(EXAMPLE, "utf8")).spec;
    const { appServer: _, ...spec } = example;
    const leadingSignal = example.anticipation?.leadingSignal;
    if (!leadingSignal) throw new Error("the example has no leading signal");
    leadingSignal.prometheus.serverAddress = prometheus.url;
    leadingSignal.prometheus.query =
      'sum(rate(http_server_request_duration_seconds_count{job="const-hub", http_route="/chat/negotiate", http_request_method="POST"}[1m]))';
    leadingSignal.prometheus.timeout = "2s";
    await createPolicy(
      kube,
      policyManifest(ns, "chat", id, { ...spec, target: { service: "SignalR", resourceId: id } }),
    );

    // The signal calibrates (lifetime measured against Azure's count) before anything is due.
    await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(p.status?.anticipation?.leading).toMatchObject({ state: "Ok", lifetimeSource: "Measured" });
      },
      60_000,
      250,
    );
    await eventually(
      () => expect(emulator.clock.nowMs()).toBeGreaterThanOrEqual(START.getTime() + SPAN_MS),
      (SPAN_MS / SPEED) * 1.5,
      500,
    );
    const writes = armWritesFor(requests.all, id);
    const changes = emulator.control.disconnections(id);
    console.log(
      `constant demand, ${SPAN_MS / 3600_000} virtual hours: ${writes.length} ARM write(s); completed: ${changes
        .map((c) => `${c.from.units} → ${c.to.units} (${Math.round(c.disconnected)} disconnected)`)
        .join(", ")}`,
    );
    for (const r of harness.reports) {
      if (r.policy.metadata.name !== "chat" || r.result?.outcome !== "scaled") continue;
      const d = r.result.decision;
      console.log(
        `${d?.now} ${d?.current.units} → ${d?.desired?.units}: ${d?.reasons
          .filter((x) => ["Anticipated", "ScaleOut", "ScaleIn", "SignalDesired"].includes(x.code))
          .map((x) => x.message)
          .join(" | ")} || leading: ${d?.anticipation?.leading?.message}`,
      );
    }
    expect(writes.length).toBeLessThanOrEqual(1);
    expect(changes).toHaveLength(1);
    const only = changes[0];
    expect(only?.to.units).toBeLessThan(only?.from.units ?? 0);
    // Its clients reconnected and negotiated again (what the app servers' counter saw).
    expect(only?.disconnected).toBeGreaterThan(0);
    expect(only?.negotiations).toBeGreaterThanOrEqual(only?.disconnected ?? 0);
    const p = await getPolicy(kube, ns, "chat");
    expect(p.status?.current?.units).toBe(only?.to.units);
  }, 150_000);
});
