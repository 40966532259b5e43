/**
 * The ARM calls on geo-replicas (`Microsoft.SignalRService/SignalR/replicas`,
 * `…/WebPubSub/replicas`, stable since api-version 2024-03-01), through the generic resource
 * calls of `@azure/arm-resources` 8 and its REST client (`@azure-rest/core-client`):
 *
 * | operation (2024-03-01 spec)                | call                                                           |
 * |--------------------------------------------|----------------------------------------------------------------|
 * | `SignalRReplicas_Get`, `WebPubSubReplicas_Get`       | `getById(replicaId)`                                 |
 * | `SignalRReplicas_Update`, `WebPubSubReplicas_Update` | `updateById(replicaId)`: PATCH, long-running (final state via `Location`, as both specs say) |
 * | `SignalRReplicas_List`, `WebPubSubReplicas_List`     | `GET {primaryId}/replicas`, then each `nextLink` (the client's path call) |
 * | `SignalR_ListReplicaSkus`, `WebPubSub_ListReplicaSkus` | `GET {replicaId}/skus` (the client's path call)    |
 * | `Resources_List` (Microsoft.Resources, {@link RESOURCES_API_VERSION}) | `resources.list` with `$filter=resourceType eq '…/replicas'`: every replica ID of a subscription |
 *
 * Why the generic calls for both services: `@azure/arm-signalr` 5.2.0 has no replica operations,
 * so SignalR needs them anyway; `@azure/arm-webpubsub` 1.2.0's `webPubSubReplicas` would be a second
 * path for the same `Replica` shape (the two specs define it identically), with another
 * long-running-operation engine (core-lro 2) and error shape beside this one (core-lro 3,
 * `@typespec/ts-http-runtime` errors): one path means one set of requests, errors and tests for both.
 *
 * Why Replicas_List rather than the generic list of the resource group
 * (`resources.listByResourceGroup` with `$filter=resourceType eq '…/replicas'`): the generic list
 * is ARM's cache of tracked resources — it carries no `properties` (so neither `resourceStopped`
 * nor `regionEndpointEnabled`; `$expand=provisioningState` gives ARM's view of that one alone), it
 * lags writes, and it would need a GET per replica to say which serve. The resource provider's own
 * list answers with every replica's whole body in one call. The generic list serves discovery
 * only — which instances of a subscription have replicas at all, one call for the subscription
 * instead of one list per instance — and only the IDs of its answer are read.
 *
 * Every request goes through the pipeline the other ARM clients have (`ArmAdapter.clientOptions`:
 * no retries, the request timeout, the CA, quota headers, the call observer, and the api-version
 * policy, which also covers `nextLink` and the operation's poll URLs), with the connection's ARM
 * token scope (`credentials.scopes`: the REST client ignores the classic `credentialScopes`).
 *
 * Errors: the REST client throws `RestError` (`@typespec/ts-http-runtime`, which
 * `@azure/core-rest-pipeline` re-exports, so `isRestError` and `classify-error.ts` read them as the
 * others) with `statusCode`, `code` (the body's `error.code`) and the response's headers; the
 * body's `error.details`, which the classic clients expose as `response.parsedBody`, is on the
 * error's `details` as `{ error: { code, message, details } }` (the SDK sets it for reads; here it is
 * set for every call, the PATCH included).
 */

import { createResourceManagement } from "@azure/arm-resources/api";
import { getById, list as listResources, updateById } from "@azure/arm-resources/api/resources";
import { isRestError } from "@azure/core-rest-pipeline";
import { type Client, createRestError, type PathUncheckedResponse } from "@azure-rest/core-client";
import type { armClientOptions } from "./connection.js";
import type { ArmResource } from "./instance-state.js";

/** A `listSkus` entry, as both specs' `SkuList` give it. */
export interface SkuListItem {
  resourceType?: string;
  sku?: { name: string; tier?: string };
  capacity?: {
    minimum?: number;
    maximum?: number;
    default?: number;
    allowedValues?: number[];
    scaleType?: string;
  };
}

/** The status and headers of the PATCH, as the adapter records a started scale. */
export interface PatchResponse {
  status: number;
  headers: { get(name: string): string | undefined };
}

/** The replica calls of one subscription. */
export interface ReplicaOps {
  get(replicaId: string, signal: AbortSignal | undefined): Promise<ArmResource>;
  /** Every replica of the instance `primaryId`, all pages. */
  list(primaryId: string, signal: AbortSignal | undefined): Promise<ArmResource[]>;
  listSkus(replicaId: string, signal: AbortSignal | undefined): Promise<{ value?: SkuListItem[] }>;
  /**
   * Sends the PATCH (`location` and `sku`) and returns once ARM answered it, without polling:
   * the PATCH's status and headers, and the poller's serialized state.
   */
  beginUpdate(
    replicaId: string,
    body: { location: string; sku: { name: string; tier: string; capacity: number } },
    signal: AbortSignal | undefined,
  ): Promise<{ patch: PatchResponse | undefined; resumeToken: string }>;
}

/**
 * The api-version of the generic resource list (`Resources_List` of Microsoft.Resources): what
 * `@azure/arm-resources` 8.0.0 sends (`KnownVersions.V20250401`), pinned.
 */
export const RESOURCES_API_VERSION = "2025-04-01";

/** Pages followed at most by one list, so a `nextLink` that loops ends. */
const MAX_PAGES = 100;

/** The options the generic client is built with (`ArmAdapter.clientOptions` plus its endpoint and scope). */
export interface ReplicaClientOptions {
  endpoint: string;
  credentialScope: string;
  /** The pipeline options of `ArmAdapter.clientOptions` (no retries, timeout, CA, policies, user agent). */
  pipeline: ReturnType<typeof armClientOptions>;
}

/** Attaches the ARM error body as the SDK does for its reads (`details`), when the error has none. */
function withDetails(err: unknown, body: unknown): unknown {
  if (isRestError(err) && err.details === undefined && body !== undefined && typeof body === "object")
    err.details = body;
  return err;
}

/**
 * A resource ID as the by-ID calls take it: their path template is `/{+resourceId}`, so an ID
 * with its leading slash would be sent as `//subscriptions/…`.
 */
function byId(resourceId: string): string {
  return resourceId.replace(/^\/+/, "");
}

/** A GET through the REST client's path call: the JSON body of a 200, or the REST error of anything else. */
async function getJson(
  client: Client,
  pathOrUrl: string,
  query: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const res: PathUncheckedResponse = await client.pathUnchecked(pathOrUrl).get({
    ...(signal ? { abortSignal: signal } : {}),
    queryParameters: query,
    headers: { accept: "application/json" },
  });
  if (res.status !== "200") throw withDetails(createRestError(res), res.body);
  return res.body;
}

/** The replica calls of `subscriptionId`, `apiVersion` on every request. */
export function replicaOps(
  credential: Parameters<typeof createResourceManagement>[0],
  subscriptionId: string,
  apiVersion: string,
  options: ReplicaClientOptions,
): ReplicaOps {
  const { credentialScopes: _classic, $host: _host, ...pipeline } = options.pipeline;
  const context = createResourceManagement(credential, subscriptionId, {
    ...pipeline,
    endpoint: options.endpoint,
    credentials: { scopes: [options.credentialScope] },
  });
  const opts = (signal: AbortSignal | undefined) => (signal ? { abortSignal: signal } : {});
  return {
    get: async (replicaId, signal) =>
      (await getById(context, byId(replicaId), apiVersion, opts(signal))) as ArmResource,
    async list(primaryId, signal) {
      const out: ArmResource[] = [];
      let next: string | undefined = `${primaryId}/replicas`;
      for (let page = 0; next !== undefined && page < MAX_PAGES; page++) {
        // A nextLink carries its own query (the api-version policy sets the version on it).
        const query = page === 0 ? { "api-version": apiVersion } : {};
        const body = (await getJson(context, next, query, signal)) as {
          value?: ArmResource[];
          nextLink?: string;
        };
        out.push(...(body?.value ?? []));
        next = typeof body?.nextLink === "string" && body.nextLink !== "" ? body.nextLink : undefined;
      }
      return out;
    },
    listSkus: async (replicaId, signal) =>
      (await getJson(context, `${replicaId}/skus`, { "api-version": apiVersion }, signal)) as {
        value?: SkuListItem[];
      },
    async beginUpdate(replicaId, body, signal) {
      let patch: PatchResponse | undefined;
      let answered: unknown;
      const poller = updateById(context, byId(replicaId), apiVersion, body, {
        ...opts(signal),
        onResponse: (raw) => {
          if (raw.request.method.toUpperCase() !== "PATCH") return;
          patch = { status: raw.status, headers: raw.headers };
          answered = raw.parsedBody;
        },
      });
      try {
        // Resolves once the PATCH is answered; the poller is never awaited itself (it is
        // thenable: awaiting it would poll the operation to its end).
        await poller.submitted();
      } catch (err) {
        throw withDetails(err, answered);
      }
      return { patch, resumeToken: await poller.serialize() };
    },
  };
}

/**
 * The generic resource list of `subscriptionId` at {@link RESOURCES_API_VERSION} (its pipeline's
 * api-version policy must set that version, not a service's): the IDs of every resource of
 * `resourceType`, all pages.
 */
export function resourceIdLister(
  credential: Parameters<typeof createResourceManagement>[0],
  subscriptionId: string,
  options: ReplicaClientOptions,
): (resourceType: string, signal: AbortSignal | undefined) => Promise<string[]> {
  const { credentialScopes: _classic, $host: _host, ...pipeline } = options.pipeline;
  const context = createResourceManagement(credential, subscriptionId, {
    ...pipeline,
    endpoint: options.endpoint,
    credentials: { scopes: [options.credentialScope] },
    apiVersion: RESOURCES_API_VERSION,
  });
  return async (resourceType, signal) => {
    const out: string[] = [];
    const pages = listResources(context, {
      filter: `resourceType eq '${resourceType}'`,
      ...(signal ? { abortSignal: signal } : {}),
    });
    for await (const r of pages) if (typeof r.id === "string") out.push(r.id);
    return out;
  };
}
