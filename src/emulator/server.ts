/**
 * The emulator's HTTPS server: parses each request, serves the control API and the app servers'
 * `/metrics` (`appservers.ts`; no token, not logged, no faults), checks the bearer token, applies
 * fault rules, ARM's rate limit, then routes to the ARM or metrics handler and writes the answer
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
import type { RateLimiter } from "./ratelimit.js";
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

/** Builds the server; call `listen` to start it. */
export function createEmulatorServer(deps: EmulatorServerDeps): EmulatorServer {
  const stopping = new AbortController();
  const server = createServer({ key: deps.tls.keyPem, cert: deps.tls.certPem }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent || res.destroyed) return;
      write(res, armError(500, "InternalServerError", `emulator error: ${(err as Error).message}`), {});
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: unknown;
    if (raw.trim() !== "") {
      try {
        body = JSON.parse(raw);
      } catch {
        body = INVALID_JSON;
      }
    }
    const host = req.headers.host ?? "127.0.0.1";
    const url = new URL(req.url ?? "/", `https://${host}`);
    const path = decodedPath(url);
    const method = (req.method ?? "GET").toUpperCase();
    const ereq: EmulatorRequest = {
      method,
      path,
      query: url.searchParams,
      headers: req.headers,
      body,
      baseUrl: `https://${host}`,
    };

    const control = handleControl(ereq, deps.control) ?? handleAppServers(ereq, deps.state);
    if (control) return write(res, control, {});

    const now = deps.state.clock.nowMs();
    const batch = isGetBatch(ereq);
    const kind: RequestRecord["kind"] = batch ? "getBatch" : method === "GET" ? "armRead" : "armWrite";
    const subscriptionId = subscriptionOf(path);
    const resourceIds = batch ? batchResourceIds(body) : undefined;
    const record: RequestRecord = {
      at: new Date(now).toISOString(),
      method,
      path,
      kind,
      status: 0,
      ...(subscriptionId ? { subscriptionId } : {}),
      ...apiVersionOf(url),
      ...(!batch && method !== "GET" && body !== undefined && body !== INVALID_JSON ? { body } : {}),
      ...(batch ? { region: (path.split("/")[2] ?? "").toLowerCase() } : {}),
      ...(resourceIds ? { resourceIds } : {}),
      ...(batch && url.searchParams.get("starttime") && url.searchParams.get("endtime")
        ? {
            span: {
              start: url.searchParams.get("starttime") as string,
              end: url.searchParams.get("endtime") as string,
            },
          }
        : {}),
    };
    const requestId = randomUUID();
    const headers: Record<string, string> = {
      "x-ms-request-id": requestId,
      "x-ms-correlation-request-id": String(req.headers["x-ms-client-request-id"] ?? randomUUID()),
    };
    if (!batch) headers["x-ms-routing-request-id"] = `EMULATOR:${compactTime(now)}:${requestId}`;
    const finish = (response: EmulatorResponse, extra: { fault?: FaultRule; rateLimited?: boolean } = {}) => {
      record.status = response.status;
      if (extra.fault) record.fault = extra.fault.id;
      deps.log.add(record, extra.rateLimited ? { rateLimited: true } : {});
      deps.onRequest?.(record);
      recordExchange(deps.recordTraffic, ereq, req.url ?? "/", response, headers);
      write(res, response, headers);
    };

    if (body === INVALID_JSON)
      return finish(armError(400, "InvalidRequestContent", "The request content is not valid JSON."));
    if (!/^Bearer\s+\S+/i.test(String(req.headers.authorization ?? ""))) {
      return finish(
        armError(
          401,
          "AuthenticationFailed",
          "Authentication failed. The 'Authorization' header is missing or is not a Bearer token.",
        ),
      );
    }

    const armFlags: ArmFaultFlags = {};
    const monitorFlags: MonitorFaultFlags = {};
    const rule = deps.faults.match({ method, path, ...(resourceIds ? { resourceIds } : {}) });
    if (rule) {
      const a = rule.action;
      switch (a.kind) {
        case "status": {
          const extra: Record<string, string> = {};
          if (a.retryAfterSeconds !== undefined) {
            extra["retry-after"] =
              a.retryAfterFormat === "date"
                ? new Date(deps.state.clock.nowMs() + a.retryAfterSeconds * 1000).toUTCString()
                : String(a.retryAfterSeconds);
          }
          return finish(
            armError(
              a.status,
              a.code ?? defaultCode(a.status),
              a.message ?? `Injected fault ${rule.id}.`,
              extra,
            ),
            { fault: rule },
          );
        }
        case "delay":
          await sleep(a.ms, undefined, { signal: stopping.signal }).catch(() => {}); // stopping: answer now
          record.fault = rule.id;
          break;
        case "hang":
          record.status = 0;
          record.fault = rule.id;
          deps.log.add(record);
          deps.onRequest?.(record);
          return; // never answered; the connection closes when the emulator stops
        case "reset":
          record.fault = rule.id;
          deps.log.add(record);
          deps.onRequest?.(record);
          req.socket.destroy();
          return;
        case "nullSeries":
          monitorFlags.nullSeries = true;
          record.fault = rule.id;
          break;
        case "emptyTimeseries":
          monitorFlags.emptyTimeseries = true;
          record.fault = rule.id;
          break;
        case "notApplied":
          armFlags.notApplied = true;
          record.fault = rule.id;
          break;
        case "failUpdate":
          armFlags.failUpdate = true;
          record.fault = rule.id;
          break;
        case "cancelUpdate":
          armFlags.cancelUpdate = true;
          record.fault = rule.id;
          break;
        case "longUpdate":
          armFlags.updateSeconds = a.seconds;
          record.fault = rule.id;
          break;
        case "respond":
          return finish(json(a.status ?? 200, a.body), { fault: rule });
      }
    }

    if (!batch && deps.limiter && subscriptionId) {
      const bucket = method === "GET" ? "reads" : "writes";
      const taken = deps.limiter.take(subscriptionId, bucket, now);
      if (!taken.ok) {
        return finish(
          armError(
            429,
            "SubscriptionRequestsThrottled",
            `Number of ${bucket === "reads" ? "read" : "write"} requests for subscription '${subscriptionId}' exceeded the limit. Please try again after '${taken.retryAfterSeconds}' seconds.`,
            { "retry-after": String(taken.retryAfterSeconds) },
          ),
          { rateLimited: true },
        );
      }
      headers[`x-ms-ratelimit-remaining-subscription-${bucket}`] = String(taken.remaining);
    }

    const response = batch
      ? handleGetBatch(ereq, deps.state, monitorFlags)
      : handleArm(
          ereq,
          { state: deps.state, ...(deps.armPageSize ? { pageSize: deps.armPageSize } : {}) },
          armFlags,
        );
    finish(response ?? armError(404, "NotFound", `The emulator has no route ${method} ${path}.`));
  }

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
