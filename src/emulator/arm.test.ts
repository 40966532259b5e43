import { describe, expect, it } from "vitest";
import { type ArmFaultFlags, handleArm } from "./arm.js";
import { createVirtualClock } from "./clock.js";
import type { EmulatorRequest, EmulatorResponse } from "./http.js";
import { EmulatorState } from "./state.js";

const SUB = "11111111-1111-1111-1111-111111111111";
const RG = `/subscriptions/${SUB}/resourceGroups/rg`;
const ID = `${RG}/providers/Microsoft.SignalRService/SignalR/hub-1`;
const OTHER = `${RG}/providers/Microsoft.SignalRService/SignalR/hub-2`;
const T0 = new Date("2025-01-01T12:00:00Z");
const NEW = "2024-03-01";
const OLD = "2023-02-01";

function setup(spec: Partial<Parameters<EmulatorState["addInstance"]>[0]> = {}) {
  const clock = createVirtualClock({ start: T0, speed: 0 });
  const state = new EmulatorState({ clock, scaleDurationMs: 60_000, noiseAmplitude: 0 });
  state.addInstance({ resourceId: ID, location: "westeurope", sku: "Premium_P1", units: 10, ...spec });
  const call = (
    method: string,
    path: string,
    options: { apiVersion?: string | null; body?: unknown; flags?: ArmFaultFlags } = {},
  ): EmulatorResponse => {
    const query = new URLSearchParams();
    if (options.apiVersion !== null) query.set("api-version", options.apiVersion ?? NEW);
    const req: EmulatorRequest = {
      method,
      path,
      query,
      headers: {},
      body: options.body,
      baseUrl: "https://127.0.0.1:1",
    };
    const res = handleArm(req, { state }, options.flags ?? {});
    if (!res) throw new Error(`no route ${method} ${path}`);
    return res;
  };
  const patch = (
    sku: string,
    units: number,
    options: { apiVersion?: string; tier?: string; flags?: ArmFaultFlags } = {},
  ) =>
    call("PATCH", ID, {
      ...(options.apiVersion ? { apiVersion: options.apiVersion } : {}),
      ...(options.flags ? { flags: options.flags } : {}),
      body: {
        location: "westeurope",
        sku: { name: sku, ...(options.tier ? { tier: options.tier } : {}), capacity: units },
      },
    });
  return { clock, state, call, patch };
}

type ErrorBody = {
  error: { code: string; message: string; target?: string; details?: { message: string }[] };
};
const error = (res: EmulatorResponse) => (res.body as ErrorBody).error;
const sku = (res: EmulatorResponse) => (res.body as { sku: { name: string; capacity: number } }).sku;
const provisioning = (res: EmulatorResponse) =>
  (res.body as { properties: { provisioningState: string } }).properties.provisioningState;

/** The operation status the `Azure-AsyncOperation` URL of a 202 answers. */
function pollStatus(call: ReturnType<typeof setup>["call"], accepted: EmulatorResponse) {
  const url = new URL(accepted.headers?.["azure-asyncoperation"] as string);
  const res = call("GET", url.pathname, { apiVersion: url.searchParams.get("api-version") as string });
  return res.body as { status: string; error?: { code: string } };
}

describe("ARM api-versions", () => {
  it.each([
    ["GET", ID],
    ["GET", `${ID}/skus`],
    ["GET", `${RG}/providers/Microsoft.SignalRService/SignalR`],
    ["GET", `/subscriptions/${SUB}/providers/Microsoft.SignalRService/SignalR`],
    ["PATCH", ID],
  ])("%s %s: a version the type does not have is 400 NoRegisteredProviderFound", (method, path) => {
    const { call } = setup();
    const res = call(method, path, {
      apiVersion: "2022-08-01-preview",
      body: { sku: { name: "Premium_P1" } },
    });
    expect(res.status).toBe(400);
    expect(error(res).code).toBe("NoRegisteredProviderFound");
    expect(error(res).message).toContain(
      "and API version '2022-08-01-preview' for type 'SignalR'. The supported api-versions are '2023-02-01, 2024-03-01'.",
    );
  });

  it("names the instance's location, refuses a malformed version and a missing one", () => {
    const { call } = setup();
    expect(error(call("GET", ID, { apiVersion: "2019-01-01" })).message).toMatch(
      /^No registered resource provider found for location 'westeurope' and API version '2019-01-01'/,
    );
    const malformed = call("GET", ID, { apiVersion: "latest" });
    expect([malformed.status, error(malformed).code]).toEqual([400, "InvalidApiVersionParameter"]);
    expect(error(malformed).message).toBe(
      "The api-version 'latest' is invalid. The supported versions are '2023-02-01, 2024-03-01'.",
    );
    expect(error(call("GET", ID, { apiVersion: null })).code).toBe("MissingApiVersionParameter");
  });

  it("operation polls take the served versions only", () => {
    const { call, patch } = setup();
    const accepted = patch("Premium_P1", 20);
    const url = new URL(accepted.headers?.["azure-asyncoperation"] as string);
    expect(url.searchParams.get("api-version")).toBe(NEW);
    expect(call("GET", url.pathname, { apiVersion: NEW }).status).toBe(200);
    expect(error(call("GET", url.pathname, { apiVersion: "2020-01-01" })).code).toBe(
      "NoRegisteredProviderFound",
    );
  });
});

describe("the SKU contract of the version asked", () => {
  it("2023-02-01 has no Premium_P2 and nothing above 100 units; 2024-03-01 has both", () => {
    const { patch } = setup({ units: 100 });
    const p2 = patch("Premium_P2", 200, { apiVersion: OLD });
    expect([p2.status, error(p2).code, error(p2).message]).toEqual([400, "BadArgument", "Invalid arguments"]);
    expect(error(p2).details?.[0]?.message).toBe(
      "The SKU 'Premium_P2' is not valid in api-version 2023-02-01. Allowed values: Free_F1, Standard_S1, Premium_P1.",
    );
    const over = patch("Premium_P1", 200, { apiVersion: NEW });
    expect(error(over).details?.[0]?.message).toBe(
      "The capacity 200 is not valid for Premium_P1 in api-version 2024-03-01: allowed from 1 to 100.",
    );
    expect(patch("Premium_P2", 1000, { apiVersion: OLD }).status).toBe(400);
    expect(patch("Premium_P2", 1100, { apiVersion: NEW }).status).toBe(400);
    expect(patch("Premium_P2", 200, { apiVersion: NEW }).status).toBe(202);
  });

  it("sku.tier must be of the enum and match the name (Basic is Standard)", () => {
    const { patch, state } = setup();
    expect(error(patch("Premium_P1", 20, { tier: "Standard" })).details?.[0]?.message).toBe(
      "SKU tier does not match name.",
    );
    expect(error(patch("Premium_P1", 20, { tier: "Gold" })).details?.[0]?.message).toContain(
      "Allowed values: Free, Basic",
    );
    expect(patch("Standard_S1", 20, { tier: "Basic" }).status).toBe(202);
    expect(state.getInstance(ID)?.operation?.target).toEqual({ sku: "Standard_S1", units: 20 });
  });

  it("listSkus lists the version's SKUs with the instance's ladders, and replicas' SKUs from 2024-03-01", () => {
    const { call } = setup({ ladders: { Premium_P1: [1, 2, 5, 10, 20, 50, 100] } });
    type Entry = {
      resourceType: string;
      sku: { name: string };
      capacity: { allowedValues: number[]; maximum: number };
    };
    const list = (v: string) =>
      (call("GET", `${ID}/skus`, { apiVersion: v }).body as { value: Entry[] }).value;
    const own = (v: string) => list(v).filter((e) => e.resourceType === "Microsoft.SignalRService/SignalR");
    expect(own(OLD).map((e) => e.sku.name)).toEqual(["Free_F1", "Standard_S1", "Premium_P1"]);
    expect(list(OLD)).toHaveLength(3);
    expect(own(NEW).map((e) => e.sku.name)).toEqual(["Free_F1", "Standard_S1", "Premium_P1", "Premium_P2"]);
    expect(own(NEW).find((e) => e.sku.name === "Premium_P1")?.capacity).toMatchObject({
      allowedValues: [1, 2, 5, 10, 20, 50, 100],
      maximum: 100,
    });
    const replicas = list(NEW).filter((e) => e.resourceType === "Microsoft.SignalRService/SignalR/replicas");
    expect(replicas.map((e) => e.sku.name)).toEqual(["Premium_P1", "Premium_P2"]);
    expect(replicas[0]?.capacity.allowedValues).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100,
    ]);
  });
});

describe("a ladder the service enforces", () => {
  const OLD_LADDER = [1, 2, 5, 10, 20, 50, 100];

  it("refuse: a count off the instance's ladder is 400 with the allowed values", () => {
    const { patch, state } = setup({ ladders: { Premium_P1: OLD_LADDER } });
    const res = patch("Premium_P1", 30);
    expect([res.status, error(res).code]).toEqual([400, "BadArgument"]);
    expect(error(res).details?.[0]?.message).toBe(
      "The capacity 30 is not valid for Premium_P1. Allowed values: 1, 2, 5, 10, 20, 50, 100.",
    );
    expect(patch("Premium_P1", 50).status).toBe(202);
    expect(state.getInstance(ID)?.operation?.target.units).toBe(50);
  });

  it("ignore: accepted, runs, ends Succeeded without applying", () => {
    const { patch, state, clock, call } = setup({
      ladders: { Premium_P1: OLD_LADDER },
      ladderEnforcement: "ignore",
    });
    const accepted = patch("Premium_P1", 30);
    expect(accepted.status).toBe(202);
    expect(pollStatus(call, accepted).status).toBe("Running");
    clock.advance(60_000);
    expect(pollStatus(call, accepted).status).toBe("Succeeded");
    expect(state.getInstance(ID)).toMatchObject({ units: 10, provisioningState: "Succeeded" });
  });

  it("the documented ladder is enforced when the instance has none of its own", () => {
    const { patch } = setup();
    expect(error(patch("Premium_P1", 15)).details?.[0]?.message).toContain("Allowed values: 1, 2, 3");
  });
});

describe("long-running operations", () => {
  it("Running while it runs, then Succeeded with the new capacity", () => {
    const { patch, call, clock } = setup();
    const accepted = patch("Premium_P1", 20);
    expect(pollStatus(call, accepted)).toEqual(expect.objectContaining({ status: "Running" }));
    expect(provisioning(call("GET", ID))).toBe("Updating");
    expect(error(patch("Premium_P1", 30))).toMatchObject({ code: "Conflict" });
    clock.advance(60_000);
    expect(pollStatus(call, accepted).status).toBe("Succeeded");
    expect(sku(call("GET", ID)).capacity).toBe(20);
  });

  it.each([
    [{ cancelUpdate: true }, "Canceled", "OperationCanceled"],
    [{ failUpdate: true }, "Failed", "InternalServerError"],
  ] as const)("%o ends %s, SKU and units unchanged", (flags, status, code) => {
    const { patch, call, clock } = setup();
    const accepted = patch("Premium_P1", 20, { flags });
    clock.advance(60_000);
    expect(pollStatus(call, accepted)).toMatchObject({ status, error: { code } });
    const res = call("GET", ID);
    expect([provisioning(res), sku(res).capacity]).toEqual([status, 10]);
  });

  it("a long update stays Updating for its seconds, then succeeds", () => {
    const { patch, call, clock } = setup();
    const accepted = patch("Premium_P1", 20, { flags: { updateSeconds: 3600 } });
    clock.advance(3_599_000);
    expect([pollStatus(call, accepted).status, provisioning(call("GET", ID))]).toEqual([
      "Running",
      "Updating",
    ]);
    clock.advance(1000);
    expect(pollStatus(call, accepted).status).toBe("Succeeded");
    expect(sku(call("GET", ID)).capacity).toBe(20);
  });

  it("reads lag an accepted write by readAfterWriteLagMs: old SKU and units, Succeeded", () => {
    const { patch, call, clock, state } = setup();
    state.readAfterWriteLagMs = 30_000;
    const accepted = patch("Premium_P2", 100);
    expect(accepted.status).toBe(202);
    clock.advance(29_999);
    const lagging = call("GET", ID);
    expect([sku(lagging).name, sku(lagging).capacity, provisioning(lagging)]).toEqual([
      "Premium_P1",
      10,
      "Succeeded",
    ]);
    // The list reads lag too; the operation status does not.
    const listed = call("GET", `${RG}/providers/Microsoft.SignalRService/SignalR`).body as {
      value: unknown[];
    };
    expect(provisioning({ status: 200, body: listed.value[0] })).toBe("Succeeded");
    expect(pollStatus(call, accepted).status).toBe("Running");
    clock.advance(1);
    expect(provisioning(call("GET", ID))).toBe("Updating");
    clock.advance(60_000);
    expect(sku(call("GET", ID))).toMatchObject({ name: "Premium_P2", capacity: 100 });
  });
});

describe("refusals", () => {
  it("a ReadOnly lock on the resource group: 409 ScopeLocked with ARM's message; CanNotDelete lets writes through", () => {
    const { patch, state } = setup();
    state.refusals.addLock({ scope: RG, level: "CanNotDelete" });
    expect(patch("Premium_P1", 20).status).toBe(202);
    state.settle();
    const { call: call2, patch: patch2, state: s2 } = setup();
    s2.refusals.addLock({ scope: RG.toLowerCase(), level: "ReadOnly" });
    const res = patch2("Premium_P1", 20);
    expect([res.status, error(res).code]).toEqual([409, "ScopeLocked"]);
    expect(error(res).message).toBe(
      `The scope '${ID}' cannot perform write operation because following scope(s) are locked: '${RG.toLowerCase()}'. Please remove the lock and try again.`,
    );
    expect(call2("GET", ID).status).toBe(200);
    s2.refusals.removeLocks(RG);
    expect(patch2("Premium_P1", 20).status).toBe(202);
  });

  it("an Azure Policy deny: 403 RequestDisallowedByPolicy naming the assignment", () => {
    const { patch, state } = setup();
    state.refusals.setPolicy({ name: "no-p2", deny: { skus: ["Premium_P2"] } });
    state.refusals.setPolicy({ name: "at-most-50", deny: { maxUnits: 50 } });
    expect(patch("Premium_P1", 50).status).toBe(202);
    const { patch: patch2, state: s2 } = setup({ units: 100 });
    s2.refusals.setPolicy({ name: "no-p2", deny: { skus: ["premium_p2"] } });
    const res = patch2("Premium_P2", 200);
    expect([res.status, error(res).code, error(res).target]).toEqual([
      403,
      "RequestDisallowedByPolicy",
      "hub-1",
    ]);
    expect(error(res).message).toBe(
      `Resource 'hub-1' was disallowed by policy. Policy identifiers: '[{"policyAssignment":{"name":"no-p2","id":"/subscriptions/${SUB}/providers/Microsoft.Authorization/policyAssignments/no-p2"},"policyDefinition":{"name":"no-p2","id":"/subscriptions/${SUB}/providers/Microsoft.Authorization/policyDefinitions/no-p2"}}]'.`,
    );
    s2.refusals.setPolicy({ name: "at-most-50", deny: { maxUnits: 50 } });
    expect(error(patch2("Premium_P1", 60)).message).toContain('"name":"at-most-50"');
  });

  it("a unit quota per subscription and region: 409 OperationNotAllowed; scaling in is never refused", () => {
    const { patch, state } = setup({ units: 100 });
    state.addInstance({ resourceId: OTHER, location: "westeurope", sku: "Premium_P1", units: 40 });
    state.refusals.setQuota({ subscriptionId: SUB, region: "West Europe", units: 150 });
    const res = patch("Premium_P2", 200);
    expect([res.status, error(res).code]).toEqual([409, "OperationNotAllowed"]);
    expect(error(res).message).toBe(
      "Operation results in exceeding quota limits of SignalR units in region 'westeurope'. Maximum allowed: 150, Current in use: 140, Additional requested: 100.",
    );
    state.refusals.setQuota({ subscriptionId: SUB, region: "westeurope", units: 100 });
    expect(patch("Premium_P1", 50).status).toBe(202);
  });

  it("an update running toward more units holds them against the quota", () => {
    const { patch, state } = setup();
    state.addInstance({ resourceId: OTHER, location: "westeurope", sku: "Premium_P1", units: 10 });
    state.refusals.setQuota({ units: 100 });
    expect(patch("Premium_P1", 80).status).toBe(202);
    const call2 = () =>
      handleArm(
        {
          method: "PATCH",
          path: OTHER,
          query: new URLSearchParams({ "api-version": NEW }),
          headers: {},
          body: { sku: { name: "Premium_P1", capacity: 30 } },
          baseUrl: "https://127.0.0.1:1",
        },
        { state },
      );
    expect(error(call2() as EmulatorResponse).message).toContain(
      "Current in use: 90, Additional requested: 20.",
    );
  });

  it("a lock is checked before a policy, a policy before the SKU contract", () => {
    const { patch, state } = setup();
    state.refusals.setPolicy({ name: "no-p2", deny: { skus: ["Premium_P2"] } });
    expect(error(patch("Premium_P2", 20, { apiVersion: OLD })).code).toBe("RequestDisallowedByPolicy");
    state.refusals.addLock({ scope: ID, level: "ReadOnly" });
    expect(error(patch("Premium_P2", 20, { apiVersion: OLD })).code).toBe("ScopeLocked");
  });
});
