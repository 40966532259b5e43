/**
 * The real Prometheus (inject("prometheusBinary")) scraping a counter on a virtual clock: 720
 * virtual seconds a real second from 2015-04-14T00:00:00Z, each sample exposed with its virtual
 * timestamp in milliseconds (the exposition format's optional timestamp). Asserted through the
 * HTTP API at virtual times. Loopback only; each test starts and stops its own Prometheus.
 */
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { type LocalPrometheus, startPrometheus } from "../../src/localcluster/index.js";
import { generateServerCertificate } from "../../src/shared/tls.js";
import { query, scalar } from "./prometheus-query.js";

const binary = inject("prometheusBinary");

/** Virtual seconds per real second. */
const SPEED = 720;
/** Where the virtual clock starts, epoch ms. */
const START = Date.UTC(2015, 3, 14);

/**
 * A counter `x_total` growing `perSecond` per virtual second on a virtual clock of its own. With
 * `resetAt` (virtual epoch ms), the first scrape at or after it finds the counter restarted: it
 * then counts from the previous scrape's time, so no increase is lost between the two samples
 * and the true rate stays `perSecond` across the reset.
 */
class VirtualCounter {
  private readonly realStart = performance.now();
  private origin = START;
  /** Timestamps served, in order (virtual epoch ms). */
  readonly served: number[] = [];
  /** The request URLs seen. */
  readonly requests = new Set<string>();
  /** The last timestamp served before the reset and the first after it. */
  reset: { from: number; to: number } | undefined;

  constructor(
    readonly perSecond: number,
    private readonly resetAt?: number,
  ) {}

  /** Virtual now, epoch ms. */
  now(): number {
    return START + (performance.now() - this.realStart) * SPEED;
  }

  exposition(): string {
    const t = Math.floor(this.now());
    const previous = this.served.at(-1);
    if (
      this.resetAt !== undefined &&
      this.reset === undefined &&
      t >= this.resetAt &&
      previous !== undefined
    ) {
      this.origin = previous;
      this.reset = { from: previous, to: t };
    }
    this.served.push(t);
    const value = ((t - this.origin) / 1000) * this.perSecond;
    return `# HELP x_total A counter on a virtual clock.\n# TYPE x_total counter\nx_total ${value} ${t}\n`;
  }
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

function handler(counter: VirtualCounter): Handler {
  return (req, res) => {
    counter.requests.add(req.url ?? "");
    res.setHeader("content-type", "text/plain; version=0.0.4; charset=utf-8");
    res.end(counter.exposition());
  };
}

const servers: (http.Server | https.Server)[] = [];
let prometheus: LocalPrometheus | undefined;
let scratch = "";

async function listen(server: http.Server | https.Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function serve(counter: VirtualCounter): Promise<string> {
  return `http://127.0.0.1:${await listen(http.createServer(handler(counter)))}`;
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "prometheus-test-"));
});

afterEach(async () => {
  await prometheus?.stop();
  prometheus = undefined;
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The stored samples of `selector` in (timeMs − windowS, timeMs], as [epoch ms, value]. */
async function raw(
  url: string,
  selector: string,
  windowS: number,
  timeMs: number,
): Promise<[number, number][]> {
  const result = await query(url, `${selector}[${windowS}s]`, timeMs);
  expect(result.length).toBeLessThanOrEqual(1);
  return (result[0]?.values ?? []).map(([t, v]) => [Math.round(t * 1000), Number(v)]);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The highest of `expr` at `times`. For a counter growing linearly, rate() is exact when Prometheus
 * extrapolates to both ends of the window, and lower (by up to half an interval's worth at each
 * end) when a late scrape leaves a gap wider than 1.1 × the average interval at an end; so the
 * highest of a few is the one to compare.
 */
async function bestRate(url: string, expr: string, times: readonly number[]): Promise<number> {
  const values: number[] = [];
  for (const time of times) {
    const value = await scalar(url, expr, time);
    if (value !== undefined) values.push(value);
  }
  return values.length === 0 ? Number.NaN : Math.max(...values);
}

/** A line of Prometheus's own /metrics, e.g. `prometheus_target_interval_length_seconds{…quantile="0.5"}`. */
async function ownMetric(url: string, pattern: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => pattern.test(l));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

describe("Prometheus on a virtual clock", () => {
  it.each([20, 50, 100])("keeps up with a %i ms scrape interval", async (intervalMs) => {
    const counter = new VirtualCounter(5);
    const target = await serve(counter);
    prometheus = await startPrometheus({
      binary,
      targets: [{ job: "app", url: `${target}/metrics` }],
      scrapeIntervalMs: intervalMs,
    });
    const cpuBefore = (await ownMetric(prometheus.url, /^process_cpu_seconds_total /)) ?? 0;
    const realMs = 2_000;
    await sleep(realMs);
    const now = counter.now();
    const stored = await raw(prometheus.url, "x_total", (realMs * SPEED) / 1000, now);
    const cpu = ((await ownMetric(prometheus.url, /^process_cpu_seconds_total /)) ?? 0) - cpuBefore;
    const p50 = await ownMetric(prometheus.url, new RegExp(`interval="${intervalMs}ms",quantile="0.5"`));
    const p99 = await ownMetric(prometheus.url, new RegExp(`interval="${intervalMs}ms",quantile="0.99"`));
    const spacing = stored.slice(1).map(([t], i) => (t - stored[i]![0]) / 1000);
    console.info(
      `[prometheus] ${intervalMs} ms: ${stored.length} samples stored in ${realMs} ms (${realMs / intervalMs} ` +
        `expected), median spacing ${median(spacing).toFixed(1)} virtual s (${((intervalMs * SPEED) / 1000).toFixed(1)} ` +
        `expected), scrape interval p50 ${((p50 ?? Number.NaN) * 1000).toFixed(1)} ms p99 ` +
        `${((p99 ?? Number.NaN) * 1000).toFixed(1)} ms, Prometheus CPU ${((cpu / realMs) * 100_000).toFixed(0)}% of a core`,
    );
    // Every stored sample is one the target served, at its virtual time.
    for (const [t] of stored) expect(counter.served).toContain(t);
    expect(stored.length).toBeGreaterThanOrEqual(0.7 * (realMs / intervalMs));
    expect(stored.length).toBeLessThanOrEqual(realMs / intervalMs + 2);
    expect(median(spacing) / ((intervalMs * SPEED) / 1000)).toBeCloseTo(1, 0);
    // A range needs two samples: rate(x_total[1m]) has a value exactly when two stored samples lie
    // in (now − 1m, now] — at 720× a 100 ms interval is 72 virtual s, so usually none, but a scrape
    // that ran late then on time leaves two (whatever the interval, the rule is the same).
    // (Read two intervals back, where every scrape has long been stored.)
    const settled = now - 2 * intervalMs * SPEED;
    const perMinute = await query(prometheus.url, "rate(x_total[1m])", settled);
    const inLastMinute = stored.filter(([t]) => t > settled - 60_000 && t <= settled).length;
    expect(perMinute, `${inLastMinute} samples in the last virtual minute`).toHaveLength(
      inLastMinute >= 2 ? 1 : 0,
    );
    expect(await bestRate(prometheus.url, "rate(x_total[5m])", [now, now - 1_000, now - 2_000])).toBeCloseTo(
      5,
      6,
    );
  });

  it("stores samples timestamped in 2015 in a fresh TSDB and rates them per virtual second", async () => {
    const counter = new VirtualCounter(5);
    const target = await serve(counter);
    prometheus = await startPrometheus({
      binary,
      targets: [{ job: "app", url: `${target}/metrics` }],
      scrapeIntervalMs: 20,
    });
    await sleep(1_500);

    const stored = await raw(prometheus.url, "x_total", 3_600, counter.now());
    expect(stored.length).toBeGreaterThan(30);
    const first = new Date(stored[0]![0]);
    expect(first.getUTCFullYear()).toBe(2015);
    expect(first.getTime()).toBeGreaterThanOrEqual(START);
    expect(stored.at(-1)![0]).toBeLessThanOrEqual(counter.now());
    for (const [t, v] of stored) expect(v).toBeCloseTo(((t - START) / 1000) * 5, 6);

    // rate(x_total[1m]) at virtual now, ten times 60 ms apart: 1 virtual minute is 83 ms real,
    // about 4 samples at 20 ms (see bestRate on when the rate is exact).
    const rates: number[] = [];
    let empty = 0;
    for (let i = 0; i < 10; i++) {
      const rate = await scalar(prometheus.url, "rate(x_total[1m])", counter.now());
      if (rate === undefined) empty++;
      else rates.push(rate);
      await sleep(60);
    }
    console.info(`[prometheus] rate(x_total[1m]) at virtual now: ${rates.join(", ")}; ${empty} empty of 10`);
    expect(empty).toBeLessThanOrEqual(3);
    expect(Math.max(...rates)).toBeCloseTo(5, 6);
    for (const rate of rates) {
      expect(rate).toBeGreaterThan(0);
      expect(rate).toBeLessThanOrEqual(5 + 1e-9);
    }
    const now = counter.now();
    expect(await bestRate(prometheus.url, "rate(x_total[5m])", [now, now - 1_000, now - 2_000])).toBeCloseTo(
      5,
      6,
    );

    // Prometheus's own series of each scrape are written at wall-clock time, not virtual time.
    expect(await query(prometheus.url, "up", counter.now())).toEqual([]);
    expect(await scalar(prometheus.url, "up", Date.now())).toBe(1);
  });

  it("rates a counter across a reset", async () => {
    const resetAt = START + 10 * 60_000;
    const counter = new VirtualCounter(5, resetAt);
    const target = await serve(counter);
    prometheus = await startPrometheus({
      binary,
      targets: [{ job: "app", url: `${target}/metrics` }],
      scrapeIntervalMs: 20,
    });
    while (counter.now() < resetAt + 3 * 60_000) await sleep(50);

    const reset = counter.reset!;
    expect(reset).toBeDefined();
    const gap = reset.to - reset.from;
    expect(gap).toBeLessThan(30_000);
    // Five evaluation times whose 1m windows hold samples from both sides of the reset.
    const times = [0, 1, 2, 3, 4].map((k) => reset.to + (k * (60_000 - gap - 1)) / 5);
    const stored = await raw(prometheus.url, "x_total", 120, reset.to + 60_000);
    const storedTimes = stored.map(([t]) => t);
    expect(storedTimes).toContain(reset.to);
    const values = new Map(stored);
    expect(values.get(reset.to)!).toBeLessThan(values.get(reset.from) ?? Number.POSITIVE_INFINITY);

    const rates: number[] = [];
    for (const time of times) {
      expect(await scalar(prometheus.url, "resets(x_total[1m])", time)).toBe(1);
      rates.push((await scalar(prometheus.url, "rate(x_total[1m])", time))!);
    }
    console.info(`[prometheus] rate(x_total[1m]) across the reset: ${rates.join(", ")}`);
    for (const rate of rates) {
      expect(rate).toBeGreaterThan(0);
      expect(rate).toBeLessThanOrEqual(5 + 1e-9);
    }
    if (storedTimes.includes(reset.from)) {
      // Nothing lost between the two samples around the reset: the rate is the true one.
      expect(Math.max(...rates)).toBeCloseTo(5, 6);
    }
    // Without reset handling the increase over the window would be negative.
    expect(await scalar(prometheus.url, "delta(x_total[1m])", times[0]!)).toBeLessThan(0);
  });
});

describe("startPrometheus", () => {
  it("changes targets with setTargets (reload), including https with a CA file, and stops clean", async () => {
    const plain = new VirtualCounter(5);
    const plainUrl = await serve(plain);
    const tls = await generateServerCertificate({
      caName: "prometheus-test-ca",
      serverName: "app",
      dnsNames: ["localhost"],
      ipAddresses: ["127.0.0.1"],
    });
    const caFile = join(scratch, "ca.pem");
    await writeFile(caFile, tls.caPem);
    const secure = new VirtualCounter(2);
    const securePort = await listen(
      https.createServer({ key: tls.keyPem, cert: tls.certPem }, handler(secure)),
    );

    prometheus = await startPrometheus({
      binary,
      targets: [{ job: "app", url: `${plainUrl}/metrics` }],
      scrapeIntervalMs: 20,
    });
    const targets = async () => {
      const res = await fetch(`${prometheus!.url}/api/v1/targets?state=active`);
      const body = (await res.json()) as {
        data: {
          activeTargets: {
            scrapePool: string;
            scrapeUrl: string;
            labels: Record<string, string>;
            health: string;
          }[];
        };
      };
      return body.data.activeTargets.sort((a, b) => a.scrapePool.localeCompare(b.scrapePool));
    };
    expect((await targets()).map((t) => t.scrapePool)).toEqual(["app"]);

    await prometheus.setTargets([
      { job: "app", url: `${plainUrl}/metrics` },
      { job: "app", url: `https://127.0.0.1:${securePort}/other?shard=2`, caFile },
    ]);
    const active = await targets();
    expect(active.map((t) => [t.scrapePool, t.labels["job"]])).toEqual([
      ["app", "app"],
      ["app#2", "app"],
    ]);
    expect(active[1]!.scrapeUrl).toBe(`https://127.0.0.1:${securePort}/other?shard=2`);

    while (secure.served.length < 10) await sleep(20);
    expect([...secure.requests]).toEqual(["/other?shard=2"]);
    expect((await targets()).map((t) => t.health)).toEqual(["up", "up"]);
    await sleep(200);
    // What the https target served is stored as served: each sample is the counter's value at its
    // own timestamp, 2 per virtual second.
    const selector = `x_total{job="app",instance="127.0.0.1:${securePort}"}`;
    const stored = await raw(prometheus.url, selector, 120, secure.now());
    expect(stored.length).toBeGreaterThanOrEqual(2);
    for (const [t, v] of stored) expect(v).toBeCloseTo(((t - START) / 1000) * 2, 6);
    // rate() over a window that ends at the newest stored sample and starts 1 ms before the oldest
    // (a range is open at its start) extrapolates by that 1 ms only: the counter's rate exactly,
    // however unevenly a busy machine spaced the scrapes (a window ending between scrapes, or a
    // late scrape at its start, lowers rate() by design).
    const [first, last] = [stored[0]!, stored.at(-1)!];
    const rate = await query(prometheus.url, `rate(${selector}[${last[0] - first[0] + 1}ms])`, last[0]);
    expect(rate).toHaveLength(1);
    expect(Number(rate[0]!.value![1])).toBeCloseTo(2, 6);

    await prometheus.setTargets([]);
    expect(await targets()).toEqual([]);
    await sleep(50);
    const count = secure.served.length;
    await sleep(200);
    expect(secure.served.length).toBe(count);

    const { url, dataDir } = prometheus;
    await prometheus.stop();
    prometheus = undefined;
    await expect(stat(dataDir)).rejects.toThrow(/ENOENT/);
    await expect(fetch(`${url}/-/ready`)).rejects.toThrow();
  });

  it("reports Prometheus's own error lines when a start fails, and leaves nothing behind", async () => {
    const baseDir = await mkdtemp(join(scratch, "base-"));
    const started = Date.now();
    const failure = startPrometheus({
      binary,
      baseDir,
      targets: [{ job: "app", url: "https://127.0.0.1:9/metrics", caFile: join(scratch, "missing-ca.pem") }],
      scrapeIntervalMs: 20,
    });
    await expect(failure).rejects.toThrow(
      /did not start scraping its targets: it logged an error: .*level=ERROR/,
    );
    await expect(failure).rejects.toThrow(
      /unable to read CA cert.*missing-ca\.pem: no such file or directory/,
    );
    await expect(failure).rejects.toThrow(/last lines of .*prometheus\.log/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await readdir(baseDir)).toEqual([]);
  });

  it("refuses an interval or a target it cannot scrape before starting anything", async () => {
    const baseDir = await mkdtemp(join(scratch, "base-"));
    await expect(
      startPrometheus({
        binary,
        baseDir,
        targets: [{ job: "app", url: "ftp://127.0.0.1/x" }],
        scrapeIntervalMs: 20,
      }),
    ).rejects.toThrow(/scheme must be http or https/);
    await expect(startPrometheus({ binary, baseDir, targets: [], scrapeIntervalMs: 0.5 })).rejects.toThrow(
      /positive whole number/,
    );
    expect(await readdir(baseDir)).toEqual([]);
  });
});
