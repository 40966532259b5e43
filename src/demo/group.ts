/**
 * The demo's geo-replica group (`--replicas`): the policy's instance as the primary in the first
 * member's region and a replica in each other member's region, each with its share of the trace's
 * demand, its own app servers and its own CapacityPolicy — the demo's policy with its target
 * rewritten to the member (the shape of docs/geo-replicas.md: one policy per member). Pure.
 *
 * Names, for a policy `chat` on instance `chat-signalr` and members `eastus,westus`:
 * - the primary: the policy's resource ID, region `eastus`; its policy `chat-eastus`;
 * - a replica: `…/SignalR/chat-signalr/replicas/chat-signalr-westus` (the member's name alone when
 *   the two together pass the replica name's 63 characters), region `westus`; its policy
 *   `chat-westus`;
 * - each member's app-server Deployment: the policy's with `-<member>` (`chat-hub-westus`), and
 *   the leading signal's query, when it selects the Deployment's job (`job="chat-hub"`), selects
 *   the member's (`job="chat-hub-westus"`): each member reads its own app servers' negotiate rate.
 */
import type { CapacityPolicy } from "../api/index.js";
import { formatResourceId, parseResourceId } from "../api/resource-id.js";
import type { OutageCause } from "../emulator/state.js";
import { withLeadingPrometheus } from "./prometheus.js";

/** A member of `--replicas`: its name (its region) and its share of the demand, 0–1. */
export interface MemberShare {
  name: string;
  share: number;
}

/** The group the demo runs: its members, and the failover, if any. */
export interface DemoGroupSettings {
  /** The members, the primary first, shares normalized to 1. */
  members: readonly MemberShare[];
  /**
   * `member` stops serving at `startMs` (virtual ms, a whole minute) for `durationMs`; ARM shows
   * it as `cause` says (the emulator's failover action).
   */
  failover?: { member: string; startMs: number; durationMs: number; cause: OutageCause } | undefined;
  /**
   * False: each member's policy runs with the Failover anticipation rule off
   * (`spec.anticipation.failover.enabled: false`, `--no-failover-rule`), for a run to compare.
   */
  failoverRule?: boolean | undefined;
}

/** One member as the demo creates it. */
export interface DemoMember {
  /** The member's name (`--replicas`), its region. */
  name: string;
  role: "Primary" | "Replica";
  /** Canonical resource ID: the policy's for the primary, `…/replicas/<replica>` for a replica. */
  resourceId: string;
  /** Its region (normalized: lower case). */
  location: string;
  /** Its share of the demand, 0–1. */
  share: number;
  /** Its CapacityPolicy: the demo's, named after the member and targeting it. */
  policy: CapacityPolicy;
  /** The name the emulator serves its app servers' metrics under: the instance's or the replica's. */
  appServerName: string;
}

const REPLICA_NAME_MAX = 63;
const POLICY_NAME_MAX = 253;

/** The replica's name for `member` of instance `instance`: `<instance>-<member>`, or `<member>` when too long. */
export function replicaName(instance: string, member: string): string {
  const joined = `${instance}-${member}`;
  return joined.length <= REPLICA_NAME_MAX ? joined : member;
}

/** `policy` with its leading signal's `job="<from>"` selecting `job="<to>"` instead. */
function leadingSignalFor(policy: CapacityPolicy, from: string, to: string): CapacityPolicy {
  return withLeadingPrometheus(policy, (p) => ({
    ...p,
    query: p.query.replaceAll(`job="${from}"`, `job="${to}"`),
  }));
}

/** `policy` with the Failover anticipation rule off (when it has anticipation at all). */
export function withoutFailoverRule(policy: CapacityPolicy): CapacityPolicy {
  const anticipation = policy.spec.anticipation;
  if (!anticipation) return policy;
  return {
    ...policy,
    spec: { ...policy.spec, anticipation: { ...anticipation, failover: { enabled: false } } },
  };
}

/** The policy for one member: named `<policy>-<member>`, its target the member, its app servers its own. */
function memberPolicy(policy: CapacityPolicy, member: string, resourceId: string): CapacityPolicy {
  const name = `${policy.metadata.name}-${member.toLowerCase()}`.slice(0, POLICY_NAME_MAX);
  const app = policy.spec.appServer;
  const spec = {
    ...policy.spec,
    target: { ...policy.spec.target, resourceId },
    ...(app
      ? { appServer: { ...app, deploymentName: `${app.deploymentName}-${member.toLowerCase()}` } }
      : {}),
  };
  const renamed: CapacityPolicy = { ...policy, metadata: { ...policy.metadata, name }, spec };
  return app ? leadingSignalFor(renamed, app.deploymentName, spec.appServer?.deploymentName ?? "") : renamed;
}

/**
 * The members for `policy` (whose target is the primary) and `members` (see the module comment).
 * @throws RangeError when the policy's target is itself a replica, or the policy allows a SKU
 * other than Premium (replicas are a Premium feature).
 */
export function demoMembers(
  policy: CapacityPolicy,
  members: readonly MemberShare[],
  options: { failoverRule?: boolean | undefined } = {},
): DemoMember[] {
  const ref = parseResourceId(policy.spec.target.resourceId);
  if (ref.replica !== undefined)
    throw new RangeError("the policy's target is a replica: --replicas needs the primary instance's ID");
  const other = policy.spec.skus.filter((s) => !s.startsWith("Premium_"));
  if (other.length > 0)
    throw new RangeError(
      `geo-replicas are a Premium feature: the policy allows ${other.join(", ")} (skus must be Premium_P1 and/or Premium_P2)`,
    );
  return members.map((m, i) => {
    const replica = i === 0 ? undefined : replicaName(ref.name, m.name);
    const resourceId = formatResourceId({ ...ref, replica });
    return {
      name: m.name,
      role: i === 0 ? "Primary" : "Replica",
      resourceId,
      location: m.name.toLowerCase(),
      share: m.share,
      policy:
        options.failoverRule === false
          ? withoutFailoverRule(memberPolicy(policy, m.name, resourceId))
          : memberPolicy(policy, m.name, resourceId),
      appServerName: replica ?? ref.name,
    };
  });
}
