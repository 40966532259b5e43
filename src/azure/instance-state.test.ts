import { describe, expect, it } from "vitest";
import { rawListProperties, rawProperties, servingOf, toInstance } from "./instance-state.js";
import { parseResourceId } from "./resource-id.js";

const PRIMARY =
  "/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat";
const REPLICA = `${PRIMARY}/replicas/chat-eastus`;

describe("servingOf", () => {
  it.each([
    [{}, true, undefined],
    [
      {
        properties: {
          provisioningState: "Succeeded",
          resourceStopped: "false",
          regionEndpointEnabled: "Enabled",
        },
      },
      true,
      undefined,
    ],
    [{ properties: { provisioningState: "Updating" } }, true, undefined],
    [{ properties: { provisioningState: "Failed" } }, false, 'provisioningState is "Failed"'],
    [{ provisioningState: "Deleting" }, false, 'provisioningState is "Deleting"'],
    [{ properties: { resourceStopped: "True" } }, false, 'resourceStopped is "True"'],
    [{ resourceStopped: "true" }, false, 'resourceStopped is "true"'],
    [{ properties: { regionEndpointEnabled: "disabled" } }, false, 'regionEndpointEnabled is "disabled"'],
    // The first reason that holds is named: the provisioning state, then the stop, then the endpoint.
    [
      { properties: { provisioningState: "Failed", resourceStopped: "true" } },
      false,
      'provisioningState is "Failed"',
    ],
    [
      { properties: { resourceStopped: "true", regionEndpointEnabled: "Disabled" } },
      false,
      'resourceStopped is "true"',
    ],
  ])("%o → serving %s (%s)", (r, serving, reason) => {
    expect(servingOf(r)).toEqual(reason === undefined ? { serving } : { serving, notServingReason: reason });
  });
});

describe("toInstance", () => {
  const body = {
    name: "chat-eastus",
    type: "Microsoft.SignalRService/SignalR",
    location: "East US",
    sku: { name: "Premium_P2", tier: "Premium", capacity: 200 },
    properties: { provisioningState: "Updating", resourceStopped: "false" },
  };

  it("a replica's identity comes from its ID, not from the body's name or type", () => {
    expect(toInstance(parseResourceId(REPLICA), body)).toEqual({
      resourceId: REPLICA,
      service: "SignalR",
      name: "chat",
      role: "Replica",
      replica: "chat-eastus",
      primaryId: PRIMARY,
      location: "eastus",
      sku: "Premium_P2",
      tier: "Premium",
      units: 200,
      provisioningState: "Updating",
      terminal: false,
      serving: true,
    });
  });

  it("a primary is its own primaryId; the SDK's flattened provisioning state counts when properties lack it", () => {
    const got = toInstance(parseResourceId(PRIMARY), { name: "chat", provisioningState: "Succeeded" });
    expect([
      got.role,
      got.primaryId,
      got.provisioningState,
      got.terminal,
      got.units,
      got.sku,
      got.location,
    ]).toEqual(["Primary", PRIMARY, "Succeeded", true, 1, "Unknown", "unknown"]);
    expect("replica" in got).toBe(false);
  });
});

describe("raw properties of a body the SDK model drops fields of", () => {
  it("reads the three strings of properties, and nothing from what is not such a body", () => {
    expect(
      rawProperties(
        JSON.stringify({
          properties: {
            resourceStopped: "true",
            regionEndpointEnabled: "Enabled",
            x: 1,
            provisioningState: 3,
          },
        }),
      ),
    ).toEqual({ resourceStopped: "true", regionEndpointEnabled: "Enabled" });
    expect(rawProperties("not json")).toBeUndefined();
    expect(rawProperties(JSON.stringify({ properties: "x" }))).toBeUndefined();
    expect(rawProperties(undefined)).toBeUndefined();
  });

  it("reads a list page's entries by their IDs' keys", () => {
    const page = JSON.stringify({
      value: [
        { id: PRIMARY.toUpperCase(), properties: { resourceStopped: "true" } },
        { properties: { resourceStopped: "true" } },
        { id: `${PRIMARY}2` },
      ],
    });
    expect([...rawListProperties(page)]).toEqual([[PRIMARY.toLowerCase(), { resourceStopped: "true" }]]);
    expect(rawListProperties("{}").size).toBe(0);
  });
});
