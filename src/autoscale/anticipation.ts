/**
 * Anticipation: the units the demand will need one lead time from now, before the metrics show it.
 * Pure: the clock and the history come in as arguments.
 *
 * Lead time (what a decision made now must cover): the effective ingestion delay (until a
 * minute's metrics are complete) + the scale duration (the median, send → completion observed, of
 * this instance's recent completed updates; `spec.anticipation.scaleDuration` until one is
 * measured) + one poll interval (the next decision's update lands that much later). Capacity
 * decided now is sized for the demand at `now + scale duration + poll interval`, projected from
 * buckets that end `ingestion delay` before now; the Seasonal rule, which reads past cycles rather
 * than projecting a line, reads them until one more scale duration after that (`servedUntilMs`:
 * the earliest a next scale could complete, Azure running one update at a time).
 *
 * Rules (each gives units, un-snapped; the largest wins; none ever lowers the reactive need), one
 * file each under `anticipation/`, each behind the one {@link Rule} interface, listed in
 * `anticipation/index.ts` and run in that order:
 * - **Trend** (`trend.ts`): each signal's need rising consistently across the window, read at the
 *   target time.
 * - **CensoredDemand** (`censored-demand.ts`): while the connection quota is full, the growth
 *   measured before it extended to the target time.
 * - **Headroom** (`headroom.ts`): a decaying share of the recent peaks of the need.
 * - **Seasonal** (`seasonal.ts`): the growth the same span of past cycles saw.
 * - **LeadingSignal** (`leading-signal.ts`, `leading.ts`): the app servers' negotiate rate from
 *   Prometheus, ahead of Azure Monitor.
 * - **Failover** (`failover.ts`, `../failover.ts`): another member of the replica group stopped
 *   serving; this one's share of its clients, which reconnect here within seconds.
 * Each rule file pins its own figures. One ask per rule (the trend of each signal is one rule):
 * the largest.
 */

import { median } from "simple-statistics";
import { MAX_SCALE_DURATION_SECONDS } from "../api/constants.js";
import { durationOr } from "../api/duration.js";
import type { AnticipationRule, AnticipationStatus } from "../api/index.js";
import { RULES } from "./anticipation/index.js";
import {
  type Anticipation,
  type AnticipationInput,
  minutes,
  type RuleAsk,
  type RuleContext,
} from "./anticipation/rule.js";
import { ceilSafe } from "./behavior.js";
import type { ScaleEvent } from "./history.js";
import { measuredScaleSeconds } from "./overdue.js";

export type {
  Anticipation,
  AnticipationInput,
  Rule,
  RuleAsk,
  RuleContext,
  RuleResult,
  RuleStatus,
} from "./anticipation/rule.js";

/** Recent completed updates the scale duration is measured on. */
const MEASURED_UPDATES = 5;

/**
 * The scale duration, seconds: measured from recent completed updates, else the previous
 * measurement, else `declared` (`spec.anticipation.scaleDuration`; 5 min when unset or
 * unreadable). Both are read back from `status` (scale events, `status.anticipation`): a measured
 * duration is at most {@link MAX_SCALE_DURATION_SECONDS} (2 h, the bound of
 * `spec.anticipation.scaleDuration`), and a stored one that is not a finite number > 0 is ignored.
 * The lead time and the rate policies' per-operation limits (behavior.ts) both read it.
 */
export function scaleDuration(
  events: readonly ScaleEvent[],
  previous: AnticipationStatus | undefined,
  declared: string | undefined,
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
  return { seconds: durationOr(declared, 300), source: "Default" };
}

/**
 * One ask per rule (the trend of each signal is one rule): the largest of each, largest first;
 * ties keep the order the rules asked in.
 */
function largestPerRule(asks: RuleAsk[]): RuleAsk[] {
  asks.sort((a, b) => b.units - a.units);
  const seen = new Set<AnticipationRule>();
  return asks.filter((a) => !seen.has(a.rule) && seen.add(a.rule));
}

/** Fills the status's outcome: the units and rule of the largest ask, every rule's ask, a message. */
function summarize(status: AnticipationStatus, byRule: readonly RuleAsk[], leadTimeSeconds: number): void {
  const top = byRule[0];
  if (top) {
    status.units = ceilSafe(top.units);
    status.drivenBy = top.rule;
    status.rules = byRule.map((a) => ({
      rule: a.rule,
      units: ceilSafe(a.units),
      message: a.message.slice(0, 512),
    }));
  }
  status.message = (
    top
      ? `${top.rule}: ${top.message}`
      : `nothing expected above the measured need within the lead time of ${minutes(leadTimeSeconds * 1000)}`
  ).slice(0, 1024);
}

/**
 * What anticipation asks for now (see the module comment): every rule of {@link RULES} in order,
 * what each keeps merged into the status. With mode Off (or no `spec.anticipation`) it returns
 * undefined and keeps nothing.
 */
export function anticipate(input: AnticipationInput): Anticipation | undefined {
  const spec = input.spec;
  if (!spec || spec.mode === "Off") return undefined;
  const duration = scaleDuration(input.scaleEvents, input.previous, spec.scaleDuration);
  const leadTimeSeconds = input.ingestionDelaySeconds + duration.seconds + input.pollSeconds;
  const targetMs = input.nowMs + (duration.seconds + input.pollSeconds) * 1000;
  const ctx: RuleContext = { ...input, spec, targetMs, servedUntilMs: targetMs + duration.seconds * 1000 };
  const status: AnticipationStatus = {
    mode: spec.mode,
    leadTimeSeconds,
    scaleDurationSeconds: duration.seconds,
    scaleDurationSource: duration.source,
    applied: false,
    message: "",
  };
  const asks: RuleAsk[] = [];
  for (const rule of RULES) {
    const result = rule.evaluate(ctx);
    asks.push(...result.asks);
    if (result.status) Object.assign(status, result.status);
  }
  const byRule = largestPerRule(asks);
  summarize(status, byRule, leadTimeSeconds);
  return {
    mode: spec.mode,
    leadTimeSeconds,
    scaleDurationSeconds: duration.seconds,
    scaleDurationSource: duration.source,
    asks: byRule,
    status,
  };
}
