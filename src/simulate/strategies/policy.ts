/**
 * The policy under test, run through the real decision (`autoscale/decide.ts`) exactly as the
 * controller calls it: at each poll, `decide({ policy, samples, current, history, now })` with
 * the metric buckets Azure Monitor would return then, the instance's current capacity (the old
 * one while a scale is in flight) and the history the previous decision returned. When the
 * engine starts a scale the decision asked for, the history records it (`recordScale`, at the
 * time the update was accepted), as the controller does after ARM accepts the update.
 *
 * - Samples: the buckets from the start of the decision's window (`cutoff − window`, see
 *   `autoscale/samples.ts`) to now that are ingested by now — the newest ones still filling
 *   are passed too, and the decision ignores them as it does in the cluster. Nothing older is
 *   passed, so each poll costs the same however long the run.
 * - The policy is run in mode Auto: a Recommend or Paused policy is simulated as if it acted
 *   (the point is to see what it would do); `overrides` says so.
 * - App servers: a desired replica count (or HPA floor) is taken as applied at once; it does not
 *   change the instance's capacity.
 * - Polls: every `pollIntervalSeconds`, rounded to whole minutes (at least one a minute; metrics
 *   have a one-minute grain).
 */

import { PAUSE_ANNOTATION } from "../../api/constants.js";
import type { Decision, DecisionPolicy } from "../../autoscale/decide.js";
import { decide, policyTimes } from "../../autoscale/decide.js";
import { type DecisionHistory, emptyHistory, recordScale } from "../../autoscale/history.js";
import type { SkuUnits } from "../../capacity/index.js";
import { MINUTE_MS, type PollContext, type Strategy } from "../engine.js";

/** The policy's decisions as a simulated strategy. */
export class PolicyStrategy implements Strategy {
  readonly name = "policy";
  readonly description: string;
  readonly initial: SkuUnits;
  readonly pollMinutes: number;
  /** What was changed to simulate the policy (mode, pause annotation). */
  readonly overrides: string[] = [];
  /** The last decision (tests and diagnostics). */
  lastDecision: Decision | undefined;
  /** Decisions that asked to scale, when `keepLog` was asked for. */
  readonly log: Decision[] = [];
  readonly #policy: DecisionPolicy;
  readonly #windowMs: number;
  readonly #delayMs: number;
  readonly #keepLog: boolean;
  #history: DecisionHistory = emptyHistory();
  #replicas: number | undefined;
  #hpaMinReplicas: number | undefined;

  constructor(policy: DecisionPolicy, initial: SkuUnits, options: { keepLog?: boolean } = {}) {
    const spec = structuredClone(policy.spec);
    if (spec.mode !== "Auto") {
      this.overrides.push(`mode ${spec.mode} simulated as Auto`);
      spec.mode = "Auto";
    }
    const annotations = { ...(policy.metadata?.annotations ?? {}) };
    if (annotations[PAUSE_ANNOTATION] !== undefined) {
      this.overrides.push(`annotation ${PAUSE_ANNOTATION} ignored`);
      delete annotations[PAUSE_ANNOTATION];
    }
    this.#policy = { spec, metadata: { ...(policy.metadata ?? {}), annotations } };
    const times = policyTimes(spec);
    this.#windowMs = times.windowSeconds * 1000;
    this.#delayMs = times.ingestionDelaySeconds * 1000;
    this.pollMinutes = Math.max(1, Math.round(spec.pollIntervalSeconds / 60));
    this.initial = { ...initial };
    const name = policy.metadata?.name;
    this.description = `policy${name ? ` ${name}` : ""}: ${spec.skus.join("/")} ${spec.units.min}–${spec.units.max} units`;
    this.#keepLog = options.keepLog ?? false;
  }

  /** The history the next decision gets. */
  get history(): DecisionHistory {
    return this.#history;
  }

  poll(ctx: PollContext): SkuUnits | undefined {
    const cutoff = Math.floor((ctx.nowMs - this.#delayMs) / MINUTE_MS) * MINUTE_MS;
    const samples = ctx.metrics.samples(cutoff - this.#windowMs, ctx.nowMs);
    const current: Parameters<typeof decide>[0]["current"] = {
      sku: ctx.current.sku,
      units: ctx.current.units,
    };
    if (this.#replicas !== undefined) current.replicas = this.#replicas;
    if (this.#hpaMinReplicas !== undefined) current.hpaMinReplicas = this.#hpaMinReplicas;
    const d = decide({ policy: this.#policy, samples, current, history: this.#history, now: ctx.nowMs });
    this.#history = d.history;
    this.lastDecision = d;
    if (d.desired?.replicas !== undefined) this.#replicas = d.desired.replicas;
    if (d.desired?.hpaMinReplicas !== undefined) this.#hpaMinReplicas = d.desired.hpaMinReplicas;
    if (d.action !== "Scale" || !d.desired) return undefined;
    const want = { sku: d.desired.sku, units: d.desired.units };
    if (want.sku === ctx.current.sku && want.units === ctx.current.units) return undefined;
    if (this.#keepLog) this.log.push(d);
    return want;
  }

  scaleStarted(nowMs: number, from: SkuUnits, to: SkuUnits): void {
    this.#history = recordScale(this.#history, { time: new Date(nowMs).toISOString(), from, to });
  }
}
