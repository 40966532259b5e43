/**
 * The status each policy's last pass computed, kept in memory between passes, so the next pass
 * reads its history (recommendations, ingestion bucket totals, anticipation's bookkeeping, the last
 * sample) as computed even when the status write was skipped (`status-need.ts`).
 *
 * The carried status is used while the policy as read is one this replica's last pass knew: its
 * `metadata.resourceVersion` is the one the last write was sent over (the watch cache has not yet
 * delivered that write) or the one it produced, or its status deep-equals the one left stored.
 * When anyone else wrote the status, the stored one is read, as after a restart.
 * Without the resourceVersions a pass reading a cache one write behind would start from the status
 * before the last pass — an unapplied update's count and backoff clock a step back, so the Azure
 * call it had just made would be repeated. Forgotten with the policy and when this replica stops
 * leading (a new term reads every policy's status from the API server).
 */
import { isDeepStrictEqual } from "node:util";
import type { CapacityPolicyStatus } from "../api/index.js";

type Status = Partial<CapacityPolicyStatus>;

/** What a pass starts from. */
export interface StartingStatus {
  /** The status to read history from (the carried one, or the stored one). */
  status: Status | undefined;
  /** When this replica last wrote the policy's status, ms since the epoch (absent: not this term). */
  lastWrittenMs?: number;
}

interface Remembered {
  /** The status as stored after the last pass (as written, or as read when the write was skipped). */
  stored: Status | undefined;
  /** `metadata.resourceVersion`s at which the carried status holds (the write's base and result). */
  resourceVersions: readonly string[];
  /** The status as the last pass computed it. */
  carried: Status;
  lastWrittenMs?: number;
}

export class StatusMemory {
  readonly #byKey = new Map<string, Remembered>();

  /**
   * The status the pass of `key` starts from, given the policy's status and
   * `metadata.resourceVersion` as read now.
   */
  start(key: string, stored: Status | undefined, resourceVersion?: string): StartingStatus {
    const r = this.#byKey.get(key);
    if (!r) return { status: stored };
    const known = resourceVersion !== undefined && r.resourceVersions.includes(resourceVersion);
    if (!known && !isDeepStrictEqual(r.stored ?? {}, stored ?? {})) {
      this.#byKey.delete(key);
      return { status: stored };
    }
    return {
      status: r.carried,
      ...(r.lastWrittenMs !== undefined ? { lastWrittenMs: r.lastWrittenMs } : {}),
    };
  }

  /**
   * Records a pass: the status stored after it, the one it computed, when it was last written,
   * and the `metadata.resourceVersion`s at which the computed one holds (the one the write was
   * sent over, or read when it was skipped; the one the write produced).
   */
  remember(
    key: string,
    stored: Status | undefined,
    carried: Status,
    lastWrittenMs: number | undefined,
    resourceVersions: readonly (string | undefined)[] = [],
  ): void {
    this.#byKey.set(key, {
      stored,
      resourceVersions: resourceVersions.filter((v): v is string => v !== undefined),
      carried,
      ...(lastWrittenMs !== undefined ? { lastWrittenMs } : {}),
    });
  }

  forget(key: string): void {
    this.#byKey.delete(key);
  }

  clear(): void {
    this.#byKey.clear();
  }

  /** Policies remembered (diagnostics, tests). */
  get size(): number {
    return this.#byKey.size;
  }
}
