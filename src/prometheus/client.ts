/**
 * Instant queries against Prometheus's HTTP API (`/api/v1/query`), for the app servers' leading
 * signal: one PromQL expression → one finite number, or a typed {@link PrometheusError}.
 *
 * Built on undici's `fetch` with one undici `Agent` per CA bundle (`transport.ts` says why not the
 * platform `fetch`) and `p-limit` for the per-server bound. Not `prometheus-query` (the npm
 * client): it takes no per-call `AbortSignal` and no CA or agent, pulls in axios, and rejects with
 * plain objects instead of errors.
 *
 * Every call:
 * - waits behind at most `maxConcurrentPerServer` (default 16) calls to the same server (key: the
 *   redacted origin and path prefix);
 * - has a deadline, `server.timeoutMs` from the call (queue time counts), combined with the
 *   caller's `signal` (`AbortSignal.timeout` + `AbortSignal.any`); the call returns or throws by
 *   then even if the server never answers — a hanging server holds a caller at most `timeoutMs`
 *   plus timer latency. The server is told the deadline left when the request leaves
 *   (`timeout=<ms>ms`) so it stops evaluating too;
 * - sends `query`, `time` (when given: Unix seconds with ms decimals) and `timeout` as a form
 *   body (POST, the default) or in the URL (GET), with `Authorization` when the server has a
 *   token (or URL userinfo); redirects are not followed;
 * - reads at most `maxResponseBytes` (default 1 MiB) of the answer;
 * - is reported once to `observe`, with the outcome and its duration.
 *
 * @throws PrometheusError of the kinds in `errors.ts`; the caller's abort reason, unchanged, when
 *   the caller's signal ends the call; TypeError / RangeError, before anything is sent or
 *   observed, for a server or arguments that cannot be used (`resolveServer`).
 */
import pLimit, { type LimitFunction } from "p-limit";
import { httpError, transportError } from "./classify-error.js";
import { PrometheusError } from "./errors.js";
import type { PrometheusOutcome, PrometheusQueryObserver } from "./observe.js";
import { type InstantSample, parseEnvelope, queryErrorOf, sampleOf } from "./response.js";
import { type PrometheusServer, type ResolvedServer, resolveServer } from "./server.js";
import { Dispatchers, readCapped, send } from "./transport.js";

/** Options of a {@link PrometheusClient}. */
export interface PrometheusClientOptions {
  /** Calls in flight to one server at most; the rest wait (their deadline running). Default 4. */
  maxConcurrentPerServer?: number;
  /** Told of every finished call. */
  observe?: PrometheusQueryObserver;
  /** Epoch ms: durations and `Retry-After` dates (default `Date.now`). Deadlines use real timers. */
  now?: () => number;
  /** Longest answer read, bytes (default 1 MiB); longer → `BadResponse`. */
  maxResponseBytes?: number;
}

/** Options of one {@link PrometheusClient.query}. */
export interface QueryOptions {
  /** Evaluation time, epoch ms; omitted: the server's now. */
  timeMs?: number;
  /** The caller's cancellation; its abort reason is rethrown as is. */
  signal?: AbortSignal;
}

/**
 * Calls to one server at a time by default: below Prometheus's own `--query.max-concurrency`
 * (default 20), which queues the rest, so that other users of the server keep some room.
 */
const DEFAULT_CONCURRENCY = 16;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** `work`, or a rejection with `signal.reason` as soon as `signal` aborts, whichever is first. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) {
      onAbort();
    } else {
      signal.addEventListener("abort", onAbort, { once: true });
    }
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The `Timeout` of a call that spent `queuedMs` of its deadline waiting for a slot. */
function timeoutError(target: ResolvedServer, queuedMs: number): PrometheusError {
  const queued =
    queuedMs >= 1 ? ` (${Math.round(queuedMs)} ms of it waiting behind other queries to this server)` : "";
  return new PrometheusError("Timeout", `no answer within ${target.timeoutMs} ms${queued}`, {
    server: target.name,
  });
}

/** The client; one per process is enough. {@link close} it at shutdown. */
export class PrometheusClient {
  readonly #concurrency: number;
  readonly #observe: PrometheusQueryObserver | undefined;
  readonly #now: () => number;
  readonly #maxBytes: number;
  readonly #limits = new Map<string, LimitFunction>();
  readonly #dispatchers = new Dispatchers();

  constructor(options: PrometheusClientOptions = {}) {
    const concurrency = options.maxConcurrentPerServer ?? DEFAULT_CONCURRENCY;
    if (!(Number.isInteger(concurrency) && concurrency >= 1)) {
      throw new RangeError("maxConcurrentPerServer must be an integer >= 1");
    }
    this.#concurrency = concurrency;
    this.#observe = options.observe;
    this.#now = options.now ?? Date.now;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /**
   * Evaluates `promql` at `options.timeMs` (or the server's now) and returns its one finite value.
   * @throws see the module documentation.
   */
  async query(server: PrometheusServer, promql: string, options: QueryOptions = {}): Promise<InstantSample> {
    const target = resolveServer(server);
    if (promql.trim() === "") throw new TypeError("the PromQL query is empty");
    if (options.timeMs !== undefined && !Number.isFinite(options.timeMs)) {
      throw new RangeError("timeMs must be a finite epoch ms");
    }
    const started = this.#now();
    const callStart = performance.now();
    const deadline = AbortSignal.timeout(target.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    let outcome: PrometheusOutcome = "ok";
    let queuedMs: number | undefined;
    let waited = false;
    try {
      const limit = this.#limitFor(target.name);
      // Waiting for a slot: every slot taken (the scheduling of a free one is not waiting).
      waited = limit.activeCount + limit.pendingCount >= limit.concurrency;
      const task = limit(() => {
        queuedMs = performance.now() - callStart;
        signal.throwIfAborted();
        return this.#call(target, promql, options.timeMs, signal, target.timeoutMs - queuedMs);
      });
      const sample = await untilAborted(task, signal);
      return sample;
    } catch (err) {
      if (err instanceof PrometheusError) {
        outcome = err.kind;
        throw err;
      }
      if (options.signal?.aborted) {
        outcome = "aborted";
        throw options.signal.reason;
      }
      const typed = deadline.aborted
        ? timeoutError(target, waited ? (queuedMs ?? performance.now() - callStart) : 0)
        : transportError(err, target.name);
      outcome = typed.kind;
      throw typed;
    } finally {
      this.#report(target.name, outcome, (this.#now() - started) / 1000);
    }
  }

  /** Drops every connection; calls in flight or queued fail (`Unreachable`). */
  async close(): Promise<void> {
    for (const limit of this.#limits.values()) limit.clearQueue();
    this.#limits.clear();
    await this.#dispatchers.close();
  }

  /**
   * Calls running and waiting per server (redacted name), for diagnostics. A server keeps its
   * limiter for the client's life: servers are few (one per configured signal).
   */
  pending(): Record<string, { active: number; queued: number }> {
    const out: Record<string, { active: number; queued: number }> = {};
    for (const [name, limit] of this.#limits)
      out[name] = { active: limit.activeCount, queued: limit.pendingCount };
    return out;
  }

  async #call(
    target: ResolvedServer,
    promql: string,
    timeMs: number | undefined,
    signal: AbortSignal,
    remainingMs: number,
  ): Promise<InstantSample> {
    const params = new URLSearchParams({ query: promql });
    if (timeMs !== undefined) params.set("time", (timeMs / 1000).toFixed(3));
    params.set("timeout", `${Math.max(1, Math.floor(remainingMs))}ms`);
    const headers: Record<string, string> = { accept: "application/json" };
    if (target.authorization !== undefined) headers["authorization"] = target.authorization;
    const post = target.method === "POST";
    if (post) headers["content-type"] = "application/x-www-form-urlencoded";
    const response = await send({
      url: post ? target.queryUrl : `${target.queryUrl}?${params}`,
      method: target.method,
      headers,
      ...(post ? { body: params.toString() } : {}),
      signal,
      dispatcher: this.#dispatchers.get(target.caPem),
    });
    const body = await readCapped(response, this.#maxBytes);
    if (response.status < 200 || response.status > 299) {
      throw httpError(
        {
          status: response.status,
          body,
          contentType: response.headers.get("content-type"),
          retryAfter: response.headers.get("retry-after"),
        },
        target.name,
        new Date(this.#now()),
      );
    }
    if (body === undefined) {
      throw new PrometheusError(
        "BadResponse",
        `answer larger than ${this.#maxBytes} bytes (a query returning many series? wrap it in sum(...))`,
        { server: target.name, status: response.status },
      );
    }
    const envelope = parseEnvelope(body);
    if (!envelope) {
      const type = response.headers.get("content-type")?.split(";")[0];
      throw new PrometheusError(
        "BadResponse",
        `not a Prometheus API answer (HTTP ${response.status}${type ? `, ${type}` : ""}, not JSON with a status)`,
        { server: target.name, status: response.status },
      );
    }
    if (envelope.status === "error") {
      // Prometheus answers errors with a non-2xx status; a 2xx one is a proxy's or a clone's.
      throw (
        queryErrorOf(envelope, target.name, response.status) ??
        new PrometheusError(
          "BadResponse",
          `HTTP ${response.status} with status "error" (${envelope.errorType ?? "no errorType"})`,
          { server: target.name, status: response.status },
        )
      );
    }
    return sampleOf(envelope, target.name);
  }

  /** The limiter of `server`, made on first use. */
  #limitFor(server: string): LimitFunction {
    let limit = this.#limits.get(server);
    if (!limit) {
      limit = pLimit({ concurrency: this.#concurrency, rejectOnClear: true });
      this.#limits.set(server, limit);
    }
    return limit;
  }

  #report(server: string, outcome: PrometheusOutcome, seconds: number): void {
    if (!this.#observe) return;
    try {
      this.#observe({ server, outcome, seconds: Math.max(0, seconds) });
    } catch {
      // An observer's failure never fails the query.
    }
  }
}
