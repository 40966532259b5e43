/**
 * The unit-quota row of the preflight: the subscription's quota of units in the instance's region
 * (`Usages_List`), against the units the policy may scale the instance to. Pure.
 *
 * The quota's name: `SignalRTotalUnits` ("Get-AzSignalRUsage", Az.SignalR: `SignalRTotalUnits 3
 * 300`); the service's documentation publishes no name for Web PubSub, so for it (and when the
 * documented name is absent) the row reads the one entry whose name ends in `TotalUnits`, and says
 * which. `limit` -1 means no limit (the 2024-03-01 spec, `SignalRUsage.limit`). A scale-out over
 * the quota is refused with 409 `OperationNotAllowed` ("Resolve errors for resource quotas"),
 * which the operator treats as a durable refusal.
 */
import type { UnitUsage } from "../azure/index.js";
import type { ServiceKind } from "../capacity/skus.js";

/** What the row needs: the answer, the instance's units now, and the most the policy may set. */
export interface QuotaRowInput {
  service: ServiceKind;
  usages: readonly UnitUsage[];
  /** The instance's units now (they count in the quota's `currentValue`), units; absent when its read failed. */
  instanceUnits?: number;
  /** The policy's `units.max`, units; absent without a policy. */
  maxUnits?: number;
  region: string | undefined;
}

/** The usage that counts the service's units, or undefined. */
export function unitUsageOf(service: ServiceKind, usages: readonly UnitUsage[]): UnitUsage | undefined {
  const documented = `${service}TotalUnits`.toLowerCase();
  return (
    usages.find((u) => u.name.toLowerCase() === documented) ??
    usages.find((u) => u.name.toLowerCase().endsWith("totalunits"))
  );
}

/** The result and lines of the unit-quota row. */
export function quotaVerdict(input: QuotaRowInput): { result: "OK" | "WARN"; detail: string[] } {
  const where = input.region ? ` in ${input.region}` : "";
  const u = unitUsageOf(input.service, input.usages);
  if (!u) {
    const names = input.usages.map((x) => x.name).join(", ") || "none";
    return {
      result: "WARN",
      detail: [
        `no unit quota in the answer (usages: ${names}): scale-outs may meet a quota check cannot see`,
      ],
    };
  }
  const inUse = `${u.name}${where}: ${u.currentValue} units in use`;
  const head =
    u.limit < 0
      ? `${inUse}, no quota set`
      : u.currentValue > u.limit
        ? `${inUse}, over the quota of ${u.limit}`
        : `${inUse} of a quota of ${u.limit}`;
  if (u.limit < 0) return { result: "OK", detail: [head] };
  const free = Math.max(0, u.limit - u.currentValue);
  const reach = input.instanceUnits !== undefined ? input.instanceUnits + free : undefined;
  const room =
    reach !== undefined
      ? `room for ${free} more: the instance can grow to ${reach} units`
      : `room for ${free} more`;
  if (input.maxUnits === undefined || reach === undefined || reach >= input.maxUnits)
    return { result: "OK", detail: [head, room] };
  return {
    result: "WARN",
    detail: [
      head,
      `${room}, below the policy's units.max ${input.maxUnits}: Azure refuses a scale-out above ${reach} units (409 OperationNotAllowed) and the operator holds its size until the spec changes`,
      "raise the quota (Azure portal: Quotas, or a support request) or lower units.max",
    ],
  };
}
