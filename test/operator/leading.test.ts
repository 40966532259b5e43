/**
 * The leading signal end to end: the real API server, the HTTPS emulator (its app servers'
 * `/metrics` on plain HTTP, stamped with the virtual clock), a real Prometheus (built from its Go
 * module) scraping them every 15 virtual seconds, and the real operator querying it.
 *
 * Two instances with the same demand — Premium_P1 × 3, 2,000 connections (what 80 % of 3 units
 * carries: steady) — and two policies that
 * differ only in `spec.anticipation.leadingSignal` (the negotiate rate, connection lifetime
 * measured). Once the signal is calibrated (its lifetime measured against Azure Monitor's
 * unsaturated count), a crowd arrives on both: 30,000 connections, ten times the quota. Azure
 * Monitor reports it 3 minutes (the ingestion delay) later; the app servers count its clients at
 * once. The policy with the signal sends its scale-out first, driven by `LeadingSignal`; the other
 * only once the metrics show the crowd — and both send one.
 *
 * The virtual clock runs 60 times faster than real time: a virtual minute is a real second, the
 * 15 s poll interval 250 ms, the scrape interval 250 ms.
 */
import { afterAll, describe, expect, inject, it } from "vitest";
import type { CapacityPolicy } from "../../src/api/index.js";
import type { PassReport } from "../../src/controller/operator.js";
import { type LocalPrometheus, startPrometheus } from "../../src/localcluster/index.js";
import { eventually } from "../kube/support.js";
import { operatorPerTest, signalrId } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  getPolicy,
  policyManifest,
  untilScrapedForAMinute,
} from "./helpers.js";

const START = new Date("2025-03-03T10:00:00Z");
const SPEED = 60;
const CROWD = 30_000;
const METRICS = { connections: { targetPercent: 80 }, window: "5m", ingestionDelay: "3m" };
const anticipation = { mode: "Enabled", scaleDuration: "3m" };

const ops = operatorPerTest();
let prometheus: LocalPrometheus | undefined;

afterAll(async () => {
  await prometheus?.stop();
});

describe("leading signal from a real Prometheus", () => {
  it("a crowd the app servers see first is scaled out for before Azure Monitor reports it", async () => {
    const { kube, ns, requests, harness } = await ops.start("leading", {
      start: START,
      scaleDurationMs: 180_000,
      appServerHttpPort: 0,
    });
    const emulator = harness.emulator;
    const lead = signalrId("lead-hub");
    const plain = signalrId("plain-hub");
    for (const id of [lead, plain]) {
      emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 3, connections: 2000 });
    }
    prometheus = await startPrometheus({
      binary: inject("prometheusBinary"),
      targets: [{ job: "lead-hub", url: `${emulator.appServerHttpUrl}/appservers/lead-hub/metrics` }],
      scrapeIntervalMs: (15 * 1000) / SPEED,
    });
    // Scraped for more than the queries' 1-minute rate window before the policy reads it.
    await untilScrapedForAMinute(
      prometheus.url,
      'http_server_request_duration_seconds_count{job="lead-hub"}',
      emulator,
    );
    const leadingSignal = {
      prometheus: {
        serverAddress: prometheus.url,
        query:
          'sum(rate(http_server_request_duration_seconds_count{job="lead-hub", http_route="/chat/negotiate"}[1m]))',
        timeout: "2s",
      },
    };
    await createPolicy(
      kube,
      policyManifest(ns, "lead", lead, {
        metrics: METRICS,
        anticipation: { ...anticipation, leadingSignal },
      }),
    );
    await createPolicy(kube, policyManifest(ns, "plain", plain, { metrics: METRICS, anticipation }));

    // Calibrated: the lifetime measured against Azure's count (the emulator's clients stay 20 min).
    const calibrated = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "lead");
        expect(p.status?.anticipation?.leading).toMatchObject({ state: "Ok", lifetimeSource: "Measured" });
        return p;
      },
      60_000,
      250,
    );
    const leading = calibrated.status?.anticipation?.leading;
    expect(leading?.lifetimeSeconds).toBeGreaterThan(900);
    expect(leading?.lifetimeSeconds).toBeLessThan(1500);
    // 2,000 connections that last 20 minutes: about 1.7 new ones a second. Nothing scaled yet.
    expect(leading?.newConnectionsPerSecond).toBeGreaterThan(1.2);
    expect(leading?.newConnectionsPerSecond).toBeLessThan(2.2);
    expect(condition(calibrated, "Anticipating")).toMatchObject({ status: "True", reason: "Enabled" });
    expect(armWritesFor(requests.all, lead)).toHaveLength(0);
    expect(armWritesFor(requests.all, plain)).toHaveLength(0);

    // The crowd, on both instances at the same virtual instant.
    emulator.clock.setSpeed(0);
    const crowdAt = emulator.clock.nowMs();
    for (const id of [lead, plain]) emulator.control.setDemand(id, { connections: CROWD });
    emulator.clock.setSpeed(SPEED);

    const firstWrite = (id: string) =>
      eventually(
        () => {
          const w = armWritesFor(requests.all, id).filter((r) => Date.parse(r.at) >= crowdAt);
          expect(w.length).toBeGreaterThan(0);
          return Date.parse(w[0]?.at ?? "");
        },
        60_000,
        50,
      );
    const leadAt = await firstWrite(lead);
    const plainAt = await firstWrite(plain);
    // The signal's scale-out comes before Azure Monitor could even show the crowd's first minute
    // complete (its end + the 3-minute ingestion delay); the other policy's only after.
    console.log(
      `first scale-out after the crowd: ${(leadAt - crowdAt) / 1000} s virtual with the leading signal, ${(plainAt - crowdAt) / 1000} s without`,
    );
    const firstCompleteBucket = Math.ceil(crowdAt / 60_000) * 60_000 + 180_000;
    expect(leadAt).toBeLessThan(firstCompleteBucket);
    expect(plainAt).toBeGreaterThanOrEqual(firstCompleteBucket);
    expect(plainAt - leadAt).toBeGreaterThan(60_000);

    // The pass that sent it: LeadingSignal drove it.
    const scaled = harness.reports.find(
      (r: PassReport) => r.policy.metadata.name === "lead" && r.result?.outcome === "scaled",
    );
    const decision = scaled?.result?.decision;
    expect(decision?.anticipation).toMatchObject({ applied: true, drivenBy: "LeadingSignal" });
    const why = decision?.reasons.find((r) => r.code === "Anticipated");
    expect(why?.message).toMatch(/^LeadingSignal asks for/);
    // At the first sign of the crowd the signal asks for more than the 3 units Azure's count still
    // needs. How much of the crowd's arrivals the last minute's rate holds at that pass depends on
    // where Prometheus's scrapes fall in real time (4 units seen on a loaded machine, 10 or more on
    // an idle one), so the count is checked against the connections the ask states, not a bound:
    // its units are those connections at 800 a unit (1,000 × the 80 % target).
    expect(why?.message).toMatch(/\(measured need 3,/);
    expect(why?.units).toBeGreaterThan(3);
    const stated = /: ([\d,]+) connections by \d\d:\d\d UTC/.exec(why?.message ?? "");
    const connections = Number(stated?.[1]?.replaceAll(",", ""));
    expect(connections).toBeGreaterThan(2000);
    expect(Math.abs((why?.units ?? 0) - Math.ceil(connections / 800))).toBeLessThanOrEqual(1);
    // A central estimate: the rung below the ask is taken when it covers it within the tolerance.
    expect(decision?.desired?.units).toBeGreaterThan(3);
    console.log(`the first ask: ${why?.units} units, desired ${decision?.desired?.units}: ${why?.message}`);

    const after: CapacityPolicy = await getPolicy(kube, ns, "lead");
    expect(after.status?.anticipation?.rules?.map((r) => r.rule)).toContain("LeadingSignal");
  });
});
