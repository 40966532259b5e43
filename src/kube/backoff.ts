/** Exponential backoff with jitter: the shared helper (src/shared/backoff.ts), for the kube adapters. */
export * from "../shared/backoff.js";
