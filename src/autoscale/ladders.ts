/**
 * The unit ladders (allowed unit counts per SKU) a decision uses, pure: the service's, as ARM
 * `listSkus` reports them (`capacity.allowedValues`), over the documented ones (capacity/skus.ts
 * `DEFAULT_LADDERS`, docs/tier-tables.md) — minus the counts the service was seen not to apply.
 *
 * Rules:
 * - Source: `listSkus`' ladder for each SKU it describes with `allowedValues`, the documented
 *   ladder for the others. The last answer is kept in `status.unitLadders` (`service`, `readAt`),
 *   so a restarted operator uses it until it reads again; with no answer yet (or none that
 *   describes a SKU), the documented ladders (`source: BuiltIn`). A failed `listSkus` changes
 *   nothing here: the last answer, or the documented ladders, stay (controller/fetch.ts reads it
 *   every 6 hours, and again after an update was not applied).
 * - Exclusions: an update answered but not applied (Succeeded while the instance kept its size),
 *   or refused as invalid (400), says the service does not offer that count, whatever its ladder
 *   says: the count is left out of that SKU's ladder (`status.unitLadders.excluded`), so the next
 *   decision asks for the next count instead — Azure's ladder has changed before (1, 2, 5, 10,
 *   20, 50, 100 until 2023), and with any ladder the service enforces the operator keeps
 *   scaling. The instance's own unit count is never left out of its SKU's ladder.
 * - The exclusions hold while the spec (`metadata.generation`) and the ladders the service
 *   reports stay as they were recorded under; either change clears them.
 * A reason `UnitLadder` says which ladders were used whenever they differ from the documented
 * ones for an allowed SKU.
 */
import { LADDER_SOURCES, MAX_EXCLUDED_COUNTS, MAX_LADDER_RUNGS, MAX_UNITS } from "../api/constants.js";
import type { UnitLaddersStatus } from "../api/index.js";
import { DEFAULT_LADDERS, SCALABLE_SKUS, type ScalableSku, type UnitLadders } from "../capacity/skus.js";
import { describeLadder } from "../capacity/unit-bounds.js";
import { type Reason, reason } from "./reasons.js";

/** What `listSkus` reported for an instance. */
export interface LadderRead {
  /** Ladders per SKU it described with `allowedValues` (others keep the documented ladder). */
  service: Partial<Record<ScalableSku, readonly number[]>>;
  /** When it answered, RFC 3339. */
  readAt: string;
}

/** A unit count to leave out from now on. */
export interface LadderExclusion {
  sku: ScalableSku;
  units: number;
  outcome: "NotApplied" | "Refused";
}

/** Everything {@link chooseLadders} reads. */
export interface LadderInput {
  /** This pass's `listSkus` answer (the operator's cache); absent: none yet, or it failed. */
  read?: LadderRead | undefined;
  /** `status.unitLadders` as stored. */
  stored?: UnitLaddersStatus | undefined;
  /** The policy's `metadata.generation`. */
  generation?: number | undefined;
  /** The instance's size now (its units are never left out). */
  current?: { sku: string; units: number } | undefined;
  /** The SKUs the policy allows (`spec.skus`): only their ladders are reported. */
  allowed: readonly string[];
  /** Counts found not taking on this pass. */
  exclude?: readonly LadderExclusion[];
  /** The time of the pass, RFC 3339. */
  nowIso: string;
}

/** The ladders to decide with, and what to store. */
export interface LadderChoice {
  /** The ladders, exclusions applied. */
  ladders: UnitLadders;
  /** `status.unitLadders` after this pass. */
  status: UnitLaddersStatus;
  /** Present when the ladders differ from the documented ones for an allowed SKU. */
  reason?: Reason;
}

/** A ladder as read back (from ARM or from status): whole counts in 1..1000, ascending, once each. */
function clean(units: readonly unknown[]): number[] {
  const ok = units.filter(
    (u): u is number => Number.isInteger(u) && (u as number) >= 1 && (u as number) <= MAX_UNITS,
  );
  return [...new Set(ok)].sort((a, b) => a - b).slice(0, MAX_LADDER_RUNGS);
}

type ServiceLadders = Partial<Record<ScalableSku, number[]>>;

function fromRead(read: LadderRead): ServiceLadders {
  const out: ServiceLadders = {};
  for (const sku of SCALABLE_SKUS) {
    const units = read.service[sku];
    if (units && clean(units).length > 0) out[sku] = clean(units);
  }
  return out;
}

function fromStatus(stored: UnitLaddersStatus | undefined): ServiceLadders {
  const out: ServiceLadders = {};
  for (const entry of stored?.service ?? []) {
    if (!SCALABLE_SKUS.includes(entry.sku) || !Array.isArray(entry.units)) continue;
    const units = clean(entry.units);
    if (units.length > 0) out[entry.sku] = units;
  }
  return out;
}

/** The documented ladders with the service's over them. */
function overlay(service: ServiceLadders): Record<ScalableSku, readonly number[]> {
  const out: Record<ScalableSku, readonly number[]> = { ...DEFAULT_LADDERS };
  for (const sku of SCALABLE_SKUS) {
    const units = service[sku];
    if (units) out[sku] = units;
  }
  return out;
}

const sameLadders = (a: UnitLadders, b: UnitLadders) =>
  SCALABLE_SKUS.every((s) => a[s].length === b[s].length && a[s].every((u, i) => u === b[s][i]));

const shownCount = (e: { sku: string; units: number }) => `${e.sku} ${e.units}`;

/** The ladders of a pass and `status.unitLadders` after it (see the module comment). Pure. */
export function chooseLadders(input: LadderInput): LadderChoice {
  const { stored } = input;
  const service = input.read ? fromRead(input.read) : fromStatus(stored);
  const readAt = input.read?.readAt ?? stored?.readAt;
  const base = overlay(service);
  // Exclusions hold while the spec and the service's ladders are those they were recorded under.
  const kept =
    stored?.excluded &&
    stored.generation === input.generation &&
    sameLadders(overlay(fromStatus(stored)), base)
      ? stored.excluded.filter((e) => SCALABLE_SKUS.includes(e.sku) && Number.isInteger(e.units))
      : [];
  const byCount = new Map(kept.map((e) => [`${e.sku}/${e.units}`, e]));
  for (const e of input.exclude ?? []) {
    byCount.delete(`${e.sku}/${e.units}`);
    byCount.set(`${e.sku}/${e.units}`, {
      sku: e.sku,
      units: e.units,
      time: input.nowIso,
      outcome: e.outcome,
    });
  }
  const excluded = [...byCount.values()].slice(-MAX_EXCLUDED_COUNTS);

  const ladders: Record<ScalableSku, readonly number[]> = { ...base };
  for (const sku of SCALABLE_SKUS) {
    const out = new Set(excluded.filter((e) => e.sku === sku).map((e) => e.units));
    if (input.current?.sku === sku) out.delete(input.current.units);
    if (out.size > 0) ladders[sku] = base[sku].filter((u) => !out.has(u));
  }

  const serviceSkus = SCALABLE_SKUS.filter((s) => service[s] !== undefined);
  const source = serviceSkus.length > 0 ? LADDER_SOURCES[0] : LADDER_SOURCES[1];
  const status: UnitLaddersStatus = {
    source,
    ...(readAt !== undefined ? { readAt } : {}),
    ...(serviceSkus.length > 0
      ? { service: serviceSkus.map((sku) => ({ sku, units: [...(service[sku] as number[])] })) }
      : {}),
    ...(excluded.length > 0 ? { excluded } : {}),
    ...(excluded.length > 0 && input.generation !== undefined ? { generation: input.generation } : {}),
  };

  const allowed = SCALABLE_SKUS.filter((s) => input.allowed.includes(s));
  const differs = allowed.filter(
    (s) =>
      ladders[s].length !== DEFAULT_LADDERS[s].length ||
      ladders[s].some((u, i) => u !== DEFAULT_LADDERS[s][i]),
  );
  if (differs.length === 0) return { ladders, status };
  const fromService = differs.filter((s) => service[s] !== undefined);
  const parts: string[] = [];
  if (fromService.length > 0) {
    parts.push(
      `unit counts from listSkus${readAt ? ` (read ${readAt})` : ""}: ${fromService.map((s) => `${s} ${describeLadder(base[s])}`).join("; ")}`,
    );
  }
  const left = excluded.filter((e) => allowed.includes(e.sku));
  if (left.length > 0) {
    parts.push(
      `not asked for again, the service did not apply them: ${left.map((e) => `${shownCount(e)} (${e.outcome === "Refused" ? "refused" : "not applied"} ${e.time})`).join(", ")}`,
    );
  }
  return { ladders, status, reason: reason("UnitLadder", parts.join("; ")) };
}

/**
 * True when counts left out of the ladder lie between the instance's units and what the metrics
 * ask for (`ask`, the decision's recommendation): the decision holds the size only because the
 * counts it would ask for were not applied. Pure.
 */
export function heldByExclusions(
  ask: { units: number } | undefined,
  current: { units: number },
  status: UnitLaddersStatus | undefined,
  allowed: readonly string[],
): boolean {
  if (!ask || ask.units === current.units) return false;
  const lo = Math.min(ask.units, current.units);
  const hi = Math.max(ask.units, current.units);
  return (status?.excluded ?? []).some(
    (e) => allowed.includes(e.sku) && e.units !== current.units && e.units >= lo && e.units <= hi,
  );
}
