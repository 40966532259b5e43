import { afterEach, describe, expect, it } from "vitest";
import { SECRET_SAMPLES } from "../shared/redact-samples.js";
import { CycleWatch } from "./cycle-watch.js";
import { type ProbeServer, parseListenAddress, startProbeServer } from "./http.js";
import { OperatorMetrics } from "./metrics.js";

let server: ProbeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("probe server", () => {
  it("serves healthz, readyz and metrics", async () => {
    let watchOk = true;
    const metrics = new OperatorMetrics({ now: () => Date.parse("2026-01-01T00:05:00Z") });
    metrics.currentUnits.set({ namespace: "chat", policy: "hub" }, 20);
    metrics.observeSample("chat", "hub", "2026-01-01T00:03:00Z", {
      serverLoadPercent: 81,
      connections: null,
    });
    metrics.observeAzureCall("metrics.getBatch", 429, 0.02);
    server = await startProbeServer({
      address: "127.0.0.1:0",
      metrics: () => metrics.expose(),
      readiness: { watch: () => (watchOk ? { ok: true } : { ok: false, reason: "watch down for 40s" }) },
    });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    watchOk = false;
    const notReady = await fetch(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toContain("watch: watch down for 40s");
    const body = await (await fetch(`${server.url}/metrics`)).text();
    expect(body).toContain('signalr_autoscaler_current_units{namespace="chat",policy="hub"} 20');
    expect(body).toContain(
      'signalr_autoscaler_last_sample{namespace="chat",policy="hub",metric="serverLoadPercent"} 81',
    );
    expect(body).toContain('signalr_autoscaler_last_sample_age_seconds{namespace="chat",policy="hub"} 120');
    expect(body).toContain('signalr_autoscaler_azure_requests_total{api="metrics.getBatch",status="429"} 1');
    expect(body).not.toMatch(/metric="connections"/);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  });

  it.each(SECRET_SAMPLES)(
    "never serves $name on /readyz, /healthz or /metrics",
    async ({ text, secret, kept }) => {
      const metrics = new OperatorMetrics({ processMetrics: false });
      // A label value that carries the text, as a reason or a server could.
      metrics.prometheusQueries.inc({ server: text, outcome: "Http" });
      let failMetrics = false;
      server = await startProbeServer({
        address: "127.0.0.1:0",
        metrics: () => (failMetrics ? Promise.reject(new Error(text)) : metrics.expose()),
        readiness: { azure: () => ({ ok: false, reason: `last Azure poll failed: ${text}` }) },
      });
      const ready = await fetch(`${server.url}/readyz`);
      const readyBody = await ready.text();
      expect(ready.status).toBe(503);
      expect(readyBody).toContain(kept);
      expect(readyBody).not.toContain(secret);
      const health = await (await fetch(`${server.url}/healthz`)).text();
      expect(health).toBe("ok\n");
      const exposition = await (await fetch(`${server.url}/metrics`)).text();
      expect(exposition).toContain("signalr_autoscaler_prometheus_queries_total{server=");
      expect(exposition).not.toContain(secret);
      failMetrics = true;
      const failed = await fetch(`${server.url}/metrics`);
      expect(failed.status).toBe(500);
      expect(await failed.text()).not.toContain(secret);
    },
  );
  it("fails /readyz while a poll cycle is overdue by more than the margin, and passes after it ends", async () => {
    let now = 0;
    const watch = new CycleWatch({ deadlineMs: 60_000, marginMs: 15_000, now: () => now });
    const metrics = new OperatorMetrics({ processMetrics: false });
    server = await startProbeServer({
      address: "127.0.0.1:0",
      metrics: () => metrics.expose(),
      readiness: { pollCycle: () => watch.check() },
    });
    const readyz = async () => {
      const res = await fetch(`${server?.url}/readyz`);
      return { status: res.status, body: await res.text() };
    };
    const cycle = watch.begin();
    now = 60_000 + 15_000;
    expect(await readyz()).toEqual({ status: 200, body: "ok\n" });
    now += 5_000;
    expect(await readyz()).toEqual({
      status: 503,
      body: "pollCycle: poll cycle running for 80 s, past its deadline of 60 s by more than 15 s\n",
    });
    watch.end(cycle);
    expect(await readyz()).toEqual({ status: 200, body: "ok\n" });
  });

  it("counts timeouts by API", async () => {
    const metrics = new OperatorMetrics({ processMetrics: false });
    metrics.observeAzureCall("token", 0, 1.0, true);
    metrics.observeAzureCall("GET SignalR", 0, 0.2);
    metrics.pollCycleTimeouts.inc();
    const body = (await metrics.expose()).body;
    expect(body).toContain('signalr_autoscaler_azure_request_timeouts_total{api="token"} 1');
    expect(body).not.toContain('signalr_autoscaler_azure_request_timeouts_total{api="GET SignalR"}');
    expect(body).toContain('signalr_autoscaler_azure_requests_total{api="token",status="0"} 1');
    expect(body).toContain("signalr_autoscaler_poll_cycle_timeouts_total 1");
  });

  it("parses listen addresses", () => {
    expect(parseListenAddress(":8080")).toEqual({ host: undefined, port: 8080 });
    expect(parseListenAddress("127.0.0.1:0")).toEqual({ host: "127.0.0.1", port: 0 });
    expect(parseListenAddress("[::1]:9")).toEqual({ host: "::1", port: 9 });
    expect(() => parseListenAddress("8080")).toThrow(RangeError);
  });
});
