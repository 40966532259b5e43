/**
 * The app-server side: a Deployment's `spec.replicas` and its HorizontalPodAutoscaler's
 * `spec.minReplicas`, each read with who owns it (`metadata.managedFields`) and written with
 * server-side apply under the operator's field manager — never status, never another field but
 * the annotation naming the policy that sizes the object (`POLICY_ANNOTATION`). Without `force`
 * the API server refuses (409) a write of a field another manager owns.
 */
import type { V1Deployment, V1ManagedFieldsEntry, V2HorizontalPodAutoscaler } from "@kubernetes/client-node";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { FIELD_MANAGER, type KubeClients } from "./client.js";
import { kubeCall } from "./errors.js";

/**
 * The annotation the operator applies, with the field it sizes, on the Deployment or HPA: the
 * policy (`namespace/name`) that sizes it. It keeps the operator's managedFields entry on the
 * object after another manager takes the sized field, so the operator knows it had it.
 */
export const POLICY_ANNOTATION = "autoscaling.signalr.dev/capacity-policy";

export interface ScaleTarget {
  readonly apiVersion: string | undefined;
  readonly kind: string;
  readonly name: string;
}

export interface HpaInfo {
  readonly namespace: string;
  readonly name: string;
  /** `spec.minReplicas` (the API default, 1, when unset). */
  readonly minReplicas: number;
  /** Who owns `spec.minReplicas`. */
  readonly minReplicasOwnership: FieldOwnership;
  readonly maxReplicas: number;
  readonly target: ScaleTarget;
  readonly resourceVersion: string | undefined;
}

export interface HpaMinReplicasResult {
  /** The HPA after the write (or as read, when nothing changed). */
  readonly hpa: HpaInfo;
  readonly requested: number;
  /** What was written: `requested` clamped to [1, maxReplicas]. */
  readonly applied: number;
  /** Set when `applied` differs from `requested`: maxReplicas is never raised. */
  readonly clamped: "maxReplicas" | "minimum" | undefined;
  /** False when minReplicas already had the applied value (no write was made). */
  readonly changed: boolean;
}

/** One manager's claim on a field, from `metadata.managedFields`. */
export interface FieldManager {
  readonly manager: string;
  /** "Update" or "Apply". */
  readonly operation: string | undefined;
  /** "scale" when written through the scale subresource; undefined for the main resource. */
  readonly subresource: string | undefined;
  readonly time: Date | undefined;
}

/** Who owns one sized field (`spec.replicas`, `spec.minReplicas`) of an object. */
export interface FieldOwnership {
  /** Managers that own the field, newest first (the operator's own included). */
  readonly managers: FieldManager[];
  /** The policy (`namespace/name`) the operator's own managedFields entry names, if it has one. */
  readonly appliedFor: string | undefined;
}

export interface ReplicasOwnership extends FieldOwnership {
  readonly replicas: number | undefined;
  readonly resourceVersion: string | undefined;
}

/** How an owned field is written. */
export interface ApplyOptions {
  /** The policy that sizes the object, `namespace/name` (the `POLICY_ANNOTATION` value). */
  readonly policy: string;
  /** Take the field from the managers that own it (server-side apply's `force`). */
  readonly force?: boolean;
}

// ---------------------------------------------------------------------------------------------
// pure helpers

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True when a FieldsV1 set contains `path` (keys such as "f:spec", "f:replicas"). */
export function fieldsV1Has(fieldsV1: unknown, path: readonly string[]): boolean {
  let node: unknown = fieldsV1;
  for (const key of path) {
    if (!isRecord(node) || !(key in node)) return false;
    node = node[key];
  }
  return true;
}

function toDate(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value === "string") {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  return undefined;
}

/** The managers of a field path (default `spec.replicas`), newest first. */
export function fieldManagers(
  managedFields: readonly V1ManagedFieldsEntry[] | undefined,
  path: readonly string[] = ["f:spec", "f:replicas"],
): FieldManager[] {
  const out: FieldManager[] = [];
  for (const entry of managedFields ?? []) {
    if (!fieldsV1Has(entry.fieldsV1, path)) continue;
    out.push({
      manager: entry.manager ?? "",
      operation: entry.operation,
      subresource: entry.subresource === "" ? undefined : entry.subresource,
      time: toDate(entry.time),
    });
  }
  return out.sort((a, b) => (b.time?.getTime() ?? 0) - (a.time?.getTime() ?? 0));
}

/**
 * The policy the operator's managedFields entry names: the `POLICY_ANNOTATION` value when the
 * operator's entry owns that annotation, else undefined.
 */
function appliedFor(
  managedFields: readonly V1ManagedFieldsEntry[] | undefined,
  annotations: Record<string, string> | undefined,
  fieldManager: string,
): string | undefined {
  const path = ["f:metadata", "f:annotations", `f:${POLICY_ANNOTATION}`];
  const ours = (managedFields ?? []).some((e) => e.manager === fieldManager && fieldsV1Has(e.fieldsV1, path));
  return ours ? annotations?.[POLICY_ANNOTATION] : undefined;
}

/**
 * The field managers a server-side apply conflict names, from the API server's message
 * (`Apply failed with 1 conflict: conflict with "kubectl" using apps/v1: .spec.replicas`).
 */
export function conflictingManagers(message: string): string[] {
  return [...new Set([...message.matchAll(/conflict with "([^"]*)"/g)].map((m) => m[1] ?? ""))];
}

/** Per-call options that send a body as a server-side apply patch. */
const applyPatchOptions = () => setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply);

function hpaInfo(namespace: string, hpa: V2HorizontalPodAutoscaler, fieldManager: string): HpaInfo {
  const managedFields = hpa.metadata?.managedFields;
  return {
    namespace,
    name: hpa.metadata?.name ?? "",
    minReplicas: hpa.spec?.minReplicas ?? 1,
    minReplicasOwnership: {
      managers: fieldManagers(managedFields, ["f:spec", "f:minReplicas"]),
      appliedFor: appliedFor(managedFields, hpa.metadata?.annotations, fieldManager),
    },
    maxReplicas: hpa.spec?.maxReplicas ?? 0,
    target: {
      apiVersion: hpa.spec?.scaleTargetRef.apiVersion,
      kind: hpa.spec?.scaleTargetRef.kind ?? "",
      name: hpa.spec?.scaleTargetRef.name ?? "",
    },
    resourceVersion: hpa.metadata?.resourceVersion,
  };
}

/** True when `target` names the Deployment `name` (apps group, any version, or no apiVersion). */
export function targetsDeployment(target: ScaleTarget, name: string): boolean {
  if (target.kind !== "Deployment" || target.name !== name) return false;
  const group = target.apiVersion?.includes("/") === true ? target.apiVersion.split("/")[0] : "";
  return (
    target.apiVersion === undefined || target.apiVersion === "" || group === "apps" || group === "extensions"
  );
}

/** An HPA floor clamped to [1, maxReplicas] (maxReplicas is never raised), and what clamped it. */
function clampFloor(
  requested: number,
  maxReplicas: number,
): { applied: number; clamped: HpaMinReplicasResult["clamped"] } {
  if (requested < 1) return { applied: 1, clamped: "minimum" };
  if (requested > maxReplicas) return { applied: Math.max(1, maxReplicas), clamped: "maxReplicas" };
  return { applied: requested, clamped: undefined };
}

// ---------------------------------------------------------------------------------------------

export class WorkloadClient {
  constructor(
    private readonly clients: KubeClients,
    private readonly fieldManager: string = FIELD_MANAGER,
  ) {}

  /**
   * Sets `spec.replicas` with server-side apply (with the `POLICY_ANNOTATION`, nothing else).
   * @throws ConflictError (409) when another manager owns `spec.replicas` and `force` is unset
   *   (`conflictingManagers` names them); RangeError for a negative or fractional count
   */
  async applyDeploymentReplicas(
    namespace: string,
    name: string,
    replicas: number,
    options: ApplyOptions,
  ): Promise<ReplicasOwnership> {
    if (!Number.isInteger(replicas) || replicas < 0) throw new RangeError(`invalid replicas ${replicas}`);
    const body = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace, annotations: { [POLICY_ANNOTATION]: options.policy } },
      spec: { replicas },
    };
    return kubeCall(`apply replicas of deployments ${namespace}/${name}`, async () => {
      const deployment = await this.clients.apps.patchNamespacedDeployment(
        { namespace, name, body, fieldManager: this.fieldManager, force: options.force === true },
        applyPatchOptions(),
      );
      return this.#replicasOwnership(deployment);
    });
  }

  /** Who owns the Deployment's `spec.replicas`, newest write first. */
  async deploymentReplicasOwnership(namespace: string, name: string): Promise<ReplicasOwnership> {
    return kubeCall(`read deployments ${namespace}/${name}`, async () => {
      return this.#replicasOwnership(await this.clients.apps.readNamespacedDeployment({ namespace, name }));
    });
  }

  #replicasOwnership(deployment: V1Deployment): ReplicasOwnership {
    const managedFields = deployment.metadata?.managedFields;
    return {
      replicas: deployment.spec?.replicas,
      resourceVersion: deployment.metadata?.resourceVersion,
      managers: fieldManagers(managedFields),
      appliedFor: appliedFor(managedFields, deployment.metadata?.annotations, this.fieldManager),
    };
  }

  async readHpa(namespace: string, name: string): Promise<HpaInfo> {
    return kubeCall(`read horizontalpodautoscalers ${namespace}/${name}`, async () => {
      return hpaInfo(
        namespace,
        await this.clients.autoscaling.readNamespacedHorizontalPodAutoscaler({ namespace, name }),
        this.fieldManager,
      );
    });
  }

  /**
   * Sets an HPA's `spec.minReplicas` with server-side apply (with the `POLICY_ANNOTATION`),
   * clamped to [1, maxReplicas]: maxReplicas is never raised, the result says when the request
   * was clamped; no write when minReplicas already has the clamped value.
   * @throws ConflictError (409) when another manager owns `spec.minReplicas` and `force` is unset;
   *   RangeError for a fractional count
   */
  async applyHpaMinReplicas(
    namespace: string,
    name: string,
    minReplicas: number,
    options: ApplyOptions,
  ): Promise<HpaMinReplicasResult> {
    if (!Number.isInteger(minReplicas)) throw new RangeError(`invalid minReplicas ${minReplicas}`);
    const current = await this.readHpa(namespace, name);
    const { applied, clamped } = clampFloor(minReplicas, current.maxReplicas);
    if (applied === current.minReplicas) {
      return { hpa: current, requested: minReplicas, applied, clamped, changed: false };
    }
    const body = {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name, namespace, annotations: { [POLICY_ANNOTATION]: options.policy } },
      spec: { minReplicas: applied },
    };
    return kubeCall(`apply minReplicas of horizontalpodautoscalers ${namespace}/${name}`, async () => {
      const hpa = await this.clients.autoscaling.patchNamespacedHorizontalPodAutoscaler(
        { namespace, name, body, fieldManager: this.fieldManager, force: options.force === true },
        applyPatchOptions(),
      );
      return {
        hpa: hpaInfo(namespace, hpa, this.fieldManager),
        requested: minReplicas,
        applied,
        clamped,
        changed: true,
      };
    });
  }

  /** The HPAs in `namespace` whose scaleTargetRef is the Deployment `deploymentName` (normally 0 or 1). */
  async findHpasForDeployment(namespace: string, deploymentName: string): Promise<HpaInfo[]> {
    return kubeCall(`list horizontalpodautoscalers in ${namespace}`, async () => {
      const list = await this.clients.autoscaling.listNamespacedHorizontalPodAutoscaler({ namespace });
      return list.items
        .map((hpa) => hpaInfo(namespace, hpa, this.fieldManager))
        .filter((hpa) => targetsDeployment(hpa.target, deploymentName))
        .sort((a, b) => a.name.localeCompare(b.name));
    });
  }
}
