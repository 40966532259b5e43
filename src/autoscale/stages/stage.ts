/**
 * The shapes the stages of a decision share (decide.ts runs them in order). Each stage is a pure
 * function of the frame and of what the stages before it returned; none mutates what it reads.
 */
import type { PolicyMode } from "../../api/constants.js";
import { durationOr } from "../../api/duration.js";
import type { CapacityPolicySpec } from "../../api/index.js";
import type { SkuUnits } from "../../capacity/skus.js";
import type { PassFailure } from "../fallback.js";
import type { DecisionHistory } from "../history.js";
import { type LimitCode, type Reason, reason } from "../reasons.js";
import type { ScaleDownWindow } from "../recurrence.js";
import type { SizeList } from "../sizes.js";

/** Durations of the policy, in seconds. */
export interface PolicyTimes {
  windowSeconds: number;
  ingestionDelaySeconds: number;
  maxSampleAgeSeconds: number;
  settleSeconds: number;
}

/** The policy's durations in seconds (unreadable ones fall back to the API defaults). */
export function policyTimes(spec: CapacityPolicySpec): PolicyTimes {
  return {
    windowSeconds: durationOr(spec.metrics.window, 300),
    ingestionDelaySeconds: durationOr(spec.metrics.ingestionDelay, 180),
    maxSampleAgeSeconds: durationOr(spec.metrics.maxSampleAge, 600),
    settleSeconds: spec.behavior.settleSeconds,
  };
}

/** An ARM update sent and not observed complete, as the stages read it (decide.ts `InFlightUpdate`). */
export interface InFlight {
  /** When the update was sent, RFC 3339. */
  startedAt: string;
  from: { units: number };
  to: SkuUnits;
  recovered?: boolean;
}

/** What every stage reads before the sizes are known: the decision's input, settled. */
export interface DecisionBasis {
  spec: CapacityPolicySpec;
  /** The time of the decision, ms since the epoch, and as RFC 3339. */
  nowMs: number;
  nowIso: string;
  /** The effective mode: Paused when spec.mode is or the pause annotation is "true". */
  mode: PolicyMode;
  paused: boolean;
  /** The stored history, normalized (history.ts `normalizeHistory`). */
  history: DecisionHistory;
  times: PolicyTimes;
  /** This pass's metric fetch failure, if it failed. */
  failure: PassFailure | undefined;
  inFlight: InFlight | undefined;
  /** Another owner of the capacity was detected: act on nothing. */
  conflict: { reason: string; message: string } | undefined;
}

/** What every stage reads: the basis, the current size and the sizes to choose from. */
export interface DecisionFrame extends DecisionBasis {
  /** The size the instance has. */
  current: SkuUnits;
  /** The sizes a decision may choose from (allowed SKUs, their ladders, one online change away). */
  sizes: SizeList;
  /** The scale-down stabilization window of this pass (recurrence.ts). */
  scaleDownWindow: ScaleDownWindow;
}

/** What held the result back: a {@link LimitCode} and its message (`ScalingLimited`). */
export interface Limit {
  code: LimitCode;
  message: string;
}

/** What a stage that sizes returns: the size, the reasons it adds in order, the limit it set. */
export interface Sized {
  size: SkuUnits;
  reasons: Reason[];
  /** The last limit the stage set; absent when it set none. */
  limit?: Limit;
}

/** A limit and the reason that states it. */
export function limitWith(
  code: LimitCode,
  message: string,
  extra: Parameters<typeof reason>[2] = {},
): { limit: Limit; reason: Reason } {
  return { limit: { code, message }, reason: reason(code, message, extra) };
}

/** A stage's result of one step: `size`, with the limit `stated` and its reason when set. */
export function sizedBy(size: SkuUnits, stated?: { limit: Limit; reason: Reason }): Sized {
  return stated ? { size, reasons: [stated.reason], limit: stated.limit } : { size, reasons: [] };
}

/**
 * The limit of a decision: the last one a stage set, so `limitedBy` is the last step that moved
 * the result away from the recommendation.
 */
export function lastLimit(...limits: (Limit | undefined)[]): Limit | undefined {
  return limits.reduce<Limit | undefined>((last, l) => l ?? last, undefined);
}
