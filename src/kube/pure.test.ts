import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { backoffDelayMs, DEFAULT_BACKOFF } from "./backoff.js";
import {
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidError,
  NotFoundError,
  toKubeError,
  UnauthorizedError,
  UnavailableError,
  UnknownKubeError,
} from "./errors.js";
import { isLeaseHeld, type Lease, type LeaseRecord, observeLease, parseKubeTime } from "./lease.js";
import { fieldManagers, fieldsV1Has, targetsDeployment } from "./workloads.js";

const status = (code: number, reason: string, message = `${reason}!`): string =>
  JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message });

describe("toKubeError", () => {
  it.each([
    [409, "Conflict", ConflictError],
    [409, "AlreadyExists", ConflictError],
    [404, "NotFound", NotFoundError],
    [403, "Forbidden", ForbiddenError],
    [401, "Unauthorized", UnauthorizedError],
    [410, "Expired", GoneError],
    [422, "Invalid", InvalidError],
    [400, "BadRequest", InvalidError],
    [429, "TooManyRequests", UnavailableError],
    [500, "InternalError", UnavailableError],
    [503, "ServiceUnavailable", UnavailableError],
    [504, "Timeout", UnavailableError],
    [418, "Teapot", UnknownKubeError],
  ])("ApiException %i %s", (code, reason, Class) => {
    const err = toKubeError(new ApiException(code, "x", status(code, reason), {}), "do it");
    expect(err).toBeInstanceOf(Class);
    expect(err.status).toBe(code);
    expect(err.reason).toBe(reason);
    expect(err.message).toBe(`do it: ${reason}!`);
  });

  it("knows AlreadyExists, Retry-After and transience", () => {
    const exists = toKubeError(new ApiException(409, "x", status(409, "AlreadyExists"), {}));
    expect(exists instanceof ConflictError && exists.alreadyExists).toBe(true);
    const busy = toKubeError(
      new ApiException(429, "x", status(429, "TooManyRequests"), { "retry-after": "7" }),
    );
    expect(busy.retryAfterMs).toBe(7000);
    expect(busy.transient).toBe(true);
    expect(toKubeError(new ApiException(403, "x", status(403, "Forbidden"), {})).transient).toBe(false);
  });

  it("handles 401 without a body, the Watch's statusCode, network errors and timeouts", () => {
    expect(toKubeError(new ApiException(401, "Unauthorized", undefined, {}))).toBeInstanceOf(
      UnauthorizedError,
    );
    expect(toKubeError(Object.assign(new Error("Gone"), { statusCode: 410 }))).toBeInstanceOf(GoneError);
    const refused = new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    });
    expect(toKubeError(refused)).toBeInstanceOf(UnavailableError);
    expect(toKubeError(new DOMException("timed out", "TimeoutError"))).toBeInstanceOf(UnavailableError);
    const tls = new TypeError("fetch failed", { cause: { code: "DEPTH_ZERO_SELF_SIGNED_CERT" } });
    expect(toKubeError(tls)).toBeInstanceOf(UnknownKubeError);
    expect(toKubeError(new Error("bug"))).toBeInstanceOf(UnknownKubeError);
    const typed = new NotFoundError("x");
    expect(toKubeError(typed)).toBe(typed);
  });
});

describe("backoffDelayMs", () => {
  it("grows by the factor up to the ceiling, with the jitter taking up to its share off", () => {
    const top = () => 0;
    expect([1, 2, 3, 4, 10, 100].map((n) => backoffDelayMs(n, DEFAULT_BACKOFF, top))).toEqual([
      500, 1000, 2000, 4000, 30_000, 30_000,
    ]);
    expect(backoffDelayMs(3, DEFAULT_BACKOFF, () => 0.999999)).toBe(1000);
    expect(backoffDelayMs(0, DEFAULT_BACKOFF, top)).toBe(0);
    for (let i = 0; i < 100; i++) {
      const d = backoffDelayMs(5, DEFAULT_BACKOFF, Math.random);
      expect(d).toBeGreaterThanOrEqual(4000);
      expect(d).toBeLessThanOrEqual(8000);
    }
  });
});

describe("managedFields", () => {
  const entries = [
    {
      manager: "kubectl-create",
      operation: "Update",
      time: new Date("2025-01-01T00:00:00Z"),
      fieldsV1: { "f:spec": { "f:selector": {}, "f:template": {} } },
    },
    {
      manager: "signalr-autoscaler",
      operation: "Update",
      subresource: "scale",
      time: new Date("2025-01-01T00:01:00Z"),
      fieldsV1: { "f:spec": { "f:replicas": {} } },
    },
    {
      manager: "kubectl",
      operation: "Update",
      subresource: "scale",
      time: new Date("2025-01-01T00:02:00Z"),
      fieldsV1: { "f:spec": { "f:replicas": {} } },
    },
  ];

  it("finds the managers of spec.replicas, newest first", () => {
    expect(fieldManagers(entries).map((m) => [m.manager, m.subresource])).toEqual([
      ["kubectl", "scale"],
      ["signalr-autoscaler", "scale"],
    ]);
    expect(fieldManagers(undefined)).toEqual([]);
    expect(fieldsV1Has({ "f:spec": { "f:replicas": {} } }, ["f:spec", "f:replicas"])).toBe(true);
    expect(fieldsV1Has({ "f:spec": {} }, ["f:spec", "f:replicas"])).toBe(false);
    expect(fieldsV1Has(undefined, ["f:spec"])).toBe(false);
  });

  it("matches an HPA's scaleTargetRef to a Deployment", () => {
    expect(targetsDeployment({ apiVersion: "apps/v1", kind: "Deployment", name: "hub" }, "hub")).toBe(true);
    expect(targetsDeployment({ apiVersion: undefined, kind: "Deployment", name: "hub" }, "hub")).toBe(true);
    expect(targetsDeployment({ apiVersion: "apps/v1", kind: "StatefulSet", name: "hub" }, "hub")).toBe(false);
    expect(targetsDeployment({ apiVersion: "apps/v1", kind: "Deployment", name: "other" }, "hub")).toBe(
      false,
    );
    expect(targetsDeployment({ apiVersion: "example.com/v1", kind: "Deployment", name: "hub" }, "hub")).toBe(
      false,
    );
  });
});

describe("lease expiry", () => {
  const record = (over: Partial<LeaseRecord>): LeaseRecord => ({
    holderIdentity: "a",
    leaseDurationSeconds: 15,
    acquireTime: new Date("2025-01-01T00:00:00Z"),
    renewTime: new Date("2025-01-01T00:00:00Z"),
    leaseTransitions: 0,
    ...over,
  });

  const lease = (rv: string, over: Partial<LeaseRecord> = {}): Lease => ({
    namespace: "ns",
    name: "l",
    resourceVersion: rv,
    record: record(over),
  });

  it("is held for leaseDuration on the candidate's clock from when the record last changed", () => {
    const seen = observeLease(undefined, lease("1"), 1_000);
    expect(seen.seenAtMs).toBe(1_000);
    expect(isLeaseHeld(seen, 15_999, 10)).toBe(true);
    expect(isLeaseHeld(seen, 16_000, 10)).toBe(false);
    // The same record read again keeps its age; any change starts it again.
    expect(observeLease(seen, lease("1"), 9_000)).toBe(seen);
    expect(observeLease(seen, lease("2"), 9_000).seenAtMs).toBe(9_000);
    expect(observeLease(seen, lease("1", { holderIdentity: "b" }), 9_000).seenAtMs).toBe(9_000);
    expect(observeLease(seen, lease("1", { leaseTransitions: 1 }), 9_000).seenAtMs).toBe(9_000);
    expect(
      observeLease(seen, lease("1", { renewTime: new Date("2025-01-01T00:00:02Z") }), 9_000).seenAtMs,
    ).toBe(9_000);
  });

  it("never reads the record's timestamps: a renewTime far in the past or future changes nothing", () => {
    for (const renewTime of [new Date("2000-01-01T00:00:00Z"), new Date("2100-01-01T00:00:00Z")]) {
      const seen = observeLease(undefined, lease("1", { renewTime }), 0);
      expect(isLeaseHeld(seen, 14_999, 10)).toBe(true);
      expect(isLeaseHeld(seen, 15_000, 10)).toBe(false);
    }
  });

  it("is free without a holder; without a recorded duration the candidate's own applies", () => {
    expect(isLeaseHeld(observeLease(undefined, lease("1", { holderIdentity: "" }), 0), 1, 10)).toBe(false);
    const noDuration = observeLease(undefined, lease("1", { leaseDurationSeconds: undefined }), 0);
    expect(isLeaseHeld(noDuration, 9_999, 10)).toBe(true);
    expect(isLeaseHeld(noDuration, 10_000, 10)).toBe(false);
  });

  it("reads MicroTime strings", () => {
    expect(parseKubeTime("2025-01-01T00:00:00.123456Z")?.toISOString()).toBe("2025-01-01T00:00:00.123Z");
    expect(parseKubeTime("")).toBeUndefined();
    expect(parseKubeTime(undefined)).toBeUndefined();
  });
});
