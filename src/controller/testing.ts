/**
 * Builders for the poll cycle's tests: a policy's target and the instance ARM lists for it. Not
 * part of the public API (not exported from index.ts).
 */
import { type InstanceState, parseResourceId } from "../azure/index.js";
import type { CycleTarget } from "./fetch.js";

/** A Monday morning, ms since the epoch. */
export const T0 = Date.parse("2025-03-03T09:00:00Z");

/** The resource ID of the SignalR instance `name` of the tests' subscription. */
export const resourceIdOf = (name: string) =>
  `/subscriptions/11111111-1111-1111-1111-111111111111/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/${name}`;

/** The target of policy `ns/<name>` on instance `name`: 10 minutes of metrics, and `extra`. */
export function cycleTarget(name: string, extra: Partial<CycleTarget> = {}): CycleTarget {
  const resourceId = resourceIdOf(name);
  return {
    key: `ns/${name}`,
    resourceId,
    ref: parseResourceId(resourceId),
    service: "SignalR",
    lookbackMs: 600_000,
    ...extra,
  };
}

/** A SignalR instance at rest in West Europe: Premium_P1 × 10, Succeeded. */
export function instanceState(resourceId: string): InstanceState {
  return {
    resourceId,
    service: "SignalR",
    name: resourceId.split("/").at(-1) ?? "",
    role: "Primary",
    primaryId: resourceId,
    location: "westeurope",
    sku: "Premium_P1",
    tier: "Premium",
    units: 10,
    provisioningState: "Succeeded",
    terminal: true,
    serving: true,
  };
}
