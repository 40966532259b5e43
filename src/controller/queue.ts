/**
 * A keyed work queue for the reconcile loop, shaped like client-go's workqueue:
 *
 * - one entry per key: adding a key that is already waiting does nothing;
 * - never two passes of the same key at once: a key added while it is being processed is marked
 *   dirty and handed out again after `done(key)`;
 * - delayed adds (`addAfter`) keep only the earliest pending time per key, so a policy is
 *   requeued on its poll interval without piling up timers;
 * - rate-limited retries (`addRateLimited`): per-key exponential backoff, reset by `forget`.
 *
 * Timers come from an injected {@link Scheduler} so tests and the virtual clock drive it.
 */
import { type BackoffOptions, backoffDelayMs } from "../kube/backoff.js";

/** Timer functions the queue uses (the real ones by default). */
export interface Scheduler {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realScheduler: Scheduler = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Backoff of rate-limited retries by default: 1 s × 2^(failures−1), at most 5 minutes, no jitter. */
const DEFAULT_RETRY_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 300_000, factor: 2, jitter: 0 };

export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #timers = new Map<string, { at: number; handle: unknown }>();
  readonly #failures = new Map<string, number>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  readonly #scheduler: Scheduler;
  readonly #now: () => number;
  readonly #backoff: BackoffOptions;
  #shuttingDown = false;

  constructor(
    options: { scheduler?: Scheduler; now?: () => number; backoff?: Partial<BackoffOptions> } = {},
  ) {
    this.#scheduler = options.scheduler ?? realScheduler;
    this.#now = options.now ?? Date.now;
    this.#backoff = { ...DEFAULT_RETRY_BACKOFF, ...options.backoff };
  }

  /** Keys waiting to be handed out (not counting delayed ones or those in process). */
  get depth(): number {
    return this.#queue.length;
  }

  /** Keys waiting on a timer. */
  get delayed(): number {
    return this.#timers.size;
  }

  /** Queues `key` now (no-op if already waiting; deferred if in process). */
  add(key: string): void {
    if (this.#shuttingDown) return;
    if (this.#processing.has(key)) {
      this.#dirty.add(key);
      return;
    }
    if (this.#queued.has(key)) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      this.#processing.add(key);
      waiter(key);
      return;
    }
    this.#queued.add(key);
    this.#queue.push(key);
  }

  /** Queues `key` after `delayMs`; an earlier pending time for the same key wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = this.#now() + delayMs;
    const existing = this.#timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) this.#scheduler.clearTimeout(existing.handle);
    const handle = this.#scheduler.setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, delayMs);
    this.#timers.set(key, { at, handle });
  }

  /** Queues `key` after its next backoff delay; returns that delay in milliseconds. */
  addRateLimited(key: string): number {
    const delay = this.nextBackoff(key);
    this.addAfter(key, delay);
    return delay;
  }

  /** Counts one more failure of `key` and returns its backoff delay, ms (without queueing it). */
  nextBackoff(key: string): number {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    return backoffDelayMs(failures, this.#backoff, Math.random);
  }

  /** Consecutive rate-limited retries of `key`. */
  retries(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Resets the backoff of `key` (after a successful pass). */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /** Drops a key entirely: pending timer, queue entry and backoff (the object was deleted). */
  remove(key: string): void {
    const timer = this.#timers.get(key);
    if (timer) this.#scheduler.clearTimeout(timer.handle);
    this.#timers.delete(key);
    this.#failures.delete(key);
    this.#dirty.delete(key);
    if (this.#queued.delete(key)) this.#queue.splice(this.#queue.indexOf(key), 1);
  }

  /** Waits for the next key; `undefined` once the queue is shut down. The caller must call `done`. */
  get(): Promise<string | undefined> {
    const key = this.#queue.shift();
    if (key !== undefined) {
      this.#queued.delete(key);
      this.#processing.add(key);
      return Promise.resolve(key);
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Marks the pass of `key` finished; a key added meanwhile is queued again. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.delete(key)) this.add(key);
  }

  /** True while a pass of `key` runs. */
  isProcessing(key: string): boolean {
    return this.#processing.has(key);
  }

  /** Stops handing out keys, clears timers and wakes every waiter with `undefined`. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { handle } of this.#timers.values()) this.#scheduler.clearTimeout(handle);
    this.#timers.clear();
    for (const w of this.#waiters.splice(0)) w(undefined);
  }
}
