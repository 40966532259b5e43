/**
 * Stage 9, the mode: the change stated (ScaleOut / ScaleIn with what limited or drove it, and a
 * SkuChange), then the action — Auto → Scale when anything differs; Recommend → Recommend; Paused
 * (mode or annotation) and conflicts → None.
 */
import { PAUSE_ANNOTATION } from "../../api/constants.js";
import type { AnticipationStatus } from "../../api/index.js";
import type { SkuUnits } from "../../capacity/skus.js";
import { type Reason, reason, type SignalName } from "../reasons.js";
import { compareSizes, formatSize, sameSize } from "../sizes.js";
import type { AppServersNow } from "./app-servers.js";
import type { DecisionFrame, Limit } from "./stage.js";

/** What the mode stage reads besides the frame. */
export interface ModeInput {
  /** The size chosen (after floors and ceiling). */
  target: SkuUnits;
  replicasNow: AppServersNow;
  replicasWanted: AppServersNow;
  limit: Limit | undefined;
  drivenBy?: SignalName | undefined;
  anticipationStatus: AnticipationStatus | undefined;
}

/** Stage 9 (see the module comment): what the caller does, and the reasons that say so. */
export function modeAction(
  frame: DecisionFrame,
  m: ModeInput,
): { action: "None" | "Scale" | "Recommend"; reasons: Reason[] } {
  const { current, conflict, spec } = frame;
  const { target } = m;
  const capacityChange = !sameSize(target, current);
  const replicaChange =
    (m.replicasWanted.replicas !== undefined && m.replicasWanted.replicas !== m.replicasNow.replicas) ||
    (m.replicasWanted.hpaMinReplicas !== undefined &&
      m.replicasWanted.hpaMinReplicas !== m.replicasNow.hpaMinReplicas);
  const reasons = capacityChange ? changeReasons(current, m) : [];
  if (conflict) {
    return {
      action: "None",
      reasons: [...reasons, reason("Conflict", conflict.message, { name: conflict.reason })],
    };
  }
  if (frame.paused) {
    const message =
      spec.mode === "Paused"
        ? "spec.mode is Paused: nothing is applied"
        : `annotation ${PAUSE_ANNOTATION}="true": nothing is applied`;
    return { action: "None", reasons: [...reasons, reason("Paused", message)] };
  }
  if (!capacityChange && !replicaChange) {
    const none = reason("NoChange", `${formatSize(current)} is what the decision wants`);
    return { action: "None", reasons: [...reasons, none] };
  }
  if (spec.mode === "Recommend") {
    const only = reason("RecommendOnly", "spec.mode is Recommend: the decision is recorded, not applied");
    return { action: "Recommend", reasons: [...reasons, only] };
  }
  return { action: "Scale", reasons };
}

/** `ScaleOut` / `ScaleIn` (with the limit, anticipation or signal behind it) and `SkuChange`. */
function changeReasons(current: SkuUnits, m: ModeInput): Reason[] {
  const { target } = m;
  const dir = compareSizes(target, current) > 0 ? "ScaleOut" : "ScaleIn";
  const anticipated = m.anticipationStatus?.applied ? m.anticipationStatus.drivenBy : undefined;
  const by = m.limit
    ? ` (${m.limit.code})`
    : anticipated
      ? ` (anticipated: ${anticipated})`
      : m.drivenBy
        ? ` (driven by ${m.drivenBy})`
        : "";
  const out = [
    reason(dir, `${formatSize(current)} → ${formatSize(target)}${by}`, {
      units: target.units,
      sku: target.sku,
    }),
  ];
  if (target.sku !== current.sku) {
    out.push(reason("SkuChange", `SKU ${current.sku} → ${target.sku} (online change)`, { sku: target.sku }));
  }
  return out;
}
