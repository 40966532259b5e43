/**
 * Stage 7b, disruption (`behavior.scaleDown.disruption`): a scale-in is worth what it breaks. Removing
 * units disconnects the clients on them — about `connections × removed ÷ current units`
 * (operation.ts `expectedDisconnects`, the count every report uses) — and saves `removed` units for
 * as long as the smaller size holds. With `maxDisconnectionsPerUnitHour` = `k`, the scale-in is made
 * only when it is expected to save at least one unit-hour per `k` clients it disconnects, that is
 * when the smaller size is expected to hold for at least
 *
 *     required = clients ÷ (removed × k)   hours  (= connections ÷ (current units × k))
 *
 * and otherwise held at the current size (`DisruptionHeld`, with about how many clients it would
 * have disconnected). So a scale-in waits for a lower load per unit (fewer clients on each removed
 * unit), and one the instance's history says is soon reversed is not made.
 *
 * How long the smaller size is expected to hold, the shortest of:
 * - the seasonal forecast (hold-forecast.ts), when the policy reads a demand history and it has
 *   enough cycles: the median time the same span of past cycles took to rise above its units;
 * - this instance's past scale-ins (scale-ins.ts, `status.scaleIns`), held ones included: the
 *   Kaplan–Meier median time to a reversal, past the time the need has already stayed at or below
 *   the held size while a scale-in is held; when the survival does not fall to half, a lower bound
 *   that counts only without a forecast;
 * - with neither, the scale-down stabilization window: the need has stayed at or below the smaller
 *   size that long, and is expected to stay about as long again. A window of 0 with no history
 *   gives no basis, and the scale-in is not weighed (unless `k` is 0: then it is held).
 * Not weighed: `policy: Ignore`, a scale-in that disconnects no one, connections unknown, or a
 * current size above `units.max` (the ceiling wins).
 */
import { MAX_SCALE_IN_RECORDS } from "../../api/constants.js";
import type { SkuUnits } from "../../capacity/skus.js";
import type { DisconnectionModel } from "../../traffic/disconnections.js";
import type { DemandHistory } from "../demand-history.js";
import { fmt } from "../format.js";
import { forecastHold } from "../hold-forecast.js";
import { expectedDisconnects } from "../operation.js";
import { reason } from "../reasons.js";
import { type HistoryHold, historyHold, recordScaleIns } from "../scale-ins.js";
import { formatSize } from "../sizes.js";
import { type DecisionFrame, limitWith, type Sized } from "./stage.js";

/** How far ahead the forecast looks for a rise above the smaller size, ms (a day). */
export const HOLD_HORIZON_MS = 86_400_000;

/** What the stage weighed (absent when it weighed nothing). */
export interface DisruptionWeighing {
  /** The scale-in was held at the current size. */
  held: boolean;
  /** The size the scale-in went (or would have gone) to. */
  to: SkuUnits;
  /** Clients it disconnects (or would have), clients. */
  clients: number;
  /** The window's peak connections they are a share of, connections. */
  connections: number;
  /** How long the smaller size must hold to repay them, seconds (∞ at `k` = 0). */
  requiredHoldSeconds: number;
  /** How long it is expected to hold, seconds. */
  expectedHoldSeconds: number;
  /** Where that expectation comes from, for people. */
  basis: string;
}

/** What the stage reads besides the frame. */
export interface DisruptionInput {
  /** The window's peak connections (the levels a scale keeps: suspect.ts), connections. */
  connections: number | undefined;
  /** The need now, units (the largest signal need, un-snapped). */
  needUnits: number;
  demandHistory: DemandHistory | undefined;
  /** End of the newest complete minute the decision reads, ms. */
  windowToMs: number;
  /** Which clients a unit change disconnects (`traffic/disconnections.ts`; default RemovedUnits). */
  disconnection?: DisconnectionModel | undefined;
}

/** The result of stage 8: the size, its reason and limit, and what was weighed. */
export interface Disrupted extends Sized {
  weighing?: DisruptionWeighing;
}

/** How long the smaller size `units` is expected to hold, and from what; undefined: no basis. */
export function expectedHold(
  frame: DecisionFrame,
  input: DisruptionInput,
  units: number,
): { seconds: number; basis: string } | undefined {
  const estimates: { seconds: number; basis: string }[] = [];
  if (input.demandHistory) {
    const f = forecastHold(input.demandHistory, {
      refMs: input.windowToMs,
      levelMs: frame.times.windowSeconds * 1000,
      horizonMs: HOLD_HORIZON_MS,
      needUnits: input.needUnits,
      units,
    });
    if (f.state === "Ok") {
      estimates.push({
        seconds: f.seconds,
        basis: `seasonal forecast, ${f.cycles} past ${f.cycle === "Weekly" ? "weeks" : "days"}`,
      });
    }
  }
  const records = recordScaleIns(frame.history.scaleIns, frame.history.scaleEvents);
  const past = historyHold(records.slice(-MAX_SCALE_IN_RECORDS), frame.nowMs);
  if (past && (!past.censored || estimates.length === 0)) {
    estimates.push({ seconds: past.seconds, basis: historyBasis(past) });
  }
  if (estimates.length === 0) {
    const fallback = steadyHold(frame);
    if (fallback) estimates.push(fallback);
  }
  return estimates.reduce<{ seconds: number; basis: string } | undefined>(
    (best, e) => (best === undefined || e.seconds < best.seconds ? e : best),
    undefined,
  );
}

/**
 * What the record says, for people: "9 past scale-ins, 5 reversed: median hold 14 min"; while a
 * scale-in is held, from the holds that lasted as long as the need has already stayed at or below
 * the size it is held at ("… and of the 6 holds that lasted that long: median remaining hold 7 min"), or,
 * when none lasted that long, that the level is expected to last as long again.
 */
function historyBasis(past: HistoryHold): string {
  const entries = `${past.scaleIns} past scale-ins, ${past.reversals} reversed`;
  const held = minutes(past.seconds);
  if (past.heldUnits === undefined || past.sinceSeconds === 0)
    return past.censored ? `${entries}: held at least ${held}` : `${entries}: median hold ${held}`;
  const stayed = `${entries}; the need has stayed at or below ${fmt(past.heldUnits)} units for ${minutes(past.sinceSeconds)}`;
  if (past.lastedSince === 0)
    return `${stayed}, longer than any of them held: at least as long again, ${held}`;
  const lasted = `of the ${past.lastedSince === 1 ? "1 hold" : `${past.lastedSince} holds`} that lasted that long`;
  return past.censored
    ? `${stayed}, and ${lasted} too few were reversed after it for a median: at least ${held} more`
    : `${stayed}, and ${lasted}: median remaining hold ${held}`;
}

/**
 * Without a forecast or past scale-ins: the size has held since the last scale, so it is expected
 * to hold as long again (the longer a level has lasted, the longer it is expected to last), and at
 * least the stabilization window the need has stayed below the smaller size. At a steady demand
 * the expected hold grows pass by pass, so a scale-in is held only until it repays what it
 * disconnects, never for good — once there is a last scale: without one (a policy that has not
 * scaled yet) the window is all there is, and a scale-in that must hold longer waits for the
 * first scale, a forecast or a scale-in record. None when neither is known (no window, no scale
 * yet).
 */
function steadyHold(frame: DecisionFrame): { seconds: number; basis: string } | undefined {
  const window = frame.scaleDownWindow.seconds;
  const last = Date.parse(frame.history.lastScaleTime ?? "");
  const held = Number.isFinite(last) ? Math.max(0, (frame.nowMs - last) / 1000) : 0;
  if (held > window)
    return { seconds: held, basis: `the size has held for ${minutes(held)} since the last scale` };
  if (window > 0)
    return { seconds: window, basis: `the need has stayed below it for the ${window}s stabilization window` };
  return undefined;
}

/** `37 min`, `2.5 h`; `digits` more decimals than that (to tell two close durations apart). */
function minutes(seconds: number, digits = 0): string {
  if (!Number.isFinite(seconds)) return "forever";
  const round = (v: number, d: number) => Math.round(v * 10 ** d) / 10 ** d;
  return seconds >= 5400
    ? `${fmt(round(seconds / 3600, 1 + digits))} h`
    : `${fmt(round(seconds / 60, digits))} min`;
}

/**
 * `required` and `expected` as {@link minutes}, with as many more decimals (up to 2) as it takes
 * for a held scale-in (expected < required) not to read as "must hold 36 min, expected 36 min".
 */
function minutesApart(required: number, expected: number): [string, string] {
  let digits = 0;
  while (digits < 2 && expected < required && minutes(required, digits) === minutes(expected, digits))
    digits++;
  return [minutes(required, digits), minutes(expected, digits)];
}

const clientsText = (n: number) => Math.round(n).toLocaleString("en-US");

/** Stage 7b (see the module comment): `proposed`, or the current size when the scale-in is held. */
export function disruption(frame: DecisionFrame, proposed: SkuUnits, input: DisruptionInput): Disrupted {
  const { current, spec } = frame;
  const rule = spec.behavior.scaleDown.disruption;
  const removed = current.units - proposed.units;
  const unchanged: Disrupted = { size: proposed, reasons: [] };
  if (rule.policy === "Ignore" || removed <= 0 || current.units > spec.units.max) return unchanged;
  const connections = input.connections;
  const clients = expectedDisconnects(
    { from: current, to: proposed, ...(connections !== undefined ? { before: { connections } } : {}) },
    input.disconnection,
  );
  if (clients === undefined || connections === undefined || !(clients > 0)) return unchanged;
  const k = rule.maxDisconnectionsPerUnitHour;
  const requiredHoldSeconds = k > 0 ? (3600 * clients) / (removed * k) : Number.POSITIVE_INFINITY;
  // At k = 0 no hold repays a disconnection: nothing needs to be expected.
  const hold =
    expectedHold(frame, input, proposed.units) ??
    (k === 0 ? { seconds: 0, basis: "no past scale-ins" } : undefined);
  if (!hold) return unchanged;
  const held = hold.seconds < requiredHoldSeconds;
  const weighing: DisruptionWeighing = {
    held,
    to: { sku: proposed.sku, units: proposed.units },
    clients,
    connections,
    requiredHoldSeconds,
    expectedHoldSeconds: hold.seconds,
    basis: hold.basis,
  };
  const share =
    input.disconnection === "Everyone"
      ? `all ${clientsText(connections)}: every unit change disconnects everyone`
      : `the removed units' share of ${clientsText(connections)}`;
  const cost = `about ${clientsText(clients)} clients (${share})`;
  const [mustText, expectedText] = minutesApart(requiredHoldSeconds, hold.seconds);
  const repay =
    k > 0
      ? `at ${clientsText(k)} clients per unit-hour saved it must hold ${mustText}`
      : "maxDisconnectionsPerUnitHour is 0";
  const expected = `it is expected to hold ${expectedText} (${hold.basis})`;
  if (!held) {
    const message = `the scale-in to ${formatSize(proposed)} disconnects ${cost}; ${repay} and ${expected}`;
    return {
      size: proposed,
      reasons: [reason("DisruptionRepaid", message, { units: proposed.units, clients })],
      weighing,
    };
  }
  const stated = limitWith(
    "DisruptionHeld",
    `scale-in to ${formatSize(proposed)} held: it would disconnect ${cost}; ${repay}, but ${expected}`,
    { units: current.units, sku: current.sku, clients },
  );
  return { size: { ...current }, reasons: [stated.reason], limit: stated.limit, weighing };
}
