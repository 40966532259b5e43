/**
 * Finds Azure's own autoscale settings (`Microsoft.Insights/autoscaleSettings`, read with
 * `@azure/arm-monitor`) that target an instance, so that the controller reports the conflict
 * (condition `Conflict`) instead of fighting a second autoscaler.
 *
 * One `listBySubscription` per subscription (all pages); a setting targets an instance when its
 * `targetResourceUri` names it (case-insensitive). Disabled settings are returned too, with
 * `enabled: false`: they do not act, and the controller may ignore them.
 */
import { MonitorClient } from "@azure/arm-monitor";
import { classifyAzureError } from "./classify-error.js";
import {
  type AzureConnection,
  commonClientOptions,
  type ResolvedConnection,
  resolveConnection,
  responseHeadersPolicy,
} from "./connection.js";
import { ThrottledError } from "./errors.js";
import { ANY_REGION, armScopeOfUrl } from "./instances.js";
import { parseQuotaHeaders, QuotaRecorder } from "./quota.js";
import { parseResourceId, resourceKey } from "./resource-id.js";
import type { AzureScope } from "./scope.js";
import { ThrottleGate } from "./throttle.js";

/** A native autoscale setting that targets an instance. */
export interface NativeAutoscaleSetting {
  /** ARM ID of the setting. */
  id: string;
  name: string;
  /** The instance it scales, as the setting spells it. */
  targetResourceUri: string;
  enabled: boolean;
  /** Capacity bounds of its first profile, when present. */
  minimum: number | undefined;
  maximum: number | undefined;
  default: number | undefined;
  /** Profiles it has. */
  profiles: number;
}

/** Options of {@link AzureAutoscaleSettings}. */
export interface AzureAutoscaleSettingsOptions {
  gate?: ThrottleGate;
  quota?: QuotaRecorder;
}

function toNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

export class AzureAutoscaleSettings {
  readonly gate: ThrottleGate;
  readonly quota: QuotaRecorder;
  readonly #conn: ResolvedConnection;
  readonly #clients = new Map<string, MonitorClient>();

  constructor(connection: AzureConnection, options: AzureAutoscaleSettingsOptions = {}) {
    this.#conn = resolveConnection(connection);
    this.gate = options.gate ?? new ThrottleGate(this.#conn.now);
    this.quota = options.quota ?? new QuotaRecorder();
  }

  #client(subscriptionId: string): MonitorClient {
    const key = subscriptionId.toLowerCase();
    let client = this.#clients.get(key);
    if (!client) {
      const observe = responseHeadersPolicy((request, headers) => {
        const reading = parseQuotaHeaders(headers);
        const scope = reading ? armScopeOfUrl(request.url, () => undefined) : undefined;
        if (reading && scope) this.quota.record(scope, reading, this.#conn.now());
      });
      client = new MonitorClient(this.#conn.credential, subscriptionId, {
        ...commonClientOptions(this.#conn, [observe]),
        endpoint: this.#conn.armEndpoint,
        $host: this.#conn.armEndpoint,
        credentialScopes: this.#conn.armScope,
      });
      this.#clients.set(key, client);
    }
    return client;
  }

  /**
   * The autoscale settings targeting each of `resourceIds` (every ID is a key; `[]` when none).
   * @throws ResourceIdError for a malformed ID; a typed Azure error when a subscription's list fails
   *   (a throttled subscription is gated with region `*`).
   */
  async findFor(
    resourceIds: readonly string[],
    options: { signal?: AbortSignal } = {},
  ): Promise<Map<string, NativeAutoscaleSetting[]>> {
    const refs = resourceIds.map((id) => ({ id, ref: parseResourceId(id) }));
    const out = new Map<string, NativeAutoscaleSetting[]>(resourceIds.map((id) => [id, []]));
    const subscriptions = [...new Set(refs.map((r) => r.ref.subscriptionId))];
    for (const subscriptionId of subscriptions) {
      const settings = await this.listBySubscription(subscriptionId, options);
      for (const { id, ref } of refs) {
        if (ref.subscriptionId !== subscriptionId) continue;
        const key = resourceKey(ref.id);
        out.set(
          id,
          settings.filter((s) => resourceKey(s.targetResourceUri) === key),
        );
      }
    }
    return out;
  }

  /** Every autoscale setting of a subscription (all pages). Throttling scope: the subscription, region `*`. */
  async listBySubscription(
    subscriptionId: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<NativeAutoscaleSetting[]> {
    const scope: AzureScope = { subscriptionId, region: ANY_REGION };
    const operation = "autoscaleSettings.listBySubscription";
    this.gate.check(scope, operation);
    try {
      const out: NativeAutoscaleSetting[] = [];
      const pages = this.#client(subscriptionId).autoscaleSettings.listBySubscription(
        options.signal ? { abortSignal: options.signal } : {},
      );
      for await (const s of pages) {
        // `profiles` is required by the schema; tolerate a response without it.
        const profiles = Array.isArray(s.profiles) ? s.profiles : [];
        const first = profiles[0];
        out.push({
          id: s.id ?? "",
          name: s.name ?? s.namePropertiesName ?? "",
          targetResourceUri: s.targetResourceUri ?? "",
          enabled: s.enabled ?? true,
          minimum: toNumber(first?.capacity.minimum),
          maximum: toNumber(first?.capacity.maximum),
          default: toNumber(first?.capacity.default),
          profiles: profiles.length,
        });
      }
      return out;
    } catch (err) {
      const typed = classifyAzureError(err, {
        operation,
        now: this.#conn.now(),
        scope,
        retryAfter: this.#conn.retryAfter,
        callerAborted: options.signal?.aborted ?? false,
      });
      if (!typed) throw err;
      if (typed instanceof ThrottledError) this.gate.block(scope, typed.notBefore);
      throw typed;
    }
  }
}
