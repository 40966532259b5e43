/**
 * SKUs, tiers and the allowed unit counts ("unit ladders") of Azure SignalR Service and Azure Web
 * PubSub. Both services share the same SKUs and ladders.
 *
 * Source: the services' scale documentation, restated in `docs/tier-tables.md` ("Allowed unit
 * counts"): Standard_S1 and Premium_P1 allow 1–10, 20, 30 … 100 units; Premium_P2 allows 100, 200 …
 * 1,000 and needs at least 100 units; Free_F1 has exactly 1 unit of 20 connections and is never
 * scaled to or from (changing it changes the instance's IP). The ladders are confirmed at run time
 * with ARM `listSkus`; these tables are the fallback.
 */

/** The two services this project scales. */
export type ServiceKind = "SignalR" | "WebPubSub";
export const SERVICE_KINDS: readonly ServiceKind[] = ["SignalR", "WebPubSub"];

/** Every SKU name Azure uses for these services. */
export type SkuName = "Free_F1" | "Standard_S1" | "Premium_P1" | "Premium_P2";

/** The SKUs the operator may scale between (Free_F1 never is a target). */
export type ScalableSku = Exclude<SkuName, "Free_F1">;

/** Scalable SKUs from the lowest tier to the highest. */
export const SCALABLE_SKUS: readonly ScalableSku[] = ["Standard_S1", "Premium_P1", "Premium_P2"];

/** Every SKU name, from the lowest tier to the highest. */
export const SKU_NAMES: readonly SkuName[] = ["Free_F1", ...SCALABLE_SKUS];

/** Azure's tier name for each SKU, as ARM reports it in `sku.tier`. */
export const SKU_TIER: Readonly<Record<SkuName, "Free" | "Standard" | "Premium">> = {
  Free_F1: "Free",
  Standard_S1: "Standard",
  Premium_P1: "Premium",
  Premium_P2: "Premium",
};

/** Allowed unit counts per SKU, ascending. */
export type UnitLadders = Readonly<Record<ScalableSku, readonly number[]>>;

const S1_P1_LADDER: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
const P2_LADDER: readonly number[] = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000];

/** The documented ladders, used when `listSkus` is not available. */
export const DEFAULT_LADDERS: UnitLadders = {
  Standard_S1: S1_P1_LADDER,
  Premium_P1: S1_P1_LADDER,
  Premium_P2: P2_LADDER,
};

/** Connections one unit holds, for every SKU but Free_F1 (which holds 20 in total). */
export const CONNECTIONS_PER_UNIT = 1000;

/** True for a SKU name Azure knows. */
export function isSkuName(value: string): value is SkuName {
  return (SKU_NAMES as readonly string[]).includes(value);
}

/** True for the SKU names the operator may scale to. */
export function isScalableSku(value: string): value is ScalableSku {
  return (SCALABLE_SKUS as readonly string[]).includes(value);
}

/** One valid capacity: a SKU and a unit count on its ladder. */
export interface SkuUnits {
  sku: ScalableSku;
  units: number;
}

/**
 * Every valid (SKU, units) pair of the allowed SKUs, ordered by units ascending, then by tier
 * (lowest first). The first pair that satisfies a need is the cheapest answer.
 */
export function candidates(
  allowed: readonly ScalableSku[],
  ladders: UnitLadders = DEFAULT_LADDERS,
): SkuUnits[] {
  const out: SkuUnits[] = [];
  for (const sku of SCALABLE_SKUS) {
    if (!allowed.includes(sku)) continue;
    for (const units of ladders[sku]) out.push({ sku, units });
  }
  return out.sort((a, b) => a.units - b.units || SCALABLE_SKUS.indexOf(a.sku) - SCALABLE_SKUS.indexOf(b.sku));
}

/**
 * Whether changing from one capacity to another happens online (no downtime). Unit changes within
 * a SKU, Standard_S1 ↔ Premium_P1 and Premium_P1 ↔ Premium_P2 are online; anything to or from
 * Free_F1 is not (it changes the instance's IP). S1 ↔ P2 is not a documented single step.
 */
export function isOnlineChange(from: SkuName, to: SkuName): boolean {
  if (from === to) return from !== "Free_F1";
  const pair = new Set([from, to]);
  return (
    (pair.has("Standard_S1") && pair.has("Premium_P1")) || (pair.has("Premium_P1") && pair.has("Premium_P2"))
  );
}

/** Tier order index (0 = Standard_S1) used to compare SKUs. */
export function tierRank(sku: ScalableSku): number {
  return SCALABLE_SKUS.indexOf(sku);
}
