/**
 * An ARM update that does not end: how long one may run before a person should look, pure.
 *
 * Microsoft's scale documentation ("How to scale an Azure SignalR Service instance", "…Web PubSub
 * instance") says a scale takes a few minutes and, rarely, about 30. The deadline of an update in
 * flight is therefore {@link MIN_UPDATE_DEADLINE_SECONDS} (30 minutes) or twice the longest scale
 * this instance was measured to take, whichever is longer — measured from the completed updates
 * the history still holds (`status.scaleEvents`: `startedAt` → `time`, sent → completion
 * observed), and the median kept by anticipation (`status.anticipation.scaleDurationSeconds`
 * when its source is Measured), so that an instance known to take 25 minutes is not called stuck
 * at 31.
 *
 * Past the deadline the policy is `Ready=False`, reason `ProgressDeadlineExceeded` (the name the
 * Deployment controller gives a rollout past its `progressDeadlineSeconds`), and so `Stalled=True`,
 * with the update's age in the message (pass.ts). Nothing else changes: the operator keeps
 * waiting for the update — ARM refuses a second one while it runs — and when it ends, all clears.
 */
import type { AnticipationStatus } from "../api/index.js";
import type { ScaleEvent } from "./history.js";
import { parseTime } from "./time.js";

/** The shortest deadline of an update in flight, seconds: 30 minutes. */
export const MIN_UPDATE_DEADLINE_SECONDS = 1800;

/** How many times the longest measured scale an update may take before it is overdue. */
export const UPDATE_DEADLINE_FACTOR = 2;

/**
 * The measured durations of completed updates, send → completion observed, seconds, oldest first
 * (events with no `startedAt` — found, not sent — have none).
 */
export function measuredScaleSeconds(events: readonly ScaleEvent[]): number[] {
  return events
    .map((e) => (parseTime(e.time) - parseTime(e.startedAt ?? e.time)) / 1000)
    .filter((s) => Number.isFinite(s) && s > 0);
}

/** Where an update in flight stands against its deadline. */
export interface UpdateAge {
  /** Seconds since the update was sent (or found running). */
  ageSeconds: number;
  /** Its deadline, seconds after it was sent. */
  deadlineSeconds: number;
  /** The age is past the deadline. */
  overdue: boolean;
  /** How the deadline was set, for messages. */
  basis: string;
}

/** `1 h 05 min`, `12 min`, `45 s`. */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`;
}

/**
 * The age and deadline of the update sent at `startedAt` (see the module comment). Pure.
 * @param nowMs the time of the pass, ms since the epoch
 */
export function updateAge(
  startedAt: string,
  nowMs: number,
  events: readonly ScaleEvent[],
  anticipation?: Pick<AnticipationStatus, "scaleDurationSeconds" | "scaleDurationSource">,
): UpdateAge {
  const measured = measuredScaleSeconds(events);
  const stored =
    anticipation?.scaleDurationSource === "Measured" &&
    Number.isFinite(anticipation.scaleDurationSeconds) &&
    anticipation.scaleDurationSeconds > 0
      ? [anticipation.scaleDurationSeconds]
      : [];
  const longest = Math.max(0, ...measured, ...stored);
  const scaled = Math.ceil(UPDATE_DEADLINE_FACTOR * longest);
  const deadlineSeconds = Math.max(MIN_UPDATE_DEADLINE_SECONDS, scaled);
  const sent = parseTime(startedAt);
  const ageSeconds = Number.isFinite(sent) ? Math.max(0, (nowMs - sent) / 1000) : 0;
  const basis =
    scaled > MIN_UPDATE_DEADLINE_SECONDS
      ? `twice the longest scale measured on this instance, ${formatAge(longest)}`
      : "the 30 minutes a scale rarely exceeds";
  return { ageSeconds, deadlineSeconds, overdue: ageSeconds > deadlineSeconds, basis };
}
