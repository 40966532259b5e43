/**
 * The schedules now (schedules.ts): the active floors and whether a scale-in window is open, with
 * a `ScheduleInvalid` reason for each entry whose cron or time zone cannot be read.
 */
import type { CapacityPolicySpec } from "../../api/index.js";
import { type Reason, reason } from "../reasons.js";
import { evaluateSchedules, type ScheduleState } from "../schedules.js";

/** The schedules of `spec` at `nowMs` (ms since the epoch) and the reasons for unreadable ones. */
export function schedulesNow(
  spec: Pick<CapacityPolicySpec, "schedules" | "scaleInWindows">,
  nowMs: number,
): { schedules: ScheduleState; reasons: Reason[] } {
  const schedules = evaluateSchedules(spec.schedules, spec.scaleInWindows, nowMs);
  const reasons = schedules.invalid.map((bad) =>
    reason("ScheduleInvalid", `${bad.name}: ${bad.error} — ignored`, { name: bad.name }),
  );
  return { schedules, reasons };
}
