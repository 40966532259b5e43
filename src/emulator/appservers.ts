/**
 * The app servers' `/metrics`: what a Prometheus scraping the ASP.NET Core application in front of
 * a SignalR instance (default mode) would read, as OpenTelemetry's Prometheus exporter writes the
 * framework's built-in metrics:
 *
 *     GET /appservers/{instanceName}/metrics          (no token; the same HTTPS server, or plain HTTP)
 *
 * - `http_server_request_duration_seconds` (histogram; `http.server.request.duration` of
 *   `Microsoft.AspNetCore.Hosting`) for `POST /<hub>/negotiate` answered 200: its count is every
 *   client's negotiate call since the app servers started — the offered demand's arrivals
 *   (`traffic/arrivals.ts`), clients the service then refuses over its quota included. The hub is
 *   {@link APP_SERVER_HUB}. Latency is a fixed distribution ({@link NEGOTIATE_LATENCY}): a negotiate
 *   is answered from memory (a signed token and the service's URL), in milliseconds.
 * - `signalr_server_active_connections` (gauge; `signalr.server.active_connections` of
 *   `Microsoft.AspNetCore.Http.Connections`, transport `web_sockets`): the client connections the
 *   service accepted in the current minute.
 *
 * One endpoint stands for all the instance's app servers (the sum over their pods). Counts are
 * whole numbers (the model's expected count, rounded down), monotone between restarts;
 * `POST /_emulator/appservers/{instanceName}/restart` starts them again from 0 (a counter reset).
 *
 * Every sample carries an explicit timestamp: the emulator's **virtual** time, in ms. A Prometheus
 * scraping it (with `honor_timestamps`, its default) stores virtual times — with the demo's clock
 * 720 times faster than real time, an hour of samples every five real seconds — so query it at
 * virtual times (`time=`, `start`/`end` from the virtual clock). Setting the clock back makes later
 * samples older than stored ones, which Prometheus drops as out of order.
 */

import {
  EXPOSITION_CONTENT_TYPE,
  formatExposition,
  histogramSamples,
  type MetricFamily,
} from "./exposition.js";
import { armError, type EmulatorRequest, type EmulatorResponse } from "./http.js";
import { type AppServersView, type EmulatorState, StateError } from "./state.js";

/** The hub the app servers' negotiate route names: `POST /chat/negotiate`. */
export const APP_SERVER_HUB = "chat";

/**
 * The negotiate latency: the share of calls answered within each bucket bound of
 * `http.server.request.duration` (the bounds OpenTelemetry's HTTP semantic conventions advise and
 * ASP.NET Core uses, seconds). Fixed, not measured: 30 % within 5 ms, 75 % within 10 ms, 95 % within
 * 25 ms, all within 250 ms.
 */
export const NEGOTIATE_LATENCY: readonly { le: number; share: number }[] = [
  { le: 0.005, share: 0.3 },
  { le: 0.01, share: 0.75 },
  { le: 0.025, share: 0.95 },
  { le: 0.05, share: 0.99 },
  { le: 0.075, share: 0.995 },
  { le: 0.1, share: 0.998 },
  { le: 0.25, share: 1 },
  { le: 0.5, share: 1 },
  { le: 0.75, share: 1 },
  { le: 1, share: 1 },
  { le: 2.5, share: 1 },
  { le: 5, share: 1 },
  { le: 7.5, share: 1 },
  { le: 10, share: 1 },
];

/** Mean negotiate latency, s: each bucket's share at its middle (about 10 ms). */
export const NEGOTIATE_MEAN_SECONDS = (() => {
  let mean = 0;
  let below = { le: 0, share: 0 };
  for (const b of NEGOTIATE_LATENCY) {
    mean += (b.share - below.share) * ((below.le + b.le) / 2);
    below = b;
  }
  return mean;
})();

/** The metric families of an instance's app servers at `view.atMs`. */
export function appServerFamilies(view: AppServersView, hub: string = APP_SERVER_HUB): MetricFamily[] {
  const timestampMs = Math.floor(view.atMs);
  const count = Math.floor(view.negotiations + 1e-6);
  const buckets = NEGOTIATE_LATENCY.map((b) => ({ le: b.le, count: Math.floor(count * b.share) }));
  const labels = {
    http_request_method: "POST",
    http_response_status_code: "200",
    http_route: `/${hub}/negotiate`,
    network_protocol_version: "1.1",
    url_scheme: "http",
  };
  return [
    {
      name: "http_server_request_duration_seconds",
      help: "Duration of HTTP server requests.",
      type: "histogram",
      samples: histogramSamples(
        "http_server_request_duration_seconds",
        labels,
        buckets,
        count * NEGOTIATE_MEAN_SECONDS,
        count,
        timestampMs,
      ),
    },
    {
      name: "signalr_server_active_connections",
      help: "Number of connections that are currently active on the server.",
      type: "gauge",
      samples: [
        {
          name: "signalr_server_active_connections",
          labels: { signalr_transport: "web_sockets" },
          value: view.activeConnections,
          timestampMs,
        },
      ],
    },
  ];
}

const ROUTE = /^\/appservers\/([^/]+)\/metrics\/?$/i;

/** True for paths under `/appservers/`. */
export function isAppServersPath(path: string): boolean {
  return /^\/appservers(\/|$)/i.test(path);
}

/**
 * Serves `GET /appservers/{instanceName}/metrics` (see the module comment); `undefined` for paths
 * outside `/appservers/`. 404 for an unknown instance (or a Web PubSub one), 409 for a name several
 * instances have, 405 for another method.
 */
export function handleAppServers(req: EmulatorRequest, state: EmulatorState): EmulatorResponse | undefined {
  if (!isAppServersPath(req.path)) return undefined;
  const match = ROUTE.exec(req.path);
  if (!match)
    return armError(
      404,
      "NotFound",
      `no app-server route ${req.path}: try /appservers/{instanceName}/metrics`,
    );
  if (req.method !== "GET" && req.method !== "HEAD") {
    return armError(405, "MethodNotAllowed", "the app servers' /metrics takes GET", { allow: "GET, HEAD" });
  }
  try {
    const view = state.appServers(match[1] as string);
    return {
      status: 200,
      headers: { "content-type": EXPOSITION_CONTENT_TYPE },
      text: formatExposition(appServerFamilies(view)),
    };
  } catch (err) {
    if (err instanceof StateError) return armError(err.status, err.code, err.message);
    throw err;
  }
}
