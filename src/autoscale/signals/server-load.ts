/**
 * The serverLoad signal: each bucket's load is turned into units of demand,
 * `load% / 100 · units then` (units then: see `capacity-timeline.ts`), and the window's peak is
 * compared with the current units: `value = peak / currentUnits · 100` (%),
 * `ratio = value / targetPercent`. Outside the tolerance band it asks for
 * `ceil(peak · 100 / targetPercent)` units — the HPA's `ceil(current · ratio)`. Server load stops
 * at 100 %: a peak within 1 % of it is saturated (signals.ts). Pure.
 */
import type { ToleranceBand } from "../behavior.js";
import { fmt } from "../format.js";
import { peak, series } from "../samples.js";
import { demandSeries, missingOutcome, proportionalOutcome, saturatedAt } from "./common.js";
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
  const value = (top / current.units) * 100;
  const outcome = proportionalOutcome({
    signal: "serverLoad",
    s,
    target,
    value,
    ratio: value / target,
    demandUnits: (top * 100) / target,
    describe: `server load ${fmt(value)} % at ${current.units} units vs target ${target} %`,
    saturated: saturatedAt(value, 100),
    current,
    tolerance,
  });
  return { ...outcome, demand };
}
