/**
 * PrometheusClient against a fake Prometheus on loopback (node:http and node:https): the request
 * it sends, the answers it accepts, the typed errors, the deadline, the per-server bound and the
 * observations. Every server here answers within the test or is closed by it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { generateServerCertificate, type TlsMaterial } from "../shared/tls.js";
import { PrometheusClient } from "./client.js";
import { isPrometheusError, type PrometheusError } from "./errors.js";
import {
  type FakeHandler,
  type FakePrometheus,
  hangingAnswer as hang,
  jsonAnswer as json,
  startFakePrometheus,
  vectorBody,
} from "./fake-server.js";
import type { PrometheusQueryObservation } from "./observe.js";
import type { PrometheusServer } from "./server.js";

const fakes: FakePrometheus[] = [];
const clients: PrometheusClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

/** A fake Prometheus on 127.0.0.1, closed after the test; HTTPS when `tls` is given. */
async function startFake(handler: FakeHandler, tls?: TlsMaterial): Promise<FakePrometheus> {
  const fake = await startFakePrometheus(handler, tls);
  fakes.push(fake);
  return fake;
}

const T = 1_700_000_000.123;
const vector = (...samples: [Record<string, string>, string][]) => vectorBody(T, ...samples);
/** Timer and scheduling latency allowed past a deadline on a busy 2-core machine, ms. */
const MARGIN_MS = 200;

function client(options: ConstructorParameters<typeof PrometheusClient>[0] = {}): PrometheusClient {
  const c = new PrometheusClient(options);
  clients.push(c);
  return c;
}

/** The PrometheusError `promise` rejects with (fails the test if it resolves or throws another). */
async function failure(promise: Promise<unknown>): Promise<PrometheusError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPrometheusError(err)) throw new Error(`expected a PrometheusError, got ${String(err)}`);
  return err;
}

describe("PrometheusClient: requests and answers", () => {
  it("returns the one sample of a vector, POSTing query and timeout as a form", async () => {
    const fake = await startFake(json(200, vector([{ job: "chat" }, "42.5"])));
    const sample = await client().query(
      { url: fake.url, timeoutMs: 2000 },
      'sum(rate(negotiate_total{job="chat"}[1m]))',
    );
    expect(sample).toEqual({ value: 42.5, timeMs: 1_700_000_000_123, labels: { job: "chat" } });
    const [req] = fake.seen;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/api/v1/query");
    expect(req?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(req?.headers.accept).toBe("application/json");
    expect(req?.headers.authorization).toBeUndefined();
    expect(req?.params.get("query")).toBe('sum(rate(negotiate_total{job="chat"}[1m]))');
    expect(req?.params.has("time")).toBe(false);
    const timeout = req?.params.get("timeout") ?? "";
    expect(timeout).toMatch(/^\d+ms$/);
    expect(Number.parseInt(timeout, 10)).toBeGreaterThan(1000);
    expect(Number.parseInt(timeout, 10)).toBeLessThanOrEqual(2000);
  });

  it("returns a scalar and sends the evaluation time in seconds with GET", async () => {
    const fake = await startFake(
      json(200, { status: "success", data: { resultType: "scalar", result: [T, "7"] } }),
    );
    const sample = await client().query({ url: fake.url, timeoutMs: 2000, method: "GET" }, "scalar(up)", {
      timeMs: 1_699_999_940_500,
    });
    expect(sample).toEqual({ value: 7, timeMs: 1_700_000_000_123, labels: {} });
    expect(fake.seen[0]?.method).toBe("GET");
    expect(fake.seen[0]?.params.get("time")).toBe("1699999940.500");
    expect(fake.seen[0]?.params.get("query")).toBe("scalar(up)");
    expect(fake.seen[0]?.params.get("timeout")).toMatch(/^\d+ms$/);
  });

  it("keeps the path prefix of the base URL and sends the bearer token", async () => {
    const fake = await startFake(json(200, vector([{}, "1"])));
    await client().query({ url: `${fake.url}/prometheus/`, timeoutMs: 2000, bearerToken: "tok-123\n" }, "up");
    expect(fake.seen[0]?.path).toBe("/prometheus/api/v1/query");
    expect(fake.seen[0]?.headers.authorization).toBe("Bearer tok-123");
  });

  it("sends URL userinfo as Basic authentication", async () => {
    const fake = await startFake(json(200, vector([{}, "1"])));
    await client().query(
      { url: `${fake.url.replace("://", "://reader:p%40ss@")}/prom`, timeoutMs: 2000 },
      "up",
    );
    expect(fake.seen[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from("reader:p@ss").toString("base64")}`,
    );
    expect(fake.seen[0]?.path).toBe("/prom/api/v1/query");
  });

  it("takes a deadline of a fraction of a ms (what is left of a caller's own), rounded up", async () => {
    const fake = await startFake(json(200, vector([{}, "2"])));
    const sample = await client().query({ url: fake.url, timeoutMs: 1999.84 }, "up");
    expect(sample.value).toBe(2);
    expect(Number.parseInt(fake.seen[0]?.params.get("timeout") ?? "", 10)).toBeLessThanOrEqual(2000);
    const hanging = await startFake(hang);
    const err = await failure(client().query({ url: hanging.url, timeoutMs: 100.5 }, "up"));
    expect(err.kind).toBe("Timeout");
    expect(err.message).toContain("no answer within 101 ms");
  });

  it("passes Prometheus's warnings on", async () => {
    const fake = await startFake(json(200, { ...vector([{}, "3"]), warnings: ["PromQL info: x"] }));
    const sample = await client().query({ url: fake.url, timeoutMs: 2000 }, "up");
    expect(sample.warnings).toEqual(["PromQL info: x"]);
  });
});

describe("PrometheusClient: typed errors", () => {
  it.each([
    ["NaN", "NaN"],
    ["+Inf", "+Inf"],
    ["-Inf", "-Inf"],
  ])("%s → NotFinite", async (value, shown) => {
    const fake = await startFake(json(200, vector([{ job: "chat" }, value])));
    const err = await failure(client().query({ url: fake.url, timeoutMs: 2000 }, "x"));
    expect(err.kind).toBe("NotFinite");
    expect(err.message).toContain(shown);
    expect(err.transient).toBe(false);
  });

  it("empty vector → NoData", async () => {
    const fake = await startFake(json(200, vector()));
    const err = await failure(client().query({ url: fake.url, timeoutMs: 2000 }, "x"));
    expect(err.kind).toBe("NoData");
  });

  it("two series → ManySeries naming the count and sum()", async () => {
    const fake = await startFake(json(200, vector([{ pod: "a" }, "1"], [{ pod: "b" }, "2"])));
    const err = await failure(client().query({ url: fake.url, timeoutMs: 2000 }, "x"));
    expect(err.kind).toBe("ManySeries");
    expect(err.seriesCount).toBe(2);
    expect(err.message).toContain("2 series");
    expect(err.message).toContain("sum(");
    expect(err.message).toContain('pod="a"');
  });

  it("matrix → Unsupported", async () => {
    const fake = await startFake(
      json(200, {
        status: "success",
        data: { resultType: "matrix", result: [{ metric: {}, values: [[T, "1"]] }] },
      }),
    );
    const err = await failure(client().query({ url: fake.url, timeoutMs: 2000 }, "up[5m]"));
    expect(err.kind).toBe("Unsupported");
    expect(err.message).toContain("matrix");
  });

  it("400 bad_data and 422 execution → QueryError with Prometheus's message", async () => {
    const bad = await startFake(
      json(400, { status: "error", errorType: "bad_data", error: 'parse error: unexpected "}"' }),
    );
    const e400 = await failure(client().query({ url: bad.url, timeoutMs: 2000 }, "sum(}"));
    expect([e400.kind, e400.status, e400.errorType, e400.transient]).toEqual([
      "QueryError",
      400,
      "bad_data",
      false,
    ]);
    expect(e400.message).toContain('parse error: unexpected "}"');

    const exec = await startFake(
      json(422, { status: "error", errorType: "execution", error: "many-to-many matching not allowed" }),
    );
    const e422 = await failure(client().query({ url: exec.url, timeoutMs: 2000 }, "a / b"));
    expect([e422.kind, e422.status, e422.errorType]).toEqual(["QueryError", 422, "execution"]);
    expect(e422.message).toContain("many-to-many");
  });

  it("503 with Retry-After → Http, transient, with the wait", async () => {
    const fake = await startFake(
      json(
        503,
        { status: "error", errorType: "unavailable", error: "too many queries" },
        { "retry-after": "7" },
      ),
    );
    const err = await failure(client().query({ url: fake.url, timeoutMs: 2000 }, "up"));
    expect([err.kind, err.status, err.errorType, err.retryAfterMs]).toEqual([
      "Http",
      503,
      "unavailable",
      7000,
    ]);
    expect(err.transient).toBe(true);
    expect(err.message).toContain("too many queries");
    expect(err.message).toContain("retry after 7s");
  });

  it("500 with an HTML page → Http naming the content type", async () => {
    const fake = await startFake((_req, res) => {
      res.writeHead(500, { "content-type": "text/html; charset=utf-8" });
      res.end("<html>oops</html>");
    });
    const err = await failure(client().query({ url: fake.url, timeoutMs: 2000 }, "up"));
    expect([err.kind, err.status, err.retryAfterMs]).toEqual(["Http", 500, undefined]);
    expect(err.message).toContain("text/html");
    expect(err.transient).toBe(true);
  });

  it("200 that is not JSON → BadResponse", async () => {
    const fake = await startFake((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("up 1");
    });
    const err = await failure(client().query({ url: fake.url, timeoutMs: 2000 }, "up"));
    expect(err.kind).toBe("BadResponse");
  });

  it("an answer longer than the cap → BadResponse", async () => {
    const many = vector(
      ...Array.from({ length: 200 }, (_, i): [Record<string, string>, string] => [{ pod: `p${i}` }, "1"]),
    );
    const fake = await startFake(json(200, many));
    const err = await failure(
      client({ maxResponseBytes: 1024 }).query({ url: fake.url, timeoutMs: 2000 }, "x"),
    );
    expect(err.kind).toBe("BadResponse");
    expect(err.message).toContain("larger than 1024 bytes");
  });

  it("a redirect is not followed → Http", async () => {
    const fake = await startFake((_req, res) => {
      res.writeHead(302, { location: "http://127.0.0.1:1/elsewhere" });
      res.end();
    });
    const err = await failure(client().query({ url: fake.url, timeoutMs: 2000, bearerToken: "t" }, "up"));
    expect([err.kind, err.status]).toEqual(["Http", 302]);
    expect(fake.seen).toHaveLength(1);
  });

  it("connection refused → Unreachable", async () => {
    const gone = await startFake(hang);
    await gone.close();
    fakes.splice(fakes.indexOf(gone), 1);
    const err = await failure(client().query({ url: gone.url, timeoutMs: 2000 }, "up"));
    expect([err.kind, err.code, err.transient]).toEqual(["Unreachable", "ECONNREFUSED", true]);
  });

  it("a hanging server → Timeout by the deadline", async () => {
    const fake = await startFake(hang);
    const started = performance.now();
    const err = await failure(client().query({ url: fake.url, timeoutMs: 300 }, "up"));
    const elapsed = performance.now() - started;
    expect(err.kind).toBe("Timeout");
    expect(err.transient).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(300 + MARGIN_MS);
  });

  it("the caller's abort ends the call with the caller's reason", async () => {
    const fake = await startFake(hang);
    const observed: PrometheusQueryObservation[] = [];
    const controller = new AbortController();
    const reason = new Error("policy deleted");
    setTimeout(() => controller.abort(reason), 50);
    const started = performance.now();
    const err = await client({ observe: (o) => observed.push(o) })
      .query({ url: fake.url, timeoutMs: 5000 }, "up", { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(err).toBe(reason);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(observed.map((o) => o.outcome)).toEqual(["aborted"]);
  });

  it("never shows the token or the URL's userinfo", async () => {
    const fake = await startFake(json(500, { status: "error", errorType: "internal", error: "boom" }));
    const observed: PrometheusQueryObservation[] = [];
    const url = `${fake.url.replace("://", "://admin:hunter2@")}/prom`;
    const err = await failure(
      client({ observe: (o) => observed.push(o) }).query(
        { url, timeoutMs: 2000, bearerToken: "tok-SECRET" },
        "up",
      ),
    );
    expect(fake.seen[0]?.headers.authorization).toBe("Bearer tok-SECRET");
    const shown = [
      err.message,
      err.stack ?? "",
      JSON.stringify(err),
      err.server,
      JSON.stringify(observed),
    ].join("\n");
    expect(err.server).toBe(`${fake.url}/prom`);
    for (const secret of ["tok-SECRET", "hunter2", "admin"]) expect(shown).not.toContain(secret);
    expect(observed[0]?.server).toBe(`${fake.url}/prom`);

    const refused = await failure(
      client().query(
        { url: "http://admin:hunter2@127.0.0.1:1/prom", timeoutMs: 2000, bearerToken: "tok-SECRET" },
        "up",
      ),
    );
    expect(refused.kind).toBe("Unreachable");
    expect(`${refused.message}${JSON.stringify(refused)}`).not.toMatch(/hunter2|admin|tok-SECRET/);
  });
});

describe("PrometheusClient: HTTPS", () => {
  let tls: TlsMaterial;
  let other: TlsMaterial;
  beforeAll(async () => {
    const names = { dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"] };
    [tls, other] = await Promise.all([
      generateServerCertificate({ caName: "prom test CA", serverName: "prometheus", ...names }),
      generateServerCertificate({ caName: "another CA", serverName: "prometheus", ...names }),
    ]);
  });

  it("trusts the given CA, and refuses the certificate without it or with another CA (Tls)", async () => {
    const fake = await startFake(json(200, vector([{}, "5"])), tls);
    const c = client();
    const ok = await c.query({ url: fake.url, timeoutMs: 2000, caPem: tls.caPem, bearerToken: "t" }, "up");
    expect(ok.value).toBe(5);
    expect(fake.seen[0]?.headers.authorization).toBe("Bearer t");

    const untrusted = await failure(c.query({ url: fake.url, timeoutMs: 2000 }, "up"));
    expect(untrusted.kind).toBe("Tls");
    expect(untrusted.transient).toBe(false);
    const wrongCa = await failure(c.query({ url: fake.url, timeoutMs: 2000, caPem: other.caPem }, "up"));
    expect(wrongCa.kind).toBe("Tls");
    expect(fake.seen).toHaveLength(1);
  });
});

describe("PrometheusClient: concurrency and observations", () => {
  it("keeps at most maxConcurrentPerServer requests in flight per server", async () => {
    const fake = await startFake((req, res) =>
      setTimeout(() => json(200, vector([{}, req.params.get("query") ?? ""]))(req, res), 30),
    );
    const c = client({ maxConcurrentPerServer: 3 });
    const calls = Array.from({ length: 12 }, (_, i) =>
      c.query({ url: fake.url, timeoutMs: 3000 }, String(i)).then((s) => s.value),
    );
    expect(c.pending()).toEqual({ [fake.url]: { active: 3, queued: 9 } });
    const values = await Promise.all(calls);
    expect(values).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(fake.maxInFlight).toBe(3);
    expect(fake.seen).toHaveLength(12);
  });

  it("queued calls behind a hanging server still end by their deadline", async () => {
    const fake = await startFake(hang);
    const c = client({ maxConcurrentPerServer: 2 });
    const started = performance.now();
    const ends = await Promise.all(
      Array.from({ length: 6 }, () =>
        failure(c.query({ url: fake.url, timeoutMs: 300 }, "up")).then((err) => ({
          err,
          at: performance.now() - started,
        })),
      ),
    );
    for (const { err, at } of ends) {
      expect(err.kind).toBe("Timeout");
      expect(at).toBeLessThan(300 + MARGIN_MS);
    }
    expect(ends.filter(({ err }) => err.message.includes("waiting behind other queries"))).toHaveLength(4);
    expect(fake.maxInFlight).toBeLessThanOrEqual(2);
  });

  it("bounds each server apart", async () => {
    const a = await startFake(hang);
    const b = await startFake(json(200, vector([{}, "1"])));
    const c = client({ maxConcurrentPerServer: 1 });
    const stuck = failure(c.query({ url: a.url, timeoutMs: 400 }, "up"));
    const started = performance.now();
    expect((await c.query({ url: b.url, timeoutMs: 400 }, "up")).value).toBe(1);
    expect(performance.now() - started).toBeLessThan(200);
    expect((await stuck).kind).toBe("Timeout");
  });

  it("reports every call once with its outcome", async () => {
    const fake = await startFake((req, res) => {
      if (req.params.get("query") === "hang") return;
      json(200, req.params.get("query") === "none" ? vector() : vector([{}, "1"]))(req, res);
    });
    const observed: PrometheusQueryObservation[] = [];
    let clock = 1_000;
    const c = client({
      observe: (o) => observed.push(o),
      now: () => {
        clock += 250;
        return clock;
      },
    });
    const server: PrometheusServer = { url: fake.url, timeoutMs: 200 };
    await c.query(server, "ok");
    await failure(c.query(server, "none"));
    await failure(c.query(server, "hang"));
    await failure(c.query({ url: "http://127.0.0.1:1", timeoutMs: 200 }, "up"));
    expect(observed.map((o) => o.outcome)).toEqual(["ok", "NoData", "Timeout", "Unreachable"]);
    expect(observed.map((o) => o.server)).toEqual([fake.url, fake.url, fake.url, "http://127.0.0.1:1"]);
    expect(observed.every((o) => o.seconds === 0.25)).toBe(true);
  });

  it("close ends queued and running calls", async () => {
    const fake = await startFake(hang);
    const c = new PrometheusClient({ maxConcurrentPerServer: 1 });
    const started = performance.now();
    const calls = [1, 2].map(() => failure(c.query({ url: fake.url, timeoutMs: 5000 }, "up")));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await c.close();
    const errs = await Promise.all(calls);
    expect(errs.map((e) => e.kind)).toEqual(["Unreachable", "Unreachable"]);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("refuses an unusable server before sending or observing anything", async () => {
    const observed: PrometheusQueryObservation[] = [];
    const c = client({ observe: (o) => observed.push(o) });
    await expect(c.query({ url: "ftp://x", timeoutMs: 100 }, "up")).rejects.toThrow(TypeError);
    await expect(c.query({ url: "http://x", timeoutMs: 0 }, "up")).rejects.toThrow(RangeError);
    await expect(c.query({ url: "http://x", timeoutMs: 100 }, " ")).rejects.toThrow(TypeError);
    expect(observed).toEqual([]);
  });
});

afterAll(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});
