/**
 * The policy under test, run through the operator's own pass planner (`autoscale/pass.ts`): at
 * each poll, `planPass` with the metric buckets Azure Monitor would return then, the instance as
 * ARM would report it (the old size and `Updating` while a scale is in flight, `Succeeded` once it
 * completed) and the status the previous pass wrote; then `completePass` with what the engine did
 * (the update accepted when it sent one). The status it keeps is the operator's status, field for
 * field: the update in flight, its completion observed at the first poll after it, the history
 * (recorded at the completion, with when the update was sent), the recommendations.
 *
 * - Samples: the buckets from the start of the decision's window (`cutoff − window`, see
 *   `autoscale/samples.ts`) to now that are ingested by now — the newest ones still filling
 *   are passed too, and the decision ignores them as it does in the cluster. Nothing older is
 *   passed, so each poll costs the same however long the run.
 * - The policy is run in mode Auto: a Recommend or Paused policy is simulated as if it acted
 *   (the point is to see what it would do); `overrides` says so.
 * - App servers: a desired replica count (or HPA floor) is taken as applied at once; it does not
 *   change the instance's capacity.
 * - Demand history (a policy with `spec.anticipation.seasonal`, mode not Off): built from the
 *   replayed minutes (`../demand-history.ts`: peak connections and traffic per grain bucket over
 *   the last `historyDays`, only buckets complete by the poll, rebuilt hourly) and passed to the
 *   planner as the operator passes what it read from Azure Monitor. A run has no days before its
 *   start, so the forecast sees the days replayed so far.
 * - Leading signal (`spec.anticipation.leadingSignal`, mode not Off): at each poll, the app
 *   servers' value as Prometheus serves it then (`../app-servers.ts`: the negotiate rate or
 *   counter of the last whole minute, one scrape interval old, refused clients included; or the
 *   accepted connections), kept for 30 minutes and passed to the planner as the operator passes
 *   what it read from Prometheus. A run without app-server metrics (no arrivals in the setup)
 *   passes no reading: the signal reports itself unavailable.
 * - Replica group (a group's run, `../replicas.ts`): the poll's `replicaGroup` — every member's
 *   ARM view and connection buckets then — is passed to the planner as the operator passes what
 *   it read of the target's primary and replicas.
 * - Polls: every `pollIntervalSeconds`, rounded to whole minutes (at least one a minute; metrics
 *   have a one-minute grain). The operator looks every 15 s while an update runs, so it observes a
 *   completion up to a minute earlier than the simulation does.
 */

import { PAUSE_ANNOTATION } from "../../api/constants.js";
import type { CapacityPolicyStatus } from "../../api/index.js";
import type { Decision, DecisionPolicy } from "../../autoscale/decide.js";
import { policyTimes } from "../../autoscale/decide.js";
import type { DemandHistory } from "../../autoscale/demand-history.js";
import { type DecisionHistory, historyFromStatus } from "../../autoscale/history.js";
import { effectiveIngestionDelay } from "../../autoscale/ingestion.js";
import { keepReading, type LeadingObservation, type LeadingReading } from "../../autoscale/leading.js";
import {
  type AppServerResult,
  completePass,
  mergeStatus,
  type PassPlan,
  type PassResults,
  planPass,
} from "../../autoscale/pass.js";
import type { SkuUnits } from "../../capacity/index.js";
import type { DisconnectionModel } from "../../traffic/index.js";
import { ReplayedDemandHistory } from "../demand-history.js";
import { MINUTE_MS, type PollContext, type Strategy } from "../engine.js";

/** The policy's decisions as a simulated strategy. */
export class PolicyStrategy implements Strategy {
  readonly name: string;
  readonly description: string;
  readonly initial: SkuUnits;
  readonly pollMinutes: number;
  /** What was changed to simulate the policy (mode, pause annotation). */
  readonly overrides: string[] = [];
  /** The last decision (tests and diagnostics). */
  lastDecision: Decision | undefined;
  /** Decisions that asked to scale, when `keepLog` was asked for. */
  readonly log: Decision[] = [];
  /** Scale-outs sent ahead of the measured need (`spec.anticipation` Enabled), by rule. */
  readonly anticipated: Record<string, number> = {};
  readonly #policy: DecisionPolicy;
  readonly #windowMs: number;
  readonly #delaySeconds: number;
  readonly #keepLog: boolean;
  readonly #disconnection: DisconnectionModel | undefined;
  readonly #demandHistory: ReplayedDemandHistory | undefined;
  #status: Partial<CapacityPolicyStatus> = {};
  /** The leading signal's readings of the last 30 minutes (a policy with one). */
  #leading: LeadingReading[] | undefined;
  /** A plan whose update the engine has not confirmed yet. */
  #pending: PassPlan | undefined;

  /**
   * `options.name` names the run (default `policy`); `keepLog` keeps the decisions that scaled;
   * `disconnection` is the run's disconnection model, which the planner is told as the operator is
   * (`run --disconnection`).
   */
  constructor(
    policy: DecisionPolicy,
    initial: SkuUnits,
    options: { keepLog?: boolean; name?: string; disconnection?: DisconnectionModel | undefined } = {},
  ) {
    this.name = options.name ?? "policy";
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
    this.#delaySeconds = times.ingestionDelaySeconds;
    this.pollMinutes = Math.max(1, Math.round(spec.pollIntervalSeconds / 60));
    this.initial = { ...initial };
    const name = policy.metadata?.name;
    this.description = `policy${name ? ` ${name}` : ""}: ${spec.skus.join("/")} ${spec.units.min}–${spec.units.max} units`;
    this.#keepLog = options.keepLog ?? false;
    this.#disconnection = options.disconnection;
    const anticipation = spec.anticipation;
    if (anticipation?.seasonal && anticipation.mode !== "Off") {
      const { grain, historyDays } = anticipation.seasonal;
      this.#demandHistory = new ReplayedDemandHistory(grain, historyDays);
    }
    if (anticipation?.leadingSignal && anticipation.mode !== "Off") this.#leading = [];
  }

  /** The demand history the last pass got (a policy with a seasonal forecast), for tests. */
  lastDemandHistory: DemandHistory | undefined;

  /** The history the next pass reads (from the status the last pass wrote). */
  get history(): DecisionHistory {
    return historyFromStatus(this.#status);
  }

  /** The status the last pass wrote (conditions left out). */
  get status(): Partial<CapacityPolicyStatus> {
    return this.#status;
  }

  poll(ctx: PollContext): SkuUnits | undefined {
    // An update the engine did not send (it never refuses one the planner asks for).
    if (this.#pending) this.#complete(this.#pending, { update: { kind: "busy", message: "not sent" } });
    const delayMs = effectiveIngestionDelay(this.#delaySeconds, this.#status.ingestion) * 1000;
    const cutoff = Math.floor((ctx.nowMs - delayMs) / MINUTE_MS) * MINUTE_MS;
    const replicas = this.#status.current?.replicas;
    const hpa = this.#policy.spec.appServer?.horizontalPodAutoscalerName !== undefined;
    const plan = planPass({
      policy: this.#policy,
      status: this.#status,
      instance: {
        sku: ctx.current.sku,
        units: ctx.current.units,
        provisioningState: ctx.scaling ? "Updating" : "Succeeded",
        terminal: !ctx.scaling,
      },
      samples: ctx.metrics.samples(cutoff - this.#windowMs, ctx.nowMs),
      ...(this.#demandHistory ? { demandHistory: this.#demandHistoryAt(this.#demandHistory, ctx) } : {}),
      ...(this.#leading ? { leading: this.#leadingAt(this.#leading, ctx) } : {}),
      ...(replicas !== undefined ? { appServer: hpa ? { hpaMinReplicas: replicas } : { replicas } } : {}),
      ...(this.#disconnection ? { disconnection: this.#disconnection } : {}),
      ...(ctx.replicaGroup ? { replicaGroup: ctx.replicaGroup } : {}),
      now: ctx.nowMs,
    });
    this.lastDecision = plan.decision;
    if (!plan.update) {
      this.#complete(plan, {});
      return undefined;
    }
    if (this.#keepLog && plan.decision) this.log.push(plan.decision);
    this.#pending = plan;
    return { sku: plan.update.to.sku, units: plan.update.to.units };
  }

  #demandHistoryAt(history: ReplayedDemandHistory, ctx: PollContext): DemandHistory {
    const h = history.at(ctx.nowMs, ctx.metrics);
    this.lastDemandHistory = h;
    return h;
  }

  #leadingAt(readings: LeadingReading[], ctx: PollContext): LeadingObservation {
    const measures = this.#policy.spec.anticipation?.leadingSignal?.measures ?? "NewConnectionsPerSecond";
    keepReading(readings, ctx.appServers?.reading(measures, ctx.nowMs), ctx.nowMs);
    if (!ctx.appServers) {
      return { readings, error: { reason: "NoData", message: "the simulation has no app-server metrics" } };
    }
    return { readings };
  }

  scaleStarted(nowMs: number): void {
    const plan = this.#pending;
    const rule = plan?.update?.anticipated !== undefined ? plan.decision?.anticipation?.drivenBy : undefined;
    if (rule) this.anticipated[rule] = (this.anticipated[rule] ?? 0) + 1;
    if (plan)
      this.#complete(plan, { update: { kind: "accepted", startedAt: new Date(nowMs).toISOString() } });
  }

  #complete(plan: PassPlan, results: PassResults): void {
    this.#pending = undefined;
    const change = plan.appServer;
    let appServer: AppServerResult | undefined;
    if (change?.kind === "deployment") appServer = { kind: "deployment", replicas: change.replicas };
    else if (change) appServer = { kind: "hpa", applied: change.minReplicas, changed: true };
    const write = completePass(plan, { ...results, ...(appServer ? { appServer } : {}) });
    this.#status = mergeStatus(this.#status, write.patch);
  }
}
