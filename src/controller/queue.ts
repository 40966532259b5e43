/**
 * A keyed work queue for the reconcile loop, shaped like client-go's workqueue:
 *
 * - one entry per key: adding a key that is already waiting does nothing;
 * - never two passes of the same key at once: a key added while it is being processed is marked
 *   dirty and handed out again after `done(key)`;
 * - per-key exponential backoff of failed passes (`nextBackoff`), reset by `forget`; when a key
 *   is due again is the operator's schedule, not the queue's (it has no timers).
 */
import { type BackoffOptions, backoffDelayMs } from "../kube/backoff.js";

/** Backoff of failed passes by default: 1 s × 2^(failures−1), at most 5 minutes, no jitter. */
const DEFAULT_RETRY_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 300_000, factor: 2, jitter: 0 };

export class WorkQueue {
  readonly #queue: string[] = [];
  readonly #queued = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #waiters: ((key: string | undefined) => void)[] = [];
  readonly #backoff: BackoffOptions;
  #shuttingDown = false;

  constructor(options: { backoff?: Partial<BackoffOptions> } = {}) {
    this.#backoff = { ...DEFAULT_RETRY_BACKOFF, ...options.backoff };
  }

  /** Keys waiting to be handed out (not counting those in process). */
  get depth(): number {
    return this.#queue.length;
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

  /** Counts one more failure of `key` and returns its backoff delay, ms (without queueing it). */
  nextBackoff(key: string): number {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    return backoffDelayMs(failures, this.#backoff, Math.random);
  }

  /** Consecutive failures of `key` counted by `nextBackoff`. */
  retries(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Resets the backoff of `key` (after a successful pass). */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /** Drops a key entirely: queue entry and backoff (the object was deleted). */
  remove(key: string): void {
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

  /** Stops handing out keys and wakes every waiter with `undefined`. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const w of this.#waiters.splice(0)) w(undefined);
  }
}
