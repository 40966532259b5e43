/**
 * Capacity of one basic scenario at a SKU and unit count, from the seed tables
 * (`tier-tables.ts`): proportional to units from the unit-1 figure, except where a routing cap
 * holds on Standard_S1 / Premium_P1 and Premium_P2 lifts it. Reproduces every measured figure of
 * both seeds (see the tests).
 */
import { CONNECTIONS_PER_UNIT, type ScalableSku, type ServiceKind } from "./skus.js";
import { BENCHMARK_MESSAGE_BYTES, type ScenarioName, type ScenarioTable, tableFor } from "./tier-tables.js";

/** Capacity of one scenario at one size. Messages are 2,048-byte benchmark messages. */
export interface ScenarioCapacity {
  /** Concurrent connections. */
  connections: number;
  /** Inbound messages/s; for `inboundIsBenchmarkTotal` scenarios the seed's total, not a ceiling. */
  inboundMessagesPerSecond: number;
  /** Outbound messages/s. */
  outboundMessagesPerSecond: number;
  /** Inbound bandwidth, bytes/s (messages/s × 2,048 B). */
  inboundBytesPerSecond: number;
  /** Outbound bandwidth, bytes/s. */
  outboundBytesPerSecond: number;
}

function unitOneRate(figures: readonly number[], table: ScenarioTable): number {
  const first = figures[0];
  if (first === undefined || table.units[0] !== 1)
    throw new Error(`table ${table.seedTable} has no unit-1 figure`);
  return first;
}

/** Messages/s capacity that scales with units, with the routing cap applied. */
function scaledRate(table: ScenarioTable, perUnit: number, sku: ScalableSku, units: number): number {
  const cap = table.routingCap;
  if (!cap) return perUnit * units;
  if (sku === "Premium_P2") return perUnit * cap.p2PerUnitFactor * units;
  return perUnit * Math.min(units, cap.fromUnits);
}

/**
 * Capacity of `scenario` on `service` at `sku` × `units`.
 * @throws RangeError when the service has no such scenario or `units` is not positive.
 */
export function scenarioCapacity(
  service: ServiceKind,
  scenario: ScenarioName,
  sku: ScalableSku,
  units: number,
): ScenarioCapacity {
  if (!(units > 0)) throw new RangeError(`units must be positive, got ${units}`);
  const table = tableFor(service, scenario);
  const inRate = unitOneRate(table.inboundMessagesPerSecond, table);
  const outRate = unitOneRate(table.outboundMessagesPerSecond, table);
  const inbound = table.inboundIsBenchmarkTotal ? inRate : scaledRate(table, inRate, sku, units);
  const outbound = scaledRate(table, outRate, sku, units);
  return {
    connections: CONNECTIONS_PER_UNIT * units,
    inboundMessagesPerSecond: inbound,
    outboundMessagesPerSecond: outbound,
    inboundBytesPerSecond: inbound * BENCHMARK_MESSAGE_BYTES,
    outboundBytesPerSecond: outbound * BENCHMARK_MESSAGE_BYTES,
  };
}

/**
 * Suggested app servers (default mode) for a scenario at `units`, from the seed's app-server
 * table: linear between measured points, rounded up, at least 1. `0` for serverless scenarios and
 * for Web PubSub (its upstream is sized from its own request rate).
 */
export function scenarioAppServers(service: ServiceKind, scenario: ScenarioName, units: number): number {
  const table = tableFor(service, scenario);
  const counts = table.appServers;
  const at = table.appServerUnits;
  if (table.serverless || !counts || !at) return 0;
  return Math.max(1, Math.ceil(roundTiny(interpolate(at, counts, units))));
}

/** Piecewise-linear interpolation through (xs, ys); flat beyond the ends. */
function interpolate(xs: readonly number[], ys: readonly number[], x: number): number {
  const n = Math.min(xs.length, ys.length);
  if (n === 0) throw new RangeError("interpolate needs at least one point");
  const x0 = xs[0] as number;
  if (x <= x0) return ys[0] as number;
  for (let i = 1; i < n; i++) {
    const xa = xs[i - 1] as number;
    const xb = xs[i] as number;
    if (x <= xb) {
      const ya = ys[i - 1] as number;
      const yb = ys[i] as number;
      return ya + ((yb - ya) * (x - xa)) / (xb - xa);
    }
  }
  return ys[n - 1] as number;
}

/** Rounds away float noise (1e-9) so that ceil(2.0000000001) stays 2. */
function roundTiny(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}
