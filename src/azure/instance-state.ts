/**
 * What ARM says about an instance or one of its geo-replicas, read from a resource body: SKU,
 * units, provisioning state, and whether ARM says it serves clients. Pure.
 *
 * Serving, from the 2024-03-01 specs (SignalR and Web PubSub: `SignalRProperties`,
 * `WebPubSubProperties` and `ReplicaProperties` all carry the two switches):
 * - `resourceStopped` (string, default `"false"`): "When it's true, the data plane of the resource
 *   is shutdown";
 * - `regionEndpointEnabled` (string, default `"Enabled"`): "When it's Disabled, new connections
 *   will not be routed to this endpoint, however existing connections will not be affected";
 * - `provisioningState` `Failed` or `Deleting`: the resource is broken or going away.
 * A resource serves unless one of them says otherwise; the first that does is the reason, in ARM's
 * words (`resourceStopped is "true"`). Values compare case-insensitively; an absent switch is its
 * default.
 */
import type { ServiceKind } from "../capacity/index.js";
import { isReplica, type ResourceRef, resourceKey } from "./resource-id.js";
import { normalizeRegion, UNKNOWN_REGION } from "./scope.js";

/** What ARM says about an instance (a primary) or a replica. */
export interface InstanceState {
  /** Canonical resource ID (a replica's ends in `/replicas/{replicaName}`). */
  resourceId: string;
  service: ServiceKind;
  /** The instance's name (for a replica, the name of the instance it replicates, as `ResourceRef.name`). */
  name: string;
  /** `Primary` for an instance, `Replica` for one of its geo-replicas. */
  role: "Primary" | "Replica";
  /** The replica's name; absent for a primary. */
  replica?: string;
  /** The canonical ID of the instance: `resourceId` itself for a primary, the parent's for a replica. */
  primaryId: string;
  /** Region, normalized (`westeurope`); a replica's is its own. */
  location: string;
  /** SKU name (`Free_F1`, `Standard_S1`, `Premium_P1`, `Premium_P2`). */
  sku: string;
  tier: string | undefined;
  /** Units (`sku.capacity`); 1 when ARM omits it (its documented default). */
  units: number;
  /** `Succeeded`, `Updating`, `Failed`, … (`Unknown` when absent). */
  provisioningState: string;
  /** True when `provisioningState` is terminal (Succeeded, Failed, Canceled). */
  terminal: boolean;
  /**
   * ARM says the resource serves clients: `provisioningState` is not `Failed` or `Deleting`,
   * `resourceStopped` is not `"true"` and `regionEndpointEnabled` is not `"Disabled"`.
   */
  serving: boolean;
  /** Why not, in ARM's words (`resourceStopped is "true"`); absent while serving. */
  notServingReason?: string;
}

/** A resource body as the SDKs (flattened) or the generic ARM calls (`properties`) give it. */
export interface ArmResource {
  id?: string;
  name?: string;
  location?: string;
  sku?: { name: string; tier?: string; capacity?: number };
  /** The typed SDKs flatten `properties.provisioningState`. */
  provisioningState?: string;
  resourceStopped?: string;
  regionEndpointEnabled?: string;
  /** The generic calls keep the body's `properties` as sent. */
  properties?: {
    provisioningState?: string;
    resourceStopped?: string;
    regionEndpointEnabled?: string;
  };
}

/** Provisioning states after which nothing more happens. */
const TERMINAL_STATES = new Set(["succeeded", "failed", "canceled"]);

/** True for `Succeeded`, `Failed`, `Canceled` (any case). */
export function isTerminalState(state: string): boolean {
  return TERMINAL_STATES.has(state.toLowerCase());
}

/** Provisioning states in which the resource does not serve. */
const NOT_SERVING_STATES = new Set(["failed", "deleting"]);

/** Whether ARM says a resource serves, and why not (see the module comment). */
export function servingOf(r: ArmResource): { serving: boolean; notServingReason?: string } {
  const state = r.properties?.provisioningState ?? r.provisioningState;
  const stopped = r.properties?.resourceStopped ?? r.resourceStopped;
  const endpoint = r.properties?.regionEndpointEnabled ?? r.regionEndpointEnabled;
  if (state !== undefined && NOT_SERVING_STATES.has(state.toLowerCase()))
    return { serving: false, notServingReason: `provisioningState is "${state}"` };
  if (stopped !== undefined && stopped.trim().toLowerCase() === "true")
    return { serving: false, notServingReason: `resourceStopped is "${stopped}"` };
  if (endpoint !== undefined && endpoint.trim().toLowerCase() === "disabled")
    return { serving: false, notServingReason: `regionEndpointEnabled is "${endpoint}"` };
  return { serving: true };
}

/**
 * The state of the resource `ref` names from its body. Identity (ID, role, names) comes from
 * `ref`, not from the body's `type`: the official `SignalRReplicas_List` example of 2024-03-01
 * gives its replica the type `Microsoft.SignalRService/SignalR`.
 */
export function toInstance(ref: ResourceRef, r: ArmResource): InstanceState {
  const provisioningState = r.properties?.provisioningState ?? r.provisioningState ?? "Unknown";
  const replica = isReplica(ref);
  return {
    resourceId: ref.id,
    service: ref.service,
    name: replica ? ref.name : (r.name ?? ref.name),
    role: replica ? "Replica" : "Primary",
    ...(replica ? { replica: ref.replica } : {}),
    primaryId: ref.primaryId,
    location: normalizeRegion(r.location ?? UNKNOWN_REGION),
    sku: r.sku?.name ?? "Unknown",
    tier: r.sku?.tier,
    units: r.sku?.capacity ?? 1,
    provisioningState,
    terminal: isTerminalState(provisioningState),
    ...servingOf(r),
  };
}

/**
 * The `properties` of each resource of a raw ARM list page (`{ value: [{ id, properties }] }`), by
 * `resourceKey` of its ID; entries without an ID or object `properties` are left out.
 */
export function rawListProperties(
  bodyAsText: string | null | undefined,
): Map<string, NonNullable<ArmResource["properties"]>> {
  const out = new Map<string, NonNullable<ArmResource["properties"]>>();
  if (!bodyAsText) return out;
  let body: unknown;
  try {
    body = JSON.parse(bodyAsText);
  } catch {
    return out;
  }
  const value = (body as { value?: unknown } | null)?.value;
  if (!Array.isArray(value)) return out;
  for (const item of value) {
    const id = (item as { id?: unknown } | null)?.id;
    const props = typeof id === "string" ? propertiesOf(item) : undefined;
    if (typeof id === "string" && props) out.set(resourceKey(id), props);
  }
  return out;
}

/** The serving-related `properties` of a parsed body, or `undefined` without an object `properties`. */
function propertiesOf(body: unknown): ArmResource["properties"] {
  const props = (body as { properties?: unknown } | null)?.properties;
  if (typeof props !== "object" || props === null) return undefined;
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const p = props as Record<string, unknown>;
  const out: NonNullable<ArmResource["properties"]> = {};
  const state = text(p["provisioningState"]);
  const stopped = text(p["resourceStopped"]);
  const endpoint = text(p["regionEndpointEnabled"]);
  if (state !== undefined) out.provisioningState = state;
  if (stopped !== undefined) out.resourceStopped = stopped;
  if (endpoint !== undefined) out.regionEndpointEnabled = endpoint;
  return out;
}

/**
 * The `properties` of a raw ARM body (`bodyAsText` of the typed SDKs' response, whose models of
 * 2023-02-01 drop `resourceStopped` and `regionEndpointEnabled`), or `undefined` when it is not
 * JSON with an object `properties`.
 */
export function rawProperties(bodyAsText: string | null | undefined): ArmResource["properties"] {
  if (!bodyAsText) return undefined;
  try {
    return propertiesOf(JSON.parse(bodyAsText));
  } catch {
    return undefined;
  }
}
