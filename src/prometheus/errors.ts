/**
 * The typed error of a Prometheus instant query, one `kind` per thing the caller can do about it:
 *
 * | kind          | when                                                                   | transient |
 * |---------------|------------------------------------------------------------------------|-----------|
 * | `Unreachable` | no HTTP answer: connection refused or reset, DNS failure, socket closed | yes       |
 * | `Timeout`     | the per-call deadline (`timeoutMs`) passed, queue time included         | yes       |
 * | `Tls`         | the server's certificate was refused (untrusted CA, wrong name, expired) or the TLS handshake failed | no |
 * | `Http`        | a non-2xx answer that is not a query error (401, 403, 404, 429, 5xx, a proxy's page); 3xx is not followed | 408, 429, 5xx |
 * | `BadResponse` | a 2xx answer that is not JSON or not the API's shape                    | no        |
 * | `QueryError`  | Prometheus's `{status:"error"}` with `errorType` `bad_data`, `execution`, `timeout` or `canceled` (any HTTP status) | `timeout`, `canceled` |
 * | `NoData`      | the result is an empty vector (the series does not exist at that time)  | no        |
 * | `ManySeries`  | the vector has more than one sample (the query must aggregate, e.g. `sum(...)`) | no  |
 * | `NotFinite`   | the value is `NaN`, `+Inf` or `-Inf`                                    | no        |
 * | `Unsupported` | the result type is `matrix` or `string`, or the sample is a native histogram | no    |
 *
 * `transient` says whether the same query may succeed later without any change; `NoData` and
 * `NotFinite` are about the data, and the caller decides what they mean for its signal.
 *
 * The errors carry the server as {@link describePrometheusServer} shows it (origin and path, never
 * userinfo, query or token), the HTTP status, Prometheus's `errorType`, and no request, headers
 * or cause: safe to log.
 */

/** What failed; see the table above. */
export type PrometheusErrorKind =
  | "Unreachable"
  | "Timeout"
  | "Tls"
  | "Http"
  | "BadResponse"
  | "QueryError"
  | "NoData"
  | "ManySeries"
  | "NotFinite"
  | "Unsupported";

/** Every kind, in the order of the table above. */
export const PROMETHEUS_ERROR_KINDS: readonly PrometheusErrorKind[] = [
  "Unreachable",
  "Timeout",
  "Tls",
  "Http",
  "BadResponse",
  "QueryError",
  "NoData",
  "ManySeries",
  "NotFinite",
  "Unsupported",
];

/** What a {@link PrometheusError} carries besides its kind and message. */
export interface PrometheusErrorDetails {
  /** The server, redacted (`describePrometheusServer`). */
  server: string;
  /** HTTP status, when an answer was received. */
  status?: number;
  /** Prometheus's `errorType` (`bad_data`, `execution`, `timeout`, `canceled`, `internal`, `unavailable`, …). */
  errorType?: string;
  /** How long the server asked to wait (429/503 `Retry-After`), ms, capped. */
  retryAfterMs?: number;
  /** A transport error code such as `ECONNREFUSED` or `DEPTH_ZERO_SELF_SIGNED_CERT`. */
  code?: string;
  /** How many series the query returned (`ManySeries`). */
  seriesCount?: number;
}

/** A failed instant query. The message starts with the redacted server. */
export class PrometheusError extends Error {
  readonly kind: PrometheusErrorKind;
  readonly server: string;
  readonly status: number | undefined;
  readonly errorType: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly code: string | undefined;
  readonly seriesCount: number | undefined;

  constructor(kind: PrometheusErrorKind, message: string, details: PrometheusErrorDetails) {
    super(`${details.server}: ${message}`);
    this.name = "PrometheusError";
    this.kind = kind;
    this.server = details.server;
    this.status = details.status;
    this.errorType = details.errorType;
    this.retryAfterMs = details.retryAfterMs;
    this.code = details.code;
    this.seriesCount = details.seriesCount;
  }

  /** True when the same query may succeed later without any change (see the table above). */
  get transient(): boolean {
    switch (this.kind) {
      case "Unreachable":
      case "Timeout":
        return true;
      case "Http":
        return (
          this.status !== undefined && (this.status === 408 || this.status === 429 || this.status >= 500)
        );
      case "QueryError":
        return this.errorType === "timeout" || this.errorType === "canceled";
      default:
        return false;
    }
  }

  /** A plain object for logs and status conditions. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      message: this.message,
      server: this.server,
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.errorType !== undefined ? { errorType: this.errorType } : {}),
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
      ...(this.code !== undefined ? { code: this.code } : {}),
      ...(this.seriesCount !== undefined ? { seriesCount: this.seriesCount } : {}),
    };
  }
}

/** True for a {@link PrometheusError}, optionally of one kind. */
export function isPrometheusError(err: unknown, kind?: PrometheusErrorKind): err is PrometheusError {
  return err instanceof PrometheusError && (kind === undefined || err.kind === kind);
}
