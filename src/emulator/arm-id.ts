/**
 * Resource IDs as the emulated ARM understands them, for the two resource types it serves. Pure.
 * (The emulator keeps its own parser rather than the operator's: it stands in for Azure and must
 * not share the client's assumptions.)
 *
 *     /subscriptions/{subscription}/resourceGroups/{group}/providers/Microsoft.SignalRService/{SignalR|WebPubSub}/{name}
 *
 * Segment names, the namespace and the type are case-insensitive, as in ARM; the canonical form
 * spells them as ARM returns them.
 */
import type { ServiceKind } from "../capacity/index.js";

export type ArmResourceType = "Microsoft.SignalRService/SignalR" | "Microsoft.SignalRService/WebPubSub";

/** ARM resource type per service. */
export const ARM_TYPES: Readonly<Record<ServiceKind, ArmResourceType>> = {
  SignalR: "Microsoft.SignalRService/SignalR",
  WebPubSub: "Microsoft.SignalRService/WebPubSub",
};

/** A parsed resource ID. */
export interface ArmRef {
  /** Canonical spelling. */
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  service: ServiceKind;
  resourceType: ArmResourceType;
}

/** An ID that is not a SignalR or Web PubSub resource ID. */
export class ArmIdError extends Error {
  override readonly name = "ArmIdError";
}

const SEGMENT = /^[-\w.()]+$/u;
const NAME = /^[A-Za-z][A-Za-z0-9-]{1,61}[A-Za-z0-9]$/;

/** `SignalR` / `WebPubSub` (any case) → service; `undefined` for anything else. */
export function serviceOfType(type: string): ServiceKind | undefined {
  const t = type.toLowerCase();
  if (t === "signalr") return "SignalR";
  if (t === "webpubsub") return "WebPubSub";
  return undefined;
}

/** The service of a metric namespace / resource type such as `Microsoft.SignalRService/SignalR`. */
export function serviceOfNamespace(namespace: string): ServiceKind | undefined {
  const [ns, type, ...rest] = namespace.split("/");
  if (ns?.toLowerCase() !== "microsoft.signalrservice" || type === undefined || rest.length > 0)
    return undefined;
  return serviceOfType(type);
}

/** The canonical ID of an instance. */
function armId(subscriptionId: string, resourceGroup: string, service: ServiceKind, name: string): string {
  return `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/${ARM_TYPES[service]}/${name}`;
}

/**
 * Parses a SignalR or Web PubSub resource ID.
 * @throws ArmIdError saying what is wrong and the expected shape.
 */
export function parseArmId(input: string): ArmRef {
  const parts = input.trim().replace(/\/+$/, "").split("/").slice(1);
  const [subs, subscriptionId, rgs, resourceGroup, providers, namespace, type, name] = parts;
  const service = type !== undefined ? serviceOfType(type) : undefined;
  const ok =
    input.trim().startsWith("/") &&
    parts.length === 8 &&
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
      `malformed resource ID "${input}": expected /subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.SignalRService/<SignalR|WebPubSub>/<name>`,
    );
  }
  return {
    id: armId(subscriptionId, resourceGroup, service, name),
    subscriptionId,
    resourceGroup,
    name,
    service,
    resourceType: ARM_TYPES[service],
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
