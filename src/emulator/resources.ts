/**
 * The generic resource lists of `Microsoft.Resources` the emulator serves, for the resources it
 * holds (SignalR and Web PubSub instances and their replicas), as the Microsoft.Resources REST spec
 * of api-version 2025-04-01 (`specification/resources/resource-manager/Microsoft.Resources/stable/
 * 2025-04-01/resources.json`, the version `@azure/arm-resources` 8.0.0 sends) describes them:
 *
 * | operation | path |
 * |---|---|
 * | `Resources_List` | `GET /subscriptions/{s}/resources?$filter=…&$top=…` |
 * | `Resources_ListByResourceGroup` | `GET /subscriptions/{s}/resourcegroups/{g}/resources?$filter=…&$top=…` |
 *
 * Answer: `ResourceListResult` — `{ value: GenericResourceExpanded[], nextLink? }`, each item `{ id,
 * name, type, location, tags, sku: { name, tier, capacity }, kind? }` (`kind` for instances, as
 * their own GET). A replica's `name` is `<instance>/<replica>`: ARM names a nested resource in a
 * generic list by its name segments under the provider. Paged by `$top` (else the ARM page size)
 * with `nextLink` (`$skipToken`).
 *
 * `$filter`: `resourceType eq '<type>'` clauses joined by `or` (types compared case-insensitively,
 * as ARM does), the filter a client lists one resource type with; none lists every resource. Any
 * other filter is refused (400 `InvalidFilterInQueryString`, the emulator's words: it serves the
 * resource-type filter only). api-version 2025-04-01 only (another: 400
 * `InvalidApiVersionParameter`; none: 400 `MissingApiVersionParameter`). Reads lag accepted writes
 * as every ARM read (`EmulatorState.armView`).
 */
import { SKU_TIER } from "../capacity/index.js";
import { resourceName } from "./arm-id.js";
import { armError, type EmulatorRequest, type EmulatorResponse, json, page, queryParam } from "./http.js";
import type { EmulatorState, InstanceView } from "./state.js";

/** The api-versions of the generic resource lists served: the vendored spec's. */
export const RESOURCES_API_VERSIONS: readonly string[] = ["2025-04-01"];

const TYPE_CLAUSE = /^\s*resourceType\s+eq\s+'([^']+)'\s*$/i;

/** The resource types a `$filter` selects (`undefined`: all), or `null` for a filter not served. */
export function resourceTypeFilter(filter: string | undefined): string[] | undefined | null {
  if (filter === undefined || filter.trim() === "") return undefined;
  const types: string[] = [];
  for (const clause of filter.split(/\s+or\s+/i)) {
    const m = TYPE_CLAUSE.exec(clause);
    if (!m) return null;
    types.push((m[1] as string).toLowerCase());
  }
  return types;
}

/** A resource as the generic list shows it (`GenericResourceExpanded`). */
function genericBody(view: InstanceView): Record<string, unknown> {
  const replica = view.ref.replica !== undefined;
  return {
    id: view.resourceId,
    name: replica ? `${view.ref.name}/${resourceName(view.ref)}` : view.ref.name,
    type: view.ref.resourceType,
    location: view.location,
    tags: view.tags,
    sku: { name: view.sku, tier: SKU_TIER[view.sku], capacity: view.units },
    ...(replica ? {} : { kind: view.ref.service }),
  };
}

/** Items per page: `$top` when it is a whole number ≥ 1, else `pageSize`. */
function pageSizeOf(req: EmulatorRequest, pageSize: number): number | EmulatorResponse {
  const top = queryParam(req.query, "$top");
  if (top === undefined) return pageSize;
  const n = Number(top);
  if (!Number.isInteger(n) || n < 1) {
    return armError(400, "InvalidTopInQueryString", `The value '${top}' of $top is not a whole number ≥ 1.`);
  }
  return n;
}

/**
 * `GET /subscriptions/{s}[/resourcegroups/{g}]/resources`: the generic list of the emulator's
 * resources of the subscription (and resource group).
 */
export function handleResourceList(
  req: EmulatorRequest,
  state: EmulatorState,
  scope: { subscriptionId: string; resourceGroup?: string },
  pageSize: number,
): EmulatorResponse {
  if (req.method !== "GET") return armError(405, "MethodNotAllowed", `${req.method} is not supported here.`);
  const apiVersion = queryParam(req.query, "api-version");
  if (!apiVersion) {
    return armError(
      400,
      "MissingApiVersionParameter",
      "The api-version query parameter (?api-version=) is required for all requests.",
    );
  }
  if (!RESOURCES_API_VERSIONS.includes(apiVersion.trim().toLowerCase())) {
    return armError(
      400,
      "InvalidApiVersionParameter",
      `The api-version '${apiVersion}' is invalid. The supported versions are '${RESOURCES_API_VERSIONS.join(",")}'.`,
    );
  }
  const filter = queryParam(req.query, "$filter");
  const types = resourceTypeFilter(filter);
  if (types === null) {
    return armError(
      400,
      "InvalidFilterInQueryString",
      `The $filter '${filter}' is not supported here: only resourceType eq '<type>' [or …].`,
    );
  }
  const size = pageSizeOf(req, pageSize);
  if (typeof size !== "number") return size;
  const items = state
    .armInstances({
      subscriptionId: scope.subscriptionId,
      ...(scope.resourceGroup !== undefined ? { resourceGroup: scope.resourceGroup } : {}),
    })
    .filter((v) => types === undefined || types.includes(v.ref.resourceType.toLowerCase()))
    .map(genericBody);
  return json(200, page(req, items, size));
}
