import { describe, expect, it } from "vitest";
import {
  formatResourceId,
  parseResourceId,
  parseServiceKind,
  ResourceIdError,
  resourceKey,
  UnknownServiceError,
} from "./resource-id.js";

const SIGNALR =
  "/subscriptions/0000-1111/resourceGroups/rg-chat/providers/Microsoft.SignalRService/SignalR/chat-prod";

describe("parseResourceId", () => {
  it("parses a SignalR ID", () => {
    expect(parseResourceId(SIGNALR)).toEqual({
      id: SIGNALR,
      subscriptionId: "0000-1111",
      resourceGroup: "rg-chat",
      name: "chat-prod",
      service: "SignalR",
      resourceType: "Microsoft.SignalRService/SignalR",
    });
  });

  it("accepts any case and a trailing slash, and returns the canonical spelling", () => {
    const ref = parseResourceId(
      "/SUBSCRIPTIONS/abc/resourcegroups/My.Group(1)/providers/microsoft.signalrservice/webpubsub/hub1/",
    );
    expect(ref.service).toBe("WebPubSub");
    expect(ref.id).toBe(
      "/subscriptions/abc/resourceGroups/My.Group(1)/providers/Microsoft.SignalRService/WebPubSub/hub1",
    );
  });

  it.each([
    ["", "empty"],
    ["subscriptions/a/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/abc", "must start with"],
    ["/subscriptions/a/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR", "7 segments"],
    ["/subscription/a/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/abc", '"subscriptions"'],
    ["/subscriptions/a/groups/rg/providers/Microsoft.SignalRService/SignalR/abc", '"resourceGroups"'],
    ["/subscriptions/a/resourceGroups/rg./providers/Microsoft.SignalRService/SignalR/abc", "resource group"],
    ["/subscriptions/a/resourceGroups/rg/providers/Microsoft.Web/sites/abc", "provider"],
    [
      "/subscriptions/a/resourceGroups/rg/providers/Microsoft.SignalRService/Redis/abc",
      "neither SignalR nor WebPubSub",
    ],
    ["/subscriptions/a/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/ab", "name"],
    ["/subscriptions/a/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/1abc", "name"],
    ["/subscriptions/a/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/abc-", "name"],
    ["/subscriptions/a b/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/abc", "subscription"],
  ])("rejects %j with a clear message (%s)", (input, why) => {
    const parse = () => parseResourceId(input);
    expect(parse).toThrow(ResourceIdError);
    expect(parse).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/expected \/subscriptions\//),
        input,
      }),
    );
    expect(parse).toThrow(why);
  });
});

describe("services", () => {
  it("parses service names in any case", () => {
    expect(parseServiceKind("signalr")).toBe("SignalR");
    expect(parseServiceKind(" WebPubSub ")).toBe("WebPubSub");
  });

  it("rejects unknown services", () => {
    expect(() => parseServiceKind("Redis")).toThrow(UnknownServiceError);
    expect(() => parseServiceKind("Redis")).toThrow('unknown service "Redis": expected SignalR or WebPubSub');
  });
});

describe("keys", () => {
  it("compares IDs case-insensitively", () => {
    expect(resourceKey(SIGNALR.toUpperCase())).toBe(resourceKey(SIGNALR));
    expect(resourceKey(`${SIGNALR}/`)).toBe(SIGNALR.toLowerCase());
    expect(
      formatResourceId({
        subscriptionId: "0000-1111",
        resourceGroup: "rg-chat",
        service: "SignalR",
        name: "chat-prod",
      }),
    ).toBe(SIGNALR);
  });
});
