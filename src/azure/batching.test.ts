import { describe, expect, it } from "vitest";
import { planBatches } from "./batching.js";
import { ResourceIdError } from "./resource-id.js";

const id = (sub: string, name: string, type = "SignalR") =>
  `/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.SignalRService/${type}/${name}`;

describe("planBatches", () => {
  it("cuts 120 resources of one region into 50 + 50 + 20", () => {
    const targets = Array.from({ length: 120 }, (_, i) => ({
      resourceId: id("s1", `hub-${i}`),
      region: "westeurope",
    }));
    expect(planBatches(targets).map((b) => b.resourceIds.length)).toEqual([50, 50, 20]);
  });

  it("groups by subscription, region and service", () => {
    const batches = planBatches([
      { resourceId: id("s1", "aaa"), region: "westeurope" },
      { resourceId: id("s1", "bbb"), region: "West Europe" },
      { resourceId: id("s1", "ccc"), region: "eastus" },
      { resourceId: id("s2", "ddd"), region: "westeurope" },
      { resourceId: id("s1", "eee", "WebPubSub"), region: "westeurope" },
      { resourceId: id("s1", "AAA"), region: "westeurope" },
    ]);
    expect(
      batches.map((b) => [b.scope.subscriptionId, b.scope.region, b.service, b.resourceIds.length]),
    ).toEqual([
      ["s1", "westeurope", "SignalR", 2],
      ["s1", "eastus", "SignalR", 1],
      ["s2", "westeurope", "SignalR", 1],
      ["s1", "westeurope", "WebPubSub", 1],
    ]);
  });

  it("rejects malformed IDs before any call", () => {
    expect(() => planBatches([{ resourceId: "/nope", region: "x" }])).toThrow(ResourceIdError);
  });
});
