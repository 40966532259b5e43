/**
 * Every injected fault comes out of the adapters as its typed error, and a throttled scope is
 * left alone for the whole Retry-After while other scopes are served. The clock is the emulator's
 * virtual clock, stopped: time moves only when a test advances it.
 */
import { inspect } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AuthenticationError,
  type AzureApiError,
  InvalidRequestError,
  isDurableRefusal,
  NotFoundError,
  OperationInProgressError,
  RefusedError,
  ThrottledError,
  TransientError,
} from "../../src/azure/index.js";
import type { FaultAction, RunningEmulator } from "../../src/emulator/index.js";
import { recordFault } from "../reliability/record.js";
import {
  adaptersFor,
  caught,
  resetEmulator,
  SUB_A,
  SUB_B,
  signalrId,
  startTestEmulator,
  staticCredential,
} from "./helpers.js";

const WEST = signalrId("west-1");
const EAST = signalrId("east-1");
const OTHER_SUB = signalrId("west-2", SUB_B);
const START = new Date("2025-03-03T11:50:00Z");
const END = new Date("2025-03-03T12:00:00Z");

describe("faults become typed errors", { timeout: 30_000 }, () => {
  let emu: RunningEmulator;

  beforeAll(async () => {
    emu = await startTestEmulator({
      instances: [
        { resourceId: WEST, location: "westeurope", units: 2, connections: 1000 },
        { resourceId: EAST, location: "eastus", units: 2, connections: 1000 },
        { resourceId: OTHER_SUB, location: "westeurope", units: 2, connections: 1000 },
      ],
    });
  });
  afterAll(async () => {
    await emu?.stop();
  });
  beforeEach(() => resetEmulator(emu));

  const requestsTo = (name: string) =>
    emu.control.requests().filter((r) => r.path.endsWith(`/${name}`)).length;

  /** An adapter set that already knows the regions (as the controller's would after its first reads). */
  async function warmAdapters(overrides: Parameters<typeof adaptersFor>[1] = {}) {
    const az = adaptersFor(emu, overrides);
    for (const id of [WEST, EAST, OTHER_SUB]) await az.instances.get(id);
    emu.control.resetRequests();
    return az;
  }

  it("429 with Retry-After in seconds: the scope is not called again before its time; other scopes go on", async () => {
    const { instances, armGate } = await warmAdapters();
    emu.control.addFault({
      method: "GET",
      path: "**/SignalR/west-1",
      times: 1,
      action: { kind: "status", status: 429, code: "SubscriptionRequestsThrottled", retryAfterSeconds: 30 },
    });
    const err = (await caught(() => instances.get(WEST))) as ThrottledError;
    expect(err).toBeInstanceOf(ThrottledError);
    expect(err.retryAfterMs).toBe(30_000);
    expect(err.notBefore.toISOString()).toBe("2025-03-03T12:01:00.000Z");
    expect(err.scope).toEqual({ subscriptionId: SUB_A, region: "westeurope" });
    expect(err.fromGate).toBe(false);
    expect(requestsTo("west-1")).toBe(1);

    // Same scope: refused without a request, for the whole wait.
    for (const advance of [0, 10_000, 19_999]) {
      emu.control.advance(advance);
      const gated = (await caught(() => instances.get(WEST))) as ThrottledError;
      expect(gated).toBeInstanceOf(ThrottledError);
      expect(gated.fromGate).toBe(true);
    }
    expect(requestsTo("west-1")).toBe(1);
    expect(armGate.snapshot()).toHaveLength(1);

    // Other scopes are served meanwhile: another region, another subscription.
    expect((await instances.get(EAST)).units).toBe(2);
    expect((await instances.get(OTHER_SUB)).units).toBe(2);

    emu.control.advance(1);
    expect((await instances.get(WEST)).units).toBe(2);
    expect(requestsTo("west-1")).toBe(2);
  });

  it("429 with Retry-After as an HTTP date", async () => {
    const { instances } = await warmAdapters();
    emu.control.addFault({
      path: "**/SignalR/west-1",
      times: 1,
      action: { kind: "status", status: 429, retryAfterSeconds: 45, retryAfterFormat: "date" },
    });
    const err = (await caught(() => instances.get(WEST))) as ThrottledError;
    expect(err).toBeInstanceOf(ThrottledError);
    expect(err.retryAfterMs).toBe(45_000);
    emu.control.advance(44_000);
    expect(((await caught(() => instances.get(WEST))) as ThrottledError).fromGate).toBe(true);
    emu.control.advance(1_000);
    await expect(instances.get(WEST)).resolves.toMatchObject({ units: 2 });
  });

  it.each(["seconds", "date"] as const)(
    "ARM asks for 1,200 s (Retry-After as %s): no call before that time, the next one after it",
    async (format) => {
      const { instances, armGate } = await warmAdapters();
      emu.control.addFault({
        path: "**/SignalR/west-1",
        times: 1,
        action: { kind: "status", status: 429, retryAfterSeconds: 1_200, retryAfterFormat: format },
      });
      const err = (await caught(() => instances.get(WEST))) as ThrottledError;
      expect(err).toBeInstanceOf(ThrottledError);
      expect(err.retryAfterMs).toBe(1_200_000);
      const end = err.notBefore.getTime();
      expect(end).toBe(emu.clock.now().getTime() + 1_200_000);
      expect(err.message).toContain(err.notBefore.toISOString());
      // Past the old 5-minute cap and up to a millisecond before the end: refused without a request.
      for (const advance of [300_000, 300_000, 599_999]) {
        emu.control.advance(advance);
        const gated = (await caught(() => instances.get(WEST))) as ThrottledError;
        expect(gated.fromGate).toBe(true);
        expect(gated.message).toContain(err.notBefore.toISOString());
      }
      expect(armGate.notBefore(err.scope as NonNullable<typeof err.scope>)?.getTime()).toBe(end);
      const before = emu.control.requests().filter((r) => r.path.endsWith("/west-1"));
      expect(before).toHaveLength(1);
      emu.control.advance(1);
      await expect(instances.get(WEST)).resolves.toMatchObject({ units: 2 });
      const calls = emu.control.requests().filter((r) => r.path.endsWith("/west-1"));
      expect(calls).toHaveLength(2);
      expect(Date.parse(calls[1]?.at ?? "")).toBeGreaterThanOrEqual(end);
      recordFault({
        id: `arm-429-retry-after-${format}-1200s`,
        endpoint: "ARM",
        fault: `429 with Retry-After 1,200 s (${format === "date" ? "an HTTP date" : "seconds"})`,
        outcome: "no ARM call to the scope before the asked time; the next one right after it",
        test: `test/azure/faults.test.ts › ARM asks for 1,200 s (Retry-After as ${format})`,
        figures: {
          retryAfterSeconds: 1_200,
          honouredSeconds: err.retryAfterMs / 1000,
          armCallsBeforeEnd: before.length - 1,
          armCallsRefusedByGate: 3,
        },
      });
    },
  );

  it.each(["seconds", "date"] as const)(
    "Azure Monitor asks for 1,200 s (Retry-After as %s): no getBatch call before that time",
    async (format) => {
      const { metrics, metricsGate } = adaptersFor(emu);
      emu.control.addFault({
        path: "/metrics/westeurope/**",
        times: 1,
        action: { kind: "status", status: 429, retryAfterSeconds: 1_200, retryAfterFormat: format },
      });
      const targets = [{ resourceId: WEST, region: "westeurope" }];
      const first = await metrics.read(targets, { start: START, end: END });
      const err = first.failures[0]?.error as ThrottledError;
      expect(err).toBeInstanceOf(ThrottledError);
      expect(err.retryAfterMs).toBe(1_200_000);
      const end = err.notBefore.getTime();
      emu.control.advance(1_199_999);
      const second = await metrics.read(targets, { start: START, end: END });
      expect((second.failures[0]?.error as ThrottledError | undefined)?.fromGate).toBe(true);
      expect(metricsGate.snapshot()[0]?.notBefore.getTime()).toBe(end);
      const before = emu.control.requests().filter((r) => r.region === "westeurope");
      expect(before).toHaveLength(1);
      emu.control.advance(1);
      const third = await metrics.read(targets, { start: START, end: END });
      expect(third.failures).toEqual([]);
      const calls = emu.control.requests().filter((r) => r.region === "westeurope");
      expect(calls).toHaveLength(2);
      expect(Date.parse(calls[1]?.at ?? "")).toBeGreaterThanOrEqual(end);
      recordFault({
        id: `metrics-429-retry-after-${format}-1200s`,
        endpoint: "Azure Monitor",
        fault: `getBatch 429 with Retry-After 1,200 s (${format === "date" ? "an HTTP date" : "seconds"})`,
        outcome: "no getBatch call for the region before the asked time; the next one right after it",
        test: `test/azure/faults.test.ts › Azure Monitor asks for 1,200 s (Retry-After as ${format})`,
        figures: {
          retryAfterSeconds: 1_200,
          honouredSeconds: err.retryAfterMs / 1000,
          getBatchCallsBeforeEnd: before.length - 1,
        },
      });
    },
  );

  it("bounds a Retry-After longer than an hour to an hour", async () => {
    const { instances } = await warmAdapters();
    emu.control.addFault({
      path: "**/SignalR/west-1",
      times: 1,
      action: { kind: "status", status: 429, retryAfterSeconds: 86_400 },
    });
    const err = (await caught(() => instances.get(WEST))) as ThrottledError;
    expect(err.retryAfterMs).toBe(60 * 60_000);
  });

  it("a throttled metrics scope is left alone while another region is served", async () => {
    const { metrics, metricsGate } = adaptersFor(emu);
    emu.control.addFault({
      path: "/metrics/westeurope/**",
      times: 1,
      action: { kind: "status", status: 429, code: "TooManyRequests", retryAfterSeconds: 20 },
    });
    const targets = [
      { resourceId: WEST, region: "westeurope" },
      { resourceId: EAST, region: "eastus" },
    ];
    const first = await metrics.read(targets, { start: START, end: END });
    expect(first.calls).toBe(2);
    expect(first.failures).toHaveLength(1);
    expect(first.failures[0]?.error).toBeInstanceOf(ThrottledError);
    expect(first.failures[0]?.batch.scope.region).toBe("westeurope");
    expect(first.samples.has(EAST)).toBe(true);

    emu.control.advance(19_000);
    const second = await metrics.read(targets, { start: START, end: END });
    expect(second.calls).toBe(1);
    expect((second.failures[0]?.error as ThrottledError | undefined)?.fromGate).toBe(true);
    expect(second.samples.has(EAST)).toBe(true);
    expect(emu.control.requests().filter((r) => r.region === "westeurope")).toHaveLength(1);
    expect(metricsGate.snapshot()[0]?.scope.region).toBe("westeurope");

    emu.control.advance(1_000);
    const third = await metrics.read(targets, { start: START, end: END });
    expect(third.failures).toEqual([]);
    expect(third.samples.has(WEST)).toBe(true);
  });

  it("429 whose code says an operation is in progress is not throttling", async () => {
    const { instances, armGate } = await warmAdapters();
    emu.control.addFault({
      method: "PATCH",
      path: "**/SignalR/west-1",
      times: 1,
      action: { kind: "status", status: 429, code: "OperationInProgress", retryAfterSeconds: 10 },
    });
    const err = await caught(() => instances.beginScale(WEST, { sku: "Premium_P1", units: 3 }));
    expect(err).toBeInstanceOf(OperationInProgressError);
    expect(armGate.snapshot()).toEqual([]);
  });

  const cases: [string, FaultAction, new (...args: never[]) => AzureApiError][] = [
    ["409", { kind: "status", status: 409, code: "Conflict" }, OperationInProgressError],
    ["500", { kind: "status", status: 500 }, TransientError],
    ["503", { kind: "status", status: 503, code: "ServiceUnavailable" }, TransientError],
    ["401", { kind: "status", status: 401, code: "InvalidAuthenticationToken" }, AuthenticationError],
    ["403", { kind: "status", status: 403, code: "AuthorizationFailed" }, AuthenticationError],
    ["404", { kind: "status", status: 404, code: "ResourceNotFound" }, NotFoundError],
    ["400", { kind: "status", status: 400, code: "InvalidRequestContent" }, InvalidRequestError],
    ["a reset connection", { kind: "reset" }, TransientError],
  ];
  it.each(cases)("%s → %o", async (_name, action, type) => {
    const { instances } = await warmAdapters();
    emu.control.addFault({ path: "**/SignalR/west-1", times: 1, action });
    const err = await caught(() => instances.get(WEST));
    expect(err).toBeInstanceOf(type);
    expect((err as AzureApiError).operation).toBe("instances.get");
  });

  it("a slow answer within the timeout is served; a slower one or none at all times out", async () => {
    const { instances } = await warmAdapters({ requestTimeoutMs: 400 });
    emu.control.addFault({ path: "**/SignalR/west-1", times: 1, action: { kind: "delay", ms: 50 } });
    await expect(instances.get(WEST)).resolves.toMatchObject({ units: 2 });

    emu.control.addFault({ path: "**/SignalR/west-1", times: 1, action: { kind: "delay", ms: 1_500 } });
    const slow = (await caught(() => instances.get(WEST))) as TransientError;
    expect(slow).toBeInstanceOf(TransientError);
    expect(slow.code).toBe("Timeout");

    emu.control.addFault({ path: "**/SignalR/west-1", times: 1, action: { kind: "hang" } });
    const hung = (await caught(() => instances.get(WEST))) as TransientError;
    expect(hung).toBeInstanceOf(TransientError);
    expect(hung.code).toBe("Timeout");
  });

  it("a real 404 and an invalid unit count are typed too", async () => {
    const { instances } = await warmAdapters();
    expect(await caught(() => instances.get(signalrId("does-not-exist")))).toBeInstanceOf(NotFoundError);
    const invalid = (await caught(() =>
      instances.beginScale(WEST, { sku: "Premium_P1", units: 15 }),
    )) as InvalidRequestError;
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect(invalid.code).toBe("BadArgument");
    expect(invalid.status).toBe(400);
    expect(invalid.message).toContain(
      "Invalid arguments: The capacity 15 is not valid for Premium_P1. Allowed values: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20",
    );
  });

  describe("refusals by error code", () => {
    const RG = WEST.slice(0, WEST.indexOf("/providers/"));
    afterEach(() => {
      // Let the updates a test started end, so that the next one (back at T0) finds none running.
      emu.control.advance(120_000);
      for (const id of [WEST, EAST]) emu.control.updateInstance(id, { sku: "Premium_P1", units: 2 });
      emu.control.removeLocks(RG);
      for (const p of emu.control.policies()) emu.control.removePolicy(p.name);
      emu.control.clearQuotas();
    });

    it("the unit quota of the subscription in the region → RefusedError Quota (409 OperationNotAllowed)", async () => {
      const { instances } = await warmAdapters();
      emu.control.setQuota({ subscriptionId: SUB_A, region: "westeurope", units: 150 });
      const err = (await caught(() =>
        instances.beginScale(WEST, { sku: "Premium_P2", units: 200 }),
      )) as RefusedError;
      expect(err).toBeInstanceOf(RefusedError);
      expect([err.refusedBy, err.status, err.code, isDurableRefusal(err)]).toEqual([
        "Quota",
        409,
        "OperationNotAllowed",
        true,
      ]);
      expect(err.message).toContain(
        "Operation results in exceeding quota limits of SignalR units in region 'westeurope'. Maximum allowed: 150, Current in use: 2, Additional requested: 198.",
      );
      // Within the quota, and in another region, the same subscription still scales.
      expect((await instances.beginScale(WEST, { sku: "Premium_P1", units: 100 })).acceptedWith).toBe(202);
      expect((await instances.beginScale(EAST, { sku: "Premium_P2", units: 200 })).acceptedWith).toBe(202);
    });

    it("a ReadOnly lock on the resource group → RefusedError Lock (409 ScopeLocked); reads go on", async () => {
      const { instances } = await warmAdapters();
      emu.control.addLock({ scope: RG, level: "ReadOnly", name: "freeze" });
      const err = (await caught(() =>
        instances.beginScale(WEST, { sku: "Premium_P1", units: 3 }),
      )) as RefusedError;
      expect(err).toBeInstanceOf(RefusedError);
      expect([err.refusedBy, err.status, err.code]).toEqual(["Lock", 409, "ScopeLocked"]);
      expect(err.message).toContain(
        `cannot perform write operation because following scope(s) are locked: '${RG}'.`,
      );
      await expect(instances.get(WEST)).resolves.toMatchObject({ units: 2 });
      expect(emu.control.removeLocks(RG)).toBe(1);
      expect((await instances.beginScale(WEST, { sku: "Premium_P1", units: 3 })).acceptedWith).toBe(202);
    });

    it("an Azure Policy deny → RefusedError Policy (403 RequestDisallowedByPolicy) naming the assignment", async () => {
      const { instances } = await warmAdapters();
      emu.control.setPolicy({ name: "max-50-units", deny: { maxUnits: 50 } });
      const err = (await caught(() =>
        instances.beginScale(WEST, { sku: "Premium_P1", units: 60 }),
      )) as RefusedError;
      expect(err).toBeInstanceOf(RefusedError);
      expect([err.refusedBy, err.status, err.code]).toEqual(["Policy", 403, "RequestDisallowedByPolicy"]);
      expect(err.message).toContain("Resource 'west-1' was disallowed by policy. Policy identifiers:");
      expect(err.message).toContain('"policyAssignment":{"name":"max-50-units"');
      expect((await instances.beginScale(WEST, { sku: "Premium_P1", units: 50 })).acceptedWith).toBe(202);
    });

    it("a 409 while an update runs → OperationInProgressError (wait), not a refusal", async () => {
      const { instances } = await warmAdapters();
      await instances.beginScale(WEST, { sku: "Premium_P1", units: 3 });
      const err = (await caught(() =>
        instances.beginScale(WEST, { sku: "Premium_P1", units: 4 }),
      )) as OperationInProgressError;
      expect(err).toBeInstanceOf(OperationInProgressError);
      expect([err.status, err.code, isDurableRefusal(err)]).toEqual([409, "Conflict", false]);
    });
  });

  it("a scale accepted by ARM is reported started even when the first status poll is throttled", async () => {
    const { instances } = await warmAdapters();
    const id = signalrId("poll-fails");
    emu.control.addInstance({ resourceId: id, location: "westeurope", units: 1 });
    await instances.get(id);
    emu.control.addFault({
      path: "**/operationStatuses/*",
      times: 1,
      action: { kind: "status", status: 429, retryAfterSeconds: 5 },
    });
    const op = await instances.beginScale(id, { sku: "Premium_P1", units: 2 });
    expect(op.acceptedWith).toBe(202);
    expect(op.pollWarning).toMatch(/429|throttl/i);
    // The throttled poll gated the scope; once the wait is over the update is observed running.
    expect(await caught(() => instances.observeUpdate(id, op.target))).toBeInstanceOf(ThrottledError);
    emu.control.advance(5_000);
    expect((await instances.observeUpdate(id, op.target)).state).toBe("inProgress");
  });

  it("a credential that cannot get a token is an authentication error", async () => {
    const failing = {
      getToken: async () => {
        const e = new Error("no federated token file");
        e.name = "CredentialUnavailableError";
        throw e;
      },
    };
    const { instances, metrics } = adaptersFor(emu, { credential: failing });
    expect(await caught(() => instances.get(WEST))).toBeInstanceOf(AuthenticationError);
    const read = await metrics.read([{ resourceId: WEST, region: "westeurope" }], { start: START, end: END });
    expect(read.failures[0]?.error).toBeInstanceOf(AuthenticationError);
  });

  it("errors never carry the token", async () => {
    const secret = "eyJ-very-secret-token";
    const { instances } = adaptersFor(emu, { credential: staticCredential(secret) });
    emu.control.addFault({ path: "**/SignalR/west-1", times: 1, action: { kind: "status", status: 500 } });
    const err = await caught(() => instances.get(WEST));
    expect(JSON.stringify(err)).not.toContain(secret);
    expect(inspect(err, { depth: 10 })).not.toContain(secret);
    expect(String((err as Error).stack)).not.toContain(secret);
  });

  it("counts how often each rule fired", () => {
    emu.control.addFault({ path: "**/nothing", action: { kind: "reset" } });
    expect(emu.control.faults()).toEqual([
      expect.objectContaining({ id: expect.any(String), seen: 0, fired: 0 }),
    ]);
  });
});
