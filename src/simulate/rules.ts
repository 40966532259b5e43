/**
 * Simple causal autoscaling rules and the tight engine that scores them: the mechanics of
 * `engine.ts` (a scale takes the scale duration and only one runs at a time; metrics are seen
 * through the ingestion delay; connections above the quota are refused; a completed scale-in
 * disconnects clients as `traffic/disconnections.ts` says) replayed for one rule in about
 * 0.1 µs a minute, so that a thousand rules cost less than one run of the policy. Pure.
 *
 * **What a rule sees.** At minute `m` it is polled (every minute, as the engine polls) with the
 * newest bucket the ingestion delay lets through — bucket `m − ⌊delay ÷ 1 min⌋ − 1`, as
 * `MetricHistory.samples` serves it: the connection count's Maximum (client + app-server
 * connections, the catalog's within-minute spread on top, rounded), which never exceeds the quota
 * by more than that spread because refused clients are not connected. Its estimate of the client
 * demand is that count less the app servers' connections at the bucket's size; the bucket is
 * *saturated* when the count is at or above the quota (ConnectionQuotaUtilization's Maximum at
 * 100 %).
 *
 * **What a rule wants** ({@link RuleDecision}), from that estimate `e`:
 * 1. Jump on saturation: a saturated bucket says only "more than the quota"; with a jump `k` the
 *    rule takes `e = max(e, k × the clients the bucket's quota holds)`.
 * 2. Peak hold with decay: `h = max(e, h × ½^(1 ÷ half-life))` per minute (no hold: `h = e`).
 * 3. Headroom: `need = h × multiplier + spare connections`; the target is the smallest size whose
 *    quota, less its app servers' connections, holds `need` (the largest when none does).
 * 4. Scale-down stabilization (as the HPA's): below the current size the rule goes only to the
 *    highest target of the last `window` minutes, and the scale-down rate lets one scale remove at
 *    most that share of the current units (rounded to the next size up).
 * A target above the current size is asked for at once; the engine starts it when no scale is in
 * flight.
 *
 * **Sizes.** The policy's allowed sizes within its `units` bounds, one per unit count (the lowest
 * tier allowed at that count: Premium_P1 up to 100 units, Premium_P2 above).
 *
 * `strategies/rule.ts` runs the same {@link RuleDecision} through `engine.ts` itself; the tests
 * hold the two to the same figures.
 */
import { SCALABLE_SKUS, type SkuUnits } from "../capacity/index.js";
import {
  clientsDisconnected,
  type DisconnectionModel,
  findEmulatedMetric,
  noise,
  trafficAt,
  type WorkloadMix,
} from "../traffic/index.js";
import { MINUTE_MS } from "./engine.js";
import type { UnitPrices } from "./metrics.js";

/** One simple causal rule: a setting of each family (see the module comment). */
export interface SimpleRule {
  /** Multiplicative headroom on the held demand, ≥ 1 (1: none). */
  multiplier: number;
  /** Constant headroom, client connections. */
  spareConnections: number;
  /** Half-life of the held peak, minutes; 0: no hold (the newest bucket alone). */
  holdHalfLifeMinutes: number;
  /** On a saturated bucket, assume this many times the clients its quota holds; 0: no jump. */
  saturationJump: number;
  /** Scale-down stabilization window, minutes; 0: scale in to the target at once. */
  scaleDownStabilizationMinutes: number;
  /** Most units one scale-in removes, % of the current units; 100: any. */
  scaleDownPercent: number;
}

/** Everything the rules share, computed once: the demand, the noise, the sizes and their quotas. */
export interface RuleSetup {
  /** Client connections wanted per minute. */
  demand: Float64Array;
  /** Per minute, the connection count's within-minute spread: |noise| × the catalog's swing. */
  spread: Float64Array;
  /** The sizes, ascending (one per unit count). */
  sizes: readonly SkuUnits[];
  /** Per size: units, index into {@link SCALABLE_SKUS}, quota, app-server connections, clients held. */
  units: Uint16Array;
  sku: Uint8Array;
  quota: Float64Array;
  server: Float64Array;
  clients: Float64Array;
  /**
   * Per size: the most clients whose true load stays at or under the load target, and the most
   * whose traffic fits every bandwidth dimension (more is a minute above the target, throttled).
   */
  atTarget: Float64Array;
  unthrottled: Float64Array;
  /** Size index at the start. */
  initial: number;
  /** Minutes from a bucket's minute to the first poll that sees it (⌊delay ÷ 1 min⌋ + 1). */
  lagMinutes: number;
  /** Minutes a scale takes, rounded up (0: it applies at once). */
  scaleMinutes: number;
  prices: UnitPrices;
  disconnection: DisconnectionModel;
}

/** Inputs of {@link ruleSetup}. */
export interface RuleSetupInput {
  demand: Float64Array;
  mix: WorkloadMix;
  seed: string;
  scaleDurationMs: number;
  metricDelayMs: number;
  /** The policy's allowed sizes within its bounds, ascending (units, then tier). */
  sizes: readonly SkuUnits[];
  /** Where the rules start: the smallest size at least this one (else the largest). */
  initial: SkuUnits;
  prices: UnitPrices;
  disconnection?: DisconnectionModel;
  /** Load target, % (default 70): the minutes above it are counted, as `metrics.ts` counts them. */
  loadTargetPercent?: number;
}

/** The most clients in `0 … most` for which `fits` holds (it holds for fewer whenever for more). */
function mostThat(most: number, fits: (clients: number) => boolean): number {
  if (fits(most)) return most;
  let lo = 0;
  let hi = most;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** One size per unit count: the first (lowest tier) of each. */
function perUnitCount(sizes: readonly SkuUnits[]): SkuUnits[] {
  const out: SkuUnits[] = [];
  for (const s of sizes) if (out.at(-1)?.units !== s.units) out.push({ ...s });
  return out;
}

/**
 * The rules' shared set-up (see {@link RuleSetup}).
 * @throws RangeError without sizes, or when a larger size holds fewer clients than a smaller one.
 */
export function ruleSetup(input: RuleSetupInput): RuleSetup {
  const sizes = perUnitCount(input.sizes);
  if (sizes.length === 0) throw new RangeError("the simple rules need at least one allowed size");
  const n = sizes.length;
  const setup: RuleSetup = {
    demand: input.demand,
    spread: new Float64Array(input.demand.length),
    sizes,
    units: new Uint16Array(n),
    sku: new Uint8Array(n),
    quota: new Float64Array(n),
    server: new Float64Array(n),
    clients: new Float64Array(n),
    atTarget: new Float64Array(n),
    unthrottled: new Float64Array(n),
    initial: 0,
    lagMinutes: Math.floor(Math.max(0, input.metricDelayMs) / MINUTE_MS) + 1,
    scaleMinutes: input.scaleDurationMs > 0 ? Math.ceil(input.scaleDurationMs / MINUTE_MS) : 0,
    prices: input.prices,
    disconnection: input.disconnection ?? "RemovedUnits",
  };
  sizes.forEach((s, i) => {
    const t = trafficAt({ mix: input.mix, offeredConnections: 0, sku: s.sku, units: s.units, noise: 0 });
    setup.units[i] = s.units;
    setup.sku[i] = SCALABLE_SKUS.indexOf(s.sku as (typeof SCALABLE_SKUS)[number]);
    setup.quota[i] = t.connectionQuota;
    setup.server[i] = t.serverConnections;
    setup.clients[i] = t.connectionQuota - t.serverConnections;
    if (i > 0 && (setup.clients[i] as number) < (setup.clients[i - 1] as number)) {
      throw new RangeError(`${s.sku} × ${s.units} holds fewer clients than the size below it`);
    }
    const at = (c: number) =>
      trafficAt({ mix: input.mix, offeredConnections: c, sku: s.sku, units: s.units, noise: 0 });
    const limit = (input.loadTargetPercent ?? 70) + 1e-6;
    setup.atTarget[i] = mostThat(setup.clients[i] as number, (c) => at(c).utilization * 100 <= limit);
    setup.unthrottled[i] = mostThat(setup.clients[i] as number, (c) => {
      const t = at(c);
      return !(t.utilization > 1 && t.limitedBy !== "connections");
    });
  });
  const first = sizes.findIndex((s) => s.units >= input.initial.units);
  setup.initial = first >= 0 ? first : n - 1;
  const metric = findEmulatedMetric(
    input.mix.service,
    input.mix.service === "SignalR" ? "ConnectionCount" : "TotalConnectionCount",
  );
  const swing = metric?.swing ?? 0;
  for (let m = 0; m < input.demand.length; m++) {
    setup.spread[m] = Math.abs(noise(input.seed, m, 1)) * swing;
  }
  return setup;
}

/**
 * The smallest size index holding `need` clients, else the largest (clients ascending), walking
 * from `from` (the last answer: demand moves little from one minute to the next).
 */
function sizeFor(clients: Float64Array, need: number, from: number): number {
  let i = from;
  const top = clients.length - 1;
  while (i < top && (clients[i] as number) < need) i++;
  while (i > 0 && (clients[i - 1] as number) >= need) i--;
  return i;
}

/**
 * The decision of one rule, polled once a minute with the newest visible bucket (see the module
 * comment, steps 1–4). Holds the peak and the stabilization window between polls.
 */
export class RuleDecision {
  readonly #setup: RuleSetup;
  readonly #decay: number;
  /** Per current size: the smallest size one scale-in may go to. */
  readonly #floor: Int32Array;
  readonly #multiplier: number;
  readonly #spare: number;
  readonly #jump: number;
  readonly #window: number;
  #held = 0;
  /** The last target, where the next search starts. */
  #target = 0;
  /** The stabilization window: a ring of (minute, target) with targets decreasing from the front. */
  readonly #minutes: Int32Array;
  readonly #targets: Int32Array;
  #front = 0;
  #length = 0;

  constructor(rule: SimpleRule, setup: RuleSetup) {
    this.#setup = setup;
    this.#decay = rule.holdHalfLifeMinutes > 0 ? 0.5 ** (1 / rule.holdHalfLifeMinutes) : 0;
    this.#multiplier = rule.multiplier;
    this.#spare = rule.spareConnections;
    this.#jump = rule.saturationJump;
    this.#window = rule.scaleDownStabilizationMinutes;
    const n = setup.sizes.length;
    this.#floor = new Int32Array(n);
    const keep = 1 - Math.min(100, Math.max(0, rule.scaleDownPercent)) / 100;
    for (let i = 0; i < n; i++) {
      const least = (setup.units[i] as number) * keep;
      let j = 0;
      while (j < i && (setup.units[j] as number) < least - 1e-9) j++;
      this.#floor[i] = j;
    }
    const cap = Math.max(1, Math.ceil(rule.scaleDownStabilizationMinutes)) + 1;
    this.#minutes = new Int32Array(cap);
    this.#targets = new Int32Array(cap);
  }

  /** The target of the window's highest recommendation after adding `target` at `minute`. */
  #stabilized(minute: number, target: number): number {
    const cap = this.#targets.length;
    while (this.#length > 0) {
      const back = (this.#front + this.#length - 1) % cap;
      if ((this.#targets[back] as number) > target) break;
      this.#length--;
    }
    const at = (this.#front + this.#length) % cap;
    this.#minutes[at] = minute;
    this.#targets[at] = target;
    this.#length++;
    const oldest = minute - this.#window;
    while ((this.#minutes[this.#front] as number) <= oldest && this.#length > 1) {
      this.#front = (this.#front + 1) % cap;
      this.#length--;
    }
    return this.#targets[this.#front] as number;
  }

  /**
   * The size index wanted at `minute`, when the newest visible bucket shows `seen` connections at
   * size index `atSize` and the instance is at size index `current`.
   */
  want(minute: number, seen: number, atSize: number, current: number): number {
    const s = this.#setup;
    let demand = seen - (s.server[atSize] as number);
    if (demand < 0) demand = 0;
    if (this.#jump > 0 && seen >= (s.quota[atSize] as number)) {
      const assumed = this.#jump * (s.clients[atSize] as number);
      if (assumed > demand) demand = assumed;
    }
    const held = this.#held * this.#decay;
    this.#held = Math.max(held, demand);
    const target = sizeFor(s.clients, this.#held * this.#multiplier + this.#spare, this.#target);
    this.#target = target;
    const stabilized = this.#stabilized(minute, target);
    if (target >= current) return target;
    const down = Math.min(stabilized, current);
    const floor = this.#floor[current] as number;
    return Math.max(down, floor);
  }
}

/** A rule's figures, on the four axes of the reference and a few more. */
export interface RuleScore {
  /** Minutes with at least one refused connection. */
  refusedMinutes: number;
  /** Refused connections summed over minutes. */
  refusedConnectionMinutes: number;
  /** Unit-hours, all SKUs. */
  unitHours: number;
  /** Estimated cost, USD (unit-hours priced per SKU, as `metrics.ts`). */
  costUsd: number;
  /** Clients the rule's completed scales disconnected. */
  clientsDisconnected: number;
  /** Scale operations started. */
  scaleOperations: number;
  /** Minutes with the true load above the load target, and with throttled traffic (not axes). */
  minutesAboveTarget: number;
  minutesThrottled: number;
}

/** A minute-by-minute record of a rule's run (for the tests and charts): size index and connections seen. */
export interface RuleTrack {
  size: Int32Array;
  seen: Float64Array;
}

/** The clients a completed change from size `from` to `to` disconnects, `connections` had before. */
function disconnectedBy(s: RuleSetup, from: number, to: number, connections: number): number {
  return clientsDisconnected(
    {
      connections,
      fromUnits: s.units[from] as number,
      toUnits: s.units[to] as number,
      skuChanges: s.sku[from] !== s.sku[to],
    },
    s.disconnection,
  );
}

/** The figures of a run from its unit-minutes per SKU and its counters. */
function score(s: RuleSetup, unitMinutes: Float64Array, counts: Omit<RuleScore, "unitHours" | "costUsd">) {
  let unitHours = 0;
  let costUsd = 0;
  SCALABLE_SKUS.forEach((sku, i) => {
    const uh = (unitMinutes[i] as number) / 60;
    if (uh <= 0) return;
    unitHours += uh;
    costUsd += (uh / 24) * s.prices[sku];
  });
  return { ...counts, unitHours, costUsd };
}

/**
 * Runs one rule over the whole demand with the engine's mechanics (see the module comment) and
 * scores it; `track`, when given (of the demand's length), gets the size and connections seen of
 * every minute.
 */
export function runRule(rule: SimpleRule, s: RuleSetup, track?: RuleTrack): RuleScore {
  const decision = new RuleDecision(rule, s);
  const { demand, clients, server, spread, units, sku, lagMinutes, scaleMinutes, atTarget, unthrottled } = s;
  const minutes = demand.length;
  const size = track?.size ?? new Int32Array(minutes);
  const seen = track?.seen ?? new Float64Array(minutes);
  const unitMinutes = new Float64Array(SCALABLE_SKUS.length);
  let refusedMinutes = 0;
  let refusedSum = 0;
  let disconnected = 0;
  let operations = 0;
  let above = 0;
  let throttled = 0;
  let current = s.initial;
  let to = -1;
  let doneAt = 0;
  let before = 0;
  for (let m = 0; m < minutes; m++) {
    if (to >= 0 && m >= doneAt) {
      disconnected += disconnectedBy(s, current, to, before);
      current = to;
      to = -1;
    }
    const k = m - lagMinutes;
    if (k >= 0) {
      const want = decision.want(m, seen[k] as number, size[k] as number, current);
      if (to < 0 && want !== current) {
        operations++;
        if (scaleMinutes === 0) {
          disconnected += disconnectedBy(s, current, want, before);
          current = want;
        } else {
          to = want;
          doneAt = m + scaleMinutes;
        }
      }
    }
    const offered = demand[m] as number;
    const held = clients[current] as number;
    let accepted = offered;
    if (offered > held) {
      accepted = held;
      refusedMinutes++;
      refusedSum += offered - held;
    }
    if (accepted > (atTarget[current] as number)) above++;
    if (accepted > (unthrottled[current] as number)) throttled++;
    const tier = sku[current] as number;
    unitMinutes[tier] = (unitMinutes[tier] as number) + (units[current] as number);
    size[m] = current;
    // The connection count's Maximum, as `minuteAggregates` makes it: the spread on top, rounded.
    const connected = accepted + (server[current] as number);
    seen[m] = Math.round(connected + (spread[m] as number) * connected);
    before = accepted;
  }
  return score(s, unitMinutes, {
    refusedMinutes,
    refusedConnectionMinutes: refusedSum,
    clientsDisconnected: disconnected,
    scaleOperations: operations,
    minutesAboveTarget: above,
    minutesThrottled: throttled,
  });
}

/** A rule in a few words: `demand × 1.5 + 1,000, hold 30 min, jump 3×, scale-in after 15 min, ≤ 50 % a step`. */
export function describeRule(rule: SimpleRule): string {
  const n = (v: number) => v.toLocaleString("en-US");
  const parts = [`demand × ${n(rule.multiplier)} + ${n(rule.spareConnections)}`];
  parts.push(
    rule.holdHalfLifeMinutes > 0 ? `peak held (half-life ${n(rule.holdHalfLifeMinutes)} min)` : "no hold",
  );
  parts.push(rule.saturationJump > 0 ? `${n(rule.saturationJump)}× the quota when saturated` : "no jump");
  parts.push(
    rule.scaleDownStabilizationMinutes > 0
      ? `scale-in stabilized ${n(rule.scaleDownStabilizationMinutes)} min`
      : "scale-in at once",
  );
  if (rule.scaleDownPercent < 100)
    parts.push(`at most ${n(rule.scaleDownPercent)} % of the units a scale-in`);
  return parts.join(", ");
}
