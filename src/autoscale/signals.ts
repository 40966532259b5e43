/**
 * Signals: what each metric of the policy asks for, in units.
 *
 * Pinned semantics (each signal over the window of {@link windowSamples}):
 * - serverLoad: each bucket's load is turned into units of demand, `load% / 100 · units then`
 *   (units then: see `capacity-timeline.ts`), and the window's peak is compared with the current units:
 *   `value = peak / currentUnits · 100` (%), `ratio = value / targetPercent`. Outside the tolerance
 *   band the signal asks for `ceil(peak · 100 / targetPercent)` units — the HPA's
 *   `ceil(current · ratio)`.
 * - connections: the window's peak connections, each bucket's from its two measures
 *   (`connections.ts`: ConnectionCount, or ConnectionQuotaUtilization% · units then · 10 when that
 *   is unknown, and the higher of the two when they disagree beyond 1.5 % of the quota — then a
 *   `ConnectionsDisagree` reason), `ratio = peak / (currentUnits · 1,000 · target%)`; asks for
 *   `ceil(peak / (1,000 · target%))` units.
 * - traffic: the window's peak inbound and outbound bytes/s, split over the workload's scenarios by
 *   share (each scenario gets `share` of both directions; messages/s = bytes/s ÷ messageSizeBytes,
 *   billed at ≥ 1,024 B), checked with the capacity model's `evaluate` against every bandwidth and
 *   routing dimension of a size. `ratio = highest utilization at the current size / target%`;
 *   outside the band it asks for the smallest allowed size whose every dimension stays at or below
 *   target% (this may need Premium_P2 at 100 units, which lifts routing caps).
 * - Saturation: a measurement cannot exceed its ceiling — server load stops at 100 %,
 *   connections above units × 1,000 are refused, not counted, and traffic above what the size's
 *   tier-table dimensions carry is throttled. When the peak is within 1 % of the ceiling (±1 %;
 *   traffic: at ≥ 99 % of the current size, any measurement above it read as the ceiling) the real
 *   demand is unknown but higher, so the signal asks for at least twice the current units (the
 *   scale-up rate policies still apply). Without this, a flash crowd could only be followed by
 *   ×1.25–×1.4 steps, each paying a scale and the metric delay. Values beyond what the service
 *   can report never get here (plausibility.ts).
 * - Tolerance (HPA): `|ratio − 1| ≤ tolerance` → the signal asks for the current size, no change;
 *   the tolerance is `behavior.scaleUp.tolerance` for a ratio above 1 and
 *   `behavior.scaleDown.tolerance` below, each `behavior.tolerance` when unset.
 * - A signal with no known value (Unknown) or a stale one asks for nothing; an Incomplete one asks
 *   on its known values (usable to scale out; scale-in is gated elsewhere).
 */
import type { CapacityPolicySpec } from "../api/index.js";
import { evaluate } from "../capacity/sizing.js";
import { CONNECTIONS_PER_UNIT, type ScalableSku, type ServiceKind, type SkuUnits } from "../capacity/skus.js";
import { MIN_BILLED_MESSAGE_BYTES, type ScenarioName, scenariosOf } from "../capacity/tier-tables.js";
import type { ScenarioDemand } from "../capacity/workload.js";
import { ceilSafe, type ToleranceBand, toleranceBand } from "./behavior.js";
import {
  type ConnectionMeasure,
  describeDisagreements,
  disagreements,
  type WindowConnections,
  windowConnections,
} from "./connections.js";
import { type Reason, reason, type SignalName } from "./reasons.js";
import { peak, type SampleWindow, type Series, type SeriesStatus, series } from "./samples.js";
import { compareSizes, formatSize, type SizeList } from "./sizes.js";

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

/** Everything {@link evaluateSignals} reads. */
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

/**
 * One signal's measured need per bucket of the window, un-snapped: the units that bucket alone
 * would need at the signal's target (connections ÷ (1,000 · target%); load-units · 100 ÷ target%;
 * traffic: the current units × the bucket's share of the peak's utilization ÷ target%).
 */
export interface DemandSeries {
  signal: SignalName;
  /** Bucket start (ms), need (units) and whether the value sat at its ceiling, oldest first. */
  points: { start: number; units: number; saturated: boolean }[];
  /** The newest point is at the signal's ceiling (real demand unknown but higher). */
  saturated: boolean;
}

/** The result of {@link evaluateSignals}. */
export interface SignalEvaluation {
  reports: SignalReport[];
  needs: SignalNeed[];
  reasons: Reason[];
  /** Each usable signal's need per bucket (anticipation.ts projects them). */
  demand: DemandSeries[];
}

const EPS = 1e-9;
/** Fraction of a ceiling at which a measurement counts as saturated. */
const SATURATION = 0.99;

/**
 * A value pinned at its ceiling: within 1 % below or above it. A value clearly above the ceiling
 * is a real measurement of the demand (it asks for its own proportional units).
 */
function saturatedAt(value: number, ceiling: number): boolean {
  return value >= ceiling * SATURATION && value <= ceiling * (2 - SATURATION);
}

/** Formats a number for messages: at most two decimals, thousands separated. */
/** One formatter for every message: building one per call dominated long simulations. */
const NUMBER_FORMAT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

export function fmt(n: number): string {
  return NUMBER_FORMAT.format(n);
}

/** The tolerance that applies to a ratio: scaleUp's above 1, scaleDown's below. */
function toleranceFor(ratio: number, band: ToleranceBand): number {
  return ratio >= 1 ? band.up : band.down;
}

function within(ratio: number, band: ToleranceBand): boolean {
  return Math.abs(ratio - 1) <= toleranceFor(ratio, band) + EPS;
}

function base(signal: SignalName, target: number, s: Series): SignalReport {
  const r: SignalReport = {
    signal,
    status: s.status,
    targetPercent: target,
    knownBuckets: s.knownBuckets,
    expectedBuckets: s.expectedBuckets,
    message: "",
  };
  if (s.newest !== undefined) r.newestTime = new Date(s.newest).toISOString();
  return r;
}

function missingMessage(what: string, s: Series, maxAgeSeconds: number): string {
  if (s.status === "Stale") {
    return `${what}: newest known value (${new Date(s.newest ?? 0).toISOString()}) is older than maxSampleAge ${maxAgeSeconds}s — counted as missing`;
  }
  return `${what}: no known value in the window (${s.expectedBuckets} buckets) — unknown, not zero`;
}

function missingReason(signal: SignalName, s: Series, message: string): Reason {
  return reason(s.status === "Stale" ? "SignalStale" : "SignalUnknown", message, { signal });
}

/**
 * The demand of measured traffic on the workload's scenarios: each scenario gets `share` (shares
 * normalized to sum 1) of the inbound and of the outbound bytes/s; messages/s = bytes/s ÷
 * `messageSizeBytes`; bandwidth billed at ≥ 1,024 B a message. Connections are 0 (the connections
 * signal covers them).
 * @throws RangeError for a scenario the service does not have, or shares that sum to 0.
 */
export function trafficDemand(
  service: ServiceKind,
  workload: readonly { scenario: ScenarioName; share: number }[],
  messageSizeBytes: number,
  inboundBytesPerSecond: number,
  outboundBytesPerSecond: number,
): ScenarioDemand[] {
  const known = scenariosOf(service);
  const total = workload.reduce((a, w) => a + (Number.isFinite(w.share) && w.share > 0 ? w.share : 0), 0);
  if (!(total > 0)) throw new RangeError("traffic.workload shares sum to 0");
  if (!(messageSizeBytes > 0)) throw new RangeError(`traffic.messageSizeBytes must be positive`);
  const billed = Math.max(messageSizeBytes, MIN_BILLED_MESSAGE_BYTES);
  return workload
    .filter((w) => Number.isFinite(w.share) && w.share > 0)
    .map((w) => {
      if (!known.includes(w.scenario)) {
        throw new RangeError(`${service} has no scenario "${w.scenario}" (known: ${known.join(", ")})`);
      }
      const share = w.share / total;
      const inMsgs = (inboundBytesPerSecond * share) / messageSizeBytes;
      const outMsgs = (outboundBytesPerSecond * share) / messageSizeBytes;
      return {
        scenario: w.scenario,
        connections: 0,
        inboundMessagesPerSecond: inMsgs,
        outboundMessagesPerSecond: outMsgs,
        inboundBytesPerSecond: inMsgs * billed,
        outboundBytesPerSecond: outMsgs * billed,
        billedMessageBytes: billed,
      };
    });
}

/** The busiest bandwidth/routing dimension of `demands` at `size` (connections excluded). */
export function trafficUtilization(
  service: ServiceKind,
  demands: readonly ScenarioDemand[],
  size: SkuUnits,
): { utilization: number; dimension: string } {
  let best = { utilization: 0, dimension: "inboundBandwidth" };
  for (const d of evaluate(service, demands, size.sku, size.units)) {
    if (d.name === "connections") continue;
    if (d.utilization > best.utilization) best = { utilization: d.utilization, dimension: d.name };
  }
  return best;
}

/** The same demands with every rate (messages/s, bytes/s) multiplied by `factor`. */
function scaleDemands(demands: readonly ScenarioDemand[], factor: number): ScenarioDemand[] {
  return demands.map((d) => ({
    ...d,
    inboundMessagesPerSecond: d.inboundMessagesPerSecond * factor,
    outboundMessagesPerSecond: d.outboundMessagesPerSecond * factor,
    inboundBytesPerSecond: d.inboundBytesPerSecond * factor,
    outboundBytesPerSecond: d.outboundBytesPerSecond * factor,
  }));
}

/** Evaluates every signal the policy configures (see the module comment). Pure. */
export function evaluateSignals(ctx: SignalContext): SignalEvaluation {
  const { spec, window, current, unitsAt } = ctx;
  const tolerance = toleranceBand(spec.behavior);
  const maxAge = window.maxSampleAgeSeconds;
  const reports: SignalReport[] = [];
  const needs: SignalNeed[] = [];
  const reasons: Reason[] = [];
  const demand: DemandSeries[] = [];
  /** Records a signal's need per bucket: its value × `unitsPerValue`. */
  const demandOf = (
    signal: SignalName,
    s: Series,
    unitsPerValue: number,
    saturated: (v: number, start: number) => boolean,
  ) => {
    // A bucket that overlaps a change may have been served by either size. Server load is
    // relative to the units then: read at the smaller size it would show a false rise, so it is
    // left out; connections and traffic are absolute and kept, but never read as saturated (the
    // ceiling then is not known).
    const overlaps = ctx.overlapsChange ?? (() => false);
    const points = s.points
      .filter((p) => signal !== "serverLoad" || !overlaps(p.start))
      .map((p) => ({
        start: p.start,
        units: p.value * unitsPerValue,
        saturated: !overlaps(p.start) && saturated(p.value, p.start),
      }));
    demand.push({ signal, points, saturated: points.at(-1)?.saturated ?? false });
  };
  const atLeastCurrent = (s: SkuUnits) => compareSizes(s, current) >= 0;

  /** A signal without a usable value in the window (unknown or stale): reported as missing. */
  const missing = (signal: SignalName, what: string, target: number, s: Series) => {
    const r = base(signal, target, s);
    r.message = missingMessage(what, s, maxAge);
    reasons.push(missingReason(signal, s, r.message));
    reports.push(r);
  };

  const proportional = (
    signal: SignalName,
    s: Series,
    target: number,
    value: number,
    ratio: number,
    demandUnits: number,
    describe: string,
    saturated = false,
  ) => {
    const r = base(signal, target, s);
    r.value = value;
    r.ratio = ratio;
    r.withinTolerance = within(ratio, tolerance);
    const partial =
      s.status === "Incomplete" ? ` (only ${s.knownBuckets} of ${s.expectedBuckets} buckets known)` : "";
    if (r.withinTolerance) {
      r.desiredUnits = current.units;
      r.message = `${describe}, ratio ${fmt(ratio)} within tolerance ${fmt(toleranceFor(ratio, tolerance))}: no change${partial}`;
      reasons.push(reason("WithinTolerance", r.message, { signal, units: current.units }));
      needs.push({ signal, minUnits: current.units, fits: atLeastCurrent });
    } else if (saturated && ratio > 1) {
      r.desiredUnits = Math.max(ceilSafe(demandUnits), current.units * 2);
      r.message = `${describe}, ratio ${fmt(ratio)}, at its ceiling (real demand is higher): at least ${r.desiredUnits} units${partial}`;
      reasons.push(reason("SignalSaturated", r.message, { signal, units: r.desiredUnits }));
      needs.push({ signal, minUnits: r.desiredUnits });
    } else {
      r.desiredUnits = Math.max(0, ceilSafe(demandUnits));
      r.message = `${describe}, ratio ${fmt(ratio)}: ${r.desiredUnits} units${partial}`;
      reasons.push(reason("SignalDesired", r.message, { signal, units: r.desiredUnits }));
      needs.push({ signal, minUnits: r.desiredUnits });
    }
    if (s.status === "Incomplete") {
      reasons.push(
        reason(
          "SignalIncomplete",
          `${signal}: ${s.expectedBuckets - s.knownBuckets} of ${s.expectedBuckets} buckets unknown`,
          { signal },
        ),
      );
    }
    reports.push(r);
  };

  const serverLoad = spec.metrics.serverLoad;
  if (serverLoad) {
    const target = serverLoad.targetPercent;
    const s = series(window, (b) => {
      const load = b.sample?.serverLoadPercent;
      return typeof load === "number" ? (load / 100) * unitsAt(b.start) : load;
    });
    const top = peak(s);
    if (top === undefined) {
      missing("serverLoad", "server load", target, s);
    } else {
      demandOf("serverLoad", s, 100 / target, (v, start) => saturatedAt(v / unitsAt(start), 1));
      const value = (top / current.units) * 100;
      proportional(
        "serverLoad",
        s,
        target,
        value,
        value / target,
        (top * 100) / target,
        `server load ${fmt(value)} % at ${current.units} units vs target ${target} %`,
        saturatedAt(value, 100),
      );
    }
  }

  const connections = spec.metrics.connections;
  if (connections) {
    const target = connections.targetPercent;
    const byBucket = ctx.connections ?? windowConnections(window, unitsAt, ctx.overlapsChange);
    const s = series(window, (b) => byBucket.get(b.start)?.value);
    const top = peak(s);
    const differ = describeDisagreements(disagreements(byBucket));
    if (differ) reasons.push(reason("ConnectionsDisagree", differ, { signal: "connections" }));
    if (top === undefined) {
      missing("connections", "connections", target, s);
    } else {
      const peakStart = s.points.find((p) => p.value === top)?.start;
      const measure = peakStart === undefined ? undefined : byBucket.get(peakStart)?.measure;
      const perUnit = CONNECTIONS_PER_UNIT * (target / 100);
      demandOf("connections", s, 1 / perUnit, (v, start) =>
        saturatedAt(v, unitsAt(start) * CONNECTIONS_PER_UNIT),
      );
      proportional(
        "connections",
        s,
        target,
        top,
        top / (current.units * perUnit),
        top / perUnit,
        `${fmt(top)} connections${measure === "ConnectionQuotaUtilization" ? " (from ConnectionQuotaUtilization)" : ""} vs ${fmt(current.units * perUnit)} (${current.units} units × 1,000 × ${target} %)`,
        saturatedAt(top, current.units * CONNECTIONS_PER_UNIT),
      );
      const report = reports.at(-1);
      if (report && measure) report.measure = measure;
    }
  }

  const traffic = spec.metrics.traffic;
  if (traffic) {
    const target = traffic.targetPercent;
    const sIn = series(window, (b) => b.sample?.inboundBytesPerSecond);
    const sOut = series(window, (b) => b.sample?.outboundBytesPerSecond);
    const s = series(window, (b) => {
      const i = b.sample?.inboundBytesPerSecond;
      const o = b.sample?.outboundBytesPerSecond;
      return typeof i === "number" && typeof o === "number" ? i + o : null;
    });
    // A bucket counts as known only when both directions are; each direction's peak uses every
    // bucket where it is known.
    const peakIn = peak(sIn);
    const peakOut = peak(sOut);
    const status: SeriesStatus =
      peakIn === undefined && peakOut === undefined
        ? sIn.status === "Stale" || sOut.status === "Stale"
          ? "Stale"
          : "Unknown"
        : s.status === "Ok"
          ? "Ok"
          : "Incomplete";
    const merged: Series = { ...s, status };
    if (status === "Stale" || status === "Unknown") {
      missing("traffic", "traffic", target, merged);
    } else {
      const r = base("traffic", target, merged);
      const inBps = peakIn ?? 0;
      const outBps = peakOut ?? 0;
      try {
        const service = spec.target.service;
        const measuredDemands = trafficDemand(
          service,
          traffic.workload,
          traffic.messageSizeBytes,
          inBps,
          outBps,
        );
        const limit = target / 100;
        const at = trafficUtilization(service, measuredDemands, current);
        // The service carries no more than its size does: at the ceiling the real demand is
        // unknown but higher, and a measurement above it is read as the ceiling (saturation,
        // bounded), not as demand.
        const saturated = at.utilization >= SATURATION;
        const demands =
          at.utilization > 1 ? scaleDemands(measuredDemands, 1 / at.utilization) : measuredDemands;
        const value = at.utilization * 100;
        const ratio = value / target;
        const peakBytes = peak(s);
        if (peakBytes !== undefined && peakBytes > 0) {
          const peakUnits = (current.units * Math.min(at.utilization, 1)) / limit;
          demandOf("traffic", s, peakUnits / peakBytes, () => saturated);
        }
        r.value = value;
        r.ratio = ratio;
        r.withinTolerance = within(ratio, tolerance);
        r.dimension = at.dimension;
        const partial = status === "Incomplete" ? " (some buckets unknown)" : "";
        const measured = `traffic in ${fmt(inBps)} B/s, out ${fmt(outBps)} B/s uses ${fmt(value)} % of ${formatSize(current)} (${at.dimension}) vs target ${target} %`;
        if (r.withinTolerance) {
          r.desiredUnits = current.units;
          r.desiredSku = current.sku;
          r.message = `${measured}, ratio ${fmt(ratio)} within tolerance ${fmt(toleranceFor(ratio, tolerance))}: no change${partial}`;
          reasons.push(reason("WithinTolerance", r.message, { signal: "traffic", units: current.units }));
          needs.push({ signal: "traffic", minUnits: current.units, fits: atLeastCurrent });
        } else {
          const fits = (size: SkuUnits) =>
            trafficUtilization(service, demands, size).utilization <= limit + EPS;
          const floor = saturated && ratio > 1 ? current.units * 2 : 0;
          const first = ctx.sizes.firstAtLeast(floor, fits);
          const chosen = first ?? ctx.sizes.top();
          if (chosen) {
            r.desiredUnits = chosen.units;
            r.desiredSku = chosen.sku;
          }
          const code = floor > 0 ? "SignalSaturated" : "SignalDesired";
          const ceiling = floor > 0 ? ", at its ceiling (real demand is higher)" : "";
          r.message = first
            ? `${measured}, ratio ${fmt(ratio)}${ceiling}: ${formatSize(first)} keeps it within target${partial}`
            : `${measured}, ratio ${fmt(ratio)}${ceiling}: no allowed size keeps it within target${partial}`;
          reasons.push(
            reason(code, r.message, {
              signal: "traffic",
              units: r.desiredUnits,
              sku: r.desiredSku,
            }),
          );
          needs.push({ signal: "traffic", minUnits: chosen?.units ?? current.units, fits });
        }
        if (status === "Incomplete") {
          reasons.push(
            reason("SignalIncomplete", `traffic: some buckets of the window unknown`, { signal: "traffic" }),
          );
        }
      } catch (err) {
        r.status = "Error";
        r.message = `traffic: ${err instanceof Error ? err.message : String(err)}`;
        reasons.push(reason("SignalError", r.message, { signal: "traffic" }));
      }
      reports.push(r);
    }
  }
  return { reports, needs, reasons, demand };
}
