/**
 * How the adapters reach Azure: credential, endpoints, trusted CA, timeouts, clock — and the
 * pipeline options every SDK client gets from them.
 *
 * Retries: the SDKs retry 429 and 5xx by themselves (up to 3 times, honouring Retry-After). The
 * adapters turn that off (`retryOptions.maxRetries: 0`) so that a throttled or failing call comes
 * back at once as a typed error and the controller decides: gate the scope, hold, or try on the
 * next pass. Token acquisition keeps `@azure/identity`'s own retries.
 */

import type { HttpHeaders, PipelinePolicy, PipelineRequest, TlsSettings } from "@azure/core-rest-pipeline";
import { isRestError } from "@azure/core-rest-pipeline";
import type { TokenCredential } from "@azure/identity";
import type { RetryAfterOptions } from "./retry-after.js";

/** Public-cloud ARM endpoint. */
export const PUBLIC_ARM_ENDPOINT = "https://management.azure.com";
/** Default per-request timeout: 30 seconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const USER_AGENT = "signalr-autoscaler/0.1.0";

/** The regional metrics data-plane endpoint of the public cloud: `https://<region>.metrics.monitor.azure.com`. */
export function publicMetricsEndpoint(region: string): string {
  return `https://${region.replace(/\s+/g, "").toLowerCase()}.metrics.monitor.azure.com`;
}

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
  /** Clock for Retry-After dates and throttle gates (default: wall clock). */
  now?: () => Date;
  /** Cap and default of Retry-After waits. */
  retryAfter?: RetryAfterOptions;
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
}

/** Applies defaults. The returned object is shared by every client of one adapter set. */
export function resolveConnection(c: AzureConnection): ResolvedConnection {
  const armEndpoint = (c.armEndpoint ?? PUBLIC_ARM_ENDPOINT).replace(/\/+$/, "");
  return {
    credential: c.credential,
    armEndpoint,
    armScope: c.armScope ?? `${armEndpoint}/.default`,
    metricsEndpoint: c.metricsEndpoint ?? publicMetricsEndpoint,
    metricsScope: c.metricsScope,
    // One object for the connection's life: the SDK's HTTP client caches its TLS agent per object.
    tlsOptions: c.ca !== undefined ? { ca: c.ca } : undefined,
    requestTimeoutMs: c.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    now: c.now ?? (() => new Date()),
    retryAfter: c.retryAfter ?? {},
  };
}

/** Sets a timeout on every request that has none (the SDK's default is no timeout). */
export function timeoutPolicy(timeoutMs: number): PipelinePolicy {
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

/** The pipeline options for one client: no SDK retries, the CA, a timeout, and `extra` policies. */
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
    ],
    userAgentOptions: { userAgentPrefix: USER_AGENT },
  };
}
