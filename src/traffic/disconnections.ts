/**
 * Clients a capacity change disconnects, and how they come back. Pure; shared by the emulator,
 * `simulate` and `demo`.
 *
 * **Who is disconnected.** When Azure SignalR Service removes units, the client connections on
 * the removed units are closed and the clients reconnect (Microsoft Q&A 5530953, 2025: "during
 * scale-in, connections on the unit being removed are disconnected"). Connections are spread
 * evenly over units, so a change from `u₀` to `u₁ < u₀` units disconnects
 *
 *     connections × (u₀ − u₁) ÷ u₀
 *
 * and a scale-out or a tier change at the same or more units disconnects none
 * ({@link DisconnectionModel} `RemovedUnits`, the default). Some instances have been seen to
 * disconnect every client at any unit change (Azure/azure-signalr#486: 2 → 5 units dropped about
 * 50,000 clients, "by design"): `Everyone` is that pessimistic case — every change of units or SKU
 * disconnects all connections.
 *
 * **How they come back.** A disconnected client reconnects with the SignalR client's automatic
 * reconnect (`withAutomaticReconnect()`'s default delays, {@link RECONNECT_DELAYS_SECONDS}: 0, 2, 10
 * and 30 s, then it gives up), and each attempt negotiates again with the app servers
 * (`POST /<hub>/negotiate`) before it connects to the service. An attempt that finds a free
 * connection on the new capacity succeeds; one that finds none is refused and tries at the next
 * delay. Capacity does not change during those 30 s (the change has completed), so a client refused
 * at 0 s is refused at every later attempt too: `refused` clients negotiate four times, the others
 * once.
 */

/** Which clients a capacity change disconnects (see the module comment). */
export type DisconnectionModel = "RemovedUnits" | "Everyone";

/** The disconnection models, the default first. */
export const DISCONNECTION_MODELS: readonly DisconnectionModel[] = ["RemovedUnits", "Everyone"];

/**
 * The SignalR client's automatic-reconnect delays, seconds: `withAutomaticReconnect()` without
 * arguments waits 0, 2, 10 and 30 s before its four attempts, then stops (ASP.NET Core SignalR
 * JavaScript/.NET client documentation, "Automatically reconnect").
 */
export const RECONNECT_DELAYS_SECONDS: readonly number[] = [0, 2, 10, 30];

/** A capacity change, as far as disconnections go. */
export interface UnitChange {
  /** Client connections on the instance just before the change completes. */
  connections: number;
  fromUnits: number;
  toUnits: number;
  /** True when the SKU changes too (matters only to `Everyone`). */
  skuChanges?: boolean;
}

/**
 * Clients the change disconnects: `connections × removed ÷ fromUnits` under `RemovedUnits` (0 for a
 * scale-out or no change of units); all `connections` under `Everyone` when units or SKU change.
 * @throws RangeError for negative connections or unit counts that are not positive.
 */
export function clientsDisconnected(change: UnitChange, model: DisconnectionModel = "RemovedUnits"): number {
  const { connections, fromUnits, toUnits } = change;
  if (!(connections >= 0) || !Number.isFinite(connections)) {
    throw new RangeError(`connections must be a finite number ≥ 0, got ${connections}`);
  }
  if (!(fromUnits > 0) || !(toUnits > 0)) {
    throw new RangeError(`unit counts must be positive, got ${fromUnits} → ${toUnits}`);
  }
  if (model === "Everyone") return fromUnits !== toUnits || change.skuChanges ? connections : 0;
  if (toUnits >= fromUnits) return 0;
  return (connections * (fromUnits - toUnits)) / fromUnits;
}

/** What the disconnected clients of one change do. */
export interface Reconnects {
  disconnected: number;
  /** Reconnected at their first attempt. */
  reconnected: number;
  /** Found no free connection at any attempt. */
  refused: number;
  /** Negotiate calls they make: one per attempt. */
  negotiations: number;
  /** Negotiate calls per attempt, at {@link RECONNECT_DELAYS_SECONDS} after the change. */
  attempts: readonly { delaySeconds: number; negotiations: number }[];
}

/**
 * The reconnects of `disconnected` clients when `free` connections are free on the new capacity
 * (its quota less the connections that stayed; see the module comment).
 * @throws RangeError for negative or non-finite counts.
 */
export function reconnects(disconnected: number, free: number): Reconnects {
  if (!(disconnected >= 0) || !Number.isFinite(disconnected) || !(free >= 0) || Number.isNaN(free)) {
    throw new RangeError(`disconnected and free connections must be ≥ 0, got ${disconnected}, ${free}`);
  }
  const reconnected = Math.min(disconnected, free);
  const refused = disconnected - reconnected;
  const attempts = RECONNECT_DELAYS_SECONDS.map((delaySeconds, i) => ({
    delaySeconds,
    negotiations: i === 0 ? disconnected : refused,
  }));
  return {
    disconnected,
    reconnected,
    refused,
    negotiations: attempts.reduce((a, b) => a + b.negotiations, 0),
    attempts,
  };
}

/**
 * The disconnections and reconnects of one completed change: the clients disconnected
 * ({@link clientsDisconnected}) and what they meet on the new capacity, where `quota` connections
 * are left for clients (units × 1,000 less the app servers' connections).
 */
export function changeReconnects(change: UnitChange, quota: number, model?: DisconnectionModel): Reconnects {
  const disconnected = clientsDisconnected(change, model);
  const stayed = change.connections - disconnected;
  return reconnects(disconnected, Math.max(0, quota - stayed));
}
