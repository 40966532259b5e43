import { describe, expect, it } from "vitest";
import { planBatches } from "./batching.js";
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

  it("groups by subscription, region and service", () => {
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

  it("rejects malformed IDs before any call", () => {
    expect(() => planBatches([{ resourceId: "/nope", region: "x" }])).toThrow(ResourceIdError);
  });
});
