/**
 * A simple causal rule (`../rules.ts`) as a strategy of the engine itself: polled every minute
 * with the buckets `MetricHistory` lets through, it reads the newest one's connection count and
 * asks for what {@link RuleDecision} wants. The reference scores its rules with the tight engine
 * of `../rules.ts`; this strategy is the same decision on `engine.ts`, and the tests hold the two
 * to the same figures.
 */
import type { SkuUnits } from "../../capacity/index.js";
import { MINUTE_MS, type PollContext, type Strategy } from "../engine.js";
import { RuleDecision, type RuleSetup, type SimpleRule } from "../rules.js";

/** One rule, run by `engine.ts`. */
export class RuleStrategy implements Strategy {
  readonly name: string;
  readonly description: string;
  readonly initial: SkuUnits;
  readonly pollMinutes = 1;
  readonly #setup: RuleSetup;
  readonly #decision: RuleDecision;
  /** The size index of every minute polled so far. */
  readonly #sizes: number[] = [];

  constructor(rule: SimpleRule, setup: RuleSetup, name = "rule") {
    this.name = name;
    this.description = `simple rule: ${JSON.stringify(rule)}`;
    this.#setup = setup;
    this.#decision = new RuleDecision(rule, setup);
    this.initial = { ...(setup.sizes[setup.initial] as SkuUnits) };
  }

  #indexOf(size: SkuUnits): number {
    const i = this.#setup.sizes.findIndex((s) => s.units === size.units && s.sku === size.sku);
    if (i < 0) throw new RangeError(`${size.sku} × ${size.units} is not a size of the rule`);
    return i;
  }

  poll(ctx: PollContext): SkuUnits | undefined {
    const current = this.#indexOf(ctx.current);
    this.#sizes[ctx.minute] = current;
    const k = ctx.minute - this.#setup.lagMinutes;
    if (k < 0) return undefined;
    const bucket = ctx.metrics.startMs + k * MINUTE_MS;
    const [sample] = ctx.metrics.samples(bucket, ctx.nowMs);
    if (!sample || new Date(sample.time).getTime() !== bucket || sample.connections === null)
      return undefined;
    const want = this.#decision.want(ctx.minute, sample.connections, this.#sizes[k] as number, current);
    return this.#setup.sizes[want];
  }
}
