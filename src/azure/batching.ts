/**
 * Groups resources for `metrics:getBatch`, which takes at most 50 resource IDs per call, all of one
 * subscription, one region and one resource type ("How to migrate from the metrics API to the
 * getBatch API", batching restrictions). A geo-replica is a resource type of its own
 * (`Microsoft.SignalRService/SignalR/replicas`, its own metric namespace) in its own region, so
 * an instance and its replicas never share a batch. Pure.
 */
import type { ServiceKind } from "../capacity/index.js";
import { parseResourceId, RESOURCE_TYPES, type ResourceType } from "./resource-id.js";
import { type AzureScope, normalizeRegion, scopeKey } from "./scope.js";

/** Most resource IDs one getBatch call accepts. */
const MAX_RESOURCES_PER_BATCH = 50;

/** A resource whose metrics are wanted, with the region it lives in (its ARM `location`). */
export interface MetricsTarget {
  resourceId: string;
  region: string;
}

/** One getBatch call: up to 50 resources of one subscription, region and resource type. */
export interface MetricsBatch {
  scope: AzureScope;
  service: ServiceKind;
  /**
   * The resources' type, which is the query's metric namespace (`Microsoft.SignalRService/SignalR`,
   * `…/SignalR/replicas`); {@link planBatches} always sets it, and absent it is the service's
   * instance type.
   */
  resourceType?: ResourceType;
  resourceIds: string[];
}

/** The resource type of a batch's resources: its own, else its service's instance type. */
export function batchResourceType(batch: MetricsBatch): ResourceType {
  return batch.resourceType ?? RESOURCE_TYPES[batch.service];
}

/**
 * Splits `targets` into batches: grouped by subscription, region and resource type, in first-seen
 * order, each group cut into chunks of at most `max` (default 50). Duplicate IDs (any case) are
 * queried once.
 * @throws ResourceIdError for a malformed resource ID.
 */
export function planBatches(
  targets: readonly MetricsTarget[],
  max = MAX_RESOURCES_PER_BATCH,
): MetricsBatch[] {
  if (!(max >= 1)) throw new RangeError(`batch size must be at least 1, got ${max}`);
  const groups = new Map<
    string,
    { scope: AzureScope; service: ServiceKind; resourceType: ResourceType; ids: string[]; seen: Set<string> }
  >();
  for (const t of targets) {
    const ref = parseResourceId(t.resourceId);
    const scope: AzureScope = { subscriptionId: ref.subscriptionId, region: normalizeRegion(t.region) };
    const key = `${scopeKey(scope)}/${ref.resourceType}`;
    let group = groups.get(key);
    if (!group) {
      group = { scope, service: ref.service, resourceType: ref.resourceType, ids: [], seen: new Set() };
      groups.set(key, group);
    }
    const idKey = ref.id.toLowerCase();
    if (group.seen.has(idKey)) continue;
    group.seen.add(idKey);
    group.ids.push(t.resourceId);
  }
  const out: MetricsBatch[] = [];
  for (const g of groups.values()) {
    for (let i = 0; i < g.ids.length; i += max) {
      out.push({
        scope: g.scope,
        service: g.service,
        resourceType: g.resourceType,
        resourceIds: g.ids.slice(i, i + max),
      });
    }
  }
  return out;
}
