/**
 * Stand-ins for the Prometheus servers that the bench's leading signals point at: loopback
 * `node:http` servers answering the HTTP API's instant query, `GET` or `POST /api/v1/query`, with
 * a vector of one sample `{ metric: {}, value: [<time>, "<value>"] }` after a fixed latency (ms),
 * `time` being the request's `time` parameter (Unix seconds) or the server's now. A request
 * without `query` gets 400 with Prometheus's error envelope (`bad_data`); any other path 404.
 *
 * They are no Prometheus (no PromQL, no storage): they answer what a real one would answer for
 * the bench's constant demand, and count what they receive — queries per server since the last
 * {@link PrometheusStandIns.reset}, and the most requests open at once on one server (which the
 * operator's per-server bound caps).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface PrometheusStandInOptions {
  /** Servers to start, each on its own loopback port; ≥ 1. */
  servers: number;
  /** Time every answer waits before it is sent, ms; ≥ 0. */
  latencyMs: number;
  /** The sample value every query returns. */
  value: number;
}

/** What the servers received since the last reset. */
export interface StandInCounts {
  /** Queries answered or being answered, per server (in the order of `urls`). */
  queries: number[];
  /** Requests refused (no query, wrong path or method), all servers. */
  refused: number;
  /** Most requests open at once on any one server. */
  maxInFlight: number;
}

export interface PrometheusStandIns {
  /** Base URLs (`http://127.0.0.1:<port>`), one per server. */
  urls: string[];
  counts(): StandInCounts;
  /** Zeroes the counts. */
  reset(): void;
  close(): Promise<void>;
}

const JSON_TYPE = { "content-type": "application/json" };

/** The `query` and `time` parameters of a GET's URL or a POST's form body. */
async function paramsOf(req: IncomingMessage): Promise<URLSearchParams> {
  const url = new URL(req.url ?? "/", "http://standin");
  if (req.method !== "POST") return url.searchParams;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/**
 * Starts `options.servers` stand-ins.
 * @throws RangeError for a server count below 1 or a negative latency.
 */
export async function startPrometheusStandIns(
  options: PrometheusStandInOptions,
): Promise<PrometheusStandIns> {
  if (!(Number.isInteger(options.servers) && options.servers >= 1))
    throw new RangeError("servers must be an integer >= 1");
  if (!(Number.isFinite(options.latencyMs) && options.latencyMs >= 0))
    throw new RangeError("latencyMs must be >= 0");
  const queries: number[] = Array.from({ length: options.servers }, () => 0);
  let refused = 0;
  let maxInFlight = 0;

  const handler = (index: number) => {
    let inFlight = 0;
    return (req: IncomingMessage, res: ServerResponse) => {
      const path = new URL(req.url ?? "/", "http://standin").pathname;
      if (path !== "/api/v1/query" || (req.method !== "GET" && req.method !== "POST")) {
        refused++;
        res.writeHead(404, JSON_TYPE).end('{"status":"error","errorType":"not_found","error":"not found"}');
        return;
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      void paramsOf(req).then((params) => {
        const query = params.get("query");
        if (!query) {
          inFlight--;
          refused++;
          res.writeHead(400, JSON_TYPE).end('{"status":"error","errorType":"bad_data","error":"no query"}');
          return;
        }
        queries[index] = (queries[index] ?? 0) + 1;
        const time = Number(params.get("time") ?? Number.NaN);
        const at = Number.isFinite(time) ? time : Date.now() / 1000;
        setTimeout(() => {
          inFlight--;
          res.writeHead(200, JSON_TYPE).end(
            JSON.stringify({
              status: "success",
              data: { resultType: "vector", result: [{ metric: {}, value: [at, String(options.value)] }] },
            }),
          );
        }, options.latencyMs);
      });
    };
  };

  const servers: Server[] = [];
  const urls: string[] = [];
  for (let i = 0; i < options.servers; i++) {
    const server = createServer({ keepAliveTimeout: 65_000 }, handler(i));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    servers.push(server);
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  return {
    urls,
    counts: () => ({ queries: [...queries], refused, maxInFlight }),
    reset: () => {
      queries.fill(0);
      refused = 0;
      maxInFlight = 0;
    },
    close: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.closeAllConnections();
              s.close(() => resolve());
            }),
        ),
      );
    },
  };
}
