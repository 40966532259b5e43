/**
 * LeadingReader with the real PrometheusClient against a fake Prometheus on loopback: what one
 * poll cycle reads for each policy's leading signal — the query at the operator's time, the
 * readings kept 30 minutes and started afresh when the signal changes, the bearer token from a
 * file, a Secret or the Azure credential, the CA from a Secret — and what a failure becomes: a
 * reason (the client's error kind, `Credential` or `Timeout`), the readings kept, no token in the
 * message, and never longer than the policy's timeout.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { LeadingSignalSpec } from "../api/index.js";
import type { LeadingObservation } from "../autoscale/leading.js";
import {
  type FakeHandler,
  type FakePrometheus,
  hangingAnswer,
  jsonAnswer,
  startFakePrometheus,
  vectorBody,
} from "../prometheus/fake-server.js";
import { PrometheusClient } from "../prometheus/index.js";
import { generateServerCertificate, type TlsMaterial } from "../shared/tls.js";
import {
  AZURE_PROMETHEUS_SCOPE,
  LeadingReader,
  type LeadingReaderDeps,
  type LeadingTarget,
  SECRET_TTL_MS,
} from "./leading.js";

/** The operator's clock: far from the real one, so a reading's time can only come from it. */
const T0 = Date.parse("2025-06-02T12:00:00.250Z");
const MINUTE_MS = 60_000;
/** Timer and scheduling latency allowed past a deadline on a busy 2-core machine, ms. */
const MARGIN_MS = 400;
const QUERY = 'sum(rate(http_server_request_duration_seconds_count{http_route="/chat/negotiate"}[1m]))';

const fakes: FakePrometheus[] = [];
const clients: PrometheusClient[] = [];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "leading-"));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fake(handler: FakeHandler, tls?: TlsMaterial): Promise<FakePrometheus> {
  const f = await startFakePrometheus(handler, tls);
  fakes.push(f);
  return f;
}

/** Answers `value()` as a one-sample vector at the evaluation time it was asked for (as Prometheus does). */
const answering =
  (value: () => string): FakeHandler =>
  (req, res) =>
    jsonAnswer(200, vectorBody(Number(req.params.get("time")), [{}, value()]))(req, res);

/** A settable clock. */
function clock(start = T0) {
  const c = { ms: start, now: () => c.ms };
  return c;
}

/** A reader on a fresh real client. */
function reader(deps: Omit<LeadingReaderDeps, "client">): LeadingReader {
  const client = new PrometheusClient();
  clients.push(client);
  return new LeadingReader({ client, ...deps });
}

function target(
  url: string,
  prometheus: Partial<LeadingSignalSpec["prometheus"]> = {},
  rest: Partial<Omit<LeadingSignalSpec, "prometheus">> = {},
  key = "chat/chat",
): LeadingTarget {
  return {
    key,
    namespace: key.split("/")[0] ?? "chat",
    spec: {
      prometheus: { serverAddress: url, query: QUERY, timeout: "2s", ...prometheus },
      measures: "NewConnectionsPerSecond",
      ...rest,
    },
  };
}

/** The observation of the one target `t`. */
async function readOne(r: LeadingReader, t: LeadingTarget): Promise<LeadingObservation> {
  const out = await r.read([t]);
  const o = out.get(t.key);
  if (!o) throw new Error(`no observation for ${t.key}`);
  return o;
}

const times = (o: LeadingObservation) => o.readings.map((x) => x.timeMs);

describe("LeadingReader: readings", () => {
  it("turns a good answer into a reading at the operator's time, sent as the evaluation time", async () => {
    const prom = await fake(answering(() => "42.5"));
    const c = clock();
    const o = await readOne(reader({ now: c.now }), target(prom.url));
    expect(o).toEqual({ readings: [{ timeMs: T0, value: 42.5 }] });
    expect(prom.seen).toHaveLength(1);
    const [req] = prom.seen;
    expect(req?.path).toBe("/api/v1/query");
    expect(req?.params.get("query")).toBe(QUERY);
    expect(req?.params.get("time")).toBe("1748865600.250");
    expect(Number(req?.params.get("time"))).toBe(c.now() / 1000);
    expect(req?.headers.authorization).toBeUndefined();
    // The server is told the deadline left: at most the policy's timeout.
    expect(Number.parseInt(req?.params.get("timeout") ?? "", 10)).toBeLessThanOrEqual(2000);
  });

  it("keeps readings for 30 minutes, through failures, and drops older ones", async () => {
    let n = 0;
    let failing = false;
    const prom = await fake((req, res) =>
      failing
        ? jsonAnswer(500, { status: "error", errorType: "internal", error: "boom" })(req, res)
        : answering(() => String(++n))(req, res),
    );
    const c = clock();
    const r = reader({ now: c.now });
    const t = target(prom.url);
    let o: LeadingObservation | undefined;
    for (const minutes of [0, 10, 20, 30]) {
      c.ms = T0 + minutes * MINUTE_MS;
      o = await readOne(r, t);
    }
    // Exactly 30 minutes old is still kept.
    expect(times(o ?? { readings: [] })).toEqual([0, 10, 20, 30].map((m) => T0 + m * MINUTE_MS));

    c.ms = T0 + 31 * MINUTE_MS;
    const after = await readOne(r, t);
    expect(times(after)).toEqual([10, 20, 30, 31].map((m) => T0 + m * MINUTE_MS));
    expect(after.readings.map((x) => x.value)).toEqual([2, 3, 4, 5]);

    // A failed read keeps what is younger than 30 minutes and still drops the rest.
    failing = true;
    c.ms = T0 + 45 * MINUTE_MS;
    const failed = await readOne(r, t);
    expect(failed.error?.reason).toBe("Http");
    expect(times(failed)).toEqual([20, 30, 31].map((m) => T0 + m * MINUTE_MS));
    expect(r.size).toBe(1);
  });

  it("starts afresh when the query, the server or the measure changes, and per policy", async () => {
    const a = await fake(answering(() => "1"));
    const b = await fake(answering(() => "2"));
    const c = clock();
    const r = reader({ now: c.now });
    const step = async (t: LeadingTarget) => {
      c.ms += MINUTE_MS;
      return readOne(r, t);
    };
    await step(target(a.url));
    expect((await step(target(a.url))).readings).toHaveLength(2);

    const changedQuery = await step(target(a.url, { query: `${QUERY} * 2` }));
    expect(changedQuery.readings).toEqual([{ timeMs: c.ms, value: 1 }]);
    expect((await step(target(a.url, { query: `${QUERY} * 2` }))).readings).toHaveLength(2);

    const changedServer = await step(target(b.url, { query: `${QUERY} * 2` }));
    expect(changedServer.readings).toEqual([{ timeMs: c.ms, value: 2 }]);

    const changedMeasure = await step(
      target(b.url, { query: `${QUERY} * 2` }, { measures: "NewConnectionsTotal" }),
    );
    expect(changedMeasure.readings).toEqual([{ timeMs: c.ms, value: 2 }]);

    // Another policy on the same query has its own list; forget() drops one.
    const other = await step(target(b.url, { query: `${QUERY} * 2` }, {}, "chat/other"));
    expect(other.readings).toHaveLength(1);
    expect(r.size).toBe(2);
    r.forget("chat/other");
    expect(r.size).toBe(1);
  });

  it("reads every target at once", async () => {
    const prom = await fake((req, res) => setTimeout(() => answering(() => "3")(req, res), 300));
    const r = reader({ now: clock().now });
    const started = performance.now();
    const out = await r.read([1, 2, 3].map((i) => target(prom.url, {}, {}, `ns/p${i}`)));
    // One after another would take 900 ms.
    expect(performance.now() - started).toBeLessThan(800);
    expect([...out.keys()].sort()).toEqual(["ns/p1", "ns/p2", "ns/p3"]);
    expect([...out.values()].every((o) => o.readings.length === 1 && o.error === undefined)).toBe(true);
    expect(prom.maxInFlight).toBe(3);
  });
});

describe("LeadingReader: credentials", () => {
  it("sends the token file's content as a bearer token, read again at each query", async () => {
    const prom = await fake(answering(() => "1"));
    const file = join(dir, "token");
    await writeFile(file, "tok-one\n");
    const c = clock();
    const r = reader({ now: c.now });
    const t = target(prom.url, { bearerTokenFile: file });
    expect((await readOne(r, t)).error).toBeUndefined();
    await writeFile(file, "tok-two\n");
    c.ms += MINUTE_MS;
    expect((await readOne(r, t)).error).toBeUndefined();
    expect(prom.seen.map((s) => s.headers.authorization)).toEqual(["Bearer tok-one", "Bearer tok-two"]);

    // The file gone: a Credential failure naming the file, nothing sent, the readings kept.
    await rm(file);
    c.ms += MINUTE_MS;
    const gone = await readOne(r, t);
    expect(gone.error?.reason).toBe("Credential");
    expect(gone.error?.message).toContain(file);
    expect(gone.readings).toHaveLength(2);
    expect(prom.seen).toHaveLength(2);
  });

  it("reads the token and the CA from Secrets, keeps them 60 s, and does not keep a failed read", async () => {
    const tls = await generateServerCertificate({
      caName: "leading test CA",
      serverName: "prometheus",
      dnsNames: ["localhost"],
      ipAddresses: ["127.0.0.1"],
    });
    const prom = await fake(
      answering(() => "7"),
      tls,
    );
    const secrets: Record<string, string> = {
      "chat/prom-token/token": "sec-tok\n",
      "chat/prom-ca/ca.crt": tls.caPem,
    };
    const asked: string[] = [];
    let failNext = true;
    const readSecret = async (namespace: string, name: string, key: string) => {
      const k = `${namespace}/${name}/${key}`;
      asked.push(k);
      if (k.endsWith("/token") && failNext) {
        failNext = false;
        throw new Error(`get Secret ${namespace}/${name}: Forbidden`);
      }
      const v = secrets[k];
      if (v === undefined) throw new Error(`get Secret ${namespace}/${name}: NotFound`);
      return v;
    };
    let elapsed = 0;
    const c = clock();
    const r = reader({ now: c.now, readSecret, elapsed: () => elapsed });
    const t = target(prom.url, {
      bearerTokenSecretRef: { name: "prom-token", key: "token" },
      caSecretRef: { name: "prom-ca", key: "ca.crt" },
    });

    // The first read of the token fails: Credential, nothing sent.
    const first = await readOne(r, t);
    expect(first.error).toEqual({ reason: "Credential", message: "get Secret chat/prom-token: Forbidden" });
    expect(prom.seen).toHaveLength(0);

    // Not kept: the next cycle asks again, and the query goes out with both over HTTPS.
    c.ms += MINUTE_MS;
    elapsed += 1_000;
    const second = await readOne(r, t);
    expect(second.error).toBeUndefined();
    expect(second.readings).toEqual([{ timeMs: c.ms, value: 7 }]);
    expect(prom.seen[0]?.headers.authorization).toBe("Bearer sec-tok");
    expect(asked).toEqual(["chat/prom-token/token", "chat/prom-token/token", "chat/prom-ca/ca.crt"]);

    // Within 60 s the Secrets are not read again; past it they are.
    secrets["chat/prom-token/token"] = "sec-tok-rotated";
    c.ms += MINUTE_MS;
    elapsed += SECRET_TTL_MS - 1;
    expect((await readOne(r, t)).error).toBeUndefined();
    expect(asked).toHaveLength(3);
    expect(prom.seen[1]?.headers.authorization).toBe("Bearer sec-tok");
    c.ms += MINUTE_MS;
    elapsed += 1;
    expect((await readOne(r, t)).error).toBeUndefined();
    expect(asked).toHaveLength(5);
    expect(prom.seen[2]?.headers.authorization).toBe("Bearer sec-tok-rotated");
  });

  it("asks the Azure credential for a token of Azure Monitor's Prometheus scope", async () => {
    const prom = await fake(answering(() => "1"));
    const scopes: (string | string[])[] = [];
    const credential: TokenCredential = {
      getToken: async (scope: string | string[], _options?: GetTokenOptions): Promise<AccessToken> => {
        scopes.push(scope);
        return { token: `az-tok-${scopes.length}`, expiresOnTimestamp: Date.now() + 3_600_000 };
      },
    };
    const c = clock();
    const r = reader({ now: c.now, azureCredential: credential });
    const t = target(prom.url, { useAzureCredential: true });
    expect((await readOne(r, t)).error).toBeUndefined();
    c.ms += MINUTE_MS;
    expect((await readOne(r, t)).error).toBeUndefined();
    expect(AZURE_PROMETHEUS_SCOPE).toBe("https://prometheus.monitor.azure.com/.default");
    expect(scopes.flat()).toEqual([AZURE_PROMETHEUS_SCOPE, AZURE_PROMETHEUS_SCOPE]);
    expect(prom.seen.map((s) => s.headers.authorization)).toEqual(["Bearer az-tok-1", "Bearer az-tok-2"]);

    // Without a credential, or when it fails: Credential, nothing sent.
    const none = await readOne(reader({ now: c.now }), t);
    expect(none.error?.reason).toBe("Credential");
    expect(none.error?.message).toContain("no Azure credential");
    const refusing: TokenCredential = {
      getToken: async () => {
        throw new Error("AADSTS700016: application not found");
      },
    };
    const refused = await readOne(reader({ now: c.now, azureCredential: refusing }), t);
    expect(refused.error?.reason).toBe("Credential");
    expect(refused.error?.message).toContain("AADSTS700016");
    expect(prom.seen).toHaveLength(2);
  });
});

describe("LeadingReader: within the policy's timeout", () => {
  /** Runs `read` and returns its observation with how long it took, ms. */
  async function timed(read: () => Promise<LeadingObservation>) {
    const started = performance.now();
    const o = await read();
    return { o, ms: performance.now() - started };
  }

  it("a hanging Prometheus: Timeout by the deadline, the readings kept, other targets unaffected", async () => {
    let hang = false;
    const slow = await fake((req, res) => (hang ? hangingAnswer(req, res) : answering(() => "5")(req, res)));
    const quick = await fake(answering(() => "6"));
    const c = clock();
    const r = reader({ now: c.now });
    const stuck = target(slow.url, { timeout: "1s" });
    await readOne(r, stuck);
    hang = true;
    c.ms += MINUTE_MS;
    const started = performance.now();
    const out = await r.read([stuck, target(quick.url, {}, {}, "chat/quick")]);
    const ms = performance.now() - started;
    const o = out.get(stuck.key);
    expect(o?.error?.reason).toBe("Timeout");
    expect(o?.error?.message).toContain("no answer within");
    expect(o?.readings).toEqual([{ timeMs: T0, value: 5 }]);
    expect(out.get("chat/quick")?.readings).toEqual([{ timeMs: c.ms, value: 6 }]);
    expect(ms).toBeGreaterThanOrEqual(990);
    expect(ms).toBeLessThan(1000 + MARGIN_MS);
  });

  it("a hanging Secret read: Timeout by the deadline, the readings kept, and asked again next time", async () => {
    const prom = await fake(answering(() => "8"));
    let hang = false;
    let asked = 0;
    const readSecret = (): Promise<string> => {
      asked++;
      return hang ? new Promise<string>(() => {}) : Promise.resolve("tok");
    };
    let elapsed = 0;
    const c = clock();
    const r = reader({ now: c.now, readSecret, elapsed: () => elapsed });
    const t = target(prom.url, { timeout: "1s", bearerTokenSecretRef: { name: "prom", key: "token" } });
    await readOne(r, t);
    // Past the Secret's 60 s, the API server stops answering.
    hang = true;
    elapsed += SECRET_TTL_MS;
    c.ms += MINUTE_MS;
    const { o, ms } = await timed(() => readOne(r, t));
    expect(o.error?.reason).toBe("Timeout");
    expect(o.error?.message).toBe("reading the credentials: no answer in 1000 ms");
    expect(o.readings).toEqual([{ timeMs: T0, value: 8 }]);
    expect(ms).toBeGreaterThanOrEqual(990);
    expect(ms).toBeLessThan(1000 + MARGIN_MS);
    expect(asked).toBe(2);

    // The unanswered read is not kept: the next cycle asks again and gets the token.
    hang = false;
    elapsed += 1_000;
    c.ms += MINUTE_MS;
    const next = await readOne(r, t);
    expect(next.error).toBeUndefined();
    expect(asked).toBe(3);
    expect(next.readings).toHaveLength(2);
    expect(prom.seen.map((s) => s.headers.authorization)).toEqual(["Bearer tok", "Bearer tok"]);
  });

  it("a hanging Azure credential: Timeout by the deadline, the readings kept", async () => {
    const prom = await fake(answering(() => "9"));
    let hang = false;
    const credential: TokenCredential = {
      getToken: () =>
        hang
          ? new Promise<AccessToken>(() => {})
          : Promise.resolve({ token: "az", expiresOnTimestamp: Date.now() + 3_600_000 }),
    };
    const c = clock();
    const r = reader({ now: c.now, azureCredential: credential });
    const t = target(prom.url, { timeout: "1s", useAzureCredential: true });
    await readOne(r, t);
    hang = true;
    c.ms += MINUTE_MS;
    const { o, ms } = await timed(() => readOne(r, t));
    expect(o.error?.reason).toBe("Timeout");
    expect(o.readings).toEqual([{ timeMs: T0, value: 9 }]);
    expect(ms).toBeGreaterThanOrEqual(990);
    expect(ms).toBeLessThan(1000 + MARGIN_MS);
    expect(prom.seen).toHaveLength(1);
  });
});

describe("LeadingReader: failures", () => {
  it.each<[string, string, FakeHandler, RegExp]>([
    [
      "500",
      "Http",
      jsonAnswer(500, { status: "error", errorType: "internal", error: "boom" }),
      /HTTP 500 \(internal: boom\)/,
    ],
    [
      "400 bad_data",
      "QueryError",
      jsonAnswer(400, { status: "error", errorType: "bad_data", error: 'parse error: unexpected "}"' }),
      /parse error: unexpected "}"/,
    ],
    ["NaN", "NotFinite", answering(() => "NaN"), /NaN/],
    [
      "two series",
      "ManySeries",
      jsonAnswer(200, vectorBody(T0 / 1000, [{ pod: "a" }, "1"], [{ pod: "b" }, "2"])),
      /2 series/,
    ],
  ])("%s → %s, the readings kept", async (_name, reason, bad, message) => {
    let failing = false;
    const prom = await fake((req, res) => (failing ? bad(req, res) : answering(() => "4")(req, res)));
    const c = clock();
    const r = reader({ now: c.now });
    const t = target(prom.url);
    await readOne(r, t);
    failing = true;
    c.ms += MINUTE_MS;
    const o = await readOne(r, t);
    expect(o.error?.reason).toBe(reason);
    expect(o.error?.message).toMatch(message);
    expect(o.error?.message.startsWith(prom.url)).toBe(true);
    expect(o.readings).toEqual([{ timeMs: T0, value: 4 }]);
  });

  it("connection refused → Unreachable", async () => {
    const gone = await startFakePrometheus(hangingAnswer);
    await gone.close();
    const o = await readOne(reader({ now: clock().now }), target(gone.url));
    expect(o.error?.reason).toBe("Unreachable");
    expect(o.error?.message).toContain("ECONNREFUSED");
    expect(o.readings).toEqual([]);
  });

  it("never shows the token, even when the server repeats it", async () => {
    // A proxy that puts the Authorization it was sent into its error body.
    const echo = await fake((req, res) =>
      jsonAnswer(401, {
        status: "error",
        errorType: "unauthorized",
        error: `bad ${req.headers.authorization}`,
      })(req, res),
    );
    const file = join(dir, "echo-token");
    await writeFile(file, "tok-SECRET-file\n");
    const credential: TokenCredential = {
      getToken: async () => ({ token: "tok-SECRET-azure", expiresOnTimestamp: Date.now() + 3_600_000 }),
    };
    const readSecret = async (_ns: string, name: string) =>
      name === "bad" ? "tok-SECRET with a space" : "tok-SECRET-secret";
    const r = reader({ now: clock().now, azureCredential: credential, readSecret });
    const out = await r.read([
      target(echo.url, { bearerTokenFile: file }, {}, "chat/file"),
      target(echo.url, { bearerTokenSecretRef: { name: "s", key: "k" } }, {}, "chat/secret"),
      target(echo.url, { useAzureCredential: true }, {}, "chat/azure"),
      // A token a header cannot carry: refused before anything is sent.
      target(echo.url, { bearerTokenSecretRef: { name: "bad", key: "k" } }, {}, "chat/bad"),
    ]);
    expect(echo.seen.map((s) => s.headers.authorization).sort()).toEqual([
      "Bearer tok-SECRET-azure",
      "Bearer tok-SECRET-file",
      "Bearer tok-SECRET-secret",
    ]);
    for (const key of ["chat/file", "chat/secret", "chat/azure"]) {
      const error = out.get(key)?.error;
      expect(error?.reason).toBe("Http");
      expect(error?.message).toContain("bad Bearer [token]");
      expect(error?.message).not.toContain("tok-SECRET");
    }
    expect(out.get("chat/bad")?.error?.reason).toBe("Credential");
    expect(JSON.stringify([...out.values()])).not.toContain("tok-SECRET");
  });
});
