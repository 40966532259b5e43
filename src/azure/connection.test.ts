import {
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineRequest,
  RestError,
} from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import { type AzureCall, azureApiName, callObserverPolicy } from "./connection.js";

const ARM = "https://management.azure.com";
const SUB = "/subscriptions/00000000-0000-0000-0000-000000000000";
const SR = `${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/signalR/chat`;

describe("azureApiName", () => {
  it.each([
    ["GET", `${ARM}${SR}?api-version=2024-03-01`, "GET SignalR"],
    ["PATCH", `${ARM}${SR}`, "PATCH SignalR"],
    ["GET", `${ARM}${SUB}/providers/Microsoft.SignalRService/signalR?api-version=x`, "GET SignalR"],
    [
      "patch",
      `${ARM}${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/WebPubSub/hub`,
      "PATCH WebPubSub",
    ],
    ["GET", `${ARM}${SR}/skus`, "GET listSkus"],
    ["GET", `${ARM}${SR}/replicas?api-version=2024-03-01`, "GET replicas"],
    ["PATCH", `${ARM}${SR}/replicas/chat-eastus?api-version=2024-03-01`, "PATCH replicas"],
    ["GET", `${ARM}${SR}/replicas/chat-eastus/skus`, "GET listSkus"],
    // A resource named like an API is still the resource.
    ["GET", `${ARM}${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/signalR/skus`, "GET SignalR"],
    [
      "GET",
      `${ARM}${SUB}/providers/Microsoft.SignalRService/locations/westeurope/operationStatuses/abc`,
      "GET operationStatuses",
    ],
    ["GET", `${ARM}${SUB}/providers/microsoft.insights/autoscalesettings`, "GET autoscaleSettings"],
    [
      "POST",
      `https://westeurope.metrics.monitor.azure.com${SUB}/metrics:getBatch?metricnamespace=x`,
      "POST metrics:getBatch",
    ],
    ["POST", `https://127.0.0.1:4443/metrics/westeurope${SUB}/metrics:getBatch`, "POST metrics:getBatch"],
    ["GET", `${ARM}/providers/Microsoft.Something/else`, "GET other"],
    ["GET", `${ARM}/tenants`, "GET other"],
    ["GET", `${ARM}${SUB}/resources?api-version=2025-04-01&$filter=x`, "GET resources"],
    ["GET", `${ARM}${SUB}/resourceGroups/rg/resources`, "GET resources"],
    ["GET", "not a url", "GET other"],
  ])("%s %s → %s", (method, url, api) => {
    expect(azureApiName(method, url)).toBe(api);
  });
});

describe("callObserverPolicy", () => {
  const run = async (respond: () => Promise<number>) => {
    const calls: AzureCall[] = [];
    let t = 1000;
    const policy = callObserverPolicy(
      (c) => calls.push(c),
      () => t,
    );
    const pipeline = createEmptyPipeline();
    pipeline.addPolicy(policy);
    const request = createPipelineRequest({ url: `${ARM}${SR}`, method: "PATCH" });
    const httpClient = {
      sendRequest: async () => {
        t += 250;
        const status = await respond();
        return { request, status, headers: createHttpHeaders() };
      },
    };
    const outcome = await pipeline.sendRequest(httpClient, request).then(
      (r) => r.status,
      (e: unknown) => e,
    );
    return { calls, outcome };
  };

  it("reports the API, the status (429s included) and the latency", async () => {
    const { calls, outcome } = await run(async () => 429);
    expect(outcome).toBe(429);
    expect(calls).toEqual([{ api: "PATCH SignalR", status: 429, seconds: 0.25 }]);
  });

  it("reports status 0 when no response came back, and rethrows", async () => {
    const { calls, outcome } = await run(async () => {
      throw new RestError("connect ECONNREFUSED", { code: "REQUEST_SEND_ERROR" });
    });
    expect(outcome).toBeInstanceOf(RestError);
    expect(calls).toEqual([{ api: "PATCH SignalR", status: 0, seconds: 0.25 }]);
  });

  it("never fails the call when the observer throws", async () => {
    const policy = callObserverPolicy(() => {
      throw new Error("observer broke");
    });
    const pipeline = createEmptyPipeline();
    pipeline.addPolicy(policy);
    const request = createPipelineRequest({ url: `${ARM}${SR}`, method: "GET" });
    const response = await pipeline.sendRequest(
      { sendRequest: async () => ({ request, status: 200, headers: createHttpHeaders() }) },
      request,
    );
    expect(response.status).toBe(200);
  });
});
