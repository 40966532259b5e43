/**
 * The operator's notion of time: `now()` and timers. The real clock in a cluster; in the demo a
 * virtual clock that runs faster than real time (timers then fire after the real time that the
 * virtual delay takes).
 */

/** Timer functions (the real ones, or a virtual clock's). */
export interface Scheduler {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real timers. */
export const realScheduler: Scheduler = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface OperatorClock {
  /** Milliseconds since the epoch. */
  now(): number;
  scheduler: Scheduler;
}

/** Wall-clock time and real timers. */
export const realClock: OperatorClock = { now: () => Date.now(), scheduler: realScheduler };

/**
 * A clock that follows a virtual time source: `nowMs` is virtual, and a timer of `ms` virtual
 * milliseconds fires after `realDuration(ms)` real ones (at least 1 ms).
 */
export function scaledClock(source: {
  nowMs(): number;
  realDuration(virtualMs: number): number;
}): OperatorClock {
  return {
    now: () => source.nowMs(),
    scheduler: {
      setTimeout: (fn, ms) => setTimeout(fn, Math.max(1, Math.min(2 ** 31 - 1, source.realDuration(ms)))),
      clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
    },
  };
}
