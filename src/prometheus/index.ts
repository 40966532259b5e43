/**
 * Prometheus adapter: instant queries over the HTTP API for the app servers' leading signal
 * (one PromQL expression → one finite number), with per-call deadlines, a per-server concurrency
 * bound, a custom CA, bearer tokens, and typed errors that never carry a token or URL userinfo.
 */
export * from "./classify-error.js";
export * from "./client.js";
export * from "./errors.js";
export * from "./observe.js";
export * from "./response.js";
export * from "./server.js";
