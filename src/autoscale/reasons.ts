/**
 * Machine-readable reasons of a scaling decision. Every decision carries a list of them: which
 * signal drove it, what limited it, what was ignored and why. The controller turns them into
 * status conditions (`lastReasons`), Kubernetes events and log lines; `recommend` prints them.
 *
 * Codes are CamelCase and stable: tooling may match on them. Messages are for people and may
 * change.
 */
import type { SignalName } from "../api/constants.js";
import type { ScalableSku } from "../capacity/skus.js";

export type { SignalName } from "../api/constants.js";

/** Every reason code a decision can carry. */
const REASON_CODES = [
  // --- signals and metric quality
  /** A signal asks for `units` (it is outside the tolerance band). */
  "SignalDesired",
  /** A signal's ratio to its target is within the tolerance band: it asks for no change. */
  "WithinTolerance",
  /**
   * A signal is at its ceiling (server load ≥ 99 %, or connections at the unit quota): the real
   * demand is above what can be measured, so the signal asks for at least double the units.
   */
  "SignalSaturated",
  /** A signal has no known value in the window (null or missing is unknown, never zero). */
  "SignalUnknown",
  /** A signal has known values for only some of the window's buckets. */
  "SignalIncomplete",
  /** A signal's newest known value is older than `maxSampleAge`: it counts as missing. */
  "SignalStale",
  /** A signal could not be evaluated (e.g. a workload scenario the service does not have). */
  "SignalError",
  /**
   * Server load did not respond to a completed scale-out although connections and traffic did not
   * grow: its scale-out is held (suspect.ts); the other signals still act.
   */
  "SignalSuspect",
  /**
   * ConnectionCount and ConnectionQuotaUtilization × units × 1,000 differ by more than 1.5 % of
   * the quota in some buckets: the higher is used (never the lower for a scale-in); the message
   * says where, by how much and which (connections.ts).
   */
  "ConnectionsDisagree",
  /** Buckets were left out: newer than the ingestion delay, or with an unreadable time. */
  "SamplesIgnored",
  /**
   * Buckets overlap a capacity change (from the update request to its observed completion): read
   * at the smaller of the two sizes, never trusted for scale-in (capacity-timeline.ts).
   */
  "OverlapsScale",
  /**
   * Values the service cannot have measured were left out (not finite, negative, a percentage
   * far above 100, more connections than the quota holds): unknown for their bucket, not demand.
   */
  "SampleInvalid",
  /** Values just above their ceiling (100 %, the connection quota) were read as saturated. */
  "SampleAtCeiling",
  /**
   * Traffic counters (MessageCount, InboundTraffic, OutboundTraffic) were answered without a data
   * point for some minutes of the window while server load or connections were reported: read as
   * 0 (idle), not unknown.
   */
  "CounterIdleZero",
  /**
   * Buckets were seen still filling later than `spec.metrics.ingestionDelay`: decisions wait for
   * the observed delay instead (`status.ingestion.observedDelaySeconds`).
   */
  "IngestionDelayObserved",
  /** No signal has a usable value this pass. */
  "MetricsUnavailable",
  /**
   * One of the pass's metrics queries failed while the others answered (one query per
   * aggregation): the fields it would have filled are unknown this pass, never zero.
   */
  "MetricsPartial",
  /** Fetching metrics failed this pass (no data, throttled, auth, API error, …). */
  "FetchFailed",
  /**
   * Anticipation (spec.anticipation) asks for more than the measured need: the rule, its numbers,
   * and whether the decision acted on it (Enabled) or only shows it (ForecastOnly).
   */
  "Anticipated",
  // --- sizing
  /**
   * The unit ladders differ from the documented ones: read from ARM `listSkus`, or with counts
   * the service did not apply left out (ladders.ts).
   */
  "UnitLadder",
  /**
   * The need was rounded to a unit count of the ladder: up to the next, or, for a need the
   * seasonal forecast raised, to the nearer of the two around it by ratio (recommendation.ts).
   */
  "LadderSnapped",
  /** The decision changes the SKU (e.g. Premium_P1 → Premium_P2 above 100 units). */
  "SkuChange",
  /** More than 100 units are needed but the policy does not allow Premium_P2. */
  "P2NotAllowed",
  /** The SKU the need calls for is not one online step from the current SKU (S1 ↔ P2). */
  "SkuPath",
  /** Even the largest allowed size does not cover the need. */
  "LadderTop",
  // --- behavior
  /** Scale-up stabilization: the lowest recommendation of the scale-up window applies. */
  "StabilizedUp",
  /** Scale-down stabilization: the highest recommendation of the scale-down window applies. */
  "StabilizedDown",
  /**
   * Right after a scale-out the quota was full at the smaller size and no bucket at the current
   * size is read yet: the size is held until one is (stages/unmeasured.ts).
   */
  "AwaitingNewSize",
  /** A scale-up rate policy capped the change. */
  "RateLimitedUp",
  /** A scale-down rate policy capped the change. */
  "RateLimitedDown",
  /** scaleUp.selectPolicy is Disabled. */
  "ScaleUpDisabled",
  /** scaleDown.selectPolicy is Disabled. */
  "ScaleDownDisabled",
  /** Within the settle window after a scale (or its samples still fill the window): no scale-in. */
  "Settling",
  /** Scale-in windows are set and none is open now. */
  "OutsideScaleInWindow",
  /** A signal is unknown, incomplete, stale or failing: no scale-in. */
  "MetricsIncomplete",
  /**
   * The instance itself is not serving (ARM says so, or its connections vanished while its replica
   * group's other members' rose: failover.ts): no scale-in on the connections that left with it.
   */
  "NotServing",
  /**
   * A scale-in was held for the clients it would disconnect: the smaller size is not expected to
   * hold long enough to repay them at `behavior.scaleDown.disruption.maxDisconnectionsPerUnitHour`
   * (stages/disruption.ts). `clients` says about how many.
   */
  "DisruptionHeld",
  /**
   * A scale-in was weighed and made: the smaller size is expected to hold long enough to repay the
   * clients it disconnects (`clients`).
   */
  "DisruptionRepaid",
  /** Clamped to `units.max` (snapped down to the ladder). */
  "MaxUnits",
  /** Raised to `units.min` (snapped up to the ladder). */
  "MinUnits",
  /** Raised to the `minUnits` of an active schedule. */
  "ScheduleFloor",
  /** A schedule or scale-in window has an unreadable cron expression or time zone; it is ignored. */
  "ScheduleInvalid",
  /** No unit count of the allowed SKUs lies within `units.min..units.max`; `units.max` wins. */
  "NoRungInRange",
  // --- failures
  /** Consecutive failures reached `fallback.failureThreshold`: the fallback action applies. */
  "Fallback",
  /** This pass failed but the threshold is not reached: capacity is held. */
  "FailureCounted",
  // --- modes and state
  /** `spec.mode: Paused` or the pause annotation: nothing is applied. */
  "Paused",
  /** `spec.mode: Recommend`: the decision is recorded, never applied. */
  "RecommendOnly",
  /** Another autoscaler or owner fights over the same capacity: nothing is applied. */
  "Conflict",
  /** The current SKU is not one the operator scales (Free_F1) or no allowed SKU is reachable. */
  "UnsupportedSku",
  /** The decision equals the current capacity. */
  "NoChange",
  /** The decision scales the instance out (more units or a higher tier). */
  "ScaleOut",
  /** The decision scales the instance in. */
  "ScaleIn",
  // --- app servers
  /** App-server replicas follow the tier table's count for the chosen units. */
  "ReplicasFromTable",
  /** App-server replicas follow measured connections / connectionsPerReplica. */
  "ReplicasFromConnections",
  /** App-server replicas follow measured inbound events/s / eventsPerSecondPerReplica. */
  "ReplicasFromEvents",
  /** App-server replicas are kept: their input is unknown or nothing sizes them. */
  "ReplicasHeld",
  /** App-server replicas were clamped to `appServer.replicas.min|max`. */
  "ReplicasClamped",
  /** With a HorizontalPodAutoscaler named, the count becomes its minReplicas floor. */
  "HpaFloor",
] as const;

/** A reason code (see {@link REASON_CODES}). */
export type ReasonCode = (typeof REASON_CODES)[number];

/**
 * The codes that can limit a decision (`Decision.limitedBy`, the ScalingLimited condition's
 * reason): each one moved the result away from what the metrics asked for.
 */
export type LimitCode = Extract<
  ReasonCode,
  | "P2NotAllowed"
  | "SkuPath"
  | "LadderTop"
  | "StabilizedUp"
  | "StabilizedDown"
  | "AwaitingNewSize"
  | "RateLimitedUp"
  | "RateLimitedDown"
  | "ScaleUpDisabled"
  | "ScaleDownDisabled"
  | "Settling"
  | "OutsideScaleInWindow"
  | "MetricsIncomplete"
  | "NotServing"
  | "DisruptionHeld"
  | "SignalSuspect"
  | "MaxUnits"
  | "MinUnits"
  | "ScheduleFloor"
  | "NoRungInRange"
  | "Fallback"
  | "FailureCounted"
>;

/** One reason of a decision. Only `code` and `message` are always present. */
export interface Reason {
  code: ReasonCode;
  /** One human-readable sentence. */
  message: string;
  /** The signal the reason is about. */
  signal?: SignalName;
  /** A unit count the reason is about (what a signal asks for, a limit, a floor), units. */
  units?: number;
  /** A SKU the reason is about. */
  sku?: ScalableSku;
  /** The schedule, window, rate policy or failure kind the reason is about. */
  name?: string;
  /** Clients the reason is about (a scale-in's expected disconnections), clients. */
  clients?: number;
}

/** Builds a reason, leaving out the optional fields that are undefined. */
export function reason(
  code: ReasonCode,
  message: string,
  extra: {
    signal?: SignalName | undefined;
    units?: number | undefined;
    sku?: ScalableSku | undefined;
    name?: string | undefined;
    clients?: number | undefined;
  } = {},
): Reason {
  const out: Reason = { code, message };
  if (extra.signal !== undefined) out.signal = extra.signal;
  if (extra.units !== undefined) out.units = extra.units;
  if (extra.sku !== undefined) out.sku = extra.sku;
  if (extra.name !== undefined) out.name = extra.name;
  if (extra.clients !== undefined) out.clients = extra.clients;
  return out;
}
