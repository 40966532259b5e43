/**
 * Typed Kubernetes API errors.
 *
 * `toKubeError` turns whatever `@kubernetes/client-node` throws (an `ApiException` with `.code`
 * and a `metav1.Status` body, the `Watch`'s `Error` with `.statusCode`, undici network errors,
 * timeouts) into one of the classes below, so callers branch on `instanceof` or `kind` instead
 * of on HTTP details.
 */
import { ApiError, type ApiErrorInit, withKind } from "../shared/api-error.js";
import { parseRetryAfter } from "../shared/retry-after.js";

/** The parts of a `metav1.Status` the errors carry. */
export interface KubeStatus {
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: { readonly retryAfterSeconds?: number };
}

export interface KubeErrorInit extends ApiErrorInit {
  /** `metav1.Status.reason`, e.g. "Conflict", "AlreadyExists", "Expired", "NotFound", "Invalid". */
  readonly reason?: string | undefined;
}

/** A failed Kubernetes API call; its message starts with the operation, when there is one. */
export abstract class KubeError extends ApiError {
  readonly reason: string | undefined;

  constructor(message: string, init: KubeErrorInit = {}) {
    super(init.operation === undefined ? message : `${init.operation}: ${message}`, init);
    this.reason = init.reason;
  }
}

/** 409: a stale resourceVersion (optimistic concurrency) or, with reason "AlreadyExists", a create race. */
export class ConflictError extends withKind(KubeError, "Conflict") {
  get alreadyExists(): boolean {
    return this.reason === "AlreadyExists";
  }
}

/** 404. */
export class NotFoundError extends withKind(KubeError, "NotFound") {}

/** 403: RBAC denies the request (or the namespace is terminating). */
export class ForbiddenError extends withKind(KubeError, "Forbidden") {}

/** 401: no or bad credentials. */
export class UnauthorizedError extends withKind(KubeError, "Unauthorized") {}

/** 410: the resourceVersion is too old (watch "Expired"); list again. */
export class GoneError extends withKind(KubeError, "Gone") {}

/** 400 / 422: the request or the object is invalid. */
export class InvalidError extends withKind(KubeError, "Invalid") {}

/** 429, 5xx, timeouts and network errors: the API server is busy or unreachable; retry with backoff. */
export class UnavailableError extends withKind(KubeError, "Transient") {}

/** Anything else (other HTTP codes, TLS misconfiguration, bugs). */
export class UnknownKubeError extends withKind(KubeError, "Unknown") {}

// ---------------------------------------------------------------------------------------------

type Ctor = new (message: string, init?: KubeErrorInit) => KubeError;

function classForStatus(status: number): Ctor {
  switch (status) {
    case 400:
    case 422:
      return InvalidError;
    case 401:
      return UnauthorizedError;
    case 403:
      return ForbiddenError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 410:
      return GoneError;
    case 408:
    case 429:
      return UnavailableError;
    default:
      return status >= 500 && status <= 599 ? UnavailableError : UnknownKubeError;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function asNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function asString(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Reads a `metav1.Status` from an object or its JSON text; undefined when it is not one. */
export function parseStatus(body: unknown): KubeStatus | undefined {
  let value = body;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!isRecord(value)) return undefined;
  if (value["kind"] !== "Status" && value["code"] === undefined && value["reason"] === undefined) {
    return undefined;
  }
  const details = isRecord(value["details"]) ? value["details"] : undefined;
  const retry = asNumber(details?.["retryAfterSeconds"]);
  const code = asNumber(value["code"]);
  const reason = asString(value["reason"]);
  const message = asString(value["message"]);
  return {
    ...(code === undefined ? {} : { code }),
    ...(reason === undefined ? {} : { reason }),
    ...(message === undefined ? {} : { message }),
    ...(retry === undefined ? {} : { details: { retryAfterSeconds: retry } }),
  };
}

function header(headers: unknown, name: string): string | undefined {
  if (!isRecord(headers)) return undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && typeof value === "string") return value;
  }
  return undefined;
}

/** Builds the typed error for an HTTP status and an optional `metav1.Status`. */
export function kubeErrorFromStatus(
  status: number,
  body?: KubeStatus,
  extra: { operation?: string | undefined; retryAfterMs?: number | undefined; cause?: unknown } = {},
): KubeError {
  const Class = classForStatus(status);
  const message = body?.message ?? `HTTP ${status}${body?.reason === undefined ? "" : ` ${body.reason}`}`;
  const statusRetry = body?.details?.retryAfterSeconds;
  return new Class(message, {
    status,
    reason: body?.reason,
    retryAfterMs: extra.retryAfterMs ?? (statusRetry === undefined ? undefined : statusRetry * 1000),
    operation: extra.operation,
    cause: extra.cause,
  });
}

const TLS_CONFIG_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** The first `code` string along an error's cause chain (undici nests the socket error). */
function errorCode(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && isRecord(current); depth++) {
    const code = current["code"];
    if (typeof code === "string") return code;
    current = current["cause"];
  }
  return undefined;
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
    return `${err.message}${cause}`;
  }
  return String(err);
}

/** The result of a Kubernetes API call; what `call` throws becomes a KubeError of `operation`. */
export async function kubeCall<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toKubeError(err, operation);
  }
}

/**
 * Classifies anything thrown by client-node (or handed to a Watch's `done`) as a KubeError.
 * A KubeError is returned unchanged (its operation kept).
 */
export function toKubeError(err: unknown, operation?: string, now: Date = new Date()): KubeError {
  if (err instanceof KubeError) return err;
  if (isRecord(err)) {
    // ApiException (typed API clients): numeric `code`, Status JSON text as `body`, `headers`.
    // Watch: Error with numeric `statusCode`.
    const status = asNumber(err["code"]) ?? asNumber(err["statusCode"]);
    if (status !== undefined && status >= 100 && status <= 599) {
      const body = parseStatus(err["body"]);
      return kubeErrorFromStatus(status, body, {
        operation,
        retryAfterMs: parseRetryAfter(header(err["headers"], "retry-after"), now),
        cause: err,
      });
    }
  }
  const name = err instanceof Error || isRecord(err) ? (err as { name?: unknown }).name : undefined;
  if (name === "TimeoutError") {
    return new UnavailableError("request timed out", { operation, cause: err });
  }
  const code = errorCode(err);
  if (code !== undefined && TLS_CONFIG_CODES.has(code)) {
    return new UnknownKubeError(`TLS: ${errorMessage(err)}`, { operation, cause: err });
  }
  if (code !== undefined || (err instanceof TypeError && err.message === "fetch failed")) {
    return new UnavailableError(errorMessage(err), { operation, cause: err });
  }
  return new UnknownKubeError(errorMessage(err), { operation, cause: err });
}
