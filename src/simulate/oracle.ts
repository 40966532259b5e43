/**
 * The oracle: for every minute, the smallest allowed size whose true load stays at or below the
 * load target with that minute's demand — knowing the future, with no scale delay and no metric
 * delay. It is computed directly from the traffic model (`trafficAt` without noise), not
 * simulated: the lower bound of what any strategy could spend while never running hot.
 *
 * "Smallest" is the first size of the ascending list (units first, then the lower tier; see
 * `capacity/skus.ts` `candidates`). When no size keeps the load under target, the largest one.
 * Load falls as units grow, so each minute starts from the previous minute's answer and walks
 * down or up the list: O(1) amortized for demand that moves smoothly.
 *
 * Its changes disconnect clients as any strategy's do (`traffic/disconnections.ts`), counted with
 * the previous minute's connections: the oracle minimizes units, not disruption.
 *
 * The static allocation is the oracle's largest size over the run (the peak need): provisioned
 * once, never scaled.
 */
import { compareSizes } from "../autoscale/sizes.js";
import type { SkuUnits } from "../capacity/index.js";
import {
  type DisconnectionModel,
  type TrafficMinute,
  trafficAt,
  type WorkloadMix,
} from "../traffic/index.js";
import { completeChange, emptyRun, recordMinute, type StrategyRun, sizeAt } from "./engine.js";

/** Inputs of {@link oracleRun}. */
export interface OracleInput {
  /** Client connections wanted per minute. */
  demand: Float64Array;
  mix: WorkloadMix;
  /** Allowed sizes, ascending (units, then tier). */
  sizes: readonly SkuUnits[];
  /** Load target, % (the load may equal it). */
  targetPercent: number;
  /** Start of minute 0, ms (for the operation times). */
  startMs?: number;
  /** Which clients a change disconnects (default `RemovedUnits`). */
  disconnection?: DisconnectionModel;
}

const EPS = 1e-9;

/** The oracle's run (see the module comment). @throws RangeError without sizes. */
export function oracleRun(input: OracleInput): StrategyRun {
  const { demand, mix, sizes } = input;
  if (sizes.length === 0) throw new RangeError("the oracle needs at least one allowed size");
  const minutes = demand.length;
  const run = emptyRun("oracle", "oracle: fewest units under target each minute, no delays", minutes);
  const limit = input.targetPercent / 100 + EPS;
  const at = (i: number, offered: number) => {
    const size = sizes[i] as SkuUnits;
    return trafficAt({ mix, offeredConnections: offered, sku: size.sku, units: size.units, noise: 0 });
  };
  let i = 0;
  const startMs = input.startMs ?? 0;
  let before: TrafficMinute | undefined;
  for (let m = 0; m < minutes; m++) {
    const offered = demand[m] as number;
    let t = at(i, offered);
    if (t.utilization <= limit) {
      while (i > 0) {
        const lower = at(i - 1, offered);
        if (lower.utilization > limit) break;
        i--;
        t = lower;
      }
    } else {
      while (i < sizes.length - 1) {
        i++;
        t = at(i, offered);
        if (t.utilization <= limit) break;
      }
    }
    const size = sizes[i] as SkuUnits;
    if (m > 0) {
      const prev = sizeAt(run, m - 1);
      if (prev.units !== size.units || prev.sku !== size.sku) {
        const time = startMs + m * 60_000;
        const op = { startedMs: time, completedMs: time, from: prev, to: { ...size }, disconnected: 0 };
        completeChange(op, before?.clientConnections ?? 0, t, input.disconnection);
        run.operations.push(op);
      }
    }
    recordMinute(run, m, size, t);
    before = t;
  }
  return run;
}

/** The largest size of a run: what a static allocation at peak provisions. */
export function peakSize(run: StrategyRun): SkuUnits {
  let best = sizeAt(run, 0);
  for (let m = 1; m < run.units.length; m++) {
    const s = sizeAt(run, m);
    if (compareSizes(s, best) > 0) best = s;
  }
  return best;
}
