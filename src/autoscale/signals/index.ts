/**
 * The signals, in the order they are evaluated and reported: a new signal is a new file here
 * implementing {@link Signal} and one entry of {@link SIGNALS}.
 */
import { connectionsSignal } from "./connections.js";
import { serverLoadSignal } from "./server-load.js";
import { trafficSignal } from "./traffic.js";
import type { Signal } from "./types.js";

/** Every signal, in evaluation order (reports, needs, reasons and demand follow it). */
export const SIGNALS: readonly Signal[] = [serverLoadSignal, connectionsSignal, trafficSignal];
