/**
 * The status each policy's last pass computed, kept in memory between passes, so the next pass
 * reads its history (recommendations, ingestion bucket totals, anticipation's bookkeeping, the last
 * sample) as computed even when the status write was skipped (`status-need.ts`).
 *
 * The carried status is used only while the stored status is still the one this replica last
 * wrote or read (deep-equal): when anyone else wrote it, the stored one is read, as after a
 * restart. Forgotten with the policy and when this replica stops leading (a new term reads every
 * policy's status from the API server).
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
  /** The status as the last pass computed it. */
  carried: Status;
  lastWrittenMs?: number;
}

export class StatusMemory {
  readonly #byKey = new Map<string, Remembered>();

  /** The status the pass of `key` starts from, given the status stored now. */
  start(key: string, stored: Status | undefined): StartingStatus {
    const r = this.#byKey.get(key);
    if (!r) return { status: stored };
    if (!isDeepStrictEqual(r.stored ?? {}, stored ?? {})) {
      this.#byKey.delete(key);
      return { status: stored };
    }
    return {
      status: r.carried,
      ...(r.lastWrittenMs !== undefined ? { lastWrittenMs: r.lastWrittenMs } : {}),
    };
  }

  /** Records a pass: the status stored after it, the one it computed, when it was last written. */
  remember(
    key: string,
    stored: Status | undefined,
    carried: Status,
    lastWrittenMs: number | undefined,
  ): void {
    this.#byKey.set(key, { stored, carried, ...(lastWrittenMs !== undefined ? { lastWrittenMs } : {}) });
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
