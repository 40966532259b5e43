/**
 * The operator's HTTP endpoint: `/metrics` (Prometheus text format), `/healthz` (the process is
 * alive) and `/readyz` (the readiness checks handed in: watch healthy and, when leader, Azure
 * reachable). Anything else is 404. Every body, reasons and label values included, goes through
 * `scrubSecrets`: a failure's message may echo a token.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { scrubSecrets } from "../shared/redact.js";

/** One readiness check: `ok`, or the reason it is not. */
export type ReadinessCheck = () => { ok: boolean; reason?: string };

export interface ProbeServerOptions {
  /** `host:port` or `:port` (all interfaces); port 0 picks a free one. */
  address: string;
  metrics: () => Promise<{ contentType: string; body: string }>;
  readiness: Record<string, ReadinessCheck>;
}

export interface ProbeServer {
  /** The bound URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  close(): Promise<void>;
}

/** Parses `host:port` / `:port`; throws RangeError for anything else. */
export function parseListenAddress(address: string): { host: string | undefined; port: number } {
  const match = /^(.*):(\d{1,5})$/.exec(address);
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new RangeError(`listen address must be host:port or :port, got "${address}"`);
  const host = match[1]?.replace(/^\[(.*)\]$/, "$1");
  return { host: host === "" ? undefined : host, port };
}

/** Answers with `body` after the one redaction of every output (`scrubSecrets`). */
function reply(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "content-type": contentType }).end(scrubSecrets(body));
}

/** Starts the probe and metrics server. */
export async function startProbeServer(options: ProbeServerOptions): Promise<ProbeServer> {
  const { host, port } = parseListenAddress(options.address);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405).end();
      return;
    }
    if (path === "/healthz") {
      reply(res, 200, "text/plain", "ok\n");
      return;
    }
    if (path === "/readyz") {
      const failing = Object.entries(options.readiness)
        .map(([name, check]) => ({ name, ...check() }))
        .filter((c) => !c.ok);
      const body =
        failing.length === 0
          ? "ok\n"
          : failing.map((c) => `${c.name}: ${c.reason ?? "not ready"}\n`).join("");
      reply(res, failing.length === 0 ? 200 : 503, "text/plain", body);
      return;
    }
    if (path === "/metrics") {
      options.metrics().then(
        ({ contentType, body }) => reply(res, 200, contentType, body),
        (err: unknown) => reply(res, 500, "text/plain", `${String(err)}\n`),
      );
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shownHost}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
