/**
 * What the client reports of every query, for the operator's metrics: one observation per call
 * to `PrometheusClient.query`, after it ends, whatever the outcome.
 *
 * Meant to be counted as `signalr_autoscaler_prometheus_queries_total{server, outcome}` and timed
 * as `signalr_autoscaler_prometheus_query_duration_seconds{server}`. Label values are bounded:
 * `server` is the redacted base URL of a configured server, `outcome` one of
 * {@link PROMETHEUS_OUTCOMES}.
 */
import { PROMETHEUS_ERROR_KINDS, type PrometheusErrorKind } from "./errors.js";

/**
 * How a query ended: `ok`, the kind of the `PrometheusError` it threw, or `aborted` when the
 * caller's own signal ended it (then the caller's abort reason was rethrown as is).
 */
export type PrometheusOutcome = "ok" | PrometheusErrorKind | "aborted";

/** Every outcome, for pre-creating series. */
export const PROMETHEUS_OUTCOMES: readonly PrometheusOutcome[] = ["ok", ...PROMETHEUS_ERROR_KINDS, "aborted"];

/** One finished query. */
export interface PrometheusQueryObservation {
  /** The server, redacted: origin and path prefix, no userinfo, query or token. */
  server: string;
  outcome: PrometheusOutcome;
  /** From the call to its end, queue time behind the concurrency bound included, seconds. */
  seconds: number;
}

/** Receives every observation; what it throws is ignored (an observer never fails a query). */
export type PrometheusQueryObserver = (observation: PrometheusQueryObservation) => void;
