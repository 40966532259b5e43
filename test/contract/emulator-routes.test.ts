/**
 * The emulator's own answers on every ARM and Azure Monitor route it serves (not its `/_emulator`
 * control API), asked as the vendored specs describe the calls (SignalR and Web PubSub at
 * 2024-03-01, autoscale settings at 2015-04-01, metrics:getBatch at 2024-02-01), validated
 * against those specs: reads, lists with paging, listSkus, an update as a long-running operation
 * with its status and result while running and after, the 409 of a second update, creation by
 * PUT, and the error answers of refused requests; the same for geo-replicas (Replicas_Get, _List,
 * _Update, _CreateOrUpdate, ListReplicaSkus, and getBatch in the replica namespace). A refused request is wrong on purpose: only its
 * answer is held to the contract.
 */
import { Agent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningEmulator, TrafficExchange } from "../../src/emulator/index.js";
import { SUB_A, signalrId, startTestEmulator, webPubSubId } from "../azure/helpers.js";
import { ContractValidator, type ContractViolation, formatViolations } from "./contract.js";

// Loading the specs and serving over TLS take a second or two, more on a loaded machine.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const ARM = "2024-03-01";
const CHAT_EAST = `${signalrId("chat")}/replicas/chat-eastus`;
const PUBSUB_EAST = `${webPubSubId("pubsub")}/replicas/pubsub-eastus`;
let emulator: RunningEmulator;
let validator: ContractValidator;
let agent: Agent;
const traffic: TrafficExchange[] = [];

beforeAll(async () => {
  validator = await ContractValidator.load();
  emulator = await startTestEmulator({
    armPageSize: 1,
    recordTraffic: (e) => traffic.push(e),
    instances: [
      { resourceId: signalrId("chat"), sku: "Premium_P1", units: 10, connections: 2000 },
      { resourceId: signalrId("chat2"), sku: "Standard_S1", units: 2, connections: 500 },
      { resourceId: webPubSubId("pubsub"), sku: "Premium_P1", units: 5, connections: 800 },
      { resourceId: CHAT_EAST, location: "eastus", sku: "Premium_P1", units: 2, connections: 900 },
      { resourceId: PUBSUB_EAST, location: "eastus", sku: "Premium_P1", units: 1, connections: 100 },
    ],
  });
  emulator.control.addAutoscaleSetting({ targetResourceId: signalrId("chat"), minimum: 1, maximum: 20 });
  agent = new Agent({ connect: { ca: emulator.caPem } });
});

afterAll(async () => {
  await agent?.close();
  await emulator?.stop();
});

/** Sends one request to the emulator; returns the exchange it recorded. */
async function call(method: string, path: string, body?: unknown): Promise<TrafficExchange> {
  const before = traffic.length;
  await fetch(`${emulator.url}${path}`, {
    method,
    dispatcher: agent,
    headers: {
      authorization: "Bearer contract",
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  }).then((r) => r.arrayBuffer());
  const exchange = traffic[before];
  if (!exchange) throw new Error(`${method} ${path} was not recorded`);
  return exchange;
}

/** The violations of exchanges, only on their answers when `answerOnly`. */
async function violationsOf(exchanges: TrafficExchange[], answerOnly = false): Promise<ContractViolation[]> {
  const all = await validator.validateAll(exchanges);
  return answerOnly ? all.filter((v) => v.direction === "response") : all;
}

const instancePath = (id: string) => `${id}?api-version=${ARM}`;

describe("the emulator's answers against the published contract", () => {
  it("reads, lists (every page), listSkus and the usages of SignalR and Web PubSub follow the specs", async () => {
    const exchanges = [
      await call("GET", instancePath(signalrId("chat"))),
      await call("GET", instancePath(webPubSubId("pubsub"))),
      await call("GET", `${signalrId("chat")}/skus?api-version=${ARM}`),
      await call("GET", `${webPubSubId("pubsub")}/skus?api-version=${ARM}`),
      await call(
        "GET",
        `/subscriptions/${SUB_A}/providers/Microsoft.SignalRService/locations/westeurope/usages?api-version=${ARM}`,
      ),
    ];
    // Lists of one item a page: follow every nextLink.
    for (const first of [
      `/subscriptions/${SUB_A}/providers/Microsoft.SignalRService/signalR?api-version=${ARM}`,
      `/subscriptions/${SUB_A}/resourceGroups/rg-chat/providers/Microsoft.SignalRService/signalR?api-version=${ARM}`,
      `/subscriptions/${SUB_A}/providers/Microsoft.SignalRService/webPubSub?api-version=${ARM}`,
    ]) {
      let next: string | undefined = first;
      while (next) {
        const e = await call("GET", next);
        exchanges.push(e);
        const link = (e.response.body as { nextLink?: string }).nextLink;
        next = link ? link.slice(emulator.url.length) : undefined;
      }
    }
    expect(
      exchanges.filter((e) => (e.response.body as { nextLink?: string }).nextLink).length,
    ).toBeGreaterThan(0);
    const violations = await violationsOf(exchanges);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("an update: 202 with its polling URLs, 409 for a second one, status and result while running and after", async () => {
    const id = signalrId("chat2");
    const patch = await call("PATCH", instancePath(id), {
      location: "westeurope",
      sku: { name: "Standard_S1", tier: "Standard", capacity: 3 },
    });
    expect(patch.response.status).toBe(202);
    const second = await call("PATCH", instancePath(id), {
      location: "westeurope",
      sku: { name: "Standard_S1", tier: "Standard", capacity: 4 },
    });
    expect(second.response.status).toBe(409);
    const statusUrl = patch.response.headers["azure-asyncoperation"] as string;
    const resultUrl = patch.response.headers["location"] as string;
    const running = [
      await call("GET", statusUrl.slice(emulator.url.length)),
      await call("GET", resultUrl.slice(emulator.url.length)),
      await call("GET", instancePath(id)),
    ];
    emulator.control.advance(10 * 60_000);
    const done = [
      await call("GET", statusUrl.slice(emulator.url.length)),
      await call("GET", resultUrl.slice(emulator.url.length)),
      await call("GET", instancePath(id)),
    ];
    expect(done.map((e) => e.response.status)).toEqual([200, 200, 200]);
    const violations = await violationsOf([patch, second, ...running, ...done]);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("a Web PubSub update and a creation by PUT follow the specs", async () => {
    const update = await call("PATCH", instancePath(webPubSubId("pubsub")), {
      location: "westeurope",
      sku: { name: "Premium_P1", tier: "Premium", capacity: 6 },
    });
    const create = await call("PUT", instancePath(signalrId("fresh")), {
      location: "westeurope",
      sku: { name: "Premium_P1", tier: "Premium", capacity: 1 },
    });
    expect([update.response.status, create.response.status]).toEqual([202, 201]);
    const violations = await violationsOf([update, create]);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("autoscale settings of a subscription and of a resource group follow the 2015-04-01 spec", async () => {
    const exchanges = [
      await call(
        "GET",
        `/subscriptions/${SUB_A}/providers/Microsoft.Insights/autoscalesettings?api-version=2015-04-01`,
      ),
      await call(
        "GET",
        `/subscriptions/${SUB_A}/resourcegroups/rg-chat/providers/Microsoft.Insights/autoscalesettings?api-version=2015-04-01`,
      ),
    ];
    expect((exchanges[0]?.response.body as { value?: unknown[] } | undefined)?.value).toHaveLength(1);
    const violations = await violationsOf(exchanges);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("metrics:getBatch at PT1M, PT1H and split by Endpoint follows metricBatch.json", async () => {
    const now = emulator.clock.nowMs();
    const q = (extra: string) =>
      `/metrics/westeurope/subscriptions/${SUB_A}/metrics:getBatch?api-version=2024-02-01&metricnamespace=Microsoft.SignalRService/SignalR&starttime=${new Date(now - 3_600_000).toISOString()}&endtime=${new Date(now).toISOString()}${extra}`;
    const body = { resourceids: [signalrId("chat"), signalrId("chat2")] };
    const exchanges = [
      await call(
        "POST",
        q("&metricnames=ServerLoad,ConnectionQuotaUtilization&interval=PT1M&aggregation=Maximum"),
        body,
      ),
      await call(
        "POST",
        q("&metricnames=MessageCount,InboundTraffic,OutboundTraffic&interval=PT1H&aggregation=Total"),
        body,
      ),
      await call(
        "POST",
        q("&metricnames=ConnectionCount&interval=PT1M&aggregation=Maximum&filter=Endpoint eq '*'"),
        body,
      ),
      await call(
        "POST",
        `/metrics/westeurope/subscriptions/${SUB_A}/metrics:getBatch?api-version=2024-02-01&metricnamespace=Microsoft.SignalRService/WebPubSub&metricnames=TotalConnectionCount&aggregation=Maximum`,
        { resourceids: [webPubSubId("pubsub")] },
      ),
    ];
    expect(exchanges.map((e) => e.response.status)).toEqual([200, 200, 200, 200]);
    const violations = await violationsOf(exchanges);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("the metrics plane's strict answers follow metricBatch.json: idle buckets, a failing metric, refusals, throttling", async () => {
    const now = emulator.clock.nowMs();
    const q = (query: string, service = "SignalR") =>
      `/metrics/westeurope/subscriptions/${SUB_A}/metrics:getBatch?api-version=2024-02-01&metricnamespace=Microsoft.SignalRService/${service}&starttime=${new Date(now - 900_000).toISOString()}&endtime=${new Date(now).toISOString()}&interval=PT1M&${query}`;
    const quiet = signalrId("quiet");
    emulator.control.addInstance({ resourceId: quiet, sku: "Premium_P1", units: 1, connections: 0 });
    const answered = [
      // A quiet instance's counters: every bucket a point with only its timestamp.
      await call("POST", q("metricnames=MessageCount,InboundTraffic,OutboundTraffic&aggregation=Total"), {
        resourceids: [quiet],
      }),
    ];
    emulator.control.addFault({
      path: "**/metrics:getBatch",
      times: 1,
      action: { kind: "metricError", metrics: ["ConnectionCount"], code: "InternalError", message: "failed" },
    });
    answered.push(
      await call("POST", q("metricnames=ServerLoad,ConnectionCount&aggregation=Maximum"), {
        resourceids: [signalrId("chat")],
      }),
    );
    type Body = { values: { value: { timeseries: { data: object[] }[] }[] }[] };
    const idle = (answered[0]?.response.body as Body | undefined)?.values[0]?.value[0]?.timeseries[0]?.data;
    expect(idle?.every((p) => Object.keys(p).join() === "timeStamp")).toBe(true);
    const refused = [
      await call("POST", q("metricnames=ServerLoad,MessageCount&aggregation=Maximum,Total"), {
        resourceids: [signalrId("chat")],
      }),
    ];
    emulator.control.setMetricsRateLimit({ capacity: 1, refillPerSecond: 0.01 });
    try {
      for (let i = 0; i < 2; i++) {
        refused.push(
          await call("POST", q("metricnames=ServerLoad&aggregation=Maximum"), {
            resourceids: [signalrId("chat")],
          }),
        );
      }
    } finally {
      emulator.control.setMetricsRateLimit(undefined);
    }
    expect(answered.map((e) => e.response.status)).toEqual([200, 200]);
    expect(refused.map((e) => e.response.status)).toEqual([400, 200, 429]);
    const violations = [...(await violationsOf(answered)), ...(await violationsOf(refused, true))];
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("refusals answer with the specs' error shape (ErrorResponse), whatever was wrong with the request", async () => {
    const refused = [
      await call("GET", instancePath(signalrId("missing"))),
      await call("GET", signalrId("chat")),
      await call(
        "GET",
        `/subscriptions/${SUB_A}/providers/Microsoft.SignalRService/locations/westeurope/operationStatuses/nope?api-version=${ARM}`,
      ),
      await call("PATCH", instancePath(signalrId("chat")), { sku: { name: "Premium_P1", capacity: 15 } }),
      await call(
        "POST",
        `/metrics/westeurope/subscriptions/${SUB_A}/metrics:getBatch?api-version=2024-02-01&metricnamespace=Microsoft.SignalRService/SignalR&metricnames=NoSuchMetric`,
        { resourceids: [signalrId("chat")] },
      ),
    ];
    expect(refused.map((e) => e.response.status)).toEqual([404, 400, 404, 400, 400]);
    const violations = await violationsOf(refused, true);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("replica reads, lists (every page), ListReplicaSkus of SignalR and Web PubSub follow the specs", async () => {
    const exchanges = [
      await call("GET", instancePath(CHAT_EAST)),
      await call("GET", instancePath(PUBSUB_EAST)),
      await call("GET", `${CHAT_EAST}/skus?api-version=${ARM}`),
      await call("GET", `${PUBSUB_EAST}/skus?api-version=${ARM}`),
      await call("GET", `${webPubSubId("pubsub")}/replicas?api-version=${ARM}`),
    ];
    emulator.control.addInstance({
      resourceId: `${signalrId("chat")}/replicas/chat-asia`,
      location: "southeastasia",
      units: 1,
    });
    let next: string | undefined = `${signalrId("chat")}/replicas?api-version=${ARM}`;
    const pages: TrafficExchange[] = [];
    while (next) {
      const e = await call("GET", next);
      pages.push(e);
      const link = (e.response.body as { nextLink?: string }).nextLink;
      next = link ? link.slice(emulator.url.length) : undefined;
    }
    expect(pages).toHaveLength(2);
    expect([...exchanges, ...pages].map((e) => e.response.status)).toEqual([
      200, 200, 200, 200, 200, 200, 200,
    ]);
    const violations = await violationsOf([...exchanges, ...pages]);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("a replica update: 202 with the Replica and its polling URLs, 409 for a second, status and result; a creation by PUT", async () => {
    const patch = await call("PATCH", instancePath(CHAT_EAST), {
      location: "eastus",
      sku: { name: "Premium_P1", tier: "Premium", capacity: 3 },
      properties: { resourceStopped: "false" },
    });
    expect(patch.response.status).toBe(202);
    const second = await call("PATCH", instancePath(CHAT_EAST), {
      location: "eastus",
      sku: { name: "Premium_P1", tier: "Premium", capacity: 4 },
    });
    expect(second.response.status).toBe(409);
    const statusUrl = patch.response.headers["azure-asyncoperation"] as string;
    const resultUrl = patch.response.headers["location"] as string;
    const running = [
      await call("GET", statusUrl.slice(emulator.url.length)),
      await call("GET", resultUrl.slice(emulator.url.length)),
    ];
    emulator.control.advance(10 * 60_000);
    const done = [
      await call("GET", statusUrl.slice(emulator.url.length)),
      await call("GET", resultUrl.slice(emulator.url.length)),
      await call("GET", instancePath(CHAT_EAST)),
    ];
    expect((done[2]?.response.body as { sku: { capacity: number } } | undefined)?.sku.capacity).toBe(3);
    const create = await call("PUT", instancePath(`${webPubSubId("pubsub")}/replicas/pubsub-japan`), {
      location: "japaneast",
      sku: { name: "Premium_P1", tier: "Premium", capacity: 1 },
      properties: { resourceStopped: "false" },
      tags: { key1: "value1" },
    });
    expect(create.response.status).toBe(201);
    const violations = await violationsOf([patch, second, ...running, ...done, create]);
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it('replica refusals answer with the ErrorResponse shape; a stopped replica reads resourceStopped "true"', async () => {
    const refused = [
      await call("GET", instancePath(`${signalrId("chat")}/replicas/nowhere`)),
      await call("GET", `${CHAT_EAST}?api-version=2023-02-01`),
      await call("PATCH", instancePath(CHAT_EAST), { sku: { name: "Standard_S1", capacity: 1 } }),
      await call("PUT", instancePath(`${signalrId("chat")}/replicas/chat-west`), {
        location: "westeurope",
        sku: { name: "Premium_P1", capacity: 1 },
      }),
    ];
    expect(refused.map((e) => e.response.status)).toEqual([404, 400, 400, 400]);
    emulator.control.failover(PUBSUB_EAST);
    const stopped = await call("GET", instancePath(PUBSUB_EAST));
    emulator.control.restore(PUBSUB_EAST);
    emulator.control.failover(PUBSUB_EAST, { cause: "endpointDisabled" });
    const disabled = await call("GET", instancePath(PUBSUB_EAST));
    emulator.control.restore(PUBSUB_EAST);
    expect(
      (disabled.response.body as { properties: { regionEndpointEnabled: string } }).properties
        .regionEndpointEnabled,
    ).toBe("Disabled");
    expect(
      (stopped.response.body as { properties: { resourceStopped: string } }).properties.resourceStopped,
    ).toBe("true");
    const violations = [...(await violationsOf(refused, true)), ...(await violationsOf([stopped, disabled]))];
    expect(violations, formatViolations(violations)).toEqual([]);
  });

  it("metrics:getBatch in the replica namespace, in the replica's region, follows metricBatch.json", async () => {
    const now = emulator.clock.nowMs();
    const exchanges = [
      await call(
        "POST",
        `/metrics/eastus/subscriptions/${SUB_A}/metrics:getBatch?api-version=2024-02-01&metricnamespace=Microsoft.SignalRService/SignalR/replicas&metricnames=ConnectionCount,ServerLoad&aggregation=Maximum&interval=PT1M&starttime=${new Date(now - 900_000).toISOString()}&endtime=${new Date(now).toISOString()}`,
        { resourceids: [CHAT_EAST] },
      ),
      await call(
        "POST",
        `/metrics/eastus/subscriptions/${SUB_A}/metrics:getBatch?api-version=2024-02-01&metricnamespace=Microsoft.SignalRService/WebPubSub/replicas&metricnames=TotalConnectionCount&aggregation=Maximum`,
        { resourceids: [PUBSUB_EAST] },
      ),
    ];
    expect(exchanges.map((e) => e.response.status)).toEqual([200, 200]);
    type Body = {
      values: { resourceregion: string; value: { timeseries: { data: { maximum?: number }[] }[] }[] }[];
    };
    const first = (exchanges[0]?.response.body as Body | undefined)?.values[0];
    expect(first?.resourceregion).toBe("eastus");
    expect(first?.value[0]?.timeseries[0]?.data.some((p) => (p.maximum ?? 0) > 0)).toBe(true);
    const violations = await violationsOf(exchanges);
    expect(violations, formatViolations(violations)).toEqual([]);
  });
});
