/**
 * Geo-replicas read and scaled by the adapters through the generic ARM calls of
 * `@azure/arm-resources` 8 (`replica-ops.ts`), against a local HTTPS server answering in the
 * shapes of the 2024-03-01 specs (the replica bodies of the official `SignalRReplicas_List`
 * example): every request the adapters send, and every answer given, is validated against the
 * vendored specs — the operation it resolves to, its parameters and body. Also: the errors of
 * the new SDK (a `@typespec/ts-http-runtime` RestError) classify as those of the classic clients,
 * and each call's throttling scope and quota records are the replica's own region.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  InvalidRequestError,
  NotFoundError,
  OperationInProgressError,
  RefusedError,
  ThrottledError,
} from "../../src/azure/errors.js";
import { type AzureCall, createAzureAdapters, ResourceIdError } from "../../src/azure/index.js";
import type { TrafficExchange } from "../../src/emulator/index.js";
import { caught, staticCredential } from "../azure/helpers.js";
import { ContractValidator, formatViolations } from "./contract.js";
import { type OfficialExample, officialExamples } from "./examples.js";
import {
  type ReplayAnswer,
  type ReplayRequest,
  type ReplayServer,
  startReplayServer,
} from "./replay-server.js";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const SUB = "00000000-0000-0000-0000-000000000000";
const RG = "myResourceGroup";

let validator: ContractValidator;
let server: ReplayServer;

beforeAll(async () => {
  validator = await ContractValidator.load();
  server = await startReplayServer();
});
beforeEach(() => {
  server.requests.length = 0;
});
afterAll(async () => {
  await server?.close();
});

function adapters(calls: AzureCall[] = []) {
  return createAzureAdapters({
    credential: staticCredential(),
    armEndpoint: server.url,
    metricsEndpoint: (region) => `${server.url}/metrics/${region}`,
    ca: server.ca,
    requestTimeoutMs: 5_000,
    // Token requests are reported too: only the calls to ARM are kept.
    observeCall: (c) => {
      if (c.api !== "token") calls.push(c);
    },
  });
}

const SERVICES = [
  { service: "SignalR", path: "signalR", name: "mySignalRService" },
  { service: "WebPubSub", path: "webPubSub", name: "myWebPubSubService" },
] as const;

/** A replica body as the official `SignalRReplicas_List` example of 2024-03-01 writes it (its `type` included). */
function replicaBody(
  service: "SignalR" | "WebPubSub",
  name: string,
  replica: string,
  over: { location?: string; capacity?: number; properties?: Record<string, string> } = {},
) {
  return {
    sku: { name: "Premium_P1", tier: "Premium", size: "P1", capacity: over.capacity ?? 1 },
    properties: {
      provisioningState: "Succeeded",
      regionEndpointEnabled: "Enabled",
      resourceStopped: "false",
      ...over.properties,
    },
    location: over.location ?? "eastus",
    tags: { key1: "value1" },
    id: `/subscriptions/${SUB}/resourcegroups/${RG}/providers/Microsoft.SignalRService/${service}/${name}/replicas/${replica}`,
    name: replica,
    type: `Microsoft.SignalRService/${service}`,
    systemData: {
      createdBy: "string",
      createdByType: "User",
      createdAt: "2015-02-03T04:05:06Z",
      lastModifiedBy: "string",
      lastModifiedByType: "User",
      lastModifiedAt: "2015-02-03T04:05:06Z",
    },
  };
}

function exchange(req: ReplayRequest, answer: ReplayAnswer): TrafficExchange {
  return {
    request: req,
    response: {
      status: answer.status,
      headers: {
        ...(answer.body !== undefined ? { "content-type": "application/json" } : {}),
        ...answer.headers,
      },
      body: answer.body,
    },
  };
}

/** Serves `route` and records every exchange for validation. */
function serve(route: (req: ReplayRequest, path: string) => ReplayAnswer | undefined): TrafficExchange[] {
  const seen: TrafficExchange[] = [];
  server.answer((req) => {
    const answer = route(req, new URL(req.url).pathname);
    if (answer) seen.push(exchange(req, answer));
    return answer;
  });
  return seen;
}

async function expectContract(exchanges: readonly TrafficExchange[], operations: readonly string[]) {
  const ops: string[] = [];
  const violations = [];
  for (const x of exchanges) {
    const r = await validator.validate(x);
    ops.push(r.operation);
    violations.push(...r.violations);
  }
  expect(ops).toEqual(operations);
  expect(violations, formatViolations(violations)).toEqual([]);
}

describe.each(SERVICES)("$service replicas through the generic ARM calls", ({ service, path, name }) => {
  const primary = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.SignalRService/${service}/${name}`;
  const replicaId = `${primary}/replicas/${name}-eastus`;
  const lower = (p: string) => p.toLowerCase();
  const replicaPath = lower(
    `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.SignalRService/${path}/${name}/replicas/${name}-eastus`,
  );

  it("Replicas_Get: the replica's SKU, units, own region and serving, its identity from its ID", async () => {
    const seen = serve((req, p) =>
      req.method === "GET" && lower(p) === replicaPath
        ? { status: 200, body: replicaBody(service, name, `${name}-eastus`, { capacity: 2 }) }
        : undefined,
    );
    const calls: AzureCall[] = [];
    const a = adapters(calls);
    const got = await a.instances.get(replicaId);
    expect(got).toEqual({
      resourceId: replicaId,
      service,
      name,
      role: "Replica",
      replica: `${name}-eastus`,
      primaryId: primary,
      location: "eastus",
      sku: "Premium_P1",
      tier: "Premium",
      units: 2,
      provisioningState: "Succeeded",
      terminal: true,
      serving: true,
    });
    expect(a.instances.regionOf(replicaId)).toBe("eastus");
    expect(a.instances.regionOf(primary)).toBeUndefined();
    expect(a.instances.scopeOf(replicaId)).toEqual({ subscriptionId: SUB, region: "eastus" });
    expect(calls.map((c) => [c.api, c.status])).toEqual([["GET replicas", 200]]);
    const sent = server.requests[0];
    expect(new URL(sent?.url ?? "").searchParams.getAll("api-version")).toEqual(["2024-03-01"]);
    expect(sent?.headers["authorization"]).toBe("Bearer test-token");
    expect(new URL(sent?.url ?? "").pathname).not.toContain("//");
    await expectContract(seen, [`${service}Replicas_Get@2024-03-01`]);
  });

  it.each([
    [{ resourceStopped: "true" }, 'resourceStopped is "true"'],
    [{ regionEndpointEnabled: "Disabled" }, 'regionEndpointEnabled is "Disabled"'],
    [{ provisioningState: "Failed" }, 'provisioningState is "Failed"'],
  ])("a replica that does not serve (%o) says why in ARM's words", async (properties, reason) => {
    serve((req) =>
      req.method === "GET"
        ? { status: 200, body: replicaBody(service, name, `${name}-eastus`, { properties }) }
        : undefined,
    );
    const got = await adapters().instances.get(replicaId);
    expect([got.serving, got.notServingReason]).toEqual([false, reason]);
  });

  it("Replicas_List: every replica of every page, each in its own region", async () => {
    const listPath = lower(
      `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.SignalRService/${path}/${name}/replicas`,
    );
    const seen = serve((req, p) => {
      if (req.method !== "GET" || lower(p) !== listPath) return undefined;
      const second = new URL(req.url).searchParams.get("$skipToken") === "2";
      return second
        ? {
            status: 200,
            body: {
              value: [
                replicaBody(service, name, `${name}-westus`, {
                  location: "West US",
                  properties: { resourceStopped: "true" },
                }),
              ],
            },
          }
        : {
            status: 200,
            body: {
              value: [replicaBody(service, name, `${name}-eastus`, { capacity: 3 })],
              nextLink: `https://management.azure.com${listPath}?api-version=2024-03-01&$skipToken=2`,
            },
          };
    });
    const a = adapters();
    a.instances.rememberRegion(primary, "westeurope");
    const replicas = await a.instances.listReplicas(primary);
    expect(
      replicas.map((r) => [r.resourceId, r.role, r.location, r.units, r.serving, r.notServingReason]),
    ).toEqual([
      [`${primary}/replicas/${name}-eastus`, "Replica", "eastus", 3, true, undefined],
      [`${primary}/replicas/${name}-westus`, "Replica", "westus", 1, false, 'resourceStopped is "true"'],
    ]);
    expect(a.instances.regionOf(`${primary}/replicas/${name}-westus`)).toBe("westus");
    expect(server.requests.map((r) => new URL(r.url).searchParams.getAll("api-version"))).toEqual([
      ["2024-03-01"],
      ["2024-03-01"],
    ]);
    await expectContract(seen, [`${service}Replicas_List@2024-03-01`, `${service}Replicas_List@2024-03-01`]);
    expect(await caught(() => a.instances.listReplicas(replicaId))).toBeInstanceOf(ResourceIdError);
  });

  it("ListReplicaSkus: the replica's own ladders", async () => {
    const skusPath = `${replicaPath}/skus`;
    const seen = serve((req, p) =>
      req.method === "GET" && lower(p) === skusPath
        ? {
            status: 200,
            body: {
              value: [
                {
                  resourceType: `Microsoft.SignalRService/${service}/replicas`,
                  sku: { name: "Premium_P1", tier: "Premium" },
                  capacity: {
                    minimum: 1,
                    maximum: 100,
                    default: 1,
                    allowedValues: [1, 2, 5, 10, 20, 50, 100],
                    scaleType: "Manual",
                  },
                },
                {
                  resourceType: `Microsoft.SignalRService/${service}`,
                  sku: { name: "Premium_P1", tier: "Premium" },
                  capacity: {
                    minimum: 1,
                    maximum: 100,
                    default: 1,
                    allowedValues: [1, 100],
                    scaleType: "Manual",
                  },
                },
                {
                  resourceType: `Microsoft.SignalRService/${service}`,
                  sku: { name: "Premium_P2", tier: "Premium" },
                  capacity: {
                    minimum: 100,
                    maximum: 1000,
                    default: 100,
                    allowedValues: [100, 200, 500, 1000],
                    scaleType: "Automatic",
                  },
                },
              ],
            },
          }
        : undefined,
    );
    const allowed = await adapters().instances.listSkus(replicaId);
    // The replica-typed P1 entry wins over the instance-typed one; P2, named only by the
    // instance's type in the replica's own list, stands for the replica.
    expect(allowed.ladders.Premium_P1).toEqual([1, 2, 5, 10, 20, 50, 100]);
    expect(allowed.ladders.Premium_P2).toEqual([100, 200, 500, 1000]);
    expect(allowed.fromService).toEqual(["Premium_P1", "Premium_P2"]);
    await expectContract(seen, [`${service}_ListReplicaSkus@2024-03-01`]);
  });

  it("Replicas_Update: the PATCH goes to the replica with its own location, accepted without waiting; observed to applied", async () => {
    const operation = `https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.SignalRService/locations/eastus/operationStatuses/op-1?api-version=2024-03-01`;
    let scaled = false;
    const seen = serve((req, p) => {
      if (lower(p) !== replicaPath) return undefined;
      if (req.method === "PATCH") {
        scaled = true;
        return {
          status: 202,
          headers: {
            location: operation,
            "azure-asyncoperation": operation,
            "content-type": "application/json",
          },
        };
      }
      if (req.method === "GET")
        return {
          status: 200,
          body: replicaBody(service, name, `${name}-eastus`, { capacity: scaled ? 5 : 1 }),
        };
      return undefined;
    });
    const calls: AzureCall[] = [];
    const a = adapters(calls);
    const before = await a.instances.get(replicaId);
    expect(before.units).toBe(1);
    const op = await a.instances.beginScale(replicaId, { sku: "Premium_P1", units: 5 });
    expect(op.resourceId).toBe(replicaId);
    expect(op.acceptedWith).toBe(202);
    expect(op.operationUrl).toContain("/operationStatuses/op-1");
    expect(op.resumeToken).toContain("operationLocation");
    const patch = server.requests.find((r) => r.method === "PATCH");
    expect(patch?.body).toEqual({
      location: "eastus",
      sku: { name: "Premium_P1", tier: "Premium", capacity: 5 },
    });
    // No poll was sent: the PATCH alone, between the two GETs.
    expect(server.requests.map((r) => r.method)).toEqual(["GET", "PATCH"]);
    expect((await a.instances.observeUpdate(replicaId, op.target)).state).toBe("applied");
    expect(calls.map((c) => c.api)).toEqual(["GET replicas", "PATCH replicas", "GET replicas"]);
    await expectContract(seen, [
      `${service}Replicas_Get@2024-03-01`,
      `${service}Replicas_Update@2024-03-01`,
      `${service}Replicas_Get@2024-03-01`,
    ]);
  });
});

describe("errors of the generic ARM calls classify as the classic clients'", () => {
  const primary = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.SignalRService/SignalR/mySignalRService`;
  const replicaId = `${primary}/replicas/mySignalRService-eastus`;
  const armError = (code: string, message: string, details?: unknown[]) => ({
    error: { code, message, ...(details ? { details } : {}) },
  });

  it("a 404 on the GET is NotFound, with ARM's code and request IDs", async () => {
    server.answer(() => ({
      status: 404,
      headers: { "x-ms-request-id": "req-1", "x-ms-correlation-request-id": "corr-1" },
      body: armError("ResourceNotFound", "The Resource 'x' was not found."),
    }));
    const err = await caught(() => adapters().instances.get(replicaId));
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).toJSON()).toMatchObject({
      status: 404,
      code: "ResourceNotFound",
      requestId: "req-1",
      correlationId: "corr-1",
    });
  });

  it("a 429 gates the replica's own scope for Retry-After, and the quota headers land in its region", async () => {
    server.answer((req) =>
      req.method === "GET"
        ? {
            status: 200,
            headers: { "x-ms-ratelimit-remaining-subscription-reads": "111" },
            body: replicaBody("SignalR", "mySignalRService", "mySignalRService-eastus"),
          }
        : { status: 429, headers: { "retry-after": "17" }, body: armError("TooManyRequests", "slow down") },
    );
    const a = adapters();
    // The first read learns the region; the quota headers of the next land in it.
    await a.instances.get(replicaId);
    await a.instances.get(replicaId);
    const quota = a.quota.snapshot().filter((q) => q.scope.region !== "unknown");
    expect(quota.map((q) => [q.scope.region, q.remaining["subscription-reads"]])).toEqual([["eastus", 111]]);
    const err = await caught(() => a.instances.beginScale(replicaId, { sku: "Premium_P1", units: 2 }));
    expect(err).toBeInstanceOf(ThrottledError);
    expect((err as ThrottledError).retryAfterMs).toBe(17_000);
    expect((err as ThrottledError).scope).toEqual({ subscriptionId: SUB, region: "eastus" });
    const gated = await caught(() => a.instances.get(replicaId));
    expect((gated as ThrottledError).fromGate).toBe(true);
    // The instance's scope (another region) is not gated.
    a.instances.rememberRegion(primary, "westeurope");
    expect(() => a.armGate.check(a.instances.scopeOf(primary), "x")).not.toThrow();
  });

  it("a 409 on the PATCH is an operation in progress; a quota refusal is Refused; a 400 quotes ARM's detail", async () => {
    const a = adapters();
    a.instances.rememberRegion(replicaId, "eastus");
    server.answer(() => ({ status: 409, body: armError("Conflict", "Another operation is in progress.") }));
    expect(
      await caught(() => a.instances.beginScale(replicaId, { sku: "Premium_P1", units: 2 })),
    ).toBeInstanceOf(OperationInProgressError);
    server.answer(() => ({
      status: 409,
      body: armError("OperationNotAllowed", "Exceeds quota of SignalRTotalUnits."),
    }));
    const refused = await caught(() => a.instances.beginScale(replicaId, { sku: "Premium_P1", units: 2 }));
    expect(refused).toBeInstanceOf(RefusedError);
    expect((refused as RefusedError).refusedBy).toBe("Quota");
    server.answer(() => ({
      status: 400,
      body: armError("InvalidArguments", "Invalid arguments", [
        { code: "BadArgument", message: "SKU tier does not match name.", target: "sku" },
      ]),
    }));
    const invalid = await caught(() => a.instances.beginScale(replicaId, { sku: "Premium_P1", units: 2 }));
    expect(invalid).toBeInstanceOf(InvalidRequestError);
    expect((invalid as InvalidRequestError).message).toContain(
      "Invalid arguments: SKU tier does not match name.",
    );
    server.answer(() => ({
      status: 400,
      body: armError("InvalidArguments", "Invalid arguments", [
        { code: "BadArgument", message: "Bad skus." },
      ]),
    }));
    const listed = await caught(() => a.instances.listSkus(replicaId));
    expect((listed as InvalidRequestError).message).toContain("Invalid arguments: Bad skus.");
  });

  it("no answer at all (connection refused) is Transient, as for the classic clients", async () => {
    const a = createAzureAdapters({
      credential: staticCredential(),
      // Port 1 on loopback: nothing listens there.
      armEndpoint: "https://127.0.0.1:1",
      ca: server.ca,
      requestTimeoutMs: 5_000,
    });
    const err = await caught(() => a.instances.listReplicas(primary));
    expect((err as { kind?: string }).kind).toBe("Transient");
    expect((err as { status?: number }).status).toBeUndefined();
  });

  it("a deadline aborts the call as a timeout (Transient), the caller's own abort is rethrown", async () => {
    server.answer(() => undefined);
    const a = adapters();
    const aborted = new AbortController();
    aborted.abort();
    const own = await caught(() => a.instances.get(replicaId, { signal: aborted.signal }));
    expect((own as Error).name).toBe("AbortError");
    const timedOut = await caught(() => a.instances.get(replicaId, { signal: AbortSignal.timeout(0) }));
    expect((timedOut as { kind?: string }).kind).toBe("Transient");
  });
});

describe("metrics of a replica: its own namespace, in its own region", () => {
  const primary = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.SignalRService/SignalR/mySignalRService`;
  const replicaId = `${primary}/replicas/mySignalRService-eastus`;
  const minute = (m: number) => new Date(Date.UTC(2024, 5, 1, 12, m));

  /** A getBatch answer: every asked metric of every asked resource, one value per minute. */
  function metricsAnswer(req: ReplayRequest): ReplayAnswer {
    const u = new URL(req.url);
    const names = (u.searchParams.get("metricnames") ?? "").split(",");
    const aggregation = (u.searchParams.get("aggregation") ?? "").toLowerCase();
    const ids = (req.body as { resourceids: string[] }).resourceids;
    return {
      status: 200,
      body: {
        values: ids.map((id) => ({
          starttime: minute(0).toISOString(),
          endtime: minute(3).toISOString(),
          interval: "PT1M",
          namespace: u.searchParams.get("metricnamespace"),
          resourceregion: "eastus",
          resourceid: id,
          value: names.map((n) => ({
            id: `${id}/providers/Microsoft.Insights/metrics/${n}`,
            type: "Microsoft.Insights/metrics",
            name: { value: n, localizedValue: n },
            displayDescription: n,
            unit: "Count",
            timeseries: [
              {
                metadatavalues: [],
                data: [0, 1, 2].map((m) => ({ timeStamp: minute(m).toISOString(), [aggregation]: 100 + m })),
              },
            ],
            errorCode: "Success",
          })),
        })),
      },
    };
  }

  it("a replica and its instance go in two getBatch calls, each to its region, the replica's in …/SignalR/replicas", async () => {
    const seen = serve((req, p) =>
      req.method === "POST" && p.endsWith("metrics:getBatch") ? metricsAnswer(req) : undefined,
    );
    const read = await adapters().metrics.read(
      [
        { resourceId: primary, region: "westeurope" },
        { resourceId: replicaId, region: "eastus" },
      ],
      { start: minute(0), end: minute(3) },
    );
    expect(read.failures).toEqual([]);
    const posts = server.requests.map((r) => {
      const u = new URL(r.url);
      return [
        u.pathname.split("/")[2],
        u.searchParams.get("metricnamespace"),
        (r.body as { resourceids: string[] }).resourceids,
      ];
    });
    // One query per aggregation (Maximum, Total) for each of the two batches (which run in parallel).
    expect(posts.map((p) => JSON.stringify(p)).sort()).toEqual(
      [
        ["eastus", "Microsoft.SignalRService/SignalR/replicas", [replicaId]],
        ["eastus", "Microsoft.SignalRService/SignalR/replicas", [replicaId]],
        ["westeurope", "Microsoft.SignalRService/SignalR", [primary]],
        ["westeurope", "Microsoft.SignalRService/SignalR", [primary]],
      ].map((p) => JSON.stringify(p)),
    );
    expect(read.samples.get(replicaId)?.map((s) => s.connections)).toEqual([100, 101, 102]);
    const violations = await validator.validateAll(seen);
    expect(violations, formatViolations(violations)).toEqual([]);
  });
});

/** The official replica examples of the 2024-03-01 specs, where they are vendored. */
const replicaExamples = officialExamples().filter((e) =>
  /Replicas_(Get|List|Update)$|_ListReplicaSkus$/.test(e.operationId),
);

describe.skipIf(replicaExamples.length === 0)("the official replica examples read by the adapters", () => {
  const ofOperation = (operationId: string) => {
    const found = replicaExamples.find((e) => e.operationId === operationId);
    if (!found) throw new Error(`no vendored example of ${operationId}`);
    return found;
  };
  const answerOf = (ex: OfficialExample, status: number): ReplayAnswer => {
    const r = ex.responses.find((x) => x.status === status);
    if (!r) throw new Error(`${ex.file} has no ${status} answer`);
    return { status: r.status, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) };
  };
  const replicaIdOf = (ex: OfficialExample) =>
    new URL(ex.url).pathname
      .replace(/\/skus$/, "")
      .replace("/signalR/", "/SignalR/")
      .replace("/webPubSub/", "/WebPubSub/");

  it.each(SERVICES)(
    "$service: Replicas_Get, Replicas_List, ListReplicaSkus and Replicas_Update (200 and 202)",
    async ({ service, name }) => {
      const primary = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.SignalRService/${service}/${name}`;
      const replica = `${primary}/replicas/${name}-eastus`;
      const get = ofOperation(`${service}Replicas_Get`);
      expect(replicaIdOf(get)).toBe(replica);
      server.answer(() => answerOf(get, 200));
      const a = adapters();
      expect(await a.instances.get(replica)).toEqual({
        resourceId: replica,
        service,
        name,
        role: "Replica",
        replica: `${name}-eastus`,
        primaryId: primary,
        location: "eastus",
        sku: "Premium_P1",
        tier: "Premium",
        units: 1,
        provisioningState: "Succeeded",
        terminal: true,
        serving: true,
      });

      server.answer(() => answerOf(ofOperation(`${service}Replicas_List`), 200));
      const listed = await a.instances.listReplicas(primary);
      // The example's ID spells resourcegroups in lower case: the adapter's is canonical.
      expect(listed.map((r) => [r.resourceId, r.location, r.units, r.serving])).toEqual([
        [replica, "eastus", 1, true],
      ]);

      server.answer(() => answerOf(ofOperation(`${service}_ListReplicaSkus`), 200));
      const allowed = await a.instances.listSkus(replica);
      expect(allowed.skus.map((s) => s.sku)).toEqual(["Free_F1", "Standard_S1", "Premium_P1"]);
      expect(allowed.fromService).toEqual(["Standard_S1", "Premium_P1"]);

      const update = ofOperation(`${service}Replicas_Update`);
      for (const status of [200, 202]) {
        server.requests.length = 0;
        server.answer((req) => (req.method === "PATCH" ? answerOf(update, status) : undefined));
        const op = await a.instances.beginScale(replica, { sku: "Premium_P1", units: 1 });
        expect([op.resourceId, op.acceptedWith]).toEqual([replica, status]);
        expect(server.requests.map((r) => r.method)).toEqual(["PATCH"]);
        const patch = server.requests[0] as ReplayRequest;
        const sent = await validator.validate(exchange(patch, answerOf(update, status)));
        expect(sent.operation).toBe(`${service}Replicas_Update@2024-03-01`);
        expect(sent.violations, formatViolations(sent.violations)).toEqual([]);
      }
    },
  );
});

describe("instances listed by subscription, every page, say whether they serve", () => {
  it("reads resourceStopped from each page's body (the SignalR SDK's model drops it)", async () => {
    const listPath = `/subscriptions/${SUB}/providers/Microsoft.SignalRService/signalR`;
    const instance = (name: string, resourceStopped: string) => ({
      id: `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.SignalRService/SignalR/${name}`,
      name,
      type: "Microsoft.SignalRService/SignalR",
      location: "eastus",
      sku: { name: "Premium_P1", tier: "Premium", size: "P1", capacity: 1 },
      properties: { provisioningState: "Succeeded", resourceStopped },
    });
    serve((req, p) => {
      if (req.method !== "GET" || p.toLowerCase() !== listPath.toLowerCase()) return undefined;
      return new URL(req.url).searchParams.get("$skipToken") === "2"
        ? { status: 200, body: { value: [instance("second-page", "true")] } }
        : {
            status: 200,
            body: {
              value: [instance("first-page", "false")],
              nextLink: `https://management.azure.com${listPath}?api-version=2024-03-01&$skipToken=2`,
            },
          };
    });
    const list = await adapters().instances.listBySubscription(SUB, "SignalR");
    expect(list.map((i) => [i.name, i.serving, i.notServingReason])).toEqual([
      ["first-page", true, undefined],
      ["second-page", false, 'resourceStopped is "true"'],
    ]);
    expect(server.requests).toHaveLength(2);
  });
});

describe("every replica ID of a subscription, through ARM's generic resource list", () => {
  it("asks Resources_List at 2025-04-01 for the replica type, follows every page, keeps the service's replica IDs", async () => {
    const listPath = `/subscriptions/${SUB}/resources`;
    const chat = `/subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.SignalRService/SignalR/chat`;
    const generic = (id: string) => ({
      id,
      name: id.split("/").at(-1),
      type: "Microsoft.SignalRService/SignalR/replicas",
      location: "eastus",
    });
    serve((req, p) => {
      if (req.method !== "GET" || p !== listPath) return undefined;
      return new URL(req.url).searchParams.get("$skipToken") === "2"
        ? { status: 200, body: { value: [generic(`${chat}/replicas/chat-westus`), generic("/not/an/id")] } }
        : {
            status: 200,
            body: {
              value: [
                generic(
                  `/subscriptions/${SUB}/resourcegroups/${RG}/providers/Microsoft.SignalRService/SignalR/chat/replicas/chat-eastus`,
                ),
                generic(chat),
              ],
              nextLink: `https://management.azure.com${listPath}?api-version=2025-04-01&$filter=x&$skipToken=2`,
            },
          };
    });
    const calls: AzureCall[] = [];
    const a = adapters(calls);
    expect(await a.instances.listReplicaIds(SUB, "SignalR")).toEqual([
      `${chat}/replicas/chat-eastus`,
      `${chat}/replicas/chat-westus`,
    ]);
    const [first, second] = server.requests.map((r) => new URL(r.url));
    expect(first?.searchParams.get("$filter")).toBe(
      "resourceType eq 'Microsoft.SignalRService/SignalR/replicas'",
    );
    expect(first?.searchParams.getAll("api-version")).toEqual(["2025-04-01"]);
    expect(second?.searchParams.getAll("api-version")).toEqual(["2025-04-01"]);
    expect(second?.searchParams.get("$skipToken")).toBe("2");
    // The generic list does not change the SignalR clients' api-version.
    serve((req) =>
      req.method === "GET" ? { status: 200, body: replicaBody("SignalR", "chat", "chat-eastus") } : undefined,
    );
    server.requests.length = 0;
    await a.instances.get(`${chat}/replicas/chat-eastus`);
    expect(new URL(server.requests[0]?.url ?? "").searchParams.getAll("api-version")).toEqual(["2024-03-01"]);
    expect(calls.map((c) => c.api)).toEqual(["GET resources", "GET resources", "GET replicas"]);
  });

  it("a throttled list gates the subscription's list scope, not a region's", async () => {
    server.answer(() => ({
      status: 429,
      headers: { "retry-after": "5" },
      body: { error: { code: "TooManyRequests", message: "x" } },
    }));
    const err = await caught(() => adapters().instances.listReplicaIds(SUB, "WebPubSub"));
    expect(err).toBeInstanceOf(ThrottledError);
    expect((err as ThrottledError).scope).toEqual({ subscriptionId: SUB, region: "*" });
    expect(new URL(server.requests[0]?.url ?? "").searchParams.get("$filter")).toBe(
      "resourceType eq 'Microsoft.SignalRService/WebPubSub/replicas'",
    );
  });
});
