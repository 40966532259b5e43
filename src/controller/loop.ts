/**
 * The operator's loop: one record per policy (`loop-plan.ts`), a tick that starts a poll cycle
 * (`poll-cycle.ts`) for the policies due, a keyed work queue, and the workers that run the passes.
 *
 * - Policies come from a {@link PolicySource} (the watches, or a test's fake), and their changes
 *   through {@link PollLoop.policyEvent}: a new or changed policy (generation or annotations) is
 *   due at once; a deleted one is forgotten, and so are the native autoscale settings cached for
 *   its target (also for the old target of a retargeted one).
 * - Ticks: every `tickMs` (on the clock's scheduler) the loop plans (`planTick`) and starts one
 *   cycle for every due policy. A cycle runs in the background: once it has handed a policy over
 *   and waits only for a slow batch (or after {@link CYCLE_GATHER_MS}), the next tick starts a
 *   cycle for the other due policies; before that they wait for it, so policies due together
 *   share their Azure calls. A policy with a leading signal is queued once its own read is done.
 * - Passes: one entry per policy in the queue, never two passes of one policy at once; `workers`
 *   passes run concurrently. After a pass the policy is due on the interval's grid, from when
 *   Azure was read (`schedule.ts`); a failed pass is retried after a per-policy exponential
 *   backoff (5 s doubling up to 5 min).
 * - Ownership: each policy's claims are kept from its events (`ownership.ts`); a policy whose
 *   verdict changes is due at once — or right after the pass it is in.
 * - Leadership: only while leading ({@link PollLoop.startLeading}) does a tick start cycles; a new
 *   term polls every policy at once.
 */
import type { CapacityPolicy } from "../api/index.js";
import type { LeadingObservation } from "../autoscale/leading.js";
import { objectKey, type WatchEvent } from "../kube/watch.js";
import type { OperatorClock } from "./clock.js";
import { CycleWatch, DEFAULT_POLL_CYCLE_TIMEOUT_MS, DEFAULT_READINESS_MARGIN_MS } from "./cycle-watch.js";
import type { CycleReading } from "./fetch.js";
import type { Logger } from "./logging.js";
import { type LoopHold, type LoopRecord, planTick, type TickPlan } from "./loop-plan.js";
import type { OperatorMetrics } from "./metrics.js";
import { ClaimIndex, policyClaims } from "./ownership.js";
import { type AzureAnswer, type CycleReader, type LeadingSource, runPollCycle } from "./poll-cycle.js";
import { WorkQueue } from "./queue.js";
import type { PassResult } from "./reconcile.js";
import { nextPollTime } from "./schedule.js";
import type { SpecCache } from "./spec-cache.js";
import type { TenancyMap } from "./tenancy.js";

/** The policies the loop works on, as known now (the watches, or a test's fake). */
export interface PolicySource {
  /** Every policy known now. */
  list(): readonly CapacityPolicy[];
  /** The policy of `key` (`namespace/name`) as known now; undefined once deleted. */
  get(key: string): CapacityPolicy | undefined;
}

/** What one finished pass reports (for tests and the demo's live view). */
export interface PassReport {
  key: string;
  policy: CapacityPolicy;
  result?: PassResult;
  error?: unknown;
}

/** One reconcile pass of `policy` with its cycle's `reading`; `signal` ends with the term. */
export type RunPass = (
  policy: CapacityPolicy,
  reading: CycleReading | undefined,
  signal: AbortSignal,
) => Promise<PassResult>;

/** What the loop uses. */
export interface LoopDeps {
  policies: PolicySource;
  reader: CycleReader;
  leading: LeadingSource;
  pass: RunPass;
  clock: OperatorClock;
  /** Monotonic clock of deadlines and readiness, real ms. */
  monotonicNow: () => number;
  metrics: Pick<OperatorMetrics, "queueDepth" | "pollCycleTimeouts" | "passErrors" | "passDuration">;
  log: Logger;
  /** Aborted when the operator stops: ends every term, and aborts the passes' calls. */
  stop: AbortController;
  /** A deleted policy is forgotten: drop what else is kept for it (status memory, gauges). */
  onForget?: (key: string, policy: CapacityPolicy) => void;
  /** Keeps the policies' validated specs (shared with the passes). */
  specs?: SpecCache;
}

/** The loop's settings (see `OperatorSettings`). */
export interface LoopSettings {
  tenancy?: TenancyMap | undefined;
  workers?: number | undefined;
  tickMs?: number | undefined;
  pollCycleTimeoutMs?: number | undefined;
  readinessMarginMs?: number | undefined;
}

/**
 * How long a new poll cycle waits for a running one that has handed no policy over yet, real ms:
 * policies due meanwhile then share the next cycle's Azure calls; past it, a slow cycle holds no
 * other policy.
 */
export const CYCLE_GATHER_MS = 500;

/** The phases of a policy whose cycle or pass is under way. */
const BUSY_PHASES: ReadonlySet<LoopRecord["phase"]> = new Set(["reading", "leading", "queued", "passing"]);

export class PollLoop {
  readonly #deps: LoopDeps;
  readonly #settings: LoopSettings;
  readonly #records = new Map<string, LoopRecord<CycleReading>>();
  readonly #queue = new WorkQueue({ backoff: { initialMs: 5_000, maxMs: 300_000 } });
  /** The policies' claims and the duplicates among them (ownership.ts). */
  readonly #claims = new ClaimIndex();
  readonly #listeners = new Set<(report: PassReport) => void>();
  readonly #cycleWatch: CycleWatch;
  readonly #cycleTimeoutMs: number;
  /** Cycles still running (stop() waits for them). */
  readonly #cycles = new Set<Promise<void>>();
  /** When each running cycle that has handed no policy over yet started (monotonic ms). */
  readonly #cyclesStarting = new Map<object, number>();
  #acting = false;
  #term: AbortSignal;
  #stopping = false;
  #tickTimer: unknown;
  #workers: Promise<void>[] = [];
  #lastTick: TickPlan | undefined;
  #lastAzureOk: number | undefined;
  #lastAzureError: string | undefined;

  constructor(deps: LoopDeps, settings: LoopSettings = {}) {
    this.#deps = deps;
    this.#settings = settings;
    this.#term = deps.stop.signal;
    this.#cycleTimeoutMs = settings.pollCycleTimeoutMs ?? DEFAULT_POLL_CYCLE_TIMEOUT_MS;
    this.#cycleWatch = new CycleWatch({
      deadlineMs: this.#cycleTimeoutMs,
      marginMs: settings.readinessMarginMs ?? DEFAULT_READINESS_MARGIN_MS,
      now: deps.monotonicNow,
    });
  }

  /** Called after every pass. Returns an unsubscribe function. */
  onPass(listener: (report: PassReport) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** True while the loop acts (its replica leads). */
  get acting(): boolean {
    return this.#acting;
  }

  /** The last tick's plan: what was due and why each other policy was skipped (diagnostics, tests). */
  get lastTick(): TickPlan | undefined {
    return this.#lastTick;
  }

  /** Where policy `key` is in the loop (a copy), or undefined when the loop keeps nothing for it. */
  record(key: string): Readonly<LoopRecord> | undefined {
    const r = this.#records.get(key);
    return r ? { ...r } : undefined;
  }

  /** When Azure last answered a poll cycle (ms since the epoch), and the last failure since. */
  get azure(): { lastOk: number | undefined; lastError: string | undefined } {
    return { lastOk: this.#lastAzureOk, lastError: this.#lastAzureError };
  }

  /** Readiness of the poll cycles: none runs longer than its deadline plus the margin. */
  pollCycleCheck(): { ok: boolean; reason?: string } {
    return this.#cycleWatch.check();
  }

  /** Starts the workers and the ticks (the first one at once). */
  start(): void {
    this.#workers = Array.from({ length: this.#settings.workers ?? 16 }, () => this.#work());
    this.#scheduleTick(0);
  }

  /**
   * Stops: no new ticks or passes, waits for running passes (their calls are aborted after
   * `graceMs` through `deps.stop`), then for running cycles.
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    this.#deps.clock.scheduler.clearTimeout(this.#tickTimer);
    this.#queue.shutDown();
    const grace = setTimeout(() => this.#deps.stop.abort(new Error("operator stopping")), graceMs);
    await Promise.allSettled(this.#workers);
    clearTimeout(grace);
    this.#deps.stop.abort(new Error("operator stopped"));
    await Promise.allSettled([...this.#cycles]);
    this.#acting = false;
  }

  /** A term begins (`signal` ends it): every policy is polled now, rebuilt from its status. */
  startLeading(signal: AbortSignal): void {
    this.#term = AbortSignal.any([signal, this.#deps.stop.signal]);
    this.#acting = true;
    const now = this.#deps.clock.now();
    for (const p of this.#deps.policies.list()) this.#record(objectKey(p), now).dueAt = now;
  }

  /** The term ended: no new cycles, and the readings queued for passes are dropped. */
  stopLeading(): void {
    this.#acting = false;
    for (const r of this.#records.values()) r.reading = undefined;
  }

  /** A change of the policies, as a watch reports it. */
  policyEvent(e: WatchEvent<CapacityPolicy>): void {
    if (e.type === "synced") return;
    const k = objectKey(e.object);
    if (e.type === "deleted") {
      this.#forget(k, e.object);
      return;
    }
    this.#claims.set(policyClaims(e.object, this.#settings.tenancy, this.#deps.specs));
    const target = e.object.spec?.target?.resourceId;
    const previousTarget = e.type === "updated" ? e.previous.spec?.target?.resourceId : undefined;
    if (previousTarget && previousTarget !== target) this.#deps.reader.forget(previousTarget);
    const changed =
      e.type === "added" ||
      e.object.metadata.generation !== e.previous.metadata.generation ||
      JSON.stringify(e.object.metadata.annotations ?? {}) !==
        JSON.stringify(e.previous.metadata.annotations ?? {});
    const now = this.#deps.clock.now();
    if (changed) this.#record(k, now).dueAt = now;
  }

  /** Runs one tick now (the scheduler runs them every `tickMs`); returns its plan. */
  tick(): TickPlan {
    this.#deps.metrics.queueDepth.set(this.#queue.depth);
    this.#refreshOwnership();
    const now = this.#deps.clock.now();
    const policies = this.#deps.policies.list();
    const records = policies.map((p) => this.#record(objectKey(p), now));
    const plan = planTick(records, now, this.#hold());
    this.#lastTick = plan;
    if (plan.due.length === 0) return plan;
    const dueKeys = new Set(plan.due);
    const due = policies.filter((p) => dueKeys.has(objectKey(p)));
    for (const r of records) {
      if (!dueKeys.has(r.key)) continue;
      r.repoll = false;
      r.phase = "reading";
    }
    const cycle = this.#cycle(due, now);
    this.#cycles.add(cycle);
    void cycle.finally(() => this.#cycles.delete(cycle));
    return plan;
  }

  /**
   * True when nothing runs: no poll cycle, no policy reading, waiting on its leading signal,
   * queued or passing (a test's stepped clock moves on only then).
   */
  get idle(): boolean {
    if (this.#cycles.size > 0) return false;
    for (const r of this.#records.values()) if (BUSY_PHASES.has(r.phase)) return false;
    return true;
  }

  /** Resolves once every running cycle has ended (tests). */
  async cyclesSettled(): Promise<void> {
    await Promise.allSettled([...this.#cycles]);
  }

  /** The record of `k`, made (due at `now`) when there is none. */
  #record(k: string, now: number): LoopRecord<CycleReading> {
    let r = this.#records.get(k);
    if (!r) {
      r = { key: k, phase: "waiting", dueAt: now, repoll: false };
      this.#records.set(k, r);
    }
    return r;
  }

  /** Why no policy is due now, if none may be: not leading, stopping, or a young cycle gathering. */
  #hold(): LoopHold | undefined {
    if (!this.#acting || this.#stopping) return "notLeading";
    const now = this.#deps.monotonicNow();
    for (const at of this.#cyclesStarting.values()) if (now - at < CYCLE_GATHER_MS) return "gathering";
    return undefined;
  }

  #scheduleTick(delayMs: number): void {
    if (this.#stopping || this.#deps.stop.signal.aborted) return;
    this.#tickTimer = this.#deps.clock.scheduler.setTimeout(() => {
      try {
        this.tick();
      } finally {
        this.#scheduleTick(this.#settings.tickMs ?? 1000);
      }
    }, delayMs);
  }

  /**
   * Rebuilds the ownership verdicts after events changed some policy's claims: a policy whose
   * verdict changed is due now, and again right after a pass of it already queued or running
   * (that pass used the old verdict).
   */
  #refreshOwnership(): void {
    const changed = this.#claims.refresh();
    if (changed.length === 0) return;
    const now = this.#deps.clock.now();
    for (const k of changed) {
      const r = this.#record(k, now);
      r.dueAt = now;
      r.repoll = true;
    }
  }

  /** One poll cycle for `due` (see poll-cycle.ts), its hand-overs moving the policies on. */
  async #cycle(due: readonly CapacityPolicy[], now: number): Promise<void> {
    const token = {};
    this.#cyclesStarting.set(token, this.#deps.monotonicNow());
    await runPollCycle(
      due,
      now,
      this.#term,
      {
        reader: this.#deps.reader,
        leading: this.#deps.leading,
        tenancy: this.#settings.tenancy,
        duplicateOf: (k) => this.#claims.duplicateOf(k),
        instanceOwner: (id) => this.#claims.instanceOwner(id),
        timeoutMs: this.#cycleTimeoutMs,
        cycleWatch: this.#cycleWatch,
        metrics: this.#deps.metrics,
        log: this.#deps.log,
      },
      {
        hand: (p, reading, leading) => this.#hand(p, reading, leading, now),
        started: () => this.#cyclesStarting.delete(token),
        azure: (answer) => this.#azureAnswered(answer),
      },
    );
  }

  #azureAnswered(answer: AzureAnswer): void {
    if (answer.ok) {
      this.#lastAzureOk = answer.at;
      this.#lastAzureError = undefined;
    } else this.#lastAzureError = answer.error;
  }

  /** The cycle of `now` is done with `policy`: due an interval later, and queued (after its leading read). */
  #hand(
    policy: CapacityPolicy,
    reading: CycleReading | undefined,
    leading: Promise<LeadingObservation> | undefined,
    now: number,
  ): void {
    const r = this.#records.get(objectKey(policy));
    if (!r) return; // deleted meanwhile
    if (!this.#acting || this.#stopping) {
      r.phase = "waiting";
      return;
    }
    r.dueAt = now + (policy.spec?.pollIntervalSeconds ?? 30) * 1000;
    if (!leading) {
      this.#enqueue(r, reading);
      return;
    }
    r.phase = "leading";
    void leading.then((o) => {
      if (!this.#acting || this.#stopping) {
        if (r.phase === "leading") r.phase = "waiting";
        return;
      }
      if (reading) reading.leading = o;
      this.#enqueue(r, reading);
    });
  }

  /** Hands a policy's reading of this cycle to its pass. */
  #enqueue(r: LoopRecord<CycleReading>, reading: CycleReading | undefined): void {
    if (this.#records.get(r.key) !== r) return; // deleted meanwhile
    if (reading) r.reading = reading;
    if (r.phase !== "passing") r.phase = "queued";
    this.#queue.add(r.key);
  }

  async #work(): Promise<void> {
    for (;;) {
      const k = await this.#queue.get();
      if (k === undefined) return;
      const policy = this.#deps.policies.get(k);
      const r = this.#records.get(k);
      const reading = r?.reading;
      if (r) r.reading = undefined;
      if (!policy) {
        this.#queue.done(k);
        continue;
      }
      await this.#pass(k, policy, reading);
    }
  }

  /** One pass of `policy`, then its next poll time (or backoff), its report, and the queue told. */
  async #pass(k: string, policy: CapacityPolicy, reading: CycleReading | undefined): Promise<void> {
    const now = () => this.#deps.clock.now();
    this.#record(k, now()).phase = "passing";
    const started = performance.now();
    const passStartedAt = now();
    try {
      const result = await this.#deps.pass(policy, reading, this.#term);
      this.#queue.forget(k);
      if (result.outcome === "deleted" || this.#deps.policies.get(k) === undefined) {
        // Deleted while the pass ran: what the pass left for it goes with it.
        this.#forget(k, policy);
      } else {
        const r = this.#record(k, now());
        r.phase = "waiting";
        // On the interval's grid, from when Azure was read: policies stay in one poll cycle.
        r.dueAt = nextPollTime(reading?.fetchedAt ?? passStartedAt, result.requeueAfterMs);
        // Its ownership changed after its reading was taken: due again with the new verdict.
        if (r.repoll) {
          r.repoll = false;
          r.dueAt = now();
        }
      }
      this.#emit({ key: k, policy, result });
    } catch (err) {
      const delay = this.#queue.nextBackoff(k);
      const r = this.#records.get(k);
      if (r) {
        r.phase = "backingOff";
        r.dueAt = now() + delay;
      }
      this.#deps.metrics.passErrors.inc({ kind: err instanceof Error ? err.name : "Error" });
      this.#deps.log.warn(
        {
          namespace: policy.metadata.namespace,
          policy: policy.metadata.name,
          err: String(err),
          retryInMs: delay,
        },
        "reconcile pass failed",
      );
      this.#emit({ key: k, policy, error: err });
    } finally {
      this.#deps.metrics.passDuration.observe((performance.now() - started) / 1000);
      this.#queue.done(k);
    }
  }

  /** Drops everything kept for a deleted policy: its record, queue entry, claims, cached reads. */
  #forget(k: string, policy: CapacityPolicy): void {
    const target = policy.spec?.target?.resourceId;
    this.#records.delete(k);
    this.#queue.remove(k);
    this.#deps.leading.forget(k);
    this.#claims.delete(k);
    this.#deps.specs?.forget(policy);
    if (target) this.#deps.reader.forget(target);
    this.#deps.onForget?.(k, policy);
  }

  #emit(report: PassReport): void {
    for (const l of this.#listeners) {
      try {
        l(report);
      } catch {
        // A listener's failure does not stop the loop.
      }
    }
  }
}
