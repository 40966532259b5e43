import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_AFTER_CAP_MS, parseRetryAfter, retryAfterFromHeaders } from "./retry-after.js";

const NOW = new Date("2025-03-01T12:00:00Z");

describe("parseRetryAfter", () => {
  it.each([
    ["17", 17_000],
    [" 0 ", 0],
    ["1.5", 1_500],
    ["Sat, 01 Mar 2025 12:00:30 GMT", 30_000],
    ["Saturday, 01-Mar-25 12:01:00 GMT", 60_000],
    ["Sat Mar  1 12:00:05 2025", 5_000],
    ["Sat, 01 Mar 2025 11:00:00 GMT", 0],
  ])("%j → %d ms", (value, ms) => {
    expect(parseRetryAfter(value, NOW)).toBe(ms);
  });

  it.each([undefined, null, "", "-3", "soon", "2025-03-01T12:00:30Z", "Sat, 01 Mar 2025 12:00:30"])(
    "%j is not a Retry-After",
    (value) => {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    },
  );
});

describe("retryAfterFromHeaders", () => {
  const headers = (h: Record<string, string>) => (name: string) => h[name];

  it("prefers the millisecond headers", () => {
    expect(retryAfterFromHeaders(headers({ "retry-after-ms": "250", "retry-after": "9" }), NOW)).toBe(250);
    expect(retryAfterFromHeaders(headers({ "x-ms-retry-after-ms": "900", "retry-after": "9" }), NOW)).toBe(
      900,
    );
  });

  it("caps the wait", () => {
    expect(retryAfterFromHeaders(headers({ "retry-after": "86400" }), NOW)).toBe(DEFAULT_RETRY_AFTER_CAP_MS);
    expect(
      retryAfterFromHeaders(headers({ "retry-after": "Sun, 02 Mar 2025 12:00:00 GMT" }), NOW, {
        capMs: 10_000,
      }),
    ).toBe(10_000);
  });

  it("falls back to the default when no header is usable", () => {
    expect(retryAfterFromHeaders(headers({}), NOW)).toBe(30_000);
    expect(retryAfterFromHeaders(headers({ "retry-after": "later" }), NOW, { defaultMs: 5_000 })).toBe(5_000);
  });
});
