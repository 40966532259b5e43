/**
 * A throttling scope: Azure Resource Manager and Azure Monitor throttle per subscription and
 * region (ARM: a token bucket per subscription, region and principal — reads 250 + 25/s, writes
 * 200 + 10/s). Calls for one scope being throttled must not stop calls for another.
 */

/** Region used for a resource whose location is not known yet. */
export const UNKNOWN_REGION = "unknown";

export interface AzureScope {
  subscriptionId: string;
  /** Azure region name as ARM writes `location` (e.g. `westeurope`); {@link UNKNOWN_REGION} when not known. */
  region: string;
}

/** Normalizes a region name: `West Europe` and `westeurope` are the same region. */
export function normalizeRegion(region: string): string {
  return region.replace(/\s+/g, "").toLowerCase();
}

/** The map key of a scope: `<subscription>/<region>`, lower case. */
export function scopeKey(scope: AzureScope): string {
  return `${scope.subscriptionId.toLowerCase()}/${normalizeRegion(scope.region)}`;
}

/** `subscription/region` for messages. */
export function describeScope(scope: AzureScope): string {
  return `${scope.subscriptionId}/${normalizeRegion(scope.region)}`;
}
