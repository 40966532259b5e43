/**
 * The scale duration: how long an update of this instance takes, send → completion observed —
 * the median of its recent completed updates (status.scaleEvents), else the last measurement kept
 * in status.anticipation, else a default (`spec.anticipation.scaleDuration`, 5 min). Anticipation
 * reads it for its lead time; the scale-up rate policies for how many of their periods one
 * scale spans while catching up (catch-up.ts). Pure.
 */
import { median } from "simple-statistics";
import { MAX_SCALE_DURATION_SECONDS } from "../api/constants.js";
import type { AnticipationStatus } from "../api/index.js";
import type { ScaleEvent } from "./history.js";
import { measuredScaleSeconds } from "./overdue.js";

/** The scale duration until one is measured, without `spec.anticipation.scaleDuration`, seconds. */
export const DEFAULT_SCALE_DURATION_SECONDS = 300;

/** Recent completed updates the scale duration is measured on. */
const MEASURED_UPDATES = 5;

/**
 * The scale duration: measured from recent completed updates, else the previous measurement, else
 * the default. Both are read back from `status` (scale events, `status.anticipation`): a measured
 * duration is at most {@link MAX_SCALE_DURATION_SECONDS} (2 h, the bound of
 * `spec.anticipation.scaleDuration`), and a stored one that is not a finite number > 0 is ignored.
 */
export function scaleDuration(
  events: readonly ScaleEvent[],
  previous: AnticipationStatus | undefined,
  defaultSeconds: number,
): { seconds: number; source: "Measured" | "Default" } {
  const measured = measuredScaleSeconds(events.slice(-MEASURED_UPDATES));
  if (measured.length > 0) {
    return {
      seconds: Math.min(Math.round(median(measured)), MAX_SCALE_DURATION_SECONDS),
      source: "Measured",
    };
  }
  const stored = previous?.scaleDurationSeconds;
  if (
    previous?.scaleDurationSource === "Measured" &&
    typeof stored === "number" &&
    Number.isFinite(stored) &&
    stored > 0
  ) {
    return { seconds: Math.min(stored, MAX_SCALE_DURATION_SECONDS), source: "Measured" };
  }
  return { seconds: defaultSeconds, source: "Default" };
}
