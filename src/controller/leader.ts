/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's timing model:
 *
 * - `leaseDurationSeconds` (default 15): how long a non-leader waits before taking over a lease
 *   whose holder stopped renewing;
 * - `renewDeadlineSeconds` (default 10): how long the leader keeps acting without a successful
 *   renewal — past it, it stops every write *before* the lease can pass to another replica
 *   (renewDeadline < leaseDuration is required);
 * - `retryPeriodSeconds` (default 2): the time between attempts, with up to 20 % jitter.
 *
 * Expiry is judged as client-go judges it: a candidate takes the lease over only when
 * `leaseDurationSeconds` has passed on its own monotonic clock since it last saw the Lease record
 * change; the holder's `renewTime` is never compared with this replica's clock, so a replica whose
 * wall clock runs ahead cannot take a live lease, and a dead leader whose clock ran ahead is
 * replaced after one lease duration. The renew deadline is measured on the monotonic clock too.
 *
 * While leading, {@link LeaderElector.signal} is an AbortSignal of this term of leadership: it
 * aborts when leadership is lost, so in-flight Azure and Kubernetes calls stop, and
 * {@link LeaderElector.canWrite} turns false at the renew deadline even if a renewal call hangs.
 */
import type { AcquireResult, LeaseObservation, LeaseTimes } from "../kube/lease.js";
import { realScheduler, type Scheduler } from "./clock.js";
import type { Logger } from "./logging.js";

/** The Lease operations the elector needs (LeaseClient fits). */
export interface LeaseOps {
  tryAcquireOrRenew(
    name: string,
    namespace: string,
    identity: string,
    leaseDurationSeconds: number,
    times: LeaseTimes,
    observed: LeaseObservation | undefined,
  ): Promise<AcquireResult>;
  release(name: string, namespace: string, identity: string, now: Date): Promise<boolean>;
}

export interface LeaderElectionSettings {
  leaseName: string;
  leaseNamespace: string;
  /** This replica's identity (the pod name). */
  identity: string;
  leaseDurationSeconds?: number;
  renewDeadlineSeconds?: number;
  retryPeriodSeconds?: number;
}

export interface LeaderCallbacks {
  /** Called when this replica becomes leader; `signal` aborts when the term ends. */
  onStartedLeading(signal: AbortSignal): void;
  /** Called when the term ends (lost, deadline passed, or stopped). */
  onStoppedLeading(reason: string): void;
}

export class LeaderElector {
  readonly #ops: LeaseOps;
  readonly #settings: Required<LeaderElectionSettings>;
  readonly #callbacks: LeaderCallbacks;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #monotonic: () => number;
  readonly #scheduler: Scheduler;
  readonly #random: () => number;
  #term: AbortController | undefined;
  /** Monotonic ms when the last successful renewal was sent. */
  #lastRenewMs = 0;
  #observed: LeaseObservation | undefined;
  #timer: unknown;
  #deadlineTimer: unknown;
  #stopped = false;
  #running: Promise<void> = Promise.resolve();

  constructor(options: {
    ops: LeaseOps;
    settings: LeaderElectionSettings;
    callbacks: LeaderCallbacks;
    log: Logger;
    /** Wall clock, ms since the epoch: only written into the Lease (default `Date.now`). */
    now?: () => number;
    /** Monotonic clock, ms: lease expiry and the renew deadline (default `performance.now`). */
    monotonic?: () => number;
    scheduler?: Scheduler;
    random?: () => number;
  }) {
    const s = options.settings;
    this.#settings = {
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
      ...s,
    };
    if (this.#settings.renewDeadlineSeconds >= this.#settings.leaseDurationSeconds) {
      throw new RangeError("renewDeadlineSeconds must be shorter than leaseDurationSeconds");
    }
    this.#ops = options.ops;
    this.#callbacks = options.callbacks;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#monotonic = options.monotonic ?? (() => performance.now());
    this.#scheduler = options.scheduler ?? realScheduler;
    this.#random = options.random ?? Math.random;
  }

  /** True while this replica leads. */
  get isLeader(): boolean {
    return this.#term !== undefined;
  }

  /** The current term's signal (an already-aborted one when not leading). */
  get signal(): AbortSignal {
    return this.#term?.signal ?? AbortSignal.abort(new Error("not the leader"));
  }

  /** True while leading and the last renewal is within the renew deadline. */
  canWrite(): boolean {
    return (
      this.#term !== undefined &&
      this.#monotonic() - this.#lastRenewMs < this.#settings.renewDeadlineSeconds * 1000
    );
  }

  /** Starts the election loop. */
  start(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  /** Stops the loop; if leading, ends the term and releases the lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#scheduler.clearTimeout(this.#timer);
    await this.#running;
    const wasLeader = this.isLeader;
    this.#endTerm("stopping");
    if (wasLeader) {
      try {
        await this.#ops.release(
          this.#settings.leaseName,
          this.#settings.leaseNamespace,
          this.#settings.identity,
          new Date(this.#now()),
        );
      } catch (err) {
        this.#log.warn({ err }, "could not release the leader lease");
      }
    }
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = this.#scheduler.setTimeout(() => {
      this.#running = this.#attempt();
    }, delayMs);
  }

  async #attempt(): Promise<void> {
    const s = this.#settings;
    const started = this.#monotonic();
    try {
      const result = await this.#ops.tryAcquireOrRenew(
        s.leaseName,
        s.leaseNamespace,
        s.identity,
        s.leaseDurationSeconds,
        { wall: new Date(this.#now()), monotonicMs: started },
        this.#observed,
      );
      this.#observed = result.observed;
      if (result.acquired) {
        // A renewal only counts from when it was sent: the lease was valid from then on.
        this.#lastRenewMs = started;
        this.#armDeadline();
        if (!this.#term && !this.#stopped) {
          this.#term = new AbortController();
          this.#log.info({ identity: s.identity, outcome: result.outcome }, "became leader");
          this.#callbacks.onStartedLeading(this.#term.signal);
        }
      } else if (this.#term) {
        this.#endTerm(`lease ${result.outcome}`);
      }
    } catch (err) {
      this.#log.warn({ err: String(err) }, "leader election attempt failed");
      if (this.#term && !this.canWrite()) this.#endTerm("renew deadline passed");
    }
    const jitter = 1 + 0.2 * this.#random();
    this.#schedule(s.retryPeriodSeconds * 1000 * jitter);
  }

  /** Ends the term at the renew deadline unless a renewal moves it. */
  #armDeadline(): void {
    this.#scheduler.clearTimeout(this.#deadlineTimer);
    const remaining = this.#lastRenewMs + this.#settings.renewDeadlineSeconds * 1000 - this.#monotonic();
    this.#deadlineTimer = this.#scheduler.setTimeout(
      () => {
        if (this.#term && !this.canWrite()) this.#endTerm("renew deadline passed");
      },
      Math.max(0, remaining),
    );
  }

  #endTerm(reason: string): void {
    this.#scheduler.clearTimeout(this.#deadlineTimer);
    const term = this.#term;
    if (!term) return;
    this.#term = undefined;
    term.abort(new Error(`leadership lost: ${reason}`));
    this.#log.warn({ reason }, "stopped leading");
    this.#callbacks.onStoppedLeading(reason);
  }
}
