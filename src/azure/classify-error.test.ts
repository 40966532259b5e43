import { createHttpHeaders, createPipelineRequest, RestError } from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import { AZURE_RETRY_AFTER_CAP_MS } from "../shared/retry-after.js";
import { classifyAzureError } from "./classify-error.js";
import {
  AuthenticationError,
  InvalidRequestError,
  isDurableRefusal,
  NotFoundError,
  OperationInProgressError,
  RefusedError,
  ThrottledError,
  TransientError,
} from "./errors.js";

const NOW = new Date("2025-03-01T12:00:00Z");
const scope = { subscriptionId: "sub-a", region: "westeurope" };

function httpError(status: number, code?: string, headers: Record<string, string> = {}): RestError {
  const request = createPipelineRequest({
    url: "https://management.azure.com/x",
    headers: createHttpHeaders({ authorization: "Bearer secret-token" }),
  });
  return new RestError(`status ${status}`, {
    statusCode: status,
    ...(code ? { code } : {}),
    request,
    response: { status, headers: createHttpHeaders(headers), request },
  });
}

const classify = (err: unknown, callerAborted = false) =>
  classifyAzureError(err, { operation: "instances.get", now: NOW, scope, callerAborted });

describe("classifyAzureError", () => {
  it("says the reason an ARM error body gives in details (the SignalR provider's BadArgument)", () => {
    const err = httpError(400, "BadArgument");
    err.message = "Invalid arguments";
    (err.response as unknown as { parsedBody: unknown }).parsedBody = {
      error: {
        code: "BadArgument",
        message: "Invalid arguments",
        details: [{ code: "BadArgument", message: "SKU tier does not match name.", target: "sku" }],
      },
    };
    const e = classify(err) as InvalidRequestError;
    expect(e).toBeInstanceOf(InvalidRequestError);
    expect(e.message).toBe(
      "instances.get (sub-a/westeurope): invalid request (400 BadArgument: Invalid arguments: SKU tier does not match name.)",
    );
  });

  it("429 → throttled with the Retry-After wait", () => {
    const e = classify(httpError(429, "TooManyRequests", { "retry-after": "20", "x-ms-request-id": "r1" }));
    expect(e).toBeInstanceOf(ThrottledError);
    const t = e as ThrottledError;
    expect(t.retryAfterMs).toBe(20_000);
    expect(t.notBefore.toISOString()).toBe("2025-03-01T12:00:20.000Z");
    expect(t.requestId).toBe("r1");
    expect(t.scope).toEqual(scope);
    expect(t.fromGate).toBe(false);
  });

  it("429 with an HTTP date", () => {
    const e = classify(
      httpError(429, undefined, { "retry-after": "Sat, 01 Mar 2025 12:01:00 GMT" }),
    ) as ThrottledError;
    expect(e.retryAfterMs).toBe(60_000);
  });

  it("honours a long wait whole, in seconds or as a date, up to an hour; names its end", () => {
    const seconds = classify(httpError(429, undefined, { "retry-after": "1200" })) as ThrottledError;
    expect(seconds.retryAfterMs).toBe(1_200_000);
    expect(seconds.notBefore.toISOString()).toBe("2025-03-01T12:20:00.000Z");
    expect(seconds.message).toContain("at 2025-03-01T12:20:00.000Z");
    const date = classify(
      httpError(429, undefined, { "retry-after": "Sat, 01 Mar 2025 12:50:00 GMT" }),
    ) as ThrottledError;
    expect(date.retryAfterMs).toBe(3_000_000);
    const day = classify(httpError(429, undefined, { "retry-after": "86400" })) as ThrottledError;
    expect(day.retryAfterMs).toBe(AZURE_RETRY_AFTER_CAP_MS);
    expect(AZURE_RETRY_AFTER_CAP_MS).toBe(3_600_000);
  });

  it("529 from Monitor → throttled", () => {
    expect(classify(httpError(529))).toBeInstanceOf(ThrottledError);
  });

  it.each(["OperationInProgress", "AnotherOperationInProgress", "Conflict"])(
    "429 %s → operation in progress",
    (code) => {
      expect(classify(httpError(429, code))).toBeInstanceOf(OperationInProgressError);
    },
  );

  it.each([
    [409, InvalidRequestError],
    [401, AuthenticationError],
    [403, AuthenticationError],
    [404, NotFoundError],
    [400, InvalidRequestError],
    [422, InvalidRequestError],
    [408, TransientError],
    [500, TransientError],
    [503, TransientError],
  ] as const)("%d → %o", (status, type) => {
    const e = classify(httpError(status, "Code"));
    expect(e).toBeInstanceOf(type);
    expect(e?.status).toBe(status);
    expect(e?.code).toBe("Code");
  });

  it.each([
    [403, "RequestDisallowedByPolicy", "Resource 'hub' was disallowed by policy.", "Policy"],
    [403, "RequestDisallowedByAzure", "Resource 'hub' was disallowed by Azure.", "Policy"],
    [
      409,
      "ScopeLocked",
      "The scope '/subscriptions/…/hub' cannot perform write operation because it is locked.",
      "Lock",
    ],
    [400, "QuotaExceeded", "Operation results in exceeding quota limits of units.", "Quota"],
    [
      409,
      "SubscriptionIsOverQuotaForSku",
      "This region has quota of 150 units for your subscription.",
      "Quota",
    ],
    [
      400,
      "OperationNotAllowed",
      "The total units would exceed the subscription's regional quota of 150.",
      "Quota",
    ],
  ] as const)("%d %s → refused by %s, durable, with Azure's message", (status, code, message, by) => {
    const request = createPipelineRequest({ url: "https://management.azure.com/x" });
    const err = new RestError(message, {
      statusCode: status,
      code,
      request,
      response: { status, headers: createHttpHeaders(), request },
    });
    const e = classify(err);
    expect(e).toBeInstanceOf(RefusedError);
    expect((e as RefusedError).refusedBy).toBe(by);
    expect(e?.kind).toBe("Refused");
    expect(e?.code).toBe(code);
    expect(e?.message).toContain(message);
    expect(isDurableRefusal(e as RefusedError)).toBe(true);
    expect(e?.transient).toBe(false);
  });

  it.each(["OperationInProgress", "AnotherOperationInProgress", "Conflict", undefined])(
    "409 %s → operation in progress: only in-progress codes (or none) mean wait",
    (code) => {
      const e = classify(httpError(409, code));
      expect(e).toBeInstanceOf(OperationInProgressError);
      expect(isDurableRefusal(e as OperationInProgressError)).toBe(false);
    },
  );

  it.each(["MissingSubscriptionRegistration", "ResourceGroupBeingDeleted"])(
    "409 %s is not an operation in progress: a durable refusal",
    (code) => {
      const e = classify(httpError(409, code));
      expect(e?.kind).toBe("Invalid");
      expect(isDurableRefusal(e as InvalidRequestError)).toBe(true);
    },
  );

  it("a plain 403 stays an authorization failure; throttles and 5xx are not durable", () => {
    expect(classify(httpError(403, "AuthorizationFailed"))?.kind).toBe("Unauthorized");
    expect(isDurableRefusal(classify(httpError(429, "TooManyRequests")) as ThrottledError)).toBe(false);
    expect(isDurableRefusal(classify(httpError(503)) as TransientError)).toBe(false);
  });

  it("connection errors and timeouts are transient", () => {
    expect(classify(new RestError("reset", { code: "ECONNRESET" }))).toBeInstanceOf(TransientError);
    const abort = Object.assign(new Error("The operation was aborted."), { name: "AbortError" });
    expect(classify(abort)).toBeInstanceOf(TransientError);
  });

  it("leaves the caller's abort and foreign errors alone", () => {
    const abort = Object.assign(new Error("aborted"), { name: "AbortError" });
    expect(classify(abort, true)).toBeUndefined();
    expect(classify(new TypeError("bug"))).toBeUndefined();
  });

  it("credential failures are authentication errors", () => {
    const e = Object.assign(new Error("no token file"), { name: "CredentialUnavailableError" });
    expect(classify(e)).toBeInstanceOf(AuthenticationError);
  });

  it("never carries the request's token", () => {
    const e = classify(httpError(500, "InternalError"));
    expect(JSON.stringify(e)).not.toContain("secret-token");
    expect(String(e)).not.toContain("secret-token");
    expect(
      Object.values(e ?? {})
        .map(String)
        .join(" "),
    ).not.toContain("secret-token");
  });

  it("returns typed errors unchanged", () => {
    const e = new NotFoundError("gone", { operation: "x" });
    expect(classify(e)).toBe(e);
  });
});
