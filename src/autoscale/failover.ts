/**
 * The replica group of a policy's target as the failover rule reads it (shapes only here).
 */

/** One member of a replica group (the primary or one of its replicas), as the operator last read it. */
export interface ReplicaMember {
  /** Canonical resource ID. */
  resourceId: string;
  role: "Primary" | "Replica";
  /** Normalized region. */
  location: string;
  /** ARM's serving flag; undefined when ARM could not be read this pass. */
  serving: boolean | undefined;
  notServingReason?: string;
  sku: string;
  units: number;
  /** Connections per one-minute bucket, oldest first; a missing bucket is absent, never 0. */
  connections: readonly { startMs: number; value: number }[];
}

/** The replica group of the policy's target: every member, itself included. */
export interface ReplicaGroupObservation {
  /** The policy's target's canonical ID. */
  self: string;
  members: readonly ReplicaMember[];
}
