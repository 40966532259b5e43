/**
 * Azure adapters: ARM instances (SignalR, Web PubSub), Monitor metrics (getBatch) and their
 * history over past days, native autoscale settings, typed errors, throttling and credentials.
 */
export * from "./adapters.js";
export * from "./arm-adapter.js";
export * from "./autoscale-settings.js";
export * from "./batching.js";
export * from "./classify-error.js";
export * from "./connection.js";
export * from "./credentials.js";
export * from "./errors.js";
export * from "./history.js";
export * from "./instances.js";
export * from "./metric-definitions.js";
export * from "./metric-samples.js";
export * from "./metrics.js";
export * from "./query-plan.js";
export * from "./quota.js";
export * from "./resource-id.js";
export * from "./scope.js";
export * from "./throttle.js";
export * from "./token-deadline.js";
