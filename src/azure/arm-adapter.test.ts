import { describe, expect, it } from "vitest";
import { ANY_REGION, armScopeOfUrl } from "./arm-adapter.js";

const SUB = "11111111-1111-1111-1111-111111111111";
const CHAT = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat`;
const REPLICA = `${CHAT}/replicas/chat-eastus`;
const regions = new Map([
  [CHAT, "westeurope"],
  [REPLICA, "eastus"],
]);
const regionOf = (id: string) => regions.get(id);

describe("armScopeOfUrl", () => {
  it.each([
    [`https://management.azure.com${CHAT}?api-version=2024-03-01`, "westeurope"],
    [`https://management.azure.com${CHAT}/skus`, "westeurope"],
    // The list of an instance's replicas is the instance's call.
    [`https://management.azure.com${CHAT}/replicas?api-version=2024-03-01`, "westeurope"],
    // A replica's own calls are in the replica's region.
    [`https://management.azure.com${REPLICA}?api-version=2024-03-01`, "eastus"],
    [`https://management.azure.com${REPLICA}/skus`, "eastus"],
    [`https://management.azure.com/${REPLICA}`, "eastus"],
    [`https://management.azure.com${CHAT}/replicas/unknown-one`, "unknown"],
    [
      `https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.SignalRService/locations/East%20US/operationStatuses/x`,
      "eastus",
    ],
    [
      `https://management.azure.com/subscriptions/${SUB}/providers/Microsoft.SignalRService/signalR`,
      ANY_REGION,
    ],
  ])("%s → %s", (url, region) => {
    expect(armScopeOfUrl(url, regionOf)).toEqual({ subscriptionId: SUB, region });
  });
});
