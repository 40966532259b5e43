/**
 * The app servers' metrics as a Prometheus scraping them would serve them to a policy's leading
 * signal (`spec.anticipation.leadingSignal`), minute by minute in a simulation.
 *
 * - Arrivals: `traffic/arrivals.ts` (`negotiateArrivals`): every client negotiates, refused ones
 *   too, at `max(0, dD/dt) + D/W` per second for a mean connection lifetime `W`; plus, in the
 *   minute a capacity change completes, the reconnect attempts of the clients it disconnected
 *   (`traffic/disconnections.ts`), as the app servers' negotiate counter would count them.
 * - Lag: a poll at `t` sees the rate of the last whole minute before it, evaluated at
 *   `t − scrapeLag` (the scrape interval: a sample is up to one interval old). No ingestion delay:
 *   that is the point of the signal.
 * - Extrapolation: `rate(…[1m])` measures the increase between the first and the last sample
 *   within its minute — `60 s − scrapeLag` apart — and extrapolates it to the whole minute
 *   (Prometheus `extrapolatedRate`). Arrivals spread over the minute read as they were; a burst of
 *   reconnects, which comes within 30 s of a change and so between those samples, reads
 *   `60 ÷ (60 − scrapeLag)` times its size (4/3 at a 15 s scrape), as a real Prometheus serves it.
 *   The counter (measures `NewConnectionsTotal`) counts it as it was.
 * - Connections (measures `Connections`): the client connections the app servers hold in that
 *   minute — the accepted ones (demand − refused); a full quota caps them as it caps Azure's.
 *
 * Pure: time is an argument; the arrivals are computed once per run.
 */
import type { LeadingMeasure } from "../api/constants.js";
import type { LeadingReading } from "../autoscale/leading.js";

const MINUTE_MS = 60_000;

/** Default scrape interval (Prometheus's usual 15 s), ms. */
export const DEFAULT_SCRAPE_LAG_MS = 15_000;

/** Per-minute app-server metrics of one simulated instance. */
export class AppServerHistory {
  readonly startMs: number;
  readonly scrapeLagMs: number;
  readonly #arrivals: Float64Array;
  /** What `rate()`'s extrapolation adds to minute m's bursts of reconnects (see the module comment). */
  readonly #extrapolated: Float64Array;
  /** Cumulative arrivals before minute m (prefix sums). */
  readonly #total: Float64Array;
  readonly #accepted: Float64Array;
  #length = 0;

  /**
   * @param arrivals negotiate arrivals per minute of the whole run (clients per minute).
   * @param scrapeLagMs how old the newest scraped sample is at a poll, ms (≥ 0).
   */
  constructor(startMs: number, arrivals: Float64Array, scrapeLagMs = DEFAULT_SCRAPE_LAG_MS) {
    this.startMs = startMs;
    this.scrapeLagMs = scrapeLagMs;
    this.#arrivals = Float64Array.from(arrivals);
    this.#extrapolated = new Float64Array(arrivals.length);
    this.#total = new Float64Array(arrivals.length + 1);
    this.#accepted = new Float64Array(arrivals.length);
  }

  /**
   * Adds negotiations to minute `m` before it is recorded: the reconnect attempts of clients a
   * capacity change disconnected (`traffic/disconnections.ts`).
   */
  addNegotiations(m: number, count: number): void {
    if (m >= this.#length && m < this.#arrivals.length) {
      this.#arrivals[m] = (this.#arrivals[m] as number) + count;
      const sampledMs = Math.max(MINUTE_MS - this.scrapeLagMs, 1);
      this.#extrapolated[m] = (this.#extrapolated[m] as number) + (count * this.scrapeLagMs) / sampledMs;
    }
  }

  /** Records the minute just replayed: the client connections the service accepted. */
  push(acceptedConnections: number): void {
    const m = this.#length;
    if (m >= this.#accepted.length) return;
    this.#accepted[m] = acceptedConnections;
    this.#total[m + 1] = (this.#total[m] as number) + (this.#arrivals[m] as number);
    this.#length++;
  }

  /**
   * What the leading signal's query returns at a poll at `nowMs` (a whole minute): the last whole
   * minute replayed before it, evaluated `scrapeLag` before the poll; undefined before the first.
   */
  reading(measures: LeadingMeasure, nowMs: number): LeadingReading | undefined {
    const m = Math.floor((nowMs - this.startMs) / MINUTE_MS) - 1;
    if (m < 0 || m >= this.#length) return undefined;
    const timeMs = nowMs - this.scrapeLagMs;
    if (measures === "NewConnectionsPerSecond") {
      return { timeMs, value: ((this.#arrivals[m] as number) + (this.#extrapolated[m] as number)) / 60 };
    }
    if (measures === "NewConnectionsTotal") return { timeMs, value: this.#total[m + 1] as number };
    return { timeMs, value: this.#accepted[m] as number };
  }
}
