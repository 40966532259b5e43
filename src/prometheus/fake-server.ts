/**
 * A fake Prometheus HTTP API on 127.0.0.1, for tests of the client and of what reads through it:
 * it records what every request carried (method, path, the form body's or the URL's parameters,
 * headers) and hands it to a handler that answers — or never does (a hanging server). HTTP, or
 * HTTPS with the given certificate. Loopback only; {@link FakePrometheus.close} drops every
 * connection, hanging ones included.
 */
import {
  createServer as createHttpServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TlsMaterial } from "../shared/tls.js";

/** What the fake server saw of one request. */
export interface SeenRequest {
  method: string;
  /** The URL path, without the query string. */
  path: string;
  /** The form body's parameters (POST) or the URL's (GET). */
  params: URLSearchParams;
  headers: IncomingHttpHeaders;
}

/** Answers one request; a handler that never ends `res` makes the server hang. */
export type FakeHandler = (req: SeenRequest, res: ServerResponse) => void;

/** A running fake Prometheus. */
export interface FakePrometheus {
  /** Base URL, `http://127.0.0.1:<port>` (or https). */
  url: string;
  /** Every request, in arrival order. */
  seen: SeenRequest[];
  /** Most requests open at once. */
  maxInFlight: number;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a fake Prometheus on 127.0.0.1 (a free port); HTTPS when `tls` is given. */
export async function startFakePrometheus(handler: FakeHandler, tls?: TlsMaterial): Promise<FakePrometheus> {
  let inFlight = 0;
  const fake: FakePrometheus = { url: "", seen: [], maxInFlight: 0, close: async () => {} };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    fake.maxInFlight = Math.max(fake.maxInFlight, inFlight);
    res.on("close", () => inFlight--);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake");
      const params =
        req.method === "POST"
          ? new URLSearchParams(Buffer.concat(chunks).toString("utf8"))
          : url.searchParams;
      const seen = { method: req.method ?? "", path: url.pathname, params, headers: req.headers };
      fake.seen.push(seen);
      handler(seen, res);
    });
  };
  const server = tls
    ? createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, listener)
    : createHttpServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `${tls ? "https" : "http"}://127.0.0.1:${port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** A handler answering `status` with `body` as JSON (and `headers`). */
export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): FakeHandler {
  return (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
}

/**
 * The success body of an instant vector at `timeSeconds` (Unix seconds), one sample per
 * `[labels, value]` (values as Prometheus writes them: "42.5", "NaN", "+Inf").
 */
export function vectorBody(timeSeconds: number, ...samples: [Record<string, string>, string][]) {
  return {
    status: "success",
    data: {
      resultType: "vector",
      result: samples.map(([metric, v]) => ({ metric, value: [timeSeconds, v] })),
    },
  };
}

/** A handler that never answers. */
export const hangingAnswer: FakeHandler = () => {};
