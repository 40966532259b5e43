/**
 * The preflight a user runs on their own subscription before `mode: Auto`: every read the operator
 * makes for one instance, made once (probe.ts), and the table of what Azure returned (table.ts).
 * Read-only.
 */
export * from "./observations.js";
export * from "./permissions.js";
export * from "./principal.js";
export * from "./probe.js";
export * from "./table.js";
