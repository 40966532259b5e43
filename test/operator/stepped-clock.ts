/**
 * A virtual clock the test moves, for operator tests that step the loop instead of waiting in
 * real time (as Karpenter's tests do with a fake clock): the emulator's clock is stopped (speed 0)
 * and follows this one, the operator's timers (its ticks every `tickMs`, the leader's renewals)
 * are virtual, and {@link SteppedClock.advance} fires them in order, each only once everything the
 * operator started before it has settled (`idle()`), so a virtual hour of passes costs the CPU time
 * of its passes rather than a real minute at 60×.
 */
import type { OperatorClock } from "../../src/controller/clock.js";
import type { VirtualClock } from "../../src/emulator/index.js";

interface Timer {
  id: number;
  dueMs: number;
  fn: () => void;
}

/** Real ms to wait between looks at `idle()` while the operator works. */
const SETTLE_POLL_MS = 1;
/** Real time one step may wait for the operator to settle before the test fails. */
const SETTLE_LIMIT_MS = 60_000;

export class SteppedClock {
  readonly #emulator: VirtualClock;
  #timers: Timer[] = [];
  #nextId = 1;
  /** Whether the operator has nothing running (set by the harness once the operator exists). */
  idle: () => boolean = () => true;

  /** `emulator` is the emulator's clock; it is stopped here and moved with this one. */
  constructor(emulator: VirtualClock) {
    this.#emulator = emulator;
    emulator.setSpeed(0);
  }

  /** Virtual ms since the epoch (the emulator's). */
  nowMs(): number {
    return this.#emulator.nowMs();
  }

  /** The operator's clock: virtual time, virtual timers. */
  get operatorClock(): OperatorClock {
    return {
      now: () => this.nowMs(),
      scheduler: {
        setTimeout: (fn, ms) => {
          const timer = { id: this.#nextId++, dueMs: this.nowMs() + Math.max(0, ms), fn };
          this.#timers.push(timer);
          return timer.id;
        },
        clearTimeout: (handle) => {
          this.#timers = this.#timers.filter((t) => t.id !== handle);
        },
      },
    };
  }

  /** Resolves once the operator has nothing running. @throws Error after a minute of real time. */
  async settle(): Promise<void> {
    const limit = Date.now() + SETTLE_LIMIT_MS;
    // A pass hands work on through promise chains and I/O: let those run before looking.
    await new Promise((r) => setImmediate(r));
    while (!this.idle()) {
      if (Date.now() > limit) throw new Error(`the operator did not settle within ${SETTLE_LIMIT_MS} ms`);
      await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
    }
  }

  /**
   * Moves virtual time forward by `virtualMs`: every timer due meanwhile fires at its due time, in
   * order, after the operator settled from the one before.
   */
  async advance(virtualMs: number): Promise<void> {
    const end = this.nowMs() + virtualMs;
    for (;;) {
      await this.settle();
      const next = this.#next();
      if (next === undefined || next.dueMs > end) break;
      this.#timers = this.#timers.filter((t) => t !== next);
      if (next.dueMs > this.nowMs()) this.#emulator.set(new Date(next.dueMs));
      next.fn();
    }
    if (end > this.nowMs()) this.#emulator.set(new Date(end));
  }

  #next(): Timer | undefined {
    let first: Timer | undefined;
    for (const t of this.#timers) if (!first || t.dueMs < first.dueMs) first = t;
    return first;
  }
}
