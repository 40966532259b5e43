import { describe, expect, it } from "vitest";
import { ArmIdError, armKey, parseArmId, serviceOfNamespace } from "./arm-id.js";

describe("parseArmId", () => {
  it("parses both types in any case and returns the canonical spelling", () => {
    expect(
      parseArmId("/SUBSCRIPTIONS/s/resourcegroups/rg/providers/microsoft.signalrservice/webpubsub/hub-1"),
    ).toEqual({
      id: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/WebPubSub/hub-1",
      subscriptionId: "s",
      resourceGroup: "rg",
      name: "hub-1",
      service: "WebPubSub",
      resourceType: "Microsoft.SignalRService/WebPubSub",
    });
    expect(armKey("/A/B/")).toBe("/a/b");
  });

  it.each([
    "",
    "/subscriptions/s",
    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Web/sites/app",
    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/Redis/abc",
    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/a",
  ])("rejects %j", (id) => {
    expect(() => parseArmId(id)).toThrow(ArmIdError);
    expect(() => parseArmId(id)).toThrow("malformed resource ID");
  });

  it("maps metric namespaces to services", () => {
    expect(serviceOfNamespace("microsoft.signalrservice/signalr")).toBe("SignalR");
    expect(serviceOfNamespace("Microsoft.Cache/Redis")).toBeUndefined();
  });
});
