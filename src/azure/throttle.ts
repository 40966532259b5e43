/**
 * The throttle gate: after Azure throttles a scope (subscription + region), no call for that
 * scope leaves the process before the time Azure asked for; calls for other scopes go on.
 *
 * The gate keeps one "not before" time per scope. The clock is injected.
 */
import { ThrottledError } from "./errors.js";
import { type AzureScope, describeScope, scopeKey } from "./scope.js";

/** One gated scope, for metrics and status. */
export interface GatedScope {
  scope: AzureScope;
  notBefore: Date;
}

export class ThrottleGate {
  readonly #now: () => Date;
  readonly #until = new Map<string, GatedScope>();

  /** @param now the clock (wall clock in production, a virtual clock in demos and tests). */
  constructor(now: () => Date) {
    this.#now = now;
  }

  /**
   * Throws {@link ThrottledError} (`fromGate: true`) when `scope` is still gated; otherwise
   * returns. Expired entries are dropped.
   */
  check(scope: AzureScope, operation: string): void {
    const key = scopeKey(scope);
    const entry = this.#until.get(key);
    if (!entry) return;
    const now = this.#now();
    const wait = entry.notBefore.getTime() - now.getTime();
    if (wait <= 0) {
      this.#until.delete(key);
      return;
    }
    throw new ThrottledError(
      `${operation} (${describeScope(scope)}): scope throttled by Azure, not called again before ${entry.notBefore.toISOString()}`,
      { operation, scope, retryAfterMs: wait, notBefore: entry.notBefore, fromGate: true, code: "Throttled" },
    );
  }

  /** Gates `scope` until `notBefore` (keeps the later time when already gated). */
  block(scope: AzureScope, notBefore: Date): void {
    const key = scopeKey(scope);
    const prev = this.#until.get(key);
    if (prev && prev.notBefore.getTime() >= notBefore.getTime()) return;
    this.#until.set(key, { scope, notBefore });
  }

  /** When `scope` may be called again; `undefined` when it is not gated. */
  notBefore(scope: AzureScope): Date | undefined {
    const entry = this.#until.get(scopeKey(scope));
    if (!entry || entry.notBefore.getTime() <= this.#now().getTime()) return undefined;
    return entry.notBefore;
  }

  /** Every scope gated now. */
  snapshot(): GatedScope[] {
    const now = this.#now().getTime();
    return [...this.#until.values()].filter((e) => e.notBefore.getTime() > now);
  }
}
