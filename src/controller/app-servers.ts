/**
 * The app servers of a pass, through the Kubernetes API: the Deployment's replicas (scale
 * subresource) or the named HPA's minReplicas, read with whoever else owns them, and changed as
 * the plan says. Failures are returned, not thrown: the app servers never fail a pass.
 */
import type { CapacityPolicy } from "../api/index.js";
import type { AppServerChange, AppServerResult, AppServerView } from "../autoscale/index.js";
import { FIELD_MANAGER } from "../kube/client.js";
import { toKubeError } from "../kube/errors.js";
import type { WorkloadClient } from "../kube/workloads.js";
import type { Logger } from "./logging.js";

/** Applies a planned app-server change. */
export async function applyAppServer(
  namespace: string,
  change: AppServerChange,
  deps: { workloads: WorkloadClient; log: Logger },
): Promise<AppServerResult> {
  try {
    if (change.kind === "hpa") {
      const r = await deps.workloads.setHpaMinReplicas(namespace, change.name, change.minReplicas);
      return {
        kind: "hpa",
        applied: r.applied,
        changed: r.changed,
        ...(r.clamped ? { clamped: r.clamped } : {}),
      };
    }
    await deps.workloads.patchDeploymentReplicas(namespace, change.name, change.replicas);
    return { kind: "deployment", replicas: change.replicas };
  } catch (err) {
    return { kind: "failed", message: toKubeError(err, "scale app servers").message };
  }
}

/** Reads the app-server Deployment (spec.replicas, through the scale subresource) or the named HPA. */
export async function readAppServer(
  policy: CapacityPolicy,
  appServer: NonNullable<CapacityPolicy["spec"]["appServer"]>,
  deps: { workloads: WorkloadClient; log: Logger },
): Promise<AppServerView> {
  const ns = policy.metadata.namespace;
  const deployment = appServer.deploymentName;
  try {
    if (appServer.horizontalPodAutoscalerName) {
      const hpa = await deps.workloads.readHpa(ns, appServer.horizontalPodAutoscalerName);
      return { hpaMinReplicas: hpa.minReplicas };
    }
    const scale = await deps.workloads.readDeploymentScale(ns, deployment);
    const hpas = await deps.workloads.findHpasForDeployment(ns, deployment);
    if (hpas.length > 0) {
      const names = hpas.map((h) => h.name).join(", ");
      return {
        replicas: scale.replicas,
        conflict: {
          reason: "HpaOwnsReplicas",
          message: `HorizontalPodAutoscaler ${names} scales Deployment ${deployment}; name it in spec.appServer.horizontalPodAutoscalerName so the operator raises its minReplicas instead`,
        },
      };
    }
    const ours = policy.status?.current?.replicas;
    if (ours !== undefined && ours !== scale.replicas) {
      const ownership = await deps.workloads.deploymentReplicasOwnership(ns, deployment);
      const newest = ownership.managers[0]?.manager;
      if (newest && newest !== FIELD_MANAGER) {
        return {
          replicas: scale.replicas,
          conflict: {
            reason: "ReplicasChangedByOther",
            message: `${newest} set Deployment ${deployment} to ${scale.replicas} replicas (the operator had set ${ours}); not fighting it`,
          },
        };
      }
    }
    return { replicas: scale.replicas };
  } catch (err) {
    const k = toKubeError(err, "read app servers");
    deps.log.warn(
      { namespace: ns, policy: policy.metadata.name, problem: k.message },
      "app servers unreadable",
    );
    return {
      problem: k.message,
      ...(k.kind === "NotFound"
        ? { conflict: { reason: "AppServerNotFound", message: `${k.message} (Deployment ${deployment})` } }
        : {}),
    };
  }
}
