/**
 * The scaling decision, pure: (policy, metric samples, current capacity, history, now) →
 * desired capacity, machine-readable reasons, conditions and the next history. No I/O, no clock,
 * no randomness. Built on the capacity model (src/capacity).
 */
export * from "./behavior.js";
export * from "./capacity-timeline.js";
export * from "./conditions.js";
export * from "./decide.js";
export * from "./failover.js";
export * from "./fallback.js";
export * from "./history.js";
export * from "./idle-counters.js";
export * from "./ingestion.js";
export * from "./operation.js";
export * from "./pass.js";
export * from "./reasons.js";
export * from "./recovery.js";
export * from "./replicas.js";
export * from "./samples.js";
export * from "./schedules.js";
export * from "./signals.js";
export * from "./sizes.js";
export * from "./status.js";
export * from "./suspect.js";
export * from "./unapplied.js";
