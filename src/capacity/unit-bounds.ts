/**
 * Whether a bound a policy sets on the unit count (its `units` range, a schedule's floor, the
 * fixed fallback size) holds a unit count the allowed SKUs offer — the unit ladders of skus.ts —
 * and, when it does not, the nearest counts that do. The CRD's CEL rules, the operator's
 * validation and the decision all ask these questions. Pure.
 */
import { DEFAULT_LADDERS, SCALABLE_SKUS, type ScalableSku, type UnitLadders } from "./skus.js";

/** The distinct unit counts of the allowed SKUs' ladders, ascending. */
export function allowedUnitCounts(
  allowed: readonly ScalableSku[],
  ladders: UnitLadders = DEFAULT_LADDERS,
): number[] {
  const all = SCALABLE_SKUS.filter((s) => allowed.includes(s)).flatMap((s) => ladders[s]);
  return [...new Set(all)].sort((a, b) => a - b);
}

/** The unit counts of the allowed SKUs' ladders in `[lo, hi]` (units), ascending. */
export function unitCountsIn(
  lo: number,
  hi: number,
  allowed: readonly ScalableSku[],
  ladders: UnitLadders = DEFAULT_LADDERS,
): number[] {
  return allowedUnitCounts(allowed, ladders).filter((u) => u >= lo && u <= hi);
}

/**
 * The nearest unit counts of the allowed SKUs outside `[lo, hi]`: the largest below `lo` and the
 * smallest above `hi` (either absent at the ends of the ladders).
 */
export function nearestUnitCounts(
  lo: number,
  hi: number,
  allowed: readonly ScalableSku[],
  ladders: UnitLadders = DEFAULT_LADDERS,
): { below?: number; above?: number } {
  const counts = allowedUnitCounts(allowed, ladders);
  const below = counts.filter((u) => u < lo).at(-1);
  const above = counts.find((u) => u > hi);
  return { ...(below !== undefined ? { below } : {}), ...(above !== undefined ? { above } : {}) };
}

/**
 * Why `[lo, hi]` holds no unit count of the allowed SKUs, naming the bound and the nearest valid
 * counts, e.g. `spec.units: 15..15 holds no unit count Premium_P1 offers (1–10, 20, 30 … 100);
 * the nearest are 10 and 20`; `undefined` when it holds one.
 * @param bound how the bound is named in the message, e.g. `spec.units` or `spec.schedules[0].minUnits`.
 */
export function noUnitCountIn(
  bound: string,
  lo: number,
  hi: number,
  allowed: readonly ScalableSku[],
  ladders: UnitLadders = DEFAULT_LADDERS,
): string | undefined {
  if (unitCountsIn(lo, hi, allowed, ladders).length > 0) return undefined;
  const skus = SCALABLE_SKUS.filter((s) => allowed.includes(s));
  const { below, above } = nearestUnitCounts(lo, hi, allowed, ladders);
  const nearest = [below, above].filter((u) => u !== undefined);
  const range = lo === hi ? `${lo}` : `${lo}..${hi}`;
  return `${bound}: ${range} holds no unit count ${skus.join(" or ")} offer${skus.length === 1 ? "s" : ""} (${describeLadder(allowedUnitCounts(allowed, ladders))}); the nearest ${nearest.length === 1 ? "is" : "are"} ${nearest.join(" and ")}`;
}

/** "1–10, 20, 30 … 100": a ladder in few words (runs of consecutive counts and of equal steps shortened). */
export function describeLadder(counts: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < counts.length) {
    const start = counts[i] as number;
    let j = i;
    while (j + 1 < counts.length && (counts[j + 1] as number) === (counts[j] as number) + 1) j++;
    if (j - i >= 2) {
      parts.push(`${start}–${counts[j]}`);
      i = j + 1;
      continue;
    }
    const step = (counts[i + 1] ?? 0) - start;
    j = i;
    while (j + 1 < counts.length && (counts[j + 1] as number) - (counts[j] as number) === step) j++;
    if (j - i >= 3) {
      parts.push(`${start}, ${start + step} … ${counts[j]}`);
      i = j + 1;
      continue;
    }
    parts.push(`${start}`);
    i++;
  }
  return parts.join(", ");
}

/**
 * A CEL expression true when some unit count `u` of the allowed SKUs (`skus`, a CEL list of SKU
 * names) satisfies `condition` (CEL over `u`), generated from `ladders` (the documented ones in
 * the CRD): SKUs with the same ladder share one `exists`.
 */
export function celSomeUnitCount(
  skus: string,
  condition: string,
  ladders: UnitLadders = DEFAULT_LADDERS,
): string {
  const groups = new Map<string, ScalableSku[]>();
  for (const sku of SCALABLE_SKUS) {
    const key = ladders[sku].join(",");
    groups.set(key, [...(groups.get(key) ?? []), sku]);
  }
  return [...groups.entries()]
    .map(([ladder, group]) => {
      const listed = group.map((s) => `'${s}' in ${skus}`).join(" || ");
      return `((${listed}) && [${ladder}].exists(u, ${condition}))`;
    })
    .join(" || ");
}
