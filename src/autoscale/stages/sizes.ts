/**
 * The sizes a decision may choose from: the allowed SKUs' ladder unit counts one online change
 * from the current SKU (sizes.ts `SizeList`). None when the current SKU is not scalable (Free:
 * changing it changes the instance's IP) or no allowed SKU is reachable; and no decision leaves
 * units.min..units.max, so without a size in it there is none to make.
 */
import type { CapacityPolicySpec } from "../../api/index.js";
import {
  DEFAULT_LADDERS,
  isScalableSku,
  type SkuName,
  type SkuUnits,
  type UnitLadders,
} from "../../capacity/skus.js";
import { noUnitCountIn } from "../../capacity/unit-bounds.js";
import { SizeList } from "../sizes.js";

/** Why no size lies in units.min..units.max: an invalid spec, or none reachable. */
export interface SizeRefusal {
  reason: string;
  code: "NoRungInRange" | "SkuPath";
  message: string;
}

/** The sizes and the current size, or why there are none (see the module comment). */
export type SizeChoice =
  | { ok: true; sizes: SizeList; current: SkuUnits }
  | { ok: false; sizes: SizeList | undefined; refusal?: SizeRefusal };

/** The sizes of `spec` from `current` on `ladders` (the documented ones when absent). */
export function allowedSizes(
  spec: CapacityPolicySpec,
  current: { sku: SkuName; units: number },
  ladders: UnitLadders = DEFAULT_LADDERS,
): SizeChoice {
  const curSku = current.sku;
  if (!isScalableSku(curSku)) return { ok: false, sizes: undefined };
  const allowed = spec.skus.filter(isScalableSku);
  const sizes = new SizeList(allowed, { sku: curSku, units: current.units }, ladders);
  if (sizes.empty) return { ok: false, sizes };
  const noCount = noUnitCountIn("spec.units", spec.units.min, spec.units.max, allowed, ladders);
  if (noCount !== undefined) {
    return { ok: false, sizes, refusal: { reason: "InvalidSpec", code: "NoRungInRange", message: noCount } };
  }
  if (!sizes.sizes.some((s) => s.units >= spec.units.min && s.units <= spec.units.max)) {
    const message = `no size of ${sizes.reachable.join(", ")} (one online change from ${curSku}) lies in units ${spec.units.min}..${spec.units.max}`;
    return { ok: false, sizes, refusal: { reason: "SkuPath", code: "SkuPath", message } };
  }
  return { ok: true, sizes, current: { sku: curSku, units: current.units } };
}
