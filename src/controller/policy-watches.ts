/**
 * The policies the operator works on, from the API server: one resilient watch per watched
 * namespace (or one cluster-wide), keeping the current policies in memory — the loop's
 * {@link PolicySource} — and the readiness check of those watches.
 */
import type { CapacityPolicy } from "../api/index.js";
import type { KubeClients } from "../kube/client.js";
import { isWatchReady, type ResilientWatch, type WatchEvent, watchPolicies } from "../kube/watch.js";
import { type Logger, scrubSecrets } from "./logging.js";
import type { PolicySource } from "./loop.js";

/** How long a watch may go without contact with the API server and stay ready, ms. */
const WATCH_QUIET_MS = 90_000;

/** The watches of the policies of `namespaces` (all namespaces when empty). */
export class PolicyWatches implements PolicySource {
  readonly #watches: ResilientWatch<CapacityPolicy>[] = [];

  /** Starts the watches; `onEvent` receives each one's events in order. */
  start(
    kube: KubeClients,
    namespaces: readonly string[] | undefined,
    options: { signal: AbortSignal; log: Logger; onEvent: (e: WatchEvent<CapacityPolicy>) => void },
  ): void {
    const each = namespaces?.length ? namespaces : [undefined];
    for (const namespace of each) {
      this.#watches.push(
        watchPolicies(kube, {
          ...(namespace !== undefined ? { namespace } : {}),
          signal: options.signal,
          onEvent: options.onEvent,
          onError: (err, phase, retryInMs) =>
            options.log.warn({ err: err.message, phase, retryInMs }, "policy watch error"),
        }),
      );
    }
  }

  /** Resolves once every watch has listed the policies. */
  async synced(): Promise<void> {
    await Promise.all(this.#watches.map((w) => w.synced));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#watches.map((w) => w.stop()));
  }

  list(): CapacityPolicy[] {
    return this.#watches.flatMap((w) => w.list());
  }

  get(key: string): CapacityPolicy | undefined {
    return this.#watches.map((w) => w.get(key)).find((p) => p !== undefined);
  }

  /**
   * Ready when every watch has listed, was in contact with the API server within 90 s, and is not
   * failing now.
   */
  check(now: Date): { ok: boolean; reason?: string } {
    if (this.#watches.length === 0) return { ok: false, reason: "policy watch not started" };
    const bad = this.#watches.find((w) => {
      const health = w.health();
      const failing = health.consecutiveFailures > 0 && !health.connected;
      return failing || !isWatchReady(health, now, WATCH_QUIET_MS);
    });
    return bad
      ? {
          ok: false,
          reason: `policy watch not healthy: ${scrubSecrets(bad.health().lastError?.message ?? "no contact")}`,
        }
      : { ok: true };
  }
}
