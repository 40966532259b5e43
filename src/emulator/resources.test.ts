import { describe, expect, it } from "vitest";
import { handleArm } from "./arm.js";
import { createVirtualClock } from "./clock.js";
import type { EmulatorResponse } from "./http.js";
import { resourceTypeFilter } from "./resources.js";
import { EmulatorState } from "./state.js";

const SUB = "11111111-1111-1111-1111-111111111111";
const PRIMARY = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat`;
const EAST = `${PRIMARY}/replicas/chat-eastus`;
const WPS = `/subscriptions/${SUB}/resourceGroups/other/providers/Microsoft.SignalRService/WebPubSub/hub`;

function setup() {
  const clock = createVirtualClock({ start: new Date("2025-01-01T12:00:00Z"), speed: 0 });
  const state = new EmulatorState({ clock, noiseAmplitude: 0 });
  state.addInstance({ resourceId: PRIMARY, location: "westeurope", units: 10 });
  state.addInstance({ resourceId: EAST, location: "eastus", units: 5, tags: { team: "chat" } });
  state.addInstance({ resourceId: WPS, location: "westeurope", units: 1 });
  const list = (path: string, query: Record<string, string> = { "api-version": "2025-04-01" }) =>
    handleArm(
      {
        method: "GET",
        path,
        query: new URLSearchParams(query),
        headers: {},
        body: undefined,
        baseUrl: "https://e",
      },
      { state, pageSize: 2 },
    ) as EmulatorResponse;
  return { list };
}

type Page = {
  value: { id: string; name: string; type: string; location: string; sku: object }[];
  nextLink?: string;
};

describe("Microsoft.Resources generic lists", () => {
  it("lists one resource type of a subscription, a replica named <instance>/<replica>", () => {
    const { list } = setup();
    const res = list(`/subscriptions/${SUB}/resources`, {
      "api-version": "2025-04-01",
      $filter: "resourceType eq 'microsoft.signalrservice/signalr/replicas'",
    });
    expect(res.status).toBe(200);
    expect((res.body as Page).value).toEqual([
      {
        id: EAST,
        name: "chat/chat-eastus",
        type: "Microsoft.SignalRService/SignalR/replicas",
        location: "eastus",
        tags: { team: "chat" },
        sku: { name: "Premium_P1", tier: "Premium", capacity: 5 },
      },
    ]);
  });

  it("pages every resource of a subscription or of a resource group, by $top or the page size", () => {
    const { list } = setup();
    const first = list(`/subscriptions/${SUB}/resources`).body as Page;
    expect(first.value.map((r) => r.id)).toEqual([PRIMARY, EAST]);
    expect(new URL(first.nextLink as string).searchParams.get("$skipToken")).toBe("2");
    const top = list(`/subscriptions/${SUB}/resources`, { "api-version": "2025-04-01", $top: "3" })
      .body as Page;
    expect(top.value).toHaveLength(3);
    expect(top.nextLink).toBeUndefined();
    const rg = list(`/subscriptions/${SUB}/resourcegroups/other/resources`).body as Page;
    expect(rg.value.map((r) => [r.name, r.type])).toEqual([["hub", "Microsoft.SignalRService/WebPubSub"]]);
  });

  it("refuses another api-version, none, a filter not served and a bad $top", () => {
    const { list } = setup();
    const path = `/subscriptions/${SUB}/resources`;
    const code = (r: EmulatorResponse) => [r.status, (r.body as { error: { code: string } }).error.code];
    expect(code(list(path, { "api-version": "2021-04-01" }))).toEqual([400, "InvalidApiVersionParameter"]);
    expect(code(list(path, {}))).toEqual([400, "MissingApiVersionParameter"]);
    expect(code(list(path, { "api-version": "2025-04-01", $filter: "name eq 'chat'" }))).toEqual([
      400,
      "InvalidFilterInQueryString",
    ]);
    expect(code(list(path, { "api-version": "2025-04-01", $top: "0" }))).toEqual([
      400,
      "InvalidTopInQueryString",
    ]);
  });

  it("reads resourceType clauses joined by or", () => {
    expect(resourceTypeFilter("resourceType eq 'A/b' or RESOURCETYPE eq 'c/D'")).toEqual(["a/b", "c/d"]);
    expect(resourceTypeFilter(undefined)).toBeUndefined();
    expect(resourceTypeFilter("resourceType eq 'A/b' and location eq 'x'")).toBeNull();
  });
});
