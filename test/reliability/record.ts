/**
 * Fault figures for `docs/reliability.md`: a fault test calls {@link recordFault} with what it
 * injected, the safe outcome it asserted and the figures it measured (ARM writes counted from the
 * emulator's request log, scale-ins on unknown data, seconds to recover, conditions seen).
 *
 * Rows are appended as JSON lines to the file named by `RELIABILITY_RECORD` (nothing is written
 * when it is unset), so one run of the suite — `RELIABILITY_RECORD=… npm test` — gives one set of
 * figures; `npm run reliability:report` renders them into the matrix in `docs/reliability.md`.
 */
import { appendFileSync } from "node:fs";

/** One measured fault. */
export interface FaultRow {
  /** Stable key, e.g. "arm-429-retry-after-date"; a later row with the same key replaces an earlier one. */
  id: string;
  /** Where the fault lives: "ARM", "Azure Monitor", "token", "kube-apiserver", "Prometheus", "operator", "spec". */
  endpoint: string;
  /** The fault injected, in a few words. */
  fault: string;
  /** The safe outcome the test asserts. */
  outcome: string;
  /** The test file (from the project root) and test name that shows it. */
  test: string;
  /** Measured figures: name → value (units in the name, e.g. "recoverySeconds", "armWrites"). */
  figures: Record<string, number | string | boolean>;
}

/** Appends one row to `$RELIABILITY_RECORD` (a no-op when unset). */
export function recordFault(row: FaultRow): void {
  const file = process.env["RELIABILITY_RECORD"];
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ ...row, at: new Date().toISOString() })}\n`);
}
