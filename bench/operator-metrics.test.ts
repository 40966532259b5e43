/**
 * The bench reads the operator's leading-signal counters from the real `/metrics`: the operator's
 * own metrics, served by its own probe server, scraped over loopback.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ProbeServer, startProbeServer } from "../src/controller/http.js";
import { OperatorMetrics } from "../src/controller/metrics.js";
import { counterDelta, prometheusQueryCounters, scrapePrometheusQueryCounters } from "./operator-metrics.js";

let probes: ProbeServer | undefined;
afterEach(async () => {
  await probes?.close();
  probes = undefined;
});

describe("the operator's Prometheus query counters", () => {
  it("sums queries by outcome over servers and reads the duration histogram", async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    metrics.observePrometheusQuery({ server: "http://a:9090", outcome: "ok", seconds: 0.01 });
    metrics.observePrometheusQuery({ server: "http://b:9090/prom", outcome: "ok", seconds: 0.03 });
    metrics.observePrometheusQuery({ server: "http://b:9090/prom", outcome: "Timeout", seconds: 5 });
    const before = prometheusQueryCounters((await metrics.expose()).body);
    expect(before.byOutcome).toEqual({ ok: 2, Timeout: 1 });
    expect(before.total).toBe(3);
    expect(before.durationCount).toBe(3);
    expect(before.durationSumSeconds).toBeCloseTo(5.04, 6);

    metrics.observePrometheusQuery({ server: "http://a:9090", outcome: "ok", seconds: 0.02 });
    metrics.statusWrites.inc({ result: "written" });
    metrics.statusWrites.inc({ result: "skipped" }, 9);
    probes = await startProbeServer({
      address: "127.0.0.1:0",
      metrics: () => metrics.expose(),
      readiness: {},
    });
    const after = await scrapePrometheusQueryCounters(`${probes.url}/metrics`);
    expect(counterDelta(before, after)).toEqual({
      byOutcome: { ok: 1 },
      total: 1,
      durationSumSeconds: expect.closeTo(0.02, 6),
      durationCount: 1,
      statusWrites: { written: 1, skipped: 9 },
    });
  });

  it("reads zero from an operator that sent no query, and only the families it names", async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    const text = `${(await metrics.expose()).body}\nsignalr_autoscaler_prometheus_queries_totally 4\n`;
    expect(prometheusQueryCounters(text)).toEqual({
      byOutcome: {},
      total: 0,
      durationSumSeconds: 0,
      durationCount: 0,
      statusWrites: { written: 0, skipped: 0 },
    });
  });

  it("fails on a status other than 200", async () => {
    probes = await startProbeServer({
      address: "127.0.0.1:0",
      metrics: () => Promise.resolve({ contentType: "text/plain", body: "" }),
      readiness: {},
    });
    await expect(scrapePrometheusQueryCounters(`${probes.url}/nothing`)).rejects.toThrow(/404/);
  });
});
