/**
 * The Azure emulator: HTTPS ARM + metrics:getBatch on loopback, and the app servers' Prometheus
 * `/metrics` (stamped with virtual time), driven by the traffic model (`traffic/`) on a virtual
 * clock, with fault injection.
 */
export * from "./api-versions.js";
export * from "./appservers.js";
export * from "./arm-id.js";
export * from "./clock.js";
export * from "./control.js";
export * from "./emulator.js";
export * from "./exposition.js";
export * from "./faults.js";
export * from "./ratelimit.js";
export * from "./refusals.js";
export * from "./state.js";
export * from "./traffic.js";
