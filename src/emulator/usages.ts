/**
 * `Usages_List` of the emulator: `GET /subscriptions/{s}/providers/Microsoft.SignalRService/
 * locations/{l}/usages` — the subscription's quotas in a region, one list for SignalR and Web
 * PubSub (both specs of 2024-03-01 serve this path of the one resource provider). Pure.
 *
 * Entries (`SignalRUsage` of the spec: `id`, `currentValue`, `limit`, `name.value`,
 * `name.localizedValue`, `unit`):
 * - `FreeTierInstances`: Free_F1 instances of the subscription in the region, limit 5 (as the
 *   example of `Get-AzSignalRUsage` shows: `FreeTierInstances 2 5`);
 * - `SignalRTotalUnits`: units the SignalR instances hold (`EmulatorState.unitsInUse`), limit the
 *   unit quota in force or -1 without one ("If there is no limit, this value will be -1");
 * - `WebPubSubTotalUnits`: the same for Web PubSub. Microsoft publishes no name for it; the
 *   emulator's is an assumption, which the preflight reads by its `TotalUnits` suffix.
 */
import { SERVICE_KINDS, type ServiceKind } from "../capacity/index.js";
import { type EmulatorResponse, json } from "./http.js";
import type { UnitQuota } from "./refusals.js";

/** What the answer is made from. */
export interface UsagesInput {
  subscriptionId: string;
  /** As the path gives it. */
  location: string;
  /** Free_F1 instances of the subscription in the region. */
  freeInstances: number;
  unitsInUse: (service: ServiceKind) => number;
  quotaFor: (service: ServiceKind) => UnitQuota | undefined;
}

/** The documented limit of Free_F1 instances per subscription and region in the usages list. */
export const FREE_TIER_INSTANCES_LIMIT = 5;

function usage(input: UsagesInput, name: string, currentValue: number, limit: number) {
  return {
    id: `/subscriptions/${input.subscriptionId}/providers/Microsoft.SignalRService/locations/${input.location}/usages/${name}`,
    currentValue,
    limit,
    name: { value: name, localizedValue: name },
    unit: "Count",
  };
}

/** The 200 answer of `Usages_List`. */
export function usagesResponse(input: UsagesInput): EmulatorResponse {
  return json(200, {
    value: [
      usage(input, "FreeTierInstances", input.freeInstances, FREE_TIER_INSTANCES_LIMIT),
      ...SERVICE_KINDS.map((service) =>
        usage(input, `${service}TotalUnits`, input.unitsInUse(service), input.quotaFor(service)?.units ?? -1),
      ),
    ],
  });
}
