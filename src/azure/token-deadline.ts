/**
 * A deadline on token acquisition. `@azure/identity` sends its token requests (Microsoft Entra
 * ID, the managed identity endpoint, the workload identity exchange) without a timeout of its
 * own, and the SDK clients' request timeout covers the HTTP call to Azure only, not the token
 * before it: an identity endpoint that accepts the connection and never answers would hold every
 * Azure call — and the poll cycle — for ever.
 *
 * {@link withTokenDeadline} wraps any `TokenCredential`: each `getToken` gets an `abortSignal`
 * that fires after `timeoutMs` (or with the caller's own signal), and its promise settles by then
 * even when the credential ignores the signal (MSAL's network calls do). A request past its
 * deadline fails with `@azure/identity`'s `CredentialUnavailableError`, which the adapters type
 * as an authentication failure with code `CredentialUnavailable` (`classify-error.ts`); the SDK's
 * token cycler then starts afresh on the next call.
 */
import { CredentialUnavailableError, type GetTokenOptions, type TokenCredential } from "@azure/identity";

/** Default deadline of one token request: 10 seconds. */
export const DEFAULT_TOKEN_TIMEOUT_MS = 10_000;

/** How one token request ended, for the operator's metrics. */
export interface TokenRequestObservation {
  outcome: "success" | "failure" | "timeout";
  /** HTTP status of the identity endpoint's refusal, when the credential reports one; 0 otherwise. */
  status: number;
  /** From the request to its end, seconds. */
  seconds: number;
}

/** Options of {@link withTokenDeadline}. */
export interface TokenDeadlineOptions {
  /** Deadline of one `getToken`, ms (default {@link DEFAULT_TOKEN_TIMEOUT_MS}). */
  timeoutMs?: number;
  /** Told how every token request ended. Must not throw (errors are ignored). */
  observe?: (o: TokenRequestObservation) => void;
  /** Monotonic clock for the latency, ms (default `performance.now`). */
  clock?: () => number;
}

/** The HTTP status an identity error carries (`statusCode` of identity's AuthenticationError), or 0. */
function statusOf(err: unknown): number {
  if (typeof err !== "object" || err === null) return 0;
  const s = (err as { statusCode?: unknown }).statusCode;
  return typeof s === "number" && s > 0 ? s : 0;
}

/** `signal` as a DOM `AbortSignal` (the SDKs type theirs as `AbortSignalLike`). */
function asAbortSignal(signal: NonNullable<GetTokenOptions["abortSignal"]>): AbortSignal {
  if (signal instanceof AbortSignal) return signal;
  const controller = new AbortController();
  if (signal.aborted) controller.abort();
  else signal.addEventListener("abort", () => controller.abort(), { once: true });
  return controller.signal;
}

/**
 * Resolves or rejects with `promise`, or rejects with `signal.reason` once `signal` aborts,
 * whichever comes first. A `promise` left behind has its rejection handled.
 */
function settleBy<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/**
 * `credential` with a deadline on every `getToken`.
 * @throws (from `getToken`) `CredentialUnavailableError` when the deadline passes first; the
 *   caller's abort reason when its own signal fires; the credential's own errors unchanged.
 */
export function withTokenDeadline(
  credential: TokenCredential,
  options: TokenDeadlineOptions = {},
): TokenCredential {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TOKEN_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new RangeError(`token timeout must be > 0 ms, got ${timeoutMs}`);
  const clock = options.clock ?? (() => performance.now());
  const report = (o: TokenRequestObservation) => {
    try {
      options.observe?.(o);
    } catch {
      // An observer's failure never fails the request.
    }
  };
  return {
    async getToken(scopes: string | string[], getTokenOptions: GetTokenOptions = {}) {
      const caller = getTokenOptions.abortSignal ? asAbortSignal(getTokenOptions.abortSignal) : undefined;
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = caller ? AbortSignal.any([caller, deadline]) : deadline;
      const started = clock();
      const seconds = () => (clock() - started) / 1000;
      try {
        const token = await settleBy(
          credential.getToken(scopes, { ...getTokenOptions, abortSignal: signal }),
          signal,
        );
        report({ outcome: "success", status: 200, seconds: seconds() });
        return token;
      } catch (err) {
        if (deadline.aborted && !caller?.aborted) {
          report({ outcome: "timeout", status: 0, seconds: seconds() });
          throw new CredentialUnavailableError(
            `no token within ${timeoutMs / 1000} s: the identity endpoint did not answer in time`,
          );
        }
        report({ outcome: "failure", status: statusOf(err), seconds: seconds() });
        throw err;
      }
    },
  };
}
