/**
 * The api-versions the emulated ARM serves for `Microsoft.SignalRService/SignalR` and
 * `Microsoft.SignalRService/WebPubSub`, each with the SKU contract of its REST spec: which
 * `sku.name` values exist in that version and the range of `sku.capacity` each allows. Pure data
 * and checks.
 *
 * Sources (Azure/azure-rest-api-specs, `specification/signalr/resource-manager/Microsoft.SignalRService/stable/<v>/signalr.json`
 * and `specification/webpubsub/resource-manager/Microsoft.SignalRService/stable/<v>/webpubsub.json`,
 * definition `ResourceSku`):
 *
 * - 2023-02-01 (signalr.json at commit 4984b157, webpubsub.json at 7f3647c7): `name` "Allowed
 *   values: Standard_S1, Free_F1, Premium_P1"; `capacity` "Free: 1; Standard: 1,2,…,10,20,…,100;
 *   Premium: 1,2,…,10,20,…,100".
 * - 2024-03-01 (signalr.json at commit e6eec14c, webpubsub.json at c9388702): `name` "Allowed
 *   values: Standard_S1, Free_F1, Premium_P1, Premium_P2"; `capacity` adds "Premium_P2:
 *   100,200,…,1000". Replicas (`…/replicas`) are in this version too.
 *
 * `sku.tier` is the `SignalRSkuTier` / `WebPubSubSkuTier` enum of both versions: Free, Basic
 * (deprecated, read as Standard), Standard, Premium. The specs also list older stable versions
 * (SignalR 2018-10-01 … 2022-02-01, Web PubSub 2021-10-01) and previews; the emulator serves only
 * the two above, whose SKU contracts it carries, and answers any other version as ARM answers a
 * version a resource type does not have.
 */
import type { ServiceKind, SkuName } from "../capacity/index.js";

/** The capacity range `sku.capacity` may take for one SKU in one api-version (inclusive). */
export interface CapacityRange {
  minimum: number;
  maximum: number;
}

/** What one api-version of a resource type accepts in `sku`. */
export interface SkuContract {
  version: string;
  /** SKU names of the version, with their capacity ranges. */
  skus: Readonly<Partial<Record<SkuName, CapacityRange>>>;
  /** True when the version has replicas (`…/replicas`), whose SKUs `listSkus` lists too. */
  replicas: boolean;
}

const UP_TO_100: CapacityRange = { minimum: 1, maximum: 100 };

const V2023_02_01: SkuContract = {
  version: "2023-02-01",
  skus: { Free_F1: { minimum: 1, maximum: 1 }, Standard_S1: UP_TO_100, Premium_P1: UP_TO_100 },
  replicas: false,
};

const V2024_03_01: SkuContract = {
  version: "2024-03-01",
  skus: { ...V2023_02_01.skus, Premium_P2: { minimum: 100, maximum: 1000 } },
  replicas: true,
};

/** The api-versions served per resource type, oldest first. Both services have the same two. */
export const SERVED_API_VERSIONS: Readonly<Record<ServiceKind, readonly SkuContract[]>> = {
  SignalR: [V2023_02_01, V2024_03_01],
  WebPubSub: [V2023_02_01, V2024_03_01],
};

/** The SKU tiers of the `SignalRSkuTier` / `WebPubSubSkuTier` enums. */
export const SKU_TIERS: readonly string[] = ["Free", "Basic", "Standard", "Premium"];

/** The contract of `version` for `service` (exact, case-insensitive), or `undefined`. */
export function skuContract(service: ServiceKind, version: string): SkuContract | undefined {
  const wanted = version.trim().toLowerCase();
  return SERVED_API_VERSIONS[service].find((c) => c.version === wanted);
}

/** The versions served for `service`, as ARM lists them in its error messages. */
export function servedVersions(service: ServiceKind): string[] {
  return SERVED_API_VERSIONS[service].map((c) => c.version);
}

/** A syntactically valid api-version: `YYYY-MM-DD`, optionally `-preview` (or another suffix). */
const API_VERSION = /^\d{4}-\d{2}-\d{2}(-[A-Za-z0-9]+)?$/;

/** Why an api-version is refused: malformed, or well-formed but not one the type has. */
export type ApiVersionProblem = "malformed" | "unsupported";

/** `undefined` when `version` is served for `service`, else why not. */
export function apiVersionProblem(service: ServiceKind, version: string): ApiVersionProblem | undefined {
  if (skuContract(service, version)) return undefined;
  return API_VERSION.test(version.trim()) ? "unsupported" : "malformed";
}
