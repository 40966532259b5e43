/**
 * Stage 5, behavior (behavior.ts): the stabilization windows over the recorded recommendations,
 * then the rate policies of the direction the result moves in. A recommendation below the current
 * size made on incomplete data is not recorded (the HPA's rule); the first recommendation of a
 * policy with a scale-down window records the current size first, so the window opens with it.
 */
import type { SkuUnits } from "../../capacity/skus.js";
import { scaleDuration } from "../anticipation.js";
import { ceilSafe, rateLimit, type StabilizeResult, stabilize } from "../behavior.js";
import { fmt, percentText } from "../format.js";
import type { Recommendation } from "../history.js";
import type { ScaleDownWindow } from "../recurrence.js";
import { compareSizes, formatSize, type SizeList, sameSize } from "../sizes.js";
import { type DecisionFrame, limitWith, type Sized, sizedBy } from "./stage.js";
import { type UnmeasuredSize, unmeasuredMessage } from "./unmeasured.js";

/** The stabilized size and the recommendations this pass records (oldest first). */
export interface Stabilized extends Sized {
  recorded: Recommendation[];
}

/**
 * Stage 5a: the stabilization windows. `complete`: the window may justify a scale-in (health.ts).
 * The result is a size of the list when one has its units. A recommendation below the current
 * size held there while `unmeasured` (the quota was full at a smaller size and no bucket at this
 * one is read yet: unmeasured.ts) is named `AwaitingNewSize`, not the scale-down window: the
 * buckets can only say "more".
 */
export function stabilization(
  frame: DecisionFrame,
  recommendation: SkuUnits,
  complete: boolean,
  unmeasured?: UnmeasuredSize,
): Stabilized {
  const { current, history, nowIso, sizes, spec } = frame;
  const up = spec.behavior.scaleUp.stabilizationWindowSeconds;
  const down = frame.scaleDownWindow.seconds;
  const recorded: Recommendation[] = [];
  // Like the HPA on first sight: the current size opens the scale-down window.
  const seed = history.recommendations.length === 0 && down > 0;
  if (seed) recorded.push({ time: nowIso, sku: current.sku, units: current.units });
  // A lower recommendation made on incomplete data is not trusted, not even as history.
  const trusted = complete || compareSizes(recommendation, current) >= 0;
  const prior = seed ? [...history.recommendations, ...recorded] : history.recommendations;
  if (trusted) recorded.push({ time: nowIso, sku: recommendation.sku, units: recommendation.units });
  const partial = frame.scaleDownWindow.partial;
  const st = stabilize({
    current,
    recommendation,
    history: prior,
    nowMs: frame.nowMs,
    scaleUpWindowSeconds: up,
    scaleDownWindowSeconds: down,
    ...(partial ? { scaleDownPartial: { ...partial, round: (units) => sizes.firstAtLeast(units) } } : {}),
  });
  const size = sizes.has(st.size) ? st.size : (sizes.atUnits(st.size.units) ?? st.size);
  const at = { units: size.units, sku: size.sku };
  if (st.code === "StabilizedDown" && unmeasured && sameSize(size, current)) {
    return {
      ...sizedBy(size, limitWith("AwaitingNewSize", unmeasuredMessage(unmeasured, current.units), at)),
      recorded,
    };
  }
  const stated =
    st.code === "StabilizedDown"
      ? limitWith(
          "StabilizedDown",
          `scale-down stabilization (${windowText(frame.scaleDownWindow)}): the highest recommendation of the window is ${heldText(st, sizes)}`,
          at,
        )
      : st.code === "StabilizedUp"
        ? limitWith(
            "StabilizedUp",
            `scale-up stabilization (${up}s): the lowest recommendation of the window is ${formatSize(st.up)}`,
            at,
          )
        : undefined;
  return { ...sizedBy(size, stated), recorded };
}

/**
 * The window's highest recommendation as held: `Premium_P1 10`, `Premium_P1 10, held as Premium_P1
 * 5`, or, when the held fraction rounds up to the whole, `Premium_P2 200, held whole: 58 % of it
 * is 116 units, more than the next size down (Premium_P2 100)`.
 */
function heldText(st: StabilizeResult, sizes: SizeList): string {
  if (st.whole) return `${formatSize(st.whole)}, held as ${formatSize(st.down)}`;
  if (st.roundedUp === undefined) return formatSize(st.down);
  const share = percentText(st.roundedUp / st.down.units);
  const below = sizes.nextDown(st.down.units);
  const next = below ? `, more than the next size down (${formatSize(below)})` : "";
  // Rounded up to hundredths, so that a share just above a rung never reads as that rung.
  const units = fmt(ceilSafe(st.roundedUp * 100) / 100);
  return `${formatSize(st.down)}, held whole: ${share} of it is ${units} units${next}`;
}

/** `2700s`; with a minimum set, `2700s, holding 49 % after 600s: <why>` or `2700s, whole: <why>`. */
function windowText(w: ScaleDownWindow): string {
  return w.basis === undefined ? `${w.seconds}s` : `${w.seconds}s, ${w.basis}`;
}

/**
 * Stage 5b: the rate policies (and `selectPolicy: Disabled`) applied to `proposed`, per scale
 * operation: one operation takes the scale duration anticipation uses (measured from this
 * instance's recent updates, else `spec.anticipation.scaleDuration`, else 5 min), and a policy with
 * a shorter period is applied once per period of it (behavior.ts, "Per operation").
 */
export function ratePolicies(frame: DecisionFrame, proposed: SkuUnits): Sized {
  const { spec, history } = frame;
  const operation = scaleDuration(
    history.scaleEvents,
    history.anticipation,
    spec.anticipation?.scaleDuration,
  );
  const rl = rateLimit({
    operationSeconds: operation.seconds,
    current: frame.current,
    proposed,
    sizes: frame.sizes,
    events: frame.history.scaleEvents,
    nowMs: frame.nowMs,
    scaleUp: spec.behavior.scaleUp,
    scaleDown: spec.behavior.scaleDown,
  });
  if (rl.code === "ScaleUpDisabled" || rl.code === "ScaleDownDisabled") {
    const direction = rl.code === "ScaleUpDisabled" ? "scaleUp" : "scaleDown";
    return sizedBy(rl.size, limitWith(rl.code, `${direction}.selectPolicy is Disabled`));
  }
  if (!rl.code) return sizedBy(rl.size);
  const message = `rate policy ${rl.policy ?? ""} allows ${rl.code === "RateLimitedUp" ? "up" : "down"} to ${rl.limitUnits ?? "?"} units: ${formatSize(rl.size)}`;
  return sizedBy(
    rl.size,
    limitWith(rl.code, message, { units: rl.size.units, sku: rl.size.sku, name: rl.policy }),
  );
}
