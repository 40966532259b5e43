/**
 * Kubernetes adapters: connection and typed clients, CapacityPolicy reads, status writes and
 * watch, app-server Deployments and HPAs, Events, Leases, and typed API errors.
 */
export * from "./backoff.js";
export * from "./client.js";
export * from "./errors.js";
export * from "./events.js";
export * from "./lease.js";
export * from "./policies.js";
export * from "./watch.js";
export * from "./workloads.js";
