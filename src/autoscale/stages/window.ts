/**
 * Stage 1, the window: which samples a decision reads (samples.ts) — the ingestion delay in use
 * (the policy's, or the one observed: ingestion.ts), the window, the maximum age, the settle
 * window after a scale and the capacity timeline of recent changes — and the reasons that say
 * what of them was left out or read differently.
 */
import { formatDuration } from "../../api/duration.js";
import { type CapacityTimeline, capacityTimeline, unitChanges } from "../capacity-timeline.js";
import type { WindowConnections } from "../connections.js";
import type { PassFailure } from "../fallback.js";
import { counterIdleZeroReason } from "../idle-counters.js";
import {
  effectiveIngestionDelay,
  type IngestionState,
  observeIngestion,
  storedObservedDelay,
} from "../ingestion.js";
import { describeFindings } from "../plausibility.js";
import { type Reason, reason } from "../reasons.js";
import { known, type MetricSample, type SampleField, type SampleWindow, windowSamples } from "../samples.js";
import type { SignalLevels } from "../suspect.js";
import { parseTime } from "../time.js";
import type { DecisionBasis } from "./stage.js";

/** The window a decision reads, and what it was taken with. */
export interface ObservedWindow {
  window: SampleWindow;
  /** The ingestion state after this pass (the stored one on a failed fetch). */
  ingestion: IngestionState | undefined;
  /** The ingestion delay in use, seconds. */
  delaySeconds: number;
  timeline: CapacityTimeline;
  /** The last scale observed complete, ms (−∞ when none is stored). */
  lastScaleMs: number;
  /** Samples before this are not trusted for scale-in, ms (+∞ while an update is in flight). */
  settleUntilMs: number | undefined;
}

/**
 * Stage 1: the window of this pass (see the module comment) from `samples` with the instance at
 * `currentUnits`. A failed fetch reads no sample.
 */
export function observeWindow(
  basis: DecisionBasis,
  samples: readonly MetricSample[],
  currentUnits: number,
): ObservedWindow {
  const { history, inFlight, failure, nowMs, times } = basis;
  const lastScaleMs = [history.lastScaleTime, ...history.scaleEvents.map((e) => e.time)]
    .map(parseTime)
    .filter((t) => Number.isFinite(t))
    .reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
  const settleUntilMs = inFlight
    ? Number.POSITIVE_INFINITY
    : Number.isFinite(lastScaleMs)
      ? lastScaleMs + times.settleSeconds * 1000
      : undefined;
  const timeline = capacityTimeline(unitChanges(history.scaleEvents, inFlight), currentUnits);
  // Buckets that may still be filling are never read as complete (ingestion.ts).
  const ingestion = failure ? history.ingestion : observeIngestion(history.ingestion, samples, nowMs);
  const delaySeconds = effectiveIngestionDelay(times.ingestionDelaySeconds, ingestion);
  const window = windowSamples(failure ? [] : samples, {
    nowMs,
    windowSeconds: times.windowSeconds,
    ingestionDelaySeconds: delaySeconds,
    maxSampleAgeSeconds: times.maxSampleAgeSeconds,
    settleUntilMs,
    maxUnitsAt: timeline.maxUnitsAt,
  });
  return { window, ingestion, delaySeconds, timeline, lastScaleMs, settleUntilMs };
}

/** A metrics query of the pass that failed while others answered (decide.ts `PartialFailure`). */
export interface FailedQuery extends PassFailure {
  fields: readonly SampleField[];
}

/**
 * What the window left out or reads differently, in this order: buckets too new, buckets that
 * overlap a change, a longer ingestion delay observed, unreadable times, invalid and saturated
 * samples, idle counters, failed queries (not on a failed fetch).
 */
export function windowReasons(
  basis: DecisionBasis,
  observed: ObservedWindow,
  samples: readonly MetricSample[],
  partialFailures: readonly FailedQuery[],
): Reason[] {
  const { times } = basis;
  const { window, delaySeconds } = observed;
  const out: Reason[] = [];
  if (window.ignored.tooNew > 0) {
    out.push(
      reason(
        "SamplesIgnored",
        `${window.ignored.tooNew} bucket(s) newer than the ingestion delay (${delaySeconds}s) ignored: still filling`,
      ),
    );
  }
  const overlap = overlapReason(window, observed.timeline);
  if (overlap) out.push(overlap);
  if (delaySeconds > times.ingestionDelaySeconds) {
    out.push(
      reason(
        "IngestionDelayObserved",
        `buckets were seen still filling ${storedObservedDelay(observed.ingestion)}s after they ended: reading buckets at least ${delaySeconds}s old, not the ${times.ingestionDelaySeconds}s of spec.metrics.ingestionDelay (raise it to ${formatDuration(delaySeconds)})`,
      ),
    );
  }
  out.push(...findingReasons(window));
  // Traffic counters read as 0 because Azure answered them empty on an idle instance (idle-counters.ts).
  const idleCounters = counterIdleZeroReason(samples, window);
  if (idleCounters) out.push(idleCounters);
  if (!basis.failure) {
    for (const p of partialFailures) {
      out.push(
        reason(
          "MetricsPartial",
          `${p.fields.join(", ")} unknown this pass, not zero: their query failed (${p.kind}): ${p.message}`,
          { name: p.kind },
        ),
      );
    }
  }
  return out;
}

/** `OverlapsScale`: the window's buckets that may have been served by two sizes, if any. */
function overlapReason(window: SampleWindow, timeline: CapacityTimeline): Reason | undefined {
  const overlaps = window.buckets.filter((b) => b.sample && timeline.overlapsChange(b.start));
  const overlapped = overlaps[0] && timeline.changesAt(overlaps[0].start)[0];
  if (overlaps.length === 0 || !overlapped) return undefined;
  const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);
  const first = overlaps[0]?.start ?? 0;
  const last = overlaps.at(-1)?.start ?? 0;
  const done = Number.isFinite(overlapped.completedMs)
    ? `observed complete at ${hhmm(overlapped.completedMs)}`
    : "still in flight";
  return reason(
    "OverlapsScale",
    `${overlaps.length} bucket(s) (${hhmm(first)}${last > first ? `–${hhmm(last)}` : ""} UTC) overlap the change ${overlapped.fromUnits} → ${overlapped.toUnits} units (${Number.isFinite(overlapped.startedMs) ? `sent at ${hhmm(overlapped.startedMs)}` : "found on the instance, start unknown"}, ${done}): read at the smaller size, ${Math.min(overlapped.fromUnits, overlapped.toUnits)} units, and never trusted for scale-in`,
  );
}

/** Unreadable sample times, invalid samples (left out) and saturated ones (read as at ceiling). */
function findingReasons(window: SampleWindow): Reason[] {
  const out: Reason[] = [];
  const invalid = window.findings.filter((f) => f.kind === "invalid");
  const unreadable = window.ignored.invalid - invalid.length;
  if (unreadable > 0) {
    out.push(reason("SamplesIgnored", `${unreadable} unreadable sample time(s) ignored`));
  }
  if (invalid.length > 0) {
    out.push(
      reason("SampleInvalid", `left out, not demand: ${describeFindings(invalid)}`, {
        name: invalid[0]?.field,
      }),
    );
  }
  const atCeiling = window.findings.filter((f) => f.kind === "saturated");
  if (atCeiling.length > 0) {
    out.push(reason("SampleAtCeiling", `read as saturated: ${describeFindings(atCeiling)}`));
  }
  return out;
}

/**
 * The peak levels of the window's buckets that start at or after `fromMs`, as measured: server
 * load %, connections (each bucket's by the rule of connections.ts), inbound + outbound bytes/s.
 */
export function windowLevels(
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
