/**
 * Stage 7, floors and ceiling, always: the result as a size of the list (the nearest with at
 * least its units when the current SKU is not allowed or its units are off the ladder), raised to
 * `units.min` or an active schedule's `minUnits` (snapped up), then lowered to `units.max`
 * (snapped down) — the ceiling wins (NoRungInRange when the floor lies above it).
 */
import type { SkuUnits } from "../../capacity/skus.js";
import { type Reason, reason } from "../reasons.js";
import type { ScheduleState } from "../schedules.js";
import { formatSize } from "../sizes.js";
import { type DecisionFrame, type Limit, limitWith, type Sized } from "./stage.js";

/** Stage 7 (see the module comment). */
export function bounds(frame: DecisionFrame, proposed: SkuUnits, schedules: ScheduleState): Sized {
  const { sizes, spec } = frame;
  // On a size of the list, so that the clamps below are the last word.
  let size = sizes.has(proposed)
    ? proposed
    : (sizes.atUnits(proposed.units) ?? sizes.firstAtLeast(proposed.units) ?? sizes.top() ?? proposed);
  const reasons: Reason[] = [];
  let limit: Limit | undefined;
  const { floor, floorCode, ceiling, conflict } = unitBounds(frame, schedules);
  if (conflict) reasons.push(conflict);
  if (size.units < floor.units) {
    size = floor;
    const l =
      floorCode === "ScheduleFloor"
        ? limitWith(
            "ScheduleFloor",
            `schedule ${schedules.floorSchedule} is active: at least ${schedules.floorUnits} units → ${formatSize(floor)}`,
            { units: floor.units, name: schedules.floorSchedule },
          )
        : limitWith("MinUnits", `units.min ${spec.units.min} → ${formatSize(floor)}`, { units: floor.units });
    reasons.push(l.reason);
    limit = l.limit;
  }
  if (size.units > ceiling.units) {
    size = ceiling;
    const l = limitWith("MaxUnits", `units.max ${spec.units.max} → ${formatSize(ceiling)}`, {
      units: ceiling.units,
    });
    reasons.push(l.reason);
    limit = l.limit;
  }
  return { size, reasons, ...(limit ? { limit } : {}) };
}

/**
 * The floor (units.min or the highest active schedule's minUnits, snapped up) and the ceiling
 * (units.max, snapped down); a floor above the ceiling is the ceiling, with `NoRungInRange`.
 */
function unitBounds(
  frame: DecisionFrame,
  schedules: ScheduleState,
): { floor: SkuUnits; floorCode: "MinUnits" | "ScheduleFloor"; ceiling: SkuUnits; conflict?: Reason } {
  const { sizes, spec, current } = frame;
  const minSize = sizes.firstAtLeast(spec.units.min) ?? sizes.top() ?? current;
  let floor = minSize;
  let floorCode: "MinUnits" | "ScheduleFloor" = "MinUnits";
  if (schedules.floorUnits !== undefined) {
    const sched = sizes.firstAtLeast(schedules.floorUnits) ?? sizes.top() ?? current;
    if (sched.units > floor.units) {
      floor = sched;
      floorCode = "ScheduleFloor";
    }
  }
  const ceiling = sizes.largestAtMost(spec.units.max) ?? sizes.sizes[0] ?? current;
  if (floor.units <= ceiling.units) return { floor, floorCode, ceiling };
  const conflict = reason(
    "NoRungInRange",
    `no unit count of ${sizes.reachable.join(", ")} lies in ${floorCode === "ScheduleFloor" ? `${schedules.floorUnits} (schedule)` : spec.units.min}..${spec.units.max}: units.max wins`,
  );
  return { floor: ceiling, floorCode, ceiling, conflict };
}
