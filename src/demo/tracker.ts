/**
 * The instance's capacity over the demo's virtual time, for the timeline: the ARM updates the
 * emulator ran (with their exact completion times) and any other change seen while sampling.
 */
import type { SkuName } from "../capacity/index.js";
import type { RunningEmulator } from "../emulator/emulator.js";
import type { OperationRecord } from "../emulator/state.js";
import { MINUTE_MS } from "./trace-window.js";

/** Tracks the instance's capacity over time: ARM updates (exact times) and anything else seen. */
export class CapacityTracker {
  readonly #ops = new Map<string, OperationRecord>();
  readonly #seen: { fromMs: number; sku: SkuName; units: number }[] = [];
  #last: { sku: SkuName; units: number };

  constructor(
    readonly initial: { fromMs: number; sku: SkuName; units: number },
    private readonly emulator: RunningEmulator,
    private readonly resourceId: string,
  ) {
    this.#last = { sku: initial.sku, units: initial.units };
  }

  /** Looks at the instance now. */
  observe(): void {
    const view = this.emulator.control.instance(this.resourceId);
    if (!view) return;
    if (view.operation && view.operation.kind === "update") this.#ops.set(view.operation.id, view.operation);
    if (view.sku !== this.#last.sku || view.units !== this.#last.units) {
      this.#last = { sku: view.sku, units: view.units };
      const op = [...this.#ops.values()].find(
        (o) => o.outcome === "applied" && o.target.sku === view.sku && o.target.units === view.units,
      );
      // Seen without its operation (a scale faster than the sampling): from now.
      if (!op) this.#seen.push({ fromMs: this.emulator.clock.nowMs(), sku: view.sku, units: view.units });
    }
  }

  /** The capacity in force in the minute starting at `ms` (as the emulator computes buckets). */
  at(ms: number): { sku: SkuName; units: number } {
    const changes = [
      this.initial,
      ...[...this.#ops.values()]
        .filter((o) => o.outcome === "applied")
        .map((o) => ({ fromMs: o.completesMs, sku: o.target.sku, units: o.target.units })),
      ...this.#seen,
    ].sort((a, b) => a.fromMs - b.fromMs);
    let found = this.initial as { sku: SkuName; units: number };
    for (const c of changes) if (c.fromMs <= ms) found = c;
    return found;
  }

  /** An ARM update ran during `[ms, ms + 1 min)`. */
  updating(ms: number): boolean {
    for (const o of this.#ops.values()) if (o.startedMs < ms + MINUTE_MS && o.completesMs > ms) return true;
    return false;
  }
}
