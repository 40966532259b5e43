/**
 * The replica-group flags `demo` and `simulate` share: `--replicas name=share[,…]` (the members of
 * a geo-replica group, the first the primary, with their shares of the demand) and `--failover
 * member@peak` or `member@<time>` with `--failover-duration` and `--failover-cause`. Bad values →
 * UsageError (exit 2), naming the entry.
 */
import { REPLICA_NAME_PATTERN } from "../api/resource-id.js";
import { UsageError } from "./errors.js";
import { durationFlag, timeFlag } from "./flags.js";

/** A member's name: a replica's name by the 2024-03-01 specs (`ReplicaName`), used as its region too. */
const MEMBER_NAME = new RegExp(`^${REPLICA_NAME_PATTERN}$`);

/** Most members one group may have: the primary and Azure's limit of 8 replicas per primary resource. */
export const MAX_MEMBERS = 9;

const MINUTE_MS = 60_000;

/** One member of `--replicas`. */
export interface MemberShare {
  /** Its name, used as its region and for its replica's name: `eastus`. */
  name: string;
  /** Its share of the demand, 0–1 (normalized over the group). */
  share: number;
}

/** A failover of `--failover`: `member` stops serving at `startMs` for `durationMs`. */
export interface FailoverPlan {
  member: string;
  /** ms since the epoch, a whole minute. */
  startMs: number;
  durationMs: number;
}

/**
 * What ARM shows for a member that stops serving, as the emulator's failover action takes it:
 * `stopped` (`resourceStopped: "true"`), `outage` (nothing: only the metrics show it),
 * `endpointDisabled` (`regionEndpointEnabled: "Disabled"`, a drain).
 */
export const FAILOVER_CAUSES = ["stopped", "outage", "endpointDisabled"] as const;
export type FailoverCause = (typeof FAILOVER_CAUSES)[number];

const EXAMPLE = "eastus=0.5,westus=0.3,westeurope=0.2";

/**
 * `--replicas name=share[,…]`: the members (the first is the primary) and their shares of the
 * demand, normalized to 1.
 * @throws UsageError naming the bad entry, a name twice, or fewer than 2 or more than {@link MAX_MEMBERS} members.
 */
export function parseReplicas(text: string): MemberShare[] {
  const entries = text
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  const members: MemberShare[] = [];
  for (const entry of entries) {
    const [name, share, ...rest] = entry.split("=").map((s) => s.trim());
    if (!name || share === undefined || rest.length > 0)
      throw new UsageError(`--replicas: "${entry}" is not name=share (e.g. ${EXAMPLE})`);
    if (!MEMBER_NAME.test(name))
      throw new UsageError(
        `--replicas: "${name}" is not a replica name (3–63 letters, digits and hyphens, starting with a letter, ending with a letter or digit)`,
      );
    const value = Number(share);
    if (share === "" || !Number.isFinite(value) || value <= 0)
      throw new UsageError(`--replicas: the share of ${name} must be a number > 0, got "${share}"`);
    if (members.some((m) => m.name.toLowerCase() === name.toLowerCase()))
      throw new UsageError(`--replicas: ${name} is listed twice`);
    members.push({ name, share: value });
  }
  if (members.length < 2 || members.length > MAX_MEMBERS)
    throw new UsageError(
      `--replicas needs 2 to ${MAX_MEMBERS} members (the primary first, then up to 8 replicas), e.g. ${EXAMPLE}`,
    );
  const total = members.reduce((a, m) => a + m.share, 0);
  return members.map((m) => ({ name: m.name, share: m.share / total }));
}

/**
 * `--failover member@peak` or `member@<time>` with `--failover-duration`: the member that stops
 * serving, when (`peakMs`, the demand's peak minute, or a time within `[startMs, endMs)`, rounded
 * down to its minute) and for how long.
 * @throws UsageError for a malformed value, an unknown member, a time outside the window or a duration under a minute.
 */
export function parseFailover(
  text: string,
  durationText: string,
  members: readonly MemberShare[],
  window: { startMs: number; endMs: number; peakMs: number },
): FailoverPlan {
  const at = text.indexOf("@");
  if (at <= 0) throw new UsageError(`--failover must be member@peak or member@<time>, got "${text}"`);
  const member = text.slice(0, at).trim();
  const when = text.slice(at + 1).trim();
  if (!members.some((m) => m.name === member))
    throw new UsageError(
      `--failover: ${member} is not a member of --replicas (${members.map((m) => m.name).join(", ")})`,
    );
  const durationMs = durationFlag("failover-duration", durationText);
  if (durationMs < MINUTE_MS) throw new UsageError("--failover-duration must be at least 1m");
  const startMs =
    Math.floor((when === "peak" ? window.peakMs : timeFlag("failover", when)) / MINUTE_MS) * MINUTE_MS;
  if (startMs < window.startMs || startMs >= window.endMs)
    throw new UsageError(
      `--failover: ${new Date(startMs).toISOString()} is outside the window ${new Date(window.startMs).toISOString()} → ${new Date(window.endMs).toISOString()}`,
    );
  return { member, startMs, durationMs };
}

/** `--failover-cause`. @throws UsageError for another value. */
export function parseFailoverCause(text: string): FailoverCause {
  if ((FAILOVER_CAUSES as readonly string[]).includes(text)) return text as FailoverCause;
  throw new UsageError(`--failover-cause must be one of ${FAILOVER_CAUSES.join(", ")}, got "${text}"`);
}
