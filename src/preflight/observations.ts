/**
 * What a preflight read from Azure, as data: the probe (probe.ts) fills it, the table (table.ts)
 * turns it into rows. Nothing here does I/O.
 */
import type { CapacityPolicy } from "../api/index.js";
import type {
  AllowedUnits,
  AzureApiError,
  BatchQuery,
  InstanceState,
  MetricsResultLike,
  NativeAutoscaleSetting,
  QuotaObservation,
  UnitUsage,
} from "../azure/index.js";
import type { ServiceKind } from "../capacity/skus.js";
import type { Principal } from "./principal.js";

/** What one read gave: its answer, the typed error Azure's answer (or its absence) became, or why it was not sent. */
export type Outcome<T> = { ok: T } | { error: AzureApiError } | { skipped: string };

/** The instance, or geo-replica, a preflight checks. */
export interface PreflightTarget {
  /** Its ARM resource ID, as given (a replica's ends in `/replicas/{replicaName}`). */
  resourceId: string;
  service: ServiceKind;
  /** The policy it was checked for (its SKUs, metrics times and seasonal history), when one was given. */
  policy?: CapacityPolicy;
}

/** A token the credential handed out for one audience. */
export interface TokenObservation {
  /** Which of the operator's clients uses it. */
  audience: "ARM" | "metrics";
  /** The scope asked for, e.g. `https://management.azure.com/.default`. */
  scope: string;
  outcome: Outcome<{ expiresOnMs: number; principal?: Principal }>;
}

/** One `metrics:getBatch` call, exactly as `AzureMetrics.queryBatch` was asked to send it, and its answer. */
export interface MetricsQueryObservation {
  /** The query (metric names, aggregation, interval, span, filter, the adapter operation). */
  query: Omit<BatchQuery, "signal">;
  /** The region whose metrics endpoint it went to. */
  region: string;
  resourceIds: readonly string[];
  /** False when the throttle gate refused it without a request (an earlier answer asked to wait). */
  sent: boolean;
  answer: { results: readonly MetricsResultLike[] } | { error: AzureApiError };
}

/** The durations of the decision that size and judge the metrics read, seconds. */
export interface MetricsTimes {
  windowSeconds: number;
  ingestionDelaySeconds: number;
}

/** Everything a preflight read, in the order it read it. */
export interface PreflightObservations {
  /** When the check ran, ms since the epoch. */
  atMs: number;
  tokens: TokenObservation[];
  /** GET of the instance. */
  instance: Outcome<InstanceState>;
  /**
   * The list the operator's poll cycle reads the target from, how many it holds and the target
   * among them: for an instance, the subscription's instances of the service; for a replica, its
   * instance's replicas (the answer of {@link replicas}, not a second call).
   */
  instanceList: Outcome<{ count: number; found?: InstanceState }>;
  /**
   * The geo-replicas of the target's instance (`Replicas_List`: the target's own for an instance,
   * its parent's for a replica), which the poll cycle reads for failover.
   */
  replicas: Outcome<InstanceState[]>;
  /** `listSkus` of the instance. */
  skus: Outcome<AllowedUnits>;
  /** The subscription's quotas in the instance's region (`Usages_List`). */
  usages: Outcome<UnitUsage[]>;
  /** The metrics queries the operator sends for this instance (the one-minute read, and the history of a seasonal policy). */
  metrics: Outcome<MetricsQueryObservation[]>;
  /** The decision's window and ingestion delay the one-minute read was sized by. */
  times: MetricsTimes;
  /** Native autoscale settings that target the instance (enabled or not). */
  autoscaleSettings: Outcome<NativeAutoscaleSetting[]>;
  /** ARM's remaining-request headers, as last seen per scope. */
  armQuota: QuotaObservation[];
}
