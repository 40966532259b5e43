/**
 * The emulator's HTTPS server: parses each request, serves the control API and the app servers'
 * `/metrics` (`appservers.ts`; no token, not logged, no faults), checks the bearer token, applies
 * fault rules, ARM's rate limit (ARM requests) or the metrics plane's (getBatch, when switched on:
 * `ratelimit.ts`), then routes to the ARM or metrics handler and writes the answer
 * with ARM's usual headers (`x-ms-request-id`, `x-ms-correlation-request-id`,
 * `x-ms-routing-request-id`, `x-ms-ratelimit-remaining-subscription-reads|writes`).
 *
 * Optionally a second, plain-HTTP server on loopback serves the app servers' `/metrics` alone, for a
 * Prometheus scraping without the emulator's CA.
 */
import { randomUUID } from "node:crypto";
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer, type Server } from "node:https";
import { setTimeout as sleep } from "node:timers/promises";
import type { TlsMaterial } from "../shared/tls.js";
import { handleAppServers } from "./appservers.js";
import { type ArmFaultFlags, handleArm } from "./arm.js";
import { type EmulatorControl, handleControl, type RequestRecord } from "./control.js";
import type { FaultRule, FaultTable } from "./faults.js";
import {
  armError,
  type EmulatorRequest,
  type EmulatorResponse,
  INVALID_JSON,
  json,
  queryParam,
} from "./http.js";
import { batchResourceIds, handleGetBatch, isGetBatch, type MonitorFaultFlags } from "./monitor.js";
import type { MetricsThrottle, RateLimiter } from "./ratelimit.js";
import type { RequestLog } from "./request-log.js";
import type { EmulatorState } from "./state.js";
import { recordExchange, type TrafficRecorder } from "./traffic.js";

/** Largest request body accepted, bytes. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface EmulatorServerDeps {
  state: EmulatorState;
  faults: FaultTable;
  control: EmulatorControl;
  log: RequestLog;
  tls: TlsMaterial;
  /** ARM rate limiter; none = no throttling except by faults. */
  limiter?: RateLimiter;
  /** The metrics plane's throttling (getBatch), off until switched on. */
  metricsThrottle?: MetricsThrottle;
  /** Items per page of ARM lists. */
  armPageSize?: number;
  /** Called for every request served (not control requests). */
  onRequest?: (record: RequestRecord) => void;
  /** Told every answered Azure request with its answer (`traffic.ts`). */
  recordTraffic?: TrafficRecorder;
}

export interface EmulatorServer {
  server: Server;
  /** Starts listening; resolves with the port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops: closes every connection (hanging requests too), cancels delays. */
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error("request body too large"));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function compactTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** The URL's path, percent-decoded (as sent when it does not decode). */
function decodedPath(url: URL): string {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return url.pathname;
  }
}

/** `{ apiVersion }` of a request URL that has one, else `{}`. */
function apiVersionOf(url: URL): { apiVersion?: string } {
  const apiVersion = queryParam(url.searchParams, "api-version");
  return apiVersion === undefined ? {} : { apiVersion };
}

function subscriptionOf(path: string): string | undefined {
  const m = /\/subscriptions\/([^/]+)/i.exec(path);
  return m?.[1];
}

/** The parts of an incoming request the emulator routes on; `url` keeps the query as sent. */
interface ParsedRequest {
  ereq: EmulatorRequest;
  url: URL;
}

/** Parses the body (JSON, `INVALID_JSON` when it does not parse, `undefined` when blank) and URL. */
function parseRequest(req: IncomingMessage, raw: string): ParsedRequest {
  let body: unknown;
  if (raw.trim() !== "") {
    try {
      body = JSON.parse(raw);
    } catch {
      body = INVALID_JSON;
    }
  }
  const host = req.headers.host ?? "127.0.0.1";
  // The target is a path: `//subscriptions/…` (what `@azure/arm-resources`' `getById` sends for an
  // ID that starts with `/`) is that path, not a host; ARM reads repeated slashes as one.
  const target = req.url?.startsWith("/") ? req.url : `/${req.url ?? ""}`;
  const url = new URL(`https://${host}${target}`);
  const ereq: EmulatorRequest = {
    method: (req.method ?? "GET").toUpperCase(),
    path: decodedPath(url).replace(/\/{2,}/g, "/"),
    query: url.searchParams,
    headers: req.headers,
    body,
    baseUrl: `https://${host}`,
  };
  return { ereq, url };
}

/** The getBatch query parameters a request record keeps: metric names, aggregation, time span. */
function batchQueryFields(
  query: URLSearchParams,
): Pick<RequestRecord, "metricNames" | "aggregation" | "span"> {
  const metricNames = query.get("metricnames");
  const aggregation = query.get("aggregation");
  const start = query.get("starttime");
  const end = query.get("endtime");
  return {
    ...(metricNames ? { metricNames: metricNames.split(",") } : {}),
    ...(aggregation ? { aggregation } : {}),
    ...(start && end ? { span: { start, end } } : {}),
  };
}

/** The log record of an Azure request received at `nowMs` (virtual ms), status 0 until answered. */
function requestRecord({ ereq, url }: ParsedRequest, nowMs: number): RequestRecord {
  const { method, path, body } = ereq;
  const batch = isGetBatch(ereq);
  const subscriptionId = subscriptionOf(path);
  const resourceIds = batch ? batchResourceIds(body) : undefined;
  return {
    at: new Date(nowMs).toISOString(),
    method,
    path,
    kind: batch ? "getBatch" : method === "GET" ? "armRead" : "armWrite",
    status: 0,
    ...(subscriptionId ? { subscriptionId } : {}),
    ...apiVersionOf(url),
    ...(!batch && method !== "GET" && body !== undefined && body !== INVALID_JSON ? { body } : {}),
    ...(batch ? { region: (path.split("/")[2] ?? "").toLowerCase() } : {}),
    ...(resourceIds ? { resourceIds } : {}),
    ...(batch ? batchQueryFields(url.searchParams) : {}),
  };
}

/** ARM's request-tracking headers for an answer at `nowMs` (no routing ID on the metrics plane). */
function trackingHeaders(req: IncomingMessage, batch: boolean, nowMs: number): Record<string, string> {
  const requestId = randomUUID();
  const headers: Record<string, string> = {
    "x-ms-request-id": requestId,
    "x-ms-correlation-request-id": String(req.headers["x-ms-client-request-id"] ?? randomUUID()),
  };
  if (!batch) headers["x-ms-routing-request-id"] = `EMULATOR:${compactTime(nowMs)}:${requestId}`;
  return headers;
}

/** The answer to a request refused before any fault or route: invalid JSON (400), no bearer (401). */
function refusal(ereq: EmulatorRequest): EmulatorResponse | undefined {
  if (ereq.body === INVALID_JSON)
    return armError(400, "InvalidRequestContent", "The request content is not valid JSON.");
  if (!/^Bearer\s+\S+/i.test(String(ereq.headers["authorization"] ?? ""))) {
    return armError(
      401,
      "AuthenticationFailed",
      "Authentication failed. The 'Authorization' header is missing or is not a Bearer token.",
    );
  }
  return undefined;
}

/**
 * What a matched fault rule does to a request: answer it now, drop it (`hang` leaves it unanswered,
 * `reset` destroys the socket), delay it (ms), or let it through with ARM or metrics flags set.
 */
type FaultEffect =
  | { kind: "answer"; response: EmulatorResponse }
  | { kind: "drop"; reset: boolean }
  | { kind: "delay"; ms: number }
  | { kind: "flags"; arm: ArmFaultFlags; monitor: MonitorFaultFlags };

/** The effect of `rule`; `nowMs` (virtual ms) dates a `Retry-After` given as a date. */
function faultEffect(rule: FaultRule, nowMs: () => number): FaultEffect {
  const a = rule.action;
  const flags = (arm: ArmFaultFlags, monitor: MonitorFaultFlags = {}): FaultEffect => ({
    kind: "flags",
    arm,
    monitor,
  });
  switch (a.kind) {
    case "status": {
      const extra: Record<string, string> = {};
      if (a.retryAfterSeconds !== undefined) {
        extra["retry-after"] =
          a.retryAfterFormat === "date"
            ? new Date(nowMs() + a.retryAfterSeconds * 1000).toUTCString()
            : String(a.retryAfterSeconds);
      }
      const message = a.message ?? `Injected fault ${rule.id}.`;
      return {
        kind: "answer",
        response: armError(a.status, a.code ?? defaultCode(a.status), message, extra),
      };
    }
    case "delay":
      return { kind: "delay", ms: a.ms };
    case "hang":
      return { kind: "drop", reset: false };
    case "reset":
      return { kind: "drop", reset: true };
    case "nullSeries":
      return flags({}, { nullSeries: true });
    case "emptyTimeseries":
      return flags({}, { emptyTimeseries: true });
    case "metricError":
      return flags(
        {},
        {
          metricError: {
            ...(a.metrics ? { metrics: a.metrics } : {}),
            ...(a.code !== undefined ? { code: a.code } : {}),
            ...(a.message !== undefined ? { message: a.message } : {}),
          },
        },
      );
    case "notApplied":
      return flags({ notApplied: true });
    case "failUpdate":
      return flags({ failUpdate: true });
    case "cancelUpdate":
      return flags({ cancelUpdate: true });
    case "longUpdate":
      return flags({ updateSeconds: a.seconds });
    case "respond":
      return { kind: "answer", response: json(a.status ?? 200, a.body) };
  }
}

/**
 * ARM's per-subscription rate limit for an ARM request at `nowMs`: a 429 answer when the bucket is
 * empty, else the `x-ms-ratelimit-remaining-subscription-reads|writes` header to send.
 */
function armRateLimit(
  limiter: RateLimiter,
  subscriptionId: string,
  method: string,
  nowMs: number,
): { refused: EmulatorResponse } | { header: [string, string] } {
  const bucket = method === "GET" ? "reads" : "writes";
  const taken = limiter.take(subscriptionId, bucket, nowMs);
  if (!taken.ok) {
    return {
      refused: armError(
        429,
        "SubscriptionRequestsThrottled",
        `Number of ${bucket === "reads" ? "read" : "write"} requests for subscription '${subscriptionId}' exceeded the limit. Please try again after '${taken.retryAfterSeconds}' seconds.`,
        { "retry-after": String(taken.retryAfterSeconds) },
      ),
    };
  }
  return { header: [`x-ms-ratelimit-remaining-subscription-${bucket}`, String(taken.remaining)] };
}

/** The metrics plane's throttling of a getBatch at `nowMs`: its refusal, or none when let through or off. */
function metricsRateLimit(
  throttle: MetricsThrottle,
  subscriptionId: string,
  nowMs: number,
): EmulatorResponse | undefined {
  const throttled = throttle.take(subscriptionId, nowMs);
  if (!throttled || throttled.ok) return undefined;
  return armError(
    throttle.spec?.status ?? 429,
    "TooManyRequests",
    `The metrics:getBatch requests for subscription '${subscriptionId}' exceeded the limit. Please retry after ${throttled.retryAfterSeconds} seconds.`,
    { "retry-after": String(throttled.retryAfterSeconds) },
  );
}

/** One Azure request in flight: what it answers with and where it is logged. */
interface Exchange {
  deps: EmulatorServerDeps;
  req: IncomingMessage;
  res: ServerResponse;
  ereq: EmulatorRequest;
  record: RequestRecord;
  /** Headers every answer carries (tracking, rate-limit remaining). */
  headers: Record<string, string>;
}

/** Logs the request with its answer's status (and the fault rule that answered), then writes it. */
function finish(
  ex: Exchange,
  response: EmulatorResponse,
  extra: { fault?: FaultRule; rateLimited?: boolean } = {},
): void {
  const { deps, record } = ex;
  record.status = response.status;
  if (extra.fault) record.fault = extra.fault.id;
  deps.log.add(record, extra.rateLimited ? { rateLimited: true } : {});
  deps.onRequest?.(record);
  recordExchange(deps.recordTraffic, ex.ereq, ex.req.url ?? "/", response, ex.headers);
  write(ex.res, response, ex.headers);
}

/**
 * Applies the fault rule matching the request, if any. Returns the flags to route with, or
 * `undefined` when the fault has answered or dropped the request. A delay waits `ms` or until
 * `stopping` aborts (then it answers at once).
 */
async function applyFault(
  ex: Exchange,
  resourceIds: string[] | undefined,
  stopping: AbortSignal,
): Promise<{ arm: ArmFaultFlags; monitor: MonitorFaultFlags } | undefined> {
  const { deps, ereq, record } = ex;
  const rule = deps.faults.match({
    method: ereq.method,
    path: ereq.path,
    query: ereq.query,
    ...(resourceIds ? { resourceIds } : {}),
  });
  if (!rule) return { arm: {}, monitor: {} };
  const effect = faultEffect(rule, () => deps.state.clock.nowMs());
  switch (effect.kind) {
    case "answer":
      finish(ex, effect.response, { fault: rule });
      return undefined;
    case "drop":
      // a hang is never answered; its connection closes when the emulator stops
      record.status = 0;
      record.fault = rule.id;
      deps.log.add(record);
      deps.onRequest?.(record);
      if (effect.reset) ex.req.socket.destroy();
      return undefined;
    case "delay":
      await sleep(effect.ms, undefined, { signal: stopping }).catch(() => {}); // stopping: answer now
      record.fault = rule.id;
      return { arm: {}, monitor: {} };
    case "flags":
      record.fault = rule.id;
      return { arm: effect.arm, monitor: effect.monitor };
  }
}

/** Serves one request: control API and app servers first, then an Azure request end to end. */
async function handle(
  deps: EmulatorServerDeps,
  stopping: AbortSignal,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const parsed = parseRequest(req, await readBody(req));
  const { ereq } = parsed;
  const control = handleControl(ereq, deps.control) ?? handleAppServers(ereq, deps.state);
  if (control) return write(res, control, {});

  const now = deps.state.clock.nowMs();
  const batch = isGetBatch(ereq);
  const record = requestRecord(parsed, now);
  const ex: Exchange = { deps, req, res, ereq, record, headers: trackingHeaders(req, batch, now) };
  const refused = refusal(ereq);
  if (refused) return finish(ex, refused);

  const flags = await applyFault(ex, record.resourceIds, stopping);
  if (!flags) return;

  const { subscriptionId } = record;
  if (!batch && deps.limiter && subscriptionId) {
    const limited = armRateLimit(deps.limiter, subscriptionId, ereq.method, now);
    if ("refused" in limited) return finish(ex, limited.refused, { rateLimited: true });
    ex.headers[limited.header[0]] = limited.header[1];
  }
  if (batch && subscriptionId && deps.metricsThrottle) {
    const throttled = metricsRateLimit(deps.metricsThrottle, subscriptionId, now);
    if (throttled) return finish(ex, throttled, { rateLimited: true });
  }

  const response = batch
    ? handleGetBatch(ereq, deps.state, flags.monitor)
    : handleArm(
        ereq,
        { state: deps.state, ...(deps.armPageSize ? { pageSize: deps.armPageSize } : {}) },
        flags.arm,
      );
  finish(ex, response ?? armError(404, "NotFound", `The emulator has no route ${ereq.method} ${ereq.path}.`));
}

/** Builds the server; call `listen` to start it. */
export function createEmulatorServer(deps: EmulatorServerDeps): EmulatorServer {
  const stopping = new AbortController();
  const server = createServer({ key: deps.tls.keyPem, cert: deps.tls.certPem }, (req, res) => {
    handle(deps, stopping.signal, req, res).catch((err: unknown) => {
      if (res.headersSent || res.destroyed) return;
      write(res, armError(500, "InternalServerError", `emulator error: ${(err as Error).message}`), {});
    });
  });
  return {
    server,
    listen: (host, port) => listenOn(server, host, port),
    close() {
      stopping.abort();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function write(res: ServerResponse, response: EmulatorResponse, extra: Record<string, string>): void {
  if (res.destroyed) return;
  const headers: Record<string, string> = { ...extra, ...response.headers };
  let text = response.text ?? "";
  if (response.text === undefined && response.body !== undefined) {
    text = JSON.stringify(response.body);
    headers["content-type"] = "application/json; charset=utf-8";
  }
  headers["content-length"] = String(Buffer.byteLength(text));
  res.writeHead(response.status, headers);
  res.end(text);
}

/** A plain-HTTP server that serves the app servers' `/metrics` only (404 for anything else). */
export interface AppServerHttpServer {
  server: HttpServer;
  /** Starts listening; resolves with the port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops, closing every connection. */
  close(): Promise<void>;
}

/** Builds the plain-HTTP app-server server; call `listen` to start it. */
export function createAppServerHttpServer(state: EmulatorState): AppServerHttpServer {
  const server = createHttpServer((req, res) => {
    const host = req.headers.host ?? "127.0.0.1";
    const url = new URL(req.url ?? "/", `http://${host}`);
    const path = decodedPath(url);
    const ereq: EmulatorRequest = {
      method: (req.method ?? "GET").toUpperCase(),
      path,
      query: url.searchParams,
      headers: req.headers,
      body: undefined,
      baseUrl: `http://${host}`,
    };
    try {
      const response =
        handleAppServers(ereq, state) ??
        armError(
          404,
          "NotFound",
          `this port serves /appservers/{instanceName}/metrics only, not ${url.pathname}`,
        );
      write(res, response, {});
    } catch (err) {
      write(res, armError(500, "InternalServerError", `emulator error: ${(err as Error).message}`), {});
    }
    req.resume();
  });
  return {
    server,
    listen: (host, port) => listenOn(server, host, port),
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** Starts `server` on `host:port`; resolves with the port it got. */
function listenOn(server: Server | HttpServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

function defaultCode(status: number): string {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "AuthenticationFailed";
    case 403:
      return "AuthorizationFailed";
    case 404:
      return "ResourceNotFound";
    case 409:
      return "Conflict";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    default:
      return status >= 500 ? "InternalServerError" : "BadRequest";
  }
}
