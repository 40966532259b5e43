/**
 * The scaling decision: (policy, samples, current capacity, history, now) → desired capacity,
 * reasons, conditions and the next history. Pure: no I/O, no clock, no randomness.
 *
 * The pipeline, in order (each step's exact rule is pinned in its module):
 * 1. Samples → window (samples.ts): ingestion delay, window, max age, settle window.
 * 2. Signals (signals.ts): per-signal units, with the tolerance band.
 * 3. Recommendation: the smallest allowed size (SKU × ladder units, current SKU first at equal
 *    units) with at least the largest signal's units that also carries the traffic. Above 100
 *    units that is Premium_P2 when allowed (P2NotAllowed otherwise); below 100 it comes back down
 *    to Premium_P1 / Standard_S1 when those are allowed.
 * 4. Stabilization and rate policies (behavior.ts).
 * 5. Scale-in gate: no scale-in while a signal is unknown, incomplete, stale or failing
 *    (MetricsIncomplete), while settling (Settling), or outside the scale-in windows.
 *    A recommendation below the current size made on incomplete data is not recorded (HPA rule).
 * 6. A failed pass (fetch failed, or no usable signal): hold, or the fallback (fallback.ts).
 * 7. Floors and ceiling, always: `units.min` and active schedules' `minUnits` (snapped up), then
 *    `units.max` (snapped down) — the ceiling wins.
 * 8. App servers (replicas.ts) from the chosen units.
 * 9. Mode: Auto → Scale when anything differs; Recommend → Recommend; Paused (mode or
 *    annotation) and conflicts → None.
 * `limitedBy` is the last step that moved the result away from the recommendation.
 */
import { PAUSE_ANNOTATION, type PolicyMode } from "../api/constants.js";
import { durationOr, formatDuration } from "../api/duration.js";
import type { AnticipationStatus, CapacityPolicySpec, MetricSample as StatusSample } from "../api/index.js";
import {
  CONNECTIONS_PER_UNIT,
  DEFAULT_LADDERS,
  isScalableSku,
  type ScalableSku,
  type SkuName,
  type SkuUnits,
  type UnitLadders,
} from "../capacity/skus.js";
import type { ScenarioName } from "../capacity/tier-tables.js";
import { noUnitCountIn } from "../capacity/unit-bounds.js";
import { anticipate } from "./anticipation.js";
import { ceilSafe, rateLimit, stabilize, toleranceBand } from "./behavior.js";
import { capacityTimeline, unitChanges } from "./capacity-timeline.js";
import { type DecisionCondition, decisionConditions } from "./conditions.js";
import { type WindowConnections, windowConnections } from "./connections.js";
import type { DemandHistory } from "./demand-history.js";
import { nearThrottleEnd } from "./failures.js";
import { evaluateFallback, type FallbackState, type PassFailure } from "./fallback.js";
import {
  compactRecommendations,
  type DecisionHistory,
  normalizeHistory,
  pruneScaleEvents,
  type Recommendation,
} from "./history.js";
import { counterIdleZeroReason } from "./idle-counters.js";
import {
  effectiveIngestionDelay,
  fillingBuckets,
  observeIngestion,
  storedObservedDelay,
} from "./ingestion.js";
import type { LeadingObservation } from "./leading.js";
import { describeFindings } from "./plausibility.js";
import { type LimitCode, type Reason, reason, type SignalName } from "./reasons.js";
import { decideReplicas, type ReplicaDecision } from "./replicas.js";
import {
  known,
  type MetricSample,
  SAMPLE_FIELDS,
  type SampleField,
  type SampleWindow,
  series,
  windowSamples,
} from "./samples.js";
import { evaluateSchedules, type ScheduleState } from "./schedules.js";
import { evaluateSignals, fmt, type SignalReport } from "./signals.js";
import { compareSizes, formatSize, SizeList, sameSize } from "./sizes.js";
import { type SignalLevels, suspectServerLoad } from "./suspect.js";
import { parseTime } from "./time.js";

/** The policy as `decide` reads it: a CapacityPolicy after defaulting (metadata optional). */
export interface DecisionPolicy {
  metadata?: {
    name?: string;
    namespace?: string;
    generation?: number;
    annotations?: Readonly<Record<string, string>>;
  };
  spec: CapacityPolicySpec;
}

/** The capacity now. */
export interface CurrentState {
  /** SKU the instance has (ARM `sku.name`). */
  sku: SkuName;
  /** Units it has (ARM `sku.capacity`), units. */
  units: number;
  /** The app-server Deployment's spec.replicas (never status.replicas). */
  replicas?: number;
  /** The named HorizontalPodAutoscaler's spec.minReplicas. */
  hpaMinReplicas?: number;
}

/** Everything a decision depends on. */
export interface DecisionInput {
  policy: DecisionPolicy;
  /** One-minute samples of the instance, any order (see {@link MetricSample}). */
  samples: readonly MetricSample[];
  /** This pass's metric fetch failure, when it failed; the samples are then not used. */
  failure?: PassFailure;
  /**
   * Metrics queries of this pass that failed while others answered (the Azure adapter asks one
   * query per aggregation): the samples are those of the queries that answered, and the fields
   * listed are unknown in them — never 0. Each gives a `MetricsPartial` reason.
   */
  partialFailures?: readonly PartialFailure[];
  current: CurrentState;
  /** What the last decision returned as `history` (from status); empty when absent. */
  history?: DecisionHistory;
  /**
   * The ARM update in flight (`status.operation`): buckets since it was sent may have been served
   * by either size, and none of them justifies a scale-in.
   */
  operation?: InFlightUpdate;
  /** The time of the decision: a Date, ms since the epoch, or an RFC 3339 string. */
  now: Date | number | string;
  /** Unit ladders from ARM `listSkus`; the documented ladders when absent. */
  ladders?: UnitLadders;
  /** Which ladders those are, when they differ from the documented ones (ladders.ts `UnitLadder`). */
  laddersReason?: Reason;
  /** Another owner of the capacity was detected (e.g. an Azure autoscale setting): act on nothing. */
  conflict?: { reason: string; message: string };
  /** The instance's demand over past days, for the seasonal forecast (demand-history.ts). */
  demandHistory?: DemandHistory;
  /** The leading signal's readings from Prometheus (leading.ts), when the policy has one. */
  leading?: LeadingObservation;
}

/** A metrics query that failed while the others of its pass answered. */
export interface PartialFailure extends PassFailure {
  /** The sample fields it would have filled. */
  fields: readonly SampleField[];
}

/** An ARM update that was sent and whose completion has not been observed yet. */
export interface InFlightUpdate {
  /** When the update was sent, RFC 3339. */
  startedAt: string;
  from: { sku: string; units: number };
  to: SkuUnits;
  /** Found running with no record of it being sent (recovery.ts): its start is unknown. */
  recovered?: boolean;
}

/** What the decision wants. */
export interface DesiredState {
  sku: ScalableSku;
  units: number;
  /** Deployment replicas (app servers configured, no HPA named). */
  replicas?: number;
  /** Floor for the HPA's minReplicas (HPA named). */
  hpaMinReplicas?: number;
}

/**
 * What the caller does: Scale — apply `desired`; Recommend — record it only (mode Recommend);
 * None — nothing (no change, paused, conflict, or no decision possible).
 */
export type DecisionAction = "None" | "Scale" | "Recommend";

/** The decision and its explanation. */
export interface Decision {
  /** The time of the decision, RFC 3339. */
  now: string;
  /** The effective mode (Paused when the pause annotation is "true"). */
  mode: PolicyMode;
  action: DecisionAction;
  current: CurrentState;
  /** Absent only when no decision is possible (current SKU unsupported; Ready=False). */
  desired?: DesiredState;
  /** What the metrics alone ask for (before behavior, gates, bounds); absent on a failed pass. */
  recommendation?: SkuUnits;
  /** The signal that asks for the most. */
  drivenBy?: SignalName;
  reasons: Reason[];
  /** The last step that moved the result away from the recommendation. */
  limitedBy?: LimitCode;
  /** Start of the newest one-minute bucket used, RFC 3339. */
  newestSampleTime?: string;
  /** That bucket's known values, in the shape of `status.lastSample`. */
  lastSample?: StatusSample;
  signals: SignalReport[];
  /** The window's peak levels as measured (kept with a scale it sends: suspect.ts). */
  levels?: SignalLevels;
  scaleIn: { allowed: boolean; blockedBy: LimitCode[] };
  schedules?: ScheduleState;
  fallback: FallbackState;
  appServer?: ReplicaDecision;
  /** The window the samples were taken from, `[from, to)`, RFC 3339. */
  window?: { from: string; to: string; ignoredTooNew: number; ignoredBeforeWindow: number; invalid: number };
  conditions: DecisionCondition[];
  /** What anticipation computed (spec.anticipation mode ForecastOnly or Enabled). */
  anticipation?: AnticipationStatus;
  /** The history to store (status) and pass to the next decision; bounded. */
  history: DecisionHistory;
}

/** Milliseconds since the epoch of a decision time. */
function toMs(now: Date | number | string): number {
  const ms = now instanceof Date ? now.getTime() : typeof now === "number" ? now : Date.parse(now);
  if (!Number.isFinite(ms)) throw new RangeError(`invalid decision time ${String(now)}`);
  return ms;
}

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

function lastSampleOf(window: SampleWindow): StatusSample | undefined {
  for (let i = window.buckets.length - 1; i >= 0; i--) {
    const s = window.buckets[i]?.sample;
    if (!s || !SAMPLE_FIELDS.some((f) => known(s[f]))) continue;
    const out: StatusSample = { time: new Date(window.buckets[i]?.start ?? 0).toISOString() };
    for (const f of SAMPLE_FIELDS) {
      const v = s[f];
      if (known(v)) out[f] = v;
    }
    return out;
  }
  return undefined;
}

/** Why the largest allowed size is the answer. */
function topCause(
  needUnits: number,
  spec: CapacityPolicySpec,
  sizes: SizeList,
): { code: "P2NotAllowed" | "SkuPath" | "LadderTop"; message: string } {
  const top = sizes.top();
  const topText = top ? formatSize(top) : "the largest size";
  if (needUnits > 100 && !spec.skus.includes("Premium_P2")) {
    return {
      code: "P2NotAllowed",
      message: `${needUnits} units needed but the policy does not allow Premium_P2 (above 100 units): ${topText}`,
    };
  }
  const unreachable = spec.skus.filter((s) => isScalableSku(s) && !sizes.reachable.includes(s));
  if (unreachable.length > 0) {
    return {
      code: "SkuPath",
      message: `${unreachable.join(", ")} is not one online change from ${sizes.current.sku}: ${topText} first`,
    };
  }
  return { code: "LadderTop", message: `even ${topText} does not cover the need of ${needUnits} units` };
}

/** Decides (see the module comment). Pure and deterministic. */
export function decide(input: DecisionInput): Decision {
  const nowMs = toMs(input.now);
  const nowIso = new Date(nowMs).toISOString();
  const spec = input.policy.spec;
  const history = normalizeHistory(input.history, nowMs);
  const annotations = input.policy.metadata?.annotations;
  const paused = spec.mode === "Paused" || annotations?.[PAUSE_ANNOTATION] === "true";
  const mode: PolicyMode = paused ? "Paused" : spec.mode;
  const current: CurrentState = { ...input.current };
  const times = policyTimes(spec);
  const reasons: Reason[] = [];
  const failure = input.failure;

  const lastScaleMs = [history.lastScaleTime, ...history.scaleEvents.map((e) => e.time)]
    .map(parseTime)
    .filter((t) => Number.isFinite(t))
    .reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
  const inFlight = input.operation;
  const settleUntilMs = inFlight
    ? Number.POSITIVE_INFINITY
    : Number.isFinite(lastScaleMs)
      ? lastScaleMs + times.settleSeconds * 1000
      : undefined;
  const timeline = capacityTimeline(unitChanges(history.scaleEvents, inFlight), current.units);
  const unitsAt = timeline.unitsAt;
  // Buckets that may still be filling are never read as complete (ingestion.ts).
  const ingestion = failure ? history.ingestion : observeIngestion(history.ingestion, input.samples, nowMs);
  const delaySeconds = effectiveIngestionDelay(times.ingestionDelaySeconds, ingestion);
  const window = windowSamples(failure ? [] : input.samples, {
    nowMs,
    windowSeconds: times.windowSeconds,
    ingestionDelaySeconds: delaySeconds,
    maxSampleAgeSeconds: times.maxSampleAgeSeconds,
    settleUntilMs,
    maxUnitsAt: timeline.maxUnitsAt,
  });

  const curSku = current.sku;
  const sizes = isScalableSku(curSku)
    ? new SizeList(
        spec.skus.filter(isScalableSku),
        { sku: curSku, units: current.units },
        input.ladders ?? DEFAULT_LADDERS,
      )
    : undefined;

  if (!sizes || !isScalableSku(curSku) || sizes.empty) {
    return noDecision(input, nowIso, mode, history, window, sizes);
  }
  // No decision leaves units.min..units.max: without a size in it there is none to make.
  const ladders = input.ladders ?? DEFAULT_LADDERS;
  const allowed = spec.skus.filter(isScalableSku);
  const noCount = noUnitCountIn("spec.units", spec.units.min, spec.units.max, allowed, ladders);
  if (
    noCount !== undefined ||
    !sizes.sizes.some((s) => s.units >= spec.units.min && s.units <= spec.units.max)
  ) {
    const refusal =
      noCount !== undefined
        ? { reason: "InvalidSpec", code: "NoRungInRange" as const, message: noCount }
        : {
            reason: "SkuPath",
            code: "SkuPath" as const,
            message: `no size of ${sizes.reachable.join(", ")} (one online change from ${curSku}) lies in units ${spec.units.min}..${spec.units.max}`,
          };
    return noDecision(input, nowIso, mode, history, window, sizes, refusal);
  }
  const currentSize: SkuUnits = { sku: curSku, units: current.units };

  // 2. signals
  const connections = windowConnections(window, unitsAt, timeline.overlapsChange);
  const sig = evaluateSignals({
    spec,
    window,
    current: currentSize,
    sizes,
    unitsAt,
    overlapsChange: timeline.overlapsChange,
    connections,
  });
  reasons.push(...sig.reasons);
  if (input.laddersReason) reasons.push(input.laddersReason);
  // Anticipation (anticipation.ts): what the demand will need one lead time ahead.
  const scaleUpTolerance = toleranceBand(spec.behavior).up;
  const anticipation = failure
    ? undefined
    : anticipate({
        spec: spec.anticipation,
        nowMs,
        pollSeconds: spec.pollIntervalSeconds,
        tolerance: scaleUpTolerance,
        ingestionDelaySeconds: delaySeconds,
        windowSeconds: times.windowSeconds,
        windowToMs: window.to,
        demand: sig.demand,
        scaleEvents: history.scaleEvents,
        previous: history.anticipation,
        demandHistory: input.demandHistory,
        leading: input.leading,
        connectionsPerUnit: CONNECTIONS_PER_UNIT * ((spec.metrics.connections?.targetPercent ?? 100) / 100),
      });
  let anticipationStatus: AnticipationStatus | undefined =
    anticipation?.status ??
    (failure && spec.anticipation && spec.anticipation.mode !== "Off" ? history.anticipation : undefined);
  // A signal that did not respond to the last scale-out does not drive another (suspect.ts).
  const levels = windowLevels(window, connections);
  const suspect = inFlight
    ? undefined
    : suspectServerLoad(
        history.scaleEvents.at(-1),
        (fromMs) => windowLevels(window, connections, fromMs),
        nowMs,
      );
  let heldAsk: number | undefined;
  if (suspect) {
    for (const n of sig.needs) {
      if (n.signal !== suspect.signal || n.minUnits <= current.units) continue;
      heldAsk = n.minUnits;
      n.minUnits = current.units;
      delete n.fits;
    }
    reasons.push(reason("SignalSuspect", suspect.message, { signal: suspect.signal }));
  }
  if (window.ignored.tooNew > 0) {
    reasons.push(
      reason(
        "SamplesIgnored",
        `${window.ignored.tooNew} bucket(s) newer than the ingestion delay (${delaySeconds}s) ignored: still filling`,
      ),
    );
  }
  const overlaps = window.buckets.filter((b) => b.sample && timeline.overlapsChange(b.start));
  const overlapped = overlaps[0] && timeline.changesAt(overlaps[0].start)[0];
  if (overlaps.length > 0 && overlapped) {
    const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);
    const first = overlaps[0]?.start ?? 0;
    const last = overlaps.at(-1)?.start ?? 0;
    const done = Number.isFinite(overlapped.completedMs)
      ? `observed complete at ${hhmm(overlapped.completedMs)}`
      : "still in flight";
    reasons.push(
      reason(
        "OverlapsScale",
        `${overlaps.length} bucket(s) (${hhmm(first)}${last > first ? `–${hhmm(last)}` : ""} UTC) overlap the change ${overlapped.fromUnits} → ${overlapped.toUnits} units (${Number.isFinite(overlapped.startedMs) ? `sent at ${hhmm(overlapped.startedMs)}` : "found on the instance, start unknown"}, ${done}): read at the smaller size, ${Math.min(overlapped.fromUnits, overlapped.toUnits)} units, and never trusted for scale-in`,
      ),
    );
  }
  if (delaySeconds > times.ingestionDelaySeconds) {
    reasons.push(
      reason(
        "IngestionDelayObserved",
        `buckets were seen still filling ${storedObservedDelay(ingestion)}s after they ended: reading buckets at least ${delaySeconds}s old, not the ${times.ingestionDelaySeconds}s of spec.metrics.ingestionDelay (raise it to ${formatDuration(delaySeconds)})`,
      ),
    );
  }
  const invalid = window.findings.filter((f) => f.kind === "invalid");
  const unreadable = window.ignored.invalid - invalid.length;
  if (unreadable > 0) {
    reasons.push(reason("SamplesIgnored", `${unreadable} unreadable sample time(s) ignored`));
  }
  if (invalid.length > 0) {
    reasons.push(
      reason("SampleInvalid", `left out, not demand: ${describeFindings(invalid)}`, {
        name: invalid[0]?.field,
      }),
    );
  }
  const atCeiling = window.findings.filter((f) => f.kind === "saturated");
  if (atCeiling.length > 0) {
    reasons.push(reason("SampleAtCeiling", `read as saturated: ${describeFindings(atCeiling)}`));
  }
  // Traffic counters read as 0 because Azure answered them empty on an idle instance (idle-counters.ts).
  const idleCounters = counterIdleZeroReason(input.samples, window);
  if (idleCounters) reasons.push(idleCounters);
  if (!failure) {
    for (const p of input.partialFailures ?? []) {
      reasons.push(
        reason(
          "MetricsPartial",
          `${p.fields.join(", ")} unknown this pass, not zero: their query failed (${p.kind}): ${p.message}`,
          { name: p.kind },
        ),
      );
    }
  }
  const metricsUsable = !failure && sig.needs.length > 0;
  const filling =
    failure || !ingestion
      ? []
      : fillingBuckets(history.ingestion, ingestion, window.from, window.to, delaySeconds);
  const complete =
    !failure && sig.reports.length > 0 && sig.reports.every((r) => r.status === "Ok") && filling.length === 0;
  const passFailed = !metricsUsable;
  const throttledUntil = passFailed
    ? nearThrottleEnd(failure, nowMs, history.consecutiveFailures + 1, spec.pollIntervalSeconds)
    : undefined;
  const fallback = evaluateFallback(spec.fallback, history.consecutiveFailures, passFailed, throttledUntil);
  if (failure) {
    reasons.push(
      reason("FetchFailed", `fetching metrics failed (${failure.kind}): ${failure.message}`, {
        name: failure.kind,
      }),
    );
  } else if (!metricsUsable) {
    reasons.push(
      reason("MetricsUnavailable", "no signal has a usable value in the window: unknown, not zero"),
    );
  }

  // schedules
  const schedules = evaluateSchedules(spec.schedules, spec.scaleInWindows, nowMs);
  for (const bad of schedules.invalid) {
    reasons.push(reason("ScheduleInvalid", `${bad.name}: ${bad.error} — ignored`, { name: bad.name }));
  }

  let limitedBy: LimitCode | undefined;
  let limitMessage: string | undefined;
  const limit = (code: LimitCode, message: string, extra: Parameters<typeof reason>[2] = {}) => {
    limitedBy = code;
    limitMessage = message;
    reasons.push(reason(code, message, extra));
  };

  let target: SkuUnits = currentSize;
  let recommendation: SkuUnits | undefined;
  let drivenBy: SignalName | undefined;
  const newRecs: Recommendation[] = [];
  const blockers: LimitCode[] = [];

  if (!passFailed) {
    // 3. recommendation
    let needUnits = 0;
    for (const n of sig.needs) {
      if (drivenBy === undefined || n.minUnits > needUnits) {
        needUnits = n.minUnits;
        drivenBy = n.signal;
      }
    }
    const ask = anticipation?.asks[0];
    if (anticipation && ask) {
      // Within the tolerance band of the current size an ask only holds it: no step for noise.
      const tolerated = ask.units <= current.units * (1 + scaleUpTolerance);
      const units = tolerated ? Math.min(ceilSafe(ask.units), current.units) : ceilSafe(ask.units);
      if (units > needUnits) {
        const act = anticipation.mode === "Enabled";
        reasons.push(
          reason(
            "Anticipated",
            `${ask.rule} asks for ${units} units (measured need ${needUnits}, lead time ${anticipation.leadTimeSeconds}s)${act ? "" : " — ForecastOnly: shown, not acted on"}: ${ask.message}`,
            { units, name: ask.rule },
          ),
        );
        if (act) {
          needUnits = units;
          anticipationStatus = { ...anticipation.status, applied: true };
        }
      }
    }
    const fits = (s: SkuUnits) => sig.needs.every((n) => !n.fits || n.fits(s));
    const found = sizes.firstAtLeast(needUnits, fits);
    if (suspect && heldAsk !== undefined && heldAsk > needUnits) {
      limit("SignalSuspect", `${suspect.signal} asks for ${heldAsk} units but is suspect: held`, {
        units: heldAsk,
        signal: suspect.signal,
      });
    }
    if (found) {
      recommendation = found;
      if (found.units > needUnits && !sameSize(found, currentSize)) {
        reasons.push(
          reason(
            "LadderSnapped",
            `need of ${needUnits} units → ${formatSize(found)} (the next unit count of the ladder)`,
            { units: found.units, sku: found.sku },
          ),
        );
      }
    } else {
      recommendation = sizes.top() ?? currentSize;
      const cause = topCause(needUnits, spec, sizes);
      limit(cause.code, cause.message, { units: recommendation.units, sku: recommendation.sku });
    }

    // 5 (part). Scale-in gate conditions.
    if (!complete) blockers.push("MetricsIncomplete");
    if (window.settling) blockers.push("Settling");
    if (!schedules.scaleInAllowed) blockers.push("OutsideScaleInWindow");

    // A lower recommendation made on incomplete data is not trusted, not even as history.
    const trusted = complete || compareSizes(recommendation, currentSize) >= 0;
    const down = spec.behavior.scaleDown.stabilizationWindowSeconds;
    const priorRecs = [...history.recommendations];
    if (priorRecs.length === 0 && down > 0) {
      // Like the HPA on first sight: the current size opens the scale-down window.
      const seed: Recommendation = { time: nowIso, sku: currentSize.sku, units: currentSize.units };
      priorRecs.push(seed);
      newRecs.push(seed);
    }
    if (trusted) newRecs.push({ time: nowIso, sku: recommendation.sku, units: recommendation.units });

    // 4. stabilization and rate policies
    const st = stabilize({
      current: currentSize,
      recommendation,
      history: priorRecs,
      nowMs,
      scaleUpWindowSeconds: spec.behavior.scaleUp.stabilizationWindowSeconds,
      scaleDownWindowSeconds: down,
    });
    let stabilized = st.size;
    if (!sizes.has(stabilized)) stabilized = sizes.atUnits(stabilized.units) ?? stabilized;
    if (st.code === "StabilizedDown") {
      limit(
        "StabilizedDown",
        `scale-down stabilization (${down}s): the highest recommendation of the window is ${formatSize(st.down)}`,
        { units: stabilized.units, sku: stabilized.sku },
      );
    } else if (st.code === "StabilizedUp") {
      limit(
        "StabilizedUp",
        `scale-up stabilization (${spec.behavior.scaleUp.stabilizationWindowSeconds}s): the lowest recommendation of the window is ${formatSize(st.up)}`,
        { units: stabilized.units, sku: stabilized.sku },
      );
    }
    const rl = rateLimit({
      current: currentSize,
      proposed: stabilized,
      sizes,
      events: history.scaleEvents,
      nowMs,
      scaleUp: spec.behavior.scaleUp,
      scaleDown: spec.behavior.scaleDown,
    });
    if (rl.code === "ScaleUpDisabled" || rl.code === "ScaleDownDisabled") {
      limit(rl.code, `${rl.code === "ScaleUpDisabled" ? "scaleUp" : "scaleDown"}.selectPolicy is Disabled`);
    } else if (rl.code) {
      limit(
        rl.code,
        `rate policy ${rl.policy ?? ""} allows ${rl.code === "RateLimitedUp" ? "up" : "down"} to ${rl.limitUnits ?? "?"} units: ${formatSize(rl.size)}`,
        { units: rl.size.units, sku: rl.size.sku, name: rl.policy },
      );
    }
    target = rl.size;

    // 5. scale-in gate
    if (compareSizes(target, currentSize) < 0 && blockers.length > 0) {
      target = currentSize;
      for (const b of blockers) {
        if (b === "MetricsIncomplete") {
          const missing = sig.reports.filter((r) => r.status !== "Ok").map((r) => `${r.signal} ${r.status}`);
          const changing = filling.map((t) => new Date(t).toISOString().slice(11, 16));
          if (changing.length > 0)
            missing.push(`bucket ${changing.join(", ")} still changing between passes`);
          limit(b, `no scale-in while a signal is not fully known (${missing.join(", ")})`);
        } else if (b === "Settling" && inFlight) {
          limit(
            b,
            `an update to ${formatSize(inFlight.to)} was sent at ${inFlight.startedAt} and is not observed complete: samples since may have been served by either size`,
          );
        } else if (b === "Settling" && times.settleSeconds === 0) {
          limit(
            b,
            `the scale observed complete at ${new Date(lastScaleMs).toISOString()}: samples from before it are not trusted for scale-in`,
          );
        } else if (b === "Settling") {
          limit(
            b,
            `settle window after the scale at ${new Date(lastScaleMs).toISOString()}: samples before ${new Date(settleUntilMs ?? 0).toISOString()} are not trusted for scale-in`,
          );
        } else {
          limit(b, "scale-in windows are set and none is open now");
        }
      }
      // The first blocker is the main cause.
      const first = blockers[0];
      if (first !== undefined && first !== limitedBy) {
        limitedBy = first;
        limitMessage = reasons.findLast((r) => r.code === first)?.message;
      }
    }
  } else {
    // 6. a failed pass holds the capacity: the size in place, or the one an update in flight is
    // reaching (holding the size it leaves would undo it); the fallback may raise it.
    const holding = heldSize(currentSize, inFlight);
    const held = `${formatSize(holding)}${sameSize(holding, currentSize) ? "" : " (the update in flight)"}`;
    target = holding;
    if (fallback.active) {
      let message = `${fallback.consecutiveFailures} consecutive failures (threshold ${fallback.threshold}): holding ${held}`;
      if (fallback.action === "Fixed" && fallback.fixedUnits !== undefined) {
        const fixed = sizes.firstAtLeast(fallback.fixedUnits) ?? sizes.top();
        if (fixed && fixed.units > holding.units) {
          target = fixed;
          message = `${fallback.consecutiveFailures} consecutive failures (threshold ${fallback.threshold}): fixed ${formatSize(fixed)}`;
        } else {
          message = `${fallback.consecutiveFailures} consecutive failures (threshold ${fallback.threshold}): fixed ${fallback.fixedUnits} units is not above ${held}, holding`;
        }
      }
      limit("Fallback", message, { units: target.units, name: fallback.action });
      blockers.push("Fallback");
    } else if (fallback.throttledUntil) {
      limit(
        "FailureCounted",
        `Azure throttles until ${fallback.throttledUntil}: holding ${held} until then (${fallback.consecutiveFailures} failed passes; the fallback does not switch on for a throttle of known length)`,
      );
      blockers.push("FailureCounted");
    } else {
      limit(
        "FailureCounted",
        `pass failed (${fallback.consecutiveFailures} of ${fallback.threshold} before the fallback): holding ${held}`,
      );
      blockers.push("FailureCounted");
    }
  }

  // 7. floors and ceiling (on a size of the list, so the clamps below are the last word)
  if (!sizes.has(target)) {
    // The current SKU is not allowed (or its units are off the ladder): the nearest allowed size
    // with at least as many units.
    target = sizes.atUnits(target.units) ?? sizes.firstAtLeast(target.units) ?? sizes.top() ?? target;
  }
  const minSize = sizes.firstAtLeast(spec.units.min) ?? sizes.top() ?? currentSize;
  let floor = minSize;
  let floorCode: "MinUnits" | "ScheduleFloor" = "MinUnits";
  if (schedules.floorUnits !== undefined) {
    const sched = sizes.firstAtLeast(schedules.floorUnits) ?? sizes.top() ?? currentSize;
    if (sched.units > floor.units) {
      floor = sched;
      floorCode = "ScheduleFloor";
    }
  }
  const ceiling = sizes.largestAtMost(spec.units.max) ?? sizes.sizes[0] ?? currentSize;
  if (floor.units > ceiling.units) {
    reasons.push(
      reason(
        "NoRungInRange",
        `no unit count of ${sizes.reachable.join(", ")} lies in ${floorCode === "ScheduleFloor" ? `${schedules.floorUnits} (schedule)` : spec.units.min}..${spec.units.max}: units.max wins`,
      ),
    );
    floor = ceiling;
  }
  if (target.units < floor.units) {
    target = floor;
    if (floorCode === "ScheduleFloor") {
      limit(
        "ScheduleFloor",
        `schedule ${schedules.floorSchedule} is active: at least ${schedules.floorUnits} units → ${formatSize(floor)}`,
        { units: floor.units, name: schedules.floorSchedule },
      );
    } else {
      limit("MinUnits", `units.min ${spec.units.min} → ${formatSize(floor)}`, { units: floor.units });
    }
  }
  if (target.units > ceiling.units) {
    target = ceiling;
    limit("MaxUnits", `units.max ${spec.units.max} → ${formatSize(ceiling)}`, { units: ceiling.units });
  }

  // 8. app servers
  let appServer: ReplicaDecision | undefined;
  if (spec.appServer) {
    const traffic = spec.metrics.traffic;
    const msgSize = traffic?.messageSizeBytes ?? 2048;
    const conn = series(window, (b) => connections.get(b.start)?.value);
    const events = series(window, (b) => {
      const i = b.sample?.inboundBytesPerSecond;
      return known(i) ? i / msgSize : null;
    });
    const peakOf = (s: typeof conn) =>
      s.points.length > 0 ? Math.max(...s.points.map((p) => p.value)) : undefined;
    const scenarios: ScenarioName[] = (traffic?.workload ?? [])
      .filter((w) => w.share > 0)
      .map((w) => w.scenario);
    appServer = decideReplicas({
      appServer: spec.appServer,
      service: spec.target.service,
      scenarios,
      units: target.units,
      connections: { value: peakOf(conn), status: failure ? "Unknown" : conn.status },
      events: { value: peakOf(events), status: failure ? "Unknown" : events.status },
      currentReplicas: current.replicas,
      currentHpaMinReplicas: current.hpaMinReplicas,
    });
  }

  const desired: DesiredState = { sku: target.sku, units: target.units };
  if (appServer?.replicas !== undefined) desired.replicas = appServer.replicas;
  if (appServer?.hpaMinReplicas !== undefined) desired.hpaMinReplicas = appServer.hpaMinReplicas;
  // Whatever blocks scaling the instance in (unknown or failing metrics, settling, outside the
  // scale-in windows, a failed pass) blocks lowering the app servers too.
  if ((blockers.length > 0 || failure) && spec.appServer) {
    const held: string[] = [];
    const ceiling = spec.appServer.replicas.max;
    const keep = (want: number, now: number | undefined) =>
      now !== undefined && want < Math.min(now, ceiling) ? Math.min(now, ceiling) : want;
    if (desired.replicas !== undefined && keep(desired.replicas, current.replicas) !== desired.replicas) {
      desired.replicas = keep(desired.replicas, current.replicas);
      held.push(`replicas ${desired.replicas}`);
    }
    if (
      desired.hpaMinReplicas !== undefined &&
      keep(desired.hpaMinReplicas, current.hpaMinReplicas) !== desired.hpaMinReplicas
    ) {
      desired.hpaMinReplicas = keep(desired.hpaMinReplicas, current.hpaMinReplicas);
      held.push(`HPA minReplicas ${desired.hpaMinReplicas}`);
    }
    if (held.length > 0) {
      const why = blockers.length > 0 ? blockers.join(", ") : "this pass failed";
      reasons.push(
        reason("ReplicasHeld", `scale-in blocked (${why}): app servers kept at ${held.join(", ")}`),
      );
    }
  }

  // 9. action
  const capacityChange = !sameSize(target, currentSize);
  const replicaChange =
    (desired.replicas !== undefined && desired.replicas !== current.replicas) ||
    (desired.hpaMinReplicas !== undefined && desired.hpaMinReplicas !== current.hpaMinReplicas);
  if (capacityChange) {
    const dir = compareSizes(target, currentSize) > 0 ? "ScaleOut" : "ScaleIn";
    const anticipated = anticipationStatus?.applied ? anticipationStatus.drivenBy : undefined;
    const by = limitedBy
      ? ` (${limitedBy})`
      : anticipated
        ? ` (anticipated: ${anticipated})`
        : drivenBy
          ? ` (driven by ${drivenBy})`
          : "";
    reasons.push(
      reason(dir, `${formatSize(currentSize)} → ${formatSize(target)}${by}`, {
        units: target.units,
        sku: target.sku,
      }),
    );
    if (target.sku !== currentSize.sku) {
      reasons.push(
        reason("SkuChange", `SKU ${currentSize.sku} → ${target.sku} (online change)`, { sku: target.sku }),
      );
    }
  }
  let action: DecisionAction = "None";
  if (input.conflict) {
    reasons.push(reason("Conflict", input.conflict.message, { name: input.conflict.reason }));
  } else if (paused) {
    reasons.push(
      reason(
        "Paused",
        spec.mode === "Paused"
          ? "spec.mode is Paused: nothing is applied"
          : `annotation ${PAUSE_ANNOTATION}="true": nothing is applied`,
      ),
    );
  } else if (!capacityChange && !replicaChange) {
    reasons.push(reason("NoChange", `${formatSize(currentSize)} is what the decision wants`));
  } else if (spec.mode === "Recommend") {
    action = "Recommend";
    reasons.push(reason("RecommendOnly", "spec.mode is Recommend: the decision is recorded, not applied"));
  } else {
    action = "Scale";
  }
  if (appServer) reasons.push(...appServer.reasons);

  // history
  const keepRecs = Math.max(
    spec.behavior.scaleUp.stabilizationWindowSeconds,
    spec.behavior.scaleDown.stabilizationWindowSeconds,
  );
  const periods = [...spec.behavior.scaleUp.policies, ...spec.behavior.scaleDown.policies].map(
    (p) => p.periodSeconds,
  );
  const keepEvents = Math.max(...periods, times.windowSeconds + delaySeconds + times.settleSeconds + 60);
  const nextHistory: DecisionHistory = {
    recommendations: compactRecommendations([...history.recommendations, ...newRecs], nowMs, keepRecs),
    scaleEvents: pruneScaleEvents(history.scaleEvents, nowMs, keepEvents),
    consecutiveFailures: fallback.consecutiveFailures,
  };
  if (history.lastScaleTime !== undefined) nextHistory.lastScaleTime = history.lastScaleTime;
  if (ingestion !== undefined) nextHistory.ingestion = ingestion;
  if (anticipationStatus !== undefined) nextHistory.anticipation = anticipationStatus;

  const decision: Decision = {
    now: nowIso,
    mode,
    action,
    current,
    desired,
    reasons,
    signals: sig.reports,
    scaleIn: {
      allowed: blockers.length === 0,
      blockedBy: blockers,
    },
    schedules,
    fallback,
    window: windowInfo(window),
    conditions: decisionConditions({
      paused,
      recommendOnly: spec.mode === "Recommend",
      conflict: input.conflict,
      failure,
      signals: sig.reports,
      metricsUsable,
      fallback,
      limitedBy,
      limitMessage,
      drivenBy,
      anticipation: anticipationStatus,
    }),
    history: nextHistory,
  };
  if (recommendation) decision.recommendation = { sku: recommendation.sku, units: recommendation.units };
  if (anticipationStatus) decision.anticipation = anticipationStatus;
  if (Object.keys(levels).length > 0) decision.levels = levels;
  if (drivenBy) decision.drivenBy = drivenBy;
  if (limitedBy) decision.limitedBy = limitedBy;
  const last = lastSampleOf(window);
  if (last) {
    decision.lastSample = last;
    decision.newestSampleTime = last.time;
  }
  if (appServer) decision.appServer = appServer;
  return decision;
}

/**
 * The size a failed pass holds: the one an update in flight is reaching (so that `status.desired`
 * shows where the instance is going, and no decision undoes the update), else the current one.
 */
function heldSize(current: SkuUnits, inFlight: InFlightUpdate | undefined): SkuUnits {
  const to = inFlight?.to;
  return to && isScalableSku(to.sku) ? { sku: to.sku, units: to.units } : current;
}

/**
 * The peak levels of the window's buckets that start at or after `fromMs`, as measured: server
 * load %, connections (each bucket's by the rule of connections.ts), inbound + outbound bytes/s.
 */
function windowLevels(
  window: SampleWindow,
  connections: WindowConnections,
  fromMs = Number.NEGATIVE_INFINITY,
): SignalLevels {
  const out: SignalLevels = {};
  for (const b of window.buckets) {
    const x = b.sample;
    if (!x || b.start < fromMs) continue;
    if (known(x.serverLoadPercent))
      out.serverLoadPercent = Math.max(out.serverLoadPercent ?? 0, x.serverLoadPercent);
    const c = connections.get(b.start)?.value;
    if (known(c)) out.connections = Math.max(out.connections ?? 0, c);
    if (known(x.inboundBytesPerSecond) && known(x.outboundBytesPerSecond)) {
      const bytes = x.inboundBytesPerSecond + x.outboundBytesPerSecond;
      out.bytesPerSecond = Math.max(out.bytesPerSecond ?? 0, bytes);
    }
  }
  return out;
}

function windowInfo(w: SampleWindow): NonNullable<Decision["window"]> {
  return {
    from: new Date(w.from).toISOString(),
    to: new Date(w.to).toISOString(),
    ignoredTooNew: w.ignored.tooNew,
    ignoredBeforeWindow: w.ignored.beforeWindow,
    invalid: w.ignored.invalid,
  };
}

/** The decision when none is possible: the current SKU is not scalable or no allowed SKU is reachable. */
function noDecision(
  input: DecisionInput,
  nowIso: string,
  mode: PolicyMode,
  history: DecisionHistory,
  window: SampleWindow,
  sizes: SizeList | undefined,
  refusal?: { reason: string; code: "NoRungInRange" | "SkuPath"; message: string },
): Decision {
  const spec = input.policy.spec;
  const message =
    refusal?.message ??
    (sizes === undefined
      ? `current SKU ${input.current.sku} is never scaled to or from (changing it changes the instance's IP)`
      : `no SKU of ${spec.skus.join(", ")} is one online change from ${input.current.sku}`);
  const reasonText = refusal?.reason ?? "UnsupportedSku";
  const failed = input.failure !== undefined;
  const nowMs = Date.parse(nowIso);
  const fallback = evaluateFallback(
    spec.fallback,
    history.consecutiveFailures,
    failed,
    nearThrottleEnd(input.failure, nowMs, history.consecutiveFailures + 1, spec.pollIntervalSeconds),
  );
  const conditions = decisionConditions({
    paused: mode === "Paused",
    recommendOnly: mode === "Recommend",
    conflict: input.conflict,
    failure: input.failure,
    signals: [],
    metricsUsable: !failed,
    fallback,
    limitedBy: undefined,
  }).map((c) => {
    if (c.type === "Ready") return { ...c, status: "False" as const, reason: reasonText, message };
    if (c.type === "AbleToScale")
      return { ...c, status: "False" as const, reason: refusal?.code ?? "UnsupportedSku", message };
    return c;
  });
  const out: Decision = {
    now: nowIso,
    mode,
    action: "None",
    current: { ...input.current },
    reasons: [reason(refusal?.code ?? "UnsupportedSku", message)],
    signals: [],
    scaleIn: { allowed: false, blockedBy: [] },
    fallback,
    window: windowInfo(window),
    conditions,
    history: { ...history, consecutiveFailures: fallback.consecutiveFailures },
  };
  const last = lastSampleOf(window);
  if (last) {
    out.lastSample = last;
    out.newestSampleTime = last.time;
  }
  return out;
}

/** Re-exported for callers that format numbers like decisions do. */
export { fmt };
