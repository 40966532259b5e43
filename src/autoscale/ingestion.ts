/**
 * How late Azure Monitor's buckets really complete, learned from the buckets themselves.
 *
 * A one-minute bucket of a total (MessageCount, InboundTraffic, OutboundTraffic) keeps growing
 * while Azure Monitor ingests it. Each pass remembers the totals of the newest buckets it saw; when
 * a later pass sees one of them larger, that bucket was still filling when it was seen before, so
 * the ingestion delay is longer than the bucket's age then (age = time since the bucket ended).
 *
 * Pinned semantics:
 * - growth: the sum of a bucket's known totals rose by more than 0.1 % (and more than 1e-9);
 * - an observation is the age of the bucket at the earlier pass, seconds; the observed delay is the
 *   largest observation of the last {@link OBSERVATION_TTL_SECONDS} (6 hours) — an older one is
 *   forgotten when a new one comes, so a faster Azure Monitor is followed;
 * - the delay a decision uses is the larger of the policy's `ingestionDelay` and the observed delay
 *   rounded up to the next whole minute (a bucket seen filling at 1 min 59 s needs 2 min): buckets
 *   that may still be filling are never read as complete, whatever the setting says;
 * - at most {@link MAX_REMEMBERED_BUCKETS} (10) buckets are remembered;
 * - the observed delay is read back from `status`, which anyone allowed to write the status can
 *   change: a stored value that is not a finite number ≥ 0 is dropped, one above
 *   {@link MAX_INGESTION_DELAY_SECONDS} (1 h, the bound of `spec.metrics.ingestionDelay`) is read as
 *   1 h, and an `observedAt` later than now as now — so the delay in use, and with it the look-back
 *   of the metrics read, never exceeds what a spec may ask for (and an observation is always
 *   forgotten in time);
 * - a bucket of the window that the previous pass saw with other totals (by more than 0.1 %) when
 *   it was already as old as the delay in use is still filling: the delay was too short for it,
 *   and it never justifies a scale-in. A bucket the previous pass saw younger than that delay was
 *   expected to change, and one it did not see yet is taken as the delay says: the delay already
 *   accounts for every growth observed. (Otherwise a bucket that enters the window at a pass
 *   after one that saw it filling would block scale-in, and with passes that land so, scale-in
 *   would never be allowed again. The first pass of a policy has nothing to compare with, and the
 *   scale-down stabilization window opens with the current size on first sight.)
 */
import { MAX_INGESTION_DELAY_SECONDS } from "../api/constants.js";
import type { MetricSample } from "./samples.js";
import { parseTime, timeOf } from "./time.js";

/** How long an observation counts, seconds (6 hours). */
const OBSERVATION_TTL_SECONDS = 6 * 3600;
/** Buckets remembered between passes. */
const MAX_REMEMBERED_BUCKETS = 10;

/** What passes remember about ingestion (kept in `status.ingestion`). */
export interface IngestionState {
  /** The longest time after its end that a bucket was seen still filling, seconds. */
  observedDelaySeconds?: number;
  /** When that was observed, RFC 3339. */
  observedAt?: string;
  /** When the remembered totals were seen, RFC 3339. */
  seenAt?: string;
  /** The newest buckets' totals as last seen: bucket start (RFC 3339) and the sum of its totals. */
  buckets?: { time: string; total: number }[];
}

const MINUTE_MS = 60_000;
const GROWTH = 1e-3;

/**
 * A stored observed delay as a decision may use it, seconds: undefined when absent or not a finite
 * number ≥ 0, at most {@link MAX_INGESTION_DELAY_SECONDS}.
 */
export function storedObservedDelay(state: IngestionState | undefined): number | undefined {
  const v = state?.observedDelaySeconds;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) return undefined;
  return Math.min(v, MAX_INGESTION_DELAY_SECONDS);
}

/** The sum of a sample's known totals, or undefined when none is known. */
function totalOf(s: MetricSample): number | undefined {
  let sum = 0;
  let any = false;
  for (const v of [s.messagesPerSecond, s.inboundBytesPerSecond, s.outboundBytesPerSecond]) {
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) {
      sum += v;
      any = true;
    }
  }
  return any ? sum : undefined;
}

/** The largest known total of each one-minute bucket of `samples`, by bucket start (ms). */
function bucketTotals(samples: readonly MetricSample[]): Map<number, number> {
  const byStart = new Map<number, number>();
  for (const s of samples) {
    const t = timeOf(s.time);
    const total = totalOf(s);
    if (!Number.isFinite(t) || total === undefined) continue;
    const start = Math.floor(t / MINUTE_MS) * MINUTE_MS;
    byStart.set(start, Math.max(byStart.get(start) ?? 0, total));
  }
  return byStart;
}

/** An observed delay (seconds) and when it was observed (RFC 3339). */
interface Observation {
  observed: number | undefined;
  observedAt: string | undefined;
}

/**
 * The stored observation as this pass reads it: forgotten when older than
 * {@link OBSERVATION_TTL_SECONDS} or unreadable, its time read as now when it lies ahead.
 */
function storedObservation(state: IngestionState | undefined, nowMs: number): Observation {
  const observed = storedObservedDelay(state);
  const observedAt = observed === undefined ? undefined : state?.observedAt;
  const observedMs = parseTime(observedAt);
  if (observedAt !== undefined && !(nowMs - observedMs <= OBSERVATION_TTL_SECONDS * 1000)) {
    // Older than the TTL, or unreadable: forgotten.
    return { observed: undefined, observedAt: undefined };
  }
  // A time to come would never expire: read as now.
  if (observedMs > nowMs) return { observed, observedAt: new Date(nowMs).toISOString() };
  return { observed, observedAt };
}

/**
 * `prior` raised by the remembered buckets of `state` that grew since they were seen (their age
 * then, seconds, at most {@link MAX_INGESTION_DELAY_SECONDS}).
 */
function grownObservation(
  prior: Observation,
  state: IngestionState | undefined,
  byStart: ReadonlyMap<number, number>,
  nowMs: number,
): Observation {
  const seenMs = parseTime(state?.seenAt);
  if (!(Number.isFinite(seenMs) && seenMs < nowMs)) return prior;
  let { observed, observedAt } = prior;
  for (const b of state?.buckets ?? []) {
    const start = parseTime(b.time);
    const now = byStart.get(start);
    if (now === undefined || !(now > b.total * (1 + GROWTH) + 1e-9)) continue;
    const age = (seenMs - (start + MINUTE_MS)) / 1000;
    if (age > 0 && (observed === undefined || age >= observed)) {
      observed = Math.min(age, MAX_INGESTION_DELAY_SECONDS);
      observedAt = new Date(nowMs).toISOString();
    }
  }
  return { observed, observedAt };
}

/** The state after this pass's samples (see the module comment). Pure. */
export function observeIngestion(
  state: IngestionState | undefined,
  samples: readonly MetricSample[],
  nowMs: number,
): IngestionState {
  const byStart = bucketTotals(samples);
  const { observed, observedAt } = grownObservation(storedObservation(state, nowMs), state, byStart, nowMs);
  const newest = [...byStart.entries()].sort((a, b) => a[0] - b[0]).slice(-MAX_REMEMBERED_BUCKETS);
  // The same bucket keeps its time text from pass to pass.
  const texts = new Map((state?.buckets ?? []).map((b) => [parseTime(b.time), b.time]));
  const out: IngestionState = {
    seenAt: new Date(nowMs).toISOString(),
    buckets: newest.map(([start, total]) => ({
      time: texts.get(start) ?? new Date(start).toISOString(),
      total,
    })),
  };
  if (observed !== undefined && observedAt !== undefined) {
    out.observedDelaySeconds = Math.round(observed);
    out.observedAt = observedAt;
  }
  return out;
}

/**
 * Starts (ms) of the buckets in `[fromMs, toMs)` that `current` (this pass) saw with other totals
 * than `previous` (the last pass) had for them when they were already `delaySeconds` old (the
 * delay this pass uses, seconds): they are still filling although the delay calls them complete.
 */
export function fillingBuckets(
  previous: IngestionState | undefined,
  current: IngestionState,
  fromMs: number,
  toMs: number,
  delaySeconds: number,
): number[] {
  const seenMs = parseTime(previous?.seenAt);
  if (!Number.isFinite(seenMs)) return [];
  const before = new Map((previous?.buckets ?? []).map((b) => [parseTime(b.time), b.total]));
  const out: number[] = [];
  for (const b of current.buckets ?? []) {
    const start = parseTime(b.time);
    if (start < fromMs || start >= toMs) continue;
    // Younger than the delay when last seen: expected to change since.
    if (seenMs - (start + MINUTE_MS) < delaySeconds * 1000) continue;
    const seen = before.get(start);
    if (seen !== undefined && Math.abs(b.total - seen) > Math.max(seen, b.total) * GROWTH + 1e-9) {
      out.push(start);
    }
  }
  return out;
}

/**
 * The ingestion delay a decision uses, seconds: the policy's, or the observed delay rounded up to
 * the next whole minute when that is longer — never above {@link MAX_INGESTION_DELAY_SECONDS}
 * (1 h) unless the policy's is (see {@link storedObservedDelay}).
 */
export function effectiveIngestionDelay(policySeconds: number, state: IngestionState | undefined): number {
  const observed = storedObservedDelay(state);
  if (observed === undefined) return policySeconds;
  return Math.max(policySeconds, Math.min(Math.floor(observed / 60) * 60 + 60, MAX_INGESTION_DELAY_SECONDS));
}
