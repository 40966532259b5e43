/**
 * Sizing: the smallest valid SKU and unit count whose capacity covers a workload's demand, by the
 * SignalR seed's method for mixed use cases ("Casos de uso mixtos"): split the mix into basic
 * scenarios, compute each one's inbound and outbound bandwidth with the formula, add them up, and
 * check the sums against the service's maximum inbound and outbound bandwidth tables. Scenarios
 * with a routing or REST cost below that maximum (small group, send to connection, send to user,
 * CloudEvents echo, …) are also checked against their own table — the seeds warn that routing cost
 * dominates them and is not visible in the totals. Connections count 1,000 per unit.
 */
import { type ScenarioCapacity, scenarioAppServers, scenarioCapacity } from "./model.js";
import {
  candidates,
  DEFAULT_LADDERS,
  SCALABLE_SKUS,
  type ScalableSku,
  type ServiceKind,
  type UnitLadders,
} from "./skus.js";
import { type ScenarioName, SERVICE_MAXIMA, tableFor } from "./tier-tables.js";
import type { ScenarioDemand } from "./workload.js";

/** What a dimension measures. */
export type DimensionUnit = "connections" | "bytes/s";

/** One dimension of capacity checked by sizing. */
export interface Dimension {
  /** `connections`, `inboundBandwidth`, `outboundBandwidth`, or `<scenario>.inbound|outbound`. */
  name: string;
  unit: DimensionUnit;
  /** What the workload needs, in `unit`. */
  required: number;
  /** What the size provides, in `unit`. */
  capacity: number;
  /** Inbound/outbound messages/s needed, for bandwidth dimensions (messages as sent). */
  requiredMessagesPerSecond?: number;
  /** Messages/s the size provides at the workload's message size, for bandwidth dimensions. */
  capacityMessagesPerSecond?: number;
  /** required / capacity (0 when nothing is required). */
  utilization: number;
  /** capacity − required, in `unit` (negative = shortfall). */
  headroom: number;
}

/** The answer of {@link size}. */
export interface SizingResult {
  service: ServiceKind;
  /** False when no allowed SKU and unit count covers the demand; sku/units are then the largest allowed. */
  fits: boolean;
  sku: ScalableSku;
  units: number;
  /** App servers in SignalR default mode (0 for serverless-only mixes and for Web PubSub). */
  appServers: number;
  /** The dimension with the highest utilization at this size: the one that set the size. */
  limitedBy: string;
  dimensions: Dimension[];
  /** When `fits` is false: the dimensions over capacity and by how much (positive, in their unit). */
  shortfall: { name: string; unit: DimensionUnit; missing: number }[];
}

function bandwidthDimension(
  name: string,
  requiredBytes: number,
  requiredMessages: number,
  capacityBytes: number,
): Dimension {
  const bytesPerMessage = requiredMessages > 0 ? requiredBytes / requiredMessages : 2048;
  return {
    name,
    unit: "bytes/s",
    required: requiredBytes,
    capacity: capacityBytes,
    requiredMessagesPerSecond: requiredMessages,
    capacityMessagesPerSecond: capacityBytes / bytesPerMessage,
    utilization: ratio(requiredBytes, capacityBytes),
    headroom: capacityBytes - requiredBytes,
  };
}

function ratio(required: number, capacity: number): number {
  if (required <= 0) return 0;
  return capacity > 0 ? required / capacity : Number.POSITIVE_INFINITY;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * Every capacity dimension of `demands` at `sku` × `units`: connections, total inbound and
 * outbound bandwidth against the service maxima, and each routing-bound scenario against its own
 * table. Pure; no rounding. `totalConnections` replaces the sum of the scenarios' connections when
 * scenarios share connections (a user in a chat room who also gets announcements counts once).
 */
export function evaluate(
  service: ServiceKind,
  demands: readonly ScenarioDemand[],
  sku: ScalableSku,
  units: number,
  totalConnections?: number,
): Dimension[] {
  const maxima = SERVICE_MAXIMA[service];
  const maxIn = scenarioCapacity(service, maxima.inbound, sku, units);
  const maxOut = scenarioCapacity(service, maxima.outbound, sku, units);
  const connections = totalConnections ?? sum(demands.map((d) => d.connections));
  const dims: Dimension[] = [
    {
      name: "connections",
      unit: "connections",
      required: connections,
      capacity: maxIn.connections,
      utilization: ratio(connections, maxIn.connections),
      headroom: maxIn.connections - connections,
    },
    bandwidthDimension(
      "inboundBandwidth",
      sum(demands.map((d) => d.inboundBytesPerSecond)),
      sum(demands.map((d) => d.inboundMessagesPerSecond)),
      maxIn.inboundBytesPerSecond,
    ),
    bandwidthDimension(
      "outboundBandwidth",
      sum(demands.map((d) => d.outboundBytesPerSecond)),
      sum(demands.map((d) => d.outboundMessagesPerSecond)),
      maxOut.outboundBytesPerSecond,
    ),
  ];
  for (const d of demands) {
    const table = tableFor(service, d.scenario);
    const cap: ScenarioCapacity = scenarioCapacity(service, d.scenario, sku, units);
    if (!table.inboundIsBenchmarkTotal && cap.inboundBytesPerSecond < maxIn.inboundBytesPerSecond) {
      dims.push(
        bandwidthDimension(
          `${d.scenario}.inbound`,
          d.inboundBytesPerSecond,
          d.inboundMessagesPerSecond,
          cap.inboundBytesPerSecond,
        ),
      );
    }
    if (cap.outboundBytesPerSecond < maxOut.outboundBytesPerSecond) {
      dims.push(
        bandwidthDimension(
          `${d.scenario}.outbound`,
          d.outboundBytesPerSecond,
          d.outboundMessagesPerSecond,
          cap.outboundBytesPerSecond,
        ),
      );
    }
  }
  return mergeSameName(dims);
}

/** A scenario listed twice in a mix shows as one dimension (demands added). */
function mergeSameName(dims: Dimension[]): Dimension[] {
  const out = new Map<string, Dimension>();
  for (const d of dims) {
    const prev = out.get(d.name);
    if (!prev) {
      out.set(d.name, d);
      continue;
    }
    out.set(
      d.name,
      bandwidthDimension(
        d.name,
        prev.required + d.required,
        (prev.requiredMessagesPerSecond ?? 0) + (d.requiredMessagesPerSecond ?? 0),
        d.capacity,
      ),
    );
  }
  return [...out.values()];
}

/** The dimension with the highest utilization (first on ties). */
function bindingDimension(dims: readonly Dimension[]): Dimension {
  let best = dims[0];
  if (!best) throw new RangeError("no dimensions");
  for (const d of dims) if (d.utilization > best.utilization) best = d;
  return best;
}

/** App servers for a mix at `units`: the most any of its scenarios' app-server tables asks for. */
export function appServersFor(
  service: ServiceKind,
  scenarios: readonly ScenarioName[],
  units: number,
): number {
  return Math.max(0, ...scenarios.map((s) => scenarioAppServers(service, s, units)));
}

/** Options of {@link size}. */
export interface SizeOptions {
  /** SKUs that may be chosen (default: Standard_S1, Premium_P1, Premium_P2). */
  allowedSkus?: readonly ScalableSku[];
  /** Unit ladders (default: the documented ones; pass `listSkus` results when known). */
  ladders?: UnitLadders;
  /** Highest utilization allowed on every dimension, 0–1 (default 1: exactly at capacity). */
  maxUtilization?: number;
  /** Total concurrent connections when scenarios share them (default: the sum of the scenarios'). */
  totalConnections?: number;
}

/**
 * The smallest valid (SKU, units) of the allowed SKUs whose every dimension stays within
 * `maxUtilization` for `demands`; ordered by units, then by tier (lowest first). When none does,
 * returns the largest allowed size with `fits: false` and the shortfall — never a silent clamp.
 * @throws RangeError when no SKU is allowed.
 */
export function size(
  service: ServiceKind,
  demands: readonly ScenarioDemand[],
  options: SizeOptions = {},
): SizingResult {
  const allowed = options.allowedSkus ?? SCALABLE_SKUS;
  const limit = options.maxUtilization ?? 1;
  const all = candidates(allowed, options.ladders ?? DEFAULT_LADDERS);
  const last = all[all.length - 1];
  if (!last)
    throw new RangeError("no SKU allowed: allow at least one of Standard_S1, Premium_P1, Premium_P2");
  const scenarios = demands.map((d) => d.scenario);
  for (const c of all) {
    const dims = evaluate(service, demands, c.sku, c.units, options.totalConnections);
    if (dims.every((d) => d.utilization <= limit + 1e-12)) {
      return result(service, true, c.sku, c.units, dims, scenarios, limit);
    }
  }
  const dims = evaluate(service, demands, last.sku, last.units, options.totalConnections);
  return result(service, false, last.sku, last.units, dims, scenarios, limit);
}

function result(
  service: ServiceKind,
  fits: boolean,
  sku: ScalableSku,
  units: number,
  dims: Dimension[],
  scenarios: readonly ScenarioName[],
  limit: number,
): SizingResult {
  return {
    service,
    fits,
    sku,
    units,
    appServers: service === "SignalR" ? appServersFor(service, scenarios, units) : 0,
    limitedBy: bindingDimension(dims).name,
    dimensions: dims,
    shortfall: fits
      ? []
      : dims
          .filter((d) => d.utilization > limit)
          .map((d) => ({ name: d.name, unit: d.unit, missing: d.required - d.capacity * limit })),
  };
}
