/**
 * The leading signal: the app servers' own count of clients arriving, read from Prometheus seconds
 * after the fact instead of Azure Monitor's minutes, and still counting the clients a full
 * connection quota turns away. Pure: readings and time come in as arguments.
 *
 * In SignalR default mode (and for most Web PubSub clients) every client first calls the app's
 * negotiate endpoint, so the negotiate rate is the arrival rate of demand. With clients staying
 * connected `W` seconds on average, concurrent demand approaches `λ · W` (Little's law) with time
 * constant `W`:
 *
 *   D(T) = λ·W + (D₀ − λ·W) · e^(−(T − t₀) / W)
 *
 * where `λ` is the newest arrival rate (clients/s), `D₀` the newest connection count Azure Monitor
 * reported (at the middle of its bucket, `t₀`; a lower bound while the quota is full) and `T` the
 * target time (now + scale duration + one poll interval). Without an Azure connection count the
 * steady state `λ·W` is used.
 *
 * Pinned semantics:
 * - **Lifetime** `W`: `spec.connectionLifetime` when set, else measured: the median of
 *   `connections ÷ λ` over the pairs of an uncensored Azure bucket (`DemandPoint.censored`) and the reading nearest its end
 *   (within {@link PAIR_SLACK_MS}), once {@link MIN_PAIRS} pairs exist; then kept in status and
 *   reused while no pairs exist (a full quota). Before that: `Calibrating`, nothing asked.
 * - **A rising rate** is continued over the lead (`risingRate`): when the rates of the last
 *   {@link RATE_RISE_SPAN_MS} rise consistently and beyond the tolerance (the Trend rule's tests), `λ` in
 *   the projection is the mean rate expected until `T`, `λ + slope × (T − newest reading) ÷ 2`, at
 *   most `λ × (1 + MAX_RATE_RISE)`; the status keeps the rate read.
 * - **Measures**: NewConnectionsPerSecond reads `λ` as the value; NewConnectionsTotal takes the
 *   increase per second between the two newest readings, and a decrease is a counter reset (the
 *   increase is then the new value, as Prometheus's `rate()` reads it); Connections is the
 *   concurrent demand itself (no lifetime, no projection).
 * - **Reconnects are not arrivals**: a unit change disconnects clients (`traffic/disconnections.ts`:
 *   the removed units' share of the connections at a scale-in), and they reconnect within 30 s,
 *   each negotiating again — a burst of negotiations that is not new demand. It stays in the
 *   readings for as long as the query's rate window lasts, and reads up to twice its size there
 *   (`leading-window.ts`: `rate()` extrapolates the increase between the samples within its range to
 *   the range's ends). For a reading taken from when the change was sent until
 *   {@link RECONNECT_SETTLE_MS} plus the rate window after it was seen complete, the rate is lowered
 *   by the most the burst can add — `RATE_EXTRAPOLATION` × the clients it disconnected ÷ the rate
 *   window (the query's longest range, 1 minute when it shows none); for a counter, the clients ÷ the
 *   readings' spacing (at least a minute), the increase the operator takes itself — and never below
 *   the newest rate read before the change: arrivals up to what the reconnects explain are
 *   discounted, the rest still counts. The same discounted rates pair with Azure's connection
 *   count for the measured lifetime.
 * - **Held to what Azure's count makes plausible** (`leading-plausibility.ts`): when the rates
 *   read between two buckets Azure measured counted more than twice the arrivals its connection
 *   count explains (its growth plus the departures replaced, at lifetime `W`), the newest rate is
 *   scaled to the explained share before it is projected, and the ask and status say so.
 * - **Unknown is ignored**: a failed read, a reading older than {@link MAX_READING_AGE_MS}, a
 *   negative value, or a counter with no earlier reading ask for nothing and say why
 *   (`Unavailable`). The signal only ever adds an ask; it never lowers capacity.
 */
import { median } from "simple-statistics";
import { durationOr } from "../api/duration.js";
import type { AnticipationStatus, LeadingSignalSpec } from "../api/index.js";
import { type ArrivalPlausibility, arrivalPlausibility } from "./leading-plausibility.js";
import { RATE_EXTRAPOLATION, rateWindowSeconds } from "./leading-window.js";
import type { DemandSeries } from "./signals.js";
import { censoredAt, fmt } from "./signals.js";
import { beyondTolerance, consistentRise } from "./trend.js";

/** One successful read of the leading signal's query. */
export interface LeadingReading {
  /** Evaluation time, ms since the epoch. */
  timeMs: number;
  /** The query's value, in the unit `spec.measures` names. */
  value: number;
}

/** What the caller read from Prometheus for one policy. */
export interface LeadingObservation {
  /** Successful reads, oldest first (the caller keeps about the last 30 minutes). */
  readings: readonly LeadingReading[];
  /** This pass's read failed: why (an error kind such as `Timeout`) and in words. */
  error?: { reason: string; message: string };
}

/** What the leading signal asks for: un-snapped units, and why. */
export interface LeadingAsk {
  units: number;
  message: string;
}

/** The leading signal's part of `status.anticipation`. */
export type LeadingStatus = NonNullable<AnticipationStatus["leading"]>;

/** Everything the leading signal reads. */
export interface LeadingInput {
  spec: LeadingSignalSpec;
  observation: LeadingObservation | undefined;
  nowMs: number;
  /** When capacity decided now is in place: now + scale duration + one poll interval, ms. */
  targetMs: number;
  /** Connections one unit carries at the policy's connections target (1,000 × target%). */
  connectionsPerUnit: number;
  /** The scale-up tolerance, a share: a rise of the rate within twice this is not continued. */
  tolerance: number;
  /** Azure Monitor's connections need per bucket (signals.ts), when the policy reads connections. */
  connections?: DemandSeries | undefined;
  /** What the last pass stored (for a measured lifetime kept through a full quota). */
  previous?: LeadingStatus | undefined;
  /** Recent unit changes and the clients each disconnected (see the module comment). */
  changes?: readonly UnitChangeReconnects[] | undefined;
}

/** A unit change, as far as its reconnects go. */
export interface UnitChangeReconnects {
  /** When the update was sent (or, not known, seen complete), ms. */
  startedMs: number;
  /** When it was seen complete, ms. */
  observedMs: number;
  /** Clients it disconnected (an estimate: the removed units' share of the connections). */
  disconnected: number;
}

/**
 * How long after a change is seen complete its reconnects may still be counted, besides the rate
 * window itself, ms: 2 minutes — the reconnect schedule's 30 s, a scrape interval and the polls
 * between completion and its observation.
 */
export const RECONNECT_SETTLE_MS = 2 * 60_000;

/** How a reading counts a burst of negotiations: over how long, and how much larger (`leading-window.ts`). */
export interface BurstWindow {
  /** How long the burst stays in the readings (the rate's range, or the readings' spacing), ms. */
  windowMs: number;
  /** How much larger than it was a burst can read, ≥ 1. */
  extrapolation: number;
}

/** The burst window of readings of `measures` by `query` (see the module comment), `spacingMs` apart. */
function burstWindow(measures: LeadingSignalSpec["measures"], query: string, spacingMs: number): BurstWindow {
  if (measures === "NewConnectionsTotal")
    return { windowMs: Math.max(MINUTE_MS, spacingMs), extrapolation: 1 };
  return { windowMs: rateWindowSeconds(query) * 1000, extrapolation: RATE_EXTRAPOLATION };
}

/**
 * The arrival rate at `timeMs` with the reconnects of recent changes taken out (see the module
 * comment): `rate − extrapolation · disconnected ÷ window` for each change whose span (from when it
 * was sent to {@link RECONNECT_SETTLE_MS} + the window after it was seen complete) holds the
 * reading, never below `floor` (the newest rate before the change); the rate itself otherwise.
 */
export function withoutReconnects(
  rate: number,
  timeMs: number,
  burst: BurstWindow,
  changes: readonly UnitChangeReconnects[] | undefined,
  floorOf: (beforeMs: number) => number | undefined,
): number {
  let out = rate;
  for (const c of changes ?? []) {
    const spanEnd = c.observedMs + RECONNECT_SETTLE_MS + burst.windowMs;
    if (!(c.disconnected > 0) || timeMs < c.startedMs || timeMs > spanEnd) continue;
    const floor = Math.min(out, floorOf(c.startedMs) ?? 0);
    out = Math.max(floor, out - (burst.extrapolation * c.disconnected * 1000) / burst.windowMs);
  }
  return out;
}

/** How long a caller keeps readings (pairs for the lifetime span Azure's window and delay), ms. */
export const READINGS_KEPT_MS = 30 * 60_000;

/**
 * Appends `reading` (when newer than the newest kept) to `readings` and drops those older than
 * {@link READINGS_KEPT_MS} before `nowMs`. Mutates and returns `readings`.
 */
export function keepReading(
  readings: LeadingReading[],
  reading: LeadingReading | undefined,
  nowMs: number,
): LeadingReading[] {
  if (reading && (readings.at(-1)?.timeMs ?? Number.NEGATIVE_INFINITY) < reading.timeMs)
    readings.push(reading);
  while (readings.length > 0 && nowMs - (readings[0] as LeadingReading).timeMs > READINGS_KEPT_MS)
    readings.shift();
  return readings;
}

/** Readings older than this are stale: ignored, ms. */
export const MAX_READING_AGE_MS = 5 * 60_000;
/** A reading pairs with an Azure bucket when it is this close to the bucket's end, ms. */
const PAIR_SLACK_MS = 45_000;
/** Pairs needed before a measured lifetime is trusted. */
export const MIN_PAIRS = 3;
const MINUTE_MS = 60_000;

const iso = (ms: number) => new Date(ms).toISOString();

/** The per-second arrival rate from the newest readings (see the module comment), or why not. */
export function arrivalRate(
  measures: LeadingSignalSpec["measures"],
  readings: readonly LeadingReading[],
): { perSecond: number } | { reason: string; message: string } {
  const newest = readings.at(-1);
  if (!newest) return { reason: "NoData", message: "no reading yet" };
  const perSecond = rateAt(measures, newest, readings.at(-2));
  if (perSecond === undefined) {
    return { reason: "NoPreviousReading", message: "a counter needs two readings for a rate" };
  }
  return { perSecond };
}

/** The arrival rate at `reading` (after `before`), or undefined for a counter without an earlier reading. */
function rateAt(
  measures: LeadingSignalSpec["measures"],
  reading: LeadingReading,
  before: LeadingReading | undefined,
): number | undefined {
  if (measures !== "NewConnectionsTotal") return reading.value;
  if (!before || reading.timeMs <= before.timeMs) return undefined;
  const increase = reading.value >= before.value ? reading.value - before.value : reading.value;
  return (increase * 1000) / (reading.timeMs - before.timeMs);
}

/**
 * The arrival rate at each reading (for pairing), as `[timeMs, perSecond]`, with the reconnects of
 * `changes` taken out ({@link withoutReconnects}).
 */
function ratesOf(
  spec: LeadingSignalSpec,
  readings: readonly LeadingReading[],
  changes?: readonly UnitChangeReconnects[],
): [number, number][] {
  const raw: [number, number, number][] = [];
  readings.forEach((r, i) => {
    const before = readings[i - 1];
    const perSecond = rateAt(spec.measures, r, before);
    if (perSecond !== undefined) raw.push([r.timeMs, perSecond, before ? r.timeMs - before.timeMs : 0]);
  });
  /** The newest raw rate read before `ms`. */
  const floorOf = (ms: number) => raw.findLast(([t]) => t < ms)?.[1];
  return raw.map(([t, rate, spacing]) => [
    t,
    withoutReconnects(rate, t, burstWindow(spec.measures, spec.prometheus.query, spacing), changes, floorOf),
  ]);
}

/**
 * Measured lifetimes (seconds) of the pairs of Azure buckets that measure the demand (not
 * censored: a full quota or the old ceiling during a change counts only the clients let in) and
 * readings.
 */
function lifetimePairs(
  rates: readonly [number, number][],
  connections: DemandSeries | undefined,
  connectionsPerUnit: number,
): number[] {
  const out: number[] = [];
  for (const p of connections?.points ?? []) {
    if (censoredAt(p) || p.units <= 0) continue;
    const end = p.start + MINUTE_MS;
    let best: [number, number] | undefined;
    for (const r of rates) {
      if (Math.abs(r[0] - end) <= PAIR_SLACK_MS && (!best || Math.abs(r[0] - end) < Math.abs(best[0] - end)))
        best = r;
    }
    if (best && best[1] > 0) out.push((p.units * connectionsPerUnit) / best[1]);
  }
  return out;
}

/** Why the signal is ignored this pass: an error kind (`Stale`, `Timeout`, …) and in words. */
interface Refusal {
  reason: string;
  message: string;
}

/**
 * The status of a signal that asks for nothing, and why (`Unavailable`). A measured lifetime is
 * kept through an outage.
 */
function unavailable(refusal: Refusal, previous: LeadingStatus | undefined): { status: LeadingStatus } {
  const status: LeadingStatus = {
    state: "Unavailable",
    reason: refusal.reason,
    message: `ignored: ${refusal.message}`.slice(0, 512),
  };
  if (previous?.lifetimeSource === "Measured" && previous.lifetimeSeconds !== undefined) {
    status.lifetimeSeconds = previous.lifetimeSeconds;
    status.lifetimeSource = "Measured";
  }
  return { status };
}

/**
 * The readings and the newest of them when it is usable: read on this pass, without an error, at
 * most {@link MAX_READING_AGE_MS} old, finite and not negative; else why not.
 */
function usableReadings(
  observation: LeadingObservation | undefined,
  nowMs: number,
): { readings: readonly LeadingReading[]; newest: LeadingReading } | Refusal {
  if (!observation) return { reason: "NotRead", message: "not read on this pass" };
  if (observation.error) return observation.error;
  const readings = observation.readings;
  const newest = readings.at(-1);
  if (!newest) return { reason: "NoData", message: "no reading yet" };
  if (nowMs - newest.timeMs > MAX_READING_AGE_MS) {
    return { reason: "Stale", message: `the newest reading is from ${iso(newest.timeMs)}` };
  }
  if (!Number.isFinite(newest.value))
    return { reason: "NotFinite", message: `the query returned ${newest.value}` };
  if (newest.value < 0)
    return { reason: "Negative", message: `the query returned ${newest.value}, not a count or rate` };
  return { readings, newest };
}

/** The newest reading in status: its time, and its value where it is not the rate shown beside it. */
type ReadingStatus = { readAt: string } | { value: number; readAt: string };

/** The ask of measure Connections: the concurrent demand itself (no lifetime, no projection). */
function connectionsOutcome(
  newest: LeadingReading,
  base: ReadingStatus,
  connectionsPerUnit: number,
): { ask: LeadingAsk; status: LeadingStatus } {
  const units = newest.value / connectionsPerUnit;
  return {
    ask: {
      units,
      message: `${fmt(newest.value)} client connections at ${iso(newest.timeMs).slice(11, 19)} UTC (Prometheus): ${fmt(units)} units`,
    },
    status: {
      state: "Ok",
      ...base,
      connections: Math.round(newest.value),
      message: `${fmt(newest.value)} client connections now: ${fmt(units)} units`,
    },
  };
}

/**
 * The connection lifetime `W`, seconds, and where it comes from: the spec's, else the median of
 * at least {@link MIN_PAIRS} measured pairs of Azure buckets and `rates` (reconnects taken out),
 * else the one measured before; none while calibrating.
 */
function connectionLifetime(
  input: LeadingInput,
  rates: readonly [number, number][],
): { lifetime?: number | undefined; source?: "Spec" | "Measured" } {
  const { spec, previous } = input;
  if (spec.connectionLifetime !== undefined) {
    return { lifetime: durationOr(spec.connectionLifetime, 0) || undefined, source: "Spec" };
  }
  const pairs = lifetimePairs(rates, input.connections, input.connectionsPerUnit);
  if (pairs.length >= MIN_PAIRS) return { lifetime: median(pairs), source: "Measured" };
  if (previous?.lifetimeSource === "Measured" && previous.lifetimeSeconds !== undefined) {
    return { lifetime: previous.lifetimeSeconds, source: "Measured" };
  }
  return {};
}

/** The readings a rise of the arrival rate is fitted on: those of the last 2 minutes, ms. */
export const RATE_RISE_SPAN_MS = 2 * 60_000;
/** The rise over the lead adds at most this share of the newest rate: at most half again. */
export const MAX_RATE_RISE = 0.5;

/** An arrival rate that rises: the mean rate expected over the lead (clients/s), and in words. */
export interface RateRise {
  overLead: number;
  message: string;
}

/**
 * The arrival rate expected over the lead when it rises: the Theil–Sen line of the rates read in
 * the last {@link RATE_RISE_SPAN_MS} (reconnects taken out), when it rises consistently
 * (`consistentRise`: tau ≥ 0.6, a lower-quartile slope above 0, a rise above 3 × the scatter)
 * and by more than twice the tolerance band of `lambda` across them (`beyondTolerance`) — the Trend
 * rule's tests — continued from the newest reading to the target time: the mean of a rate
 * rising linearly over that lead, `λ + slope × lead ÷ 2`, at most `λ × (1 + MAX_RATE_RISE)`. A
 * crowd's arrivals still accelerate when the newest rate is read; a constant rate would size for
 * the crowd's first minute; a rate creeping up within the tolerance (the replacements of a
 * growing crowd's departures) is not continued. Undefined when the rates do not rise so.
 */
export function risingRate(
  rates: readonly [number, number][],
  lambda: number,
  targetMs: number,
  tolerance: number,
): RateRise | undefined {
  const newestMs = rates.at(-1)?.[0];
  if (newestMs === undefined || !(lambda > 0)) return undefined;
  const recent = rates.filter(([t]) => newestMs - t <= RATE_RISE_SPAN_MS);
  const rise = consistentRise(recent.map(([timeMs, value]) => ({ timeMs, value })));
  if (!rise || !beyondTolerance(rise, lambda, tolerance)) return undefined;
  const perSecondPerMinute = rise.trend.perMinute;
  const leadSeconds = Math.max(0, (targetMs - newestMs) / 1000);
  const added = Math.min(lambda * MAX_RATE_RISE, ((perSecondPerMinute / 60) * leadSeconds) / 2);
  const overLead = lambda + added;
  const capped = added >= lambda * MAX_RATE_RISE ? `, at most ×${fmt(1 + MAX_RATE_RISE)}` : "";
  return {
    overLead,
    message: `rising ${fmt(perSecondPerMinute)}/s a minute over ${recent.length} readings (tau ${fmt(rise.trend.tau)}): ${fmt(overLead)}/s over the ${fmt(Math.round(leadSeconds))} s to ${iso(targetMs).slice(11, 16)} UTC${capped}`,
  };
}

/**
 * The demand expected by the target time, connections: `λ·W + (D₀ − λ·W) · e^(−(T − t₀) / W)`
 * from Azure's newest connection count, else the steady state `λ·W`; never below 0. With the
 * start of the projection in words.
 */
function expectedConnections(
  input: LeadingInput,
  lambda: number,
  lifetime: number,
): { expected: number; how: string } {
  const steady = lambda * lifetime;
  const newestAzure = input.connections?.points.at(-1);
  if (!newestAzure) return { expected: Math.max(0, steady), how: `steady state ${fmt(Math.round(steady))}` };
  const t0 = newestAzure.start + MINUTE_MS / 2;
  const d0 = newestAzure.units * input.connectionsPerUnit;
  const decay = Math.exp(-Math.max(0, input.targetMs - t0) / 1000 / lifetime);
  return {
    expected: Math.max(0, steady + (d0 - steady) * decay),
    how: `from ${fmt(Math.round(d0))}${newestAzure.saturated ? " (quota full)" : ""} at ${iso(t0).slice(11, 16)} UTC toward ${fmt(Math.round(steady))}`,
  };
}

/**
 * The ask of an arrival rate `lambda` (clients/s, with its rise over the lead when it rises) with a
 * known lifetime (seconds): the projected demand.
 */
function projectedOutcome(
  input: LeadingInput,
  newest: LeadingReading,
  withRate: ReadingStatus & { newConnectionsPerSecond: number },
  rate: { lambda: number; rise: RateRise | undefined },
  lifetime: { seconds: number; source: "Spec" | "Measured" },
  held: ArrivalPlausibility | undefined,
): { ask: LeadingAsk; status: LeadingStatus } {
  const { targetMs } = input;
  const { lambda, rise } = rate;
  const overLead = rise ? rise.overLead : lambda;
  const projected = held ? overLead * held.share : overLead;
  const { expected, how } = expectedConnections(input, projected, lifetime.seconds);
  const heldText = held ? `; held to what Azure's count makes plausible: ${held.message}` : "";
  const riseText = rise ? ` (${rise.message})` : "";
  const units = expected / input.connectionsPerUnit;
  const w = fmt(Math.round(lifetime.seconds));
  const by = `${fmt(Math.round(expected))} connections by ${iso(targetMs).slice(11, 16)} UTC`;
  const status: LeadingStatus = {
    state: "Ok",
    ...withRate,
    lifetimeSeconds: Math.round(lifetime.seconds),
    lifetimeSource: lifetime.source,
    connections: Math.round(expected),
    message:
      `${fmt(lambda)} new connections/s${riseText} × ${w} s lifetime (${lifetime.source.toLowerCase()}): ${by}${heldText}`.slice(
        0,
        512,
      ),
  };
  return {
    ask: {
      units,
      message: `${fmt(lambda)} new connections/s (Prometheus, ${iso(newest.timeMs).slice(11, 19)} UTC)${riseText} × lifetime ${w} s: ${by}, ${how}: ${fmt(units)} units${heldText}`,
    },
    status,
  };
}

/**
 * The leading signal's ask (anticipation's rule `LeadingSignal`, un-snapped units) and its status. Never throws;
 * an unknown or unusable signal asks for nothing and says why.
 */
export function leadingSignal(input: LeadingInput): { ask?: LeadingAsk; status: LeadingStatus } {
  const { spec, connectionsPerUnit } = input;
  const usable = usableReadings(input.observation, input.nowMs);
  if (!("newest" in usable)) return unavailable(usable, input.previous);
  const { readings, newest } = usable;
  // The value itself only where it is not the rate shown beside it (status stays small).
  const base: ReadingStatus =
    spec.measures === "NewConnectionsPerSecond"
      ? { readAt: iso(newest.timeMs) }
      : { value: newest.value, readAt: iso(newest.timeMs) };
  if (spec.measures === "Connections") return connectionsOutcome(newest, base, connectionsPerUnit);

  const rate = arrivalRate(spec.measures, readings);
  if (!("perSecond" in rate)) return unavailable(rate, input.previous);
  const rates = ratesOf(spec, readings, input.changes);
  const lambda = rates.at(-1)?.[1] ?? rate.perSecond;
  const rise = risingRate(rates, lambda, input.targetMs, input.tolerance);
  const { lifetime, source } = connectionLifetime(input, rates);
  const withRate = { ...base, newConnectionsPerSecond: round(lambda) };
  if (lifetime === undefined || !(lifetime > 0) || source === undefined) {
    return {
      status: {
        state: "Calibrating",
        ...withRate,
        message:
          `${fmt(lambda)} new connections/s; the connection lifetime is measured from Azure Monitor's connection count while the quota is not full (${MIN_PAIRS} pairs needed): nothing asked yet`.slice(
            0,
            512,
          ),
      },
    };
  }
  const held = arrivalPlausibility(rates, input.connections, connectionsPerUnit, lifetime);
  return projectedOutcome(input, newest, withRate, { lambda, rise }, { seconds: lifetime, source }, held);
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
