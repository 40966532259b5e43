/**
 * The serverLoad signal: each bucket's load is turned into units of demand,
 * `load% / 100 · units then` (units then: see `capacity-timeline.ts`), and the window's peak is
 * compared with the current units: `value = peak / currentUnits · 100` (%),
 * `ratio = value / targetPercent`. Outside the tolerance band it asks for
 * `ceil(peak · 100 / targetPercent)` units — the HPA's `ceil(current · ratio)`. Server load stops
 * at 100 %: a peak within 1 % of it is saturated (signals.ts). Pure.
 *
 * A scale-in reads the level, not the noise: when the peak's need (`peak · 100 / targetPercent`,
 * before rounding) is below the instance's units and every bucket of a complete window of at
 * least 3 buckets lies within the tolerance of the window's mean — the smaller of the scale-up
 * and scale-down tolerances, so that the size the mean asks for is not scaled out again at the
 * same load (its peak is then within the scale-up band) — the mean is read instead (`flatMean`;
 * Azure autoscale's time aggregation `Average`). The tolerance band then applies to the mean:
 * a peak within it that would hold the size does not hold it when the mean is outside it.
 * ServerLoad is a percentage the service reports per minute with its own jitter, and the highest
 * of five such minutes is that jitter's highest draw: read at the peak, a level at the target would not be
 * scaled in until it fell by the jitter too. A window with a real peak in it (a crowd leaving),
 * with a bucket missing, or asking for more is read at its peak. Only server load: it is a soft
 * target below a ceiling of 100 %, where connections (the quota) and traffic (the bandwidth) are
 * hard limits whose peak is refused or throttled.
 */
import type { ToleranceBand } from "../behavior.js";
import { fmt } from "../format.js";
import { peak, series } from "../samples.js";
import { demandSeries, flatMean, missingOutcome, proportionalOutcome, saturatedAt } from "./common.js";
import type { Signal, SignalContext, SignalOutcome } from "./types.js";

export const serverLoadSignal: Signal = { name: "serverLoad", evaluate: evaluateServerLoad };

/** The serverLoad signal of the policy (see the module comment); undefined when it does not configure it. */
function evaluateServerLoad(ctx: SignalContext, tolerance: ToleranceBand): SignalOutcome | undefined {
  const serverLoad = ctx.spec.metrics.serverLoad;
  if (!serverLoad) return undefined;
  const { window, current, unitsAt } = ctx;
  const target = serverLoad.targetPercent;
  const s = series(window, (b) => {
    const load = b.sample?.serverLoadPercent;
    return typeof load === "number" ? (load / 100) * unitsAt(b.start) : load;
  });
  const top = peak(s);
  if (top === undefined) {
    return missingOutcome("serverLoad", "server load", target, s, window.maxSampleAgeSeconds);
  }
  const demand = demandSeries(
    "serverLoad",
    s,
    100 / target,
    (v, start) => saturatedAt(v / unitsAt(start), 1),
    ctx.overlapsChange,
  );
  // A scale-in reads a flat window at its mean (see the module comment).
  const band = Math.min(tolerance.up, tolerance.down);
  const level = (top * 100) / target < current.units ? flatMean(s, band) : undefined;
  const read = level ?? top;
  const value = (read / current.units) * 100;
  const outcome = proportionalOutcome({
    signal: "serverLoad",
    s,
    target,
    value,
    ratio: value / target,
    demandUnits: (read * 100) / target,
    describe: `server load ${fmt(value)} % at ${current.units} units${level === undefined ? "" : ` (the mean of a window within ${fmt(band * 100)} % of it; peak ${fmt((top / current.units) * 100)} %)`} vs target ${target} %`,
    saturated: saturatedAt(value, 100),
    current,
    tolerance,
  });
  return { ...outcome, demand };
}
