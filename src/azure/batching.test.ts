import { describe, expect, it } from "vitest";
import { batchResourceType, type MetricsBatch, planBatches } from "./batching.js";
import { metricNamespace } from "./metric-definitions.js";
import { ResourceIdError } from "./resource-id.js";

const S1 = "11111111-1111-1111-1111-111111111111";
const S2 = "22222222-2222-2222-2222-222222222222";

const id = (sub: string, name: string, type = "SignalR") =>
  `/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.SignalRService/${type}/${name}`;

describe("planBatches", () => {
  it("cuts 120 resources of one region into 50 + 50 + 20", () => {
    const targets = Array.from({ length: 120 }, (_, i) => ({
      resourceId: id(S1, `hub-${i}`),
      region: "westeurope",
    }));
    expect(planBatches(targets).map((b) => b.resourceIds.length)).toEqual([50, 50, 20]);
  });

  it("groups by subscription, region and resource type", () => {
    const batches = planBatches([
      { resourceId: id(S1, "aaa"), region: "westeurope" },
      { resourceId: id(S1, "bbb"), region: "West Europe" },
      { resourceId: id(S1, "ccc"), region: "eastus" },
      { resourceId: id(S2, "ddd"), region: "westeurope" },
      { resourceId: id(S1, "eee", "WebPubSub"), region: "westeurope" },
      { resourceId: id(S1, "AAA"), region: "westeurope" },
    ]);
    expect(
      batches.map((b) => [b.scope.subscriptionId, b.scope.region, b.service, b.resourceIds.length]),
    ).toEqual([
      [S1, "westeurope", "SignalR", 2],
      [S1, "eastus", "SignalR", 1],
      [S2, "westeurope", "SignalR", 1],
      [S1, "westeurope", "WebPubSub", 1],
    ]);
  });

  it("puts a replica in a batch of its own type and region, apart from its instance", () => {
    const chat = id(S1, "chat");
    const batches = planBatches([
      { resourceId: chat, region: "westeurope" },
      { resourceId: `${chat}/replicas/chat-westeurope-2`, region: "westeurope" },
      { resourceId: `${chat}/replicas/chat-eastus`, region: "eastus" },
      { resourceId: `${id(S1, "other")}/replicas/other-eastus`, region: "East US" },
      { resourceId: `${id(S1, "notify", "WebPubSub")}/replicas/notify-eastus`, region: "eastus" },
      { resourceId: `${chat}/REPLICAS/chat-eastus`, region: "eastus" },
    ]);
    expect(batches.map((b) => [b.scope.region, b.resourceType, b.resourceIds])).toEqual([
      ["westeurope", "Microsoft.SignalRService/SignalR", [chat]],
      ["westeurope", "Microsoft.SignalRService/SignalR/replicas", [`${chat}/replicas/chat-westeurope-2`]],
      [
        "eastus",
        "Microsoft.SignalRService/SignalR/replicas",
        [`${chat}/replicas/chat-eastus`, `${id(S1, "other")}/replicas/other-eastus`],
      ],
      [
        "eastus",
        "Microsoft.SignalRService/WebPubSub/replicas",
        [`${id(S1, "notify", "WebPubSub")}/replicas/notify-eastus`],
      ],
    ]);
    expect(batches.map((b) => b.service)).toEqual(["SignalR", "SignalR", "SignalR", "WebPubSub"]);
  });

  it("names the metric namespace of a batch: its resource type, or its service's instance type", () => {
    const [replica] = planBatches([
      { resourceId: `${id(S1, "chat")}/replicas/chat-eastus`, region: "eastus" },
    ]);
    expect(metricNamespace(batchResourceType(replica as MetricsBatch))).toBe(
      "Microsoft.SignalRService/SignalR/replicas",
    );
    const handMade: MetricsBatch = {
      scope: { subscriptionId: S1, region: "eastus" },
      service: "WebPubSub",
      resourceIds: [],
    };
    expect(metricNamespace(batchResourceType(handMade))).toBe("Microsoft.SignalRService/WebPubSub");
    expect(metricNamespace("SignalR")).toBe("Microsoft.SignalRService/SignalR");
  });

  it("rejects malformed IDs before any call", () => {
    expect(() => planBatches([{ resourceId: "/nope", region: "x" }])).toThrow(ResourceIdError);
  });
});
