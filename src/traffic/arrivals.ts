/**
 * Client arrivals: how many clients call the application's negotiate endpoint
 * (`POST /<hub>/negotiate`), which every SignalR client in default mode calls before it connects
 * to the service. Pure.
 *
 * Demand is a level — D(t) concurrent client connections wanted (a trace or a pattern, `demand.ts`)
 * — while negotiations are a flow. With a mean connection lifetime W, the arrival rate is
 *
 *     λ(t) = max(0, dD/dt) + D(t) / W        clients per second
 *
 * the second term is Little's law at steady state (D = λ·W: to keep D connections that last W on
 * average, D/W new ones must arrive each second, replacing those that leave); the first adds the
 * clients of a rise (a fall is clients leaving early, which brings no arrivals). Every client
 * negotiates, those the service then refuses over its connection quota too (`traffic.ts` computes
 * them): the negotiate rate is offered demand, not what the service accepted. A refused client's
 * retries are not modelled (each client negotiates once per connection it wants).
 *
 * W is a model parameter, {@link DEFAULT_CONNECTION_LIFETIME_SECONDS} by default: 20 minutes, the
 * length of a typical chat session (a browser tab open on a chat or a live page, then closed).
 * Shorter lifetimes mean more negotiations for the same demand; the rise term does not depend on it.
 *
 * Minute-grained demand (one value per whole UTC minute, as the emulator's buckets and `simulate`
 * have it: the demand at the minute's middle) gives, for minute m,
 *
 *     arrivals[m] = max(0, D[m] − D[m−1]) + D[m] · 60 / W
 *
 * where the minute before the first is taken at the first's level (steady state before the series
 * starts). Within a minute, negotiations are spread evenly: the cumulative count N(t) is linear
 * between minute starts, monotone, and its difference over a minute is that minute's arrivals.
 */

const MINUTE_MS = 60_000;

/**
 * Default mean connection lifetime W, seconds: 20 minutes, a typical chat session. A parameter of
 * the model (see the module comment), not a measured figure.
 */
export const DEFAULT_CONNECTION_LIFETIME_SECONDS = 20 * 60;

function checkLifetime(lifetimeSeconds: number): number {
  if (!(lifetimeSeconds > 0) || !Number.isFinite(lifetimeSeconds)) {
    throw new RangeError(
      `the mean connection lifetime must be a positive number of seconds, got ${lifetimeSeconds}`,
    );
  }
  return lifetimeSeconds;
}

function checkDemand(demand: number, where: string): number {
  if (!(demand >= 0) || !Number.isFinite(demand)) {
    throw new RangeError(`demand must be a finite number of connections ≥ 0, got ${demand} (${where})`);
  }
  return demand;
}

/**
 * The arrival (negotiate) rate λ = max(0, dD/dt) + D/W, clients per second.
 * @param demand D, concurrent client connections wanted (≥ 0).
 * @param demandSlopePerSecond dD/dt, connections per second (any sign).
 * @param lifetimeSeconds W, the mean connection lifetime, s (> 0).
 * @throws RangeError for negative or non-finite demand, a non-finite slope, or W ≤ 0.
 */
export function negotiateRate(
  demand: number,
  demandSlopePerSecond: number,
  lifetimeSeconds: number = DEFAULT_CONNECTION_LIFETIME_SECONDS,
): number {
  checkDemand(demand, "negotiateRate");
  if (!Number.isFinite(demandSlopePerSecond)) {
    throw new RangeError(`the demand slope must be finite, got ${demandSlopePerSecond}`);
  }
  return Math.max(0, demandSlopePerSecond) + demand / checkLifetime(lifetimeSeconds);
}

/** Arrivals of a minute at demand `demand` after a minute at `previous`: max(0, rise) + D·60/W. */
function minuteArrivals(demand: number, previous: number, lifetimeSeconds: number): number {
  return Math.max(0, demand - previous) + (demand * 60) / lifetimeSeconds;
}

/** Options of {@link negotiateArrivals}. */
export interface NegotiateArrivalsOptions {
  /** W, the mean connection lifetime, s (default {@link DEFAULT_CONNECTION_LIFETIME_SECONDS}). */
  lifetimeSeconds?: number;
  /** Demand of the minute before the series (default: the first minute's — steady state before). */
  demandBefore?: number;
}

/**
 * Negotiate arrivals per minute of a minute-grained demand series (see the module comment): the
 * clients calling `POST /<hub>/negotiate` in each minute, refused ones included. Pairs with
 * `simulate`'s `demandSeries`.
 * @param demand offered client connections per minute (≥ 0 each).
 * @returns arrivals per minute, the same length as `demand` (fractional: an expected count).
 * @throws RangeError for a negative or non-finite demand value or `demandBefore`, or W ≤ 0.
 */
export function negotiateArrivals(
  demand: ArrayLike<number>,
  options: NegotiateArrivalsOptions = {},
): Float64Array {
  const lifetime = checkLifetime(options.lifetimeSeconds ?? DEFAULT_CONNECTION_LIFETIME_SECONDS);
  const out = new Float64Array(demand.length);
  if (demand.length === 0) return out;
  let previous = checkDemand(options.demandBefore ?? (demand[0] as number), "demandBefore");
  for (let m = 0; m < demand.length; m++) {
    const d = checkDemand(demand[m] as number, `minute ${m}`);
    out[m] = minuteArrivals(d, previous, lifetime);
    previous = d;
  }
  return out;
}

/** Options of a {@link NegotiateCounter}. */
export interface NegotiateCounterOptions {
  /** Where counting starts, ms since the epoch: the counter's first minute is the whole UTC minute containing it. */
  originMs: number;
  /**
   * Offered client connections (everyone who wants the service, refused clients too) of the
   * minute starting at `minuteMs` (a whole minute), ≥ 0. Called once per minute and remembered
   * until {@link NegotiateCounter.forgetFrom}.
   */
  demandOfMinute: (minuteMs: number) => number;
  /** W, the mean connection lifetime, s (default {@link DEFAULT_CONNECTION_LIFETIME_SECONDS}). */
  lifetimeSeconds?: number;
}

/**
 * The cumulative negotiate count N(t) of a demand that changes minute by minute, at any instant:
 * the sum of the arrivals of the minutes before t's minute, plus t's minute's arrivals × the
 * fraction of it elapsed. Monotone in t; exact at minute starts (N(m+1) − N(m) = arrivals[m]).
 *
 * Memoized: demand and prefix sums are kept per minute from the first, so the first call at a time
 * costs O(minutes since the origin) (28 days: about 40,000 minutes) and later ones O(1) plus the
 * minutes that passed since the last. Pure apart from that memo: time is always an argument.
 */
export class NegotiateCounter {
  readonly lifetimeSeconds: number;
  /** Start of the first minute, ms. */
  readonly firstMinuteMs: number;
  readonly #demandOfMinute: (minuteMs: number) => number;
  /** Demand per minute from the first, as far as computed. */
  readonly #demand: number[] = [];
  /** `#prefix[k]`: arrivals of minutes 0 … k−1; always one longer than `#demand`. */
  readonly #prefix: number[] = [0];
  /** Negotiations added at instants (reconnects after a capacity change), in time order. */
  readonly #extra: { timeMs: number; count: number }[] = [];

  /** @throws RangeError for a non-finite origin or W ≤ 0. */
  constructor(options: NegotiateCounterOptions) {
    if (!Number.isFinite(options.originMs))
      throw new RangeError(`the origin is not a time: ${options.originMs}`);
    this.lifetimeSeconds = checkLifetime(options.lifetimeSeconds ?? DEFAULT_CONNECTION_LIFETIME_SECONDS);
    this.firstMinuteMs = Math.floor(options.originMs / MINUTE_MS) * MINUTE_MS;
    this.#demandOfMinute = options.demandOfMinute;
  }

  /** Computes demand and prefix sums up to minute index `k` (inclusive). */
  #extendTo(k: number): void {
    const demand = this.#demand;
    const prefix = this.#prefix;
    for (let i = demand.length; i <= k; i++) {
      const minuteMs = this.firstMinuteMs + i * MINUTE_MS;
      const d = checkDemand(this.#demandOfMinute(minuteMs), new Date(minuteMs).toISOString());
      const previous = i === 0 ? d : (demand[i - 1] as number);
      demand.push(d);
      prefix.push((prefix[i] as number) + minuteArrivals(d, previous, this.lifetimeSeconds));
    }
  }

  /**
   * Adds `count` negotiations at the instant `timeMs`, besides the demand's arrivals: the reconnect
   * attempts of clients a capacity change disconnected (`disconnections.ts`). Counted by
   * {@link cumulativeAt} from `timeMs` on (inclusive).
   * @throws RangeError for a non-finite time or a negative or non-finite count.
   */
  addNegotiations(timeMs: number, count: number): void {
    if (!Number.isFinite(timeMs)) throw new RangeError(`not a time: ${timeMs}`);
    if (!(count >= 0) || !Number.isFinite(count)) throw new RangeError(`not a count: ${count}`);
    if (count === 0) return;
    const at = this.#extra.findIndex((e) => e.timeMs > timeMs);
    this.#extra.splice(at < 0 ? this.#extra.length : at, 0, { timeMs, count });
  }

  /** Negotiations added by {@link addNegotiations} at or before `timeMs`. */
  #extraUpTo(timeMs: number): number {
    let sum = 0;
    for (const e of this.#extra) {
      if (e.timeMs > timeMs) break;
      if (e.timeMs >= this.firstMinuteMs) sum += e.count;
    }
    return sum;
  }

  /**
   * Negotiations from the start of the first minute to `timeMs` (0 before it).
   * @throws RangeError for a non-finite time, or (from `demandOfMinute`) an invalid demand.
   */
  cumulativeAt(timeMs: number): number {
    if (!Number.isFinite(timeMs)) throw new RangeError(`not a time: ${timeMs}`);
    const offset = timeMs - this.firstMinuteMs;
    if (offset <= 0) return offset === 0 ? this.#extraUpTo(timeMs) : 0;
    const k = Math.floor(offset / MINUTE_MS);
    this.#extendTo(k);
    const start = this.#prefix[k] as number;
    const within = (offset - k * MINUTE_MS) / MINUTE_MS;
    return start + ((this.#prefix[k + 1] as number) - start) * within + this.#extraUpTo(timeMs);
  }

  /** Negotiations between `fromMs` and `toMs`: N(to) − N(from), 0 when `toMs` ≤ `fromMs`. */
  between(fromMs: number, toMs: number): number {
    if (toMs <= fromMs) return 0;
    return Math.max(0, this.cumulativeAt(toMs) - this.cumulativeAt(fromMs));
  }

  /** Arrivals of the minute containing `timeMs`, added negotiations included (0 before the first minute). */
  arrivalsInMinute(timeMs: number): number {
    const k = Math.floor((timeMs - this.firstMinuteMs) / MINUTE_MS);
    if (k < 0) return 0;
    this.#extendTo(k);
    const startMs = this.firstMinuteMs + k * MINUTE_MS;
    const extra = this.#extraUpTo(startMs + MINUTE_MS - 1e-6) - this.#extraUpTo(startMs - 1e-6);
    return (this.#prefix[k + 1] as number) - (this.#prefix[k] as number) + extra;
  }

  /**
   * Forgets the minutes starting at or after `timeMs` (their demand changed from then on); they
   * are computed again when next asked for.
   */
  forgetFrom(timeMs: number): void {
    const j = Math.max(0, Math.ceil((timeMs - this.firstMinuteMs) / MINUTE_MS));
    if (j < this.#demand.length) {
      this.#demand.length = j;
      this.#prefix.length = j + 1;
    }
  }
}
