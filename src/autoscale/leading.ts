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
 *   `connections ÷ λ` over the pairs of an unsaturated Azure bucket and the reading nearest its end
 *   (within {@link PAIR_SLACK_MS}), once {@link MIN_PAIRS} pairs exist; then kept in status and
 *   reused while no pairs exist (a full quota). Before that: `Calibrating`, nothing asked.
 * - **Measures**: NewConnectionsPerSecond reads `λ` as the value; NewConnectionsTotal takes the
 *   increase per second between the two newest readings, and a decrease is a counter reset (the
 *   increase is then the new value, as Prometheus's `rate()` reads it); Connections is the
 *   concurrent demand itself (no lifetime, no projection).
 * - **Unknown is ignored**: a failed read, a reading older than {@link MAX_READING_AGE_MS}, a
 *   negative value, or a counter with no earlier reading ask for nothing and say why
 *   (`Unavailable`). The signal only ever adds an ask; it never lowers capacity.
 */
import { median } from "simple-statistics";
import { durationOr } from "../api/duration.js";
import type { AnticipationStatus, LeadingSignalSpec } from "../api/index.js";
import type { DemandSeries } from "./signals.js";
import { fmt } from "./signals.js";

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
  /** Azure Monitor's connections need per bucket (signals.ts), when the policy reads connections. */
  connections?: DemandSeries | undefined;
  /** What the last pass stored (for a measured lifetime kept through a full quota). */
  previous?: LeadingStatus | undefined;
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

/** The arrival rate at each reading (for pairing), as `[timeMs, perSecond]`. */
function ratesOf(
  measures: LeadingSignalSpec["measures"],
  readings: readonly LeadingReading[],
): [number, number][] {
  const out: [number, number][] = [];
  readings.forEach((r, i) => {
    const perSecond = rateAt(measures, r, readings[i - 1]);
    if (perSecond !== undefined) out.push([r.timeMs, perSecond]);
  });
  return out;
}

/** Measured lifetimes (seconds) of the pairs of unsaturated Azure buckets and readings. */
function lifetimePairs(
  rates: readonly [number, number][],
  connections: DemandSeries | undefined,
  connectionsPerUnit: number,
): number[] {
  const out: number[] = [];
  for (const p of connections?.points ?? []) {
    if (p.saturated || p.units <= 0) continue;
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

/**
 * The leading signal's ask (anticipation's rule `LeadingSignal`, un-snapped units) and its status. Never throws;
 * an unknown or unusable signal asks for nothing and says why.
 */
export function leadingSignal(input: LeadingInput): { ask?: LeadingAsk; status: LeadingStatus } {
  const { spec, observation, nowMs, targetMs, connectionsPerUnit } = input;
  const unavailable = (reason: string, message: string): { status: LeadingStatus } => {
    const status: LeadingStatus = {
      state: "Unavailable",
      reason,
      message: `ignored: ${message}`.slice(0, 512),
    };
    // A measured lifetime is kept through an outage.
    if (input.previous?.lifetimeSource === "Measured" && input.previous.lifetimeSeconds !== undefined) {
      status.lifetimeSeconds = input.previous.lifetimeSeconds;
      status.lifetimeSource = "Measured";
    }
    return { status };
  };
  if (!observation) return unavailable("NotRead", "not read on this pass");
  if (observation.error) return unavailable(observation.error.reason, observation.error.message);
  const readings = observation.readings;
  const newest = readings.at(-1);
  if (!newest) return unavailable("NoData", "no reading yet");
  if (nowMs - newest.timeMs > MAX_READING_AGE_MS) {
    return unavailable("Stale", `the newest reading is from ${iso(newest.timeMs)}`);
  }
  if (!Number.isFinite(newest.value)) return unavailable("NotFinite", `the query returned ${newest.value}`);
  if (newest.value < 0)
    return unavailable("Negative", `the query returned ${newest.value}, not a count or rate`);
  // The value itself only where it is not the rate shown beside it (status stays small).
  const base =
    spec.measures === "NewConnectionsPerSecond"
      ? { readAt: iso(newest.timeMs) }
      : { value: newest.value, readAt: iso(newest.timeMs) };

  if (spec.measures === "Connections") {
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

  const rate = arrivalRate(spec.measures, readings);
  if (!("perSecond" in rate)) return unavailable(rate.reason, rate.message);
  const lambda = rate.perSecond;

  // The connection lifetime.
  let lifetime: number | undefined;
  let source: "Spec" | "Measured" | undefined;
  if (spec.connectionLifetime !== undefined) {
    lifetime = durationOr(spec.connectionLifetime, 0) || undefined;
    source = "Spec";
  } else {
    const pairs = lifetimePairs(ratesOf(spec.measures, readings), input.connections, connectionsPerUnit);
    if (pairs.length >= MIN_PAIRS) {
      lifetime = median(pairs);
      source = "Measured";
    } else if (
      input.previous?.lifetimeSource === "Measured" &&
      input.previous.lifetimeSeconds !== undefined
    ) {
      lifetime = input.previous.lifetimeSeconds;
      source = "Measured";
    }
  }
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

  const steady = lambda * lifetime;
  const newestAzure = input.connections?.points.at(-1);
  let expected = steady;
  let how = `steady state ${fmt(Math.round(steady))}`;
  if (newestAzure) {
    const t0 = newestAzure.start + MINUTE_MS / 2;
    const d0 = newestAzure.units * connectionsPerUnit;
    const decay = Math.exp(-Math.max(0, targetMs - t0) / 1000 / lifetime);
    expected = steady + (d0 - steady) * decay;
    how = `from ${fmt(Math.round(d0))}${newestAzure.saturated ? " (quota full)" : ""} at ${iso(t0).slice(11, 16)} UTC toward ${fmt(Math.round(steady))}`;
  }
  expected = Math.max(0, expected);
  const units = expected / connectionsPerUnit;
  const status: LeadingStatus = {
    state: "Ok",
    ...withRate,
    lifetimeSeconds: Math.round(lifetime),
    lifetimeSource: source,
    connections: Math.round(expected),
    message:
      `${fmt(lambda)} new connections/s × ${fmt(Math.round(lifetime))} s lifetime (${source.toLowerCase()}): ${fmt(Math.round(expected))} connections by ${iso(targetMs).slice(11, 16)} UTC`.slice(
        0,
        512,
      ),
  };
  return {
    ask: {
      units,
      message: `${fmt(lambda)} new connections/s (Prometheus, ${iso(newest.timeMs).slice(11, 19)} UTC) × lifetime ${fmt(Math.round(lifetime))} s: ${fmt(Math.round(expected))} connections by ${iso(targetMs).slice(11, 16)} UTC, ${how}: ${fmt(units)} units`,
    },
    status,
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
