/**
 * Stage 4, the recommendation: the smallest allowed size (SKU × ladder units, current SKU first at
 * equal units) with at least the largest need's units that fits every need (traffic), the need
 * raised to what anticipation asks when it is Enabled. Above 100 units that is Premium_P2 when
 * allowed (P2NotAllowed otherwise); below 100 it comes back down to Premium_P1 / Standard_S1 when
 * those are allowed. A seasonal forecast is a central estimate, not a floor: a need it raised
 * takes the ladder rung below it when the forecast and its upper quartile (the growth one past
 * cycle in four exceeded) are both within the scale-up tolerance of that rung (≤ below × (1 +
 * tolerance): 11 units → 10, 12 → 20 at 10 %; the rung below may be the current size, which is
 * then held), never below the rung of the measured need or of another rule's ask; measured needs
 * and every other anticipation ask are floors, rounded up (held at the current size within its
 * tolerance). With anticipation
 * applied, `reactive` is the size of the measured need alone. Limits: `SignalSuspect` when a held
 * suspect ask was above the need, then the cause when no size is large enough (`P2NotAllowed`,
 * `SkuPath`, `LadderTop`).
 */
import type { AnticipationRule, AnticipationStatus, CapacityPolicySpec } from "../../api/index.js";
import { isScalableSku, type SkuUnits } from "../../capacity/skus.js";
import type { RuleAsk } from "../anticipation.js";
import { ceilSafe, toleranceBand } from "../behavior.js";
import { type Reason, reason, type SignalName } from "../reasons.js";
import { formatSize, type SizeList, sameSize } from "../sizes.js";
import type { MeasuredSignals } from "./signals.js";
import { type DecisionFrame, type Limit, limitWith, type Sized } from "./stage.js";

/** The recommendation, what drives it, and the anticipation status with `applied` set. */
export interface Recommended extends Sized {
  /** The signal that asks for the most. */
  drivenBy: SignalName | undefined;
  anticipationStatus: AnticipationStatus | undefined;
  /**
   * When anticipation raised the need: the size the measured need alone takes, for the decision to
   * tell whether anticipation changed its result (after stabilization and rate policies too).
   */
  reactive?: SkuUnits;
}

/** Stage 4 (see the module comment). Run only on a pass with usable metrics. */
export function recommend(frame: DecisionFrame, measured: MeasuredSignals): Recommended {
  const { sizes, current, spec } = frame;
  const { needs, suspect } = measured;
  let needUnits = 0;
  let drivenBy: SignalName | undefined;
  for (const n of needs) {
    if (drivenBy === undefined || n.minUnits > needUnits) {
      needUnits = n.minUnits;
      drivenBy = n.signal;
    }
  }
  const measuredUnits = needUnits;
  const anticipated = anticipatedNeed(frame, measured, needUnits);
  const reasons: Reason[] = [...anticipated.reasons];
  let limit: Limit | undefined;
  needUnits = anticipated.needUnits;
  const fits = (s: SkuUnits) => needs.every((n) => !n.fits || n.fits(s));
  const above = sizes.firstAtLeast(needUnits, fits);
  const tolerance = toleranceBand(spec.behavior).up;
  const below =
    above && anticipated.central
      ? rungBelowWithinTolerance(
          sizes,
          above,
          anticipated.central.units,
          anticipated.floorUnits,
          fits,
          tolerance,
        )
      : undefined;
  const found = below ?? above;
  const reactive = anticipated.status?.applied ? sizes.firstAtLeast(measuredUnits, fits) : undefined;
  if (suspect && suspect.heldAsk !== undefined && suspect.heldAsk > needUnits) {
    const l = limitWith(
      "SignalSuspect",
      `${suspect.signal} asks for ${suspect.heldAsk} units but is suspect: held`,
      {
        units: suspect.heldAsk,
        signal: suspect.signal,
      },
    );
    reasons.push(l.reason);
    limit = l.limit;
  }
  const base = { drivenBy, anticipationStatus: anticipated.status, ...(reactive ? { reactive } : {}) };
  if (found) {
    if (below && above) {
      const over = Math.round((above.units / needUnits - 1) * 100);
      const band = Math.round(tolerance * 100);
      reasons.push(
        reason(
          "LadderSnapped",
          `anticipated need of ${needUnits} units → ${formatSize(found)} (a forecast within the scale-up tolerance, ${band} %, of it: ${formatSize(above)} is ${over} % above it)`,
          { units: found.units, sku: found.sku },
        ),
      );
    } else if (found.units > needUnits && !sameSize(found, current)) {
      reasons.push(
        reason(
          "LadderSnapped",
          `need of ${needUnits} units → ${formatSize(found)} (the next unit count of the ladder)`,
          {
            units: found.units,
            sku: found.sku,
          },
        ),
      );
    }
    return { ...base, size: found, reasons, ...(limit ? { limit } : {}) };
  }
  const size = sizes.top() ?? current;
  const cause = topCause(needUnits, spec, sizes);
  const l = limitWith(cause.code, cause.message, { units: size.units, sku: size.sku });
  return { ...base, size, reasons: [...reasons, l.reason], limit: l.limit };
}

/** The anticipation rules whose ask is a central estimate (rounded to the nearer rung), not a floor. */
const CENTRAL_ESTIMATES: ReadonlySet<AnticipationRule> = new Set(["Seasonal"]);

/**
 * The rung below `above` when `need` (units: the forecast, or its upper quartile when larger) is
 * within `tolerance` (a fraction, the scale-up tolerance) of it and it still covers `floorUnits`
 * (the measured need and every ask that is a floor) and every signal's fit; otherwise undefined
 * (keep `above`). A forecast more than the tolerance above the rung below is worth the step up:
 * rounded down to the nearer rung instead (13 units → 10), the morning ramps of the New York taxi
 * trace were refused at 10 units. Its upper quartile counts too: a ramp that one past day in four
 * climbed faster than the median is not rounded away (the taxi trace's first Monday after the
 * holidays was refused at 9 units, its forecast of 9.6 held by the tolerance).
 */
function rungBelowWithinTolerance(
  sizes: SizeList,
  above: SkuUnits,
  need: number,
  floorUnits: number,
  fits: (s: SkuUnits) => boolean,
  tolerance: number,
): SkuUnits | undefined {
  const rung = sizes.nextDown(above.units)?.units;
  if (rung === undefined || rung < floorUnits) return undefined;
  const candidate = sizes.firstAtLeast(rung, fits);
  if (!candidate || candidate.units >= above.units) return undefined;
  return need <= candidate.units * (1 + tolerance) ? candidate : undefined;
}

/**
 * The need after anticipation's first ask: raised to it when it is larger and the mode is Enabled
 * (then the status is `applied`), stated but not acted on in ForecastOnly. An ask within the
 * scale-up tolerance of the current size only holds it. `floorUnits` is what the recommendation
 * must cover whatever the rounding: the measured need and, when Enabled, the largest ask that is
 * not a central estimate.
 */
function anticipatedNeed(
  frame: DecisionFrame,
  measured: MeasuredSignals,
  needUnits: number,
): {
  needUnits: number;
  floorUnits: number;
  status: AnticipationStatus | undefined;
  reasons: Reason[];
  /**
   * The need was raised by an ask that is a central estimate ({@link CENTRAL_ESTIMATES}): `units`
   * is what the rung below must cover within the tolerance to be taken (the un-rounded estimate or,
   * when larger, its upper quartile).
   */
  central?: { units: number };
} {
  const { anticipation, anticipationStatus } = measured;
  const ask = anticipation?.asks[0];
  const unchanged = { needUnits, floorUnits: needUnits, status: anticipationStatus, reasons: [] };
  if (!anticipation || !ask) return unchanged;
  const currentUnits = frame.current.units;
  const band = toleranceBand(frame.spec.behavior).up;
  // Within the tolerance band of the current size a floor ask only holds it: no step for noise. A
  // central estimate is rounded by the recommendation instead, its spread included (the rung below
  // may be the current size).
  const askUnits = (a: RuleAsk) =>
    !CENTRAL_ESTIMATES.has(a.rule) && a.units <= currentUnits * (1 + band)
      ? Math.min(ceilSafe(a.units), currentUnits)
      : ceilSafe(a.units);
  const units = askUnits(ask);
  if (units <= needUnits) return unchanged;
  const act = anticipation.mode === "Enabled";
  const stated = reason(
    "Anticipated",
    `${ask.rule} asks for ${units} units (measured need ${needUnits}, lead time ${anticipation.leadTimeSeconds}s)${act ? "" : " — ForecastOnly: shown, not acted on"}: ${ask.message}`,
    { units, name: ask.rule },
  );
  if (!act) return { ...unchanged, reasons: [stated] };
  const floorAsk = anticipation.asks.find((a) => !CENTRAL_ESTIMATES.has(a.rule));
  return {
    needUnits: units,
    floorUnits: Math.max(needUnits, floorAsk ? askUnits(floorAsk) : 0),
    status: { ...anticipation.status, applied: true },
    reasons: [stated],
    ...(CENTRAL_ESTIMATES.has(ask.rule)
      ? { central: { units: Math.max(ask.units, ask.upperUnits ?? 0) } }
      : {}),
  };
}

/** Why the largest allowed size is the answer. */
function topCause(
  needUnits: number,
  spec: CapacityPolicySpec,
  sizes: SizeList,
): { code: "P2NotAllowed" | "SkuPath" | "LadderTop"; message: string } {
  const top = sizes.top();
  const topText = top ? formatSize(top) : "the largest size";
  if (needUnits > 100 && !spec.skus.includes("Premium_P2")) {
    return {
      code: "P2NotAllowed",
      message: `${needUnits} units needed but the policy does not allow Premium_P2 (above 100 units): ${topText}`,
    };
  }
  const unreachable = spec.skus.filter((s) => isScalableSku(s) && !sizes.reachable.includes(s));
  if (unreachable.length > 0) {
    return {
      code: "SkuPath",
      message: `${unreachable.join(", ")} is not one online change from ${sizes.current.sku}: ${topText} first`,
    };
  }
  return { code: "LadderTop", message: `even ${topText} does not cover the need of ${needUnits} units` };
}
