import { describe, expect, it } from "vitest";
import { RESOURCE_ID_CASES } from "../api/resource-id-cases.js";
import {
  formatResourceId,
  isReplica,
  parseResourceId,
  parseServiceKind,
  ResourceIdError,
  resourceKey,
  UnknownServiceError,
} from "./resource-id.js";

const SUB = "0aa1b2c3-d4e5-4f60-8a9b-0c1d2e3f4a5b";
const SIGNALR = `/subscriptions/${SUB}/resourceGroups/rg-chat/providers/Microsoft.SignalRService/SignalR/chat-prod`;

describe("parseResourceId", () => {
  it("parses a SignalR ID", () => {
    expect(parseResourceId(SIGNALR)).toEqual({
      id: SIGNALR,
      subscriptionId: SUB,
      resourceGroup: "rg-chat",
      name: "chat-prod",
      service: "SignalR",
      resourceType: "Microsoft.SignalRService/SignalR",
      primaryId: SIGNALR,
    });
  });

  it("parses a replica ID: the instance's name and ID, the replica's name and type", () => {
    const ref = parseResourceId(`${SIGNALR.toLowerCase()}/Replicas/chat-westus`);
    expect(ref).toEqual({
      id: `${SIGNALR}/replicas/chat-westus`,
      subscriptionId: SUB,
      resourceGroup: "rg-chat",
      name: "chat-prod",
      service: "SignalR",
      resourceType: "Microsoft.SignalRService/SignalR/replicas",
      replica: "chat-westus",
      primaryId: SIGNALR,
    });
    expect(isReplica(ref)).toBe(true);
    expect(isReplica(parseResourceId(SIGNALR))).toBe(false);
    expect(formatResourceId({ ...ref, replica: "chat-westus" })).toBe(`${SIGNALR}/replicas/chat-westus`);
  });

  it("accepts any case of the fixed segments and returns the canonical spelling", () => {
    const ref = parseResourceId(
      `/SUBSCRIPTIONS/${SUB}/resourcegroups/My.Group(1)/providers/microsoft.signalrservice/webpubsub/hub1`,
    );
    expect(ref.service).toBe("WebPubSub");
    expect(ref.id).toBe(
      `/subscriptions/${SUB}/resourceGroups/My.Group(1)/providers/Microsoft.SignalRService/WebPubSub/hub1`,
    );
  });

  it.each(RESOURCE_ID_CASES)("$what: valid $valid", ({ resourceId, valid }) => {
    let service: string | undefined;
    try {
      service = parseResourceId(resourceId).service;
    } catch (err) {
      expect(err).toBeInstanceOf(ResourceIdError);
    }
    // A Web PubSub ID parses, but is not valid for a SignalR policy.
    expect(service === "SignalR").toBe(valid);
  });

  it.each([
    ["", "empty"],
    [SIGNALR.slice(1), "must start with"],
    [SIGNALR.replace("/chat-prod", ""), "7 segments"],
    [SIGNALR.replace("subscriptions", "subscription"), '"subscriptions"'],
    [SIGNALR.replace("resourceGroups", "groups"), '"resourceGroups"'],
    [SIGNALR.replace("rg-chat", "rg."), "resource group"],
    [SIGNALR.replace("Microsoft.SignalRService/SignalR", "Microsoft.Web/sites"), "provider"],
    [SIGNALR.replace("/SignalR/", "/Redis/"), "neither SignalR nor WebPubSub"],
    [SIGNALR.replace("chat-prod", "ab"), "name"],
    [SIGNALR.replace("chat-prod", "1abc"), "name"],
    [SIGNALR.replace("chat-prod", "abc-"), "name"],
    [SIGNALR.replace("chat-prod", "a--bc"), "name"],
    [SIGNALR.replace(SUB, "a b"), "is not a GUID"],
    [`${SIGNALR}/`, "9 segments"],
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
        subscriptionId: SUB,
        resourceGroup: "rg-chat",
        service: "SignalR",
        name: "chat-prod",
      }),
    ).toBe(SIGNALR);
  });
});
