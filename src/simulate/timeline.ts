/**
 * The run as a CSV timeline: one row per minute per strategy, in time order.
 *
 * Columns: `time` (start of the minute, RFC 3339 UTC), `strategy` (policy, native-p1,
 * native-p2, static, oracle), `demand_connections` (client connections wanted), `sku`, `units`,
 * `load_percent` (true load before noise, one decimal; above 100 when traffic exceeds a bandwidth
 * limit), `refused_connections`, `throttled` (1 when traffic exceeds a bandwidth limit).
 */
import { SCALABLE_SKUS } from "../capacity/index.js";
import { MINUTE_MS, type StrategyRun } from "./engine.js";

export const TIMELINE_HEADER =
  "time,strategy,demand_connections,sku,units,load_percent,refused_connections,throttled";

/**
 * The CSV text in chunks of about `rowsPerChunk` rows (header first), so that a long run can be
 * written without holding the whole file in memory.
 */
export function* timelineChunks(
  startMs: number,
  demand: Float64Array,
  runs: readonly StrategyRun[],
  rowsPerChunk = 20_000,
): Generator<string> {
  let chunk = `${TIMELINE_HEADER}\n`;
  let rows = 0;
  for (let m = 0; m < demand.length; m++) {
    const time = new Date(startMs + m * MINUTE_MS).toISOString().replace(".000Z", "Z");
    const d = demand[m] as number;
    for (const run of runs) {
      const refused = run.refused[m] as number;
      chunk += `${time},${run.name},${d},${SCALABLE_SKUS[run.sku[m] as number]},${run.units[m]},${(run.loadPercent[m] as number).toFixed(1)},${Math.round(refused)},${run.throttled[m]}\n`;
      rows++;
    }
    if (rows >= rowsPerChunk) {
      yield chunk;
      chunk = "";
      rows = 0;
    }
  }
  if (chunk !== "") yield chunk;
}

/** The whole CSV as one string (short runs and tests). */
export function timelineCsv(startMs: number, demand: Float64Array, runs: readonly StrategyRun[]): string {
  return [...timelineChunks(startMs, demand, runs)].join("");
}
