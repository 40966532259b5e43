/**
 * A list-then-watch that keeps going: it lists, watches from the list's resourceVersion, re-watches
 * from the last seen resourceVersion when a watch ends, lists again on 410 Gone ("Expired"),
 * restarts a watch that has been silent too long, and backs off exponentially (with jitter) on
 * errors. Exactly one watch request is open at a time: a request is aborted before the next one
 * starts. It keeps a store of the objects and emits added/updated/deleted events and a `synced`
 * event after every list.
 *
 * client-node's own informer stops on non-410 errors, so this wraps `Watch` directly.
 *
 * About quiet collections: the API server sends a bookmark only when its resourceVersion has moved
 * past the watcher's (other objects changed), so a watch of a quiet collection receives nothing at
 * all, and client-node's `Watch` aborts a request that received no data for 30 s. The watch
 * therefore asks the server to end each request after `serverTimeoutSeconds` (< 30 s) and resumes
 * at once from the last resourceVersion; a clean end counts as contact with the server. The
 * silence watchdog (`silenceTimeoutMs`, longer than that) catches requests that hang.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Watch } from "@kubernetes/client-node";
import type { CapacityPolicy } from "../api/index.js";
import { type BackoffOptions, backoffDelayMs, DEFAULT_BACKOFF } from "./backoff.js";
import type { KubeClients } from "./client.js";
import {
  GoneError,
  type KubeError,
  kubeErrorFromStatus,
  parseStatus,
  toKubeError,
  UnavailableError,
} from "./errors.js";
import { PolicyClient, policiesPath } from "./policies.js";

export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string } | undefined;
}

export interface ListResult<T> {
  readonly items: readonly T[];
  readonly resourceVersion: string;
}

export type WatchEvent<T> =
  | { readonly type: "added"; readonly object: T }
  | { readonly type: "updated"; readonly object: T; readonly previous: T }
  | { readonly type: "deleted"; readonly object: T }
  /** A list completed and the store matches it. `initial` on the first one. */
  | { readonly type: "synced"; readonly initial: boolean; readonly count: number };

export type WatchPhase = "list" | "watch" | "handler";

export interface WatchHealth {
  /** The loop runs (false after stop). */
  readonly running: boolean;
  /** A watch request is open and streaming. */
  readonly connected: boolean;
  /** The first list completed. */
  readonly synced: boolean;
  /** Last object event or bookmark received, or last completed list. */
  readonly lastEventTime: Date | undefined;
  /**
   * Last sign of a working server: an event, a bookmark, a list, a watch request accepted or
   * ended cleanly by the server. For readiness: quiet collections have no events for long.
   */
  readonly lastContactTime: Date | undefined;
  readonly lastSyncTime: Date | undefined;
  /** The resourceVersion the next watch starts from. */
  readonly resourceVersion: string | undefined;
  /** Watch requests started, lists done, restarts of silent watches, bookmarks seen. */
  readonly watches: number;
  readonly lists: number;
  readonly silentRestarts: number;
  readonly bookmarks: number;
  /** Failures since the last success (drives the backoff). */
  readonly consecutiveFailures: number;
  readonly lastError: Error | undefined;
}

/** The part of client-node's Watch this uses (a test can pass its own). */
export type WatchStarter = Pick<Watch, "watch">;

export interface ResilientWatchOptions<T extends KubeObject> {
  /** Lists the collection (all pages) and returns its resourceVersion. */
  readonly list: () => Promise<ListResult<T>>;
  /** The collection's URL path, e.g. /apis/<group>/<version>/<plural>. */
  readonly path: string;
  readonly watch: WatchStarter;
  /** Receives events in order. An exception it throws is reported (phase "handler") and ignored. */
  readonly onEvent: (event: WatchEvent<T>) => void;
  /** Errors as they happen, with the delay before the next attempt. For logs and metrics. */
  readonly onError?: (error: Error, phase: WatchPhase, retryInMs: number) => void;
  /** Stops the watch: the open request is aborted and `done` resolves. */
  readonly signal?: AbortSignal;
  /**
   * Restart a watch request that received nothing (no event, no bookmark) for this long, ms.
   * Default 60 000; keep it above `serverTimeoutSeconds`.
   */
  readonly silenceTimeoutMs?: number;
  /** Ask the server to end each watch request after this many seconds. Default 25 (see above). */
  readonly serverTimeoutSeconds?: number;
  readonly backoff?: Partial<BackoffOptions>;
  /** Clock for health and the silence check. Default `() => new Date()`. */
  readonly now?: () => Date;
  /** Randomness for the jitter. Default Math.random. */
  readonly random?: () => number;
}

export interface ResilientWatch<T extends KubeObject> {
  /** Resolves after the first list has been applied (never rejects; stays pending if stopped first). */
  readonly synced: Promise<void>;
  /** Resolves when the loop has stopped and no request is open. */
  readonly done: Promise<void>;
  health(): WatchHealth;
  /** The current object with this key (`namespace/name`, or `name` when cluster-scoped). */
  get(key: string): T | undefined;
  /** All current objects. */
  list(): T[];
  /** Same as aborting `signal`; resolves with `done`. */
  stop(): Promise<void>;
}

/**
 * Readiness from a health snapshot: the first list is done, the loop runs, and the server was in
 * contact within `maxQuietMs` (pick it above the server timeout, e.g. 2 × serverTimeoutSeconds).
 */
export function isWatchReady(health: WatchHealth, now: Date, maxQuietMs: number): boolean {
  if (!health.running || !health.synced || health.lastContactTime === undefined) return false;
  return now.getTime() - health.lastContactTime.getTime() <= maxQuietMs;
}

/** The store key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(object: KubeObject): string {
  const name = object.metadata?.name ?? "";
  const namespace = object.metadata?.namespace;
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`;
}

/** A watch request the server ends sooner than this, with nothing received, counts as a failure. */
const MIN_HEALTHY_WATCH_MS = 1000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

type Outcome =
  /** The server ended the request (e.g. its timeout). */
  | { readonly kind: "closed"; readonly progressed: boolean; readonly durationMs: number }
  /** 410 Gone: the resourceVersion is too old. */
  | { readonly kind: "expired"; readonly error: KubeError; readonly progressed: boolean }
  | { readonly kind: "failed"; readonly error: KubeError }
  | { readonly kind: "silent"; readonly afterMs: number }
  | { readonly kind: "stopped" };

/** One watch request: its outcome, settled once by `finish`; `progressed` once it got an event or bookmark. */
interface WatchAttempt {
  readonly outcome: Promise<Outcome>;
  finished: boolean;
  progressed: boolean;
  finish(result: Outcome): void;
}

class WatchLoop<T extends KubeObject> implements ResilientWatch<T> {
  readonly synced: Promise<void>;
  readonly done: Promise<void>;

  private readonly controller = new AbortController();
  private readonly store = new Map<string, T>();
  private readonly now: () => Date;
  private readonly random: () => number;
  private readonly backoff: BackoffOptions;
  private readonly silenceMs: number;
  private readonly serverTimeoutSeconds: number;
  private resolveSynced!: () => void;

  private running = true;
  private connected = false;
  private hasSynced = false;
  private lastEventTime: Date | undefined;
  private lastSyncTime: Date | undefined;
  private lastContactTime: Date | undefined;
  /** Start of the current request or its last event/bookmark: what the silence watchdog measures. */
  private lastActivityMs = 0;
  private resourceVersion: string | undefined;
  private watches = 0;
  private lists = 0;
  private silentRestarts = 0;
  private bookmarks = 0;
  private failures = 0;
  private lastError: Error | undefined;

  constructor(private readonly options: ResilientWatchOptions<T>) {
    this.now = options.now ?? (() => new Date());
    this.random = options.random ?? Math.random;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.silenceMs = options.silenceTimeoutMs ?? 60_000;
    this.serverTimeoutSeconds = options.serverTimeoutSeconds ?? 25;
    this.synced = new Promise<void>((resolve) => {
      this.resolveSynced = resolve;
    });
    const outer = options.signal;
    if (outer !== undefined) {
      if (outer.aborted) this.controller.abort();
      else outer.addEventListener("abort", () => this.controller.abort(), { once: true });
    }
    this.done = this.run();
  }

  health(): WatchHealth {
    return {
      running: this.running,
      connected: this.connected,
      synced: this.hasSynced,
      lastEventTime: this.lastEventTime,
      lastSyncTime: this.lastSyncTime,
      lastContactTime: this.lastContactTime,
      resourceVersion: this.resourceVersion,
      watches: this.watches,
      lists: this.lists,
      silentRestarts: this.silentRestarts,
      bookmarks: this.bookmarks,
      consecutiveFailures: this.failures,
      lastError: this.lastError,
    };
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return [...this.store.values()];
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.done;
  }

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  private async run(): Promise<void> {
    let needList = true;
    try {
      while (!this.signal.aborted) {
        if (needList) {
          try {
            await this.relist();
            needList = false;
            this.failures = 0;
          } catch (err) {
            if (this.signal.aborted) break;
            await this.fail(toKubeError(err, `list ${this.options.path}`), "list");
            continue;
          }
        }
        const outcome = await this.watchOnce();
        switch (outcome.kind) {
          case "stopped":
            return;
          case "closed":
            // A request the server ends at once, again and again, must not spin.
            if (outcome.progressed || outcome.durationMs >= MIN_HEALTHY_WATCH_MS) {
              this.failures = 0;
            } else {
              await this.fail(new UnavailableError("the server ended the watch at once"), "watch");
            }
            break;
          case "silent":
            this.silentRestarts++;
            this.report(
              new UnavailableError(`nothing received for ${outcome.afterMs} ms; restarting the watch`),
              "watch",
              0,
            );
            break;
          case "expired":
            needList = true;
            if (outcome.progressed) {
              this.failures = 0;
              this.report(outcome.error, "watch", 0);
            } else {
              await this.fail(outcome.error, "watch");
            }
            break;
          case "failed":
            // Unreachable or busy server: resume from the last resourceVersion. Anything else
            // (RBAC, a missing CRD, ...) may have lost events: list again.
            if (!(outcome.error instanceof UnavailableError)) needList = true;
            await this.fail(outcome.error, "watch");
            break;
        }
      }
    } finally {
      this.running = false;
      this.connected = false;
    }
  }

  private report(error: Error, phase: WatchPhase, retryInMs: number): void {
    if (phase !== "handler") this.lastError = error;
    try {
      this.options.onError?.(error, phase, retryInMs);
    } catch {
      // A failing error callback must not stop the watch.
    }
  }

  private async fail(error: KubeError, phase: WatchPhase): Promise<void> {
    this.failures++;
    const delay = backoffDelayMs(this.failures, this.backoff, this.random);
    this.report(error, phase, delay);
    await sleep(delay, undefined, { signal: this.signal }).catch(() => {}); // stopped: the loop ends
  }

  private emit(event: WatchEvent<T>): void {
    try {
      this.options.onEvent(event);
    } catch (err) {
      this.report(err instanceof Error ? err : new Error(String(err)), "handler", 0);
    }
  }

  /** Records contact with the server; `event` for events, bookmarks and lists. */
  private markActivity(event: boolean): void {
    const now = this.now();
    this.lastActivityMs = now.getTime();
    this.lastContactTime = now;
    if (event) this.lastEventTime = now;
  }

  private async relist(): Promise<void> {
    const result = await this.options.list();
    if (this.signal.aborted) return;
    this.lists++;
    const seen = new Set<string>();
    for (const item of result.items) {
      const key = objectKey(item);
      seen.add(key);
      const previous = this.store.get(key);
      this.store.set(key, item);
      if (previous === undefined) this.emit({ type: "added", object: item });
      else if (previous.metadata?.resourceVersion !== item.metadata?.resourceVersion) {
        this.emit({ type: "updated", object: item, previous });
      }
    }
    const gone = [...this.store.entries()].filter(([key]) => !seen.has(key));
    for (const [key, object] of gone) {
      this.store.delete(key);
      this.emit({ type: "deleted", object });
    }
    this.resourceVersion = result.resourceVersion;
    this.markActivity(true);
    this.lastSyncTime = this.lastEventTime;
    const initial = !this.hasSynced;
    this.hasSynced = true;
    this.emit({ type: "synced", initial, count: this.store.size });
    if (initial) this.resolveSynced();
  }

  private apply(phase: "ADDED" | "MODIFIED" | "DELETED", object: T): void {
    const key = objectKey(object);
    const previous = this.store.get(key);
    if (phase === "DELETED") {
      this.store.delete(key);
      this.emit({ type: "deleted", object });
      return;
    }
    this.store.set(key, object);
    if (previous === undefined) this.emit({ type: "added", object });
    else this.emit({ type: "updated", object, previous });
  }

  /** A new attempt's outcome, settled once; settling it marks the watch disconnected. */
  private newAttempt(): WatchAttempt {
    let resolveOutcome!: (outcome: Outcome) => void;
    const outcome = new Promise<Outcome>((resolve) => {
      resolveOutcome = resolve;
    });
    const attempt: WatchAttempt = {
      outcome,
      finished: false,
      progressed: false,
      finish: (result) => {
        if (attempt.finished) return;
        attempt.finished = true;
        this.connected = false;
        resolveOutcome(result);
      },
    };
    return attempt;
  }

  /** Ends `attempt` as `silent` once nothing arrived for the silence timeout (checked every ¼ of it, 10 ms–1 s). */
  private startWatchdog(attempt: WatchAttempt): ReturnType<typeof setInterval> {
    const tickMs = Math.max(10, Math.min(1000, Math.floor(this.silenceMs / 4)));
    return setInterval(() => {
      const silentMs = this.now().getTime() - this.lastActivityMs;
      if (silentMs > this.silenceMs) attempt.finish({ kind: "silent", afterMs: silentMs });
    }, tickMs);
  }

  /** Keeps a non-empty resourceVersion of an event or bookmark, to resume from. */
  private advanceTo(resourceVersion: string | undefined): void {
    if (resourceVersion !== undefined && resourceVersion !== "") this.resourceVersion = resourceVersion;
  }

  /** One event of the watch stream: applied to the store, a bookmark, or an ERROR that ends the attempt. */
  private onWatchEvent(attempt: WatchAttempt, operation: string, phase: string, object: unknown): void {
    if (attempt.finished) return;
    switch (phase) {
      case "ADDED":
      case "MODIFIED":
      case "DELETED": {
        const obj = object as T;
        this.advanceTo(obj.metadata?.resourceVersion);
        attempt.progressed = true;
        this.markActivity(true);
        this.apply(phase, obj);
        break;
      }
      case "BOOKMARK":
        this.advanceTo((object as KubeObject | undefined)?.metadata?.resourceVersion);
        attempt.progressed = true;
        this.bookmarks++;
        this.markActivity(true);
        break;
      case "ERROR": {
        const status = parseStatus(object);
        const error = kubeErrorFromStatus(status?.code ?? 500, status, { operation });
        attempt.finish(
          error instanceof GoneError
            ? { kind: "expired", error, progressed: attempt.progressed }
            : { kind: "failed", error },
        );
        break;
      }
      default:
        break;
    }
  }

  /** The end of the watch stream: closed by the server, client-node's inactivity timeout, or an error. */
  private onWatchDone(attempt: WatchAttempt, operation: string, startedMs: number, err: unknown): void {
    if (err === null || err === undefined) {
      this.markActivity(false);
      attempt.finish({
        kind: "closed",
        progressed: attempt.progressed,
        durationMs: this.now().getTime() - startedMs,
      });
    } else if (isRecord(err) && err["name"] === "TimeoutError") {
      // client-node's own inactivity timeout: the same as our silence watchdog.
      attempt.finish({ kind: "silent", afterMs: this.now().getTime() - this.lastActivityMs });
    } else {
      attempt.finish({ kind: "failed", error: toKubeError(err, operation) });
    }
  }

  private async watchOnce(): Promise<Outcome> {
    const operation = `watch ${this.options.path}`;
    const attempt = this.newAttempt();
    const onAbort = (): void => attempt.finish({ kind: "stopped" });
    this.signal.addEventListener("abort", onAbort, { once: true });
    if (this.signal.aborted) attempt.finish({ kind: "stopped" });
    const startedMs = this.now().getTime();
    this.lastActivityMs = startedMs;
    const watchdog = this.startWatchdog(attempt);

    this.watches++;
    const request = attempt.finished
      ? Promise.resolve(undefined)
      : this.options.watch.watch(
          this.options.path,
          {
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: this.serverTimeoutSeconds,
          },
          (phase: string, object: unknown) => this.onWatchEvent(attempt, operation, phase, object),
          (err: unknown) => this.onWatchDone(attempt, operation, startedMs, err),
        );
    request.then(
      () => {
        if (!attempt.finished) {
          this.connected = true;
          this.markActivity(false);
        }
      },
      (err: unknown) => attempt.finish({ kind: "failed", error: toKubeError(err, operation) }),
    );

    const result = await attempt.outcome;
    clearInterval(watchdog);
    this.signal.removeEventListener("abort", onAbort);
    // One watch at a time: abort this request before the loop may start the next one. (The
    // controller is only available once the response headers arrived or the request failed.)
    const controller = await request.catch(() => undefined);
    controller?.abort();
    return result;
  }
}

/** Starts a resilient list-then-watch of any collection. */
export function startResilientWatch<T extends KubeObject>(
  options: ResilientWatchOptions<T>,
): ResilientWatch<T> {
  return new WatchLoop(options);
}

export type PolicyWatchOptions = Omit<ResilientWatchOptions<CapacityPolicy>, "list" | "path" | "watch"> & {
  /** Watch one namespace; default all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: string;
};

/** Starts a resilient watch of CapacityPolicies (all namespaces unless `namespace` is set). */
export function watchPolicies(
  clients: KubeClients,
  options: PolicyWatchOptions,
): ResilientWatch<CapacityPolicy> {
  const policies = new PolicyClient(clients);
  const { namespace, labelSelector, ...rest } = options;
  const path = policiesPath(namespace);
  return startResilientWatch<CapacityPolicy>({
    ...rest,
    path,
    watch:
      labelSelector === undefined
        ? clients.watch
        : {
            watch: (p, query, callback, done) =>
              clients.watch.watch(p, { ...query, labelSelector }, callback, done),
          },
    list: () => policies.list(namespace, labelSelector === undefined ? {} : { labelSelector }),
  });
}
