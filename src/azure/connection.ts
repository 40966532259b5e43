/**
 * How the adapters reach Azure: credential, endpoints, trusted CA, timeouts, clock — and the
 * pipeline options every SDK client gets from them.
 *
 * Retries: the SDKs retry 429 and 5xx by themselves (up to 3 times, honouring Retry-After). The
 * adapters turn that off (`retryOptions.maxRetries: 0`) so that a throttled or failing call comes
 * back at once as a typed error and the controller decides: gate the scope, hold, or try on the
 * next pass. Token acquisition keeps `@azure/identity`'s own retries.
 *
 * Deadlines: every HTTP call to Azure has the request timeout (`requestTimeoutMs`, 30 s), and
 * every token request the token timeout (`tokenTimeoutMs`, 10 s; `token-deadline.ts`) — the
 * request timeout does not cover the token acquired before the call. Token requests are reported
 * to the call observer as the API `token`.
 */

import type { HttpHeaders, PipelinePolicy, PipelineRequest, TlsSettings } from "@azure/core-rest-pipeline";
import { isRestError } from "@azure/core-rest-pipeline";
import type { TokenCredential } from "@azure/identity";
import type { RetryAfterOptions } from "../shared/retry-after.js";
import { VERSION } from "../shared/version.js";
import { withTokenDeadline } from "./token-deadline.js";

/** Public-cloud ARM endpoint. */
const PUBLIC_ARM_ENDPOINT = "https://management.azure.com";
/** Default per-request timeout: 30 seconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const USER_AGENT = `signalr-autoscaler/${VERSION}`;

/** The regional metrics data-plane endpoint of the public cloud: `https://<region>.metrics.monitor.azure.com`. */
function publicMetricsEndpoint(region: string): string {
  return `https://${region.replace(/\s+/g, "").toLowerCase()}.metrics.monitor.azure.com`;
}

/** One HTTP call to Azure, as the call observer sees it. */
export interface AzureCall {
  /** Method and API, e.g. `GET SignalR`, `PATCH WebPubSub`, `POST metrics:getBatch` (see {@link azureApiName}). */
  api: string;
  /** HTTP status; 0 when no response came back (timeout, reset, refused, aborted). */
  status: number;
  /** From sending the request to the response (or the failure), seconds. */
  seconds: number;
  /** True when the call ended at its deadline (request or token timeout) without an answer. */
  timedOut?: boolean;
}

/** Called once per HTTP attempt to Azure, successful or not. Must not throw (errors are ignored). */
export type AzureCallObserver = (call: AzureCall) => void;

/** Everything an adapter needs to talk to Azure (or to the emulator). */
export interface AzureConnection {
  /** Any `TokenCredential`: `createAzureCredential()` in a cluster, a static one against the emulator. */
  credential: TokenCredential;
  /** ARM endpoint (default {@link PUBLIC_ARM_ENDPOINT}). */
  armEndpoint?: string;
  /** Token scope for ARM (default `<armEndpoint>/.default`). */
  armScope?: string;
  /** Metrics data-plane endpoint of a region (default {@link publicMetricsEndpoint}). */
  metricsEndpoint?: (region: string) => string;
  /** Token scope for the metrics data plane (default: the SDK's, `https://management.azure.com/.default`). */
  metricsScope?: string;
  /**
   * PEM certificate(s) to trust instead of the system store — the emulator's CA. Passed to the
   * SDKs as the pipeline option `tlsOptions.ca`; TLS verification stays on.
   */
  ca?: string;
  /** Per-request timeout, ms (default {@link DEFAULT_REQUEST_TIMEOUT_MS}). */
  requestTimeoutMs?: number;
  /** Deadline of one token request, ms (default 10,000: `DEFAULT_TOKEN_TIMEOUT_MS`). */
  tokenTimeoutMs?: number;
  /** Clock for Retry-After dates and throttle gates (default: wall clock). */
  now?: () => Date;
  /** Cap and default of Retry-After waits. */
  retryAfter?: RetryAfterOptions;
  /** Told about every HTTP call (API, status, latency): the operator's metrics. */
  observeCall?: AzureCallObserver;
}

/** Connection settings with defaults applied. */
export interface ResolvedConnection {
  credential: TokenCredential;
  armEndpoint: string;
  armScope: string;
  metricsEndpoint: (region: string) => string;
  metricsScope: string | undefined;
  tlsOptions: TlsSettings | undefined;
  requestTimeoutMs: number;
  now: () => Date;
  retryAfter: RetryAfterOptions;
  observeCall: AzureCallObserver | undefined;
}

/**
 * Applies defaults; the credential gets its token deadline (its requests reported to
 * `observeCall` as the API `token`). The returned object is shared by every client of one adapter.
 * @throws RangeError for a token timeout that is not > 0.
 */
export function resolveConnection(c: AzureConnection): ResolvedConnection {
  const armEndpoint = (c.armEndpoint ?? PUBLIC_ARM_ENDPOINT).replace(/\/+$/, "");
  const observe = c.observeCall;
  return {
    credential: withTokenDeadline(c.credential, {
      ...(c.tokenTimeoutMs !== undefined ? { timeoutMs: c.tokenTimeoutMs } : {}),
      ...(observe
        ? {
            observe: (o) =>
              observe({
                api: "token",
                status: o.status,
                seconds: o.seconds,
                ...(o.outcome === "timeout" ? { timedOut: true } : {}),
              }),
          }
        : {}),
    }),
    armEndpoint,
    armScope: c.armScope ?? `${armEndpoint}/.default`,
    metricsEndpoint: c.metricsEndpoint ?? publicMetricsEndpoint,
    metricsScope: c.metricsScope,
    // One object for the connection's life: the SDK's HTTP client caches its TLS agent per object.
    tlsOptions: c.ca !== undefined ? { ca: c.ca } : undefined,
    requestTimeoutMs: c.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    now: c.now ?? (() => new Date()),
    retryAfter: c.retryAfter ?? {},
    observeCall: c.observeCall,
  };
}

/** Sets a timeout on every request that has none (the SDK's default is no timeout). */
function timeoutPolicy(timeoutMs: number): PipelinePolicy {
  return {
    name: "signalrAutoscalerTimeout",
    sendRequest(request, next) {
      if (!(request.timeout > 0)) request.timeout = timeoutMs;
      return next(request);
    },
  };
}

/**
 * Calls `observe` with the headers of every response, successful or not (the quota headers come
 * on errors too).
 */
export function responseHeadersPolicy(
  observe: (request: PipelineRequest, headers: HttpHeaders) => void,
): PipelinePolicy {
  return {
    name: "signalrAutoscalerResponseHeaders",
    async sendRequest(request, next) {
      try {
        const response = await next(request);
        observe(request, response.headers);
        return response;
      } catch (err) {
        if (isRestError(err) && err.response) observe(request, err.response.headers);
        throw err;
      }
    },
  };
}

/** ARM resource types and data-plane operations by their lower-case path segment → the API label. */
const API_NAMES: Readonly<Record<string, string>> = {
  signalr: "SignalR",
  webpubsub: "WebPubSub",
  replicas: "replicas",
  skus: "listSkus",
  autoscalesettings: "autoscaleSettings",
  operationstatuses: "operationStatuses",
  operationresults: "operationResults",
  "metrics:getbatch": "metrics:getBatch",
  metricdefinitions: "metricDefinitions",
  metrics: "metrics",
};

/**
 * The API label of an Azure request: the method and the innermost ARM resource type of the path
 * (`GET SignalR` for a get or a list of SignalR instances, `PATCH WebPubSub`, `GET replicas` and
 * `PATCH replicas` for a replica or the list of an instance's replicas, `GET resources` for ARM's
 * generic resource list, `GET listSkus`,
 * `GET operationStatuses`, `GET autoscaleSettings`), or the data-plane operation
 * (`POST metrics:getBatch`). Unknown paths are `<METHOD> other`, so the label set stays small.
 */
export function azureApiName(method: string, url: string): string {
  const verb = method.toUpperCase();
  let parts: string[];
  try {
    parts = decodeURIComponent(new URL(url).pathname)
      .split("/")
      .filter((p) => p !== "");
  } catch {
    return `${verb} other`;
  }
  const last = parts.at(-1)?.toLowerCase() ?? "";
  if (last.endsWith("metrics:getbatch")) return `${verb} metrics:getBatch`;
  const providers = parts.map((p) => p.toLowerCase()).lastIndexOf("providers");
  // ARM's generic resource list of a subscription or group (Microsoft.Resources `Resources_List`).
  if (providers < 0) return `${verb} ${last === "resources" ? "resources" : "other"}`;
  // After providers/{namespace}: {type}/{name}/{type}/{name}…; the last type is the API.
  let type: string | undefined;
  for (let i = providers + 2; i < parts.length; i += 2) type = parts[i];
  const name = type === undefined ? undefined : API_NAMES[type.toLowerCase()];
  return `${verb} ${name ?? "other"}`;
}

/**
 * Reports every HTTP attempt to `observe`: its API label, status (0 without a response) and
 * latency. Placed after authentication, so token acquisition is not counted as the call.
 */
export function callObserverPolicy(
  observe: AzureCallObserver,
  clock: () => number = () => performance.now(),
): PipelinePolicy {
  const report = (request: PipelineRequest, status: number, started: number, timedOut = false) => {
    try {
      observe({
        api: azureApiName(request.method, request.url),
        status,
        seconds: (clock() - started) / 1000,
        ...(timedOut ? { timedOut } : {}),
      });
    } catch {
      // An observer's failure never fails the call.
    }
  };
  return {
    name: "signalrAutoscalerCallObserver",
    async sendRequest(request, next) {
      const started = clock();
      try {
        const response = await next(request);
        report(request, response.status, started);
        return response;
      } catch (err) {
        // The request timeout aborts the call without the caller's signal having fired.
        const timedOut =
          err instanceof Error && err.name === "AbortError" && request.abortSignal?.aborted !== true;
        report(
          request,
          isRestError(err) ? (err.response?.status ?? err.statusCode ?? 0) : 0,
          started,
          timedOut,
        );
        throw err;
      }
    },
  };
}

/** A policy added to an SDK client's pipeline (the shape `additionalPolicies` takes). */
export interface AdditionalPolicy {
  policy: PipelinePolicy;
  position: "perCall" | "perRetry";
}

/** Pipeline options shared by every SDK client of the adapters. */
export interface CommonClientOptions {
  retryOptions: { maxRetries: number };
  tlsOptions?: TlsSettings;
  additionalPolicies: AdditionalPolicy[];
  userAgentOptions: { userAgentPrefix: string };
}

/**
 * The pipeline options for one client: no SDK retries, the CA, a timeout, `extra` policies and,
 * when the connection has one, the call observer (per attempt, after authentication).
 */
export function commonClientOptions(
  conn: ResolvedConnection,
  extra: readonly PipelinePolicy[] = [],
): CommonClientOptions {
  return {
    retryOptions: { maxRetries: 0 },
    ...(conn.tlsOptions ? { tlsOptions: conn.tlsOptions } : {}),
    additionalPolicies: [
      { policy: timeoutPolicy(conn.requestTimeoutMs), position: "perCall" },
      ...extra.map((policy) => ({ policy, position: "perCall" as const })),
      ...(conn.observeCall
        ? [{ policy: callObserverPolicy(conn.observeCall), position: "perRetry" as const }]
        : []),
    ],
    userAgentOptions: { userAgentPrefix: USER_AGENT },
  };
}

/** The options of an ARM client: the common pipeline options, ARM's endpoint and its token scope. */
export function armClientOptions(conn: ResolvedConnection, extra: readonly PipelinePolicy[] = []) {
  return {
    ...commonClientOptions(conn, extra),
    endpoint: conn.armEndpoint,
    $host: conn.armEndpoint,
    credentialScopes: conn.armScope,
  };
}
