/**
 * A model of Azure's own autoscale for Azure SignalR Service / Web PubSub (Azure Monitor
 * autoscale), as Microsoft documents it:
 *
 * - Premium only: "Autoscaling is only available in Azure SignalR Service Premium tier"; it scales
 *   the unit count, never the SKU — a Premium_P1 instance stays on the P1 ladder (1–10, 20 … 100),
 *   a Premium_P2 one on 100, 200 … 1000. ("Automatically scale units of an Azure SignalR Service",
 *   learn.microsoft.com/azure/azure-signalr/signalr-howto-scale-autoscale.)
 * - An autoscale setting with minimum, maximum and default instance counts and rules. Each rule:
 *   a metric (ServerLoad or ConnectionQuotaUtilization), time grain 1 minute with statistic
 *   Average, a time window (duration, default 10 minutes) with time aggregation Average, an
 *   operator and threshold, and an action Increase/Decrease by a count. "Increments or decrements
 *   are done between available units": a count of 1 moves to the next allowed unit count (10 → 20,
 *   20 → 10). (signalr-howto-scale-autoscale; "Understand autoscale settings",
 *   learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-understanding-settings, whose
 *   example rules use timeGrain PT1M, statistic Average, timeWindow PT10M, timeAggregation
 *   Average and cooldown PT5M.)
 * - The time window looks back from now: "every time autoscale runs, it queries metrics for the
 *   past 10 minutes". Minutes not yet ingested are missing from that query, so the average is over
 *   the ingested minutes of the window.
 * - Evaluation: "the autoscale job runs every 30 to 60 seconds" — here once a minute. Scale-out
 *   rules first: if one or more fire, scale out to the highest capacity any of them asks for. Only
 *   if none fires, scale-in rules: "Autoscale only scales in if all the scale-in rules are
 *   triggered", by as little as any of them asks for. (autoscale-understanding-settings,
 *   "Autoscale evaluation".)
 * - Cooldown: "After a scale action occurs, the autoscale job waits for the cooldown period before
 *   it scales again. The cooldown period applies to both scale-out and scale-in actions." One
 *   cooldown for the setting here (default 5 minutes), counted from the action.
 * - Flapping: before a scale-in, autoscale estimates whether the result would trigger a scale-out
 *   and then scales in by less, or not at all. Both metrics here are per-capacity percentages, so
 *   the estimate after going from `u` to `u'` units is `value × u / u'`. ("Flapping in Autoscale",
 *   learn.microsoft.com/azure/azure-monitor/autoscale/autoscale-flapping.)
 * - Default instance count: "If there's a problem reading the resource metric, and the current
 *   capacity is below the default, autoscale scales out to the default." (autoscale-understanding-settings.)
 * - Nothing happens while a scale is in flight (the engine starts no second update).
 *
 * Default rules (`defaultNativeRules`): scale out by one step when ServerLoad or
 * ConnectionQuotaUtilization averages above 70 %; scale in by one step when both average below
 * 30 %. Microsoft's examples use 70 % out / 20 % in and advise scaling out at 80–90 %.
 */
import { DEFAULT_LADDERS, type SkuUnits } from "../../capacity/index.js";
import { MINUTE_MS, type NativeMetricName, type PollContext, type Strategy } from "../engine.js";

/** Comparison operators of an autoscale rule. */
export type NativeOperator = "GreaterThan" | "GreaterThanOrEqual" | "LessThan" | "LessThanOrEqual";

/** One autoscale rule. */
export interface NativeRule {
  metric: NativeMetricName;
  operator: NativeOperator;
  /** Threshold, %. */
  threshold: number;
  direction: "Increase" | "Decrease";
  /** Steps along the unit ladder (count 1 = the next allowed unit count). */
  steps: number;
}

/** An autoscale setting with one (default) profile. */
export interface NativeSetting {
  sku: "Premium_P1" | "Premium_P2";
  /** Instance limits, units (snapped onto the SKU's ladder). */
  minimum: number;
  maximum: number;
  default: number;
  rules: readonly NativeRule[];
  /** Duration (time window) of every rule, minutes. */
  timeWindowMinutes: number;
  /** Cooldown after any scale action, minutes. */
  cooldownMinutes: number;
}

/** The default rules: out above `outPercent` on either metric, in below `inPercent` on both. */
export function defaultNativeRules(outPercent = 70, inPercent = 30): NativeRule[] {
  const metrics: NativeMetricName[] = ["ServerLoad", "ConnectionQuotaUtilization"];
  return [
    ...metrics.map(
      (metric): NativeRule => ({
        metric,
        operator: "GreaterThan",
        threshold: outPercent,
        direction: "Increase",
        steps: 1,
      }),
    ),
    ...metrics.map(
      (metric): NativeRule => ({
        metric,
        operator: "LessThan",
        threshold: inPercent,
        direction: "Decrease",
        steps: 1,
      }),
    ),
  ];
}

/** Whether a value triggers a rule. */
function fires(rule: NativeRule, value: number): boolean {
  switch (rule.operator) {
    case "GreaterThan":
      return value > rule.threshold;
    case "GreaterThanOrEqual":
      return value >= rule.threshold;
    case "LessThan":
      return value < rule.threshold;
    case "LessThanOrEqual":
      return value <= rule.threshold;
  }
}

/** The unit counts the setting can use: its SKU's ladder within [minimum, maximum]. */
function nativeLadder(setting: NativeSetting): number[] {
  const ladder = DEFAULT_LADDERS[setting.sku];
  const inRange = ladder.filter((u) => u >= setting.minimum && u <= setting.maximum);
  if (inRange.length > 0) return inRange;
  // Limits between two rungs: the next rung up from the minimum.
  const up = ladder.find((u) => u >= setting.minimum) ?? (ladder[ladder.length - 1] as number);
  return [up];
}

/** What one evaluation decided, and why. */
export interface NativeEvaluation {
  action: "None" | "ScaleOut" | "ScaleIn" | "ScaleToDefault";
  units: number;
  reason: string;
  /** Window averages per metric (absent when no minute of the window was ingested). */
  averages: Partial<Record<NativeMetricName, number>>;
}

function indexAtOrBelow(ladder: readonly number[], units: number): number {
  let i = 0;
  for (let k = 0; k < ladder.length; k++) if ((ladder[k] as number) <= units) i = k;
  return i;
}

/**
 * One run of the autoscale job, pure: the averages of the window, the current units, whether the
 * cooldown has passed → the action (see the module comment for the rules).
 */
export function evaluateNative(
  setting: NativeSetting,
  currentUnits: number,
  averages: Partial<Record<NativeMetricName, number>>,
  inCooldown: boolean,
): NativeEvaluation {
  const none = (reason: string): NativeEvaluation => ({
    action: "None",
    units: currentUnits,
    reason,
    averages,
  });
  if (inCooldown) return none("cooldown");
  const ladder = nativeLadder(setting);
  const cur = indexAtOrBelow(ladder, currentUnits);
  const value = (r: NativeRule) => averages[r.metric];
  const known = setting.rules.filter((r) => value(r) !== undefined);
  if (known.length === 0) {
    const def = ladder[indexAtOrBelow(ladder, Math.max(setting.default, ladder[0] as number))] as number;
    if (currentUnits < def) {
      return {
        action: "ScaleToDefault",
        units: def,
        reason: "no metric data: scale out to the default count",
        averages,
      };
    }
    return none("no metric data");
  }
  const out = setting.rules.filter(
    (r) => r.direction === "Increase" && value(r) !== undefined && fires(r, value(r) as number),
  );
  if (out.length > 0) {
    const steps = Math.max(...out.map((r) => r.steps));
    const to = ladder[Math.min(ladder.length - 1, cur + steps)] as number;
    if (to > currentUnits) {
      return {
        action: "ScaleOut",
        units: to,
        reason: `scale-out rule(s) fired: ${out.map((r) => r.metric).join(", ")}`,
        averages,
      };
    }
    return none("scale-out wanted, already at the maximum");
  }
  const inRules = setting.rules.filter((r) => r.direction === "Decrease");
  if (inRules.length === 0) return none("no scale-in rule");
  const allFire = inRules.every((r) => value(r) !== undefined && fires(r, value(r) as number));
  if (!allFire) return none("not every scale-in rule fired");
  // Scale in by as little as any rule asks for.
  const steps = Math.min(...inRules.map((r) => r.steps));
  const outRules = setting.rules.filter((r) => r.direction === "Increase");
  for (let k = Math.max(0, cur - steps); k < cur; k++) {
    const to = ladder[k] as number;
    const flaps = outRules.some((r) => {
      const v = value(r);
      return v !== undefined && fires(r, (v * currentUnits) / to);
    });
    if (!flaps) return { action: "ScaleIn", units: to, reason: "every scale-in rule fired", averages };
  }
  if (cur === 0) return none("scale-in wanted, already at the minimum");
  return none("scale-in skipped: the estimate after it would trigger a scale-out (flapping)");
}

/** Options of {@link NativeAutoscaleStrategy}. */
export interface NativeStrategyOptions {
  /** Name of the run (default `native`). */
  name?: string;
  /** Appended to the description after a semicolon (a limit worth knowing). */
  note?: string;
  /** Keep every evaluation in `log` (tests). */
  keepLog?: boolean;
}

/** Azure's native autoscale as a simulated strategy. */
export class NativeAutoscaleStrategy implements Strategy {
  readonly name: string;
  readonly description: string;
  readonly initial: SkuUnits;
  readonly pollMinutes = 1;
  readonly setting: NativeSetting;
  /** The evaluations so far, when `keepLog` was asked for (tests). */
  readonly log: (NativeEvaluation & { nowMs: number })[] = [];
  #lastActionMs = Number.NEGATIVE_INFINITY;
  readonly #keepLog: boolean;

  constructor(setting: NativeSetting, initialUnits: number, options: NativeStrategyOptions = {}) {
    this.name = options.name ?? "native";
    this.setting = setting;
    const ladder = nativeLadder(setting);
    const units = ladder.find((u) => u >= initialUnits) ?? (ladder[ladder.length - 1] as number);
    this.initial = { sku: setting.sku, units };
    const out = setting.rules
      .filter((r) => r.direction === "Increase")
      .map((r) => `${r.metric} ${opText(r.operator)} ${r.threshold}%`);
    const inn = setting.rules
      .filter((r) => r.direction === "Decrease")
      .map((r) => `${r.metric} ${opText(r.operator)} ${r.threshold}%`);
    this.description = `Azure autoscale on ${setting.sku} ${setting.minimum}–${setting.maximum}: out if ${out.join(" or ") || "never"}, in if ${inn.join(" and ") || "never"} (avg ${setting.timeWindowMinutes} min, cooldown ${setting.cooldownMinutes} min)${options.note ? `; ${options.note}` : ""}`;
    this.#keepLog = options.keepLog ?? false;
  }

  poll(ctx: PollContext): SkuUnits | undefined {
    if (ctx.scaling) return undefined;
    const inCooldown = ctx.nowMs < this.#lastActionMs + this.setting.cooldownMinutes * MINUTE_MS;
    const averages: Partial<Record<NativeMetricName, number>> = {};
    if (!inCooldown) {
      const from = ctx.nowMs - this.setting.timeWindowMinutes * MINUTE_MS;
      for (const metric of new Set(this.setting.rules.map((r) => r.metric))) {
        const avg = ctx.metrics.average(metric, from, ctx.nowMs);
        if (avg) averages[metric] = avg.value;
      }
    }
    const result = evaluateNative(this.setting, ctx.current.units, averages, inCooldown);
    if (this.#keepLog) this.log.push({ ...result, nowMs: ctx.nowMs });
    if (result.action === "None") return undefined;
    return { sku: this.setting.sku, units: result.units };
  }

  scaleStarted(nowMs: number): void {
    this.#lastActionMs = nowMs;
  }
}

function opText(op: NativeOperator): string {
  return op === "GreaterThan" ? ">" : op === "GreaterThanOrEqual" ? "≥" : op === "LessThan" ? "<" : "≤";
}
