/**
 * The bench's Prometheus stand-ins, queried by the operator's real client: the answer it accepts,
 * the counts per server, the per-server bound seen from the server side, refusals.
 */
import { afterEach, describe, expect, it } from "vitest";
import { PrometheusClient } from "../src/prometheus/index.js";
import { type PrometheusStandIns, startPrometheusStandIns } from "./prometheus-standin.js";

let standIns: PrometheusStandIns | undefined;
let client: PrometheusClient | undefined;
afterEach(async () => {
  await client?.close();
  await standIns?.close();
  client = undefined;
  standIns = undefined;
});

describe("Prometheus stand-ins", () => {
  it("answer one sample at the asked time, by POST and GET, and count queries per server", async () => {
    standIns = await startPrometheusStandIns({ servers: 2, latencyMs: 0, value: 1000 / 600 });
    client = new PrometheusClient();
    const [a, b] = standIns.urls as [string, string];
    const sample = await client.query({ url: a, timeoutMs: 2000 }, "sum(rate(x[1m]))", {
      timeMs: 1_700_000_000_500,
    });
    expect(sample.value).toBeCloseTo(1.6667, 4);
    expect(sample.timeMs).toBe(1_700_000_000_500);
    await client.query({ url: b, timeoutMs: 2000, method: "GET" }, "up");
    await client.query({ url: b, timeoutMs: 2000 }, "up");
    expect(standIns.counts()).toEqual({ queries: [1, 2], refused: 0, maxInFlight: 1 });
    standIns.reset();
    expect(standIns.counts()).toEqual({ queries: [0, 0], refused: 0, maxInFlight: 0 });
  });

  it("see at most the client's per-server bound open at once, and wait the latency", async () => {
    // Long enough that the client has its 4 requests out before the first answer, on a busy CPU too.
    const latencyMs = 250;
    standIns = await startPrometheusStandIns({ servers: 1, latencyMs, value: 1 });
    client = new PrometheusClient({ maxConcurrentPerServer: 4 });
    const url = standIns.urls[0] as string;
    const started = performance.now();
    await Promise.all(Array.from({ length: 12 }, () => client?.query({ url, timeoutMs: 5000 }, "up")));
    const ms = performance.now() - started;
    expect(standIns.counts().queries).toEqual([12]);
    expect(standIns.counts().maxInFlight).toBe(4);
    // 12 queries, 4 at a time, `latencyMs` each: at least 3 rounds (timers may fire a little early).
    expect(ms).toBeGreaterThanOrEqual(3 * latencyMs - 15);
  });

  it("refuse a request without a query and any other path", async () => {
    standIns = await startPrometheusStandIns({ servers: 1, latencyMs: 0, value: 1 });
    const url = standIns.urls[0] as string;
    const empty = await fetch(`${url}/api/v1/query`, { method: "POST" });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ status: "error", errorType: "bad_data" });
    expect((await fetch(`${url}/api/v1/query_range?query=up`)).status).toBe(404);
    expect(standIns.counts()).toMatchObject({ queries: [0], refused: 2 });
  });
});
