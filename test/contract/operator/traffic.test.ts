/**
 * Everything the operator exchanges with Azure, held to Azure's published contract: the real
 * operator against a real kube-apiserver and the emulator, driven through the paths that matter —
 * a scale-out, a Premium_P1 → Premium_P2 step above 100 units, a Web PubSub scale-in, a 409 while
 * an update runs, throttled answers on ARM and on the metrics plane, autoscale settings — plus the
 * reads the adapters make besides the pass (listSkus, lists by subscription, the history read).
 * Every request and response the emulator answered is recorded (`emulator/traffic.ts`) and
 * validated against the vendored specs (`../contract.ts`): 0 violations. ARM's generic resource
 * list (the replicas' discovery), whose spec is not vendored, is checked for its api-version only.
 */
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OperationInProgressError } from "../../../src/azure/errors.js";
import type { TrafficExchange } from "../../../src/emulator/index.js";
import { adaptersFor } from "../../azure/helpers.js";
import { eventually } from "../../kube/support.js";
import { operatorSuite, SUB, signalrId } from "../../operator/harness.js";
import { condition, createPolicy, getPolicy, policyManifest } from "../../operator/helpers.js";
import { ContractValidator, countViolations, formatViolations } from "../contract.js";

const traffic: TrafficExchange[] = [];
const suite = operatorSuite("contract", {
  emulator: { speed: 60, scaleDurationMs: 120_000, recordTraffic: (e) => traffic.push(e) },
});

const webPubSubId = (name: string) =>
  `/subscriptions/${SUB}/resourceGroups/rg-chat/providers/Microsoft.SignalRService/WebPubSub/${name}`;

let validator: ContractValidator;

beforeAll(async () => {
  validator = await ContractValidator.load();
});

afterAll(async () => {
  // CONTRACT_TRAFFIC_FILE=<path>: keep the recorded exchanges, one JSON object a line.
  const file = process.env["CONTRACT_TRAFFIC_FILE"];
  if (file) await writeFile(file, traffic.map((e) => JSON.stringify(e)).join("\n"));
  traffic.length = 0;
});

/** How many recorded exchanges match. */
function count(method: string, path: RegExp, status?: number): number {
  return traffic.filter(
    (e) =>
      e.request.method === method &&
      path.test(new URL(e.request.url).pathname) &&
      (status === undefined || e.response.status === status),
  ).length;
}

describe("the operator's traffic against the published contract", () => {
  it("scales out, steps to Premium_P2, scales in, meets a 409 and throttling: every exchange follows the specs", async () => {
    const { kube, ns, h } = suite;
    const control = h.emulator.control;
    const chat = signalrId("chat");
    const big = signalrId("big");
    const pubsub = webPubSubId("pubsub");
    control.addInstance({ resourceId: chat, sku: "Premium_P1", units: 10, connections: 2000 });
    control.addInstance({ resourceId: big, sku: "Premium_P1", units: 100, connections: 40_000 });
    control.addInstance({ resourceId: pubsub, sku: "Premium_P1", units: 10, connections: 300 });
    // A native autoscale setting the operator finds while listing (it targets another resource).
    control.addAutoscaleSetting({ targetResourceId: signalrId("elsewhere"), enabled: false });

    await createPolicy(kube, policyManifest(ns, "chat", chat, { units: { min: 10, max: 50 } }));
    await createPolicy(
      kube,
      policyManifest(ns, "big", big, { units: { min: 100, max: 300 }, skus: ["Premium_P1", "Premium_P2"] }),
    );
    await createPolicy(
      kube,
      policyManifest(ns, "pubsub", pubsub, {
        target: { service: "WebPubSub", resourceId: pubsub },
        units: { min: 1, max: 20 },
      }),
    );
    for (const name of ["chat", "big", "pubsub"]) {
      await eventually(
        async () => expect(condition(await getPolicy(kube, ns, name), "Ready")?.status).toBe("True"),
        60_000,
        200,
      );
    }

    // Throttled answers: one on the instances' read (ARM), one on a metrics query (the metrics plane).
    control.addFault({
      method: "GET",
      path: "/subscriptions/*/providers/Microsoft.SignalRService/signalR",
      times: 1,
      action: { kind: "status", status: 429, code: "SubscriptionRequestsThrottled", retryAfterSeconds: 1 },
    });
    control.addFault({
      method: "POST",
      path: "/metrics/**",
      times: 1,
      action: { kind: "status", status: 429, code: "TooManyRequests", retryAfterSeconds: 1 },
    });

    // Scale-out: 9,000 connections at 80 % need 12 units → 20 on the P1 ladder. The step above
    // 100 units: 95,000 connections need 119 units → Premium_P2 × 200.
    control.setDemand(chat, { connections: 9000 });
    control.setDemand(big, { connections: 95_000 });
    await eventually(() => expect(control.instance(chat)?.provisioningState).toBe("Updating"), 60_000, 100);

    // A second update while the first runs: ARM answers 409.
    const adapters = adaptersFor(h.emulator);
    adapters.instances.rememberRegion(chat, "westeurope");
    await expect(
      adapters.instances.beginScale(chat, { sku: "Premium_P1", units: 30 }),
    ).rejects.toBeInstanceOf(OperationInProgressError);

    await eventually(
      () => expect(control.instance(chat)).toMatchObject({ units: 20, provisioningState: "Succeeded" }),
      60_000,
      200,
    );
    await eventually(
      () => expect(control.instance(big)).toMatchObject({ sku: "Premium_P2", units: 200 }),
      60_000,
      200,
    );
    // Scale-in after the 300 s window (5 s here): 300 connections need 1 unit.
    await eventually(() => expect(control.instance(pubsub)?.units).toBeLessThan(10), 60_000, 200);

    // The adapters' reads besides the pass: the unit ladder, the lists, the history read.
    await adapters.instances.listSkus(chat);
    await adapters.instances.listSkus(pubsub);
    await adapters.instances.listBySubscription(SUB, "SignalR");
    await adapters.instances.listBySubscription(SUB, "WebPubSub");
    const now = h.emulator.clock.nowMs();
    adapters.history.want(
      [
        { resourceId: chat, region: "westeurope", days: 7, grain: "1h" },
        { resourceId: pubsub, region: "westeurope", days: 7, grain: "5m" },
      ],
      now,
    );
    await adapters.history.refresh(now);

    // What was exchanged: each path above, at least once.
    expect(count("PATCH", /\/SignalR\/chat$/i, 202)).toBeGreaterThanOrEqual(1);
    expect(count("PATCH", /\/SignalR\/chat$/i, 409)).toBe(1);
    expect(count("PATCH", /\/SignalR\/big$/i, 202)).toBeGreaterThanOrEqual(1);
    expect(count("PATCH", /\/WebPubSub\/pubsub$/i, 202)).toBeGreaterThanOrEqual(1);
    expect(count("GET", /\/Microsoft\.SignalRService\/SignalR$/i, 429)).toBe(1);
    expect(count("POST", /metrics:getBatch$/i, 429)).toBe(1);
    expect(count("POST", /metrics:getBatch$/i, 200)).toBeGreaterThan(3);
    expect(count("GET", /\/skus$/i, 200)).toBeGreaterThanOrEqual(2);
    expect(count("GET", /\/autoscalesettings$/i, 200)).toBeGreaterThanOrEqual(1);
    expect(count("GET", /\/operationStatuses\//i)).toBeGreaterThanOrEqual(1);

    // ARM's generic resource list (Microsoft.Resources Resources_List, the replicas' discovery) has
    // no vendored spec (azure-rest-api-specs/README.md): its exchanges are checked for their
    // api-version and left out of the validation; every other exchange is validated.
    const generic = traffic.filter((e) =>
      /^\/subscriptions\/[^/]+\/resources$/i.test(new URL(e.request.url).pathname),
    );
    expect(new Set(generic.map((e) => new URL(e.request.url).searchParams.get("api-version")))).toEqual(
      new Set(generic.length > 0 ? ["2025-04-01"] : []),
    );
    const validated = traffic.filter((e) => !generic.includes(e));
    const violations = await validator.validateAll(validated);
    const summary = [...countViolations(violations)].map(([k, n]) => `${n} × ${k}`).join("\n");
    const unique = new Map(violations.map((v) => [`${v.operation} ${v.direction} ${v.code} ${v.path}`, v]));
    expect(
      violations.length,
      `${violations.length} violations in ${validated.length} exchanges:\n${summary}\n\nfirst of each:\n${formatViolations([...unique.values()])}`,
    ).toBe(0);
  });
});
