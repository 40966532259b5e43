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
import { ANY_REGION, ArmAdapter, type ArmAdapterOptions } from "./arm-adapter.js";
import { parseResourceId, resourceKey } from "./resource-id.js";
import type { AzureScope } from "./scope.js";

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
export type AzureAutoscaleSettingsOptions = ArmAdapterOptions;

function toNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

export class AzureAutoscaleSettings extends ArmAdapter {
  readonly #clients = new Map<string, MonitorClient>();

  #client(subscriptionId: string): MonitorClient {
    const key = subscriptionId.toLowerCase();
    let client = this.#clients.get(key);
    if (!client) {
      client = new MonitorClient(this.conn.credential, subscriptionId, this.clientOptions());
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
    return this.call("autoscaleSettings.listBySubscription", scope, options.signal, async () => {
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
    });
  }
}
