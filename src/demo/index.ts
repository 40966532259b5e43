/**
 * `demo`: the operator end to end on one machine — the local control plane (or an existing
 * cluster), the Azure emulator replaying a real traffic trace on a virtual clock, and the operator
 * in process — with a live view, a summary, a CSV timeline and an SVG chart.
 */
export * from "./chart.js";
export * from "./cluster.js";
export * from "./group.js";
export * from "./live.js";
export * from "./report.js";
export * from "./run.js";
export * from "./settings.js";
export * from "./setup.js";
export * from "./timeline.js";
export * from "./trace-window.js";
