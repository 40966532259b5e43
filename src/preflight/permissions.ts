/**
 * The Azure RBAC action behind each call the operator makes, and the role that grants it. Pure
 * data.
 *
 * Source: "Azure resource provider operations" (Azure RBAC), sections Microsoft.SignalRService
 * (`SignalR/read`, `SignalR/write`, `SignalR/skus/read` and their WebPubSub equivalents,
 * `locations/usages/read`) and
 * Microsoft.Insights (`Metrics/Read`, `AutoscaleSettings/Read`),
 * https://learn.microsoft.com/azure/role-based-access-control/resource-provider-operations; the
 * roles are those docs/install.md assigns (Monitoring Reader, the custom "SignalR Autoscaler").
 *
 * A geo-replica's calls need the actions of the nested type `replicas`: "Geo-replication in Azure
 * SignalR Service" (Microsoft Learn, azure-signalr/howto-enable-geo-replication, "permissions to
 * operate on replicas") lists `Microsoft.SignalRService/signalr/replicas/read` (get) and
 * `…/replicas/write` (create, update or delete); its SKU list (`ListReplicaSkus`, a GET of
 * `…/replicas/{replicaName}/skus`) is `…/replicas/skus/read` by ARM's rule that a GET on a
 * resource type's path needs `<type>/read`, as `SignalR/skus/read` is for `listSkus`.
 */
import type { ServiceKind } from "../capacity/skus.js";

/** The calls the operator makes, by what they need. */
export type AzureCallKind =
  | "instanceRead"
  | "instanceList"
  | "replicaList"
  | "skus"
  | "usages"
  | "metrics"
  | "autoscaleSettings"
  | "write";

/** One RBAC action, where it must be granted, and which role of docs/install.md grants it. */
export interface Permission {
  /** The RBAC action, as the resource provider operations list it. */
  action: string;
  /**
   * Where the role assignment must reach: the target (an instance or a replica), the subscription,
   * or the instance whose replicas are listed (for a replica target, its parent).
   */
  scope: "instance" | "subscription" | "parent";
  /** The role of docs/install.md that holds it. */
  role: string;
  /** What the operator uses it for. */
  usedFor: string;
}

/**
 * The permission each call of the operator needs for a target of `service`: an instance, or a
 * geo-replica (`role` `Replica`), whose reads, SKU list and write are the `replicas` actions and
 * whose "list" is its instance's list of replicas.
 */
export function permissionsFor(
  service: ServiceKind,
  role: "Primary" | "Replica" = "Primary",
): Readonly<Record<AzureCallKind, Permission>> {
  const type = `Microsoft.SignalRService/${service}`;
  const replicas = `${type}/replicas`;
  const replicaList: Permission = {
    action: `${replicas}/read`,
    scope: role === "Replica" ? "parent" : "instance",
    role: "SignalR Autoscaler (or Reader)",
    usedFor:
      "list the instance's geo-replicas once per poll cycle (each one's region, size and whether it serves, for failover)",
  };
  const common = {
    usages: {
      action: "Microsoft.SignalRService/locations/usages/read",
      scope: "subscription",
      role: "Reader on the subscription (check only; the operator does not read it)",
      usedFor: `read the unit quota of the ${role === "Replica" ? "replica's" : "instance's"} region (check only)`,
    },
    metrics: {
      action: "Microsoft.Insights/metrics/read",
      scope: "instance",
      role: "Monitoring Reader",
      usedFor: "read the metrics (metrics:getBatch)",
    },
    autoscaleSettings: {
      action: "Microsoft.Insights/autoscalesettings/read",
      scope: "subscription",
      role: "Monitoring Reader on the subscription",
      usedFor: "find a native autoscale setting that competes for the instance",
    },
  } as const;
  if (role === "Replica") {
    return {
      ...common,
      instanceRead: {
        action: `${replicas}/read`,
        scope: "instance",
        role: "SignalR Autoscaler (or Reader)",
        usedFor: "read the replica's SKU, units, provisioning state and whether it serves",
      },
      instanceList: replicaList,
      replicaList,
      skus: {
        action: `${replicas}/skus/read`,
        scope: "instance",
        role: "SignalR Autoscaler",
        usedFor: "read the unit counts the service allows the replica (ListReplicaSkus)",
      },
      write: {
        action: `${replicas}/write`,
        scope: "instance",
        role: "SignalR Autoscaler (or SignalR/Web PubSub Contributor)",
        usedFor:
          "change the replica's SKU and units (PATCH of the replica), then follow the update (operationStatuses/read)",
      },
    };
  }
  return {
    ...common,
    instanceRead: {
      action: `${type}/read`,
      scope: "instance",
      role: "SignalR Autoscaler (or Reader)",
      usedFor: "read the instance's SKU, units and provisioning state",
    },
    instanceList: {
      action: `${type}/read`,
      scope: "subscription",
      role: "SignalR Autoscaler (or Reader) on the subscription",
      usedFor: "list the subscription's instances once per poll cycle",
    },
    replicaList,
    skus: {
      action: `${type}/skus/read`,
      scope: "instance",
      role: "SignalR Autoscaler",
      usedFor: "read the unit counts the service allows (listSkus)",
    },
    write: {
      action: `${type}/write`,
      scope: "instance",
      role: "SignalR Autoscaler (or SignalR/Web PubSub Contributor)",
      usedFor: "change the SKU and units (PATCH), then follow the update (operationStatuses/read)",
    },
  };
}
