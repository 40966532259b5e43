/**
 * What a run cost and how it served, per strategy. Pure.
 *
 * - Minutes above the load target: the true load (the traffic model's utilization before noise:
 *   the busiest of connections and bandwidth) above the target.
 * - Minutes above high load: the true load above {@link HIGH_LOAD_PERCENT} (90 %), whatever the
 *   target — the minutes a strategy ran close to refusing connections or throttling messages. A
 *   policy that holds its target exactly never counts here; one that runs hot does.
 * - Minutes with refused connections: demand above the connection quota (units × 1,000, less the
 *   app servers' connections); the refused connection-minutes are summed too.
 * - Minutes with throttled traffic: the accepted clients' messages need more than a bandwidth or
 *   routing dimension of the tier tables carries.
 * - Unit-hours per SKU (a minute at `u` units is `u / 60` unit-hours) and the estimated cost:
 *   Σ unit-hours × price per unit-day ÷ 24. Azure counts units by the time they are used and bills
 *   them daily, so pro-rata unit-hours are the billed quantity; messages beyond the included
 *   1,000,000 per unit-day are not counted.
 * - Scale operations: capacity changes started (the oracle: changes between minutes).
 * - Reversals: scale operations followed, within {@link REVERSAL_WINDOW_MS} (30 minutes, start to
 *   start), by one in the other direction (out then in, or in then out; by unit count).
 * - Premium_P2 time: minutes and unit-hours on Premium_P2.
 * - Clients disconnected by scaling: the client connections the strategy's completed changes
 *   closed (`traffic/disconnections.ts`: the removed units' share at a scale-in, or everyone at any
 *   change in the pessimistic model), and the scale-ins among its operations.
 */
import { SCALABLE_SKUS, type ScalableSku } from "../capacity/index.js";
import type { ScaleOperation, StrategyRun } from "./engine.js";

/** How soon a scale in the other direction makes the one before it a reversal, ms (30 minutes). */
const REVERSAL_WINDOW_MS = 30 * 60_000;

/**
 * Scale operations (in start order) followed within `windowMs` of their start by the next one in
 * the other direction.
 */
export function countReversals(operations: readonly ScaleOperation[], windowMs = REVERSAL_WINDOW_MS): number {
  let n = 0;
  for (let i = 0; i + 1 < operations.length; i++) {
    const a = operations[i] as ScaleOperation;
    const b = operations[i + 1] as ScaleOperation;
    const dirA = Math.sign(a.to.units - a.from.units);
    const dirB = Math.sign(b.to.units - b.from.units);
    if (dirA !== 0 && dirB === -dirA && b.startedMs - a.startedMs <= windowMs) n++;
  }
  return n;
}

/**
 * True load counted as high, %: 90. At 100 % the traffic model refuses connections (over the
 * quota) or throttles messages (over a bandwidth dimension), so above 90 % a strategy is within a
 * tenth of that; Azure's autoscale guidance puts scale-out thresholds at 80–90 % for the same
 * reason (see strategies/native.ts). A product choice, not a published limit.
 */
export const HIGH_LOAD_PERCENT = 90;

/** List prices per unit per day, USD, by SKU. */
export type UnitPrices = Readonly<Record<ScalableSku, number>>;

/**
 * Default prices, USD per unit per day (pay-as-you-go list prices; regions and agreements differ —
 * an estimate, override with `--price`):
 * - Standard_S1 1.61: the Standard unit's published estimate of 49.10 USD a month (÷ 30.42 days);
 * - Premium_P1 2.00: the Premium unit's published estimate of 61.00 USD a month;
 * - Premium_P2 2.00: no separate per-unit figure was found; assumed equal to Premium_P1.
 */
export const DEFAULT_PRICES: UnitPrices = {
  Standard_S1: 1.61,
  Premium_P1: 2.0,
  Premium_P2: 2.0,
};

/** Settings of {@link summarize}. */
export interface MetricOptions {
  /** Load target, %. */
  loadTargetPercent: number;
  prices: UnitPrices;
}

/** The figures of one run. */
export interface StrategyMetrics {
  name: string;
  description: string;
  minutes: number;
  /** Minutes with the true load above the target. */
  minutesAboveTarget: number;
  /** Minutes with the true load above {@link HIGH_LOAD_PERCENT} (90 %). */
  minutesAboveHighLoad: number;
  /** Minutes with at least one refused connection. */
  minutesRefused: number;
  /** Refused connections summed over minutes (connection-minutes). */
  refusedConnectionMinutes: number;
  /** Most connections refused in one minute. */
  peakRefused: number;
  /** Minutes with traffic above a bandwidth/routing dimension. */
  minutesThrottled: number;
  /** Unit-hours per SKU (only SKUs used). */
  unitHours: Partial<Record<ScalableSku, number>>;
  totalUnitHours: number;
  /** Estimated cost, USD. */
  cost: number;
  scaleOperations: number;
  /** Scale operations reversed within 30 minutes (see {@link countReversals}). */
  reversals: number;
  /** Minutes on Premium_P2. */
  p2Minutes: number;
  p2UnitHours: number;
  meanUnits: number;
  peakUnits: number;
  /** Highest true load of any minute, %. */
  peakLoadPercent: number;
  /** Client connections closed by the strategy's own capacity changes (see the module comment). */
  clientsDisconnected: number;
  /** Scale operations to fewer units. */
  scaleIns: number;
}

/** Sums up a run (see the module comment). */
export function summarize(run: StrategyRun, options: MetricOptions): StrategyMetrics {
  const minutes = run.units.length;
  const target = options.loadTargetPercent + 1e-6;
  const high = HIGH_LOAD_PERCENT + 1e-6;
  const unitMinutes = new Array<number>(SCALABLE_SKUS.length).fill(0);
  let above = 0;
  let aboveHigh = 0;
  let refusedMinutes = 0;
  let refusedSum = 0;
  let peakRefused = 0;
  let throttled = 0;
  let p2Minutes = 0;
  let peakUnits = 0;
  let peakLoad = 0;
  const p2 = SCALABLE_SKUS.indexOf("Premium_P2");
  for (let m = 0; m < minutes; m++) {
    const load = run.loadPercent[m] as number;
    const units = run.units[m] as number;
    const sku = run.sku[m] as number;
    const refused = run.refused[m] as number;
    if (load > target) above++;
    if (load > high) aboveHigh++;
    if (load > peakLoad) peakLoad = load;
    if (refused > 0) {
      refusedMinutes++;
      refusedSum += refused;
      if (refused > peakRefused) peakRefused = refused;
    }
    if (run.throttled[m]) throttled++;
    unitMinutes[sku] = (unitMinutes[sku] as number) + units;
    if (sku === p2) p2Minutes++;
    if (units > peakUnits) peakUnits = units;
  }
  const unitHours: Partial<Record<ScalableSku, number>> = {};
  let total = 0;
  let cost = 0;
  SCALABLE_SKUS.forEach((sku, i) => {
    const uh = (unitMinutes[i] as number) / 60;
    if (uh <= 0) return;
    unitHours[sku] = uh;
    total += uh;
    cost += (uh / 24) * options.prices[sku];
  });
  return {
    name: run.name,
    description: run.description,
    minutes,
    minutesAboveTarget: above,
    minutesAboveHighLoad: aboveHigh,
    minutesRefused: refusedMinutes,
    refusedConnectionMinutes: refusedSum,
    peakRefused,
    minutesThrottled: throttled,
    unitHours,
    totalUnitHours: total,
    cost,
    scaleOperations: run.operations.length,
    reversals: countReversals(run.operations),
    p2Minutes,
    p2UnitHours: unitHours.Premium_P2 ?? 0,
    meanUnits: minutes > 0 ? (total * 60) / minutes : 0,
    peakUnits,
    peakLoadPercent: peakLoad,
    clientsDisconnected: run.operations.reduce((a, op) => a + (op.disconnected ?? 0), 0),
    scaleIns: run.operations.filter((op) => op.to.units < op.from.units).length,
  };
}

/**
 * Parses `SKU=PRICE` (USD per unit per day) onto the defaults.
 * @throws RangeError naming the bad entry.
 */
export function parsePrices(entries: readonly string[], base: UnitPrices = DEFAULT_PRICES): UnitPrices {
  const out: Record<ScalableSku, number> = { ...base };
  for (const entry of entries.flatMap((e) => e.split(","))) {
    const text = entry.trim();
    if (text === "") continue;
    const [sku, value] = text.split("=").map((s) => s.trim());
    if (!sku || value === undefined || !(SCALABLE_SKUS as readonly string[]).includes(sku)) {
      throw new RangeError(
        `price "${text}" is not SKU=USD-per-unit-day with SKU one of ${SCALABLE_SKUS.join(", ")}`,
      );
    }
    const price = Number(value);
    if (value === "" || !Number.isFinite(price) || price < 0) {
      throw new RangeError(`price of ${sku} must be a non-negative number, got "${value}"`);
    }
    out[sku as ScalableSku] = price;
  }
  return out;
}
