/**
 * The app servers of a pass, through the Kubernetes API: the Deployment's `spec.replicas` or the
 * named HPA's `spec.minReplicas`, read with who owns the field (`field-owner.ts` says whether the
 * operator may write it), and written with server-side apply as the plan says. Failures are
 * returned, not thrown: the app servers never fail a pass.
 */
import type { CapacityPolicy } from "../api/index.js";
import type { AppServerChange, AppServerResult, AppServerView } from "../autoscale/index.js";
import { FIELD_MANAGER } from "../kube/client.js";
import { ConflictError, toKubeError } from "../kube/errors.js";
import { objectKey } from "../kube/watch.js";
import { conflictingManagers, type FieldOwnership, type WorkloadClient } from "../kube/workloads.js";
import { fieldWrite, handedBackFrom, ownedByOtherMessage } from "./field-owner.js";
import type { Logger } from "./logging.js";

/**
 * Applies a planned app-server change (forced when the plan takes the field over). A 409 of the
 * apply (another manager took the field since the read) is `conflict`, naming the managers.
 */
export async function applyAppServer(
  policy: CapacityPolicy,
  change: AppServerChange,
  deps: { workloads: WorkloadClient; log: Logger },
): Promise<AppServerResult> {
  const namespace = policy.metadata.namespace;
  const options = { policy: objectKey(policy), force: change.force === true, share: change.share === true };
  try {
    if (change.kind === "hpa") {
      const r = await deps.workloads.applyHpaMinReplicas(namespace, change.name, change.minReplicas, options);
      return {
        kind: "hpa",
        applied: r.applied,
        changed: r.changed,
        ...(r.clamped ? { clamped: r.clamped } : {}),
      };
    }
    await deps.workloads.applyDeploymentReplicas(namespace, change.name, change.replicas, options);
    return { kind: "deployment", replicas: change.replicas };
  } catch (err) {
    const managers = err instanceof ConflictError ? conflictingManagers(err.message) : [];
    if (managers.length > 0) return { kind: "conflict", managers, message: (err as Error).message };
    return { kind: "failed", message: toKubeError(err, "scale app servers").message };
  }
}

/**
 * What the policy may do with a sized field of `object` (`Deployment hub`, `HorizontalPodAutoscaler
 * hub`): a `take` when it applies with force (first sizing, or handed back), a `conflict` naming
 * the field's other owners when it may not write it (with `share` while the operator does not
 * co-own the field's current value yet).
 */
function ownershipView(
  policy: CapacityPolicy,
  field: string,
  object: string,
  ownership: FieldOwnership,
): Pick<AppServerView, "take" | "conflict" | "fieldConflict" | "share"> {
  const w = fieldWrite(
    ownership,
    FIELD_MANAGER,
    objectKey(policy),
    handedBackFrom(policy.metadata.annotations),
  );
  if (w.write === "none") {
    const managers = [...new Set(w.owners.map((o) => o.manager))];
    return {
      conflict: {
        reason: field === "spec.replicas" ? "ReplicasOwnedByOther" : "HpaFloorOwnedByOther",
        message: ownedByOtherMessage(field, object, w.owners, policy.metadata),
      },
      fieldConflict: { object, field, managers },
      ...(w.share ? { share: true as const } : {}),
    };
  }
  return w.force ? { take: { from: w.from, why: w.why } } : {};
}

/** Reads the app-server Deployment (spec.replicas and who owns it) or the named HPA (minReplicas). */
export async function readAppServer(
  policy: CapacityPolicy,
  appServer: NonNullable<CapacityPolicy["spec"]["appServer"]>,
  deps: { workloads: WorkloadClient; log: Logger },
): Promise<AppServerView> {
  const ns = policy.metadata.namespace;
  const deployment = appServer.deploymentName;
  try {
    const hpaName = appServer.horizontalPodAutoscalerName;
    if (hpaName) {
      const hpa = await deps.workloads.readHpa(ns, hpaName);
      const owned = ownershipView(
        policy,
        "spec.minReplicas",
        `HorizontalPodAutoscaler ${hpaName}`,
        hpa.minReplicasOwnership,
      );
      return { hpaMinReplicas: hpa.minReplicas, ...owned };
    }
    const owned = await deps.workloads.deploymentReplicasOwnership(ns, deployment);
    const replicas = owned.replicas ?? 1;
    const hpas = await deps.workloads.findHpasForDeployment(ns, deployment);
    if (hpas.length > 0) {
      const names = hpas.map((h) => h.name).join(", ");
      return {
        replicas,
        conflict: {
          reason: "HpaOwnsReplicas",
          message: `HorizontalPodAutoscaler ${names} scales Deployment ${deployment}; name it in spec.appServer.horizontalPodAutoscalerName so the operator raises its minReplicas instead`,
        },
      };
    }
    return { replicas, ...ownershipView(policy, "spec.replicas", `Deployment ${deployment}`, owned) };
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
