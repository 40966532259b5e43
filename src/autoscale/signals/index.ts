/**
 * The signals, in the order they are evaluated and reported. A new signal is a new file here
 * implementing {@link Signal} and one entry of {@link SIGNALS}; its name in `SIGNAL_NAMES`
 * (src/api/constants.ts: the schema's rule that one signal is set, validation and `simulate`'s
 * knobs read that list) and its field under `spec.metrics` (src/api/schema.ts); then
 * `npm run gen:crds` writes the CRD and docs/capacitypolicy.md. A signal that reads a metric the
 * operator does not fetch yet also needs it in the samples (autoscale/samples.ts), in
 * src/azure/metric-definitions.ts and in the emulator.
 */
import { connectionsSignal } from "./connections.js";
import { serverLoadSignal } from "./server-load.js";
import { trafficSignal } from "./traffic.js";
import type { Signal } from "./types.js";

/** Every signal, in evaluation order (reports, needs, reasons and demand follow it). */
export const SIGNALS: readonly Signal[] = [serverLoadSignal, connectionsSignal, trafficSignal];
