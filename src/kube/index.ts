/**
 * Kubernetes adapters: connection and typed clients, CapacityPolicy reads, status writes and
 * watch, app-server Deployments and HPAs, Events, Leases, Secret keys, and typed API errors.
 */
export * from "./backoff.js";
export * from "./client.js";
export * from "./errors.js";
export * from "./events.js";
export * from "./lease.js";
export * from "./policies.js";
export * from "./secrets.js";
export * from "./watch.js";
export * from "./workloads.js";
