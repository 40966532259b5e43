/**
 * Turns what the Azure SDKs throw into the typed errors of `errors.ts`. Pure: the current time is
 * an argument (for `Retry-After` given as a date).
 *
 * Rules, in order:
 * 1. an error that is already typed is returned as is;
 * 2. `@azure/identity` failures (`CredentialUnavailableError`, `AuthenticationRequiredError`,
 *    identity's `AuthenticationError`, `AggregateAuthenticationError`; a token request past its
 *    deadline, `token-deadline.ts`) → authentication with code {@link CREDENTIAL_UNAVAILABLE}: no
 *    token, so no request was sent;
 * 3. `AbortError`, `TimeoutError` (a deadline's abort reason) → transient (a request timeout),
 *    unless the caller aborted: then `undefined` (the caller rethrows its own abort);
 * 4. HTTP responses (`RestError` with a status):
 *    - 429 whose error code says an operation is running (`…InProgress…`, `Conflict`,
 *      `AnotherOperation…`) → operation in progress; other 429 and 529 → throttled with the
 *      `Retry-After` wait (seconds or HTTP date), honoured up to `AZURE_RETRY_AFTER_CAP_MS`
 *      (1 hour) unless `retryAfter` says otherwise; the message names the absolute end;
 *    - 400, 403, 409 whose error code names a durable refusal → refused ({@link refusalOf}): a
 *      quota (`QuotaExceeded`, `SubscriptionIsOverQuotaForSku`, any code or message naming a
 *      quota), an Azure Policy deny (`RequestDisallowedByPolicy`, `RequestDisallowedByAzure`), a
 *      resource lock (`ScopeLocked`);
 *    - 409 whose code says an operation is running (`…InProgress…`, `AnotherOperation…`,
 *      `Conflict`), or that carries no code → operation in progress; any other 409
 *      (`MissingSubscriptionRegistration`, …) → invalid request: only in-progress codes mean "wait";
 *    - 401, 403 → authentication; 404 → not found;
 *    - 408, 5xx → transient; other 4xx → invalid request;
 * 5. `RestError` without a status (connection refused, reset, DNS, TLS, unreadable body) → transient;
 * 6. anything else → `undefined`: not an Azure failure, the caller rethrows it unchanged.
 */
import { isRestError, type RestError } from "@azure/core-rest-pipeline";
import {
  AZURE_RETRY_AFTER_CAP_MS,
  type RetryAfterOptions,
  retryAfterFromHeaders,
} from "../shared/retry-after.js";
import {
  AuthenticationError,
  AzureApiError,
  type AzureErrorDetails,
  InvalidRequestError,
  NotFoundError,
  OperationInProgressError,
  REFUSED_AS,
  type RefusedBy,
  RefusedError,
  ThrottledError,
  TransientError,
} from "./errors.js";
import { type AzureScope, describeScope } from "./scope.js";

/** What {@link classifyAzureError} needs to know about the call that failed. */
export interface ClassifyContext {
  /** Adapter operation name for messages, e.g. `instances.get`. */
  operation: string;
  now: Date;
  scope?: AzureScope;
  retryAfter?: RetryAfterOptions;
  /** True when the caller's own abort signal fired (then an AbortError is not a timeout). */
  callerAborted?: boolean;
}

const IDENTITY_ERRORS = new Set([
  "CredentialUnavailableError",
  "AuthenticationRequiredError",
  "AuthenticationError",
  "AggregateAuthenticationError",
]);

/** The code of an authentication error raised while getting a token (no request was sent). */
export const CREDENTIAL_UNAVAILABLE = "CredentialUnavailable";

const IN_PROGRESS_CODE = /inprogress|anotheroperation|^conflict$/i;

/** Error codes that say "the operation is running" rather than "slow down" or "no". */
function isOperationInProgressCode(code: string | undefined): boolean {
  return code !== undefined && IN_PROGRESS_CODE.test(code);
}

const POLICY_CODE = /^RequestDisallowedBy(Policy|Azure)$/i;
const LOCK_CODE = /^ScopeLocked$|locked/i;
const QUOTA = /quota/i;

/**
 * What refused a request durably, from its error code (and, for quotas, its message), or
 * `undefined`. Codes from Azure's docs: "Resolve errors for request disallowed by policy"
 * (`RequestDisallowedByPolicy`, 403), "Lock your resources" (`ScopeLocked`, 409), "Resolve errors
 * for resource quotas" (`QuotaExceeded`, `SubscriptionIsOverQuotaForSku`; quota refusals come as
 * 400, 403 or 409 with a code or message naming the quota).
 */
function refusalOf(status: number, code: string | undefined, message: string): RefusedBy | undefined {
  if (status !== 400 && status !== 403 && status !== 409) return undefined;
  if (code !== undefined && POLICY_CODE.test(code)) return "Policy";
  if (code !== undefined && LOCK_CODE.test(code)) return "Lock";
  if ((code !== undefined && QUOTA.test(code)) || QUOTA.test(message)) return "Quota";
  return undefined;
}

interface ResponseLike {
  status?: number;
  headers?: { get(name: string): string | undefined };
}

function headerOf(response: ResponseLike | undefined, name: string): string | undefined {
  return response?.headers?.get(name) ?? undefined;
}

function errorName(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "name" in err && typeof err.name === "string"
    ? err.name
    : undefined;
}

function where(ctx: ClassifyContext): string {
  return ctx.scope ? `${ctx.operation} (${describeScope(ctx.scope)})` : ctx.operation;
}

/**
 * The first `error.details[].message` of an ARM error body, when it differs from the message: the
 * SignalR resource provider answers invalid arguments with the message "Invalid arguments" and
 * the reason in `details` (`{ code: "BadArgument", message: "SKU tier does not match name.",
 * target: "sku" }`). The classic clients (core-client 1) keep the body as the response's
 * `parsedBody`; the REST clients (`@azure-rest/core-client` 2, `@azure/arm-resources` 8) put it on
 * the error's `details` (`{ error: { code, message, details } }`) and keep no `parsedBody`.
 */
function detailOf(err: RestError, message: string): string | undefined {
  const parsed = (err.response as { parsedBody?: unknown } | undefined)?.parsedBody;
  const body = (parsed ?? err.details) as { error?: { details?: unknown } } | undefined;
  const details = body?.error?.details;
  if (!Array.isArray(details)) return undefined;
  const first = details.find(
    (d): d is { message: string } => typeof d === "object" && d !== null && typeof d.message === "string",
  );
  return first && first.message !== message ? first.message : undefined;
}

/** First line of a service message, without trailing whitespace, at most 300 characters. */
function shortMessage(message: string | undefined): string {
  const line = (message ?? "").split("\n")[0]?.trim() ?? "";
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/**
 * The typed error for `err`, or `undefined` when `err` is not an Azure failure (or is the caller's
 * own abort). Never includes request headers or tokens.
 */
export function classifyAzureError(err: unknown, ctx: ClassifyContext): AzureApiError | undefined {
  if (err instanceof AzureApiError) return err;
  const base: AzureErrorDetails = { operation: ctx.operation, ...(ctx.scope ? { scope: ctx.scope } : {}) };
  const name = errorName(err);
  const message = err instanceof Error ? shortMessage(err.message) : String(err);

  if (name !== undefined && IDENTITY_ERRORS.has(name) && !isRestError(err)) {
    return new AuthenticationError(`${where(ctx)}: could not get a token: ${message}`, {
      ...base,
      code: CREDENTIAL_UNAVAILABLE,
    });
  }
  if (name === "AbortError" || name === "TimeoutError") {
    if (ctx.callerAborted) return undefined;
    return new TransientError(`${where(ctx)}: request timed out`, { ...base, code: "Timeout" });
  }
  if (!isRestError(err)) return undefined;
  return classifyAnswer(ctx, restAnswer(err, message, base), message);
}

/** What an Azure REST call answered, as the typed errors report it. */
interface RestAnswer {
  response: ResponseLike | undefined;
  /** The HTTP status; absent (or 0) when no response came. */
  status: number | undefined;
  /** The ARM error code (`error.code` of the body, or the `x-ms-error-code` header). */
  code: string | undefined;
  /** The details every typed error carries: status, code, request and correlation ids. */
  details: AzureErrorDetails;
  /** `status code: message[: first detail]`, as the error messages quote it. */
  said: string;
}

/** The answer of a failed REST call: `message` is the error's short message. */
function restAnswer(err: RestError, message: string, base: AzureErrorDetails): RestAnswer {
  const response = err.response as ResponseLike | undefined;
  const detail = detailOf(err, message);
  const status = err.statusCode ?? response?.status;
  const code = typeof err.code === "string" && err.code !== "" ? err.code : undefined;
  const requestId = headerOf(response, "x-ms-request-id");
  const correlationId = headerOf(response, "x-ms-correlation-request-id");
  const details: AzureErrorDetails = {
    ...base,
    ...(status !== undefined && status > 0 ? { status } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
    ...(correlationId !== undefined ? { correlationId } : {}),
  };
  const text = detail ? shortMessage(`${message}: ${detail}`) : message;
  const said = `${status ?? "no response"}${code ? ` ${code}` : ""}${text ? `: ${text}` : ""}`;
  return { response, status, code, details, said };
}

/**
 * The typed error for an answer, by status: none → transient; 429/529 → throttled (or an
 * operation in progress); a refusal (refusals.ts); 409 → in progress or invalid; 401/403 →
 * authentication; 404 → not found; 408/5xx → transient; other 4xx → invalid request.
 */
function classifyAnswer(ctx: ClassifyContext, answer: RestAnswer, message: string): AzureApiError {
  const { status, code, details, said } = answer;
  if (status === undefined || status <= 0) {
    return new TransientError(`${where(ctx)}: request failed (${said})`, details);
  }
  if (status === 429 || status === 529) return throttledError(ctx, answer);
  const refusedBy = refusalOf(status, code, message);
  if (refusedBy !== undefined) {
    return new RefusedError(`${where(ctx)}: ${REFUSED_AS[refusedBy]} (${said})`, { ...details, refusedBy });
  }
  if (status === 409) {
    return code === undefined || isOperationInProgressCode(code)
      ? new OperationInProgressError(
          `${where(ctx)}: conflict, another operation is in progress (${said})`,
          details,
        )
      : new InvalidRequestError(`${where(ctx)}: conflict (${said})`, details);
  }
  if (status === 401 || status === 403) {
    return new AuthenticationError(`${where(ctx)}: not authorized (${said})`, details);
  }
  if (status === 404) return new NotFoundError(`${where(ctx)}: not found (${said})`, details);
  if (status === 408 || status >= 500) {
    return new TransientError(`${where(ctx)}: service error (${said})`, details);
  }
  if (status >= 400) return new InvalidRequestError(`${where(ctx)}: invalid request (${said})`, details);
  return new TransientError(`${where(ctx)}: unexpected response (${said})`, details);
}

/**
 * A 429 or 529: another operation in progress when the code says so, else throttled until the
 * time the Retry-After headers give (capped at AZURE_RETRY_AFTER_CAP_MS unless `ctx.retryAfter`
 * says otherwise).
 */
function throttledError(ctx: ClassifyContext, { response, code, details, said }: RestAnswer): AzureApiError {
  if (isOperationInProgressCode(code)) {
    return new OperationInProgressError(`${where(ctx)}: another operation is in progress (${said})`, details);
  }
  const retryAfterMs = retryAfterFromHeaders((h) => headerOf(response, h), ctx.now, {
    capMs: AZURE_RETRY_AFTER_CAP_MS,
    ...ctx.retryAfter,
  });
  const notBefore = new Date(ctx.now.getTime() + retryAfterMs);
  return new ThrottledError(
    `${where(ctx)}: throttled (${said}); retry after ${Math.ceil(retryAfterMs / 1000)}s, at ${notBefore.toISOString()}`,
    { ...details, retryAfterMs, notBefore },
  );
}
