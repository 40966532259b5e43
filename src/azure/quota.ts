/**
 * ARM's remaining-quota headers, recorded per scope so that the operator can export them as
 * metrics and see a throttle coming.
 *
 * ARM returns on each response (see "Understand how Azure Resource Manager throttles requests"):
 * - `x-ms-ratelimit-remaining-subscription-reads` / `-writes` / `-deletes` (and the
 *   `-subscription-global-*`, `-tenant-*` variants): requests left in the current bucket;
 * - `x-ms-ratelimit-remaining-resource`: provider-specific buckets,
 *   `"<policy>;<remaining>"` entries separated by commas;
 * - `x-ms-routing-request-id`: `<ARM REGION>:<time>:<guid>`, the ARM region that served the call.
 */
import type { AzureScope } from "./scope.js";
import { scopeKey } from "./scope.js";

const PREFIX = "x-ms-ratelimit-remaining-";

/** Remaining quota read from one response. */
export interface QuotaReading {
  /** `subscription-reads` → 11999 etc.: every numeric `x-ms-ratelimit-remaining-*` header but `resource`. */
  remaining: Record<string, number>;
  /** Provider buckets from `x-ms-ratelimit-remaining-resource`: policy → remaining. */
  resource: Record<string, number>;
  /** ARM region that served the call, from `x-ms-routing-request-id`, lower case. */
  servedBy?: string;
}

/** Parses the quota headers of one response. `headers` yields `[name, value]` pairs. Pure. */
export function parseQuotaHeaders(headers: Iterable<readonly [string, string]>): QuotaReading | undefined {
  const remaining: Record<string, number> = {};
  const resource: Record<string, number> = {};
  let servedBy: string | undefined;
  let seen = false;
  for (const [rawName, value] of headers) {
    const name = rawName.toLowerCase();
    if (name === "x-ms-routing-request-id") {
      const region = value.split(":")[0]?.trim();
      if (region) servedBy = region.toLowerCase();
      continue;
    }
    if (!name.startsWith(PREFIX)) continue;
    const kind = name.slice(PREFIX.length);
    if (kind === "resource") {
      for (const entry of value.split(",")) {
        const [policy, left] = entry.split(";");
        const n = Number(left);
        if (policy?.trim() && left !== undefined && Number.isFinite(n)) {
          resource[policy.trim()] = n;
          seen = true;
        }
      }
      continue;
    }
    const n = Number(value);
    if (value.trim() !== "" && Number.isFinite(n)) {
      remaining[kind] = n;
      seen = true;
    }
  }
  if (!seen) return undefined;
  return { remaining, resource, ...(servedBy !== undefined ? { servedBy } : {}) };
}

/** The latest quota reading of one scope. */
export interface QuotaObservation extends QuotaReading {
  scope: AzureScope;
  observedAt: Date;
}

/** Keeps the latest {@link QuotaReading} per scope. Headers of later responses replace earlier ones per key. */
export class QuotaRecorder {
  readonly #byScope = new Map<string, QuotaObservation>();

  record(scope: AzureScope, reading: QuotaReading, at: Date): void {
    const key = scopeKey(scope);
    const prev = this.#byScope.get(key);
    this.#byScope.set(key, {
      scope,
      observedAt: at,
      remaining: { ...prev?.remaining, ...reading.remaining },
      resource: { ...prev?.resource, ...reading.resource },
      ...((reading.servedBy ?? prev?.servedBy) !== undefined
        ? { servedBy: (reading.servedBy ?? prev?.servedBy) as string }
        : {}),
    });
  }

  /** The latest observation of `scope`. */
  get(scope: AzureScope): QuotaObservation | undefined {
    return this.#byScope.get(scopeKey(scope));
  }

  /** Every scope's latest observation. */
  snapshot(): QuotaObservation[] {
    return [...this.#byScope.values()];
  }
}
