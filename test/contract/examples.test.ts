/**
 * The official examples vendored with the specs: each passes the contract validator (the check
 * that the validator is wired right, with mutations it must catch), and each example of an
 * operation the operator uses is served by a local HTTPS server and read with the project's real
 * adapters and the real SDK clients, pinning what they read. Requests the adapters send while
 * reading them are validated too. The replica examples are replayed against the emulator: their
 * requests sent to it, its answers validated and compared with theirs.
 */
import { Agent, fetch } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createAzureAdapters } from "../../src/azure/index.js";
import { readMetricsAnswer } from "../../src/azure/metric-samples.js";
import type { RunningEmulator, TrafficExchange } from "../../src/emulator/index.js";
import { startTestEmulator, staticCredential } from "../azure/helpers.js";
import { ContractValidator, formatViolations } from "./contract.js";
import { exampleExchanges, type OfficialExample, officialExamples } from "./examples.js";
import { type ReplayAnswer, type ReplayServer, startReplayServer } from "./replay-server.js";

// Loading the specs and serving over TLS take a second or two, more on a loaded machine.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const SIGNALR_EXAMPLES =
  "specification/signalr/resource-manager/Microsoft.SignalRService/stable/2024-03-01/examples";
const WEBPUBSUB_EXAMPLES =
  "specification/webpubsub/resource-manager/Microsoft.SignalRService/stable/2024-03-01/examples";
const METRICS_EXAMPLES = "specification/monitor/data-plane/Microsoft.Insights/stable/2024-02-01/examples";
const AUTOSCALE_EXAMPLES =
  "specification/monitor/resource-manager/Microsoft.Insights/stable/2015-04-01/examples";

let validator: ContractValidator;
let server: ReplayServer;
const examples = officialExamples();

function example(file: string): OfficialExample {
  const found = examples.find((e) => e.file === file);
  if (!found) throw new Error(`example ${file} is not vendored`);
  return found;
}

function answerOf(ex: OfficialExample, status: number): ReplayAnswer {
  const r = ex.responses.find((x) => x.status === status);
  if (!r) throw new Error(`${ex.file} has no ${status} answer`);
  return { status: r.status, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) };
}

/** The resource ID in an example's URL (ARM path without query), with the type spelled as ARM IDs spell it. */
function resourceIdOf(ex: OfficialExample): string {
  return new URL(ex.url).pathname
    .replace(/\/skus$/, "")
    .replace("/signalR/", "/SignalR/")
    .replace("/webPubSub/", "/WebPubSub/");
}

function adapters() {
  return createAzureAdapters({
    credential: staticCredential(),
    armEndpoint: server.url,
    metricsEndpoint: (region) => `${server.url}/metrics/${region}`,
    ca: server.ca,
    requestTimeoutMs: 5_000,
  });
}

/** The adapter's last (or first) request of `method` with the answer it got, as one exchange. */
function lastExchange(
  method: string,
  answer: ReplayAnswer,
  which: "last" | "first" = "last",
): TrafficExchange {
  const sent = which === "last" ? [...server.requests].reverse() : server.requests;
  const req = sent.find((r) => r.method === method);
  if (!req) throw new Error(`no ${method} request was sent`);
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

describe("official examples against the validator", () => {
  it("finds every vendored example of the operations the operator uses", () => {
    expect(examples.map((e) => `${e.operationId} ${e.file.split("/").at(-1)}`).sort()).toEqual([
      "AutoscaleSettings_ListBySubscription listAutoscaleSettingBySubscription.json",
      "Batch MetricBatchExample.json",
      "Batch MetricBatchExample2.json",
      "SignalRReplicas_CreateOrUpdate SignalRReplicas_CreateOrUpdate.json",
      "SignalRReplicas_Get SignalRReplicas_Get.json",
      "SignalRReplicas_List SignalRReplicas_List.json",
      "SignalRReplicas_Update SignalRReplicas_Update.json",
      "SignalR_Get SignalR_Get.json",
      "SignalR_ListBySubscription SignalR_ListBySubscription.json",
      "SignalR_ListReplicaSkus SignalR_ListReplicaSkus.json",
      "SignalR_ListSkus SignalR_ListSkus.json",
      "SignalR_Update SignalR_Update.json",
      "WebPubSubReplicas_CreateOrUpdate WebPubSubReplicas_CreateOrUpdate.json",
      "WebPubSubReplicas_Get WebPubSubReplicas_Get.json",
      "WebPubSubReplicas_List WebPubSubReplicas_List.json",
      "WebPubSubReplicas_Update WebPubSubReplicas_Update.json",
      "WebPubSub_Get WebPubSub_Get.json",
      "WebPubSub_ListBySubscription WebPubSub_ListBySubscription.json",
      "WebPubSub_ListReplicaSkus WebPubSub_ListReplicaSkus.json",
      "WebPubSub_ListSkus WebPubSub_ListSkus.json",
      "WebPubSub_Update WebPubSub_Update.json",
    ]);
  });

  it("every example's request and each of its responses follow the spec (0 violations)", async () => {
    const results = [];
    for (const ex of examples) {
      for (const exchange of exampleExchanges(ex)) {
        const r = await validator.validate(exchange);
        expect(r.operation, ex.file).toBe(
          `${ex.operationId}@${new URL(ex.url).searchParams.get("api-version")}`,
        );
        results.push(...r.violations);
      }
    }
    expect(results, formatViolations(results)).toEqual([]);
  });

  it("catches what breaks the contract: a wrong type, an unlisted status, an unknown api-version, an accepted update without polling URLs, a missing parameter", async () => {
    const get = example(`${SIGNALR_EXAMPLES}/SignalR_Get.json`);
    const [ok] = exampleExchanges(get) as [TrafficExchange];
    const body = structuredClone(ok.response.body) as { properties: Record<string, unknown> };
    body.properties["publicPort"] = "443";
    const wrongType = await validator.validate({ ...ok, response: { ...ok.response, body } });
    expect(wrongType.violations.map((v) => [v.direction, v.code, v.path])).toEqual([
      ["response", "INVALID_TYPE", "$.properties.publicPort"],
    ]);

    const unlisted = await validator.validate({ ...ok, response: { ...ok.response, status: 201 } });
    expect(unlisted.violations.map((v) => v.code)).toEqual(["INVALID_RESPONSE_CODE"]);

    const oldVersion = await validator.validate({
      ...ok,
      request: { ...ok.request, url: ok.request.url.replace("2024-03-01", "2023-02-01") },
    });
    expect(oldVersion.violations.map((v) => [v.direction, v.code])).toEqual([
      ["request", "OPERATION_NOT_FOUND_IN_CACHE_WITH_API"],
    ]);

    const update = example(`${SIGNALR_EXAMPLES}/SignalR_Update.json`);
    const accepted = exampleExchanges(update).find((x) => x.response.status === 202) as TrafficExchange;
    const noPolling = await validator.validate({
      ...accepted,
      response: { ...accepted.response, headers: {} },
    });
    expect(noPolling.violations.map((v) => [v.direction, v.code])).toEqual([
      ["response", "LRO_RESPONSE_HEADER"],
    ]);

    const batch = example(`${METRICS_EXAMPLES}/MetricBatchExample2.json`);
    const [b] = exampleExchanges(batch) as [TrafficExchange];
    const noNames = await validator.validate({
      ...b,
      request: { ...b.request, url: b.request.url.replace(/&?metricnames=[^&]*/, "") },
    });
    expect(noNames.violations.map((v) => [v.direction, v.code])).toContainEqual([
      "request",
      "MISSING_REQUIRED_PARAMETER",
    ]);
  });
});

const SERVICES = [
  { service: "SignalR", dir: SIGNALR_EXAMPLES, name: "mySignalRService" },
  { service: "WebPubSub", dir: WEBPUBSUB_EXAMPLES, name: "myWebPubSubService" },
] as const;

describe.each(SERVICES)("official $service examples read by the adapters", ({ service, dir, name }) => {
  it(`${service}_Get: SKU, units, provisioning state, location`, async () => {
    const ex = example(`${dir}/${service}_Get.json`);
    server.answer(() => answerOf(ex, 200));
    const instance = await adapters().instances.get(resourceIdOf(ex));
    expect(instance).toEqual({
      resourceId: resourceIdOf(ex),
      service,
      name,
      location: "eastus",
      sku: "Premium_P1",
      tier: "Premium",
      units: 1,
      provisioningState: "Succeeded",
      terminal: true,
    });
    const sent = await validator.validate(lastExchange("GET", answerOf(ex, 200)));
    expect(sent.operation).toBe(`${service}_Get@2024-03-01`);
    expect(sent.violations, formatViolations(sent.violations)).toEqual([]);
  });

  it(`${service}_ListSkus: the ladders of the instance's own resource type, not the replicas' entries`, async () => {
    const ex = example(`${dir}/${service}_ListSkus.json`);
    server.answer(() => answerOf(ex, 200));
    const allowed = await adapters().instances.listSkus(resourceIdOf(ex));
    // Only the entries of the instance's own resource type are kept: the example's Premium_P1
    // entry is for Microsoft.SignalRService/<type>/replicas.
    expect(allowed.skus.map((s) => s.sku)).toEqual(["Free_F1", "Standard_S1"]);
    expect(allowed.ladders.Standard_S1).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100,
    ]);
    // The instance's own P1 ladder is not in the answer, so it stays the documented fallback.
    expect(allowed.fromService).toEqual(["Standard_S1"]);
    const sent = await validator.validate(lastExchange("GET", answerOf(ex, 200)));
    expect(sent.operation).toBe(`${service}_ListSkus@2024-03-01`);
    expect(sent.violations, formatViolations(sent.violations)).toEqual([]);
  });

  it(`${service}_ListBySubscription: each instance with its region, SKU and units`, async () => {
    const ex = example(`${dir}/${service}_ListBySubscription.json`);
    server.answer(() => answerOf(ex, 200));
    const list = await adapters().instances.listBySubscription(
      "00000000-0000-0000-0000-000000000000",
      service,
    );
    expect(list.map((i) => [i.name, i.location, i.sku, i.units, i.provisioningState])).toEqual([
      [name, "eastus", "Premium_P1", 1, "Succeeded"],
    ]);
    const sent = await validator.validate(lastExchange("GET", answerOf(ex, 200)));
    expect(sent.operation).toBe(`${service}_ListBySubscription@2024-03-01`);
    expect(sent.violations, formatViolations(sent.violations)).toEqual([]);
  });

  it(`${service}_Update answered 200: applied at once; the PATCH the adapter sends follows the spec`, async () => {
    const ex = example(`${dir}/${service}_Update.json`);
    server.answer((req) => (req.method === "PATCH" ? answerOf(ex, 200) : undefined));
    const a = adapters();
    const id = resourceIdOf(ex);
    a.instances.rememberRegion(id, "eastus");
    const op = await a.instances.beginScale(id, { sku: "Premium_P1", units: 1 });
    expect(op).toMatchObject({ resourceId: id, target: { sku: "Premium_P1", units: 1 }, acceptedWith: 200 });
    expect(op.operationUrl).toBeUndefined();
    const sent = await validator.validate(lastExchange("PATCH", answerOf(ex, 200)));
    expect(sent.operation).toBe(`${service}_Update@2024-03-01`);
    expect(sent.violations, formatViolations(sent.violations)).toEqual([]);
  });

  it(`${service}_Update answered 202: accepted, with the operation's Azure-AsyncOperation URL`, async () => {
    const ex = example(`${dir}/${service}_Update.json`);
    server.answer((req) => (req.method === "PATCH" ? answerOf(ex, 202) : undefined));
    const a = adapters();
    const id = resourceIdOf(ex);
    a.instances.rememberRegion(id, "eastus");
    const op = await a.instances.beginScale(id, { sku: "Premium_P1", units: 1 });
    expect(op.acceptedWith).toBe(202);
    expect(op.operationUrl).toBe(
      `${server.url}/subscriptions/subid/providers/Microsoft.SignalRService/...pathToOperationStatus...`,
    );
  });
});

describe("official Monitor examples read by the adapters", () => {
  it("MetricBatchExample: one result per resource at PT15M; timestamp-only points carry no value", async () => {
    const ex = example(`${METRICS_EXAMPLES}/MetricBatchExample.json`);
    server.answer(() => answerOf(ex, 200));
    const ids = (ex.requestBody as { resourceids: string[] }).resourceids;
    const answer = await adapters().metrics.queryBatch(
      {
        scope: { subscriptionId: "12345678-abcd-1234-abcd-123456789abc", region: "eastus" },
        service: "SignalR",
        resourceIds: ids,
      },
      {
        operation: "contract",
        metricNames: ["Ingress", "Egress"],
        start: new Date("2023-02-01T20:00:00.123Z"),
        end: new Date("2023-02-01T23:00:00.345Z"),
        interval: "PT15M",
        aggregation: "average,minimum,maximum",
      },
    );
    if ("error" in answer) throw answer.error;
    expect(answer.results.map((r) => [r.resourceId, r.granularity, r.metrics.length])).toEqual([
      [ids[0], "PT15M", 2],
      [ids[1], "PT15M", 2],
    ]);
    const idle = answer.results[0]?.metrics[0]?.timeseries[1]?.data ?? [];
    expect(idle).toHaveLength(12);
    expect(idle.filter((p) => p.average === undefined && p.maximum === undefined)).toHaveLength(11);
    // A SignalR reader finds none of its metrics in a Storage answer: every one is absent, no sample.
    const read = readMetricsAnswer("SignalR", ids[0] as string, answer.results[0] as never);
    expect(read.samples).toEqual([]);
    expect(read.absent).toHaveLength(6);
    expect(read.grainSeconds).toBe(900);
  });

  it("MetricBatchExample2: FULL answered as one PT4H bucket per resource", async () => {
    const ex = example(`${METRICS_EXAMPLES}/MetricBatchExample2.json`);
    server.answer(() => answerOf(ex, 200));
    const ids = (ex.requestBody as { resourceids: string[] }).resourceids;
    const answer = await adapters().metrics.queryBatch(
      {
        scope: { subscriptionId: "12345678-abcd-1234-abcd-123456789abc", region: "westus2" },
        service: "SignalR",
        resourceIds: ids,
      },
      {
        operation: "contract",
        metricNames: ["cacheWrite"],
        start: new Date("2023-11-07T14:00:00Z"),
        end: new Date("2023-11-07T18:00:00Z"),
        interval: "FULL",
        aggregation: "average",
      },
    );
    if ("error" in answer) throw answer.error;
    expect(
      answer.results.map((r) => [r.granularity, r.metrics[0]?.timeseries[0]?.data?.[0]?.average]),
    ).toEqual([
      ["PT4H", 35513.760416666664],
      ["PT4H", 7135.0625],
      ["PT4H", 6723.489583333333],
    ]);
    const sent = await validator.validate(lastExchange("POST", answerOf(ex, 200)));
    expect(sent.violations, formatViolations(sent.violations)).toEqual([]);
  });

  it("the example's empty-bucket layout on a SignalR counter: a timestamp-only point while the gauges have values is an idle 0", () => {
    // MetricBatchExample writes a bucket without data as a point carrying only timeStamp. The same
    // layout for MessageCount, in buckets where ServerLoad has a value, is a counter that counted
    // nothing (the idle-counter rule), not an unknown.
    const id =
      "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat";
    const times = [0, 1, 2].map((m) => new Date(Date.UTC(2023, 1, 1, 20, m)));
    const read = readMetricsAnswer("SignalR", id, {
      resourceId: id,
      granularity: "PT1M",
      metrics: [
        {
          id: `${id}/providers/Microsoft.Insights/metrics/ServerLoad`,
          name: "Server Load",
          errorCode: "Success",
          timeseries: [{ data: times.map((timeStamp) => ({ timeStamp, maximum: 12 })) }],
        },
        {
          id: `${id}/providers/Microsoft.Insights/metrics/MessageCount`,
          name: "Message Count",
          errorCode: "Success",
          timeseries: [{ data: times.map((timeStamp) => ({ timeStamp })) }],
        },
      ],
    });
    expect(read.samples.map((s) => [s.serverLoadPercent, s.messagesPerSecond, s.zeroFilled])).toEqual(
      times.map(() => [12, 0, ["messagesPerSecond"]]),
    );
  });

  it("AutoscaleSettings_ListBySubscription: each setting's target, state and first profile's bounds, all pages", async () => {
    const ex = example(`${AUTOSCALE_EXAMPLES}/listAutoscaleSettingBySubscription.json`);
    // The example's nextLink leads to a second page, answered as an empty last page. (Its
    // placeholder "https://management.azure.com/####…" names the root: the rest is a fragment.)
    server.answer((req) =>
      new URL(req.url).pathname === "/" ? { status: 200, body: { value: [] } } : answerOf(ex, 200),
    );
    const settings = await adapters().autoscaleSettings.listBySubscription(
      "b67f7fec-69fc-4974-9099-a26bd6ffeda3",
    );
    expect(settings).toEqual([
      {
        id: "/subscriptions/b67f7fec-69fc-4974-9099-a26bd6ffeda3/resourceGroups/TestingMetricsScaleSet/providers/microsoft.insights/autoscalesettings/MySetting",
        name: "MySetting",
        targetResourceUri:
          "/subscriptions/b67f7fec-69fc-4974-9099-a26bd6ffeda3/resourceGroups/TestingMetricsScaleSet/providers/Microsoft.Compute/virtualMachineScaleSets/testingsc",
        enabled: true,
        minimum: 1,
        maximum: 10,
        default: 1,
        profiles: 2,
      },
    ]);
    const sent = await validator.validate(lastExchange("GET", answerOf(ex, 200), "first"));
    expect(sent.violations, formatViolations(sent.violations)).toEqual([]);
  });
});

/**
 * The official replica examples replayed against the emulator: the instance and replica each
 * example reads are put in the emulator (the replica in the example's region, a primary in
 * another), the example's request is sent as it is written, and the emulator's answer must follow
 * the spec and agree with the example's on what the example fixes (ID, name, region, SKU, tags,
 * replica properties). Where they differ on purpose: `type` (the emulator writes the nested type
 * `…/replicas`, the examples the parent's), the provisioning state of a write still running
 * (`Updating`, `Creating`), and ListReplicaSkus (a replica's SKUs are the Premium ones; the
 * examples list Free and Standard too).
 */
describe.each(SERVICES)(
  "official $service replica examples replayed against the emulator",
  ({ service, dir, name }) => {
    const sub = "00000000-0000-0000-0000-000000000000";
    const primary = `/subscriptions/${sub}/resourceGroups/myResourceGroup/providers/Microsoft.SignalRService/${service}/${name}`;
    const replica = `${primary}/replicas/${name}-eastus`;
    let emulator: RunningEmulator;
    let agent: Agent;
    const recorded: TrafficExchange[] = [];

    beforeAll(async () => {
      emulator = await startTestEmulator({ recordTraffic: (e) => recorded.push(e) });
      agent = new Agent({ connect: { ca: emulator.caPem } });
    });
    afterAll(async () => {
      await agent?.close();
      await emulator?.stop();
    });
    beforeEach(() => {
      for (const i of emulator.control.instances()) emulator.control.removeInstance(i.resourceId);
      emulator.control.addInstance({ resourceId: primary, location: "westus", sku: "Premium_P1", units: 1 });
      emulator.control.addInstance({
        resourceId: replica,
        location: "eastus",
        sku: "Premium_P1",
        units: 1,
        tags: { key1: "value1" },
      });
    });

    /** Sends an example's request to the emulator; the exchange it recorded. */
    async function replay(ex: OfficialExample): Promise<TrafficExchange> {
      const before = recorded.length;
      const url = new URL(ex.url);
      await fetch(`${emulator.url}${url.pathname}${url.search}`, {
        method: ex.method,
        dispatcher: agent,
        headers: {
          authorization: "Bearer contract",
          ...(ex.requestBody !== undefined ? { "content-type": "application/json" } : {}),
        },
        ...(ex.requestBody !== undefined ? { body: JSON.stringify(ex.requestBody) } : {}),
      }).then((r) => r.arrayBuffer());
      const e = recorded[before];
      if (!e) throw new Error(`${ex.method} ${ex.url} was not recorded`);
      const result = await validator.validate(e);
      expect(result.operation).toBe(`${ex.operationId}@2024-03-01`);
      expect(result.violations, formatViolations(result.violations)).toEqual([]);
      return e;
    }

    type Replica = {
      id: string;
      name: string;
      type: string;
      location: string;
      tags: object;
      sku: object;
      properties: Record<string, string>;
    };
    /** What the example fixes of a replica, the ID's case folded. */
    const fixed = (r: Replica) => ({
      id: r.id.toLowerCase(),
      name: r.name,
      location: r.location,
      tags: r.tags,
      sku: r.sku,
      regionEndpointEnabled: r.properties["regionEndpointEnabled"],
      resourceStopped: r.properties["resourceStopped"],
    });

    it(`${service}Replicas_Get and ${service}Replicas_List: the example's replica`, async () => {
      for (const file of [`${service}Replicas_Get.json`, `${service}Replicas_List.json`]) {
        const ex = example(`${dir}/${file}`);
        const e = await replay(ex);
        const want = answerOf(ex, 200).body as Replica | { value: Replica[] };
        const got = e.response.body as Replica | { value: Replica[] };
        const one = (b: Replica | { value: Replica[] }) => ("value" in b ? b.value : [b]);
        expect(e.response.status).toBe(200);
        expect(one(got).map(fixed)).toEqual(one(want).map(fixed));
        expect(one(got).map((r) => [r.type, r.properties["provisioningState"]])).toEqual([
          [`Microsoft.SignalRService/${service}/replicas`, "Succeeded"],
        ]);
      }
    });

    it(`${service}Replicas_Update: 202 with the Replica, Location and Azure-AsyncOperation`, async () => {
      const ex = example(`${dir}/${service}Replicas_Update.json`);
      // The example asks for the capacity the replica has: give it 2 units first, so the write scales.
      emulator.control.updateInstance(replica, { units: 2 });
      const e = await replay(ex);
      const want = answerOf(ex, 202);
      expect(e.response.status).toBe(202);
      expect(Object.keys(e.response.headers)).toEqual(
        expect.arrayContaining(Object.keys(want.headers ?? {}).map((h) => h.toLowerCase())),
      );
      // The body is the replica as it is while the update runs: still 2 units, Updating.
      expect({ ...fixed(e.response.body as Replica), sku: undefined }).toEqual({
        ...fixed(want.body as Replica),
        sku: undefined,
      });
      expect((e.response.body as Replica).sku).toMatchObject({ name: "Premium_P1", capacity: 2 });
      expect((e.response.body as Replica).properties["provisioningState"]).toBe("Updating");
    });

    it(`${service}Replicas_CreateOrUpdate: 201 with the Replica and its polling URLs`, async () => {
      const ex = example(`${dir}/${service}Replicas_CreateOrUpdate.json`);
      emulator.control.removeInstance(replica);
      const e = await replay(ex);
      const want = answerOf(ex, 201);
      expect(e.response.status).toBe(201);
      expect(Object.keys(e.response.headers)).toEqual(
        expect.arrayContaining(Object.keys(want.headers ?? {}).map((h) => h.toLowerCase())),
      );
      expect(fixed(e.response.body as Replica)).toEqual(fixed(want.body as Replica));
      expect((e.response.body as Replica).properties["provisioningState"]).toBe("Creating");
    });

    it(`${service}_ListReplicaSkus: the example's entry shape, Premium SKUs of type …/replicas`, async () => {
      const ex = example(`${dir}/${service}_ListReplicaSkus.json`);
      const e = await replay(ex);
      type Sku = { resourceType: string; sku: { name: string }; capacity: Record<string, unknown> };
      const got = (e.response.body as { value: Sku[] }).value;
      const want = (answerOf(ex, 200).body as { value: Sku[] }).value;
      expect(new Set(got.map((s) => s.resourceType))).toEqual(new Set(want.map((s) => s.resourceType)));
      expect(got.map((s) => s.sku.name)).toEqual(["Premium_P1", "Premium_P2"]);
      expect(Object.keys(got[0]?.capacity ?? {}).sort()).toEqual(Object.keys(want[2]?.capacity ?? {}).sort());
    });
  },
);
