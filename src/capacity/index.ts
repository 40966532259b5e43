/** Pure capacity model: SKUs and unit ladders, the seeds' tier tables, workload sizing, app servers. */
export * from "./model.js";
export * from "./sizing.js";
export * from "./skus.js";
export * from "./tier-tables.js";
export * from "./workload.js";
