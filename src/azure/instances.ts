/**
 * SignalR and Web PubSub instances and their geo-replicas through Azure Resource Manager
 * (`@azure/arm-signalr`, `@azure/arm-webpubsub` for instances; the generic calls of
 * `@azure/arm-resources` for replicas, `replica-ops.ts`): read SKU, units, provisioning state and
 * whether ARM says it serves (`instance-state.ts`); list an instance's replicas; read the allowed
 * unit counts (`listSkus`, `ListReplicaSkus`); start a scale (PATCH, a long-running operation)
 * without waiting for it; observe it on later passes and check that the new capacity was really
 * applied. Every method that takes a resource ID takes an instance's or a replica's.
 *
 * Every call goes through the ARM throttle gate of its scope (subscription + the resource's
 * region, learned from `get` or `listReplicas`: a replica's is its own), is sent without SDK retries, and fails with one of the typed errors
 * of `errors.ts`. ARM's remaining-quota headers are recorded per scope in `quota`.
 *
 * Every request — reads, the PATCH, `listSkus`, list pages and the long-running operation's
 * status and result polls — carries the api-version of its service ({@link SIGNALR_API_VERSION},
 * {@link WEBPUBSUB_API_VERSION}): the SDK client's `apiVersion` option, and a pipeline policy that
 * puts it on the URLs the SDK follows (`Azure-AsyncOperation`, `Location`, `nextLink`).
 */
import { SignalRManagementClient } from "@azure/arm-signalr";
import { WebPubSubManagementClient } from "@azure/arm-webpubsub";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import {
  DEFAULT_LADDERS,
  isScalableSku,
  SCALABLE_SKUS,
  type ScalableSku,
  type ServiceKind,
  SKU_TIER,
  type UnitLadders,
} from "../capacity/index.js";
import { ANY_REGION, ArmAdapter, type ArmAdapterOptions } from "./arm-adapter.js";
import {
  type ArmResource,
  type InstanceState,
  rawListProperties,
  rawProperties,
  toInstance,
} from "./instance-state.js";
import {
  type PatchResponse,
  RESOURCES_API_VERSION,
  type ReplicaOps,
  replicaOps,
  resourceIdLister,
  type SkuListItem,
} from "./replica-ops.js";
import {
  isReplica,
  parseResourceId,
  parseServiceKind,
  RESOURCE_TYPES,
  ResourceIdError,
  type ResourceRef,
  replicaResourceType,
  resourceKey,
} from "./resource-id.js";
import { type AzureScope, normalizeRegion, UNKNOWN_REGION } from "./scope.js";

export { type InstanceState, servingOf } from "./instance-state.js";

/**
 * The api-version of every `Microsoft.SignalRService/SignalR` call: the newest stable version of
 * the SignalR REST spec, the first stable one whose `ResourceSku` has Premium_P2 (100–1,000 units)
 * and that has replicas. Source: Azure/azure-rest-api-specs,
 * `specification/signalr/resource-manager/Microsoft.SignalRService/SignalRService/readme.md`
 * (stable tags 2018-10-01, 2020-05-01, 2021-10-01, 2022-02-01, 2023-02-01, 2024-03-01; later ones
 * are previews) and `…/stable/2024-03-01/signalr.json` (commit e6eec14c). `@azure/arm-signalr`
 * 5.2.0 sends 2023-02-01 unless told, whose SKUs stop at Premium_P1 and 100 units.
 */
export const SIGNALR_API_VERSION = "2024-03-01";

/**
 * The api-version of every `Microsoft.SignalRService/WebPubSub` call: the newest stable version of
 * the Web PubSub REST spec, with Premium_P2 and replicas. Source: Azure/azure-rest-api-specs,
 * `specification/webpubsub/resource-manager/Microsoft.SignalRService/SignalRService/readme.md`
 * (stable tags 2021-10-01, 2023-02-01, 2024-03-01; later ones are previews) and
 * `specification/webpubsub/resource-manager/Microsoft.SignalRService/stable/2024-03-01/webpubsub.json`
 * (commit c9388702). `@azure/arm-webpubsub` 1.2.0 sends it by default; it is pinned here all the same.
 */
export const WEBPUBSUB_API_VERSION = "2024-03-01";

/** The api-version each service's calls carry. */
export const API_VERSIONS: Readonly<Record<ServiceKind, string>> = {
  SignalR: SIGNALR_API_VERSION,
  WebPubSub: WEBPUBSUB_API_VERSION,
};

/**
 * Sets `api-version` on every request of a client (replacing any other value, any case): the
 * SDK's own option covers the operations it builds, not always the URLs it follows from a
 * response (the operation status and result polls, next pages).
 */
export function apiVersionPolicy(apiVersion: string): PipelinePolicy {
  return {
    name: "signalrAutoscalerApiVersion",
    sendRequest(request, next) {
      request.url = withApiVersion(request.url, apiVersion);
      return next(request);
    },
  };
}

/**
 * `url` with exactly one `api-version`, `apiVersion`, last; its other query parameters kept as
 * written (a `nextLink`'s `$skipToken` is opaque).
 */
function withApiVersion(url: string, apiVersion: string): string {
  const hash = url.indexOf("#");
  const base = hash < 0 ? url : url.slice(0, hash);
  const at = base.indexOf("?");
  const path = at < 0 ? base : base.slice(0, at);
  const params = at < 0 ? [] : base.slice(at + 1).split("&");
  const kept = params.filter((p) => p !== "" && p.split("=")[0]?.toLowerCase() !== "api-version");
  return `${path}?${[...kept, `api-version=${encodeURIComponent(apiVersion)}`].join("&")}`;
}

/** One SKU's capacity rules as `listSkus` reports them. */
export interface SkuCapacityInfo {
  /** The resource type the entry is for, as `listSkus` spells it (`Microsoft.SignalRService/SignalR`). */
  resourceType: string | undefined;
  sku: string;
  tier: string | undefined;
  minimum: number | undefined;
  maximum: number | undefined;
  default: number | undefined;
  allowedValues: number[] | undefined;
  scaleType: string | undefined;
}

/** Allowed unit counts of an instance. */
export interface AllowedUnits {
  /** Ladders per scalable SKU: from `listSkus` where it says, else the documented fallback. */
  ladders: UnitLadders;
  /** The SKUs whose ladder came from `listSkus`. */
  fromService: ScalableSku[];
  /** The entries `listSkus` returned for the resource's own type (an instance's, not its replicas'). */
  skus: SkuCapacityInfo[];
}

/**
 * One quota of the subscription in a region as `Usages_List` reports it (`SignalRUsage` of the
 * 2024-03-01 spec; the service's documented names are `SignalRTotalUnits`, the units its instances
 * hold, and `FreeTierInstances`: "Get-AzSignalRUsage", Az.SignalR).
 */
export interface UnitUsage {
  /** `name.value`, e.g. `SignalRTotalUnits`. */
  name: string;
  /** In use now (`currentValue`), in `unit`. */
  currentValue: number;
  /** The maximum permitted (`limit`); -1 when there is no limit. */
  limit: number;
  /** `Count`, `Bytes`, … (absent when Azure omits it). */
  unit: string | undefined;
}

/** A scale target. */
export interface ScaleTarget {
  sku: ScalableSku;
  units: number;
}

/** A scale that ARM accepted; persist it to observe it on later passes (also across restarts). */
export interface ScaleOperation {
  resourceId: string;
  target: ScaleTarget;
  startedAt: Date;
  /** HTTP status of the PATCH (200 done at once, 201/202 running). */
  acceptedWith: number;
  /** `Azure-AsyncOperation` (or `Location`) URL of the long-running operation, when ARM gave one. */
  operationUrl?: string;
  /** The SDK poller's serialized state (`resumeFrom` of `beginUpdate`), for diagnostics or resuming. */
  resumeToken?: string;
  /** Set when the status poll right after the PATCH failed (the update was accepted all the same). */
  pollWarning?: string;
}

/** What {@link AzureInstances.observeUpdate} found. */
export type UpdateObservation =
  /** Still running (`provisioningState` not terminal). */
  | { state: "inProgress"; instance: InstanceState }
  /** Terminal `Succeeded` with the target SKU and units. */
  | { state: "applied"; instance: InstanceState }
  /** Terminal `Succeeded` but SKU or units differ from the target: the update did not apply. */
  | { state: "notApplied"; instance: InstanceState; target: ScaleTarget }
  /** Terminal `Failed` or `Canceled`. */
  | { state: "failed"; instance: InstanceState };

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of {@link AzureInstances}. */
export type AzureInstancesOptions = ArmAdapterOptions;

interface RawResponse {
  status: number;
  request: { method: string };
  headers: { get(name: string): string | undefined };
  bodyAsText?: string | null;
}

interface UpdatePoller {
  toString(): string;
}

/** The few ARM operations used, the same for both services. */
interface ServiceOps {
  /** GET, with the body's `properties` as sent (the SDK models drop some, see `rawProperties`). */
  get(rg: string, name: string, signal: AbortSignal | undefined): Promise<ArmResource>;
  listSkus(rg: string, name: string, signal: AbortSignal | undefined): Promise<{ value?: SkuListItem[] }>;
  beginUpdate(
    rg: string,
    name: string,
    location: string,
    sku: { name: string; tier: string; capacity: number },
    onResponse: (raw: RawResponse) => void,
    signal: AbortSignal | undefined,
  ): Promise<UpdatePoller>;
  /** Every page, each resource with its body's `properties` as sent (see `get`). */
  listBySubscription(signal: AbortSignal | undefined): Promise<ArmResource[]>;
  listUsages(location: string, signal: AbortSignal | undefined): AsyncIterable<UsageItem>;
}

interface UsageItem {
  currentValue?: number;
  limit?: number;
  name?: { value?: string };
  unit?: string;
}

/** The SDK's `client.usages`, as far as it is used. */
interface UsageOperations {
  list(location: string, options: { abortSignal?: AbortSignal }): AsyncIterable<UsageItem>;
}

/** The SDK operation group of one service (`client.signalR`, `client.webPubSub`), as far as it is used. */
interface ArmOperations {
  get(
    rg: string,
    name: string,
    options: { abortSignal?: AbortSignal; onResponse?: (raw: RawResponse) => void },
  ): Promise<ArmResource>;
  listSkus(
    rg: string,
    name: string,
    options: { abortSignal?: AbortSignal },
  ): Promise<{ value?: SkuListItem[] }>;
  beginUpdate(
    rg: string,
    name: string,
    parameters: { location: string; sku: { name: string; tier: string; capacity: number } },
    options: { abortSignal?: AbortSignal; onResponse: (raw: RawResponse) => void },
  ): Promise<UpdatePoller>;
  listBySubscription(options: {
    abortSignal?: AbortSignal;
    onResponse?: (raw: RawResponse) => void;
  }): AsyncIterable<ArmResource>;
}

const opts = (signal: AbortSignal | undefined) => (signal ? { abortSignal: signal } : {});

function serviceOps(operations: ArmOperations, usages: UsageOperations): ServiceOps {
  return {
    listUsages: (location, signal) => usages.list(location, opts(signal)),
    get: async (rg, name, signal) => {
      let properties: ArmResource["properties"];
      const r = await operations.get(rg, name, {
        ...opts(signal),
        onResponse: (raw) => {
          properties = rawProperties(raw.bodyAsText);
        },
      });
      return properties ? { ...r, properties } : r;
    },
    listSkus: (rg, name, signal) => operations.listSkus(rg, name, opts(signal)),
    beginUpdate: (rg, name, location, sku, onResponse, signal) =>
      operations.beginUpdate(rg, name, { location, sku }, { ...opts(signal), onResponse }),
    listBySubscription: async (signal) => {
      // Each page's answer (the SDK calls onResponse once a page), its resources' raw properties by ID.
      const properties = new Map<string, NonNullable<ArmResource["properties"]>>();
      const onResponse = (raw: RawResponse) => {
        for (const [id, props] of rawListProperties(raw.bodyAsText)) properties.set(id, props);
      };
      const out: ArmResource[] = [];
      for await (const r of operations.listBySubscription({ ...opts(signal), onResponse })) {
        const props = r.id ? properties.get(resourceKey(r.id)) : undefined;
        out.push(props ? { ...r, properties: props } : r);
      }
      return out;
    },
  };
}

export class AzureInstances extends ArmAdapter {
  readonly #regions = new Map<string, string>();
  readonly #clients = new Map<string, ServiceOps>();
  readonly #replicaClients = new Map<string, ReplicaOps>();
  readonly #resourceLists = new Map<string, ReturnType<typeof resourceIdLister>>();

  /**
   * Records where an instance or a replica lives (a replica's region is its own), so that its
   * calls use the right throttling scope before the first `get`.
   */
  rememberRegion(resourceId: string, region: string): void {
    this.#regions.set(resourceKey(resourceId), normalizeRegion(region));
  }

  /** The region learned for an instance, if any. */
  regionOf(resourceId: string): string | undefined {
    return this.#regions.get(resourceKey(resourceId));
  }

  /**
   * The throttling scope of an instance or a replica: its subscription and its own region
   * ({@link UNKNOWN_REGION} before the first `get` or `listReplicas`).
   */
  scopeOf(resourceId: string): AzureScope {
    const ref = parseResourceId(resourceId);
    return { subscriptionId: ref.subscriptionId, region: this.regionOf(ref.id) ?? UNKNOWN_REGION };
  }

  #ops(service: ServiceKind, subscriptionId: string): ServiceOps {
    const key = `${service}/${subscriptionId.toLowerCase()}`;
    let ops = this.#clients.get(key);
    if (!ops) {
      const apiVersion = API_VERSIONS[service];
      const base = this.clientOptions((id) => this.regionOf(id), [apiVersionPolicy(apiVersion)]);
      const options = { ...base, apiVersion };
      const client =
        service === "SignalR"
          ? new SignalRManagementClient(this.conn.credential, subscriptionId, options)
          : new WebPubSubManagementClient(this.conn.credential, subscriptionId, options);
      ops = serviceOps("signalR" in client ? client.signalR : client.webPubSub, client.usages);
      this.#clients.set(key, ops);
    }
    return ops;
  }

  /** The generic ARM calls on the replicas of `service` in `subscriptionId` (`replica-ops.ts`). */
  #replicaOps(service: ServiceKind, subscriptionId: string): ReplicaOps {
    const key = `${service}/${subscriptionId.toLowerCase()}`;
    let ops = this.#replicaClients.get(key);
    if (!ops) {
      const apiVersion = API_VERSIONS[service];
      const pipeline = this.clientOptions((id) => this.regionOf(id), [apiVersionPolicy(apiVersion)]);
      ops = replicaOps(this.conn.credential, subscriptionId, apiVersion, {
        endpoint: this.conn.armEndpoint,
        credentialScope: this.conn.armScope,
        pipeline,
      });
      this.#replicaClients.set(key, ops);
    }
    return ops;
  }

  /** The generic resource list of a subscription (`replica-ops.ts`). */
  #resourceList(subscriptionId: string): ReturnType<typeof resourceIdLister> {
    const key = subscriptionId.toLowerCase();
    let lister = this.#resourceLists.get(key);
    if (!lister) {
      const pipeline = this.clientOptions(
        (id) => this.regionOf(id),
        [apiVersionPolicy(RESOURCES_API_VERSION)],
      );
      lister = resourceIdLister(this.conn.credential, subscriptionId, {
        endpoint: this.conn.armEndpoint,
        credentialScope: this.conn.armScope,
        pipeline,
      });
      this.#resourceLists.set(key, lister);
    }
    return lister;
  }

  /** GET of an instance (its SDK) or a replica (`getById`). */
  #read(ref: ResourceRef, signal: AbortSignal | undefined): Promise<ArmResource> {
    return isReplica(ref)
      ? this.#replicaOps(ref.service, ref.subscriptionId).get(ref.id, signal)
      : this.#ops(ref.service, ref.subscriptionId).get(ref.resourceGroup, ref.name, signal);
  }

  /**
   * Reads an instance or a replica (GET; a replica's at the service's api-version through
   * `resources.getById`). Learns its region for later calls.
   * @throws ResourceIdError for a malformed ID; a typed Azure error (errors.ts) on failure.
   */
  async get(resourceId: string, options: CallOptions = {}): Promise<InstanceState> {
    const ref = parseResourceId(resourceId);
    const raw = await this.call("instances.get", this.scopeOf(ref.id), options.signal, () =>
      this.#read(ref, options.signal),
    );
    const instance = toInstance(ref, raw);
    if (raw.location) this.rememberRegion(ref.id, raw.location);
    return instance;
  }

  /**
   * The allowed unit counts per SKU: an instance's from `listSkus`, a replica's from its own
   * `ListReplicaSkus` (`…/replicas/{replicaName}/skus`). Only the entries of the resource's own
   * type count (case-insensitive; an entry without `resourceType` counts as its own): an
   * instance's `listSkus` also lists the SKUs of its replicas (`…/replicas`, as in the official
   * example `SignalR_ListSkus.json` of 2024-03-01), which are not the instance's. For a replica,
   * whose list is its own, an entry of the instance's type stands for the replica when no entry of
   * the replica's type names that SKU (no official example of `ListReplicaSkus` pins its
   * `resourceType`, and the `Replicas_List` example spells a replica's `type` as the instance's).
   * SKUs it does not describe, or describes without `allowedValues`, keep the documented ladder
   * (`DEFAULT_LADDERS`); `fromService` names those whose ladder came from the service.
   * @throws ResourceIdError; a typed Azure error on failure.
   */
  async listSkus(resourceId: string, options: CallOptions = {}): Promise<AllowedUnits> {
    const ref = parseResourceId(resourceId);
    const list = await this.call("instances.listSkus", this.scopeOf(ref.id), options.signal, () =>
      isReplica(ref)
        ? this.#replicaOps(ref.service, ref.subscriptionId).listSkus(ref.id, options.signal)
        : this.#ops(ref.service, ref.subscriptionId).listSkus(ref.resourceGroup, ref.name, options.signal),
    );
    const skus = ownSkus(ref, list.value ?? []);
    const ladders: Record<ScalableSku, readonly number[]> = { ...DEFAULT_LADDERS };
    const fromService: ScalableSku[] = [];
    for (const s of skus) {
      if (!isScalableSku(s.sku) || !s.allowedValues || s.allowedValues.length === 0) continue;
      ladders[s.sku] = [...new Set(s.allowedValues)]
        .filter((u) => Number.isInteger(u) && u > 0)
        .sort((a, b) => a - b);
      fromService.push(s.sku);
    }
    return { ladders, fromService: SCALABLE_SKUS.filter((s) => fromService.includes(s)), skus };
  }

  /**
   * The instance's geo-replicas (`Replicas_List` at the service's api-version, all pages), each as
   * {@link get} reads it. Learns their regions. Its throttling scope is the instance's.
   * @throws ResourceIdError (also for a replica's ID: replicas have no replicas); a typed Azure
   *   error on failure.
   */
  async listReplicas(primaryId: string, options: CallOptions = {}): Promise<InstanceState[]> {
    const ref = parseResourceId(primaryId);
    if (isReplica(ref)) {
      throw new ResourceIdError(
        `listReplicas needs an instance's ID, not a replica's: "${primaryId}"`,
        primaryId,
      );
    }
    const raw = await this.call("instances.listReplicas", this.scopeOf(ref.id), options.signal, () =>
      this.#replicaOps(ref.service, ref.subscriptionId).list(ref.id, options.signal),
    );
    const out: InstanceState[] = [];
    for (const r of raw) {
      const replica = replicaRefOf(ref, r);
      if (!replica) continue;
      if (r.location) this.rememberRegion(replica.id, r.location);
      out.push(toInstance(replica, r));
    }
    return out;
  }

  /**
   * The canonical IDs of every geo-replica of one service in a subscription: ARM's generic
   * resource list (`Resources_List` at {@link RESOURCES_API_VERSION}, all pages) filtered to the
   * replica type — one call for the subscription, for discovering which instances have replicas.
   * IDs only: ARM's generic list carries no `properties`, so a replica's state is read with
   * {@link listReplicas} or {@link get}. Entries that are not replica IDs of the service are left
   * out. Its throttling scope is the subscription with region `*`.
   * @throws UnknownServiceError for a service other than SignalR or WebPubSub; typed Azure errors.
   */
  async listReplicaIds(
    subscriptionId: string,
    service: ServiceKind,
    options: CallOptions = {},
  ): Promise<string[]> {
    parseServiceKind(service);
    const scope: AzureScope = { subscriptionId, region: ANY_REGION };
    const ids = await this.call("instances.listReplicaIds", scope, options.signal, () =>
      this.#resourceList(subscriptionId)(replicaResourceType(service), options.signal),
    );
    const out: string[] = [];
    for (const id of ids) {
      try {
        const ref = parseResourceId(id);
        if (isReplica(ref) && ref.service === service) out.push(ref.id);
      } catch {
        // Not a replica ID this project parses: left out.
      }
    }
    return out;
  }

  /**
   * The subscription's quotas in the instance's region (`Usages_List`, all pages; read-only, one
   * list for SignalR and Web PubSub, which share the resource provider): entries without a name are
   * dropped, a missing `currentValue` reads 0 and a missing `limit` -1 (no limit).
   * @throws ResourceIdError; a typed Azure error on failure.
   */
  async listUsages(resourceId: string, location: string, options: CallOptions = {}): Promise<UnitUsage[]> {
    const ref = parseResourceId(resourceId);
    const raw = await this.call("instances.listUsages", this.scopeOf(ref.id), options.signal, async () => {
      const out: UsageItem[] = [];
      for await (const u of this.#ops(ref.service, ref.subscriptionId).listUsages(location, options.signal))
        out.push(u);
      return out;
    });
    return raw.flatMap((u) =>
      u.name?.value
        ? [{ name: u.name.value, currentValue: u.currentValue ?? 0, limit: u.limit ?? -1, unit: u.unit }]
        : [],
    );
  }

  /**
   * Every instance of one service in a subscription (GET list, all pages). Learns their regions.
   * Its throttling scope is the subscription with region `*`.
   * @throws UnknownServiceError for a service other than SignalR or WebPubSub; typed Azure errors.
   */
  async listBySubscription(
    subscriptionId: string,
    service: ServiceKind,
    options: CallOptions = {},
  ): Promise<InstanceState[]> {
    // Callers from untyped input (JSON, flags) get a clear error for an unknown service.
    parseServiceKind(service);
    const scope: AzureScope = { subscriptionId, region: ANY_REGION };
    const raw = await this.call("instances.listBySubscription", scope, options.signal, () =>
      this.#ops(service, subscriptionId).listBySubscription(options.signal),
    );
    const out: InstanceState[] = [];
    for (const r of raw) {
      if (!r.id) continue;
      const ref = parseResourceId(r.id);
      if (r.location) this.rememberRegion(ref.id, r.location);
      out.push(toInstance(ref, r));
    }
    return out;
  }

  /**
   * Starts a scale: PATCH `location` and `sku` (name, tier, capacity) — a long-running operation —
   * (after a GET when the resource's location is not known yet), and returns as
   * soon as ARM accepted it — it does not wait for completion. Observe it with
   * {@link observeUpdate} on later passes. A replica's PATCH goes to the replica
   * (`Replicas_Update` through `resources.updateById`), never to its instance.
   * @throws RangeError for a target that is not a scalable SKU with a positive whole unit count;
   *   ResourceIdError; OperationInProgressError (409: an operation is already running — wait,
   *   don't stack); other typed Azure errors.
   */
  async beginScale(
    resourceId: string,
    target: ScaleTarget,
    options: CallOptions = {},
  ): Promise<ScaleOperation> {
    if (!isScalableSku(target.sku)) throw new RangeError(`cannot scale to SKU "${target.sku}"`);
    if (!Number.isInteger(target.units) || target.units < 1) {
      throw new RangeError(`units must be a positive whole number, got ${target.units}`);
    }
    const ref = parseResourceId(resourceId);
    // The PATCH body carries the location (Web PubSub's model requires it): read it once if unknown.
    const location = this.regionOf(ref.id) ?? (await this.get(ref.id, options)).location;
    const scope = this.scopeOf(ref.id);
    const startedAt = this.conn.now();
    let patch: RawResponse | undefined;
    const onResponse = (raw: RawResponse) => {
      if (raw.request.method.toUpperCase() === "PATCH") patch = raw;
    };
    const sku = { name: target.sku, tier: SKU_TIER[target.sku], capacity: target.units };
    if (isReplica(ref)) {
      const { patch: answered, resumeToken } = await this.call(
        "instances.beginScale",
        scope,
        options.signal,
        () =>
          this.#replicaOps(ref.service, ref.subscriptionId).beginUpdate(
            ref.id,
            { location, sku },
            options.signal,
          ),
      );
      return this.#operation(ref.id, target, startedAt, answered, resumeToken);
    }
    try {
      const poller = await this.call("instances.beginScale", scope, options.signal, () =>
        this.#ops(ref.service, ref.subscriptionId).beginUpdate(
          ref.resourceGroup,
          ref.name,
          location,
          sku,
          onResponse,
          options.signal,
        ),
      );
      return this.#operation(ref.id, target, startedAt, patch, poller.toString());
    } catch (err) {
      // beginUpdate sends the PATCH, then polls the operation once. When only that poll failed,
      // the scale was accepted: report it as started, with the poll failure as a warning.
      const accepted = patch;
      if (accepted && accepted.status >= 200 && accepted.status < 300) {
        const op = this.#operation(ref.id, target, startedAt, accepted, undefined);
        return { ...op, pollWarning: err instanceof Error ? err.message : String(err) };
      }
      throw err;
    }
  }

  #operation(
    resourceId: string,
    target: ScaleTarget,
    startedAt: Date,
    patch: PatchResponse | undefined,
    resumeToken: string | undefined,
  ): ScaleOperation {
    const url = patch?.headers.get("azure-asyncoperation") ?? patch?.headers.get("location");
    return {
      resourceId,
      target: { ...target },
      startedAt,
      acceptedWith: patch?.status ?? 200,
      ...(url ? { operationUrl: url } : {}),
      ...(resumeToken !== undefined ? { resumeToken } : {}),
    };
  }

  /**
   * Reads the instance and says where a scale to `target` stands: in progress, applied, not
   * applied (Succeeded without the target SKU and units — an update can report success and not
   * apply), or failed.
   * @throws the errors of {@link get}.
   */
  async observeUpdate(
    resourceId: string,
    target: ScaleTarget,
    options: CallOptions = {},
  ): Promise<UpdateObservation> {
    const instance = await this.get(resourceId, options);
    if (!instance.terminal) return { state: "inProgress", instance };
    if (instance.provisioningState.toLowerCase() !== "succeeded") return { state: "failed", instance };
    if (instance.sku === target.sku && instance.units === target.units) return { state: "applied", instance };
    return { state: "notApplied", instance, target: { ...target } };
  }
}

/** The `listSkus` entries of `ref`'s own type, as {@link AzureInstances.listSkus} describes. */
function ownSkus(ref: ResourceRef, items: readonly SkuListItem[]): SkuCapacityInfo[] {
  const ownType = ref.resourceType.toLowerCase();
  const instanceType = RESOURCE_TYPES[ref.service].toLowerCase();
  const typeOf = (item: SkuListItem) => item.resourceType?.toLowerCase() ?? ownType;
  const own = items.filter((item) => item.sku && typeOf(item) === ownType);
  const named = new Set(own.map((item) => item.sku?.name.toLowerCase()));
  const standIns = isReplica(ref)
    ? items.filter(
        (item) => item.sku && typeOf(item) === instanceType && !named.has(item.sku.name.toLowerCase()),
      )
    : [];
  return [...own, ...standIns].flatMap((item) =>
    item.sku
      ? [
          {
            resourceType: item.resourceType,
            sku: item.sku.name,
            tier: item.sku.tier,
            minimum: item.capacity?.minimum,
            maximum: item.capacity?.maximum,
            default: item.capacity?.default,
            allowedValues: item.capacity?.allowedValues ? [...item.capacity.allowedValues] : undefined,
            scaleType: item.capacity?.scaleType,
          },
        ]
      : [],
  );
}

/**
 * The reference of a replica `Replicas_List` returned for the instance `primary`: from its `id`
 * when that parses as one of `primary`'s replicas, else from its `name`; `undefined` when neither
 * names one.
 */
function replicaRefOf(primary: ResourceRef, r: ArmResource): ResourceRef | undefined {
  const candidates = [r.id, r.name !== undefined ? `${primary.id}/replicas/${r.name}` : undefined].filter(
    (x): x is string => x !== undefined,
  );
  for (const id of candidates) {
    try {
      const ref = parseResourceId(id);
      if (isReplica(ref) && resourceKey(ref.primaryId) === resourceKey(primary.id)) return ref;
    } catch {
      // Not a replica ID of this instance: try the next spelling.
    }
  }
  return undefined;
}
