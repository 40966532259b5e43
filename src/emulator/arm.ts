/**
 * The Azure Resource Manager part of the emulator, for `Microsoft.SignalRService/SignalR` and
 * `Microsoft.SignalRService/WebPubSub` (api-versions 2023-02-01 and 2024-03-01, each with its own
 * SKU contract: `api-versions.ts`) and `Microsoft.Insights/autoscaleSettings`:
 *
 * | method      | path (segments case-insensitive)                                                        |
 * |-------------|------------------------------------------------------------------------------------------|
 * | GET         | `/subscriptions/{s}/resourceGroups/{g}/providers/Microsoft.SignalRService/{type}/{name}` |
 * | PATCH, PUT  | same: a long-running operation (202/201, `Azure-AsyncOperation`, `Location`)            |
 * | GET         | `…/{name}/skus` (listSkus)                                                              |
 * | GET         | `…/{name}/replicas` (Replicas_List, paged)                                              |
 * | GET         | `…/{name}/replicas/{replica}` (Replicas_Get)                                            |
 * | PATCH, PUT  | same (Replicas_Update, Replicas_CreateOrUpdate): long-running, as an instance's          |
 * | GET         | `…/{name}/replicas/{replica}/skus` (SignalR_ListReplicaSkus, WebPubSub_ListReplicaSkus)  |
 * | GET         | `/subscriptions/{s}[/resourceGroups/{g}]/providers/Microsoft.SignalRService/{type}` (list, paged) |
 * | GET         | `/subscriptions/{s}/providers/Microsoft.SignalRService/locations/{l}/usages` (usages.ts) |
 * | GET         | `/subscriptions/{s}/providers/Microsoft.SignalRService/locations/{l}/operationStatuses/{id}` |
 * | GET         | `/subscriptions/{s}/providers/Microsoft.SignalRService/locations/{l}/operationResults/{id}` |
 * | GET         | `/subscriptions/{s}[/resourceGroups/{g}]/providers/Microsoft.Insights/autoscalesettings` |
 * | GET         | `/subscriptions/{s}[/resourcegroups/{g}]/resources` (Microsoft.Resources' generic list: resources.ts) |
 *
 * Every route needs `api-version`; SignalR and Web PubSub routes take only the versions served
 * (400 `InvalidApiVersionParameter` for a malformed one, 400 `NoRegisteredProviderFound` for one the
 * type does not have, with ARM's messages). A write goes through, in order: the resource locks
 * (409 `ScopeLocked`), the Azure Policy deny assignments (403 `RequestDisallowedByPolicy`), the
 * SKU contract of the api-version asked (400 `BadArgument`, the SignalR resource provider's answer
 * to invalid arguments: "Invalid arguments" with the reason in `details`, target `sku`), an
 * operation already running (409 `Conflict`: wait, don't stack), the unit quota (409
 * `OperationNotAllowed`), and the instance's unit ladder (400 `BadArgument`, or accepted and not
 * applied, per its `ladderEnforcement`). Reads may lag an accepted write (`EmulatorState.armView`).
 *
 * Replica routes exist in 2024-03-01 only (another served version: 400 `NoRegisteredProviderFound`
 * for type `SignalR/replicas`); a replica's write goes through the same checks, plus a replica's
 * own (Premium_P1 or Premium_P2; a new one in its own region, at most 8: `EmulatorState`), and its
 * units count against the quota of its own region. Its 202 carries the replica as its body (the
 * specs' `Replicas_Update` 202 has the `Replica` schema; final state via `Location`). A replica
 * reads as the `Replica` definition: `sku`, `location`, `tags`, `systemData` and `properties`
 * `provisioningState`, `regionEndpointEnabled`, `resourceStopped`; `type` `…/SignalR/replicas`
 * (the type ARM gives a nested resource; the official examples write the parent's type). Instance
 * lists do not list replicas; an instance with replicas cannot leave Premium (400 `BadArgument`).
 * A member stopped by a failover reads `resourceStopped: "true"`, a disabled one
 * `regionEndpointEnabled: "Disabled"` (`EmulatorState.failover`); a write's
 * `properties.resourceStopped` ("true" / "false") and `regionEndpointEnabled` ("Enabled" /
 * "Disabled"), 2024-03-01, stop or start, disable or enable it when its operation succeeds (a
 * change runs the scale duration), as the failover action and a restore do.
 *
 * Long-running operations report `status` `Running` until terminal, then `Succeeded`, `Failed` or
 * `Canceled` (ARM RPC "Asynchronous operations": terminal states Succeeded, Failed, Canceled, every
 * other value means running; `error` required for Failed and Canceled; `Running` is a value of the
 * specs' `ProvisioningState` enum).
 *
 * Handlers return a response; faults, auth and rate limits are the server's.
 */
import { type ServiceKind, SKU_NAMES, SKU_TIER, type SkuName } from "../capacity/index.js";
import {
  apiVersionProblem,
  SKU_TIERS,
  type SkuContract,
  servedVersions,
  skuContract,
} from "./api-versions.js";
import { ARM_TYPES, normalizeLocation, resourceName, serviceOfType } from "./arm-id.js";
import {
  armError,
  type EmulatorRequest,
  type EmulatorResponse,
  isObject,
  isoTime,
  json,
  page,
  queryParam,
} from "./http.js";
import { policyDeniedError, quotaExceededError, scopeLockedError, type WriteTarget } from "./refusals.js";
import { handleResourceList } from "./resources.js";
import {
  allowedUnits,
  type EmulatorState,
  type InstanceView,
  type OperationRecord,
  operationConflict,
  REPLICA_SKUS,
  StateError,
  type UpdateOutcome,
} from "./state.js";
import { type UsagesInput, usagesResponse } from "./usages.js";

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

/** What a fault asked the ARM handler to do differently with an update. */
export interface ArmFaultFlags {
  /** The update reports success but does not apply. */
  notApplied?: boolean;
  /** The update runs, then ends Failed without applying. */
  failUpdate?: boolean;
  /** The update runs, then ends Canceled without applying. */
  cancelUpdate?: boolean;
  /** The update stays Updating this many virtual seconds (instead of the scale duration). */
  updateSeconds?: number;
}

/** `resourceStopped` as ARM writes it: "true" while a failover has stopped the member (cause `stopped`). */
function resourceStopped(view: InstanceView): "true" | "false" {
  return view.outage?.cause === "stopped" ? "true" : "false";
}

/** `regionEndpointEnabled` as ARM writes it: "Disabled" while a failover has disabled it (cause `endpointDisabled`). */
function regionEndpointEnabled(view: InstanceView): "Enabled" | "Disabled" {
  return view.outage?.cause === "endpointDisabled" ? "Disabled" : "Enabled";
}

/** The JSON ARM returns for a replica: the specs' `Replica` (a TrackedResource with `sku` and `ReplicaProperties`). */
function replicaBody(view: InstanceView): Record<string, unknown> {
  return {
    id: view.resourceId,
    name: resourceName(view.ref),
    type: view.ref.resourceType,
    location: view.location,
    tags: view.tags,
    sku: { name: view.sku, tier: SKU_TIER[view.sku], size: SIZE[view.sku], capacity: view.units },
    systemData: {
      createdBy: "signalr-autoscaler-emulator",
      createdByType: "Application",
      createdAt: isoTime(view.createdAt.getTime()),
    },
    properties: {
      provisioningState: view.provisioningState,
      regionEndpointEnabled: regionEndpointEnabled(view),
      resourceStopped: resourceStopped(view),
    },
  };
}

/** The JSON ARM returns for an instance (or a replica), in the shape of `contract`'s version. */
function resourceBody(view: InstanceView, contract: SkuContract): Record<string, unknown> {
  if (view.ref.replica !== undefined) return replicaBody(view);
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
      // Properties of the versions with replicas (2024-03-01).
      ...(contract.replicas
        ? { regionEndpointEnabled: regionEndpointEnabled(view), resourceStopped: resourceStopped(view) }
        : {}),
    },
  };
}

function skuEntry(resourceType: string, sku: SkuName, allowed: readonly number[]): Record<string, unknown> {
  return {
    resourceType,
    sku: { name: sku, tier: SKU_TIER[sku] },
    capacity: {
      minimum: allowed[0],
      maximum: allowed[allowed.length - 1],
      default: allowed[0],
      allowedValues: [...allowed],
      scaleType: SCALE_TYPE[sku],
    },
  };
}

/**
 * `listSkus` of an instance in `contract`'s version: the version's SKUs with the instance's
 * ladders, and — in versions with replicas — the replicas' SKUs (resource type `…/replicas`, the
 * documented ladders), as the official example `SignalR_ListSkus.json` of 2024-03-01 lists them.
 */
function skuListBody(
  state: EmulatorState,
  view: InstanceView,
  contract: SkuContract,
): Record<string, unknown> {
  const type = ARM_TYPES[view.ref.service];
  const own = SKU_NAMES.filter((sku) => contract.skus[sku] !== undefined).map((sku) =>
    skuEntry(type, sku, state.ladderOf(view.resourceId, sku)),
  );
  const replicas = contract.replicas
    ? REPLICA_SKUS.filter((sku) => contract.skus[sku] !== undefined).map((sku) =>
        skuEntry(`${type}/replicas`, sku, allowedUnits(sku)),
      )
    : [];
  return { value: [...own, ...replicas] };
}

/**
 * `ListReplicaSkus` of a replica: the Premium SKUs of `contract`'s version (a replica's only ones),
 * resource type `…/replicas`, with the replica's ladders.
 */
function replicaSkuListBody(
  state: EmulatorState,
  view: InstanceView,
  contract: SkuContract,
): Record<string, unknown> {
  return {
    value: REPLICA_SKUS.filter((sku) => contract.skus[sku] !== undefined).map((sku) =>
      skuEntry(view.ref.resourceType, sku, state.ladderOf(view.resourceId, sku)),
    ),
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

const OPERATION_ERRORS: Partial<Record<OperationRecord["status"], { code: string; message: string }>> = {
  Failed: { code: "InternalServerError", message: "The operation failed." },
  Canceled: { code: "OperationCanceled", message: "The operation was canceled." },
};

function operationStatusBody(
  req: EmulatorRequest,
  op: OperationRecord,
  apiVersion: string,
): Record<string, unknown> {
  const error = OPERATION_ERRORS[op.status];
  return {
    id: operationUrls(req, op, apiVersion).asyncOperation.split("?")[0]?.slice(req.baseUrl.length),
    name: op.id,
    status: op.status,
    startTime: isoTime(op.startedMs),
    ...(op.endMs !== undefined ? { endTime: isoTime(op.endMs) } : {}),
    ...(error ? { error } : {}),
  };
}

function stateError(err: unknown): EmulatorResponse {
  if (err instanceof StateError) return armError(err.status, err.code, err.message);
  throw err;
}

/** What a PATCH/PUT body asks for. */
interface Change {
  sku?: string;
  tier?: string;
  units?: number;
  tags?: Record<string, string>;
  /** `properties.resourceStopped` ("true" / "false"): stop or start the data plane. */
  resourceStopped?: boolean;
  /** `properties.regionEndpointEnabled` ("Enabled" / "Disabled"): route new connections to it or not. */
  regionEndpointEnabled?: boolean;
}

/** Reads `sku` and `tags` of a PATCH/PUT body. */
function readChange(body: unknown): Change | EmulatorResponse {
  if (!isObject(body))
    return armError(400, "InvalidRequestContent", "The request content must be a JSON object.");
  const out: Change = {};
  const sku = body["sku"];
  if (sku !== undefined) {
    if (!isObject(sku) || typeof sku["name"] !== "string") {
      return armError(400, "InvalidRequestContent", "sku.name is required and must be a string.");
    }
    out.sku = sku["name"];
    const tier = sku["tier"];
    if (tier !== undefined) {
      if (typeof tier !== "string")
        return armError(400, "InvalidRequestContent", "sku.tier must be a string.");
      out.tier = tier;
    }
    const capacity = sku["capacity"];
    if (capacity !== undefined) {
      if (typeof capacity !== "number")
        return armError(400, "InvalidRequestContent", "sku.capacity must be a number.");
      out.units = capacity;
    }
  }
  const tags = body["tags"];
  if (isObject(tags)) out.tags = Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, String(v)]));
  const properties = isObject(body["properties"]) ? body["properties"] : {};
  const stopped = stringFlag(properties["resourceStopped"], "true", "false");
  if (stopped === null) {
    return armError(400, "InvalidRequestContent", 'properties.resourceStopped must be "true" or "false".');
  }
  if (stopped !== undefined) out.resourceStopped = stopped;
  const enabled = stringFlag(properties["regionEndpointEnabled"], "enabled", "disabled");
  if (enabled === null) {
    return armError(
      400,
      "InvalidRequestContent",
      'properties.regionEndpointEnabled must be "Enabled" or "Disabled".',
    );
  }
  if (enabled !== undefined) out.regionEndpointEnabled = enabled;
  return out;
}

/** A string property that is `yes` or `no` (any case): true, false; absent: undefined; anything else: null. */
function stringFlag(value: unknown, yes: string, no: string): boolean | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value !== "string") return null;
  const v = value.toLowerCase();
  return v === yes ? true : v === no ? false : null;
}

/** The SignalR resource provider's 400 for invalid arguments: the reason is in `details`. */
function badArgument(reason: string): EmulatorResponse {
  return armError(
    400,
    "BadArgument",
    "Invalid arguments",
    {},
    {
      details: [{ code: "BadArgument", message: reason, target: "sku" }],
    },
  );
}

/** The 400 for a unit count off the ladder the service enforces. */
function offLadder(sku: SkuName, units: number, ladder: readonly number[]): EmulatorResponse {
  return badArgument(`The capacity ${units} is not valid for ${sku}. Allowed values: ${ladder.join(", ")}.`);
}

/**
 * Why `sku` (name, tier, capacity) is not valid in `contract`'s version, or `undefined`. Tier
 * `Basic` is the deprecated name of `Standard`.
 */
function skuContractProblem(
  contract: SkuContract,
  sku: { name: string; tier?: string; units: number },
): string | undefined {
  const range = (contract.skus as Record<string, { minimum: number; maximum: number } | undefined>)[sku.name];
  if (!range) {
    const names = Object.keys(contract.skus).join(", ");
    return `The SKU '${sku.name}' is not valid in api-version ${contract.version}. Allowed values: ${names}.`;
  }
  const name = sku.name as SkuName;
  if (sku.tier !== undefined) {
    if (!SKU_TIERS.includes(sku.tier)) {
      return `The SKU tier '${sku.tier}' is not valid. Allowed values: ${SKU_TIERS.join(", ")}.`;
    }
    const tier = sku.tier === "Basic" ? "Standard" : sku.tier;
    if (tier !== SKU_TIER[name]) return "SKU tier does not match name.";
  }
  if (!Number.isInteger(sku.units) || sku.units < range.minimum || sku.units > range.maximum) {
    return `The capacity ${sku.units} is not valid for ${name} in api-version ${contract.version}: allowed from ${range.minimum} to ${range.maximum}.`;
  }
  return undefined;
}

/** Seconds to wait before polling a running operation: its remaining real time, 1–30 s. */
function pollAfter(state: EmulatorState, op: OperationRecord): string {
  const remaining = state.clock.realDuration(Math.max(0, op.completesMs - state.clock.nowMs()));
  return String(Math.min(30, Math.max(1, Math.ceil(remaining / 1000))));
}

/** The answer to an accepted update (PATCH 202) or creation (PUT 201): its polling URLs, and for a PUT the resource. */
function accepted(
  req: EmulatorRequest,
  state: EmulatorState,
  op: OperationRecord,
  contract: SkuContract,
  status = 202,
): EmulatorResponse {
  const urls = operationUrls(req, op, contract.version);
  const headers = {
    "azure-asyncoperation": urls.asyncOperation,
    location: urls.location,
    "retry-after": pollAfter(state, op),
  };
  // A PUT's 201 carries the resource as it is now (spec: SignalR_CreateOrUpdate 201 is a
  // SignalRResource); an instance PATCH's 202 has no body, a replica's has the Replica (spec:
  // Replicas_Update 202 is a Replica, as its official example).
  const replica = op.resourceId.toLowerCase().includes("/replicas/");
  const view = status === 201 || replica ? state.getInstance(op.resourceId) : undefined;
  return view ? json(status, resourceBody(view, contract), headers) : { status, headers };
}

/** ARM's answer to an api-version the resource type does not have (or a malformed one). */
function apiVersionError(
  service: ServiceKind,
  typeName: string,
  version: string,
  location: string,
): EmulatorResponse | undefined {
  const problem = apiVersionProblem(service, version);
  if (problem === undefined) return undefined;
  const supported = servedVersions(service).join(", ");
  if (problem === "malformed") {
    return armError(
      400,
      "InvalidApiVersionParameter",
      `The api-version '${version}' is invalid. The supported versions are '${supported}'.`,
    );
  }
  return armError(
    400,
    "NoRegisteredProviderFound",
    `No registered resource provider found for location '${location}' and API version '${version}' for type '${typeName}'. The supported api-versions are '${supported}'.`,
  );
}

/** How an update ends, from the faults that matched it. */
function faultOutcome(flags: ArmFaultFlags): UpdateOutcome | undefined {
  if (flags.failUpdate) return "failed";
  if (flags.cancelUpdate) return "canceled";
  if (flags.notApplied) return "notApplied";
  return undefined;
}

/**
 * What refuses a write before the service looks at it, in ARM's order: a resource lock (409
 * `ScopeLocked`), an Azure Policy deny assignment (403 `RequestDisallowedByPolicy`), then the SKU
 * contract of the api-version asked (400 `BadArgument`); `undefined` when none does.
 */
function refusedWrite(
  state: EmulatorState,
  target: WriteTarget,
  contract: SkuContract,
  tier: string | undefined,
): EmulatorResponse | undefined {
  const locks = state.refusals.writeLocksOn(target.resourceId);
  if (locks.length > 0) return scopeLockedError(target.resourceId, locks);
  const denied = state.refusals.denyingPolicies(target);
  if (denied.length > 0) return policyDeniedError(target, denied);
  const invalid = skuContractProblem(contract, {
    name: target.sku,
    ...(tier ? { tier } : {}),
    units: target.units,
  });
  return invalid ? badArgument(invalid) : undefined;
}

/**
 * The 409 `OperationNotAllowed` of a write that adds `requested` units to the service's instances
 * of the subscription in `region` over their unit quota; `undefined` when it fits.
 */
function overQuota(
  state: EmulatorState,
  ref: { subscriptionId: string; service: ServiceKind },
  region: string,
  requested: number,
): EmulatorResponse | undefined {
  return quotaExceededError(state.refusals.quotaFor(ref.subscriptionId, region, ref.service), {
    service: ref.service,
    region,
    inUse: state.unitsInUse(ref.service, ref.subscriptionId, region),
    requested,
  });
}

/**
 * The 400 of a write that would give a replica a SKU other than Premium_P1 or Premium_P2, or take
 * an instance with replicas out of Premium; `undefined` otherwise. (The rule is Azure's —
 * replicas are a Premium feature —; the words are the emulator's.)
 */
function replicaSkuProblem(
  state: EmulatorState,
  view: InstanceView,
  sku: string,
): EmulatorResponse | undefined {
  if (REPLICA_SKUS.includes(sku as SkuName)) return undefined;
  if (view.ref.replica !== undefined) {
    return badArgument(`A replica's SKU must be Premium_P1 or Premium_P2, not ${sku}.`);
  }
  const replicas = state.replicasOf(view.resourceId).length;
  return replicas > 0
    ? badArgument(
        `'${view.ref.name}' has ${replicas} replicas: it must stay Premium_P1 or Premium_P2, not ${sku}.`,
      )
    : undefined;
}

/**
 * A write (PATCH, or PUT on an existing instance) through the refusals, the SKU contract, the
 * running operation, the quota and the ladder; then the update starts.
 */
function writeInstance(
  req: EmulatorRequest,
  state: EmulatorState,
  view: InstanceView,
  change: Change,
  contract: SkuContract,
  flags: ArmFaultFlags,
  status: number,
): EmulatorResponse {
  const sku = change.sku ?? view.sku;
  const units = change.units ?? view.units;
  const target: WriteTarget = {
    resourceId: view.resourceId,
    name: resourceName(view.ref),
    subscriptionId: view.ref.subscriptionId,
    sku,
    units,
  };
  const refused = refusedWrite(state, target, contract, change.tier) ?? replicaSkuProblem(state, view, sku);
  if (refused) return refused;
  const skuName = sku as SkuName;
  if (state.isBusy(view.resourceId)) return stateError(operationConflict(resourceName(view.ref)));
  const quota = overQuota(
    state,
    view.ref,
    view.location,
    (skuName === "Free_F1" ? 0 : units) - state.unitsHeldBy(view.resourceId),
  );
  if (quota) return quota;
  let outcome = faultOutcome(flags);
  const changes = skuName !== view.sku || units !== view.units;
  const ladder = state.ladderOf(view.resourceId, skuName);
  if (changes && !ladder.includes(units)) {
    if (view.ladderEnforcement === "refuse") {
      return offLadder(skuName, units, ladder);
    }
    outcome ??= "notApplied";
  }
  try {
    const op = state.beginUpdate(
      view.resourceId,
      {
        sku: skuName,
        units,
        ...(change.tags ? { tags: change.tags } : {}),
        ...(contract.replicas && change.resourceStopped !== undefined
          ? { resourceStopped: change.resourceStopped }
          : {}),
        ...(contract.replicas && change.regionEndpointEnabled !== undefined
          ? { regionEndpointEnabled: change.regionEndpointEnabled }
          : {}),
      },
      {
        ...(outcome ? { outcome } : {}),
        ...(flags.updateSeconds !== undefined ? { durationMs: flags.updateSeconds * 1000 } : {}),
      },
    );
    return accepted(req, state, op, contract, status);
  } catch (err) {
    return stateError(err);
  }
}

/**
 * A create (PUT on an unknown ID) through the refusals, the SKU contract, `checks` (a replica's
 * own rules), the quota and the documented ladder.
 */
function createInstance(
  req: EmulatorRequest,
  state: EmulatorState,
  resourceId: string,
  ref: { name: string; subscriptionId: string; service: ServiceKind },
  change: Change,
  body: Record<string, unknown>,
  contract: SkuContract,
  checks?: (sku: string, location: string) => EmulatorResponse | undefined,
): EmulatorResponse {
  if (typeof body["location"] !== "string" || change.sku === undefined) {
    return armError(400, "InvalidRequestContent", "location and sku are required to create a resource.");
  }
  const location = normalizeLocation(body["location"]);
  const units = change.units ?? 1;
  const target: WriteTarget = {
    resourceId,
    name: ref.name,
    subscriptionId: ref.subscriptionId,
    sku: change.sku,
    units,
  };
  const refused =
    refusedWrite(state, target, contract, change.tier) ?? checks?.(change.sku, body["location"]);
  if (refused) return refused;
  const sku = change.sku as SkuName;
  const quota = overQuota(state, ref, location, sku === "Free_F1" ? 0 : units);
  if (quota) return quota;
  if (!allowedUnits(sku).includes(units)) return offLadder(sku, units, allowedUnits(sku));
  try {
    const op = state.beginCreate(resourceId, {
      location: body["location"],
      sku,
      units,
      ...(change.tags ? { tags: change.tags } : {}),
    });
    return accepted(req, state, op, contract, 201);
  } catch (err) {
    return stateError(err);
  }
}

/** An ARM request split up for routing: path segments as sent and lowercased, its api-version. */
interface ArmCall {
  req: EmulatorRequest;
  state: EmulatorState;
  flags: ArmFaultFlags;
  seg: string[];
  lower: string[];
  subscriptionId: string;
  apiVersion: string | undefined;
  /** Items per page of ARM lists. */
  pageSize: number;
}

/** ARM's 400 for a request without `?api-version=`. */
function missingVersion(): EmulatorResponse {
  return armError(
    400,
    "MissingApiVersionParameter",
    "The api-version query parameter (?api-version=) is required for all requests.",
  );
}

/** ARM's 405 for a method the route does not serve. */
function notAllowed(req: EmulatorRequest): EmulatorResponse {
  return armError(405, "MethodNotAllowed", `${req.method} is not supported here.`);
}

/** A list endpoint (GET only, with an api-version the type has): one page of `items()`. */
function listPage(call: ArmCall, items: () => readonly unknown[], service?: ServiceKind): EmulatorResponse {
  const { req, apiVersion } = call;
  if (req.method !== "GET") return notAllowed(req);
  if (!apiVersion) return missingVersion();
  if (service) {
    const refused = apiVersionError(service, service, apiVersion, "global");
    if (refused) return refused;
  }
  return json(200, page(req, items(), call.pageSize));
}

/** The SignalR/Web PubSub resources of a list, as ARM bodies in the api-version's contract. */
function instanceList(
  call: ArmCall,
  service: ServiceKind,
  resourceGroup?: string,
): () => Record<string, unknown>[] {
  const { state, subscriptionId, apiVersion } = call;
  const contract = apiVersion ? skuContract(service, apiVersion) : undefined;
  return () =>
    contract
      ? state
          .armInstances({
            subscriptionId,
            ...(resourceGroup !== undefined ? { resourceGroup } : {}),
            service,
            replicas: false,
          })
          .map((v) => resourceBody(v, contract))
      : [];
}

/**
 * `GET /subscriptions/{s}/providers/Microsoft.SignalRService/locations/{l}/operationStatuses|operationResults/{id}`:
 * a long-running operation's status (with `Retry-After` while it runs) or its result.
 */
function operationRoute(call: ArmCall): EmulatorResponse | undefined {
  const { req, state, seg, lower, subscriptionId, apiVersion } = call;
  if (req.method !== "GET") return notAllowed(req);
  if (!apiVersion) return missingVersion();
  const op = state.getOperation(seg[7] as string);
  const service = op ? (state.getInstance(op.resourceId)?.ref.service ?? "SignalR") : "SignalR";
  const refused = apiVersionError(service, `locations/${seg[6]}`, apiVersion, seg[5] as string);
  if (refused) return refused;
  if (!op || op.subscriptionId.toLowerCase() !== subscriptionId.toLowerCase()) {
    return armError(404, "NotFound", `Operation '${seg[7]}' was not found.`);
  }
  if (lower[6] === "operationstatuses") {
    const headers: Record<string, string> =
      op.status === "Running" ? { "retry-after": pollAfter(state, op) } : {};
    return json(200, operationStatusBody(req, op, apiVersion), headers);
  }
  if (lower[6] !== "operationresults") return undefined;
  if (op.status === "Running") {
    const urls = operationUrls(req, op, apiVersion);
    return { status: 202, headers: { location: urls.location, "retry-after": pollAfter(state, op) } };
  }
  const view = state.getInstance(op.resourceId);
  const contract = view ? skuContract(view.ref.service, apiVersion) : undefined;
  return view && contract ? json(200, resourceBody(view, contract)) : { status: 204 };
}

/** `GET /subscriptions/{s}/providers/Microsoft.SignalRService/locations/{l}/usages`: the region's quota use. */
function usagesRoute(call: ArmCall): EmulatorResponse {
  const { req, state, seg, subscriptionId, apiVersion } = call;
  if (req.method !== "GET") return notAllowed(req);
  if (!apiVersion) return missingVersion();
  const refused = apiVersionError("SignalR", `locations/usages`, apiVersion, seg[5] as string);
  return refused ?? usagesResponse(usagesOf(state, subscriptionId, seg[5] as string));
}

/** `/subscriptions/{s}/providers/{ns}/…`: subscription-wide lists, usages and long-running operations. */
function subscriptionRoute(call: ArmCall): EmulatorResponse | undefined {
  const { seg, lower, state, subscriptionId } = call;
  const ns = lower[3];
  if (ns === "microsoft.insights" && lower[4] === "autoscalesettings" && seg.length === 5) {
    return listPage(call, () => state.listAutoscaleSettings({ subscriptionId }).map(autoscaleBody));
  }
  if (ns !== "microsoft.signalrservice") return undefined;
  if (lower[4] === "locations" && seg.length === 7 && lower[6] === "usages") return usagesRoute(call);
  if (lower[4] === "locations" && seg.length === 8) return operationRoute(call);
  if (seg.length !== 5) return undefined;
  const service = serviceOfType(seg[4] as string);
  if (!service) return undefined;
  return listPage(call, instanceList(call, service), service);
}

/**
 * `/subscriptions/{s}/resourceGroups/{g}/providers/Microsoft.SignalRService/{type}/{name}[/skus]`:
 * reads, updates (PATCH) and creates or updates (PUT) one resource, or lists its SKUs.
 */
function resourceRoute(
  call: ArmCall,
  service: ServiceKind,
  resourceGroup: string,
): EmulatorResponse | undefined {
  const { req, state, seg, lower, subscriptionId, apiVersion, flags } = call;
  const name = seg[7] as string;
  const resourceId = `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/${ARM_TYPES[service]}/${name}`;
  if (!apiVersion) return missingVersion();
  if (lower[8] === "replicas") return replicaRoute(call, service, resourceId, apiVersion);
  const existing = state.getInstance(resourceId);
  const refused = apiVersionError(service, service, apiVersion, existing?.location ?? "global");
  if (refused) return refused;
  const contract = skuContract(service, apiVersion) as SkuContract;
  const notFound = armError(
    404,
    "ResourceNotFound",
    `The Resource '${ARM_TYPES[service]}/${name}' under resource group '${resourceGroup}' was not found.`,
  );

  if (seg.length === 9 && lower[8] === "skus") {
    if (req.method !== "GET") return notAllowed(req);
    return existing ? json(200, skuListBody(state, existing, contract)) : notFound;
  }
  if (seg.length !== 8) return undefined;

  switch (req.method) {
    case "GET": {
      const view = state.armView(resourceId);
      return view ? json(200, resourceBody(view, contract)) : notFound;
    }
    case "PATCH": {
      if (!existing) return notFound;
      const change = readChange(req.body);
      if ("status" in change) return change;
      return writeInstance(req, state, existing, change, contract, flags, 202);
    }
    case "PUT": {
      const change = readChange(req.body);
      if ("status" in change) return change;
      if (existing) return writeInstance(req, state, existing, change, contract, flags, 201);
      const ref = { name, subscriptionId, service };
      const body = req.body as Record<string, unknown>;
      return createInstance(req, state, resourceId, ref, change, body, contract);
    }
    default:
      return armError(405, "MethodNotAllowed", `${req.method} is not supported on this resource.`);
  }
}

/**
 * ARM's answer to an api-version that has no replicas (the 2024-03-01 specs are the first with
 * them) or is not served; `undefined` when it has them, and then its contract.
 */
function replicaVersion(
  service: ServiceKind,
  version: string,
  location: string,
): { contract: SkuContract } | EmulatorResponse {
  const contract = skuContract(service, version);
  if (contract?.replicas) return { contract };
  const refused = apiVersionError(service, `${service}/replicas`, version, location);
  if (refused && apiVersionProblem(service, version) === "malformed") return refused;
  const supported = servedVersions(service)
    .filter((v) => skuContract(service, v)?.replicas)
    .join(", ");
  return armError(
    400,
    "NoRegisteredProviderFound",
    `No registered resource provider found for location '${location}' and API version '${version}' for type '${service}/replicas'. The supported api-versions are '${supported}'.`,
  );
}

/** A replica's creation (PUT on an unknown replica of a known instance): as an instance's, plus a replica's rules. */
function createReplica(
  call: ArmCall,
  parent: InstanceView,
  replicaId: string,
  change: Change,
  contract: SkuContract,
): EmulatorResponse {
  const { req, state } = call;
  const ref = {
    name: replicaId.split("/").at(-1) as string,
    subscriptionId: parent.ref.subscriptionId,
    service: parent.ref.service,
  };
  return createInstance(
    req,
    state,
    replicaId,
    ref,
    change,
    req.body as Record<string, unknown>,
    contract,
    (sku, location) => {
      if (!REPLICA_SKUS.includes(sku as SkuName)) {
        return badArgument(`A replica's SKU must be Premium_P1 or Premium_P2, not ${sku}.`);
      }
      try {
        state.validateReplica(replicaId, sku as SkuName, location);
        return undefined;
      } catch (err) {
        return stateError(err);
      }
    },
  );
}

/**
 * `…/{type}/{name}/replicas[/{replica}[/skus]]` (2024-03-01): Replicas_List, Replicas_Get,
 * Replicas_Update (PATCH), Replicas_CreateOrUpdate (PUT) and ListReplicaSkus, of the instance
 * `parentId`.
 */
function replicaRoute(
  call: ArmCall,
  service: ServiceKind,
  parentId: string,
  apiVersion: string,
): EmulatorResponse | undefined {
  const { req, state, seg, lower, flags } = call;
  if (seg.length > 11 || (seg.length === 11 && lower[10] !== "skus")) return undefined;
  const parent = state.getInstance(parentId);
  const version = replicaVersion(service, apiVersion, parent?.location ?? "global");
  if ("status" in version) return version;
  const { contract } = version;
  if (!parent) {
    return armError(
      404,
      "ResourceNotFound",
      `The Resource '${ARM_TYPES[service]}/${seg[7]}' under resource group '${seg[3]}' was not found.`,
    );
  }
  if (seg.length === 9) {
    if (req.method !== "GET") return notAllowed(req);
    const items = state.replicasOf(parentId).map((r) => replicaBody(state.armView(r.resourceId) ?? r));
    return json(200, page(req, items, call.pageSize));
  }
  const replicaId = `${parentId}/replicas/${seg[9]}`;
  const existing = state.getInstance(replicaId);
  const notFound = armError(
    404,
    "ResourceNotFound",
    `The Resource '${ARM_TYPES[service]}/${seg[7]}/replicas/${seg[9]}' under resource group '${seg[3]}' was not found.`,
  );
  if (seg.length === 11) {
    if (req.method !== "GET") return notAllowed(req);
    return existing ? json(200, replicaSkuListBody(state, existing, contract)) : notFound;
  }
  switch (req.method) {
    case "GET": {
      const view = state.armView(replicaId);
      return view ? json(200, replicaBody(view)) : notFound;
    }
    case "PATCH": {
      if (!existing) return notFound;
      const change = readChange(req.body);
      if ("status" in change) return change;
      return writeInstance(req, state, existing, change, contract, flags, 202);
    }
    case "PUT": {
      const change = readChange(req.body);
      if ("status" in change) return change;
      if (existing) return writeInstance(req, state, existing, change, contract, flags, 201);
      return createReplica(call, parent, replicaId, change, contract);
    }
    default:
      return armError(405, "MethodNotAllowed", `${req.method} is not supported on this resource.`);
  }
}

/** `/subscriptions/{s}/resourceGroups/{g}/providers/{ns}/…`: resource-group lists and resources. */
function resourceGroupRoute(call: ArmCall): EmulatorResponse | undefined {
  const { seg, lower, state, subscriptionId } = call;
  if (lower[2] !== "resourcegroups" || lower[4] !== "providers" || seg.length < 7) return undefined;
  const resourceGroup = seg[3] as string;
  const ns = lower[5];
  if (ns === "microsoft.insights" && lower[6] === "autoscalesettings" && seg.length === 7) {
    return listPage(call, () =>
      state.listAutoscaleSettings({ subscriptionId, resourceGroup }).map(autoscaleBody),
    );
  }
  if (ns !== "microsoft.signalrservice") return undefined;
  const service = serviceOfType(seg[6] as string);
  if (!service) return undefined;
  if (seg.length === 7) return listPage(call, instanceList(call, service, resourceGroup), service);
  return resourceRoute(call, service, resourceGroup);
}

/** What `Usages_List` of a subscription and region is made from (usages.ts). */
function usagesOf(state: EmulatorState, subscriptionId: string, location: string): UsagesInput {
  const where = normalizeLocation(location);
  return {
    subscriptionId,
    location,
    freeInstances: state
      .armInstances({ subscriptionId })
      .filter((i) => i.location === where && i.sku === "Free_F1").length,
    unitsInUse: (service) => state.unitsInUse(service, subscriptionId, location),
    quotaFor: (service) => state.refusals.quotaFor(subscriptionId, location, service),
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
  if (lower[0] !== "subscriptions") return undefined;
  const pageSize = ctx.pageSize ?? 100;
  // Microsoft.Resources' generic lists (resources.ts).
  if (seg.length === 3 && lower[2] === "resources") {
    return handleResourceList(req, ctx.state, { subscriptionId: seg[1] as string }, pageSize);
  }
  if (seg.length === 5 && lower[2] === "resourcegroups" && lower[4] === "resources") {
    const scope = { subscriptionId: seg[1] as string, resourceGroup: seg[3] as string };
    return handleResourceList(req, ctx.state, scope, pageSize);
  }
  if (seg.length < 4) return undefined;
  const call: ArmCall = {
    req,
    state: ctx.state,
    flags,
    seg,
    lower,
    subscriptionId: seg[1] as string,
    apiVersion: queryParam(req.query, "api-version"),
    pageSize,
  };
  return lower[2] === "providers" ? subscriptionRoute(call) : resourceGroupRoute(call);
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
