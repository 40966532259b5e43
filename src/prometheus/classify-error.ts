/**
 * Types the failures of a call that did not yield a usable answer: what `fetch` throws (no HTTP
 * answer) and non-2xx answers. Pure: the current time is an argument (for `Retry-After` given as
 * an HTTP date).
 *
 * No HTTP answer (undici's `TypeError: fetch failed` and its `cause` chain):
 * - a certificate the CA does not sign, a wrong name, an expired certificate, a failed TLS
 *   handshake (`UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `DEPTH_ZERO_SELF_SIGNED_CERT`,
 *   `ERR_TLS_CERT_ALTNAME_INVALID`, `ERR_SSL_*`, …) → `Tls`: a configuration problem that retrying
 *   does not fix, kept apart from `Unreachable` so it can be reported as such;
 * - anything else (refused, reset, DNS, socket closed mid-answer) → `Unreachable`.
 *
 * Non-2xx answers:
 * - a body `{status:"error", errorType}` with a query error type (`bad_data` 400, `execution`
 *   422, `timeout` / `canceled` 503) → `QueryError`;
 * - everything else (401, 403, 404, 429, 5xx, `internal`, `unavailable`, a proxy's HTML page,
 *   3xx: redirects are not followed, so a token never leaves for another host) → `Http`, with
 *   Prometheus's `errorType` and `error` in the message when the body has them, and the
 *   `Retry-After` wait of a 429 or 503 when the header is present (capped at 5 minutes).
 */
import { DEFAULT_RETRY_AFTER_CAP_MS, parseRetryAfter } from "../shared/retry-after.js";
import { PrometheusError } from "./errors.js";
import { parseEnvelope, queryErrorOf, shortMessage } from "./response.js";

/** Certificate verification codes of Node's TLS (`tls.TLSSocket` `authorizationError`). */
const CERT_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "HOSTNAME_MISMATCH",
]);

function isTlsCode(code: string): boolean {
  return CERT_CODES.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_");
}

/** Codes along `err`'s `cause` chain and inside an `AggregateError` (both address families refused). */
function codesOf(err: unknown, depth = 0): string[] {
  if (depth > 5 || typeof err !== "object" || err === null) return [];
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === "string" ? [e.code] : [];
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, depth + 1)) : [];
  return [...own, ...codesOf(e.cause, depth + 1), ...nested];
}

/** The typed error of a call that got no HTTP answer: `Tls` or `Unreachable`. */
export function transportError(err: unknown, server: string): PrometheusError {
  const codes = codesOf(err);
  const tls = codes.find(isTlsCode);
  if (tls !== undefined) {
    const plain = /WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG/i.test(tls);
    return new PrometheusError(
      "Tls",
      plain
        ? `TLS failed (${tls}): the server answered without TLS — is it plain http? (use http:// in serverAddress)`
        : `TLS failed (${tls}): the server's certificate is not trusted for this name (set the CA that signs it) or the handshake failed`,
      { server, code: tls },
    );
  }
  const code = codes.find((c) => !c.startsWith("UND_ERR_") || c === "UND_ERR_CONNECT_TIMEOUT") ?? codes[0];
  return new PrometheusError("Unreachable", `no answer (${code ?? "connection failed"})`, {
    server,
    ...(code !== undefined ? { code } : {}),
  });
}

/** A non-2xx answer, as far as it is read. */
export interface HttpAnswer {
  status: number;
  /** The body, when it was read in full. */
  body: string | undefined;
  /** `Content-Type`, for the message when the body is not the API's. */
  contentType: string | null;
  /** The `Retry-After` header. */
  retryAfter: string | null;
}

/** The typed error of a non-2xx answer: `QueryError` or `Http`. */
export function httpError(answer: HttpAnswer, server: string, now: Date): PrometheusError {
  const envelope = answer.body === undefined ? undefined : parseEnvelope(answer.body);
  if (envelope) {
    const queryError = queryErrorOf(envelope, server, answer.status);
    if (queryError) return queryError;
  }
  const retryAfter =
    answer.status === 429 || answer.status === 503 ? parseRetryAfter(answer.retryAfter, now) : undefined;
  const retryAfterMs =
    retryAfter === undefined ? undefined : Math.min(retryAfter, DEFAULT_RETRY_AFTER_CAP_MS);
  let said: string;
  if (envelope?.status === "error") {
    said = `${envelope.errorType ?? "error"}${envelope.error ? `: ${shortMessage(envelope.error)}` : ""}`;
  } else if (answer.status >= 300 && answer.status < 400) {
    said = "redirect not followed; use the final URL";
  } else {
    said = `not a Prometheus API body${answer.contentType ? `, ${answer.contentType.split(";")[0]}` : ""}`;
  }
  const wait = retryAfterMs === undefined ? "" : `; retry after ${Math.ceil(retryAfterMs / 1000)}s`;
  return new PrometheusError("Http", `HTTP ${answer.status} (${said})${wait}`, {
    server,
    status: answer.status,
    ...(envelope?.errorType !== undefined ? { errorType: envelope.errorType } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}
