/**
 * Azure resource IDs of the two services this project scales: parsed and formatted by the one
 * definition the CRD is generated from (`api/resource-id.ts`, Azure's naming rules), plus the
 * case-insensitive key the adapters compare IDs by. Pure.
 */
export {
  formatResourceId,
  isReplica,
  type PrimaryResourceType,
  parseResourceId,
  parseServiceKind,
  RESOURCE_TYPES,
  type ReplicaResourceType,
  ResourceIdError,
  type ResourceRef,
  type ResourceType,
  replicaResourceType,
  UnknownServiceError,
} from "../api/resource-id.js";

/** A key under which two spellings of the same resource ID compare equal (ARM IDs are case-insensitive). */
export function resourceKey(id: string): string {
  return id.trim().replace(/\/+$/, "").toLowerCase();
}
