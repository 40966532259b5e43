/**
 * Azure resource IDs of the two services this project scales, parsed and formatted. Pure.
 *
 * Shape (ARM compares every segment case-insensitively):
 *
 *     /subscriptions/{subscriptionId}/resourceGroups/{resourceGroup}/providers/Microsoft.SignalRService/{SignalR|WebPubSub}/{name}
 *
 * Name rules follow the services' naming docs: 3–63 characters, letters, digits and hyphens,
 * starting with a letter and ending with a letter or digit. Resource-group names: 1–90 characters
 * of letters, digits, `-`, `_`, `.`, `(`, `)`, not ending with a period.
 */
import type { ServiceKind } from "../capacity/index.js";

/** The ARM provider namespace of both services. */
const PROVIDER_NAMESPACE = "Microsoft.SignalRService";

/** ARM resource type per service, as ARM spells it in resource IDs and in `type`. */
export const RESOURCE_TYPES: Readonly<Record<ServiceKind, ResourceType>> = {
  SignalR: "Microsoft.SignalRService/SignalR",
  WebPubSub: "Microsoft.SignalRService/WebPubSub",
};

export type ResourceType = "Microsoft.SignalRService/SignalR" | "Microsoft.SignalRService/WebPubSub";

/** A parsed resource ID. `id` is the canonical spelling (segment names and type as ARM writes them). */
export interface ResourceRef {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  name: string;
  service: ServiceKind;
  resourceType: ResourceType;
}

/** A resource ID that is not one of a SignalR or Web PubSub instance; the message says what is wrong. */
export class ResourceIdError extends Error {
  override readonly name = "ResourceIdError";
  constructor(
    message: string,
    /** The rejected input. */
    readonly input: string,
  ) {
    super(message);
  }
}

/** A service name other than `SignalR` or `WebPubSub`. */
export class UnknownServiceError extends Error {
  override readonly name = "UnknownServiceError";
  constructor(readonly input: string) {
    super(`unknown service "${input}": expected SignalR or WebPubSub`);
  }
}

const EXPECTED =
  "/subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.SignalRService/<SignalR|WebPubSub>/<name>";

const SUBSCRIPTION = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/;
const RESOURCE_GROUP = /^[-\w.()]{0,89}[-\w()]$/u;
const NAME = /^[A-Za-z][A-Za-z0-9-]{1,61}[A-Za-z0-9]$/;

/**
 * Parses `SignalR` / `WebPubSub` (any case) into a {@link ServiceKind}.
 * @throws UnknownServiceError for anything else.
 */
export function parseServiceKind(value: string): ServiceKind {
  const v = value.trim().toLowerCase();
  if (v === "signalr") return "SignalR";
  if (v === "webpubsub") return "WebPubSub";
  throw new UnknownServiceError(value);
}

/**
 * Parses a SignalR or Web PubSub resource ID.
 * @throws ResourceIdError naming the first segment that is wrong (and the expected shape);
 *   UnknownServiceError is never thrown: an unknown type is reported as a ResourceIdError.
 */
export function parseResourceId(input: string): ResourceRef {
  const fail = (why: string): never => {
    throw new ResourceIdError(`malformed resource ID "${input}": ${why}; expected ${EXPECTED}`, input);
  };
  if (typeof input !== "string" || input.trim() === "") fail("it is empty");
  const trimmed = input.trim().replace(/\/+$/, "");
  if (!trimmed.startsWith("/")) fail("it must start with /subscriptions/");
  const parts = trimmed.slice(1).split("/");
  if (parts.length !== 8) fail(`it has ${parts.length} segments, not 8`);
  const [subs, subscriptionId, rgs, resourceGroup, providers, namespace, type, name] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (subs.toLowerCase() !== "subscriptions") fail(`segment 1 is "${subs}", not "subscriptions"`);
  if (!SUBSCRIPTION.test(subscriptionId)) fail(`subscription "${subscriptionId}" is not valid`);
  if (rgs.toLowerCase() !== "resourcegroups") fail(`segment 3 is "${rgs}", not "resourceGroups"`);
  if (!RESOURCE_GROUP.test(resourceGroup)) fail(`resource group "${resourceGroup}" is not valid`);
  if (providers.toLowerCase() !== "providers") fail(`segment 5 is "${providers}", not "providers"`);
  if (namespace.toLowerCase() !== PROVIDER_NAMESPACE.toLowerCase()) {
    fail(`provider "${namespace}" is not ${PROVIDER_NAMESPACE}`);
  }
  let service: ServiceKind = "SignalR";
  try {
    service = parseServiceKind(type);
  } catch {
    fail(`resource type "${type}" is neither SignalR nor WebPubSub`);
  }
  if (!NAME.test(name)) {
    fail(
      `name "${name}" is not valid (3–63 letters, digits or hyphens, starting with a letter, ending with a letter or digit)`,
    );
  }
  return {
    id: formatResourceId({ subscriptionId, resourceGroup, service, name }),
    subscriptionId,
    resourceGroup,
    name,
    service,
    resourceType: RESOURCE_TYPES[service],
  };
}

/** The canonical resource ID of an instance. Does not validate; see {@link parseResourceId}. */
export function formatResourceId(parts: {
  subscriptionId: string;
  resourceGroup: string;
  service: ServiceKind;
  name: string;
}): string {
  return `/subscriptions/${parts.subscriptionId}/resourceGroups/${parts.resourceGroup}/providers/${RESOURCE_TYPES[parts.service]}/${parts.name}`;
}

/** A key under which two spellings of the same resource ID compare equal (ARM IDs are case-insensitive). */
export function resourceKey(id: string): string {
  return id.trim().replace(/\/+$/, "").toLowerCase();
}
