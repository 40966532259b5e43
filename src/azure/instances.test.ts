import { createHttpHeaders, createPipelineRequest, type PipelineRequest } from "@azure/core-rest-pipeline";
import { describe, expect, it } from "vitest";
import { API_VERSIONS, apiVersionPolicy, SIGNALR_API_VERSION, WEBPUBSUB_API_VERSION } from "./instances.js";

async function sent(url: string): Promise<string> {
  let seen: PipelineRequest | undefined;
  const request = createPipelineRequest({ url, headers: createHttpHeaders() });
  await apiVersionPolicy("2024-03-01").sendRequest(request, async (r) => {
    seen = r;
    return { request: r, status: 200, headers: createHttpHeaders() };
  });
  return seen?.url ?? "";
}

describe("api-version of the ARM calls", () => {
  it("is 2024-03-01 for both services, the newest stable version with Premium_P2 and replicas", () => {
    expect([SIGNALR_API_VERSION, WEBPUBSUB_API_VERSION]).toEqual(["2024-03-01", "2024-03-01"]);
    expect(API_VERSIONS).toEqual({ SignalR: "2024-03-01", WebPubSub: "2024-03-01" });
  });

  it.each([
    [
      "https://management.azure.com/subscriptions/s/providers/Microsoft.SignalRService/locations/westeurope/operationStatuses/op-1",
      "https://management.azure.com/subscriptions/s/providers/Microsoft.SignalRService/locations/westeurope/operationStatuses/op-1?api-version=2024-03-01",
    ],
    [
      "https://management.azure.com/subscriptions/s/providers/Microsoft.SignalRService/signalR?API-Version=2023-02-01&$skipToken=2",
      "https://management.azure.com/subscriptions/s/providers/Microsoft.SignalRService/signalR?$skipToken=2&api-version=2024-03-01",
    ],
  ])("is put on every URL the client follows: %s", async (url, expected) => {
    expect(await sent(url)).toBe(expected);
  });
});
