/**
 * The connections signal: the window's peak connections, each bucket's from its two measures
 * (`connections.ts`: ConnectionCount, or ConnectionQuotaUtilization% · units then · 10 when that
 * is unknown, and the higher of the two when they disagree beyond 1.5 % of the quota — then a
 * `ConnectionsDisagree` reason). The need is `peak / (1,000 · target%)` units, and with
 * `spareConnections` at least `(peak + spareConnections) / 1,000` (standing headroom where one
 * unit is most of it: {@link connectionsNeed}); `ratio = need / currentUnits`, so the tolerance
 * band reads the spare too; it asks for `ceil(need)` units. Connections above units × 1,000 are
 * refused, not counted: a peak within 1 % of that is saturated (signals.ts). Pure.
 */

import { CONNECTIONS_PER_UNIT } from "../../capacity/skus.js";
import type { ToleranceBand } from "../behavior.js";
import {
  describeDisagreements,
  disagreements,
  type WindowConnections,
  windowConnections,
} from "../connections.js";
import { fmt } from "../format.js";
import { reason } from "../reasons.js";
import { peak, type Series, series } from "../samples.js";
import { demandSeries, missingOutcome, proportionalOutcome, SATURATION, saturatedAt } from "./common.js";
import type { Signal, SignalContext, SignalOutcome } from "./types.js";

export const connectionsSignal: Signal = { name: "connections", evaluate: evaluateConnections };

/** The connections signal of the policy (see the module comment); undefined when it does not configure it. */
function evaluateConnections(ctx: SignalContext, tolerance: ToleranceBand): SignalOutcome | undefined {
  const connections = ctx.spec.metrics.connections;
  if (!connections) return undefined;
  const target = connections.targetPercent;
  const byBucket = ctx.connections ?? windowConnections(ctx.window, ctx.unitsAt, ctx.overlapsChange);
  const s = series(ctx.window, (b) => byBucket.get(b.start)?.value);
  const top = peak(s);
  const outcome =
    top === undefined
      ? missingOutcome("connections", "connections", target, s, ctx.window.maxSampleAgeSeconds)
      : peakOutcome(ctx, tolerance, target, byBucket, s, top);
  const differ = describeDisagreements(disagreements(byBucket));
  if (!differ) return outcome;
  const disagree = reason("ConnectionsDisagree", differ, { signal: "connections" });
  return { ...outcome, reasons: [disagree, ...outcome.reasons] };
}

/**
 * The units `peak` connections need, un-snapped: `peak ÷ (1,000 · target%)`, and at least
 * `(peak + spare) ÷ 1,000` — the quota keeps `spare` connections free however small the size (at
 * 80 % and 1,000 spare the second is larger only below 4,000 connections, 5 units).
 */
export function connectionsNeed(peak: number, targetPercent: number, spare: number): number {
  const atTarget = peak / (CONNECTIONS_PER_UNIT * (targetPercent / 100));
  return spare > 0 ? Math.max(atTarget, (peak + spare) / CONNECTIONS_PER_UNIT) : atTarget;
}

/**
 * The ask of a known peak (connections) at `target` %: proportional, with the measure of the
 * peak bucket in the report, and the need per bucket.
 */
function peakOutcome(
  ctx: SignalContext,
  tolerance: ToleranceBand,
  target: number,
  byBucket: WindowConnections,
  s: Series,
  top: number,
): SignalOutcome {
  const { current, unitsAt } = ctx;
  const peakStart = s.points.find((p) => p.value === top)?.start;
  const measure = peakStart === undefined ? undefined : byBucket.get(peakStart)?.measure;
  const perUnit = CONNECTIONS_PER_UNIT * (target / 100);
  const demand = demandSeries(
    "connections",
    s,
    1 / perUnit,
    (v, start) => saturatedAt(v, unitsAt(start) * CONNECTIONS_PER_UNIT),
    ctx.overlapsChange,
    (v, start) => v >= unitsAt(start) * CONNECTIONS_PER_UNIT * SATURATION,
  );
  const from = measure === "ConnectionQuotaUtilization" ? " (from ConnectionQuotaUtilization)" : "";
  const spareConnections = ctx.spec.metrics.connections?.spareConnections ?? 0;
  const need = connectionsNeed(top, target, spareConnections);
  const spare =
    need > top / perUnit ? ` (${fmt(top + spareConnections)} with ${fmt(spareConnections)} spare)` : "";
  const outcome = proportionalOutcome({
    signal: "connections",
    s,
    target,
    value: top,
    ratio: need / current.units,
    demandUnits: need,
    describe: `${fmt(top)} connections${from}${spare} vs ${fmt(current.units * perUnit)} (${current.units} units × 1,000 × ${target} %)`,
    saturated: saturatedAt(top, current.units * CONNECTIONS_PER_UNIT),
    current,
    tolerance,
  });
  if (measure) outcome.report.measure = measure;
  return { ...outcome, demand };
}
