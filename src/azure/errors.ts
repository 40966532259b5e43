/**
 * The typed errors every Azure adapter throws, one class per thing the controller can do about
 * it:
 *
 * | kind           | class                     | HTTP                                         | what to do                           |
 * |----------------|---------------------------|----------------------------------------------|--------------------------------------|
 * | `Throttled`    | {@link ThrottledError}      | 429 (and 529 from Monitor)                   | leave the scope alone until `notBefore` |
 * | `Conflict`     | {@link OperationInProgressError} | 409 or 429 whose code says an operation is in progress | wait for the running operation, don't stack |
 * | `Refused`      | {@link RefusedError}        | a quota, an Azure Policy deny or a resource lock, by error code (400, 403, 409) | back off; a person must raise the quota, change the policy or remove the lock |
 * | `Transient`    | {@link TransientError}      | 5xx, 408, timeouts, resets, refused connections | try again on a later pass            |
 * | `Unauthorized` | {@link AuthenticationError} | 401, 403, credential failures                | report; retrying will not help       |
 * | `NotFound`     | {@link NotFoundError}       | 404                                          | report the target as missing         |
 * | `Invalid`      | {@link InvalidRequestError} | 400, 422 and other 4xx                       | report; fix the spec                 |
 *
 * The errors carry no request, headers, token or cause: only status, Azure error code, request
 * IDs and the service's message — safe to log.
 */
import { ApiError, withKind } from "../shared/api-error.js";
import { type AzureScope, describeScope } from "./scope.js";

/** What every typed Azure error carries besides its message. */
export interface AzureErrorDetails {
  /** The adapter operation, e.g. `instances.get`, `metrics.queryResources`. */
  operation: string;
  /** The scope the call was made for, when known. */
  scope?: AzureScope;
  /** HTTP status, when a response was received. */
  status?: number;
  /** Azure's error code (`error.code` in the body) or a transport code such as `ECONNRESET`. */
  code?: string;
  /** `x-ms-request-id` of the response, for support tickets. */
  requestId?: string;
  /** `x-ms-correlation-request-id` of the response. */
  correlationId?: string;
}

/** Base of the typed Azure errors; `kind` tells them apart without `instanceof`. */
export abstract class AzureApiError extends ApiError {
  declare readonly operation: string;
  readonly scope: AzureScope | undefined;
  readonly code: string | undefined;
  readonly requestId: string | undefined;
  readonly correlationId: string | undefined;

  constructor(message: string, details: AzureErrorDetails & { retryAfterMs?: number }) {
    super(message, details);
    this.scope = details.scope;
    this.code = details.code;
    this.requestId = details.requestId;
    this.correlationId = details.correlationId;
  }

  /** A plain object for logs and status conditions. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      message: this.message,
      operation: this.operation,
      ...(this.scope ? { scope: describeScope(this.scope) } : {}),
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.code !== undefined ? { code: this.code } : {}),
      ...(this.requestId !== undefined ? { requestId: this.requestId } : {}),
      ...(this.correlationId !== undefined ? { correlationId: this.correlationId } : {}),
    };
  }
}

/**
 * Azure asked to slow down (429, or Monitor's 529), or the scope is still inside a wait Azure
 * asked for earlier (`fromGate`: no request was sent).
 */
export class ThrottledError extends withKind(AzureApiError, "Throttled") {
  /** How long to wait from when the error was raised, ms (capped). */
  declare readonly retryAfterMs: number;
  /** Earliest time to call the scope again. */
  readonly notBefore: Date;
  /** True when the throttle gate refused the call without sending it. */
  readonly fromGate: boolean;

  constructor(
    message: string,
    details: AzureErrorDetails & { retryAfterMs: number; notBefore: Date; fromGate?: boolean },
  ) {
    super(message, details);
    this.notBefore = details.notBefore;
    this.fromGate = details.fromGate ?? false;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      retryAfterMs: this.retryAfterMs,
      notBefore: this.notBefore.toISOString(),
      fromGate: this.fromGate,
    };
  }
}

/** Another operation is running on the resource (409, or a 429 whose code says so): wait for it. */
export class OperationInProgressError extends withKind(AzureApiError, "Conflict") {}

/** A failure that may pass: 5xx, 408, timeouts, connection resets or refusals, unreadable bodies. */
export class TransientError extends withKind(AzureApiError, "Transient") {}

/** The credential could not get a token, or the token was refused (401/403). */
export class AuthenticationError extends withKind(AzureApiError, "Unauthorized") {}

/** The resource (or subscription, or resource group) does not exist (404). */
export class NotFoundError extends withKind(AzureApiError, "NotFound") {}

/** Azure rejected the request as invalid (400, 422, other 4xx). */
export class InvalidRequestError extends withKind(AzureApiError, "Invalid") {}

/** What refused a request durably (see {@link RefusedError}). */
export type RefusedBy = "Quota" | "Policy" | "Lock";

/** How messages say what refused a request: `denied by an Azure Policy`. */
export const REFUSED_AS: Readonly<Record<RefusedBy, string>> = {
  Quota: "refused by a quota",
  Policy: "denied by an Azure Policy",
  Lock: "refused by a resource lock",
};

/**
 * Azure refused the request for a reason that lasts until a person acts, named by its error code
 * (classify-error.ts): a subscription quota (`QuotaExceeded`, `SubscriptionIsOverQuotaForSku`,
 * … — SignalR's default is 150 units per region and subscription), an Azure Policy deny (403
 * `RequestDisallowedByPolicy`), or a resource lock (409 `ScopeLocked`). Sending it again changes
 * nothing; the message is Azure's.
 */
export class RefusedError extends withKind(AzureApiError, "Refused") {
  /** What refused it. */
  readonly refusedBy: RefusedBy;

  constructor(message: string, details: AzureErrorDetails & { refusedBy: RefusedBy }) {
    super(message, details);
    this.refusedBy = details.refusedBy;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), refusedBy: this.refusedBy };
  }
}

/**
 * True when sending the same request again cannot succeed until something changes outside the
 * operator (the spec, a quota, a policy, a lock, a role, the resource ID): kinds `Refused`,
 * `Invalid`, `Unauthorized` and `NotFound`. Throttled, in-progress and transient failures are not.
 */
export function isDurableRefusal(err: AzureApiError): boolean {
  return (
    err.kind === "Refused" || err.kind === "Invalid" || err.kind === "Unauthorized" || err.kind === "NotFound"
  );
}

/** True for any of the typed Azure errors. */
export function isAzureApiError(err: unknown): err is AzureApiError {
  return err instanceof AzureApiError;
}
