/**
 * One call to Azure through the throttle gate of its scope: refused while the scope is gated, its
 * failure typed (`classify-error.ts`), and a throttled answer gates the scope for the time Azure
 * asked for.
 */
import { classifyAzureError } from "./classify-error.js";
import type { ResolvedConnection } from "./connection.js";
import { type AzureApiError, ThrottledError } from "./errors.js";
import type { AzureScope } from "./scope.js";
import type { ThrottleGate } from "./throttle.js";

/** What a gated call is, and through which gate and connection it goes. */
export interface GatedCall {
  gate: ThrottleGate;
  conn: ResolvedConnection;
  /** Adapter operation, e.g. `instances.get`. */
  operation: string;
  scope: AzureScope;
  /**
   * The caller's abort signal: its abort is rethrown as is, not typed — unless it fired for a
   * deadline (its reason a `TimeoutError`, as from `AbortSignal.timeout`): then the call timed out.
   */
  signal: AbortSignal | undefined;
}

/** True when `signal` aborted for a reason other than a deadline (the caller gave up). */
function callerGaveUp(signal: AbortSignal | undefined): boolean {
  if (!signal?.aborted) return false;
  const reason: unknown = signal.reason;
  return !(
    typeof reason === "object" &&
    reason !== null &&
    "name" in reason &&
    reason.name === "TimeoutError"
  );
}

/**
 * The typed error of a failed call, or `undefined` when `err` is not an Azure failure (the caller
 * rethrows it unchanged). A throttled call gates its scope until Azure's `notBefore`.
 */
export function failedCall(err: unknown, call: GatedCall): AzureApiError | undefined {
  const typed = classifyAzureError(err, {
    operation: call.operation,
    now: call.conn.now(),
    scope: call.scope,
    retryAfter: call.conn.retryAfter,
    callerAborted: callerGaveUp(call.signal),
  });
  if (typed instanceof ThrottledError) call.gate.block(call.scope, typed.notBefore);
  return typed;
}

/**
 * Runs `fn` as a gated call.
 * @throws ThrottledError (`fromGate`) while the scope is gated; the typed error of a failure;
 *   what is not an Azure failure, unchanged.
 */
export async function gatedCall<T>(call: GatedCall, fn: () => Promise<T>): Promise<T> {
  call.gate.check(call.scope, call.operation);
  try {
    return await fn();
  } catch (err) {
    throw failedCall(err, call) ?? err;
  }
}
