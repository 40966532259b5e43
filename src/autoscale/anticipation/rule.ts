/**
 * The shapes of anticipation (anticipation.ts runs it): what it reads, what one rule asks, and
 * the one interface every rule file under `anticipation/` implements.
 */
import type { AnticipationMode } from "../../api/constants.js";
import type { AnticipationRule, AnticipationSpec, AnticipationStatus } from "../../api/index.js";
import type { DisconnectionModel } from "../../traffic/disconnections.js";
import type { DemandHistory } from "../demand-history.js";
import type { ReplicaGroupObservation } from "../failover.js";
import { fmt } from "../format.js";
import type { ScaleEvent } from "../history.js";
import type { LeadingObservation } from "../leading.js";
import type { DemandSeries } from "../signals/types.js";

/** Everything anticipation reads. */
export interface AnticipationInput {
  spec: AnticipationSpec | undefined;
  nowMs: number;
  pollSeconds: number;
  /** The ingestion delay the decision reads with (effective), seconds. */
  ingestionDelaySeconds: number;
  /** The metrics window, seconds. */
  windowSeconds: number;
  /** End of the window (start of the newest bucket it leaves out), ms. */
  windowToMs: number;
  /** The scale-up tolerance: a rise smaller than this share of the level across the window is noise. */
  tolerance: number;
  /** Each usable signal's need per bucket. */
  demand: readonly DemandSeries[];
  /** Recent applied changes, oldest first (for the measured scale duration). */
  scaleEvents: readonly ScaleEvent[];
  /** What the last pass stored (`status.anticipation`). */
  previous?: AnticipationStatus | undefined;
  demandHistory?: DemandHistory | undefined;
  /** The leading signal's readings (spec.anticipation.leadingSignal), as the caller read them. */
  leading?: LeadingObservation | undefined;
  /** Connections one unit carries at the policy's connections target (1,000 × target%). */
  connectionsPerUnit: number;
  /**
   * Which clients a unit change disconnects on this instance (`traffic/disconnections.ts`; default
   * `RemovedUnits`): the leading signal discounts the reconnects of exactly those.
   */
  disconnection?: DisconnectionModel | undefined;
  /**
   * The replica group of the policy's target (failover.ts), as the operator read it this pass:
   * absent for an instance without replicas (the Failover rule then asks nothing).
   */
  replicaGroup?: ReplicaGroupObservation | undefined;
  /** The largest need the signals measured on the window (before anticipation), units. */
  measuredNeedUnits?: number | undefined;
}

/** One rule's ask. */
export interface RuleAsk {
  rule: AnticipationRule;
  /** Un-snapped need, units. */
  units: number;
  /**
   * A central estimate's upper quartile (a need one past cycle in four exceeded), units: the
   * recommendation rounds the estimate down to a rung only when this fits it too.
   */
  upperUnits?: number;
  message: string;
}

/** What anticipation computed. */
export interface Anticipation {
  mode: AnticipationMode;
  leadTimeSeconds: number;
  scaleDurationSeconds: number;
  scaleDurationSource: "Measured" | "Default";
  /** The rules that asked for something, largest first. */
  asks: RuleAsk[];
  /** The status to store (`applied` false: decide.ts sets it). */
  status: AnticipationStatus;
}

/** What every rule reads: the input, with anticipation on, and the target time. */
export interface RuleContext extends AnticipationInput {
  spec: AnticipationSpec;
  /** When capacity decided now is in place: now + scale duration + one poll interval, ms. */
  targetMs: number;
  /**
   * Until when that capacity is all there is, ms: `targetMs` + one more scale duration. Azure runs
   * one update at a time, so the earliest the next decision can change the size is a scale sent
   * when this one completes: a size decided now serves every minute until then.
   */
  servedUntilMs: number;
}

/** The parts of `status.anticipation` a rule keeps for the next pass or shows. */
export type RuleStatus = Partial<
  Pick<AnticipationStatus, "growth" | "peaks" | "forecast" | "leading" | "failover">
>;

/** What one rule gives: its asks (none, one, or one per signal) and what it keeps in status. */
export interface RuleResult {
  asks: RuleAsk[];
  /** Only the keys the rule sets (none when it keeps nothing). */
  status?: RuleStatus;
}

/**
 * One anticipation rule: a file under `anticipation/`, listed in `anticipation/index.ts`. Pure;
 * a rule the spec does not turn on returns no asks and no status.
 */
export interface Rule {
  readonly rule: AnticipationRule;
  evaluate(ctx: RuleContext): RuleResult;
}

export const MINUTE_MS = 60_000;
/** A projection never exceeds this multiple of the window's peak. */
export const MAX_PROJECTION = 4;

/** The middle of the one-minute bucket starting at `start`, ms. */
export const mid = (start: number) => start + MINUTE_MS / 2;
/** RFC 3339 of a time, ms. */
export const iso = (ms: number) => new Date(ms).toISOString();
/** A duration in words: "7.5 min". */
export const minutes = (ms: number) => `${fmt(ms / MINUTE_MS)} min`;
