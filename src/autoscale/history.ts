/**
 * Decision history: what the caller stores in `status` and hands back on the next pass, so that
 * stabilization windows, rate policies, the settle window and the failure count survive a restart
 * or a leader failover. Bounded: at most 60 recommendations and 30 scale events.
 */
import { MAX_RECOMMENDATIONS, MAX_SCALE_EVENTS } from "../api/constants.js";
import type {
  AnticipationStatus,
  CapacityPolicyStatus,
  NotServingStatus,
  Recommendation,
  ScaleEvent,
  ScaleInRecord,
} from "../api/index.js";
import { isScalableSku, type SkuName, type SkuUnits } from "../capacity/skus.js";
import type { IngestionState } from "./ingestion.js";
import { compareSizes } from "./sizes.js";
import type { SignalLevels } from "./suspect.js";
import { parseTime } from "./time.js";

export type { Recommendation, ScaleEvent };

/** The history a decision reads and returns (the same shapes as the status fields). */
export interface DecisionHistory {
  /** Recent metric recommendations, oldest first (≤ 60). */
  recommendations: Recommendation[];
  /** Recent applied capacity changes, oldest first (≤ 30). */
  scaleEvents: ScaleEvent[];
  /** When the unit count or SKU last changed, RFC 3339. */
  lastScaleTime?: string;
  /** Consecutive failed passes (no usable metrics, throttled, auth, API errors), passes. */
  consecutiveFailures: number;
  /** How late metric buckets complete, as observed (ingestion.ts). */
  ingestion?: IngestionState;
  /** When the instance itself last did not serve (failover.ts `notServingHold`). */
  notServing?: NotServingStatus;
  /** What anticipation kept from the last pass (anticipation.ts): peaks, growth, scale duration. */
  anticipation?: AnticipationStatus;
  /** Recent scale-ins and how long each held (scale-ins.ts), oldest first (≤ 10). */
  scaleIns?: ScaleInRecord[];
}

/** A history with nothing in it (a policy seen for the first time). */
export function emptyHistory(): DecisionHistory {
  return { recommendations: [], scaleEvents: [], consecutiveFailures: 0 };
}

/** The history stored in a policy's status (missing fields are empty). */
export function historyFromStatus(status: Partial<CapacityPolicyStatus> | undefined): DecisionHistory {
  const h: DecisionHistory = {
    recommendations: [...(status?.recommendations ?? [])],
    scaleEvents: [...(status?.scaleEvents ?? [])],
    consecutiveFailures: status?.consecutiveFailures ?? 0,
  };
  if (status?.lastScaleTime !== undefined) h.lastScaleTime = status.lastScaleTime;
  if (status?.ingestion !== undefined) h.ingestion = status.ingestion;
  if (status?.notServing !== undefined) h.notServing = status.notServing;
  if (status?.anticipation !== undefined) h.anticipation = status.anticipation;
  if (status?.scaleIns !== undefined) h.scaleIns = [...status.scaleIns];
  return h;
}

const ms = parseTime;

/**
 * A clean copy of a stored history: entries with unreadable times or SKUs dropped, each list
 * sorted oldest first (stable), a negative or fractional failure count made a whole number ≥ 0.
 * With `nowMs`, a time later than now (a recommendation, a scale event or its `startedAt`,
 * `lastScaleTime`) is read as now: the status can be written by others, and a time to come would
 * keep a stabilization window, a rate-policy period or the settle window open for good.
 */
export function normalizeHistory(history: DecisionHistory | undefined, nowMs?: number): DecisionHistory {
  if (!history) return emptyHistory();
  const nowIso = nowMs === undefined ? undefined : new Date(nowMs).toISOString();
  const capped = (t: string): string => (nowIso !== undefined && ms(t) > (nowMs as number) ? nowIso : t);
  const byTime = <T extends { time: string; startedAt?: string }>(xs: readonly T[] | undefined): T[] =>
    (xs ?? [])
      .filter((x) => typeof x?.time === "string" && Number.isFinite(ms(x.time)))
      .map((x, i) => ({ x, i, t: ms(x.time) }))
      .sort((a, b) => a.t - b.t || a.i - b.i)
      .map(({ x }) => {
        const out = { ...x, time: capped(x.time) };
        if (typeof x.startedAt === "string") out.startedAt = capped(x.startedAt);
        return out;
      });
  const recs = byTime(history.recommendations).filter(
    (r) => isScalableSku(r.sku) && Number.isFinite(r.units) && r.units > 0,
  );
  const events = byTime(history.scaleEvents).filter(
    (e) => Number.isFinite(e.fromUnits) && Number.isFinite(e.toUnits) && isScalableSku(e.toSku),
  );
  const failures = Number.isFinite(history.consecutiveFailures)
    ? Math.max(0, Math.floor(history.consecutiveFailures))
    : 0;
  const out: DecisionHistory = { recommendations: recs, scaleEvents: events, consecutiveFailures: failures };
  if (typeof history.lastScaleTime === "string" && Number.isFinite(ms(history.lastScaleTime))) {
    out.lastScaleTime = capped(history.lastScaleTime);
  }
  if (history.ingestion !== undefined) out.ingestion = history.ingestion;
  if (history.notServing !== undefined) out.notServing = history.notServing;
  if (history.anticipation !== undefined) out.anticipation = history.anticipation;
  const scaleIns = (history.scaleIns ?? []).filter(
    (r) => Number.isFinite(ms(r?.time)) && (r.endedAt === undefined || Number.isFinite(ms(r.endedAt))),
  );
  if (scaleIns.length > 0) out.scaleIns = scaleIns;
  return out;
}

/**
 * Bounds the recommendations without changing any stabilization result:
 * 1. drops those not newer than `now − keepSeconds` (the longest stabilization window);
 * 2. above `max`, drops — oldest first — those no window can still pick: one that is neither
 *    larger than every newer one (a scale-down window's maximum) nor smaller than every newer one
 *    (a scale-up window's minimum). This loses nothing;
 * 3. only if still above `max`, drops the oldest.
 * The newest recommendation is always kept.
 */
export function compactRecommendations(
  recs: readonly Recommendation[],
  nowMs: number,
  keepSeconds: number,
  max: number = MAX_RECOMMENDATIONS,
): Recommendation[] {
  const cutoff = nowMs - keepSeconds * 1000;
  const last = recs[recs.length - 1];
  let kept = recs.filter((r) => ms(r.time) > cutoff);
  if (kept.length === 0 && last) kept = [last];
  if (kept.length > max) {
    const needed = new Array<boolean>(kept.length).fill(false);
    let hi: Recommendation | undefined;
    let lo: Recommendation | undefined;
    for (let i = kept.length - 1; i >= 0; i--) {
      const r = kept[i] as Recommendation;
      if (!hi || compareSizes(r, hi) > 0) {
        needed[i] = true;
        hi = r;
      }
      if (!lo || compareSizes(r, lo) < 0) {
        needed[i] = true;
        lo = r;
      }
    }
    let excess = kept.length - max;
    kept = kept.filter((_, i) => {
      if (excess > 0 && !needed[i]) {
        excess--;
        return false;
      }
      return true;
    });
  }
  return kept.length > max ? kept.slice(kept.length - max) : kept;
}

/**
 * Bounds the scale events: keeps those newer than `now − keepSeconds` (the longest rate-policy
 * period, or the sample horizon) and always the newest one (the last change, which a signal is
 * checked against: suspect.ts), at most `max`, newest kept.
 */
export function pruneScaleEvents(
  events: readonly ScaleEvent[],
  nowMs: number,
  keepSeconds: number,
  max: number = MAX_SCALE_EVENTS,
): ScaleEvent[] {
  const kept = events.filter((e, i) => i === events.length - 1 || ms(e.time) > nowMs - keepSeconds * 1000);
  return kept.length > max ? kept.slice(kept.length - max) : kept;
}

/** A capacity change as the controller applied it. */
export interface AppliedScale {
  /** When its completion was observed, RFC 3339. */
  time: string;
  /** When the update was sent, RFC 3339 (absent: at `time`). */
  startedAt?: string;
  /** The window's peak levels when the update was sent. */
  before?: SignalLevels;
  from: { sku: SkuName; units: number };
  to: SkuUnits;
  /** Found on the instance, not sent by a recorded update (recovery.ts): its start is unknown. */
  recovered?: boolean;
}

/**
 * The history after the controller applied a scale: the event appended (≤ 30 kept) and
 * `lastScaleTime` set. `decide` never records scale events itself — only the caller knows whether
 * ARM accepted the update.
 */
export function recordScale(history: DecisionHistory, scale: AppliedScale): DecisionHistory {
  const event: ScaleEvent = {
    time: scale.time,
    ...(scale.startedAt !== undefined ? { startedAt: scale.startedAt } : {}),
    ...(scale.before !== undefined ? { before: scale.before } : {}),
    fromSku: scale.from.sku,
    fromUnits: scale.from.units,
    toSku: scale.to.sku,
    toUnits: scale.to.units,
    ...(scale.recovered ? { recovered: true } : {}),
  };
  const events = [...history.scaleEvents, event];
  return {
    ...history,
    scaleEvents: events.length > MAX_SCALE_EVENTS ? events.slice(events.length - MAX_SCALE_EVENTS) : events,
    lastScaleTime: scale.time,
  };
}
