/**
 * The app-server side: a Deployment's replicas (through the scale subresource, `spec.replicas`
 * only, never status), its HorizontalPodAutoscaler's `minReplicas`, and who else writes
 * `spec.replicas` (from `metadata.managedFields`).
 */
import type { V1ManagedFieldsEntry, V1Scale, V2HorizontalPodAutoscaler } from "@kubernetes/client-node";
import { FIELD_MANAGER, type KubeClients, mergePatchOptions } from "./client.js";
import { kubeCall } from "./errors.js";

export interface DeploymentScale {
  readonly namespace: string;
  readonly name: string;
  /** `spec.replicas` of the Deployment (what is asked for, not what runs). */
  readonly replicas: number;
  readonly resourceVersion: string | undefined;
}

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

export interface ReplicasOwnership {
  readonly replicas: number | undefined;
  readonly resourceVersion: string | undefined;
  /** Managers that own `spec.replicas`, newest first. */
  readonly managers: FieldManager[];
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

function scaleInfo(namespace: string, name: string, scale: V1Scale): DeploymentScale {
  return {
    namespace,
    name,
    replicas: scale.spec?.replicas ?? 0,
    resourceVersion: scale.metadata?.resourceVersion,
  };
}

function hpaInfo(namespace: string, hpa: V2HorizontalPodAutoscaler): HpaInfo {
  return {
    namespace,
    name: hpa.metadata?.name ?? "",
    minReplicas: hpa.spec?.minReplicas ?? 1,
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

// ---------------------------------------------------------------------------------------------

export interface WriteOptions {
  /** Only write if the object still has this resourceVersion (ConflictError otherwise). */
  readonly resourceVersion?: string;
}

export class WorkloadClient {
  constructor(
    private readonly clients: KubeClients,
    private readonly fieldManager: string = FIELD_MANAGER,
  ) {}

  /** `spec.replicas` of a Deployment, read through its scale subresource. */
  async readDeploymentScale(namespace: string, name: string): Promise<DeploymentScale> {
    return kubeCall(`read scale of deployments ${namespace}/${name}`, async () => {
      const scale = await this.clients.apps.readNamespacedDeploymentScale({ namespace, name });
      return scaleInfo(namespace, name, scale);
    });
  }

  /** Sets `spec.replicas` through the scale subresource (merge patch). */
  async patchDeploymentReplicas(
    namespace: string,
    name: string,
    replicas: number,
    options: WriteOptions = {},
  ): Promise<DeploymentScale> {
    if (!Number.isInteger(replicas) || replicas < 0) throw new RangeError(`invalid replicas ${replicas}`);
    const body: Record<string, unknown> = { spec: { replicas } };
    if (options.resourceVersion !== undefined)
      body["metadata"] = { resourceVersion: options.resourceVersion };
    return kubeCall(`patch scale of deployments ${namespace}/${name}`, async () => {
      const scale = await this.clients.apps.patchNamespacedDeploymentScale(
        { namespace, name, body, fieldManager: this.fieldManager },
        mergePatchOptions(),
      );
      return scaleInfo(namespace, name, scale);
    });
  }

  /** Who owns the Deployment's `spec.replicas`, newest write first. */
  async deploymentReplicasOwnership(namespace: string, name: string): Promise<ReplicasOwnership> {
    return kubeCall(`read deployments ${namespace}/${name}`, async () => {
      const deployment = await this.clients.apps.readNamespacedDeployment({ namespace, name });
      return {
        replicas: deployment.spec?.replicas,
        resourceVersion: deployment.metadata?.resourceVersion,
        managers: fieldManagers(deployment.metadata?.managedFields),
      };
    });
  }

  async readHpa(namespace: string, name: string): Promise<HpaInfo> {
    return kubeCall(`read horizontalpodautoscalers ${namespace}/${name}`, async () => {
      return hpaInfo(
        namespace,
        await this.clients.autoscaling.readNamespacedHorizontalPodAutoscaler({ namespace, name }),
      );
    });
  }

  /**
   * Sets an HPA's `spec.minReplicas`, clamped to [1, maxReplicas]: maxReplicas is never raised,
   * the result says when the request was clamped. The write is conditional on the version read
   * (a concurrent change of the HPA gives ConflictError).
   */
  async setHpaMinReplicas(
    namespace: string,
    name: string,
    minReplicas: number,
  ): Promise<HpaMinReplicasResult> {
    if (!Number.isInteger(minReplicas)) throw new RangeError(`invalid minReplicas ${minReplicas}`);
    const current = await this.readHpa(namespace, name);
    let applied = minReplicas;
    let clamped: HpaMinReplicasResult["clamped"];
    if (applied > current.maxReplicas) {
      applied = current.maxReplicas;
      clamped = "maxReplicas";
    }
    if (applied < 1) {
      applied = 1;
      clamped = "minimum";
    }
    if (applied === current.minReplicas) {
      return { hpa: current, requested: minReplicas, applied, clamped, changed: false };
    }
    const body: Record<string, unknown> = { spec: { minReplicas: applied } };
    if (current.resourceVersion !== undefined)
      body["metadata"] = { resourceVersion: current.resourceVersion };
    return kubeCall(`patch horizontalpodautoscalers ${namespace}/${name}`, async () => {
      const hpa = await this.clients.autoscaling.patchNamespacedHorizontalPodAutoscaler(
        { namespace, name, body, fieldManager: this.fieldManager },
        mergePatchOptions(),
      );
      return { hpa: hpaInfo(namespace, hpa), requested: minReplicas, applied, clamped, changed: true };
    });
  }

  /** The HPAs in `namespace` whose scaleTargetRef is the Deployment `deploymentName` (normally 0 or 1). */
  async findHpasForDeployment(namespace: string, deploymentName: string): Promise<HpaInfo[]> {
    return kubeCall(`list horizontalpodautoscalers in ${namespace}`, async () => {
      const list = await this.clients.autoscaling.listNamespacedHorizontalPodAutoscaler({ namespace });
      return list.items
        .map((hpa) => hpaInfo(namespace, hpa))
        .filter((hpa) => targetsDeployment(hpa.target, deploymentName))
        .sort((a, b) => a.name.localeCompare(b.name));
    });
  }
}
