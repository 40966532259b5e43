/**
 * The log of requests the emulator served (the last 2,000) and their counters, for tests, the
 * demo and `GET /_emulator/requests`.
 */
import type { CallCounters, RequestRecord } from "./control.js";

const EMPTY: CallCounters = { total: 0, armReads: 0, armWrites: 0, getBatch: 0, faulted: 0, rateLimited: 0 };

export class RequestLog {
  readonly #limit: number;
  #records: RequestRecord[] = [];
  #counters: CallCounters = { ...EMPTY };

  constructor(limit = 2000) {
    this.#limit = limit;
  }

  add(record: RequestRecord, extra: { rateLimited?: boolean } = {}): void {
    this.#records.push(record);
    if (this.#records.length > this.#limit) this.#records.splice(0, this.#records.length - this.#limit);
    const c = this.#counters;
    c.total++;
    if (record.kind === "armRead") c.armReads++;
    if (record.kind === "armWrite") c.armWrites++;
    if (record.kind === "getBatch") c.getBatch++;
    if (record.fault) c.faulted++;
    if (extra.rateLimited) c.rateLimited++;
  }

  records(): RequestRecord[] {
    return this.#records.map((r) => ({ ...r }));
  }

  counters(): CallCounters {
    return { ...this.#counters };
  }

  clear(): void {
    this.#records = [];
    this.#counters = { ...EMPTY };
  }
}
