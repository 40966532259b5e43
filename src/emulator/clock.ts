/**
 * The emulator's virtual clock: it starts at a chosen time and runs `speed` times faster than the
 * real clock (`speed: 1440` replays a day per real minute; `0` stops it, and time then moves only
 * with {@link VirtualClock.advance}). The real clock is injected.
 */

export interface VirtualClock {
  /** Current virtual time. */
  now(): Date;
  /** Current virtual time, ms since the epoch. */
  nowMs(): number;
  /** Virtual ms per real ms (0 = stopped). */
  readonly speed: number;
  /** Jumps to `time` (forward or back); speed unchanged. */
  set(time: Date): void;
  /** Changes the speed from now on. */
  setSpeed(speed: number): void;
  /** Moves virtual time forward by `ms`. */
  advance(ms: number): void;
  /** Real ms that `virtualMs` take at the current speed (`Infinity` when stopped). */
  realDuration(virtualMs: number): number;
}

export interface VirtualClockOptions {
  /** Virtual start time (default: the real time at creation). */
  start?: Date;
  /** Virtual ms per real ms (default 1). */
  speed?: number;
  /** The real clock, ms since the epoch (default `Date.now`). */
  realNow?: () => number;
}

function checkSpeed(speed: number): number {
  if (!Number.isFinite(speed) || speed < 0) throw new RangeError(`clock speed must be ≥ 0, got ${speed}`);
  return speed;
}

/** Creates a virtual clock. @throws RangeError for a negative or non-finite speed or an invalid start. */
export function createVirtualClock(options: VirtualClockOptions = {}): VirtualClock {
  const realNow = options.realNow ?? (() => Date.now());
  let speed = checkSpeed(options.speed ?? 1);
  let realAnchor = realNow();
  let virtualAnchor = options.start?.getTime() ?? realAnchor;
  if (!Number.isFinite(virtualAnchor)) throw new RangeError("clock start is not a valid time");

  const nowMs = () => virtualAnchor + (realNow() - realAnchor) * speed;
  const reanchor = (virtual: number) => {
    realAnchor = realNow();
    virtualAnchor = virtual;
  };
  return {
    now: () => new Date(nowMs()),
    nowMs,
    get speed() {
      return speed;
    },
    set(time: Date) {
      const t = time.getTime();
      if (!Number.isFinite(t)) throw new RangeError("clock time is not a valid time");
      reanchor(t);
    },
    setSpeed(next: number) {
      checkSpeed(next);
      reanchor(nowMs());
      speed = next;
    },
    advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`can only advance by ≥ 0 ms, got ${ms}`);
      reanchor(nowMs() + ms);
    },
    realDuration(virtualMs: number) {
      return speed === 0 ? Number.POSITIVE_INFINITY : virtualMs / speed;
    },
  };
}
