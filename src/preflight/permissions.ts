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
 */
import type { ServiceKind } from "../capacity/skus.js";

/** The calls the operator makes, by what they need. */
export type AzureCallKind =
  | "instanceRead"
  | "instanceList"
  | "skus"
  | "usages"
  | "metrics"
  | "autoscaleSettings"
  | "write";

/** One RBAC action, where it must be granted, and which role of docs/install.md grants it. */
export interface Permission {
  /** The RBAC action, as the resource provider operations list it. */
  action: string;
  /** Where the role assignment must reach. */
  scope: "instance" | "subscription";
  /** The role of docs/install.md that holds it. */
  role: string;
  /** What the operator uses it for. */
  usedFor: string;
}

/** The permission each call of the operator needs for `service`. */
export function permissionsFor(service: ServiceKind): Readonly<Record<AzureCallKind, Permission>> {
  const type = `Microsoft.SignalRService/${service}`;
  return {
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
    skus: {
      action: `${type}/skus/read`,
      scope: "instance",
      role: "SignalR Autoscaler",
      usedFor: "read the unit counts the service allows (listSkus)",
    },
    usages: {
      action: "Microsoft.SignalRService/locations/usages/read",
      scope: "subscription",
      role: "Reader on the subscription (check only; the operator does not read it)",
      usedFor: "read the unit quota of the instance's region (check only)",
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
    write: {
      action: `${type}/write`,
      scope: "instance",
      role: "SignalR Autoscaler (or SignalR/Web PubSub Contributor)",
      usedFor: "change the SKU and units (PATCH), then follow the update (operationStatuses/read)",
    },
  };
}
