/**
 * The traffic signal: the window's peak inbound and outbound bytes/s, split over the workload's
 * scenarios by share (each scenario gets `share` of both directions; messages/s = bytes/s ÷
 * messageSizeBytes, billed at ≥ 1,024 B), checked with the capacity model's `evaluate` against
 * every bandwidth and routing dimension of a size. `ratio = highest utilization at the current
 * size / target%`; outside the band it asks for the smallest allowed size whose every dimension
 * stays at or below target% (this may need Premium_P2 at 100 units, which lifts routing caps).
 * Traffic above what the size's tier-table dimensions carry is throttled: at ≥ 99 % of the
 * current size the signal is saturated, and a measurement above it is read as the ceiling
 * (signals.ts). A bucket counts as known only when both directions are; each direction's peak
 * uses every bucket where it is known. Pure.
 */
import type { CapacityPolicySpec } from "../../api/index.js";
import { evaluate } from "../../capacity/sizing.js";
import type { ServiceKind, SkuUnits } from "../../capacity/skus.js";
import { MIN_BILLED_MESSAGE_BYTES, type ScenarioName, scenariosOf } from "../../capacity/tier-tables.js";
import type { ScenarioDemand } from "../../capacity/workload.js";
import type { ToleranceBand } from "../behavior.js";
import { fmt } from "../format.js";
import { type Reason, reason } from "../reasons.js";
import type { SampleWindow } from "../samples.js";
import { peak, type Series, type SeriesStatus, series } from "../samples.js";
import { formatSize } from "../sizes.js";
import {
  baseReport,
  demandSeries,
  EPS,
  holdNeed,
  missingOutcome,
  SATURATION,
  toleranceFor,
  within,
} from "./common.js";
import type {
  DemandSeries,
  Signal,
  SignalContext,
  SignalNeed,
  SignalOutcome,
  SignalReport,
} from "./types.js";

type TrafficSpec = NonNullable<CapacityPolicySpec["metrics"]["traffic"]>;

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

/** The window's traffic: the series of in + out bytes/s and each direction's peak (B/s). */
interface TrafficSeries {
  /** In + out bytes/s of the buckets where both are known, with the merged status. */
  s: Series;
  peakIn: number | undefined;
  peakOut: number | undefined;
}

/**
 * The traffic series of the window: Unknown (or Stale) when neither direction has a known value,
 * Ok when every bucket has both, else Incomplete.
 */
function trafficSeries(window: SampleWindow): TrafficSeries {
  const sIn = series(window, (b) => b.sample?.inboundBytesPerSecond);
  const sOut = series(window, (b) => b.sample?.outboundBytesPerSecond);
  const both = series(window, (b) => {
    const i = b.sample?.inboundBytesPerSecond;
    const o = b.sample?.outboundBytesPerSecond;
    return typeof i === "number" && typeof o === "number" ? i + o : null;
  });
  const peakIn = peak(sIn);
  const peakOut = peak(sOut);
  let status: SeriesStatus;
  if (peakIn === undefined && peakOut === undefined) {
    status = sIn.status === "Stale" || sOut.status === "Stale" ? "Stale" : "Unknown";
  } else {
    status = both.status === "Ok" ? "Ok" : "Incomplete";
  }
  return { s: { ...both, status }, peakIn, peakOut };
}

export const trafficSignal: Signal = { name: "traffic", evaluate: evaluateTraffic };

/** The traffic signal of the policy (see the module comment); undefined when it does not configure it. */
function evaluateTraffic(ctx: SignalContext, tolerance: ToleranceBand): SignalOutcome | undefined {
  const traffic = ctx.spec.metrics.traffic;
  if (!traffic) return undefined;
  const measured = trafficSeries(ctx.window);
  const status = measured.s.status;
  if (status === "Stale" || status === "Unknown") {
    return missingOutcome(
      "traffic",
      "traffic",
      traffic.targetPercent,
      measured.s,
      ctx.window.maxSampleAgeSeconds,
    );
  }
  return trafficOutcome(ctx, tolerance, traffic, measured);
}

/**
 * The ask of known traffic; a workload the capacity model refuses (RangeError) gives status Error
 * and `SignalError`, with what was measured before it.
 */
function trafficOutcome(
  ctx: SignalContext,
  tolerance: ToleranceBand,
  traffic: TrafficSpec,
  measured: TrafficSeries,
): SignalOutcome {
  const report = baseReport("traffic", traffic.targetPercent, measured.s);
  let demand: DemandSeries | undefined;
  try {
    const load = loadAtCurrent(ctx, traffic, measured);
    demand = load.demand;
    const asked = trafficAsk(ctx, tolerance, traffic, measured, load, report);
    return withDemand({ report, ...asked }, demand);
  } catch (err) {
    report.status = "Error";
    report.message = `traffic: ${err instanceof Error ? err.message : String(err)}`;
    return withDemand(
      { report, reasons: [reason("SignalError", report.message, { signal: "traffic" })] },
      demand,
    );
  }
}

/** The outcome with its need per bucket, when there is one. */
function withDemand(outcome: SignalOutcome, demand: DemandSeries | undefined): SignalOutcome {
  return demand ? { ...outcome, demand } : outcome;
}

/** The measured traffic at the current size. */
interface TrafficLoad {
  /** The workload's demands, read at no more than the current size carries. */
  demands: ScenarioDemand[];
  /** The busiest dimension at the current size and its utilization (0–1, may exceed 1). */
  utilization: number;
  dimension: string;
  /** At ≥ 99 % of the current size. */
  saturated: boolean;
  /** The need per bucket (absent when the window's peak is 0 B/s). */
  demand?: DemandSeries;
}

/**
 * The traffic's load at the current size. The service carries no more than its size does: at the
 * ceiling the real demand is unknown but higher, and a measurement above it is read as the
 * ceiling (saturation, bounded), not as demand.
 * @throws RangeError from {@link trafficDemand}.
 */
function loadAtCurrent(ctx: SignalContext, traffic: TrafficSpec, measured: TrafficSeries): TrafficLoad {
  const { current } = ctx;
  const service = ctx.spec.target.service;
  const inBps = measured.peakIn ?? 0;
  const outBps = measured.peakOut ?? 0;
  const measuredDemands = trafficDemand(service, traffic.workload, traffic.messageSizeBytes, inBps, outBps);
  const at = trafficUtilization(service, measuredDemands, current);
  const saturated = at.utilization >= SATURATION;
  const demands = at.utilization > 1 ? scaleDemands(measuredDemands, 1 / at.utilization) : measuredDemands;
  const load: TrafficLoad = { demands, utilization: at.utilization, dimension: at.dimension, saturated };
  const peakBytes = peak(measured.s);
  if (peakBytes !== undefined && peakBytes > 0) {
    const peakUnits = (current.units * Math.min(at.utilization, 1)) / (traffic.targetPercent / 100);
    load.demand = demandSeries(
      "traffic",
      measured.s,
      peakUnits / peakBytes,
      () => saturated,
      ctx.overlapsChange,
    );
  }
  return load;
}

/**
 * What the traffic asks for: within tolerance the current size; else the smallest allowed size
 * (at least twice the current units when saturated) whose every dimension stays within target,
 * or the largest size when none does. Fills `report` (value, ratio, size, message).
 */
function trafficAsk(
  ctx: SignalContext,
  tolerance: ToleranceBand,
  traffic: TrafficSpec,
  measured: TrafficSeries,
  load: TrafficLoad,
  report: SignalReport,
): { reasons: Reason[]; need: SignalNeed } {
  const { current } = ctx;
  const target = traffic.targetPercent;
  const value = load.utilization * 100;
  const ratio = value / target;
  report.value = value;
  report.ratio = ratio;
  report.withinTolerance = within(ratio, tolerance);
  report.dimension = load.dimension;
  const incomplete = measured.s.status === "Incomplete";
  const partial = incomplete ? " (some buckets unknown)" : "";
  const described = `traffic in ${fmt(measured.peakIn ?? 0)} B/s, out ${fmt(measured.peakOut ?? 0)} B/s uses ${fmt(value)} % of ${formatSize(current)} (${load.dimension}) vs target ${target} %`;
  const reasons: Reason[] = [];
  let need: SignalNeed;
  if (report.withinTolerance) {
    report.desiredUnits = current.units;
    report.desiredSku = current.sku;
    report.message = `${described}, ratio ${fmt(ratio)} within tolerance ${fmt(toleranceFor(ratio, tolerance))}: no change${partial}`;
    reasons.push(reason("WithinTolerance", report.message, { signal: "traffic", units: current.units }));
    need = holdNeed("traffic", current);
  } else {
    const service = ctx.spec.target.service;
    const limit = target / 100;
    const fits = (size: SkuUnits) =>
      trafficUtilization(service, load.demands, size).utilization <= limit + EPS;
    const floor = load.saturated && ratio > 1 ? current.units * 2 : 0;
    const first = ctx.sizes.firstAtLeast(floor, fits);
    const chosen = first ?? ctx.sizes.top();
    if (chosen) {
      report.desiredUnits = chosen.units;
      report.desiredSku = chosen.sku;
    }
    const code = floor > 0 ? "SignalSaturated" : "SignalDesired";
    const ceiling = floor > 0 ? ", at its ceiling (real demand is higher)" : "";
    report.message = first
      ? `${described}, ratio ${fmt(ratio)}${ceiling}: ${formatSize(first)} keeps it within target${partial}`
      : `${described}, ratio ${fmt(ratio)}${ceiling}: no allowed size keeps it within target${partial}`;
    reasons.push(
      reason(code, report.message, { signal: "traffic", units: report.desiredUnits, sku: report.desiredSku }),
    );
    need = { signal: "traffic", minUnits: chosen?.units ?? current.units, fits };
  }
  if (incomplete) {
    reasons.push(
      reason("SignalIncomplete", `traffic: some buckets of the window unknown`, { signal: "traffic" }),
    );
  }
  return { reasons, need };
}
