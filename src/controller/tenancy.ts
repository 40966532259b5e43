/**
 * Tenancy: which Azure scopes the policies of each namespace may target. A setting maps a
 * namespace to subscription / resource-group scopes; a policy outside its namespace's scopes is
 * not acted on (Ready=False, reason OutOfScope). Without the setting, every watched namespace may
 * target anything.
 *
 * File format (YAML or JSON):
 *
 * ```yaml
 * namespaces:
 *   chat:
 *     - subscriptionId: 00000000-0000-0000-0000-000000000000
 *       resourceGroup: chat-prod        # optional: the whole subscription when absent
 *   "*":                                # optional: every other namespace
 *     - subscriptionId: 11111111-1111-1111-1111-111111111111
 * ```
 */
import Type from "typebox";
import { parseYamlFile } from "../api/yaml-file.js";
import { parseResourceId, type ResourceRef } from "../azure/resource-id.js";

export interface AzureScopeRule {
  subscriptionId: string;
  resourceGroup?: string;
}

/** Namespace → allowed scopes; `*` applies to namespaces without an entry. */
export type TenancyMap = ReadonlyMap<string, readonly AzureScopeRule[]>;

const FileSchema = Type.Object(
  {
    namespaces: Type.Record(
      Type.String(),
      Type.Array(
        Type.Object(
          {
            subscriptionId: Type.String({ minLength: 1 }),
            resourceGroup: Type.Optional(Type.String({ minLength: 1 })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);

/** Parses a tenancy file. @throws RangeError naming the first problem. */
export function parseTenancy(text: string, source = "tenancy file"): TenancyMap {
  const doc = parseYamlFile(
    text,
    FileSchema,
    (problem) =>
      new RangeError(
        problem.kind === "yaml"
          ? `${source}: not valid YAML: ${problem.message}`
          : `${source}: expected { namespaces: { <namespace>: [{ subscriptionId, resourceGroup? }] } }: ${problem.path || "/"} ${problem.message ?? ""}`,
      ),
  );
  const map = new Map<string, AzureScopeRule[]>();
  for (const [ns, rules] of Object.entries(
    (doc as { namespaces: Record<string, AzureScopeRule[]> }).namespaces,
  )) {
    map.set(ns, rules);
  }
  return map;
}

/**
 * Whether a policy in `namespace` may target `subscriptionId`/`resourceGroup` (case-insensitive,
 * as ARM is). Returns the reason when not.
 */
export function checkTenancy(
  tenancy: TenancyMap | undefined,
  namespace: string,
  target: { subscriptionId: string; resourceGroup: string },
): { allowed: true } | { allowed: false; message: string } {
  if (!tenancy) return { allowed: true };
  const rules = tenancy.get(namespace) ?? tenancy.get("*");
  if (!rules || rules.length === 0) {
    return { allowed: false, message: `namespace ${namespace} may not target any Azure scope` };
  }
  const eq = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const ok = rules.some(
    (r) =>
      eq(r.subscriptionId, target.subscriptionId) &&
      (r.resourceGroup === undefined || eq(r.resourceGroup, target.resourceGroup)),
  );
  if (ok) return { allowed: true };
  const allowed = rules.map(
    (r) => `/subscriptions/${r.subscriptionId}${r.resourceGroup ? `/resourceGroups/${r.resourceGroup}` : ""}`,
  );
  return {
    allowed: false,
    message: `namespace ${namespace} may only target ${allowed.join(", ")}; the policy targets /subscriptions/${target.subscriptionId}/resourceGroups/${target.resourceGroup}`,
  };
}

/** What {@link checkTarget} found: the parsed target, or why a pass must not act on it. */
export type TargetCheck =
  | { ok: true; ref: ResourceRef }
  | { ok: false; reason: "InvalidSpec" | "OutOfScope"; message: string };

/**
 * Parses a policy's target resource ID and checks it against the tenancy scopes, once per pass:
 * the poll cycle uses the result to leave the target out of its Azure reads, and the pass to
 * report it (InvalidSpec for an ID the parser refuses, OutOfScope outside the namespace's scopes).
 */
export function checkTarget(
  tenancy: TenancyMap | undefined,
  namespace: string,
  resourceId: string,
): TargetCheck {
  let ref: ResourceRef;
  try {
    ref = parseResourceId(resourceId);
  } catch (err) {
    return { ok: false, reason: "InvalidSpec", message: err instanceof Error ? err.message : String(err) };
  }
  const scope = checkTenancy(tenancy, namespace, ref);
  return scope.allowed ? { ok: true, ref } : { ok: false, reason: "OutOfScope", message: scope.message };
}
