/**
 * The sizes (SKU × unit count) a decision may pick: the allowed SKUs' ladders, restricted to the
 * SKUs one online change away from the current one, ordered from the smallest to the largest.
 */
import {
  isOnlineChange,
  SCALABLE_SKUS,
  type ScalableSku,
  type SkuUnits,
  tierRank,
  type UnitLadders,
} from "../capacity/skus.js";

/**
 * Orders two sizes: by units, then by tier (a higher tier at the same units is larger — Premium_P2
 * lifts the routing caps of Standard_S1/Premium_P1). Negative when `a` is smaller.
 */
export function compareSizes(a: SkuUnits, b: SkuUnits): number {
  return a.units - b.units || tierRank(a.sku) - tierRank(b.sku);
}

/** True when both sizes have the same SKU and units. */
export function sameSize(a: SkuUnits, b: SkuUnits): boolean {
  return a.sku === b.sku && a.units === b.units;
}

/** "Premium_P1 20" — how sizes are written in messages. */
export function formatSize(s: SkuUnits): string {
  return `${s.sku} ${s.units}`;
}

/**
 * The sizes a decision may choose, smallest first.
 *
 * - Only SKUs in `allowed` that are the current SKU or one online change away from it (S1 ↔ P1,
 *   P1 ↔ P2); S1 → P2 goes through P1 in two decisions.
 * - Ordered by units; at equal units the current SKU first, then the lowest tier — so a SKU only
 *   changes when the unit count needs it.
 */
export class SizeList {
  readonly sizes: readonly SkuUnits[];
  /** The allowed SKUs reachable from `current`. */
  readonly reachable: readonly ScalableSku[];
  /** Distinct unit counts of {@link sizes}, ascending (the union ladder "Steps" count on). */
  readonly rungs: readonly number[];

  constructor(
    allowed: readonly ScalableSku[],
    readonly current: SkuUnits,
    ladders: UnitLadders,
  ) {
    this.reachable = SCALABLE_SKUS.filter(
      (s) => allowed.includes(s) && (s === current.sku || isOnlineChange(current.sku, s)),
    );
    const out: SkuUnits[] = [];
    for (const sku of this.reachable) for (const units of ladders[sku]) out.push({ sku, units });
    const pref = (s: SkuUnits) => (s.sku === current.sku ? -1 : tierRank(s.sku));
    this.sizes = out.sort((a, b) => a.units - b.units || pref(a) - pref(b));
    this.rungs = [...new Set(this.sizes.map((s) => s.units))];
  }

  /** True when no allowed SKU is reachable. */
  get empty(): boolean {
    return this.sizes.length === 0;
  }

  /** The largest size (most units; at equal units the highest tier). */
  top(): SkuUnits | undefined {
    const maxUnits = this.rungs[this.rungs.length - 1];
    const atMax = this.sizes.filter((s) => s.units === maxUnits);
    return atMax.sort(compareSizes)[atMax.length - 1];
  }

  /** The first size (in list order) with at least `units` that satisfies `fits`. */
  firstAtLeast(units: number, fits: (s: SkuUnits) => boolean = () => true): SkuUnits | undefined {
    return this.sizes.find((s) => s.units >= units && fits(s));
  }

  /**
   * The size with the most units ≤ `units`: at equal units the current SKU, else the highest tier
   * (the most capacity under the cap).
   */
  largestAtMost(units: number): SkuUnits | undefined {
    const below = this.rungs.filter((u) => u <= units);
    const rung = below[below.length - 1];
    if (rung === undefined) return undefined;
    return this.atUnits(rung, "highest");
  }

  /** A size at exactly `units`: the current SKU if it has it, else the lowest (or highest) tier. */
  atUnits(units: number, prefer: "lowest" | "highest" = "lowest"): SkuUnits | undefined {
    const at = this.sizes.filter((s) => s.units === units);
    const cur = at.find((s) => s.sku === this.current.sku);
    if (cur) return cur;
    const sorted = at.sort(compareSizes);
    return prefer === "lowest" ? sorted[0] : sorted[sorted.length - 1];
  }

  /** The next size with more units than `units` (current SKU first at equal units). */
  nextUp(units: number): SkuUnits | undefined {
    const rung = this.rungs.find((u) => u > units);
    return rung === undefined ? undefined : this.atUnits(rung);
  }

  /** The next size with fewer units than `units`. */
  nextDown(units: number): SkuUnits | undefined {
    const below = this.rungs.filter((u) => u < units);
    const rung = below[below.length - 1];
    return rung === undefined ? undefined : this.atUnits(rung);
  }

  /** Whether `size` is one of the choosable sizes. */
  has(size: SkuUnits): boolean {
    return this.sizes.some((s) => sameSize(s, size));
  }
}
