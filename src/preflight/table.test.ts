import { describe, expect, it } from "vitest";
import { parsePolicyYaml } from "../api/index.js";
import {
  type AllowedUnits,
  AuthenticationError,
  type BatchQuery,
  CREDENTIAL_UNAVAILABLE,
  InvalidRequestError,
  type MetricsResultLike,
  NotFoundError,
  RefusedError,
  ThrottledError,
  TransientError,
} from "../azure/index.js";
import { DEFAULT_LADDERS } from "../capacity/skus.js";
import { instanceState } from "../controller/testing.js";
import type { MetricsQueryObservation, PreflightObservations, PreflightTarget } from "./observations.js";
import { describePrincipal, principalOfToken } from "./principal.js";
import {
  azureSaid,
  describeLadder,
  type PreflightRow,
  preflightExitCode,
  preflightRows,
  preflightSummary,
} from "./table.js";

const SUB = "4f6c2b1e-8d3a-4c5e-9b7f-2a1d0e3c5b6a";
const ID = `/subscriptions/${SUB}/resourceGroups/chat-prod-rg/providers/Microsoft.SignalRService/SignalR/chat-prod-we`;
const AT = Date.parse("2025-06-02T12:00:20Z");
const MIN = 60_000;
const SCOPE = { subscriptionId: SUB, region: "westeurope" };
const TARGET: PreflightTarget = { resourceId: ID, service: "SignalR" };

/** A JWT with `claims` (unsigned: the table never verifies, Azure does). */
function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  return `${part({ alg: "RS256", typ: "JWT" })}.${part(claims)}.c2lnbmF0dXJl`;
}

const APP = principalOfToken(
  jwt({
    oid: "3d4e5f60-1111-2222-3333-444455556666",
    appid: "1b2c3d4e-aaaa-bbbb-cccc-ddddeeeeffff",
    tid: "9a8b7c6d-0000-1111-2222-333344445555",
    idtyp: "app",
  }),
);

const GAUGES = ["ServerLoad", "ConnectionQuotaUtilization", "ConnectionCount"];
const COUNTERS = ["MessageCount", "InboundTraffic", "OutboundTraffic"];

/**
 * An answer for the one-minute span 11:49–12:01 with `values` of the minutes before the
 * ingestion delay (up to 11:56) for each metric, unless `override` says otherwise.
 */
function answer(
  names: readonly string[],
  field: "maximum" | "total",
  override: Record<string, { errorCode?: string; errorMessage?: string; valuedUntil?: number | null }> = {},
): MetricsResultLike {
  return {
    resourceId: ID,
    granularity: "PT1M",
    metrics: names.map((name) => {
      const o = override[name] ?? {};
      const until = o.valuedUntil === undefined ? Date.parse("2025-06-02T11:56:00Z") : o.valuedUntil;
      const data = Array.from({ length: 12 }, (_, i) => {
        const t = Date.parse("2025-06-02T11:49:00Z") + i * MIN;
        return until !== null && t <= until
          ? { timeStamp: new Date(t), [field]: 40 + i }
          : { timeStamp: new Date(t) };
      });
      return {
        id: `${ID}/providers/Microsoft.Insights/metrics/${name}`,
        // The SDK gives the display name here; the ID's last segment names the metric.
        name: name.replace(/([a-z])([A-Z])/g, "$1 $2"),
        ...(o.errorCode
          ? { errorCode: o.errorCode, errorMessage: o.errorMessage }
          : { errorCode: "Success" }),
        timeseries: o.errorCode ? [] : [{ metadatavalues: [], data }],
      };
    }),
  };
}

function query(
  names: readonly string[],
  aggregation: BatchQuery["aggregation"],
  result: MetricsQueryObservation["answer"],
): MetricsQueryObservation {
  return {
    query: {
      operation: "metrics.queryResources",
      metricNames: names,
      start: new Date("2025-06-02T11:49:00Z"),
      end: new Date("2025-06-02T12:01:00Z"),
      interval: "PT1M",
      aggregation,
    },
    region: "westeurope",
    resourceIds: [ID],
    sent: true,
    answer: result,
  };
}

const LADDERS_FROM_SERVICE: AllowedUnits = {
  ladders: DEFAULT_LADDERS,
  fromService: ["Standard_S1", "Premium_P1", "Premium_P2"],
  skus: (["Standard_S1", "Premium_P1", "Premium_P2"] as const).map((sku) => ({
    sku,
    tier: sku === "Standard_S1" ? "Standard" : "Premium",
    resourceType: "Microsoft.SignalRService/SignalR",
    minimum: DEFAULT_LADDERS[sku][0],
    maximum: DEFAULT_LADDERS[sku].at(-1),
    default: DEFAULT_LADDERS[sku][0],
    allowedValues: [...DEFAULT_LADDERS[sku]],
    scaleType: "Manual",
  })),
};

const INSTANCE = instanceState(ID);

/** A policy of the instance that may reach Premium_P2 × 300. */
const P2_POLICY = parsePolicyYaml(`
apiVersion: autoscaling.signalr.dev/v1alpha1
kind: CapacityPolicy
metadata: { name: chat, namespace: chat }
spec:
  target: { service: SignalR, resourceId: ${ID} }
  units: { min: 2, max: 300 }
  skus: [Premium_P1, Premium_P2]
  metrics: { serverLoad: { targetPercent: 70 } }
  mode: Auto
`);

/** What a subscription that answers as the operator needs gives. */
function healthy(): PreflightObservations {
  return {
    atMs: AT,
    tokens: [
      {
        audience: "ARM",
        scope: "https://management.azure.com/.default",
        outcome: { ok: { expiresOnMs: AT + 3_540_000, ...(APP ? { principal: APP } : {}) } },
      },
      {
        audience: "metrics",
        scope: "https://management.azure.com/.default",
        outcome: { ok: { expiresOnMs: AT + 3_540_000, ...(APP ? { principal: APP } : {}) } },
      },
    ],
    instance: { ok: INSTANCE },
    instanceList: { ok: { count: 3, found: INSTANCE } },
    replicas: { ok: [] },
    skus: { ok: LADDERS_FROM_SERVICE },
    usages: {
      ok: [
        { name: "FreeTierInstances", currentValue: 0, limit: 5, unit: "Count" },
        { name: "SignalRTotalUnits", currentValue: 25, limit: 150, unit: "Count" },
      ],
    },
    metrics: {
      ok: [
        query(GAUGES, "Maximum", { results: [answer(GAUGES, "maximum")] }),
        query(COUNTERS, "Total", { results: [answer(COUNTERS, "total")] }),
      ],
    },
    times: { windowSeconds: 300, ingestionDelaySeconds: 180 },
    autoscaleSettings: { ok: [] },
    armQuota: [
      {
        scope: SCOPE,
        observedAt: new Date(AT),
        remaining: { "subscription-reads": 11_998 },
        resource: {},
        servedBy: "westeurope",
      },
    ],
  };
}

const row = (rows: readonly PreflightRow[], check: string) => {
  const r = rows.find((x) => x.check === check);
  if (!r) throw new Error(`no row ${check} in ${rows.map((x) => x.check).join(", ")}`);
  return r;
};

describe("preflightRows", () => {
  it("a subscription that answers as the operator needs: every row OK but the write, which a read cannot show", () => {
    const rows = preflightRows(TARGET, healthy(), { credential: "workload identity (client 1b2c…)" });
    expect(rows.map((r) => `${r.check}: ${r.result}`)).toEqual([
      "credential: ARM token: OK",
      "credential: metrics token: OK",
      "instance (GET): OK",
      "instances (list): OK",
      "replicas (list): OK",
      "unit ladders (listSkus): OK",
      "unit quota (usages): OK",
      "metrics query 1 of 2: OK",
      "metrics query 2 of 2: OK",
      "native autoscale settings: OK",
      "ARM request budget: OK",
      "permission Microsoft.SignalRService/SignalR/read: OK",
      "permission Microsoft.SignalRService/SignalR/replicas/read: OK",
      "permission Microsoft.SignalRService/SignalR/skus/read: OK",
      "permission Microsoft.SignalRService/locations/usages/read: OK",
      "permission Microsoft.Insights/metrics/read: OK",
      "permission Microsoft.Insights/autoscalesettings/read: OK",
      "permission Microsoft.SignalRService/SignalR/write: SKIP",
    ]);
    expect(row(rows, "unit quota (usages)").detail).toEqual([
      "SignalRTotalUnits in westeurope: 25 units in use of a quota of 150",
      "room for 125 more: the instance can grow to 135 units",
    ]);
    expect(row(rows, "credential: ARM token").detail).toEqual([
      "token for https://management.azure.com/.default, valid until 12:59 UTC (59 min)",
      "issued to app 1b2c3d4e-aaaa-bbbb-cccc-ddddeeeeffff (object 3d4e5f60-1111-2222-3333-444455556666, tenant 9a8b7c6d-0000-1111-2222-333344445555)",
      "credential: workload identity (client 1b2c…)",
    ]);
    expect(row(rows, "credential: metrics token").detail[0]).toBe(
      "token for https://management.azure.com/.default (the metrics data plane's default audience is ARM's), valid until 12:59 UTC (59 min)",
    );
    expect(row(rows, "instance (GET)").detail).toEqual([
      "Premium_P1 × 10 units, provisioning state Succeeded, location westeurope",
    ]);
    expect(row(rows, "unit ladders (listSkus)").detail).toEqual([
      "Standard_S1: 1–10, 20–100 by 10 (as the built-in ladder)",
      "Premium_P1: 1–10, 20–100 by 10 (as the built-in ladder)",
      "Premium_P2: 100–1,000 by 100 (as the built-in ladder)",
    ]);
    expect(row(rows, "metrics query 1 of 2").detail).toEqual([
      "POST metrics:getBatch (westeurope): ServerLoad, ConnectionQuotaUtilization, ConnectionCount; aggregation Maximum, interval PT1M, 11:49 UTC – 12:01 UTC",
      "ServerLoad: 8 of 12 points with a value, newest 11:56 UTC",
      "ConnectionQuotaUtilization: 8 of 12 points with a value, newest 11:56 UTC",
      "ConnectionCount: 8 of 12 points with a value, newest 11:56 UTC",
    ]);
    expect(row(rows, "ARM request budget").detail).toEqual([
      "11,998 reads left in the subscription's bucket (x-ms-ratelimit-remaining-subscription-reads), served by ARM in westeurope",
    ]);
    const write = row(rows, "permission Microsoft.SignalRService/SignalR/write");
    expect(write.action).toBe("Microsoft.SignalRService/SignalR/write");
    expect(write.detail).toEqual([
      "not checked: only a write shows it, and check writes nothing",
      "a write also meets resource locks and Azure Policy deny assignments, which check does not read:",
      `  az lock list --resource ${ID} --output table`,
      `  az policy assignment list --scope ${ID} --disable-scope-strict-match --output table`,
      "used to change the SKU and units (PATCH), then follow the update (operationStatuses/read); role: SignalR Autoscaler (or SignalR/Web PubSub Contributor)",
      `see the role assignments: az role assignment list --assignee 3d4e5f60-1111-2222-3333-444455556666 --scope ${ID} --include-inherited --output table`,
    ]);
    expect(row(rows, "replicas (list)").detail).toEqual([
      "no geo-replicas (a Premium instance can have some)",
    ]);
    expect(preflightSummary(rows)).toEqual({ OK: 17, WARN: 0, FAIL: 0, SKIP: 1 });
    expect(preflightExitCode(rows, false)).toBe(0);
    expect(preflightExitCode(rows, true)).toBe(0);
  });

  it("an instance that does not exist (404) fails, naming the resource ID; the rest still reads", () => {
    const obs = healthy();
    obs.instance = {
      error: new NotFoundError(
        `instances.get (${SUB}/unknown): not found (404 ResourceNotFound: The Resource 'Microsoft.SignalRService/SignalR/chat-prod-we' under resource group 'chat-prod-rg' was not found.)`,
        { operation: "instances.get", status: 404, code: "ResourceNotFound" },
      ),
    };
    const rows = preflightRows(TARGET, obs);
    const r = row(rows, "instance (GET)");
    expect(r.result).toBe("FAIL");
    expect(r.detail).toEqual([
      `404 ResourceNotFound: no instance ${ID}: check its subscription, resource group, name and type (SignalR or WebPubSub)`,
      "Azure: 404 ResourceNotFound: The Resource 'Microsoft.SignalRService/SignalR/chat-prod-we' under resource group 'chat-prod-rg' was not found.",
    ]);
    expect(r.error).toMatchObject({ kind: "NotFound", status: 404, code: "ResourceNotFound" });
    expect(row(rows, "permission Microsoft.SignalRService/SignalR/read").detail).toEqual([
      "granted: the subscription's list answered",
      "not known: the instance's GET got no answer that tells",
      "used to read the instance's SKU, units and provisioning state",
    ]);
    expect(preflightExitCode(rows, false)).toBe(1);
  });

  it("metrics refused with 403 AuthorizationFailed: the query and its permission fail, naming the action and the role", () => {
    const obs = healthy();
    const refused = new AuthenticationError(
      `metrics.queryResources (${SUB}/westeurope): not authorized (403 AuthorizationFailed: The client 'x' does not have authorization to perform action 'Microsoft.Insights/metrics/read'.)`,
      { operation: "metrics.queryResources", status: 403, code: "AuthorizationFailed", scope: SCOPE },
    );
    obs.metrics = {
      ok: [query(GAUGES, "Maximum", { error: refused }), query(COUNTERS, "Total", { error: refused })],
    };
    const rows = preflightRows(TARGET, obs);
    const q = row(rows, "metrics query 1 of 2");
    expect(q.result).toBe("FAIL");
    expect(q.action).toBe("Microsoft.Insights/metrics/read");
    expect(q.detail.slice(1)).toEqual([
      "403 AuthorizationFailed: the principal lacks Microsoft.Insights/metrics/read on the instance — assign Monitoring Reader",
      "Azure: 403 AuthorizationFailed: The client 'x' does not have authorization to perform action 'Microsoft.Insights/metrics/read'.",
    ]);
    const p = row(rows, "permission Microsoft.Insights/metrics/read");
    expect(p.result).toBe("FAIL");
    expect(p.detail[0]).toBe(
      "refused: metrics query 1 and metrics query 2 answered 403 AuthorizationFailed — assign Monitoring Reader",
    );
    expect(preflightExitCode(rows, false)).toBe(1);
  });

  it("a throttled query (429, Retry-After) is not checked: WARN with the wait, exit 0 — 1 with --strict", () => {
    const obs = healthy();
    const throttled = new ThrottledError(
      `metrics.queryResources (${SUB}/westeurope): throttled (429 TooManyRequests: Rate limit exceeded.); retry after 20s, at 2025-06-02T12:00:40.000Z`,
      {
        operation: "metrics.queryResources",
        status: 429,
        code: "TooManyRequests",
        retryAfterMs: 20_000,
        notBefore: new Date(AT + 20_000),
      },
    );
    const gated = new ThrottledError("metrics.queryResources: throttled until 2025-06-02T12:00:40.000Z", {
      operation: "metrics.queryResources",
      retryAfterMs: 20_000,
      notBefore: new Date(AT + 20_000),
      fromGate: true,
    });
    obs.metrics = {
      ok: [
        query(GAUGES, "Maximum", { error: throttled }),
        { ...query(COUNTERS, "Total", { error: gated }), sent: false },
      ],
    };
    const rows = preflightRows(TARGET, obs);
    expect(row(rows, "metrics query 1 of 2")).toMatchObject({
      result: "WARN",
      detail: [
        expect.stringContaining("aggregation Maximum"),
        "429 TooManyRequests: throttled, Azure asks to wait 20 s (until 12:00:40 UTC): not checked — run check again after it",
        "Azure: 429 TooManyRequests: Rate limit exceeded.",
      ],
    });
    expect(row(rows, "metrics query 2 of 2").detail[1]).toBe(
      "not sent: an earlier answer of this scope asked to wait until 12:00:40 UTC",
    );
    expect(row(rows, "permission Microsoft.Insights/metrics/read").result).toBe("SKIP");
    expect(preflightExitCode(rows, false)).toBe(0);
    expect(preflightExitCode(rows, true)).toBe(1);
  });

  it("a metric answered with an errorCode fails, with Azure's code and message; the others of its query stand", () => {
    const obs = healthy();
    obs.metrics = {
      ok: [
        query(GAUGES, "Maximum", {
          results: [
            answer(GAUGES, "maximum", {
              ConnectionQuotaUtilization: {
                errorCode: "InternalError",
                errorMessage: "The metric could not be read for this aggregation.",
              },
            }),
          ],
        }),
      ],
    };
    const r = row(preflightRows(TARGET, obs), "metrics query 1 of 1");
    expect(r.result).toBe("FAIL");
    expect(r.detail.slice(1)).toEqual([
      "ServerLoad: 8 of 12 points with a value, newest 11:56 UTC",
      'ConnectionQuotaUtilization: errorCode InternalError ("The metric could not be read for this aggregation."): the operator never gets it',
      "ConnectionCount: 8 of 12 points with a value, newest 11:56 UTC",
    ]);
  });

  it("a gauge without values warns (the decision sees it unknown); a counter without values is an idle counter", () => {
    const obs = healthy();
    obs.metrics = {
      ok: [
        query(GAUGES, "Maximum", {
          results: [answer(GAUGES, "maximum", { ServerLoad: { valuedUntil: null } })],
        }),
        query(COUNTERS, "Total", {
          results: [answer(COUNTERS, "total", { MessageCount: { valuedUntil: null } })],
        }),
      ],
    };
    const rows = preflightRows(TARGET, obs);
    expect(row(rows, "metrics query 1 of 2")).toMatchObject({ result: "WARN" });
    expect(row(rows, "metrics query 1 of 2").detail[1]).toBe(
      "ServerLoad: 0 of 12 points with a value: the decision sees it unknown and never scales in on it",
    );
    expect(row(rows, "metrics query 2 of 2")).toMatchObject({ result: "OK" });
    expect(row(rows, "metrics query 2 of 2").detail[1]).toBe(
      "MessageCount: 0 of 12 points with a value (a counter that counted nothing: read as 0 next to a known gauge)",
    );
  });

  it("a gauge whose newest value is older than the decision's window warns: raise the ingestion delay", () => {
    const obs = healthy();
    obs.metrics = {
      ok: [
        query(GAUGES, "Maximum", {
          results: [
            answer(GAUGES, "maximum", {
              ConnectionCount: { valuedUntil: Date.parse("2025-06-02T11:51:00Z") },
            }),
          ],
        }),
      ],
    };
    const r = row(preflightRows(TARGET, obs), "metrics query 1 of 1");
    expect(r.result).toBe("WARN");
    expect(r.detail[3]).toBe(
      "ConnectionCount: 3 of 12 points with a value, newest 11:51 UTC: older than the window the decision reads (11:52 UTC – 11:57 UTC, 3 min ingestion delay): raise metrics.ingestionDelay",
    );
  });

  it("a metric the answer lacks warns; an answer without the instance warns", () => {
    const obs = healthy();
    const lacking = answer(GAUGES, "maximum");
    obs.metrics = {
      ok: [
        query(GAUGES, "Maximum", { results: [{ ...lacking, metrics: lacking.metrics.slice(0, 2) }] }),
        query(COUNTERS, "Total", { results: [] }),
      ],
    };
    const rows = preflightRows(TARGET, obs);
    expect(row(rows, "metrics query 1 of 2").detail[3]).toBe(
      "ConnectionCount: not in the answer: read as unknown",
    );
    expect(row(rows, "metrics query 1 of 2").result).toBe("WARN");
    expect(row(rows, "metrics query 2 of 2")).toMatchObject({
      result: "WARN",
      detail: [expect.any(String), "the answer has no entry for the instance"],
    });
  });

  it("a query Azure refuses as invalid (400) fails: the operator sends it so", () => {
    const obs = healthy();
    obs.metrics = {
      ok: [
        query(GAUGES, "Total", {
          error: new InvalidRequestError(
            `metrics.queryResources (${SUB}/westeurope): invalid request (400 BadRequest: Aggregation 'Total' is not supported for metric ServerLoad.)`,
            { operation: "metrics.queryResources", status: 400, code: "BadRequest" },
          ),
        }),
      ],
    };
    const r = row(preflightRows(TARGET, obs), "metrics query 1 of 1");
    expect(r.result).toBe("FAIL");
    expect(r.detail.slice(1)).toEqual([
      "400 BadRequest: Azure refused the request as the operator sends it",
      "Azure: 400 BadRequest: Aggregation 'Total' is not supported for metric ServerLoad.",
    ]);
  });

  it("an enabled native autoscale setting on the instance fails (Conflict); a disabled one does not", () => {
    const setting = {
      id: `/subscriptions/${SUB}/resourceGroups/chat-prod-rg/providers/Microsoft.Insights/autoscalesettings/chat-scale`,
      name: "chat-scale",
      targetResourceUri: ID,
      enabled: true,
      minimum: 2,
      maximum: 10,
      default: 2,
      profiles: 1,
    };
    const obs = healthy();
    obs.autoscaleSettings = { ok: [setting] };
    const rows = preflightRows(TARGET, obs);
    expect(row(rows, "native autoscale settings")).toEqual({
      check: "native autoscale settings",
      result: "FAIL",
      detail: [
        "chat-scale (enabled, 2–10 units, default 2) scales this instance",
        "the operator reports Conflict=True and does not scale beside it: delete or disable it, or keep mode: Recommend",
      ],
    });
    obs.autoscaleSettings = { ok: [{ ...setting, enabled: false }] };
    expect(row(preflightRows(TARGET, obs), "native autoscale settings")).toMatchObject({
      result: "OK",
      detail: ["chat-scale (disabled, 2–10 units, default 2) targets it: disabled, it does not act"],
    });
  });

  it("autoscale settings that cannot be read warn: a competing autoscaler would go unseen", () => {
    const obs = healthy();
    obs.autoscaleSettings = {
      error: new AuthenticationError(
        "autoscaleSettings.listBySubscription: not authorized (403 AuthorizationFailed: no.)",
        {
          operation: "autoscaleSettings.listBySubscription",
          status: 403,
          code: "AuthorizationFailed",
        },
      ),
    };
    const rows = preflightRows(TARGET, obs);
    expect(row(rows, "native autoscale settings")).toMatchObject({
      result: "WARN",
      action: "Microsoft.Insights/autoscalesettings/read",
      detail: [
        "403 AuthorizationFailed: the principal lacks Microsoft.Insights/autoscalesettings/read on the subscription — assign Monitoring Reader on the subscription",
        "Azure: 403 AuthorizationFailed: no.",
        "the operator cannot tell a competing autoscaler: it would scale beside one",
      ],
    });
    expect(row(rows, "permission Microsoft.Insights/autoscalesettings/read").result).toBe("WARN");
    expect(preflightExitCode(rows, false)).toBe(0);
  });

  it("a ladder Azure enforces that differs from the built-in one warns with both; a SKU the policy allows and Azure does not list warns", () => {
    const obs = healthy();
    const old = [1, 2, 5, 10, 20, 50, 100];
    obs.skus = {
      ok: {
        ladders: { ...DEFAULT_LADDERS, Premium_P1: old },
        fromService: ["Standard_S1", "Premium_P1"],
        skus: LADDERS_FROM_SERVICE.skus
          .filter((s) => s.sku !== "Premium_P2")
          .map((s) => (s.sku === "Premium_P1" ? { ...s, allowedValues: old } : s)),
      },
    };
    const policy = P2_POLICY;
    const r = row(preflightRows({ ...TARGET, policy }, obs), "unit ladders (listSkus)");
    expect(r.result).toBe("WARN");
    expect(r.detail).toEqual([
      "Standard_S1: 1–10, 20–100 by 10 (as the built-in ladder)",
      "Premium_P1: Azure allows 1, 2, 5, 10, 20, 50, 100; the built-in ladder is 1–10, 20–100 by 10",
      "Premium_P2: not listed, and the policy allows it: the built-in ladder 100–1,000 by 100 stands",
    ]);
  });

  it("a unit quota below the policy's units.max warns, naming the size Azure refuses above", () => {
    const policy = P2_POLICY;
    const rows = preflightRows({ ...TARGET, policy }, healthy());
    expect(row(rows, "unit quota (usages)")).toEqual({
      check: "unit quota (usages)",
      result: "WARN",
      detail: [
        "SignalRTotalUnits in westeurope: 25 units in use of a quota of 150",
        "room for 125 more: the instance can grow to 135 units, below the policy's units.max 300: Azure refuses a scale-out above 135 units (409 OperationNotAllowed) and the operator holds its size until the spec changes",
        "raise the quota (Azure portal: Quotas, or a support request) or lower units.max",
      ],
    });
    expect(preflightExitCode(rows, false)).toBe(0);
    expect(preflightExitCode(rows, true)).toBe(1);
    // Used up: no room at all.
    const full = healthy();
    full.usages = { ok: [{ name: "SignalRTotalUnits", currentValue: 160, limit: 150, unit: "Count" }] };
    expect(row(preflightRows({ ...TARGET, policy }, full), "unit quota (usages)").detail.slice(0, 2)).toEqual(
      [
        "SignalRTotalUnits in westeurope: 160 units in use, over the quota of 150",
        expect.stringMatching(/^room for 0 more: the instance can grow to 10 units, below/),
      ],
    );
  });

  it("a quota without limit is OK; Web PubSub's quota is the entry named …TotalUnits; none found warns", () => {
    const obs = healthy();
    obs.usages = { ok: [{ name: "SignalRTotalUnits", currentValue: 25, limit: -1, unit: "Count" }] };
    expect(row(preflightRows(TARGET, obs), "unit quota (usages)")).toMatchObject({
      result: "OK",
      detail: ["SignalRTotalUnits in westeurope: 25 units in use, no quota set"],
    });
    const wps: PreflightTarget = { resourceId: ID.replace("/SignalR/", "/WebPubSub/"), service: "WebPubSub" };
    obs.usages = {
      ok: [
        { name: "FreeTierInstances", currentValue: 1, limit: 5, unit: "Count" },
        { name: "WebPubSubTotalUnits", currentValue: 40, limit: 100, unit: "Count" },
      ],
    };
    expect(row(preflightRows(wps, obs), "unit quota (usages)").detail[0]).toBe(
      "WebPubSubTotalUnits in westeurope: 40 units in use of a quota of 100",
    );
    obs.usages = { ok: [{ name: "FreeTierInstances", currentValue: 1, limit: 5, unit: "Count" }] };
    expect(row(preflightRows(TARGET, obs), "unit quota (usages)")).toMatchObject({
      result: "WARN",
      detail: [
        "no unit quota in the answer (usages: FreeTierInstances): scale-outs may meet a quota check cannot see",
      ],
    });
  });

  it("a usages read refused (403) warns and names the permission; the operator works without it", () => {
    const obs = healthy();
    obs.usages = {
      error: new AuthenticationError("instances.listUsages: refused (403 AuthorizationFailed: no access)", {
        operation: "instances.listUsages",
        status: 403,
        code: "AuthorizationFailed",
      }),
    };
    const rows = preflightRows(TARGET, obs);
    expect(row(rows, "unit quota (usages)").result).toBe("WARN");
    expect(row(rows, "unit quota (usages)").detail.at(-1)).toBe(
      "the quota a scale-out may meet is not known",
    );
    expect(row(rows, "permission Microsoft.SignalRService/locations/usages/read").result).toBe("WARN");
    expect(preflightExitCode(rows, false)).toBe(0);
  });

  it("a listSkus that fails warns: the built-in ladders stand", () => {
    const obs = healthy();
    obs.skus = {
      error: new TransientError("instances.listSkus: request timed out", {
        operation: "instances.listSkus",
        code: "Timeout",
      }),
    };
    expect(row(preflightRows(TARGET, obs), "unit ladders (listSkus)")).toMatchObject({
      result: "WARN",
      detail: [
        "no answer Timeout: no usable answer (Transient): not checked — run check again",
        "instances.listSkus: request timed out",
        "without it the built-in ladders stand",
      ],
    });
  });

  it("a Free_F1 instance fails; one being updated, or whose last update failed, warns", () => {
    const at = (patch: Partial<typeof INSTANCE>) => {
      const obs = healthy();
      obs.instance = { ok: { ...INSTANCE, ...patch } };
      return row(preflightRows(TARGET, obs), "instance (GET)");
    };
    expect(at({ sku: "Free_F1", units: 1 })).toMatchObject({
      result: "FAIL",
      detail: [
        "Free_F1 × 1 units, provisioning state Succeeded, location westeurope",
        "a Free_F1 instance is never scaled (changing it changes its IP): move it to Standard_S1 or Premium_P1 first",
      ],
    });
    expect(at({ provisioningState: "Updating", terminal: false }).detail[1]).toBe(
      "an operation is running (Updating): the operator sends no update until it ends",
    );
    expect(at({ provisioningState: "Failed" })).toMatchObject({ result: "WARN" });
  });

  it("a list without the target warns: the operator reads it with one more GET", () => {
    const obs = healthy();
    obs.instanceList = { ok: { count: 2 } };
    expect(row(preflightRows(TARGET, obs), "instances (list)")).toEqual({
      check: "instances (list)",
      result: "WARN",
      detail: [
        `2 SignalR instances in subscription ${SUB}, not the target: the operator reads it with one more GET each poll cycle`,
      ],
    });
  });

  it("no token: the credential fails, and the reads it would have made are skipped", () => {
    const obs = healthy();
    const noToken = new AuthenticationError(
      "credential.getToken(ARM): could not get a token: WorkloadIdentityCredential authentication failed.",
      { operation: "credential.getToken(ARM)", code: CREDENTIAL_UNAVAILABLE },
    );
    obs.tokens = obs.tokens.map((t) => ({ ...t, outcome: { error: noToken } }));
    const why = "no ARM token (see the credential)";
    obs.instance = { skipped: why };
    obs.instanceList = { skipped: why };
    obs.skus = { skipped: why };
    obs.usages = { skipped: why };
    obs.metrics = { skipped: "no metrics token (see the credential)" };
    obs.autoscaleSettings = { skipped: why };
    obs.armQuota = [];
    const rows = preflightRows(TARGET, obs, {
      credential: "default credential chain (managed identity, Azure CLI and the other developer tools)",
    });
    expect(row(rows, "credential: ARM token")).toMatchObject({
      result: "FAIL",
      detail: [
        "no token for https://management.azure.com/.default: every call with it fails",
        "credential.getToken(ARM): could not get a token: WorkloadIdentityCredential authentication failed.",
        "credential: default credential chain (managed identity, Azure CLI and the other developer tools)",
      ],
    });
    expect(rows.filter((r) => r.result === "SKIP").map((r) => r.check)).toEqual([
      "instance (GET)",
      "instances (list)",
      "unit ladders (listSkus)",
      "unit quota (usages)",
      "metrics",
      "native autoscale settings",
      "ARM request budget",
      "permission Microsoft.SignalRService/SignalR/read",
      "permission Microsoft.SignalRService/SignalR/skus/read",
      "permission Microsoft.SignalRService/locations/usages/read",
      "permission Microsoft.Insights/metrics/read",
      "permission Microsoft.Insights/autoscalesettings/read",
      "permission Microsoft.SignalRService/SignalR/write",
    ]);
    expect(row(rows, "permission Microsoft.SignalRService/SignalR/write").detail[5]).toContain(
      "--assignee <principal object ID>",
    );
    expect(preflightExitCode(rows, false)).toBe(1);
  });

  it("a 401 says the token was refused; a read denied by an Azure Policy names the policy", () => {
    const obs = healthy();
    obs.instance = {
      error: new AuthenticationError(
        "instances.get: not authorized (401 InvalidAuthenticationTokenTenant: The access token is from the wrong issuer.)",
        {
          operation: "instances.get",
          status: 401,
          code: "InvalidAuthenticationTokenTenant",
        },
      ),
    };
    obs.instanceList = {
      error: new RefusedError(
        "instances.listBySubscription: denied by an Azure Policy (403 RequestDisallowedByPolicy: Resource 'x' was disallowed by policy.)",
        {
          operation: "instances.listBySubscription",
          status: 403,
          code: "RequestDisallowedByPolicy",
          refusedBy: "Policy",
        },
      ),
    };
    const rows = preflightRows(TARGET, obs);
    expect(row(rows, "instance (GET)").detail[0]).toBe(
      "401 InvalidAuthenticationTokenTenant: the token was refused (issued for another tenant or audience, or expired)",
    );
    expect(row(rows, "instances (list)")).toMatchObject({
      result: "FAIL",
      detail: [
        "403 RequestDisallowedByPolicy: denied by an Azure Policy",
        "Azure: 403 RequestDisallowedByPolicy: Resource 'x' was disallowed by policy.",
      ],
    });
  });

  it("few ARM reads left warns; no quota header skips", () => {
    const obs = healthy();
    obs.armQuota = [
      {
        ...(obs.armQuota[0] as PreflightObservations["armQuota"][number]),
        remaining: { "subscription-reads": 12 },
      },
    ];
    expect(row(preflightRows(TARGET, obs), "ARM request budget").result).toBe("WARN");
    obs.armQuota = [];
    expect(row(preflightRows(TARGET, obs), "ARM request budget").result).toBe("SKIP");
  });
});

describe("preflightRows of a Web PubSub instance", () => {
  it("names Web PubSub's RBAC actions", () => {
    const id = ID.replace("/SignalR/chat-prod-we", "/WebPubSub/notify");
    const rows = preflightRows({ resourceId: id, service: "WebPubSub" }, healthy());
    expect(rows.filter((r) => r.check.startsWith("permission ")).map((r) => r.action)).toEqual([
      "Microsoft.SignalRService/WebPubSub/read",
      "Microsoft.SignalRService/WebPubSub/replicas/read",
      "Microsoft.SignalRService/WebPubSub/skus/read",
      "Microsoft.SignalRService/locations/usages/read",
      "Microsoft.Insights/metrics/read",
      "Microsoft.Insights/autoscalesettings/read",
      "Microsoft.SignalRService/WebPubSub/write",
    ]);
  });
});

describe("preflightRows of a geo-replica target", () => {
  const REPLICA_ID = `${ID}/replicas/chat-prod-ne`;
  const REPLICA_TARGET: PreflightTarget = { resourceId: REPLICA_ID, service: "SignalR" };
  const member = (id: string, location: string, units: number, serving = true) => ({
    ...instanceState(id),
    name: "chat-prod-we",
    role: "Replica" as const,
    replica: id.split("/").at(-1) as string,
    primaryId: ID,
    location,
    units,
    serving,
    ...(serving ? {} : { notServingReason: 'resourceStopped is "true"' }),
  });
  const REPLICA = member(REPLICA_ID, "northeurope", 4);
  const SIBLING = member(`${ID}/replicas/chat-prod-us`, "eastus", 2, false);

  /** What a replica target's reads give: its GET, its instance's replicas (the list it is read from). */
  function replicaObs(): PreflightObservations {
    const obs = healthy();
    obs.instance = { ok: REPLICA };
    obs.replicas = { ok: [REPLICA, SIBLING] };
    obs.instanceList = { ok: { count: 2, found: REPLICA } };
    // Its metrics: the same answers, for the replica, from its region's endpoint.
    if ("ok" in obs.metrics) {
      obs.metrics = {
        ok: obs.metrics.ok.map((q) => ({
          ...q,
          region: "northeurope",
          resourceIds: [REPLICA_ID],
          answer:
            "results" in q.answer
              ? { results: q.answer.results.map((r) => ({ ...r, resourceId: REPLICA_ID })) }
              : q.answer,
        })),
      };
    }
    return obs;
  }

  it("checks the replica's own calls and names the replicas' RBAC actions; the instance's list is not a row of its own", () => {
    const rows = preflightRows(REPLICA_TARGET, replicaObs());
    expect(rows.map((r) => `${r.check}: ${r.result}`)).toEqual([
      "credential: ARM token: OK",
      "credential: metrics token: OK",
      "replica (GET): OK",
      "replicas of the instance (list): OK",
      "unit ladders (listSkus): OK",
      "unit quota (usages): OK",
      "metrics query 1 of 2: OK",
      "metrics query 2 of 2: OK",
      "native autoscale settings: OK",
      "ARM request budget: OK",
      "permission Microsoft.SignalRService/SignalR/replicas/read: OK",
      "permission Microsoft.SignalRService/SignalR/replicas/skus/read: OK",
      "permission Microsoft.SignalRService/locations/usages/read: OK",
      "permission Microsoft.Insights/metrics/read: OK",
      "permission Microsoft.Insights/autoscalesettings/read: OK",
      "permission Microsoft.SignalRService/SignalR/replicas/write: SKIP",
    ]);
    expect(row(rows, "replica (GET)").detail).toEqual([
      "Premium_P1 × 4 units, provisioning state Succeeded, location northeurope",
      `replica chat-prod-ne of ${ID}: scaled on its own resource, from its own metrics`,
    ]);
    expect(row(rows, "replicas of the instance (list)").detail).toEqual([
      `2 replicas of ${ID}, the target among them (the poll cycle reads the replica group from this list)`,
      "chat-prod-ne in northeurope, Premium_P1 × 4, serving",
      'chat-prod-us in eastus, Premium_P1 × 2, not serving (resourceStopped is "true")',
    ]);
    // The quota is the one of the replica's own region.
    expect(row(rows, "unit quota (usages)").detail[0]).toBe(
      "SignalRTotalUnits in northeurope: 25 units in use of a quota of 150",
    );
    expect(row(rows, "permission Microsoft.SignalRService/SignalR/replicas/read").detail[0]).toBe(
      "granted: the replica's GET and the instance's list of replicas answered",
    );
    const write = row(rows, "permission Microsoft.SignalRService/SignalR/replicas/write");
    expect(write.detail[2]).toBe(`  az lock list --resource ${REPLICA_ID} --output table`);
  });

  it("a replica's ladders: Premium only, so a SKU list without Standard_S1 is not a warning", () => {
    const obs = replicaObs();
    obs.skus = {
      ok: {
        ...LADDERS_FROM_SERVICE,
        fromService: ["Premium_P1", "Premium_P2"],
        skus: LADDERS_FROM_SERVICE.skus
          .filter((x) => x.sku !== "Standard_S1")
          .map((x) => ({ ...x, resourceType: "Microsoft.SignalRService/SignalR/replicas" })),
      },
    };
    const r = row(preflightRows(REPLICA_TARGET, obs), "unit ladders (listSkus)");
    expect(r.result).toBe("OK");
    // The same list for an instance, which may be Standard_S1, warns.
    expect(row(preflightRows(TARGET, obs), "unit ladders (listSkus)").result).toBe("WARN");
  });

  it("a replica that ARM says does not serve is a WARN naming why", () => {
    const obs = replicaObs();
    obs.instance = {
      ok: { ...REPLICA, serving: false, notServingReason: 'regionEndpointEnabled is "Disabled"' },
    };
    const r = row(preflightRows(REPLICA_TARGET, obs), "replica (GET)");
    expect(r.result).toBe("WARN");
    expect(r.detail.at(-1)).toBe(
      'ARM says it does not serve (regionEndpointEnabled is "Disabled"): it has no clients to measure, and the operator does not scale it in while it does not serve',
    );
  });

  it("a list of replicas refused with 403 fails the replica and names the action on its instance", () => {
    const obs = replicaObs();
    const error = new AuthenticationError(
      `instances.listReplicas (${SUB}/westeurope): not authorized (403 AuthorizationFailed: no)`,
      { operation: "instances.listReplicas", status: 403, code: "AuthorizationFailed" },
    );
    obs.replicas = { error };
    obs.instanceList = { error };
    const rows = preflightRows(REPLICA_TARGET, obs);
    const list = row(rows, "replicas of the instance (list)");
    expect(list.result).toBe("FAIL");
    expect(list.detail[0]).toBe(
      "403 AuthorizationFailed: the principal lacks Microsoft.SignalRService/SignalR/replicas/read on the replica's instance — assign SignalR Autoscaler (or Reader)",
    );
    expect(row(rows, "permission Microsoft.SignalRService/SignalR/replicas/read").result).toBe("FAIL");
  });

  it("an instance's replicas list refused is a WARN: the operator works, without failover anticipation", () => {
    const obs = healthy();
    obs.replicas = {
      error: new AuthenticationError(`instances.listReplicas: not authorized (403 AuthorizationFailed: no)`, {
        operation: "instances.listReplicas",
        status: 403,
        code: "AuthorizationFailed",
      }),
    };
    const rows = preflightRows(TARGET, obs);
    expect(row(rows, "replicas (list)")).toMatchObject({ result: "WARN" });
    expect(row(rows, "replicas (list)").detail.at(-1)).toBe(
      "the operator cannot see the instance's replicas: a replica's failover is not anticipated",
    );
    expect(row(rows, "permission Microsoft.SignalRService/SignalR/replicas/read").result).toBe("WARN");
    expect(preflightExitCode(rows, false)).toBe(0);
  });

  it("an instance with replicas lists each with its region, size and serving", () => {
    const obs = healthy();
    obs.replicas = { ok: [REPLICA, SIBLING] };
    expect(row(preflightRows(TARGET, obs), "replicas (list)").detail).toEqual([
      "2 geo-replicas, each scaled only by a policy of its own:",
      "chat-prod-ne in northeurope, Premium_P1 × 4, serving",
      'chat-prod-us in eastus, Premium_P1 × 2, not serving (resourceStopped is "true")',
    ]);
  });
});

describe("describeLadder", () => {
  it.each<[number[], string]>([
    [[...DEFAULT_LADDERS.Premium_P1], "1–10, 20–100 by 10"],
    [[...DEFAULT_LADDERS.Premium_P2], "100–1,000 by 100"],
    [[1, 2, 5, 10, 20, 50, 100], "1, 2, 5, 10, 20, 50, 100"],
    [[1, 2], "1, 2"],
    [[7], "7"],
    [[], ""],
  ])("%j → %s", (values, text) => {
    expect(describeLadder(values)).toBe(text);
  });
});

describe("principalOfToken", () => {
  it("names an application by its client, object and tenant IDs, and a person by sign-in name", () => {
    expect(APP).toEqual({
      objectId: "3d4e5f60-1111-2222-3333-444455556666",
      appId: "1b2c3d4e-aaaa-bbbb-cccc-ddddeeeeffff",
      tenantId: "9a8b7c6d-0000-1111-2222-333344445555",
      type: "app",
    });
    const user = principalOfToken(jwt({ oid: "o-1", tid: "t-1", upn: "ana@contoso.com", azp: "04b07795" }));
    expect(user).toEqual({
      objectId: "o-1",
      appId: "04b07795",
      tenantId: "t-1",
      type: "user",
      userName: "ana@contoso.com",
    });
    expect(describePrincipal(user ?? {})).toBe("user ana@contoso.com (object o-1, tenant t-1)");
  });

  it.each([
    "signalr-autoscaler-emulator",
    "a.b.c",
    `x.${Buffer.from("[1]").toString("base64url")}.y`,
    jwt({ foo: 1 }),
  ])("reads no principal from %j", (token) => {
    expect(principalOfToken(token)).toBeUndefined();
  });
});

describe("azureSaid", () => {
  it("keeps what Azure said, not the adapter operation before it", () => {
    const err = new NotFoundError("instances.get (s/r): not found (404 ResourceNotFound: gone (really).)", {
      operation: "instances.get",
      status: 404,
      code: "ResourceNotFound",
    });
    expect(azureSaid(err)).toBe("Azure: 404 ResourceNotFound: gone (really).");
    expect(
      azureSaid(new TransientError("instances.get: request timed out", { operation: "instances.get" })),
    ).toBe("instances.get: request timed out");
  });
});
