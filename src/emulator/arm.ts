/**
 * The Azure Resource Manager part of the emulator, for `Microsoft.SignalRService/SignalR` and
 * `Microsoft.SignalRService/WebPubSub` (REST shapes of api-versions 2023-02-01 and 2024-03-01, the
 * ones `@azure/arm-signalr` 5 and `@azure/arm-webpubsub` 1 send) and
 * `Microsoft.Insights/autoscaleSettings`:
 *
 * | method      | path (segments case-insensitive)                                                        |
 * |-------------|------------------------------------------------------------------------------------------|
 * | GET         | `/subscriptions/{s}/resourceGroups/{g}/providers/Microsoft.SignalRService/{type}/{name}` |
 * | PATCH, PUT  | same: a long-running operation (202, `Azure-AsyncOperation`, `Location`); 409 while one runs |
 * | GET         | `…/{name}/skus` (listSkus)                                                              |
 * | GET         | `/subscriptions/{s}[/resourceGroups/{g}]/providers/Microsoft.SignalRService/{type}` (list, paged) |
 * | GET         | `/subscriptions/{s}/providers/Microsoft.SignalRService/locations/{l}/operationStatuses/{id}` |
 * | GET         | `/subscriptions/{s}/providers/Microsoft.SignalRService/locations/{l}/operationResults/{id}` |
 * | GET         | `/subscriptions/{s}[/resourceGroups/{g}]/providers/Microsoft.Insights/autoscalesettings` |
 *
 * Every route needs `api-version`. Handlers return a response; faults, auth and rate limits are
 * the server's.
 */
import { type ServiceKind, SKU_NAMES, SKU_TIER, type SkuName } from "../capacity/index.js";
import { ARM_TYPES, serviceOfType } from "./arm-id.js";
import { armError, type EmulatorRequest, type EmulatorResponse, isoTime, json, queryParam } from "./http.js";
import {
  allowedUnits,
  type EmulatorState,
  type InstanceView,
  type OperationRecord,
  StateError,
} from "./state.js";

const SIZE: Readonly<Record<SkuName, string>> = {
  Free_F1: "F1",
  Standard_S1: "S1",
  Premium_P1: "P1",
  Premium_P2: "P2",
};

const SCALE_TYPE: Readonly<Record<SkuName, string>> = {
  Free_F1: "None",
  Standard_S1: "Manual",
  Premium_P1: "Automatic",
  Premium_P2: "Automatic",
};

/** Options of the ARM handlers. */
export interface ArmContext {
  state: EmulatorState;
  /** Items per page of list responses (default 100). */
  pageSize?: number;
}

/** What a fault asked the ARM handler to do differently. */
export interface ArmFaultFlags {
  /** The update reports success but does not apply. */
  notApplied?: boolean;
  /** The update runs, then ends Failed without applying. */
  failUpdate?: boolean;
}

/** The JSON ARM returns for an instance. */
function resourceBody(view: InstanceView): Record<string, unknown> {
  const service = view.ref.service;
  return {
    id: view.resourceId,
    name: view.ref.name,
    type: view.ref.resourceType,
    location: view.location,
    tags: view.tags,
    sku: { name: view.sku, tier: SKU_TIER[view.sku], size: SIZE[view.sku], capacity: view.units },
    kind: service === "SignalR" ? "SignalR" : "WebPubSub",
    systemData: {
      createdBy: "signalr-autoscaler-emulator",
      createdByType: "Application",
      createdAt: isoTime(view.createdAt.getTime()),
    },
    properties: {
      provisioningState: view.provisioningState,
      externalIP: "127.0.0.1",
      hostName:
        service === "SignalR"
          ? `${view.ref.name}.service.signalr.net`
          : `${view.ref.name}.webpubsub.azure.com`,
      publicPort: 443,
      serverPort: 443,
      version: "1.0",
      publicNetworkAccess: "Enabled",
      disableLocalAuth: false,
      disableAadAuth: false,
    },
  };
}

function skuListBody(service: ServiceKind): Record<string, unknown> {
  return {
    value: SKU_NAMES.map((sku) => {
      const allowed = allowedUnits(sku);
      return {
        resourceType: ARM_TYPES[service],
        sku: { name: sku, tier: SKU_TIER[sku] },
        capacity: {
          minimum: allowed[0],
          maximum: allowed[allowed.length - 1],
          default: allowed[0],
          allowedValues: [...allowed],
          scaleType: SCALE_TYPE[sku],
        },
      };
    }),
  };
}

function operationUrls(req: EmulatorRequest, op: OperationRecord, apiVersion: string) {
  const base = `${req.baseUrl}/subscriptions/${op.subscriptionId}/providers/Microsoft.SignalRService/locations/${op.location}`;
  const q = `?api-version=${encodeURIComponent(apiVersion)}`;
  return {
    asyncOperation: `${base}/operationStatuses/${op.id}${q}`,
    location: `${base}/operationResults/${op.id}${q}`,
  };
}

function operationStatusBody(
  req: EmulatorRequest,
  op: OperationRecord,
  apiVersion: string,
): Record<string, unknown> {
  return {
    id: operationUrls(req, op, apiVersion).asyncOperation.split("?")[0]?.slice(req.baseUrl.length),
    name: op.id,
    status: op.status,
    startTime: isoTime(op.startedMs),
    ...(op.endMs !== undefined ? { endTime: isoTime(op.endMs) } : {}),
    ...(op.status === "Failed"
      ? { error: { code: "InternalServerError", message: "The operation failed." } }
      : {}),
  };
}

function page<T>(req: EmulatorRequest, items: readonly T[], pageSize: number): Record<string, unknown> {
  const skip = Number(queryParam(req.query, "$skipToken") ?? "0");
  const from = Number.isInteger(skip) && skip > 0 ? skip : 0;
  const value = items.slice(from, from + pageSize);
  const next = from + pageSize < items.length ? from + pageSize : undefined;
  if (next === undefined) return { value };
  const q = new URLSearchParams(req.query);
  for (const k of [...q.keys()]) if (k.toLowerCase() === "$skiptoken") q.delete(k);
  q.set("$skipToken", String(next));
  return { value, nextLink: `${req.baseUrl}${req.path}?${q.toString()}` };
}

function stateError(err: unknown): EmulatorResponse {
  if (err instanceof StateError) return armError(err.status, err.code, err.message);
  throw err;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Reads `sku` and `tags` of a PATCH/PUT body. */
function readChange(
  body: unknown,
): { sku?: string; units?: number; tags?: Record<string, string> } | EmulatorResponse {
  if (!isObject(body))
    return armError(400, "InvalidRequestContent", "The request content must be a JSON object.");
  const out: { sku?: string; units?: number; tags?: Record<string, string> } = {};
  const sku = body["sku"];
  if (sku !== undefined) {
    if (!isObject(sku) || typeof sku["name"] !== "string") {
      return armError(400, "InvalidRequestContent", "sku.name is required and must be a string.");
    }
    out.sku = sku["name"];
    const capacity = sku["capacity"];
    if (capacity !== undefined) {
      if (typeof capacity !== "number")
        return armError(400, "InvalidRequestContent", "sku.capacity must be a number.");
      out.units = capacity;
    }
  }
  const tags = body["tags"];
  if (isObject(tags)) out.tags = Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, String(v)]));
  return out;
}

/** Seconds to wait before polling a running operation: its remaining real time, 1–30 s. */
function pollAfter(state: EmulatorState, op: OperationRecord): string {
  const remaining = state.clock.realDuration(Math.max(0, op.completesMs - state.clock.nowMs()));
  return String(Math.min(30, Math.max(1, Math.ceil(remaining / 1000))));
}

function accepted(
  req: EmulatorRequest,
  state: EmulatorState,
  op: OperationRecord,
  apiVersion: string,
  status = 202,
): EmulatorResponse {
  const urls = operationUrls(req, op, apiVersion);
  return {
    status,
    headers: {
      "azure-asyncoperation": urls.asyncOperation,
      location: urls.location,
      "retry-after": pollAfter(state, op),
    },
  };
}

/**
 * Handles an ARM request; `undefined` when the path is no ARM route of the emulator.
 * @throws only programming errors; Azure-level problems become ARM error responses.
 */
export function handleArm(
  req: EmulatorRequest,
  ctx: ArmContext,
  flags: ArmFaultFlags = {},
): EmulatorResponse | undefined {
  const seg = req.path.split("/").filter((s) => s !== "");
  const lower = seg.map((s) => s.toLowerCase());
  if (lower[0] !== "subscriptions" || seg.length < 4) return undefined;
  const subscriptionId = seg[1] as string;
  const apiVersion = queryParam(req.query, "api-version");
  const missingVersion = () =>
    armError(
      400,
      "MissingApiVersionParameter",
      "The api-version query parameter (?api-version=) is required for all requests.",
    );
  const pageSize = ctx.pageSize ?? 100;
  const { state } = ctx;
  const notAllowed = () => armError(405, "MethodNotAllowed", `${req.method} is not supported here.`);
  /** A list endpoint (GET only, with an api-version): one page of `items()`. */
  const list = (items: () => readonly unknown[]) =>
    req.method !== "GET"
      ? notAllowed()
      : !apiVersion
        ? missingVersion()
        : json(200, page(req, items(), pageSize));

  // /subscriptions/{s}/providers/{ns}/…
  if (lower[2] === "providers") {
    const ns = lower[3];
    if (ns === "microsoft.insights" && lower[4] === "autoscalesettings" && seg.length === 5) {
      return list(() => state.listAutoscaleSettings({ subscriptionId }).map(autoscaleBody));
    }
    if (ns !== "microsoft.signalrservice") return undefined;
    if (lower[4] === "locations" && seg.length === 8) {
      if (req.method !== "GET") return notAllowed();
      if (!apiVersion) return missingVersion();
      const op = state.getOperation(seg[7] as string);
      if (!op || op.subscriptionId.toLowerCase() !== subscriptionId.toLowerCase()) {
        return armError(404, "NotFound", `Operation '${seg[7]}' was not found.`);
      }
      if (lower[6] === "operationstatuses") {
        const headers: Record<string, string> =
          op.status === "InProgress" ? { "retry-after": pollAfter(state, op) } : {};
        return json(200, operationStatusBody(req, op, apiVersion), headers);
      }
      if (lower[6] === "operationresults") {
        if (op.status === "InProgress") {
          const urls = operationUrls(req, op, apiVersion);
          return { status: 202, headers: { location: urls.location, "retry-after": pollAfter(state, op) } };
        }
        const view = state.getInstance(op.resourceId);
        return view ? json(200, resourceBody(view)) : { status: 204 };
      }
      return undefined;
    }
    if (seg.length === 5) {
      const service = serviceOf(seg[4] as string);
      if (!service) return undefined;
      return list(() => state.listInstances({ subscriptionId, service }).map(resourceBody));
    }
    return undefined;
  }

  // /subscriptions/{s}/resourceGroups/{g}/providers/{ns}/…
  if (lower[2] !== "resourcegroups" || lower[4] !== "providers" || seg.length < 7) return undefined;
  const resourceGroup = seg[3] as string;
  const ns = lower[5];
  if (ns === "microsoft.insights" && lower[6] === "autoscalesettings" && seg.length === 7) {
    return list(() => state.listAutoscaleSettings({ subscriptionId, resourceGroup }).map(autoscaleBody));
  }
  if (ns !== "microsoft.signalrservice") return undefined;
  const service = serviceOf(seg[6] as string);
  if (!service) return undefined;
  if (seg.length === 7) {
    return list(() => state.listInstances({ subscriptionId, resourceGroup, service }).map(resourceBody));
  }
  const name = seg[7] as string;
  const resourceId = `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/${ARM_TYPES[service]}/${name}`;
  if (!apiVersion) return missingVersion();
  const notFound = () =>
    armError(
      404,
      "ResourceNotFound",
      `The Resource '${ARM_TYPES[service]}/${name}' under resource group '${resourceGroup}' was not found.`,
    );

  if (seg.length === 9 && lower[8] === "skus") {
    if (req.method !== "GET") return notAllowed();
    return state.getInstance(resourceId) ? json(200, skuListBody(service)) : notFound();
  }
  if (seg.length !== 8) return undefined;

  switch (req.method) {
    case "GET": {
      const view = state.getInstance(resourceId);
      return view ? json(200, resourceBody(view)) : notFound();
    }
    case "PATCH": {
      if (!state.getInstance(resourceId)) return notFound();
      const change = readChange(req.body);
      if ("status" in change) return change;
      try {
        const op = state.beginUpdate(resourceId, change, !flags.notApplied, flags.failUpdate === true);
        return accepted(req, state, op, apiVersion);
      } catch (err) {
        return stateError(err);
      }
    }
    case "PUT": {
      const change = readChange(req.body);
      if ("status" in change) return change;
      try {
        if (state.getInstance(resourceId)) {
          return accepted(
            req,
            state,
            state.beginUpdate(resourceId, change, !flags.notApplied, flags.failUpdate === true),
            apiVersion,
            201,
          );
        }
        const body = req.body as Record<string, unknown>;
        if (typeof body["location"] !== "string" || change.sku === undefined) {
          return armError(
            400,
            "InvalidRequestContent",
            "location and sku are required to create a resource.",
          );
        }
        const op = state.beginCreate(resourceId, {
          location: body["location"],
          sku: change.sku,
          units: change.units ?? 1,
          ...(change.tags ? { tags: change.tags } : {}),
        });
        return accepted(req, state, op, apiVersion, 201);
      } catch (err) {
        return stateError(err);
      }
    }
    default:
      return armError(405, "MethodNotAllowed", `${req.method} is not supported on this resource.`);
  }
}

function serviceOf(type: string): ServiceKind | undefined {
  return serviceOfType(type);
}

function autoscaleBody(
  s: ReturnType<EmulatorState["listAutoscaleSettings"]>[number],
): Record<string, unknown> {
  return {
    id: s.id,
    name: s.name,
    type: "Microsoft.Insights/autoscaleSettings",
    location: s.location,
    tags: {},
    properties: {
      name: s.name,
      enabled: s.enabled,
      targetResourceUri: s.targetResourceUri,
      targetResourceLocation: s.location,
      profiles: [
        {
          name: "default",
          capacity: { minimum: String(s.minimum), maximum: String(s.maximum), default: String(s.default) },
          rules: [],
        },
      ],
      notifications: [],
    },
  };
}
