/**
 * Resource IDs as the emulated ARM understands them, for the resource types it serves: instances
 * and their geo-replicas. Pure. (The emulator keeps its own parser rather than the operator's: it
 * stands in for Azure and must not share the client's assumptions.)
 *
 *     /subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.SignalRService/{SignalR|WebPubSub}/{name}
 *     /subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.SignalRService/{SignalR|WebPubSub}/{name}/replicas/{replica}
 *
 * (the second: `Microsoft.SignalRService/SignalR/replicas`, `…/WebPubSub/replicas`, the
 * `Replicas_Get` paths of the 2024-03-01 specs; a replica's name follows the specs' `ReplicaName`
 * pattern, `^[a-zA-Z][a-zA-Z0-9-]{1,61}[a-zA-Z0-9]$`).
 *
 * Segment names, the namespace and the type are case-insensitive, as in ARM; the canonical form
 * spells them as ARM returns them.
 */
import type { ServiceKind } from "../capacity/index.js";

/** ARM resource type of an instance. */
export type InstanceResourceType = "Microsoft.SignalRService/SignalR" | "Microsoft.SignalRService/WebPubSub";
/** ARM resource type of an instance or of a replica (`…/replicas`). */
export type ArmResourceType = InstanceResourceType | `${InstanceResourceType}/replicas`;

/** ARM resource type per service. */
export const ARM_TYPES: Readonly<Record<ServiceKind, InstanceResourceType>> = {
  SignalR: "Microsoft.SignalRService/SignalR",
  WebPubSub: "Microsoft.SignalRService/WebPubSub",
};

/** A parsed resource ID. */
export interface ArmRef {
  /** Canonical spelling. */
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  /** The instance's name (for a replica, its parent's). */
  name: string;
  service: ServiceKind;
  resourceType: ArmResourceType;
  /** A replica's name; absent for an instance. */
  replica?: string;
  /** A replica's parent instance, canonical; absent for an instance. */
  parentId?: string;
}

/** The name ARM gives the resource: a replica's own name, else the instance's. */
export function resourceName(ref: ArmRef): string {
  return ref.replica ?? ref.name;
}

/** An ID that is not a SignalR or Web PubSub resource ID. */
export class ArmIdError extends Error {
  override readonly name = "ArmIdError";
}

const SEGMENT = /^[-\w.()]+$/u;
const NAME = /^[A-Za-z][A-Za-z0-9-]{1,61}[A-Za-z0-9]$/;
/** The segment before a replica's name. */
const REPLICAS = "replicas";

/** `SignalR` / `WebPubSub` (any case) → service; `undefined` for anything else. */
export function serviceOfType(type: string): ServiceKind | undefined {
  const t = type.toLowerCase();
  if (t === "signalr") return "SignalR";
  if (t === "webpubsub") return "WebPubSub";
  return undefined;
}

/**
 * The service of a metric namespace / resource type such as `Microsoft.SignalRService/SignalR`
 * (or `…/SignalR/replicas`: {@link namespaceOf} says which).
 */
export function serviceOfNamespace(namespace: string): ServiceKind | undefined {
  return namespaceOf(namespace)?.service;
}

/**
 * A metric namespace / resource type of the two services: `Microsoft.SignalRService/{SignalR|WebPubSub}`
 * (instances) or `…/{SignalR|WebPubSub}/replicas` (replicas), any case; `undefined` for another.
 */
export function namespaceOf(
  namespace: string,
): { service: ServiceKind; replicas: boolean; resourceType: ArmResourceType } | undefined {
  const [ns, type, sub, ...rest] = namespace.split("/");
  if (ns?.toLowerCase() !== "microsoft.signalrservice" || type === undefined || rest.length > 0)
    return undefined;
  if (sub !== undefined && sub.toLowerCase() !== REPLICAS) return undefined;
  const service = serviceOfType(type);
  if (!service) return undefined;
  const replicas = sub !== undefined;
  return {
    service,
    replicas,
    resourceType: replicas ? `${ARM_TYPES[service]}/${REPLICAS}` : ARM_TYPES[service],
  };
}

/** The canonical ID of an instance. */
function armId(subscriptionId: string, resourceGroup: string, service: ServiceKind, name: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/${ARM_TYPES[service]}/${name}`;
}

/**
 * Parses a SignalR or Web PubSub resource ID, of an instance or of one of its replicas.
 * @throws ArmIdError saying what is wrong and the expected shape.
 */
export function parseArmId(input: string): ArmRef {
  const parts = input.trim().replace(/\/+$/, "").split("/").slice(1);
  const [subs, subscriptionId, rgs, resourceGroup, providers, namespace, type, name, replicas, replica] =
    parts;
  const service = type !== undefined ? serviceOfType(type) : undefined;
  const replicaOk =
    parts.length === 8 ||
    (parts.length === 10 &&
      replicas?.toLowerCase() === REPLICAS &&
      replica !== undefined &&
      NAME.test(replica));
  const ok =
    input.trim().startsWith("/") &&
    replicaOk &&
    subs?.toLowerCase() === "subscriptions" &&
    subscriptionId !== undefined &&
    SEGMENT.test(subscriptionId) &&
    rgs?.toLowerCase() === "resourcegroups" &&
    resourceGroup !== undefined &&
    SEGMENT.test(resourceGroup) &&
    providers?.toLowerCase() === "providers" &&
    namespace?.toLowerCase() === "microsoft.signalrservice" &&
    service !== undefined &&
    name !== undefined &&
    NAME.test(name);
  if (!ok || !subscriptionId || !resourceGroup || !service || !name) {
    throw new ArmIdError(
      `malformed resource ID "${input}": expected /subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.SignalRService/<SignalR|WebPubSub>/<name>[/replicas/<replica>]`,
    );
  }
  const id = armId(subscriptionId, resourceGroup, service, name);
  const instance = { subscriptionId, resourceGroup, name, service };
  if (parts.length === 8) return { id, ...instance, resourceType: ARM_TYPES[service] };
  return {
    id: `${id}/${REPLICAS}/${replica}`,
    ...instance,
    resourceType: `${ARM_TYPES[service]}/${REPLICAS}`,
    replica: replica as string,
    parentId: id,
  };
}

/** Map key of an ID: ARM IDs compare case-insensitively. */
export function armKey(id: string): string {
  return id.trim().replace(/\/+$/, "").toLowerCase();
}

/** A region as ARM keys it: `West Europe` and `westeurope` are one (spaces dropped, lower case). */
export function normalizeLocation(location: string): string {
  return location.replace(/\s+/g, "").toLowerCase();
}
