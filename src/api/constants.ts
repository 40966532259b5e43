/** Names of the CapacityPolicy API (see DESIGN.md, "Names"). */

export const GROUP = "autoscaling.signalr.dev";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}` as const;
export const KIND = "CapacityPolicy";
export const LIST_KIND = "CapacityPolicyList";
export const PLURAL = "capacitypolicies";
export const SINGULAR = "capacitypolicy";
export const SHORT_NAME = "capol";
/** metadata.name of the CustomResourceDefinition. */
export const CRD_NAME = `${PLURAL}.${GROUP}`;
/** Annotation that pauses a policy when set to "true" (same effect as `spec.mode: Paused`). */
export const PAUSE_ANNOTATION = "autoscaling.signalr.dev/paused";

/**
 * The metric signals a policy can scale on, in spec order: each is a field of `spec.metrics` with
 * a `targetPercent` (schema.ts), and each has one file under src/autoscale/signals/.
 */
export const SIGNAL_NAMES = ["serverLoad", "connections", "traffic"] as const;
export type SignalName = (typeof SIGNAL_NAMES)[number];
/** {@link SIGNAL_NAMES} for people: "serverLoad, connections or traffic". */
export const SIGNAL_LIST = `${SIGNAL_NAMES.slice(0, -1).join(", ")} or ${SIGNAL_NAMES.at(-1)}`;

/** Azure Monitor time grains `spec.metrics.window` may take. */
export const TIME_GRAINS = ["1m", "5m", "15m", "30m", "1h", "6h", "12h", "1d"] as const;
export type TimeGrain = (typeof TIME_GRAINS)[number];

/** Condition types a decision states (autoscale/conditions.ts), `Ready` first. */
export const DECISION_CONDITION_TYPES = [
  "Ready",
  "MetricsAvailable",
  "AbleToScale",
  "ScalingActive",
  "ScalingLimited",
  "Fallback",
  "Conflict",
  "Anticipating",
] as const;

/**
 * Condition types the operator writes to `status.conditions`: the decision's, then the kstatus
 * ones derived at write time (controller/status.ts `withReady`).
 */
export const CONDITION_TYPES = [...DECISION_CONDITION_TYPES, "Reconciling", "Stalled"] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

export const CONDITION_STATUSES = ["True", "False", "Unknown"] as const;
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

export const MODES = ["Auto", "Recommend", "Paused"] as const;
export type PolicyMode = (typeof MODES)[number];

export const SELECT_POLICIES = ["Max", "Min", "Disabled"] as const;
export type SelectPolicy = (typeof SELECT_POLICIES)[number];

export const SCALING_POLICY_TYPES = ["Units", "Percent", "Steps"] as const;
export type ScalingPolicyType = (typeof SCALING_POLICY_TYPES)[number];

/**
 * Modes of `spec.anticipation` (as Azure predictive autoscale and AWS predictive scaling name
 * them): Off — reactive only; ForecastOnly — projections and forecast computed and shown in status,
 * never acted on; Enabled — the decision scales out for them.
 */
export const ANTICIPATION_MODES = ["Off", "ForecastOnly", "Enabled"] as const;
export type AnticipationMode = (typeof ANTICIPATION_MODES)[number];

/**
 * What a leading signal's PromQL measures (`spec.anticipation.leadingSignal.measures`):
 * NewConnectionsPerSecond — clients starting a connection per second (the negotiate request rate,
 * e.g. `sum(rate(…_count{http_route="/chat/negotiate"}[1m]))`); NewConnectionsTotal — the same as a
 * counter (the operator takes its per-second increase between polls; a decrease is a counter reset,
 * as Prometheus's `rate()` reads it); Connections — concurrent client connections (a gauge).
 */
export const LEADING_MEASURES = ["NewConnectionsPerSecond", "NewConnectionsTotal", "Connections"] as const;
export type LeadingMeasure = (typeof LEADING_MEASURES)[number];

/** Azure Monitor time grains the seasonal forecast reads history at. */
export const HISTORY_GRAINS = ["5m", "1h"] as const;
export type HistoryGrain = (typeof HISTORY_GRAINS)[number];
/** Seconds in each history grain (Azure Monitor `PT5M`, `PT1H`). */
export const HISTORY_GRAIN_SECONDS: Readonly<Record<HistoryGrain, number>> = { "5m": 300, "1h": 3_600 };
/** Days of history the seasonal forecast may read (Azure Monitor keeps platform metrics 93 days). */
export const MIN_HISTORY_DAYS = 7;
export const MAX_HISTORY_DAYS = 28;
/** Defaults of `spec.anticipation.seasonal`: two weeks (a weekly cycle) at five minutes. */
export const DEFAULT_HISTORY_DAYS = 14;
export const DEFAULT_HISTORY_GRAIN: HistoryGrain = "5m";

/**
 * Longest look-backs of the one-minute metrics read, seconds. A pass reads max(window +
 * ingestion delay, maxSampleAge) of PT1M buckets, so with the longest window (1d) at most about
 * 25 hours: 1,560 points per series, far inside what Azure Monitor serves in one query (no more
 * than 30 days of data per query — "Analyze metrics with Azure Monitor metrics explorer", time
 * range — of the 93 days platform metrics are kept).
 */
export const MAX_INGESTION_DELAY_SECONDS = 3_600;
export const MAX_SAMPLE_AGE_SECONDS = 86_400;
/** Longest `spec.anticipation.scaleDuration`, seconds (2 h); a measured scale duration is read up to it. */
export const MAX_SCALE_DURATION_SECONDS = 7_200;

export const FALLBACK_ACTIONS = ["Hold", "Fixed"] as const;
export type FallbackAction = (typeof FALLBACK_ACTIONS)[number];

/** Bounds of `spec.units`. */
export const MIN_UNITS = 1;
export const MAX_UNITS = 1000;
/** Unit count from which Premium_P2 is available. */
export const P2_MIN_UNITS = 100;
/** Largest unit count Standard_S1 and Premium_P1 reach. */
export const P1_MAX_UNITS = 100;
/** Allowed deviation of the workload shares' sum from 1. */
export const SHARE_SUM_TOLERANCE = 0.01;

/** Bounds of the status history lists. */
export const MAX_RECOMMENDATIONS = 60;
export const MAX_SCALE_EVENTS = 30;
export const MAX_REASONS = 20;
/** Recent scale-ins kept in status (`status.scaleIns`), how long each held: the disruption stage's history. */
export const MAX_SCALE_IN_RECORDS = 10;
/** What a scale-down's disruption rule does (`behavior.scaleDown.disruption.policy`). */
export const DISRUPTION_POLICIES = ["Weigh", "Ignore"] as const;
/**
 * Default `behavior.scaleDown.disruption.maxDisconnectionsPerUnitHour`: clients a scale-in may
 * disconnect per unit-hour it is expected to save (chosen from the measured trade-off: docs/behavior.md).
 */
export const DEFAULT_DISCONNECTIONS_PER_UNIT_HOUR = 1000;
/** The stricter setting the docs give: fewer disconnections for a little more capacity (docs/disruption.md). */
export const STRICT_DISCONNECTIONS_PER_UNIT_HOUR = 250;
/**
 * Default `anticipation.failover.reservePercent`: the share of the clients of the sibling whose
 * loss would send a geo-replica the most that it holds before any loss. Chosen from the measured
 * trade-off (docs/simulate.md, the failover reserve): at 50 a failover at the New York taxi
 * trace's peak refuses no minute (9 without failover awareness, 5 with the loss ask alone) in both
 * slices measured, for 11 % more unit-hours there and 2 % on the Twitter trace; 25 costs 0.5 % but
 * refused 4 minutes where the rule off refused 1 in one of the two (its step lagging the ramp
 * held ARM's one update when the failure came).
 */
export const DEFAULT_FAILOVER_RESERVE_PERCENT = 50;
/** Most unit counts of one SKU's ladder kept in `status.unitLadders.service`. */
export const MAX_LADDER_RUNGS = 1000;
/** Most unit counts kept in `status.unitLadders.excluded`. */
export const MAX_EXCLUDED_COUNTS = 40;

/** How an update that did not take ended (`status.unappliedUpdates.lastOutcome`). */
export const UNAPPLIED_OUTCOMES = ["NotApplied", "Failed", "Canceled", "Refused"] as const;

/**
 * What refused an update durably (`status.unappliedUpdates.refusedBy`): what Azure's error code
 * names (a quota, an Azure Policy deny, a resource lock), or the kind of the refusal (an invalid
 * request, a missing role, a missing resource).
 */
export const REFUSAL_CAUSES = ["Quota", "Policy", "Lock", "Invalid", "Unauthorized", "NotFound"] as const;
export type RefusalCause = (typeof REFUSAL_CAUSES)[number];

/** Where the unit ladders of a decision came from (`status.unitLadders.source`). */
export const LADDER_SOURCES = ["Service", "BuiltIn"] as const;
export type LadderSource = (typeof LADDER_SOURCES)[number];
