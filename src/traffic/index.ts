/**
 * The traffic model, shared by the emulator, `simulate` and `demo`: demand over time from a trace
 * (`traces/*.csv`, read and replayed by `trace`) or a pattern, scaled to a peak (`demand`); what an
 * instance of a SKU and unit count carries of it in a minute — accepted and refused connections,
 * messages, bandwidth, server load (`traffic`); the clients arriving to make up that demand, who
 * all call the application's negotiate endpoint (`arrivals`); where a replica group's clients go
 * when a member stops serving (`failover`); the seeded noise on top (`noise`); and
 * the Azure Monitor metrics of such a minute, per resource type (`monitor-catalog`). Pure: time and
 * noise are arguments, nothing here does I/O or knows about HTTP, Kubernetes or the strategies.
 */
export * from "./arrivals.js";
export * from "./demand.js";
export * from "./disconnections.js";
export * from "./failover.js";
export * from "./monitor-catalog.js";
export * from "./noise.js";
export * from "./trace.js";
export * from "./traffic.js";
