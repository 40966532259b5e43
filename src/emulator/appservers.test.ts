/**
 * The app servers' Prometheus `/metrics` as a scraper reads them: over HTTPS with the emulator's
 * CA (and on the optional plain-HTTP port), timestamps on the virtual clock, the negotiate count
 * growing at the traffic model's rate, refused clients counted, restarts resetting the counters.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { APP_SERVER_HUB, NEGOTIATE_MEAN_SECONDS } from "./appservers.js";
import { createVirtualClock } from "./clock.js";
import { type RunningEmulator, startEmulator } from "./emulator.js";
import { EXPOSITION_CONTENT_TYPE } from "./exposition.js";

const T0 = new Date("2025-03-03T12:00:00Z");
const MINUTE = 60_000;
const SUB = "11111111-1111-1111-1111-111111111111";
const signalr = (name: string) =>
  `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/${name}`;
const COUNT = "http_server_request_duration_seconds_count";

interface Answer {
  status: number;
  contentType: string | undefined;
  text: string;
}

/** GETs or POSTs `url` (HTTPS with `ca`, or plain HTTP), no token. */
function call(url: string, options: { ca?: string; method?: string } = {}): Promise<Answer> {
  const send = url.startsWith("https:") ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      { method: options.method ?? "GET", timeout: 5_000, ...(options.ca ? { ca: options.ca } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers["content-type"],
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

interface Scraped {
  /** Value by `name{labels}` as written. */
  values: Map<string, number>;
  timestamps: Set<number>;
  types: Map<string, string>;
}

/** Reads the samples of a scrape (label values here have no spaces). */
function read(text: string): Scraped {
  const values = new Map<string, number>();
  const timestamps = new Set<number>();
  const types = new Map<string, string>();
  expect(text.endsWith("\n")).toBe(true);
  for (const line of text.trimEnd().split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1] as string, type[2] as string);
    if (line.startsWith("#")) continue;
    const m = /^(\S+) (\S+) (\d+)$/.exec(line);
    if (!m) throw new Error(`not a sample with a timestamp: ${line}`);
    values.set(m[1] as string, Number(m[2]));
    timestamps.add(Number(m[3]));
  }
  return { values, timestamps, types };
}

/** The value of the one sample whose name (with labels) starts with `prefix`. */
function value(scraped: Scraped, prefix: string): number {
  const found = [...scraped.values].filter(([k]) => k === prefix || k.startsWith(`${prefix}{`));
  expect(found, prefix).toHaveLength(1);
  return (found[0] as [string, number])[1];
}

describe("app servers' /metrics", { timeout: 30_000 }, () => {
  let emulator: RunningEmulator;
  const scrape = async (name: string) => {
    const answer = await call(emulator.appServerMetricsUrl(name), { ca: emulator.caPem });
    expect(answer.status, answer.text).toBe(200);
    return read(answer.text);
  };

  beforeAll(async () => {
    emulator = await startEmulator({
      clock: createVirtualClock({ start: T0, speed: 0 }),
      appServerHttpPort: 0,
      instances: [
        // 2,400 clients, 20-minute connections: 2 negotiations a second, 120 a minute.
        { resourceId: signalr("steady"), sku: "Premium_P1", units: 5, connections: 2400 },
        // 3,000 clients on one unit: 995 accepted, 2,005 refused; all 3,000 negotiate (150 a minute).
        { resourceId: signalr("full"), sku: "Premium_P1", units: 1, connections: 3000 },
        {
          resourceId: `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/WebPubSub/pubsub`,
          connections: 100,
        },
      ],
    });
  });
  afterAll(() => emulator?.stop());
  beforeEach(() => emulator.control.setClock({ time: T0 }));

  it("serves the text format over HTTPS without a token, every sample stamped with the virtual time", async () => {
    const answer = await call(emulator.appServerMetricsUrl("steady"), { ca: emulator.caPem });
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe(EXPOSITION_CONTENT_TYPE);
    const scraped = read(answer.text);
    expect([...scraped.timestamps]).toEqual([T0.getTime()]);
    expect(scraped.types).toEqual(
      new Map([
        ["http_server_request_duration_seconds", "histogram"],
        ["signalr_server_active_connections", "gauge"],
      ]),
    );
    const route = `http_route="/${APP_SERVER_HUB}/negotiate"`;
    const series = [...scraped.values.keys()].find((k) => k.startsWith(COUNT)) as string;
    expect(series).toContain(route);
    expect(series).toContain('http_request_method="POST"');
    expect(series).toContain('http_response_status_code="200"');
    expect(value(scraped, "signalr_server_active_connections")).toBe(2400);

    emulator.control.advance(10 * MINUTE);
    const later = await scrape("steady");
    expect([...later.timestamps]).toEqual([T0.getTime() + 10 * MINUTE]);
  });

  it("counts negotiations at D / W since the app servers started: 28 days of history, then 120 a minute", async () => {
    const first = await scrape("steady");
    // The instance has existed for 28 days (the default history) at 120 negotiations a minute.
    expect(value(first, COUNT)).toBe(28 * 1440 * 120);
    emulator.control.advance(7 * MINUTE + 30_000);
    const second = await scrape("steady");
    expect(value(second, COUNT) - value(first, COUNT)).toBe(7.5 * 120);
    // The histogram agrees with itself: cumulative buckets, +Inf = count, sum = count × mean.
    const buckets = [...second.values].filter(([k]) =>
      k.startsWith("http_server_request_duration_seconds_bucket"),
    );
    expect(buckets).toHaveLength(15);
    const counts = buckets.map(([, v]) => v);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(buckets.at(-1)?.[0]).toContain('le="+Inf"');
    expect(counts.at(-1)).toBe(value(second, COUNT));
    expect(value(second, "http_server_request_duration_seconds_sum")).toBeCloseTo(
      value(second, COUNT) * NEGOTIATE_MEAN_SECONDS,
      3,
    );
  });

  it("counts the clients the service refuses; the gauge holds the accepted ones", async () => {
    const first = await scrape("full");
    expect(value(first, "signalr_server_active_connections")).toBe(995);
    emulator.control.advance(4 * MINUTE);
    const second = await scrape("full");
    expect(value(second, COUNT) - value(first, COUNT)).toBe(4 * 150);
    expect(emulator.control.traffic(signalr("full"))?.refusedConnections).toBe(2005);
  });

  it("adds the clients of a rise in demand", async () => {
    const first = await scrape("steady");
    emulator.control.setDemand(signalr("steady"), { connections: 4800 });
    emulator.control.advance(3 * MINUTE);
    const second = await scrape("steady");
    // From this minute on: 2,400 new clients at once, then 240 a minute.
    expect(value(second, COUNT) - value(first, COUNT)).toBe(2400 + 3 * 240);
    expect(value(second, "signalr_server_active_connections")).toBe(4800);
    emulator.control.setDemand(signalr("steady"), { connections: 2400 });
  });

  it("restarts: the counters start again from 0 at the virtual time of the restart", async () => {
    const restarted = await call(`${emulator.controlEndpoint}/appservers/full/restart`, {
      ca: emulator.caPem,
      method: "POST",
    });
    expect(restarted.status).toBe(200);
    expect(JSON.parse(restarted.text)).toMatchObject({
      name: "full",
      negotiations: 0,
      startedAt: T0.toISOString(),
    });
    expect(value(await scrape("full"), COUNT)).toBe(0);
    emulator.control.advance(2 * MINUTE);
    const after = await scrape("full");
    expect(value(after, COUNT)).toBe(300);
    const fastest = [...after.values].find(([k]) => k.includes('le="0.005"'));
    expect(fastest?.[1]).toBe(90); // 30 % within 5 ms
    const status = await call(`${emulator.controlEndpoint}/appservers/full`, { ca: emulator.caPem });
    expect(JSON.parse(status.text)).toMatchObject({
      negotiations: 300,
      activeConnections: 995,
      refusedConnections: 2005,
    });
  });

  it("serves the same on the plain-HTTP port, and nothing else there", async () => {
    const url = emulator.appServerHttpUrl as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const answer = await call(`${url}/appservers/steady/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe(EXPOSITION_CONTENT_TYPE);
    expect(answer.text).toBe(
      (await call(emulator.appServerMetricsUrl("steady"), { ca: emulator.caPem })).text,
    );
    expect((await call(`${url}/_emulator/state`)).status).toBe(404);
  });

  it("answers 404 for an unknown instance and a Web PubSub one, 405 for another method", async () => {
    const unknown = await call(emulator.appServerMetricsUrl("nope"), { ca: emulator.caPem });
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("no instance named 'nope'");
    expect((await call(emulator.appServerMetricsUrl("pubsub"), { ca: emulator.caPem })).status).toBe(404);
    expect((await call(`${emulator.url}/appservers/steady`, { ca: emulator.caPem })).status).toBe(404);
    expect(
      (await call(emulator.appServerMetricsUrl("steady"), { ca: emulator.caPem, method: "POST" })).status,
    ).toBe(405);
    const restartUnknown = await call(`${emulator.controlEndpoint}/appservers/nope/restart`, {
      ca: emulator.caPem,
      method: "POST",
    });
    expect(restartUnknown.status).toBe(404);
  });

  it("stamps samples with the running virtual clock", async () => {
    emulator.control.setClock({ speed: 720 });
    try {
      const before = emulator.clock.nowMs();
      const scraped = await scrape("steady");
      const after = emulator.clock.nowMs();
      const [stamp] = [...scraped.timestamps];
      expect(scraped.timestamps.size).toBe(1);
      expect(stamp).toBeGreaterThanOrEqual(Math.floor(before));
      expect(stamp).toBeLessThanOrEqual(after);
      // Virtual time, not real time: the clock started in 2025-03 and runs 720 × faster.
      expect(Math.abs((stamp as number) - Date.now())).toBeGreaterThan(MINUTE);
    } finally {
      emulator.control.setClock({ speed: 0 });
    }
  });
});
