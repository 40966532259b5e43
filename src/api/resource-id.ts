/**
 * The one definition of a valid resource ID of the two services this project scales — an
 * instance (the primary) or one of its geo-replicas: the CRD's
 * admission rule on `spec.target.resourceId` is generated from these patterns ({@link
 * resourceIdCelRule}), and {@link parseResourceId} — what the operator, the batching of metrics
 * and the commands parse IDs with — checks the same segment patterns (and the fixed segments
 * case-insensitively, as `(?i)` does in the CEL rule), so an ID the API server admits is one the
 * operator parses and the other way round (test/operator/crd.test.ts checks a table of IDs against
 * both). Pure.
 *
 * Shapes (ARM compares the fixed segments, the provider and the types case-insensitively):
 *
 *     /subscriptions/{subscriptionId}/resourceGroups/{resourceGroup}/providers/Microsoft.SignalRService/{SignalR|WebPubSub}/{name}
 *     /subscriptions/{subscriptionId}/resourceGroups/{resourceGroup}/providers/Microsoft.SignalRService/{SignalR|WebPubSub}/{name}/replicas/{replicaName}
 *
 * The second is a replica (`Microsoft.SignalRService/signalR/replicas`, `…/webPubSub/replicas`:
 * the `Replicas_Get` paths of the SignalR and Web PubSub REST specs, stable since 2024-03-01).
 *
 * Segment rules, from "Naming rules and restrictions for Azure resources" (Microsoft Learn,
 * azure-resource-manager/management/resource-name-rules: Microsoft.Resources and
 * Microsoft.SignalRService):
 * - subscription: a GUID (8-4-4-4-12 hexadecimal digits);
 * - resource group (resourcegroups): 1–90 characters of underscores, hyphens, periods,
 *   parentheses, and letters or digits — Unicode letters and decimal digits included, as Azure's
 *   rule is .NET `Char.IsLetterOrDigit` (categories L* and Nd) — not ending in a period;
 * - name (Microsoft.SignalRService signalR and webPubSub): 3–63 characters, ASCII letters, digits
 *   and hyphens, starting with a letter, ending with a letter or digit, no consecutive hyphens;
 * - replica name: the specs' `ReplicaName` parameter (SignalR and Web PubSub 2024-03-01,
 *   `^[a-zA-Z][a-zA-Z0-9-]{1,61}[a-zA-Z0-9]$`): 3–63 ASCII letters, digits and hyphens, starting
 *   with a letter, ending with a letter or digit.
 *
 * The patterns are written for both ECMAScript (with the `u` flag) and RE2 (the engine of CEL in
 * the Kubernetes API server): no look-around, no backreferences, `\p{…}` classes only.
 */
import type { ServiceKind } from "../capacity/skus.js";

/** The ARM provider namespace of both services. */
export const PROVIDER_NAMESPACE = "Microsoft.SignalRService";

/** A subscription ID: a GUID. */
export const SUBSCRIPTION_ID_PATTERN =
  "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";
/** A resource group name: 1–90 of `-`, `_`, `(`, `)`, `.`, Unicode letters and digits; no final period. */
export const RESOURCE_GROUP_PATTERN = "[-_().\\p{L}\\p{Nd}]{0,89}[-_()\\p{L}\\p{Nd}]";
/**
 * The characters of an instance name: a letter, then letters or digits each optionally after one
 * hyphen (so no leading, trailing or consecutive hyphens). The length is {@link NAME_LENGTH}.
 */
export const NAME_PATTERN = "[A-Za-z](-?[A-Za-z0-9])+";
/** Length of an instance name, characters. */
export const NAME_LENGTH = { min: 3, max: 63 } as const;
/** A replica's name (the specs' `ReplicaName` pattern; its length, 3–63, is in the pattern). */
export const REPLICA_NAME_PATTERN = "[A-Za-z][A-Za-z0-9-]{1,61}[A-Za-z0-9]";
/** The segment before a replica's name. */
export const REPLICAS_SEGMENT = "replicas";

/** ARM resource type of an instance per service, as ARM spells it in resource IDs and in `type`. */
export type PrimaryResourceType = "Microsoft.SignalRService/SignalR" | "Microsoft.SignalRService/WebPubSub";
/** ARM resource type of a replica per service (`listSkus` and `type` spell it so). */
export type ReplicaResourceType = `${PrimaryResourceType}/replicas`;
/** The resource type of an instance or of a replica. */
export type ResourceType = PrimaryResourceType | ReplicaResourceType;
export const RESOURCE_TYPES: Readonly<Record<ServiceKind, PrimaryResourceType>> = {
  SignalR: "Microsoft.SignalRService/SignalR",
  WebPubSub: "Microsoft.SignalRService/WebPubSub",
};
/** The resource type of a replica of `service`. */
export function replicaResourceType(service: ServiceKind): ReplicaResourceType {
  return `${RESOURCE_TYPES[service]}/${REPLICAS_SEGMENT}`;
}

/**
 * The regular expression (without flags; match it case-insensitively, and in ECMAScript with the
 * `u` flag) a resource ID of `service` matches, apart from the name's length ({@link
 * NAME_LENGTH_PATTERN}). `[.]` instead of `\.` keeps it readable inside CEL strings.
 */
export function resourceIdRegex(service: ServiceKind): string {
  return `^/subscriptions/${SUBSCRIPTION_ID_PATTERN}/resourceGroups/${RESOURCE_GROUP_PATTERN}/providers/Microsoft[.]SignalRService/${service}/${NAME_PATTERN}(/${REPLICAS_SEGMENT}/${REPLICA_NAME_PATTERN})?$`;
}

/**
 * The instance name's length rule, as a pattern on the whole ID (without flags; match it
 * case-insensitively): the segment after the type, with or without a replica after it.
 */
export const NAME_LENGTH_PATTERN = `/providers/[^/]+/[^/]+/[^/]{${NAME_LENGTH.min},${NAME_LENGTH.max}}(/${REPLICAS_SEGMENT}/[^/]+)?$`;

/**
 * The CEL expression (on `spec`) that admits exactly the IDs {@link parseResourceId} parses, of
 * the type `spec.target.service` names. Raw strings (`r'…'`) keep `\p{L}` as the regex reads it.
 */
export function resourceIdCelRule(): string {
  const matches = (service: ServiceKind) =>
    `self.target.resourceId.matches(r'(?i)${resourceIdRegex(service)}')`;
  return `self.target.resourceId.matches(r'(?i)${NAME_LENGTH_PATTERN}') && (self.target.service == 'SignalR' ? ${matches("SignalR")} : ${matches("WebPubSub")})`;
}

/** A parsed resource ID. `id` is the canonical spelling (segment names and type as ARM writes them). */
export interface ResourceRef {
  id: string;
  subscriptionId: string;
  resourceGroup: string;
  /** The instance's name (for a replica, the name of the instance it replicates). */
  name: string;
  service: ServiceKind;
  resourceType: ResourceType;
  /** The replica's name; absent for an instance (a primary). */
  replica?: string;
  /** The canonical ID of the instance: `id` itself for a primary, the parent's for a replica. */
  primaryId: string;
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
  "/subscriptions/<subscription GUID>/resourceGroups/<group>/providers/Microsoft.SignalRService/<SignalR|WebPubSub>/<name>[/replicas/<replica name>]";

const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`, "u");
const SUBSCRIPTION = whole(SUBSCRIPTION_ID_PATTERN);
const RESOURCE_GROUP = whole(RESOURCE_GROUP_PATTERN);
const NAME = whole(NAME_PATTERN);
const REPLICA_NAME = whole(REPLICA_NAME_PATTERN);

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
 * Parses a SignalR or Web PubSub resource ID, exactly as written (no trimming: the CRD admits no
 * surrounding space or trailing slash either).
 * @throws ResourceIdError naming the first segment that is wrong (and the expected shape);
 *   UnknownServiceError is never thrown: an unknown type is reported as a ResourceIdError.
 */
export function parseResourceId(input: string): ResourceRef {
  const fail = (why: string): never => {
    throw new ResourceIdError(`malformed resource ID "${input}": ${why}; expected ${EXPECTED}`, input);
  };
  if (typeof input !== "string" || input === "") fail("it is empty");
  if (!input.startsWith("/")) fail("it must start with /subscriptions/");
  const parts = input.slice(1).split("/");
  if (parts.length !== 8 && parts.length !== 10) {
    fail(`it has ${parts.length} segments, not 8 (an instance) or 10 (a replica)`);
  }
  const [subs, subscriptionId, rgs, resourceGroup, providers, namespace, type, name, replicas, replica] =
    parts as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string | undefined,
      string | undefined,
    ];
  if (subs.toLowerCase() !== "subscriptions") fail(`segment 1 is "${subs}", not "subscriptions"`);
  if (!SUBSCRIPTION.test(subscriptionId)) fail(`subscription "${subscriptionId}" is not a GUID`);
  if (rgs.toLowerCase() !== "resourcegroups") fail(`segment 3 is "${rgs}", not "resourceGroups"`);
  if (!RESOURCE_GROUP.test(resourceGroup)) {
    fail(
      `resource group "${resourceGroup}" is not valid (1–90 letters, digits, '_', '-', '.', '(' or ')', not ending with '.')`,
    );
  }
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
  if (!NAME.test(name) || name.length < NAME_LENGTH.min || name.length > NAME_LENGTH.max) {
    fail(
      `name "${name}" is not valid (${NAME_LENGTH.min}–${NAME_LENGTH.max} letters, digits or single hyphens, starting with a letter, ending with a letter or digit)`,
    );
  }
  const primaryId = formatResourceId({ subscriptionId, resourceGroup, service, name });
  const primary = { subscriptionId, resourceGroup, name, service, primaryId };
  if (replicas === undefined || replica === undefined) {
    return { id: primaryId, ...primary, resourceType: RESOURCE_TYPES[service] };
  }
  if (replicas.toLowerCase() !== REPLICAS_SEGMENT) fail(`segment 9 is "${replicas}", not "replicas"`);
  if (!REPLICA_NAME.test(replica)) {
    fail(
      `replica name "${replica}" is not valid (3–63 letters, digits or hyphens, starting with a letter, ending with a letter or digit)`,
    );
  }
  return {
    id: formatResourceId({ ...primary, replica }),
    ...primary,
    resourceType: replicaResourceType(service),
    replica,
  };
}

/** True when `ref` names a replica rather than an instance. */
export function isReplica(ref: ResourceRef): ref is ResourceRef & { replica: string } {
  return ref.replica !== undefined;
}

/**
 * The canonical resource ID of an instance, or of its replica `replica`. Does not validate; see
 * {@link parseResourceId}.
 */
export function formatResourceId(parts: {
  subscriptionId: string;
  resourceGroup: string;
  service: ServiceKind;
  name: string;
  replica?: string | undefined;
}): string {
  const primary = `/subscriptions/${parts.subscriptionId}/resourceGroups/${parts.resourceGroup}/providers/${RESOURCE_TYPES[parts.service]}/${parts.name}`;
  return parts.replica === undefined ? primary : `${primary}/${REPLICAS_SEGMENT}/${parts.replica}`;
}
