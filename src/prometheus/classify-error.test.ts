import { describe, expect, it } from "vitest";
import { httpError, transportError } from "./classify-error.js";

const S = "https://prom.example";
const NOW = new Date("2026-01-01T00:00:00Z");

/** An error shaped as undici's fetch throws it: `TypeError: fetch failed` with the socket error as cause. */
function fetchFailed(cause: unknown): TypeError {
  return new TypeError("fetch failed", { cause });
}

function coded(code: string, message = code): Error {
  return Object.assign(new Error(message), { code });
}

describe("transportError", () => {
  it("names plain http as the likely cause when the server answers without TLS", () => {
    const err = new TypeError("fetch failed", { cause: { code: "ERR_SSL_WRONG_VERSION_NUMBER" } });
    const typed = transportError(err, "https://prom:9090");
    expect(typed.kind).toBe("Tls");
    expect(typed.message).toMatch(/answered without TLS — is it plain http\?/);
  });

  it.each([
    [fetchFailed(coded("ECONNREFUSED")), "Unreachable", "ECONNREFUSED"],
    [fetchFailed(coded("ENOTFOUND")), "Unreachable", "ENOTFOUND"],
    [fetchFailed(coded("UND_ERR_SOCKET", "other side closed")), "Unreachable", "UND_ERR_SOCKET"],
    [
      fetchFailed(new AggregateError([coded("ECONNREFUSED"), coded("ECONNREFUSED")], "all failed")),
      "Unreachable",
      "ECONNREFUSED",
    ],
    [fetchFailed(coded("DEPTH_ZERO_SELF_SIGNED_CERT")), "Tls", "DEPTH_ZERO_SELF_SIGNED_CERT"],
    [fetchFailed(coded("UNABLE_TO_VERIFY_LEAF_SIGNATURE")), "Tls", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"],
    [fetchFailed(coded("ERR_TLS_CERT_ALTNAME_INVALID")), "Tls", "ERR_TLS_CERT_ALTNAME_INVALID"],
    [fetchFailed(coded("ERR_SSL_WRONG_VERSION_NUMBER")), "Tls", "ERR_SSL_WRONG_VERSION_NUMBER"],
    [fetchFailed(undefined), "Unreachable", undefined],
  ])("%s → %s", (err, kind, code) => {
    const typed = transportError(err, S);
    expect([typed.kind, typed.code, typed.server]).toEqual([kind, code, S]);
    expect(typed.message.startsWith(`${S}: `)).toBe(true);
  });
});

describe("httpError", () => {
  const answer = (status: number, body: unknown, retryAfter: string | null = null) => ({
    status,
    body: typeof body === "string" ? body : JSON.stringify(body),
    contentType: typeof body === "string" ? "text/plain" : "application/json",
    retryAfter,
  });

  it.each([
    [400, "bad_data", "QueryError"],
    [422, "execution", "QueryError"],
    [503, "timeout", "QueryError"],
    [503, "canceled", "QueryError"],
    [500, "internal", "Http"],
    [503, "unavailable", "Http"],
    [404, "not_found", "Http"],
  ])("%i %s → %s", (status, errorType, kind) => {
    const e = httpError(answer(status, { status: "error", errorType, error: "said\nmore" }), S, NOW);
    expect([e.kind, e.status, e.errorType]).toEqual([kind, status, errorType]);
    expect(e.message).toContain("said");
    expect(e.message).not.toContain("more");
  });

  it("reads Retry-After of a 429 or 503 only, as seconds or a date, capped", () => {
    expect(httpError(answer(429, "slow down", "12"), S, NOW).retryAfterMs).toBe(12_000);
    expect(httpError(answer(503, "x", "Thu, 01 Jan 2026 00:01:00 GMT"), S, NOW).retryAfterMs).toBe(60_000);
    expect(httpError(answer(503, "x", "86400"), S, NOW).retryAfterMs).toBe(300_000);
    expect(httpError(answer(503, "x"), S, NOW).retryAfterMs).toBeUndefined();
    expect(httpError(answer(500, "x", "12"), S, NOW).retryAfterMs).toBeUndefined();
  });

  it("says which answers retrying may fix", () => {
    const transient = (status: number) => httpError(answer(status, "x"), S, NOW).transient;
    expect([401, 403, 404, 408, 429, 500, 502].map(transient)).toEqual([
      false,
      false,
      false,
      true,
      true,
      true,
      true,
    ]);
    expect(httpError(answer(503, { status: "error", errorType: "timeout" }), S, NOW).transient).toBe(true);
    expect(httpError(answer(400, { status: "error", errorType: "bad_data" }), S, NOW).transient).toBe(false);
  });

  it("names a body that is not the API's by its content type, and an unread body too", () => {
    expect(httpError(answer(502, "<html>"), S, NOW).message).toBe(
      `${S}: HTTP 502 (not a Prometheus API body, text/plain)`,
    );
    expect(
      httpError({ status: 500, body: undefined, contentType: null, retryAfter: null }, S, NOW).kind,
    ).toBe("Http");
  });
});
