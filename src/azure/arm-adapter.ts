/**
 * What the ARM adapters (instances, autoscale settings) share: the connection, the ARM throttle
 * gate and quota recorder (one of each for both adapters when given), clients whose responses'
 * remaining-quota headers are recorded per scope, and calls through the gate.
 */
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import {
  type AzureConnection,
  armClientOptions,
  type ResolvedConnection,
  resolveConnection,
  responseHeadersPolicy,
} from "./connection.js";
import { type GatedCall, gatedCall } from "./gated-call.js";
import { parseQuotaHeaders, QuotaRecorder } from "./quota.js";
import { type AzureScope, normalizeRegion, UNKNOWN_REGION } from "./scope.js";
import { ThrottleGate } from "./throttle.js";

/** Region of subscription-wide calls (list by subscription), which belong to no one region. */
export const ANY_REGION = "*";

/**
 * Subscription and region an ARM request URL belongs to, for quota records: the region in the
 * path (`…/locations/{region}/…`), else the region learned for the resource it names (a replica's
 * own for a replica's URL, the instance's for the instance's and for its list of replicas).
 */
export function armScopeOfUrl(
  url: string,
  regionOf: (resourceId: string) => string | undefined,
): AzureScope | undefined {
  let path: string;
  try {
    path = decodeURIComponent(new URL(url).pathname);
  } catch {
    return undefined;
  }
  const parts = path.split("/").filter((p) => p !== "");
  const subAt = parts.findIndex((p) => p.toLowerCase() === "subscriptions");
  const subscriptionId = subAt >= 0 ? parts[subAt + 1] : undefined;
  if (subscriptionId === undefined) return undefined;
  const locAt = parts.findIndex((p) => p.toLowerCase() === "locations");
  if (locAt >= 0 && parts[locAt + 1])
    return { subscriptionId, region: normalizeRegion(parts[locAt + 1] as string) };
  if (parts.length >= 8 && parts[subAt + 2]?.toLowerCase() === "resourcegroups") {
    // A replica's URL (…/{name}/replicas/{replicaName}[/…]) is in the replica's own region.
    const replica = parts[subAt + 8]?.toLowerCase() === "replicas" && parts[subAt + 9] !== undefined;
    const id = `/${parts.slice(subAt, subAt + (replica ? 10 : 8)).join("/")}`;
    return { subscriptionId, region: regionOf(id) ?? UNKNOWN_REGION };
  }
  return { subscriptionId, region: ANY_REGION };
}

/** Options of an ARM adapter. */
export interface ArmAdapterOptions {
  /** ARM throttle gate (default: a new one). Share it between the ARM adapters. */
  gate?: ThrottleGate;
  /** Where ARM's remaining-quota headers are recorded (default: a new one). */
  quota?: QuotaRecorder;
}

/** The base of the ARM adapters. */
export abstract class ArmAdapter {
  readonly gate: ThrottleGate;
  readonly quota: QuotaRecorder;
  protected readonly conn: ResolvedConnection;

  constructor(connection: AzureConnection, options: ArmAdapterOptions = {}) {
    this.conn = resolveConnection(connection);
    this.gate = options.gate ?? new ThrottleGate(this.conn.now);
    this.quota = options.quota ?? new QuotaRecorder();
  }

  /**
   * The options of an ARM client of this adapter: its responses' quota headers are recorded for
   * the scope of their URL (`regionOf` the instance, when known; see {@link armScopeOfUrl}), and
   * `extra` policies run on every request.
   */
  protected clientOptions(
    regionOf: (resourceId: string) => string | undefined = () => undefined,
    extra: readonly PipelinePolicy[] = [],
  ) {
    const observe = responseHeadersPolicy((request, headers) => {
      const reading = parseQuotaHeaders(headers);
      const scope = reading ? armScopeOfUrl(request.url, regionOf) : undefined;
      if (reading && scope) this.quota.record(scope, reading, this.conn.now());
    });
    return armClientOptions(this.conn, [observe, ...extra]);
  }

  /** `fn` through the gate of `scope` (see {@link gatedCall}). */
  protected call<T>(operation: string, scope: AzureScope, signal: GatedCall["signal"], fn: () => Promise<T>) {
    return gatedCall({ gate: this.gate, conn: this.conn, operation, scope, signal }, fn);
  }
}
