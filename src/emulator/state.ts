/**
 * What the emulator knows: instances, their long-running operations (completion times on the
 * virtual clock), native autoscale settings, and each instance's history — the SKU/units and demand
 * in force from each time on — from which any minute's metric bucket is computed with the traffic
 * model. History is kept as timelines, so past buckets do not change when demand or capacity
 * change later.
 *
 * Each SignalR instance also has its app servers (the application behind it, in default mode): the
 * clients calling their negotiate endpoint, counted since the app servers started (the instance's
 * creation, or their last restart) with the traffic model's arrivals (`traffic/arrivals.ts`: every
 * client of the offered demand, refused ones included), and the client connections they hold (the
 * accepted ones). `appservers.ts` serves them as Prometheus metrics.
 *
 * An update that completes disconnects clients (`traffic/disconnections.ts`: the removed units'
 * share at a scale-in, or everyone at any change with `disconnection: "Everyone"`); they reconnect
 * at 0, 2, 10 and 30 s, each attempt a negotiate call the app servers count, and those the new
 * capacity has no room for are refused. Each instance keeps the list
 * ({@link EmulatorState.disconnections}).
 *
 * Each instance may carry its own unit ladders (`ladders`: what the service enforces, and
 * `listSkus` reports) and says what an update to a count off them gets (`ladderEnforcement`:
 * refused, or accepted and not applied). The rules that refuse writes before the service sees them
 * (locks, Azure Policy, unit quotas) are in {@link EmulatorState.refusals}.
 *
 * ARM reads may lag a write: for `readAfterWriteLagMs` after an update was accepted, the instance
 * reads as it was before it ({@link EmulatorState.armView}).
 *
 * **Geo-replicas.** An instance spec whose resource ID is a replica's (`…/<name>/replicas/<replica>`)
 * adds a replica of an existing Premium instance: its own region (not its primary's nor another
 * replica's), SKU (Premium_P1 or Premium_P2), units, provisioning state, demand (its own clients),
 * metric history and app servers, as any instance; at most {@link MAX_REPLICAS} per instance
 * ("Geo-replication in Azure SignalR": "The replica count is currently limited to a maximum of 8
 * per primary resource"; a replica is a Premium feature). Removing the instance removes its
 * replicas. The instance and its replicas are a replica group: when a member stops serving
 * ({@link EmulatorState.failover}) its clients go to the others and come back when it serves again
 * ({@link EmulatorState.restore}), as `traffic/failover.ts` models it.
 *
 * Time always comes from the virtual clock passed in; operations complete lazily, when state is
 * next read at or after their completion time.
 */
import { DEFAULT_LADDERS, isSkuName, type ServiceKind, SKU_NAMES, type SkuName } from "../capacity/index.js";
import {
  changeReconnects,
  DEFAULT_CONNECTION_LIFETIME_SECONDS,
  type DemandFunction,
  type DemandSpec,
  type DisconnectionModel,
  defaultMix,
  demandFunction,
  describeDemand,
  failoverShares,
  groupOffered,
  memberAway,
  memberDown,
  NegotiateCounter,
  noise,
  type Reconnects,
  reconnects,
  type TrafficMinute,
  trafficAt,
  validateMix,
  type WorkloadMix,
} from "../traffic/index.js";
import { ARM_TYPES, type ArmRef, armKey, normalizeLocation, parseArmId, resourceName } from "./arm-id.js";
import type { VirtualClock } from "./clock.js";
import { RefusalRules } from "./refusals.js";

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
/** Days of past metrics an instance has by default: the longest history a policy reads (28 days). */
const DEFAULT_HISTORY_DAYS = 28;
/** Most replicas of one instance ("Geo-replication in Azure SignalR"). */
export const MAX_REPLICAS = 8;
/** SKUs an instance with replicas, and a replica, can have (replicas are a Premium feature). */
export const REPLICA_SKUS: readonly SkuName[] = ["Premium_P1", "Premium_P2"];

/**
 * Offered client connections of the minute starting at `minuteMs`: the demand entry in force at
 * its start (the last one added that starts by then), at the minute's middle, rounded, ≥ 0.
 */
function offeredAt(demand: readonly DemandEntry[], minuteMs: number): number {
  let entry = demand[0] as DemandEntry;
  for (const d of demand) if (d.fromMs <= minuteMs) entry = d;
  return Math.max(0, Math.round(entry.fn(new Date(minuteMs + MINUTE / 2))));
}

/** Units allowed for a SKU by default, the documented ladders (Free_F1: exactly 1). */
export function allowedUnits(sku: SkuName): readonly number[] {
  return sku === "Free_F1" ? [1] : DEFAULT_LADDERS[sku];
}

/** Unit ladders of one instance, per SKU (SKUs not given keep {@link allowedUnits}). */
export type InstanceLadders = Partial<Record<SkuName, readonly number[]>>;

/**
 * What an update to a unit count off the instance's ladder gets: `refuse` — 400, as the service's
 * validation answers; `ignore` — accepted, runs, ends Succeeded without applying (answered but
 * not applied, as the Web PubSub CLI bug report Azure/azure-webpubsub#256 describes).
 */
export type LadderEnforcement = "refuse" | "ignore";

/** How an update ends: applied; Succeeded without applying; Failed; Canceled (both unchanged). */
export type UpdateOutcome = "applied" | "notApplied" | "failed" | "canceled";

/**
 * Checks unit ladders from the control API: SKU names as keys, lists of whole numbers > 0 (sorted
 * and deduplicated here).
 * @throws StateError 400 naming the bad entry.
 */
export function parseLadders(value: unknown): InstanceLadders {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new StateError(400, "InvalidLadders", 'ladders must be an object: { "<sku>": [units, …] }');
  const out: InstanceLadders = {};
  for (const [sku, list] of Object.entries(value)) {
    if (!isSkuName(sku)) throw new StateError(400, "InvalidLadders", `ladders: unknown SKU "${sku}"`);
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      !list.every((u) => typeof u === "number" && Number.isInteger(u) && u > 0)
    ) {
      throw new StateError(
        400,
        "InvalidLadders",
        `ladders.${sku} must be a non-empty list of whole numbers > 0`,
      );
    }
    out[sku] = [...new Set(list as number[])].sort((a, b) => a - b);
  }
  return out;
}

/** An instance (or a replica of one) to create. */
export interface InstanceSpec {
  /** An instance's ID, or a replica's (`…/<name>/replicas/<replica>`: see the module comment). */
  resourceId: string;
  /** Region (default `westeurope`; a replica needs its own, another than its group's members'). */
  location?: string;
  /** Default `Premium_P1` (a replica: Premium_P1 or Premium_P2 only). */
  sku?: SkuName;
  /** Default 1. */
  units?: number;
  /** Default `Succeeded`. */
  provisioningState?: string;
  tags?: Record<string, string>;
  /** Demand (default: the emulator's default demand). */
  demand?: DemandSpec;
  /** Fixed demand in connections from now on, instead of `demand`. */
  connections?: number;
  /** Workload mix (default: a replica's instance's, else {@link defaultMix} of the service). */
  mix?: WorkloadMix;
  /**
   * When the instance was created (default: the state's `historyDays` before now, so that past
   * days have metrics: the same demand model, at the instance's first capacity).
   */
  createdAt?: Date;
  /** Unit ladders the service enforces for this instance (default: the documented ones). */
  ladders?: InstanceLadders;
  /** What an update off the ladder gets (default `refuse`). */
  ladderEnforcement?: LadderEnforcement;
}

/** Problems a request to the state can have, mapped to ARM error responses by the server. */
export class StateError extends Error {
  override readonly name = "StateError";
  constructor(
    readonly status: 400 | 404 | 409,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The 409 a write gets while an operation runs on the instance: wait, don't stack. */
export function operationConflict(name: string): StateError {
  return new StateError(
    409,
    "Conflict",
    `Another operation is in progress on resource '${name}'. Please retry after it completes.`,
  );
}

function parseEnforcement(value: unknown): LadderEnforcement {
  if (value !== "refuse" && value !== "ignore")
    throw new StateError(
      400,
      "InvalidLadderEnforcement",
      `ladderEnforcement must be "refuse" or "ignore", got ${JSON.stringify(value)}`,
    );
  return value;
}

interface CapacityEntry {
  fromMs: number;
  sku: SkuName;
  units: number;
}

interface DemandEntry {
  fromMs: number;
  describe: string;
  fn: DemandFunction;
}

/** A long-running operation. */
export interface OperationRecord {
  id: string;
  resourceId: string;
  subscriptionId: string;
  location: string;
  kind: "create" | "update";
  target: { sku: SkuName; units: number };
  startedMs: number;
  completesMs: number;
  /** How it ends when its time comes. */
  outcome: UpdateOutcome;
  /**
   * What the write changes of serving, applied when it succeeds: `properties.resourceStopped`
   * (cause `stopped`) or `properties.regionEndpointEnabled` (cause `endpointDisabled`); `stop`
   * true stops or disables, false starts or enables.
   */
  servingChange?: { cause: "stopped" | "endpointDisabled"; stop: boolean };
  /** Its status as `operationStatuses` reports it (ARM: `Running` until terminal). */
  status: "Running" | "Succeeded" | "Failed" | "Canceled";
  endMs?: number;
}

/** What an instance looked like before its last accepted update (what a lagging read shows). */
interface BeforeWrite {
  acceptedMs: number;
  sku: SkuName;
  units: number;
  provisioningState: string;
}

interface InstanceRecord {
  ref: ArmRef;
  location: string;
  provisioningState: string;
  tags: Record<string, string>;
  createdMs: number;
  mix: WorkloadMix;
  capacity: CapacityEntry[];
  demand: DemandEntry[];
  operationId?: string;
  /** Negotiations since the first minute, from the offered demand. */
  negotiations: NegotiateCounter;
  /** When the app servers (re)started: their counters count from here. */
  appServersStartMs: number;
  ladders: InstanceLadders;
  ladderEnforcement: LadderEnforcement;
  /** The instance before its last accepted update. */
  beforeWrite?: BeforeWrite;
  /** Clients disconnected by completed updates, in time order. */
  disconnections: DisconnectionRecord[];
  /** Periods it did not serve (failover), in time order; the last may be open. */
  outages: OutageRecord[];
  /** The failovers of this member, in time order. */
  failovers: FailoverRecord[];
}

/**
 * Why a member of a replica group stops serving ({@link EmulatorState.failover}), and so what ARM
 * shows: `stopped` — its data plane is shut down, ARM shows `properties.resourceStopped: "true"`
 * (what a replica or instance stopped through ARM shows; the specs: "When it's true, the data plane
 * of the resource is shutdown"); `outage` — its region fails: ARM shows the resource unchanged
 * (`provisioningState` `Succeeded`, `resourceStopped` "false"), because no property of the
 * 2024-03-01 resource describes the data plane's health (Azure reports a regional outage in
 * Resource Health and the Service Health, which the emulator does not serve): only its metrics say
 * it (its connections vanish while its siblings' rise); `endpointDisabled` — its regional endpoint
 * is disabled, ARM shows `properties.regionEndpointEnabled: "Disabled"` (the specs: "new
 * connections will not be routed to this endpoint, however existing connections will not be
 * affected"): not a stop but a drain — its metrics go on, no client is disconnected, and its
 * clients move to the others as their connections end (`traffic/failover.ts`).
 */
export type OutageCause = "stopped" | "outage" | "endpointDisabled";

/** The causes, in the order documented. */
export const OUTAGE_CAUSES: readonly OutageCause[] = ["stopped", "outage", "endpointDisabled"];

/** One period a member did not serve: from `fromMs` to `toMs` (absent: still down). */
export interface OutageRecord {
  cause: OutageCause;
  fromMs: number;
  toMs?: number;
  /** True for `endpointDisabled`: a drain (`traffic/failover.ts`). */
  drain: boolean;
}

/** Clients of a stopped member that reconnected to one sibling. */
export interface FailoverReconnects {
  resourceId: string;
  /** Share of the stopped member's clients it received (by its own demand), in [0, 1]. */
  share: number;
  /** Clients that came at once (the stopped member's client connections × share; 0 for a drain). */
  connections: number;
  /** Of those, reconnected at their first attempt (room on its capacity). */
  reconnected: number;
  /** Found no room at any attempt. */
  refused: number;
  /** Negotiate calls they made, one per attempt (0, 2, 10, 30 s). */
  negotiations: number;
}

/** One member stopping serving, and where its clients went. */
export interface FailoverRecord {
  resourceId: string;
  cause: OutageCause;
  /** When it stopped, ms. */
  atMs: number;
  /** When it served again, ms; absent while down. */
  restoredMs?: number;
  /** Its client connections just before (the minute before it stopped). */
  connections: number;
  /** Per serving sibling: the clients that reconnected there. */
  reconnects: FailoverReconnects[];
}

/** Clients one completed update disconnected, and what their reconnects met (the traffic model's {@link Reconnects}). */
export interface DisconnectionRecord extends Omit<Reconnects, "attempts"> {
  /** When the update completed, ms. */
  atMs: number;
  from: { sku: SkuName; units: number };
  to: { sku: SkuName; units: number };
  /** Client connections before it. */
  connections: number;
}

/** An instance as ARM shows it. */
export interface InstanceView {
  resourceId: string;
  ref: ArmRef;
  location: string;
  sku: SkuName;
  units: number;
  provisioningState: string;
  tags: Record<string, string>;
  createdAt: Date;
  mix: WorkloadMix;
  demand: string;
  operation?: OperationRecord;
  /** The ladders set for this instance (SKUs absent keep the documented ones). */
  ladders: InstanceLadders;
  ladderEnforcement: LadderEnforcement;
  /** A replica's parent instance (canonical ID); absent for an instance. */
  parentId?: string;
  /** False from a failover until it is restored. */
  serving: boolean;
  /** While not serving: why, and since when. */
  outage?: { cause: OutageCause; since: Date };
}

/** An instance's app servers at the current virtual time. */
export interface AppServersView {
  resourceId: string;
  /** The instance's name (last segment of its resource ID). */
  name: string;
  /** Virtual time, ms. */
  atMs: number;
  /** When the app servers (re)started, ms: their counters count from here. */
  startedMs: number;
  /** Negotiate requests since then (an expected count, fractional). */
  negotiations: number;
  /** Client connections wanted in the current minute. */
  offeredConnections: number;
  /** Client connections the service accepted in the current minute: what the app servers' hubs hold. */
  activeConnections: number;
  /** Client connections refused over the quota in the current minute (they negotiated all the same). */
  refusedConnections: number;
}

/** Which instances a list returns (absent fields: any). */
export interface InstanceFilter {
  subscriptionId?: string;
  resourceGroup?: string;
  service?: ServiceKind;
  /** True: replicas only; false: instances (primaries) only. */
  replicas?: boolean;
}

/** A native autoscale setting. */
export interface AutoscaleSettingRecord {
  id: string;
  name: string;
  subscriptionId: string;
  resourceGroup: string;
  location: string;
  targetResourceUri: string;
  enabled: boolean;
  minimum: number;
  maximum: number;
  default: number;
}

/** A native autoscale setting to add: its target, and what is not derived from it. */
export interface AutoscaleSettingSpec {
  targetResourceId: string;
  name?: string;
  enabled?: boolean;
  minimum?: number;
  maximum?: number;
  default?: number;
  resourceGroup?: string;
}

/** One minute of one instance: traffic and ingestion state. */
export interface Bucket {
  minuteMs: number;
  traffic: TrafficMinute;
  /** Share of the minute ingested (0 = nothing yet, 1 = complete). */
  ingested: number;
  /** Within-minute spread for min/max, in [−1, 1]. */
  spread: number;
}

export interface EmulatorStateOptions {
  clock: VirtualClock;
  /** Virtual time a scale or create takes, ms (default 3 minutes). */
  scaleDurationMs?: number;
  /** Virtual time before a minute's data is fully ingested, ms (default 3 minutes). */
  ingestionDelayMs?: number;
  /** Relative noise on server load (default 0.05). */
  noiseAmplitude?: number;
  /** Noise seed (default `emulator`). */
  seed?: string;
  /** Demand of instances created without one. */
  defaultDemand?: DemandSpec;
  /** Days of metrics an instance added without `createdAt` has before now (default 28). */
  historyDays?: number;
  /**
   * Mean client connection lifetime W, seconds, from which the app servers' negotiate rate follows
   * (default 1,200: `traffic/arrivals.ts`).
   */
  connectionLifetimeSeconds?: number;
  /** Virtual time after an accepted update during which ARM reads show the instance as before, ms (default 0). */
  readAfterWriteLagMs?: number;
  /** Which clients a completed update disconnects (default `RemovedUnits`; `traffic/disconnections.ts`). */
  disconnection?: DisconnectionModel;
}

export class EmulatorState {
  readonly clock: VirtualClock;
  scaleDurationMs: number;
  ingestionDelayMs: number;
  /** Virtual time after an accepted update during which ARM reads show the instance as before, ms. */
  readAfterWriteLagMs: number;
  /** Locks, policy assignments and unit quotas that refuse writes. */
  readonly refusals = new RefusalRules();
  readonly noiseAmplitude: number;
  readonly seed: string;
  readonly historyDays: number;
  readonly connectionLifetimeSeconds: number;
  /** Which clients a completed update disconnects. */
  disconnection: DisconnectionModel;
  readonly #defaultDemand: DemandSpec;
  readonly #instances = new Map<string, InstanceRecord>();
  readonly #operations = new Map<string, OperationRecord>();
  readonly #autoscale = new Map<string, AutoscaleSettingRecord>();
  /** The keys of each instance's replicas, by the instance's key. */
  readonly #replicaKeys = new Map<string, Set<string>>();
  #nextOp = 1;

  constructor(options: EmulatorStateOptions) {
    this.clock = options.clock;
    this.scaleDurationMs = options.scaleDurationMs ?? 3 * MINUTE;
    this.ingestionDelayMs = options.ingestionDelayMs ?? 3 * MINUTE;
    this.readAfterWriteLagMs = options.readAfterWriteLagMs ?? 0;
    this.disconnection = options.disconnection ?? "RemovedUnits";
    this.noiseAmplitude = options.noiseAmplitude ?? 0.05;
    this.seed = options.seed ?? "emulator";
    this.historyDays = options.historyDays ?? DEFAULT_HISTORY_DAYS;
    if (!(this.historyDays >= 0)) throw new RangeError(`historyDays must be ≥ 0, got ${this.historyDays}`);
    this.connectionLifetimeSeconds = options.connectionLifetimeSeconds ?? DEFAULT_CONNECTION_LIFETIME_SECONDS;
    if (!(this.connectionLifetimeSeconds > 0) || !Number.isFinite(this.connectionLifetimeSeconds)) {
      throw new RangeError(`connectionLifetimeSeconds must be > 0, got ${this.connectionLifetimeSeconds}`);
    }
    this.#defaultDemand = options.defaultDemand ?? {
      kind: "pattern",
      pattern: { kind: "daily" },
      peakConnections: 10_000,
    };
  }

  /** Completes operations whose time has come. */
  settle(): void {
    const now = this.clock.nowMs();
    for (const op of this.#operations.values()) {
      if (op.status !== "Running" || op.completesMs > now) continue;
      op.status = op.outcome === "failed" ? "Failed" : op.outcome === "canceled" ? "Canceled" : "Succeeded";
      op.endMs = op.completesMs;
      const inst = this.#instances.get(armKey(op.resourceId));
      if (!inst || inst.operationId !== op.id) continue;
      inst.provisioningState = op.status;
      delete inst.operationId;
      if (op.outcome === "applied") this.#applyCapacity(inst, op.completesMs, op.target);
      if (op.servingChange && op.status === "Succeeded") this.#applyServingChange(inst, op);
    }
  }

  /**
   * A completed write's `resourceStopped` or `regionEndpointEnabled`: the member stops (or is
   * disabled) at its end, or starts (is enabled) again — ending a stop (a disabling) only, not a
   * regional outage.
   */
  #applyServingChange(inst: InstanceRecord, op: OperationRecord): void {
    const change = op.servingChange;
    if (!change) return;
    const open = this.#openOutage(inst);
    if (change.stop && !open) this.#stopAt(inst, op.completesMs, change.cause);
    else if (!change.stop && open?.cause === change.cause) this.#restoreAt(inst, op.completesMs);
  }

  /** The outage `inst` is in now, if any. */
  #openOutage(inst: InstanceRecord): OutageRecord | undefined {
    const last = inst.outages[inst.outages.length - 1];
    return last && last.toMs === undefined ? last : undefined;
  }

  /** What a write changes of serving (see {@link OperationRecord.servingChange}); none when it asks what already is. */
  #servingChange(
    inst: InstanceRecord,
    change: { resourceStopped?: boolean; regionEndpointEnabled?: boolean },
  ): OperationRecord["servingChange"] {
    const cause = this.#openOutage(inst)?.cause;
    if (change.resourceStopped !== undefined && change.resourceStopped !== (cause === "stopped")) {
      return { cause: "stopped", stop: change.resourceStopped };
    }
    const disable = change.regionEndpointEnabled === undefined ? undefined : !change.regionEndpointEnabled;
    if (disable !== undefined && disable !== (cause === "endpointDisabled")) {
      return { cause: "endpointDisabled", stop: disable };
    }
    return undefined;
  }

  /**
   * The capacity of `inst` becomes `to` at `atMs`: the clients it disconnects are recorded and
   * their reconnect attempts counted by the app servers (see the module comment).
   */
  #applyCapacity(inst: InstanceRecord, atMs: number, to: { sku: SkuName; units: number }): void {
    const minuteMs = Math.floor(atMs / MINUTE) * MINUTE;
    const from = this.#capacityAt(inst, atMs);
    const before = this.#minuteTraffic(inst, minuteMs - (atMs === minuteMs ? MINUTE : 0));
    inst.capacity.push({ fromMs: atMs, sku: to.sku, units: to.units });
    if (from.sku === to.sku && from.units === to.units) return;
    const after = trafficAt({
      mix: inst.mix,
      offeredConnections: this.#offered(inst, minuteMs),
      sku: to.sku,
      units: to.units,
      noise: 0,
    });
    const change = {
      connections: before.clientConnections,
      fromUnits: from.units,
      toUnits: to.units,
      skuChanges: from.sku !== to.sku,
    };
    const r = changeReconnects(change, after.connectionQuota - after.serverConnections, this.disconnection);
    if (r.disconnected <= 0) return;
    for (const a of r.attempts)
      inst.negotiations.addNegotiations(atMs + a.delaySeconds * 1000, a.negotiations);
    inst.disconnections.push({
      atMs,
      from: { sku: from.sku, units: from.units },
      to: { ...to },
      connections: before.clientConnections,
      disconnected: r.disconnected,
      reconnected: r.reconnected,
      refused: r.refused,
      negotiations: r.negotiations,
    });
  }

  /**
   * The clients completed updates of an instance disconnected, in time order (settled first).
   * @throws StateError 404 for an unknown instance.
   */
  disconnections(resourceId: string): DisconnectionRecord[] {
    this.settle();
    return this.#require(resourceId).disconnections.map((d) => ({ ...d }));
  }

  /**
   * The member `resourceId` of a replica group (a replica, or an instance — with or without
   * replicas) stops serving now, for `cause` ({@link OutageCause}: what ARM shows). From the current
   * minute on its metrics have no data and it serves no one; its clients of the minute before
   * reconnect to the members still serving, split by their own demand (`traffic/failover.ts`), at
   * the client's reconnect delays (0, 2, 10, 30 s: the first attempt is their arrival in the
   * siblings' demand, the retries of those refused are negotiate calls at 2, 10 and 30 s), and
   * those a sibling's capacity has no room for are refused there. Until {@link restore}, the
   * siblings' offered demand carries its clients.
   * @throws StateError 404 (unknown), 409 (not serving already), 400 (an unknown cause).
   */
  failover(resourceId: string, cause: OutageCause = "stopped"): FailoverRecord {
    const inst = this.#require(resourceId);
    if (!OUTAGE_CAUSES.includes(cause)) {
      throw new StateError(
        400,
        "InvalidRequest",
        `cause must be one of ${OUTAGE_CAUSES.map((c) => `"${c}"`).join(", ")}, got ${JSON.stringify(cause)}`,
      );
    }
    const last = inst.outages[inst.outages.length - 1];
    if (last && last.toMs === undefined) {
      throw new StateError(
        409,
        "Conflict",
        `'${resourceName(inst.ref)}' is not serving already (since ${new Date(last.fromMs).toISOString()}).`,
      );
    }
    const record = this.#stopAt(inst, this.clock.nowMs(), cause);
    return { ...record, reconnects: record.reconnects.map((r) => ({ ...r })) };
  }

  /** `inst` stops serving at `now` (see {@link failover}); the record kept. */
  #stopAt(inst: InstanceRecord, now: number, cause: OutageCause): FailoverRecord {
    const minuteMs = Math.floor(now / MINUTE) * MINUTE;
    const members = this.#groupOf(inst);
    const connections = this.#minuteTraffic(inst, minuteMs - MINUTE).clientConnections;
    const shares = failoverShares(
      members.map((m) => ({ own: offeredAt(m.demand, minuteMs), down: memberDown(m.outages, minuteMs) })),
      members.indexOf(inst),
    );
    const moved: FailoverReconnects[] = [];
    const drain = cause === "endpointDisabled";
    members.forEach((m, j) => {
      const share = shares[j] ?? 0;
      if (share <= 0) return;
      const t = this.#minuteTraffic(m, minuteMs - MINUTE);
      // A drain disconnects no one: its clients arrive as new connections, in the demand.
      const came = drain ? 0 : connections * share;
      const r = reconnects(came, Math.max(0, t.connectionQuota - t.serverConnections - t.clientConnections));
      for (const a of r.attempts) {
        if (a.delaySeconds > 0) m.negotiations.addNegotiations(now + a.delaySeconds * 1000, a.negotiations);
      }
      moved.push({
        resourceId: m.ref.id,
        share,
        connections: came,
        reconnected: r.reconnected,
        refused: r.refused,
        negotiations: r.negotiations,
      });
    });
    inst.outages.push({ cause, fromMs: now, drain });
    for (const m of members) m.negotiations.forgetFrom(minuteMs);
    const record: FailoverRecord = {
      resourceId: inst.ref.id,
      cause,
      atMs: now,
      connections,
      reconnects: moved,
    };
    inst.failovers.push(record);
    return record;
  }

  /** `inst`, not serving, serves again at `now` (see {@link restore}). */
  #restoreAt(inst: InstanceRecord, now: number): void {
    const last = inst.outages[inst.outages.length - 1];
    const record = inst.failovers[inst.failovers.length - 1];
    if (!last || last.toMs !== undefined) return;
    last.toMs = now;
    if (record) record.restoredMs = now;
    for (const m of this.#groupOf(inst)) m.negotiations.forgetFrom(Math.floor(now / MINUTE) * MINUTE);
  }

  /**
   * The member `resourceId`, not serving since a {@link failover}, serves again now: from the
   * current minute it has metrics and takes its new clients; the clients that moved drift back as
   * their connections end (`traffic/failover.ts`).
   * @throws StateError 404 (unknown), 409 (it is serving).
   */
  restore(resourceId: string): FailoverRecord {
    const inst = this.#require(resourceId);
    const last = inst.outages[inst.outages.length - 1];
    const record = inst.failovers[inst.failovers.length - 1];
    if (!last || last.toMs !== undefined || !record) {
      throw new StateError(409, "Conflict", `'${resourceName(inst.ref)}' is serving.`);
    }
    this.#restoreAt(inst, this.clock.nowMs());
    return { ...record, reconnects: record.reconnects.map((r) => ({ ...r })) };
  }

  /**
   * The failovers of a member, or of every member of the instance's replica group when `resourceId`
   * names an instance, in time order.
   * @throws StateError 404 for an unknown resource.
   */
  failovers(resourceId: string): FailoverRecord[] {
    const inst = this.#require(resourceId);
    const members = inst.ref.parentId === undefined ? this.#groupOf(inst) : [inst];
    return members
      .flatMap((m) => m.failovers)
      .sort((a, b) => a.atMs - b.atMs)
      .map((r) => ({ ...r, reconnects: r.reconnects.map((x) => ({ ...x })) }));
  }

  /**
   * Adds (or replaces) an instance.
   * @throws ArmIdError for a malformed ID; StateError (400) for a bad SKU, units or mix.
   */
  addInstance(spec: InstanceSpec): InstanceView {
    const ref = parseArmId(spec.resourceId);
    const sku = spec.sku ?? "Premium_P1";
    if (!isSkuName(sku)) throw new StateError(400, "InvalidSku", `unknown SKU "${String(sku)}"`);
    const units = spec.units ?? 1;
    const ladders = spec.ladders ? parseLadders(spec.ladders) : {};
    this.#checkUnits(sku, units, ladders);
    const ladderEnforcement = parseEnforcement(spec.ladderEnforcement ?? "refuse");
    const parent = ref.parentId !== undefined ? this.#checkReplica(ref, sku, spec.location) : undefined;
    const mix = spec.mix ?? parent?.mix ?? defaultMix(ref.service);
    if (mix.service !== ref.service) {
      throw new StateError(
        400,
        "InvalidMix",
        `the mix is for ${mix.service}, the instance is ${ref.service}`,
      );
    }
    try {
      validateMix(mix);
    } catch (err) {
      throw new StateError(400, "InvalidMix", (err as Error).message);
    }
    const now = this.clock.nowMs();
    const createdMs = spec.createdAt?.getTime() ?? now - this.historyDays * DAY;
    const demand: DemandEntry[] = [this.#demandEntry(createdMs, spec)];
    const record: InstanceRecord = {
      ref,
      location: normalizeLocation(spec.location ?? "westeurope"),
      provisioningState: spec.provisioningState ?? "Succeeded",
      tags: { ...spec.tags },
      createdMs,
      mix,
      capacity: [{ fromMs: createdMs, sku, units }],
      demand,
      negotiations: new NegotiateCounter({
        originMs: createdMs,
        demandOfMinute: (minuteMs) => this.#offered(record, minuteMs),
        lifetimeSeconds: this.connectionLifetimeSeconds,
      }),
      appServersStartMs: createdMs,
      ladders,
      ladderEnforcement,
      disconnections: [],
      outages: [],
      failovers: [],
    };
    const key = armKey(ref.id);
    this.#instances.set(key, record);
    if (ref.parentId !== undefined) {
      const parentKey = armKey(ref.parentId);
      const siblings = this.#replicaKeys.get(parentKey) ?? new Set<string>();
      siblings.add(key);
      this.#replicaKeys.set(parentKey, siblings);
    }
    for (const m of this.#groupOf(record)) m.negotiations.forgetFrom(this.clock.nowMs());
    return this.#view(record);
  }

  /**
   * What a replica needs (see the module comment): its instance, Premium; a Premium SKU; its own
   * region, not its instance's nor another replica's; fewer than {@link MAX_REPLICAS} siblings.
   * Returns the instance. The codes and messages are the emulator's: Azure documents the rules, not
   * its answers.
   * @throws StateError 404 (no such instance), 400 (a rule broken).
   */
  #checkReplica(ref: ArmRef, sku: SkuName, location: string | undefined): InstanceRecord {
    const parentId = ref.parentId as string;
    const parent = this.#instances.get(armKey(parentId));
    if (!parent) {
      throw new StateError(
        404,
        "ResourceNotFound",
        `The Resource '${ARM_TYPES[ref.service]}/${ref.name}' under resource group '${ref.resourceGroup}' was not found.`,
      );
    }
    const parentSku = this.#capacityAt(parent, Number.POSITIVE_INFINITY).sku;
    if (!REPLICA_SKUS.includes(parentSku)) {
      throw new StateError(
        400,
        "BadRequest",
        `Replicas are a Premium feature: '${ref.name}' is ${parentSku}.`,
      );
    }
    if (!REPLICA_SKUS.includes(sku)) {
      throw new StateError(
        400,
        "InvalidSku",
        `A replica's SKU must be Premium_P1 or Premium_P2, not ${sku}.`,
      );
    }
    if (location === undefined || location.trim() === "") {
      throw new StateError(400, "LocationRequired", "A replica needs its own location.");
    }
    const where = normalizeLocation(location);
    const key = armKey(ref.id);
    const siblings = [...(this.#replicaKeys.get(armKey(parentId)) ?? [])]
      .filter((k) => k !== key)
      .map((k) => this.#instances.get(k) as InstanceRecord);
    const taken = [parent, ...siblings].find((m) => m.location === where);
    if (taken) {
      throw new StateError(
        400,
        "BadRequest",
        `A replica must be in another region than its primary and the other replicas: '${resourceName(taken.ref)}' is in ${where}.`,
      );
    }
    if (siblings.length >= MAX_REPLICAS) {
      throw new StateError(
        400,
        "BadRequest",
        `'${ref.name}' has ${siblings.length} replicas: at most ${MAX_REPLICAS} are allowed.`,
      );
    }
    return parent;
  }

  /**
   * Checks what a new replica needs (its instance, Premium; a Premium SKU; its own region; fewer
   * than {@link MAX_REPLICAS} siblings), as {@link addInstance} does, without adding it.
   * @throws ArmIdError for an ID that is not a replica's; StateError 404, 400.
   */
  validateReplica(resourceId: string, sku: SkuName, location: string | undefined): void {
    const ref = parseArmId(resourceId);
    if (ref.parentId === undefined)
      throw new StateError(400, "InvalidRequest", `${resourceId} is not a replica`);
    this.#checkReplica(ref, sku, location);
  }

  /** The members of `inst`'s replica group: its instance (when known) first, then the replicas. */
  #groupOf(inst: InstanceRecord): InstanceRecord[] {
    const parentKey = armKey(inst.ref.parentId ?? inst.ref.id);
    const parent = this.#instances.get(parentKey);
    const replicas = [...(this.#replicaKeys.get(parentKey) ?? [])].map(
      (k) => this.#instances.get(k) as InstanceRecord,
    );
    return parent ? [parent, ...replicas] : replicas;
  }

  /**
   * Offered client connections of `inst` in the minute starting at `minuteMs`: its own demand,
   * or — when a member of its replica group has stopped serving — its share of the group's
   * clients (`traffic/failover.ts`).
   */
  #offered(inst: InstanceRecord, minuteMs: number): number {
    // Most instances have no replicas: no group to look at (this runs for every minute served).
    if (inst.ref.parentId === undefined && !this.#replicaKeys.get(armKey(inst.ref.id))?.size)
      return offeredAt(inst.demand, minuteMs);
    const members = this.#groupOf(inst);
    if (members.length < 2 || !members.some((m) => m.outages.length > 0))
      return offeredAt(inst.demand, minuteMs);
    const minutes = members.map((m) => ({
      own: offeredAt(m.demand, minuteMs),
      down: memberDown(m.outages, minuteMs),
      away: memberAway(m.outages, minuteMs, this.connectionLifetimeSeconds),
    }));
    return Math.round(groupOffered(minutes)[members.indexOf(inst)] ?? 0);
  }

  #demandEntry(fromMs: number, spec: { demand?: DemandSpec; connections?: number }): DemandEntry {
    if (spec.connections !== undefined) {
      const c = spec.connections;
      if (!Number.isFinite(c) || c < 0)
        throw new StateError(400, "InvalidDemand", `connections must be ≥ 0, got ${c}`);
      return { fromMs, describe: `fixed ${c.toLocaleString("en-US")} connections`, fn: () => c };
    }
    const demand = spec.demand ?? this.#defaultDemand;
    try {
      return { fromMs, describe: describeDemand(demand), fn: demandFunction(demand, this.clock.now()) };
    } catch (err) {
      throw new StateError(400, "InvalidDemand", (err as Error).message);
    }
  }

  /** Units set directly (control API) must be on the instance's ladder or the documented one. */
  #checkUnits(sku: SkuName, units: number, ladders: InstanceLadders): void {
    const allowed = [...new Set([...(ladders[sku] ?? []), ...allowedUnits(sku)])].sort((a, b) => a - b);
    if (!allowed.includes(units)) {
      throw new StateError(
        400,
        "InvalidCapacity",
        `capacity ${units} is not valid for ${sku}; allowed values: ${allowed.join(", ")}`,
      );
    }
  }

  /** The unit ladder the service enforces for an instance's SKU: its own, else the documented one. */
  ladderOf(resourceId: string, sku: SkuName): readonly number[] {
    return this.#require(resourceId).ladders[sku] ?? allowedUnits(sku);
  }

  /** Changes an instance's demand from now on (history before now is kept). */
  setDemand(resourceId: string, spec: { demand?: DemandSpec; connections?: number }): InstanceView {
    const inst = this.#require(resourceId);
    const entry = this.#demandEntry(this.clock.nowMs(), spec);
    inst.demand.push(entry);
    // Its siblings' shares of a stopped member's clients depend on its demand too.
    for (const m of this.#groupOf(inst)) m.negotiations.forgetFrom(entry.fromMs);
    return this.#view(inst);
  }

  /**
   * Sets SKU, units, provisioning state, ladders (merged per SKU) or the ladder enforcement
   * directly (no operation), from now on.
   * @throws StateError 404 (unknown), 400 (bad SKU, units, ladders or enforcement).
   */
  patchInstance(
    resourceId: string,
    patch: {
      sku?: SkuName;
      units?: number;
      provisioningState?: string;
      ladders?: InstanceLadders;
      ladderEnforcement?: LadderEnforcement;
    },
  ): InstanceView {
    const inst = this.#require(resourceId);
    const current = this.#capacityAt(inst, Number.POSITIVE_INFINITY);
    const sku = patch.sku ?? current.sku;
    const units = patch.units ?? current.units;
    if (!isSkuName(sku)) throw new StateError(400, "InvalidSku", `unknown SKU "${String(sku)}"`);
    const ladders = patch.ladders ? { ...inst.ladders, ...parseLadders(patch.ladders) } : inst.ladders;
    const enforcement =
      patch.ladderEnforcement !== undefined
        ? parseEnforcement(patch.ladderEnforcement)
        : inst.ladderEnforcement;
    if (patch.sku !== undefined || patch.units !== undefined) this.#checkUnits(sku, units, ladders);
    inst.ladders = ladders;
    inst.ladderEnforcement = enforcement;
    if (sku !== current.sku || units !== current.units)
      inst.capacity.push({ fromMs: this.clock.nowMs(), sku, units });
    if (patch.provisioningState !== undefined) inst.provisioningState = patch.provisioningState;
    return this.#view(inst);
  }

  /** Removes an instance (with its replicas) or a replica; false when unknown. */
  removeInstance(resourceId: string): boolean {
    const key = armKey(resourceId);
    const inst = this.#instances.get(key);
    if (!inst) return false;
    this.#instances.delete(key);
    if (inst.ref.parentId !== undefined) {
      this.#replicaKeys.get(armKey(inst.ref.parentId))?.delete(key);
    } else {
      for (const k of this.#replicaKeys.get(key) ?? []) this.#instances.delete(k);
      this.#replicaKeys.delete(key);
    }
    return true;
  }

  /** The replicas of an instance, in the order added (none for an unknown one or a replica). */
  replicasOf(resourceId: string): InstanceView[] {
    this.settle();
    return [...(this.#replicaKeys.get(armKey(resourceId)) ?? [])].map((k) =>
      this.#view(this.#instances.get(k) as InstanceRecord),
    );
  }

  #require(resourceId: string): InstanceRecord {
    this.settle();
    const inst = this.#instances.get(armKey(resourceId));
    if (!inst) {
      throw new StateError(404, "ResourceNotFound", `The Resource '${resourceId}' was not found.`);
    }
    return inst;
  }

  #capacityAt(inst: InstanceRecord, ms: number): CapacityEntry {
    let found = inst.capacity[0] as CapacityEntry;
    for (const c of inst.capacity) if (c.fromMs <= ms) found = c;
    return found;
  }

  #view(inst: InstanceRecord): InstanceView {
    const cap = this.#capacityAt(inst, Number.POSITIVE_INFINITY);
    const op = inst.operationId ? this.#operations.get(inst.operationId) : undefined;
    const last = inst.outages[inst.outages.length - 1];
    const open = last && last.toMs === undefined ? last : undefined;
    return {
      resourceId: inst.ref.id,
      ref: inst.ref,
      location: inst.location,
      sku: cap.sku,
      units: cap.units,
      provisioningState: inst.provisioningState,
      tags: { ...inst.tags },
      createdAt: new Date(inst.createdMs),
      mix: inst.mix,
      demand: (inst.demand[inst.demand.length - 1] as DemandEntry).describe,
      ...(op ? { operation: { ...op } } : {}),
      ladders: { ...inst.ladders },
      ladderEnforcement: inst.ladderEnforcement,
      ...(inst.ref.parentId !== undefined ? { parentId: inst.ref.parentId } : {}),
      serving: open === undefined,
      ...(open ? { outage: { cause: open.cause, since: new Date(open.fromMs) } } : {}),
    };
  }

  /**
   * An instance as an ARM read shows it now: within `readAfterWriteLagMs` of its last accepted
   * update, its SKU, units and provisioning state from before that update; else as it is.
   */
  armView(resourceId: string): InstanceView | undefined {
    const view = this.getInstance(resourceId);
    if (!view) return undefined;
    const before = this.#instances.get(armKey(resourceId))?.beforeWrite;
    if (!before || this.clock.nowMs() >= before.acceptedMs + this.readAfterWriteLagMs) return view;
    return { ...view, sku: before.sku, units: before.units, provisioningState: before.provisioningState };
  }

  /** {@link listInstances} as ARM reads show them (see {@link armView}). */
  armInstances(filter: InstanceFilter = {}): InstanceView[] {
    return this.listInstances(filter).map((v) => this.armView(v.resourceId) ?? v);
  }

  /**
   * Units the service's instances of a subscription hold in a region, for its unit quota:
   * Free_F1 instances hold none; an instance with an update running that applies holds the larger
   * of its current and target units.
   */
  unitsInUse(service: ServiceKind, subscriptionId: string, region: string): number {
    this.settle();
    const where = normalizeLocation(region);
    let total = 0;
    for (const i of this.#instances.values()) {
      if (
        i.ref.service === service &&
        i.ref.subscriptionId.toLowerCase() === subscriptionId.toLowerCase() &&
        i.location === where
      )
        total += this.#held(i);
    }
    return total;
  }

  /** Units one instance holds for its unit quota (0 when unknown; see {@link unitsInUse}). */
  unitsHeldBy(resourceId: string): number {
    this.settle();
    const inst = this.#instances.get(armKey(resourceId));
    return inst ? this.#held(inst) : 0;
  }

  #held(inst: InstanceRecord): number {
    const cap = this.#capacityAt(inst, Number.POSITIVE_INFINITY);
    const now = cap.sku === "Free_F1" ? 0 : cap.units;
    const op = inst.operationId ? this.#operations.get(inst.operationId) : undefined;
    if (op?.status !== "Running" || op.outcome !== "applied") return now;
    return Math.max(now, op.target.sku === "Free_F1" ? 0 : op.target.units);
  }

  /** An instance, or `undefined`. */
  getInstance(resourceId: string): InstanceView | undefined {
    this.settle();
    const inst = this.#instances.get(armKey(resourceId));
    return inst ? this.#view(inst) : undefined;
  }

  /** Instances, optionally of one subscription, resource group and service. */
  listInstances(filter: InstanceFilter = {}): InstanceView[] {
    this.settle();
    return [...this.#instances.values()]
      .filter(
        (i) =>
          (filter.subscriptionId === undefined ||
            i.ref.subscriptionId.toLowerCase() === filter.subscriptionId.toLowerCase()) &&
          (filter.resourceGroup === undefined ||
            i.ref.resourceGroup.toLowerCase() === filter.resourceGroup.toLowerCase()) &&
          (filter.service === undefined || i.ref.service === filter.service) &&
          (filter.replicas === undefined || (i.ref.parentId !== undefined) === filter.replicas),
      )
      .map((i) => this.#view(i));
  }

  /** True while an operation runs on the instance (a write then gets {@link operationConflict}). */
  isBusy(resourceId: string): boolean {
    return this.#require(resourceId).operationId !== undefined;
  }

  /**
   * Starts an update of SKU and/or units (ARM PATCH or PUT on an existing instance), validated
   * against the api-version, the ladders and the refusal rules by the ARM handler. Runs
   * `durationMs` (default: `scaleDurationMs` when the capacity changes, no time otherwise), then
   * ends as `outcome` says (default `applied`). Reads within `readAfterWriteLagMs` show the
   * instance as it was before. `resourceStopped` and `regionEndpointEnabled` (ARM's properties)
   * stop or disable the member (a {@link failover} with cause `stopped` or `endpointDisabled`), or
   * start or enable it again (a {@link restore} of that), when the operation succeeds; a change of
   * either runs the scale duration.
   * @throws StateError 404 (unknown), 409 (an operation is running: {@link operationConflict}),
   *   400 (not a SKU name; units not a whole number > 0).
   */
  beginUpdate(
    resourceId: string,
    change: {
      sku?: string;
      units?: number;
      tags?: Record<string, string>;
      resourceStopped?: boolean;
      regionEndpointEnabled?: boolean;
    },
    options: { outcome?: UpdateOutcome; durationMs?: number } = {},
  ): OperationRecord {
    const inst = this.#require(resourceId);
    if (inst.operationId) throw operationConflict(inst.ref.name);
    const current = this.#capacityAt(inst, Number.POSITIVE_INFINITY);
    const sku = change.sku ?? current.sku;
    if (!isSkuName(sku)) {
      throw new StateError(
        400,
        "InvalidSku",
        `The SKU '${sku}' is not valid. Valid SKUs: ${SKU_NAMES.join(", ")}.`,
      );
    }
    const units = change.units ?? current.units;
    if (!Number.isInteger(units) || units < 1)
      throw new StateError(400, "InvalidCapacity", `capacity must be a whole number > 0, got ${units}`);
    const servingChange = this.#servingChange(inst, change);
    const durationMs =
      options.durationMs ??
      (sku !== current.sku || units !== current.units || servingChange ? this.scaleDurationMs : 0);
    if (!(durationMs >= 0)) throw new RangeError(`durationMs must be ≥ 0, got ${durationMs}`);
    if (change.tags) inst.tags = { ...change.tags };
    const now = this.clock.nowMs();
    inst.beforeWrite = {
      acceptedMs: now,
      sku: current.sku,
      units: current.units,
      provisioningState: inst.provisioningState,
    };
    const op = this.#startOperation(inst, "update", { sku, units }, durationMs, options.outcome ?? "applied");
    if (servingChange) op.servingChange = servingChange;
    inst.provisioningState = "Updating";
    this.settle();
    return { ...op };
  }

  /**
   * Creates an instance through ARM (PUT on an unknown ID): `Creating`, then `Succeeded` after
   * `scaleDurationMs`.
   * @throws StateError 400 for a bad SKU or units.
   */
  beginCreate(
    resourceId: string,
    body: { location: string; sku: string; units: number; tags?: Record<string, string> },
  ): OperationRecord {
    if (!isSkuName(body.sku)) throw new StateError(400, "InvalidSku", `The SKU '${body.sku}' is not valid.`);
    const view = this.addInstance({
      resourceId,
      location: body.location,
      sku: body.sku,
      units: body.units,
      provisioningState: "Creating",
      ...(body.tags ? { tags: body.tags } : {}),
      createdAt: this.clock.now(),
    });
    const inst = this.#instances.get(armKey(view.resourceId)) as InstanceRecord;
    // The capacity is the instance's from its creation: the operation has nothing left to apply.
    return {
      ...this.#startOperation(
        inst,
        "create",
        { sku: body.sku, units: body.units },
        this.scaleDurationMs,
        "notApplied",
      ),
    };
  }

  /** Starts an operation on `inst`, to complete in `durationMs`; the instance points to it. */
  #startOperation(
    inst: InstanceRecord,
    kind: OperationRecord["kind"],
    target: OperationRecord["target"],
    durationMs: number,
    outcome: UpdateOutcome,
  ): OperationRecord {
    const now = this.clock.nowMs();
    const op: OperationRecord = {
      id: this.#operationId(),
      resourceId: inst.ref.id,
      subscriptionId: inst.ref.subscriptionId,
      location: inst.location,
      kind,
      target,
      startedMs: now,
      completesMs: now + durationMs,
      outcome,
      status: "Running",
    };
    this.#operations.set(op.id, op);
    inst.operationId = op.id;
    return op;
  }

  #operationId(): string {
    const n = this.#nextOp++;
    return `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
  }

  /** An operation by ID (after settling). */
  getOperation(id: string): OperationRecord | undefined {
    this.settle();
    const op = this.#operations.get(id.toLowerCase());
    return op ? { ...op } : undefined;
  }

  /**
   * One instance's minute starting at `minuteMs`, or `undefined` before the instance existed or
   * in the future. `ingested` follows the ingestion delay: a minute is complete once
   * `ingestionDelayMs` have passed since its end, and fills linearly during the minute before.
   */
  bucket(resourceId: string, minuteMs: number): Bucket | undefined {
    const inst = this.#instances.get(armKey(resourceId));
    if (!inst) return undefined;
    const now = this.clock.nowMs();
    if (minuteMs + MINUTE <= inst.createdMs || minuteMs >= now) return undefined;
    // A member not serving emits nothing: its minutes have no data.
    if (memberDown(inst.outages, minuteMs)) return undefined;
    const ingested = Math.min(1, Math.max(0, (now - this.ingestionDelayMs - minuteMs) / MINUTE));
    const step = Math.floor(minuteMs / MINUTE);
    const key = `${this.seed}:${armKey(inst.ref.id)}`;
    return { minuteMs, traffic: this.#minuteTraffic(inst, minuteMs), ingested, spread: noise(key, step, 1) };
  }

  /** The traffic of the minute starting at `minuteMs`: its demand at the capacity in force then. */
  #minuteTraffic(inst: InstanceRecord, minuteMs: number): TrafficMinute {
    const cap = this.#capacityAt(inst, minuteMs);
    return trafficAt({
      mix: inst.mix,
      offeredConnections: this.#offered(inst, minuteMs),
      sku: cap.sku,
      units: cap.units,
      noise: noise(`${this.seed}:${armKey(inst.ref.id)}`, Math.floor(minuteMs / MINUTE), 0),
      noiseAmplitude: this.noiseAmplitude,
    });
  }

  /**
   * The SignalR instance named `name` (case-insensitive).
   * @throws StateError 404 when there is none (or it is a Web PubSub instance: no app servers in
   *   front of it here), 409 when several instances have that name.
   */
  #appServersOf(name: string): InstanceRecord {
    this.settle();
    const wanted = name.toLowerCase();
    const found = [...this.#instances.values()].filter((i) => resourceName(i.ref).toLowerCase() === wanted);
    const first = found[0];
    if (!first) throw new StateError(404, "ResourceNotFound", `no instance named '${name}'`);
    if (found.length > 1) {
      throw new StateError(
        409,
        "Conflict",
        `${found.length} instances are named '${name}': ${found.map((i) => i.ref.id).join(", ")}`,
      );
    }
    if (first.ref.service !== "SignalR") {
      throw new StateError(
        404,
        "ResourceNotFound",
        `'${name}' is a ${first.ref.service} instance: it has no app servers`,
      );
    }
    return first;
  }

  /**
   * The app servers of the SignalR instance named `name`, now: negotiations since they started and
   * the connections of the current minute. Before their start (a clock set back) they count 0.
   * @throws StateError 404 (no such SignalR instance), 409 (the name is ambiguous).
   */
  appServers(name: string): AppServersView {
    const inst = this.#appServersOf(name);
    const now = this.clock.nowMs();
    const minuteMs = Math.floor(now / MINUTE) * MINUTE;
    const traffic = minuteMs + MINUTE > inst.createdMs ? this.#minuteTraffic(inst, minuteMs) : undefined;
    return {
      resourceId: inst.ref.id,
      name: resourceName(inst.ref),
      atMs: now,
      startedMs: inst.appServersStartMs,
      negotiations: inst.negotiations.between(inst.appServersStartMs, now),
      offeredConnections: traffic?.offeredConnections ?? 0,
      activeConnections: traffic?.clientConnections ?? 0,
      refusedConnections: traffic?.refusedConnections ?? 0,
    };
  }

  /**
   * Restarts the app servers of the SignalR instance named `name`: their counters start again from
   * 0 now (a counter reset, as a process restart gives).
   * @throws StateError 404 (no such SignalR instance), 409 (the name is ambiguous).
   */
  restartAppServers(name: string): AppServersView {
    this.#appServersOf(name).appServersStartMs = this.clock.nowMs();
    return this.appServers(name);
  }

  /** Adds a native autoscale setting targeting an instance. @throws ArmIdError */
  addAutoscaleSetting(spec: AutoscaleSettingSpec): AutoscaleSettingRecord {
    const ref = parseArmId(spec.targetResourceId);
    const name = spec.name ?? `${resourceName(ref)}-autoscale`;
    const resourceGroup = spec.resourceGroup ?? ref.resourceGroup;
    const target = this.#instances.get(armKey(ref.id));
    const record: AutoscaleSettingRecord = {
      id: `/subscriptions/${ref.subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Insights/autoscalesettings/${name}`,
      name,
      subscriptionId: ref.subscriptionId,
      resourceGroup,
      location: target?.location ?? "westeurope",
      targetResourceUri: ref.id,
      enabled: spec.enabled ?? true,
      minimum: spec.minimum ?? 1,
      maximum: spec.maximum ?? 10,
      default: spec.default ?? 1,
    };
    this.#autoscale.set(record.id.toLowerCase(), record);
    return { ...record };
  }

  /** Native autoscale settings, optionally of one subscription / resource group. */
  listAutoscaleSettings(
    filter: { subscriptionId?: string; resourceGroup?: string } = {},
  ): AutoscaleSettingRecord[] {
    return [...this.#autoscale.values()]
      .filter(
        (s) =>
          (filter.subscriptionId === undefined ||
            s.subscriptionId.toLowerCase() === filter.subscriptionId.toLowerCase()) &&
          (filter.resourceGroup === undefined ||
            s.resourceGroup.toLowerCase() === filter.resourceGroup.toLowerCase()),
      )
      .map((s) => ({ ...s }));
  }

  /** Removes autoscale settings (all, or the one with this ID). */
  clearAutoscaleSettings(id?: string): void {
    if (id === undefined) this.#autoscale.clear();
    else this.#autoscale.delete(id.toLowerCase());
  }
}
