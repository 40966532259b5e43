/**
 * The shapes of the signals (signals.ts evaluates them): what each reads, reports and asks for,
 * and the one interface every signal file under `signals/` implements.
 */
import type { CapacityPolicySpec } from "../../api/index.js";
import type { ScalableSku, SkuUnits } from "../../capacity/skus.js";
import type { ToleranceBand } from "../behavior.js";
import type { ConnectionMeasure, WindowConnections } from "../connections.js";
import type { Reason, SignalName } from "../reasons.js";
import type { SampleWindow, SeriesStatus } from "../samples.js";
import type { SizeList } from "../sizes.js";

/** Status of a signal: its series' quality, or Error when it could not be evaluated. */
export type SignalStatus = SeriesStatus | "Error";

/** What one signal measured and asks for (reported in decisions and by `recommend`). */
export interface SignalReport {
  signal: SignalName;
  status: SignalStatus;
  /** Target of the signal, %. */
  targetPercent: number;
  /**
   * The measured value compared with the target: serverLoad — % at the current units;
   * connections — connections; traffic — % of the current size's tier-table capacity on the
   * busiest dimension.
   */
  value?: number;
  /** value / target (connections: peak / (current units · 1,000 · target%)). */
  ratio?: number;
  /** `|ratio − 1| ≤ tolerance`. */
  withinTolerance?: boolean;
  /** Units this signal alone asks for (before the ladder, limits and other signals), units. */
  desiredUnits?: number;
  /** Traffic only: the SKU of the smallest size that carries the traffic. */
  desiredSku?: ScalableSku;
  /** Traffic only: the capacity dimension that set the size ("outboundBandwidth", "smallGroup.inbound", …). */
  dimension?: string;
  /** Connections only: the measure of the peak bucket (connections.ts). */
  measure?: ConnectionMeasure;
  /** Buckets with a known value / buckets in the window. */
  knownBuckets: number;
  expectedBuckets: number;
  /** Start of the newest bucket with a known value, RFC 3339. */
  newestTime?: string;
  message: string;
}

/** What one usable signal requires of the chosen size. */
export interface SignalNeed {
  signal: SignalName;
  /** The size needs at least this many units. */
  minUnits: number;
  /** Extra condition on the size (traffic: every dimension within target). */
  fits?: (size: SkuUnits) => boolean;
}

/** Everything the signals read. */
export interface SignalContext {
  spec: Pick<CapacityPolicySpec, "target" | "metrics" | "behavior">;
  window: SampleWindow;
  current: SkuUnits;
  sizes: SizeList;
  /** Units the instance had at a time (ms). */
  unitsAt: (timeMs: number) => number;
  /**
   * The bucket starting then overlaps a capacity change (capacity-timeline.ts): its server load,
   * read at the smaller size, understates the need, so it is left out of that demand series.
   */
  overlapsChange?: (startMs: number) => boolean;
  /** Each bucket's connections (connections.ts); computed from the window when absent. */
  connections?: WindowConnections;
}

/** One bucket of a {@link DemandSeries}. */
export interface DemandPoint {
  /** Bucket start, ms. */
  start: number;
  /** The bucket's need, units. */
  units: number;
  /** The value sat at its ceiling (the quota or 100 % of the size then). */
  saturated: boolean;
  /**
   * The value is only a lower bound of the demand: the bucket was saturated, or it overlaps a
   * capacity change at or above the smaller size's ceiling, or (any signal) the connection quota
   * was full then, so the clients refused added no load and no traffic. A rise into or out of
   * such a bucket may be capacity uncovering demand that was there, not demand growing
   * (`censoredAt`). Absent: the same as `saturated`.
   */
  censored?: boolean;
}

/**
 * One signal's measured need per bucket of the window, un-snapped: the units that bucket alone
 * would need at the signal's target (connections ÷ (1,000 · target%); load-units · 100 ÷ target%;
 * traffic: the current units × the bucket's share of the peak's utilization ÷ target%).
 */
export interface DemandSeries {
  signal: SignalName;
  /** Bucket start (ms), need (units) and whether the value sat at its ceiling, oldest first. */
  points: DemandPoint[];
  /** The newest point is at the signal's ceiling (real demand unknown but higher). */
  saturated: boolean;
}

/** The result of evaluating every signal: each list in the order of the signals. */
export interface SignalEvaluation {
  reports: SignalReport[];
  needs: SignalNeed[];
  reasons: Reason[];
  /** Each usable signal's need per bucket (anticipation.ts projects them). */
  demand: DemandSeries[];
}

/** What one signal contributes to a {@link SignalEvaluation}. */
export interface SignalOutcome {
  report: SignalReport;
  /** Its reasons, in the order they arose. */
  reasons: Reason[];
  /** Absent for a signal without a usable value (unknown, stale, or an error). */
  need?: SignalNeed;
  /** Its need per bucket; absent when it has no usable value. */
  demand?: DemandSeries;
}

/**
 * One metric signal: a file under `signals/`, listed in `signals/index.ts`. Pure.
 * `evaluate` returns undefined when the policy does not configure the signal.
 */
export interface Signal {
  readonly name: SignalName;
  evaluate(ctx: SignalContext, tolerance: ToleranceBand): SignalOutcome | undefined;
}
