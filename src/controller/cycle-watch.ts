/**
 * The poll cycles in flight and their deadline, for readiness: a cycle that has run longer than
 * its deadline plus a margin is overdue — something ignored the deadline — and `/readyz` fails
 * until it ends. Time is passed in (a monotonic clock in ms), so tests drive it.
 */

/** Default deadline of one poll cycle's Azure read: 60 seconds. */
export const DEFAULT_POLL_CYCLE_TIMEOUT_MS = 60_000;
/** Default time past the deadline before a running cycle makes the replica not ready: 15 seconds. */
export const DEFAULT_READINESS_MARGIN_MS = 15_000;

/** Options of {@link CycleWatch}. */
export interface CycleWatchOptions {
  /** The poll cycle's deadline, ms. */
  deadlineMs: number;
  /** How far past the deadline a cycle may run before readiness fails, ms. */
  marginMs: number;
  /** Monotonic clock, ms. */
  now: () => number;
}

/** Tracks running poll cycles; see the module comment. */
export class CycleWatch {
  readonly #options: CycleWatchOptions;
  readonly #running = new Map<number, number>();
  #next = 0;

  /** @throws RangeError for a deadline that is not > 0 or a negative margin. */
  constructor(options: CycleWatchOptions) {
    if (!(options.deadlineMs > 0))
      throw new RangeError(`poll cycle deadline must be > 0 ms, got ${options.deadlineMs}`);
    if (!(options.marginMs >= 0))
      throw new RangeError(`readiness margin must be ≥ 0 ms, got ${options.marginMs}`);
    this.#options = options;
  }

  /** A cycle starts; returns its id for {@link end}. */
  begin(): number {
    const id = this.#next++;
    this.#running.set(id, this.#options.now());
    return id;
  }

  /** The cycle `id` ended (unknown ids are ignored). */
  end(id: number): void {
    this.#running.delete(id);
  }

  /** Cycles running now. */
  get running(): number {
    return this.#running.size;
  }

  /** Ready unless a cycle has run longer than the deadline plus the margin; the reason says how long. */
  check(): { ok: boolean; reason?: string } {
    if (this.#running.size === 0) return { ok: true };
    const oldest = Math.min(...this.#running.values());
    const ranMs = this.#options.now() - oldest;
    const { deadlineMs, marginMs } = this.#options;
    if (ranMs <= deadlineMs + marginMs) return { ok: true };
    return {
      ok: false,
      reason: `poll cycle running for ${Math.round(ranMs / 1000)} s, past its deadline of ${deadlineMs / 1000} s by more than ${marginMs / 1000} s`,
    };
  }
}
