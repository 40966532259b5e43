/**
 * An optional recorder of the Azure traffic the emulator serves: each ARM and metrics request as it
 * arrived and the answer as it was written (status, headers, JSON body). Control-API requests, the
 * app servers' `/metrics` and requests left unanswered by a `hang` or `reset` fault are not
 * recorded. Contract tests validate what it records against Azure's published REST specs.
 */
import type { EmulatorRequest, EmulatorResponse } from "./http.js";

/** One request the emulator answered and its answer. */
export interface TrafficExchange {
  request: {
    /** `GET`, `PATCH`, `POST`, … */
    method: string;
    /** The absolute URL as received: `https://127.0.0.1:<port>/<path>?<query>`. */
    url: string;
    /** Request headers, names lower-case. */
    headers: Record<string, string>;
    /** Parsed JSON body; `undefined` when empty or not JSON. */
    body: unknown;
  };
  response: {
    status: number;
    /** Response headers as written, names lower-case. */
    headers: Record<string, string>;
    /** JSON body; `undefined` when the answer has none. */
    body: unknown;
  };
}

/** Told about every answered Azure request. Must not throw (its errors are ignored). */
export type TrafficRecorder = (exchange: TrafficExchange) => void;

function lowerCaseHeaders(headers: Readonly<Record<string, string | string[] | undefined>>) {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * Tells `recorder` about one answered request: `rawPathAndQuery` is the request target as received
 * (`/path?query`), `serverHeaders` the headers the server adds to every answer (request IDs,
 * remaining quota).
 */
export function recordExchange(
  recorder: TrafficRecorder | undefined,
  req: EmulatorRequest,
  rawPathAndQuery: string,
  response: EmulatorResponse,
  serverHeaders: Readonly<Record<string, string>>,
): void {
  if (!recorder) return;
  const body = typeof req.body === "symbol" ? undefined : req.body;
  const headers = lowerCaseHeaders({ ...serverHeaders, ...response.headers });
  if (response.text === undefined && response.body !== undefined) {
    headers["content-type"] = "application/json; charset=utf-8";
  }
  try {
    recorder({
      request: {
        method: req.method,
        url: `${req.baseUrl}${rawPathAndQuery}`,
        headers: lowerCaseHeaders(req.headers),
        body,
      },
      response: {
        status: response.status,
        headers,
        body: response.text === undefined ? response.body : undefined,
      },
    });
  } catch {
    // A recorder's failure never fails the answer.
  }
}
