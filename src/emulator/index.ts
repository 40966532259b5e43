/**
 * The Azure emulator: HTTPS ARM + metrics:getBatch on loopback, driven by the traffic model on a
 * virtual clock, with fault injection. The pure parts (`traffic`, `trace`, `demand`, `clock`) are
 * also what `simulate` uses without HTTP.
 */
export * from "./arm-id.js";
export * from "./clock.js";
export * from "./control.js";
export * from "./demand.js";
export * from "./emulator.js";
export * from "./faults.js";
export * from "./monitor-catalog.js";
export * from "./noise.js";
export * from "./ratelimit.js";
export * from "./state.js";
export * from "./tls.js";
export * from "./trace.js";
export * from "./traffic.js";
