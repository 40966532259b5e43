/**
 * A replica group backtested: an instance and its geo-replicas, each with its own share of the
 * demand, each running the same policy through the same planner as the operator
 * (`strategies/policy.ts`), in lockstep — and a failover: a member stops serving and its clients
 * reconnect to the others. Pure: the demand, the shares, the failover and the seed are arguments.
 *
 * Per minute `m` (`t = start + m · 1 min`), as `engine.ts` for one instance, for every member:
 * 1. scales in flight whose time has come complete;
 * 2. at a poll, every member's strategy is polled at `t` with its own metrics and a
 *    {@link ReplicaGroupObservation} of what the operator could see then — every member's ARM
 *    view now (SKU, units, and the serving flag, which shows a failover at once) and its
 *    connection buckets ingested by `t` (the Maximum, the last {@link OBSERVED_MINUTES} minutes,
 *    through the ingestion delay as its own metrics are) — all built before any member acts this
 *    minute;
 * 3. each member serves its demand of the minute at its capacity (its own noise channels).
 *
 * **Demand** (`traffic/failover.ts`, as the emulator's geo-replicas). Member `i` has `shares[i]`
 * of the trace's demand (shares normalized to 1; the first member is the primary). During a
 * failover of member `f` from `startMs` for `durationMs`, its demand is 0 and its ARM serving flag
 * false; its clients reconnect within seconds — from the failure's minute on — to the serving
 * members, split by their own demand (`shares[i] ÷ (1 − shares[f])` of `f`'s demand each). When it
 * serves again its clients come back as they reconnect: the share of them still away after `τ`
 * (at the minute's middle) is `e^(−τ ÷ lifetime)` (the mean connection lifetime; a client stays on
 * the member it reconnected to until its connection ends).
 *
 * **Runs.** The same group, seed and failover twice: with the Failover rule
 * (`spec.anticipation.failover.enabled: true`) and without it (`false`); and, with a failover, a
 * third time without the failover (the baseline: what the members refuse in its minutes anyway,
 * e.g. at a burst). `simulate --replicas` reports them side by side ({@link replicaComparisonSteps}).
 */
import type { DecisionPolicy } from "../autoscale/decide.js";
import type { ReplicaGroupObservation, ReplicaMember } from "../autoscale/failover.js";
import type { SkuUnits } from "../capacity/index.js";
import { groupOffered, memberAway, memberDown, type ServingGap } from "../traffic/index.js";
import { policySizes, policyStart } from "./compare.js";
import { MINUTE_MS, SimulatedInstance, type SimulationSetup, type StrategyRun, sizeAt } from "./engine.js";
import { summarize, type UnitPrices } from "./metrics.js";
import { oracleRun } from "./oracle.js";
import { PolicyStrategy } from "./strategies/policy.js";

/** Minutes of each member's connection buckets the group observation carries. */
export const OBSERVED_MINUTES = 15;

/** One member of a simulated replica group. */
export interface GroupMember {
  /** Its name, used as its region and (for a replica) its replica name: `eastus`. */
  name: string;
  /** Its share of the demand, 0–1 (normalized over the group). */
  share: number;
}

/** A failover: `member` stops serving at `startMs` for `durationMs`. */
export interface FailoverScenario {
  member: string;
  startMs: number;
  durationMs: number;
}

/** Everything a replica group's run depends on. */
export interface ReplicaGroupInput extends SimulationSetup {
  policy: DecisionPolicy;
  /** The members, the primary first; shares are normalized. */
  members: readonly GroupMember[];
  failover?: FailoverScenario;
  /** Mean client connection lifetime, ms: how fast clients come back to a recovered member. */
  lifetimeMs: number;
  /** Each member's size at the start, in member order. */
  initial: readonly SkuUnits[];
}

/** One member's run. */
export interface MemberRun {
  name: string;
  role: "Primary" | "Replica";
  resourceId: string;
  share: number;
  /** Its client demand per minute (after the failover's moves). */
  demand: Float64Array;
  run: StrategyRun;
}

/** The members' shares normalized to 1. @throws RangeError when one is not > 0 or there are fewer than 2. */
export function normalizedShares(members: readonly GroupMember[]): GroupMember[] {
  if (members.length < 2) throw new RangeError("a replica group has at least 2 members");
  for (const m of members) {
    if (!(m.share > 0 && Number.isFinite(m.share)))
      throw new RangeError(`the share of ${m.name} must be a number > 0`);
  }
  const total = members.reduce((a, m) => a + m.share, 0);
  return members.map((m) => ({ name: m.name, share: m.share / total }));
}

/** Whether `member` is failed (not serving) at `tMs`. */
function failedAt(failover: FailoverScenario | undefined, member: string, tMs: number): boolean {
  return (
    failover !== undefined &&
    failover.member === member &&
    tMs >= failover.startMs &&
    tMs < failover.startMs + failover.durationMs
  );
}

/**
 * Each member's client demand per minute (see the module comment), by the traffic model the
 * emulator's geo-replicas use (`traffic/failover.ts`): its share, the failed member's clients on
 * the others (split by their own demand) while it is down, drifting back after it serves again.
 */
export function memberDemands(
  demand: Float64Array,
  startMs: number,
  members: readonly GroupMember[],
  failover: FailoverScenario | undefined,
  lifetimeMs: number,
): Float64Array[] {
  const out = members.map(() => new Float64Array(demand.length));
  const gaps = members.map((m): ServingGap[] =>
    failover && failover.member === m.name
      ? [{ fromMs: failover.startMs, toMs: failover.startMs + failover.durationMs }]
      : [],
  );
  for (let m = 0; m < demand.length; m++) {
    const d = demand[m] as number;
    const t = startMs + m * MINUTE_MS;
    const offered = groupOffered(
      members.map((member, i) => ({
        own: member.share * d,
        down: memberDown(gaps[i] as ServingGap[], t),
        away: memberAway(gaps[i] as ServingGap[], t, lifetimeMs / 1000),
      })),
    );
    offered.forEach((o, i) => {
      (out[i] as Float64Array)[m] = Math.round(o);
    });
  }
  return out;
}

/** The canonical ID of a member: the policy's target for the primary, its replica below it otherwise. */
export function memberId(policy: DecisionPolicy, index: number, name: string): string {
  const primary = policy.spec.target.resourceId;
  return index === 0 ? primary : `${primary}/replicas/${name}`;
}

/** The group as the operator reads it at `nowMs` (see the module comment, step 2). */
function observe(
  instances: readonly SimulatedInstance[],
  members: readonly GroupMember[],
  ids: readonly string[],
  failover: FailoverScenario | undefined,
  nowMs: number,
): ReplicaMember[] {
  return instances.map((inst, i) => {
    const member = members[i] as GroupMember;
    const failed = failedAt(failover, member.name, nowMs);
    const connections = inst.metrics
      .samples(nowMs - OBSERVED_MINUTES * MINUTE_MS, nowMs)
      .flatMap((s) =>
        typeof s.connections === "number"
          ? [{ startMs: (s.time as Date).getTime(), value: s.connections }]
          : [],
      );
    return {
      resourceId: ids[i] as string,
      role: i === 0 ? "Primary" : "Replica",
      location: member.name,
      serving: !failed,
      ...(failed ? { notServingReason: 'resourceStopped is "true"' } : {}),
      sku: inst.current.sku,
      units: inst.current.units,
      connections,
    };
  });
}

/**
 * The policy with the Failover rule on or off, its other failover settings (the reserve) kept; a
 * policy without spec.anticipation is left as it is.
 */
export function withFailoverRule(policy: DecisionPolicy, enabled: boolean): DecisionPolicy {
  const spec = structuredClone(policy.spec);
  if (spec.anticipation) spec.anticipation.failover = { ...spec.anticipation.failover, enabled };
  return { ...policy, spec };
}

/**
 * The group's run, as steps (see the module comment): yields the minutes done every `chunk`
 * minutes and returns each member's run, in member order.
 */
export function* replicaGroupSimulation(
  input: ReplicaGroupInput,
  chunk = 4096,
): Generator<number, MemberRun[], void> {
  const members = normalizedShares(input.members);
  const minutes = input.demand.length;
  const demands = memberDemands(input.demand, input.startMs, members, input.failover, input.lifetimeMs);
  const ids = members.map((m, i) => memberId(input.policy, i, m.name));
  const instances = members.map((m, i) => {
    const initial = input.initial[i] ?? (input.initial[0] as SkuUnits);
    const strategy = new PolicyStrategy(input.policy, initial, {
      name: m.name,
      disconnection: input.disconnection,
    });
    return new SimulatedInstance(strategy, { ...input, demand: demands[i] as Float64Array }, i);
  });
  for (let m = 0; m < minutes; m++) {
    const nowMs = input.startMs + m * MINUTE_MS;
    for (const inst of instances) inst.completeDue(nowMs);
    const polled = instances.filter((inst) => m % inst.pollMinutes === 0);
    if (polled.length > 0) {
      const seen = observe(instances, members, ids, input.failover, nowMs);
      for (const inst of polled) {
        const i = instances.indexOf(inst);
        const replicaGroup: ReplicaGroupObservation = { self: ids[i] as string, members: seen };
        inst.poll(m, nowMs, { replicaGroup });
      }
    }
    instances.forEach((inst, i) => {
      inst.serve(m, (demands[i] as Float64Array)[m] as number);
    });
    if ((m + 1) % chunk === 0 && m + 1 < minutes) yield m + 1;
  }
  return instances.map((inst, i) => ({
    name: (members[i] as GroupMember).name,
    role: i === 0 ? "Primary" : "Replica",
    resourceId: ids[i] as string,
    share: (members[i] as GroupMember).share,
    demand: demands[i] as Float64Array,
    run: inst.run,
  }));
}

/** The figures of one member's run (or the group's, summed), whole and during the failover. */
export interface MemberFigures {
  name: string;
  /** Minutes with a refused connection (the group's: minutes in which any member refused). */
  minutesRefused: number;
  refusedConnectionMinutes: number;
  unitHours: number;
  clientsDisconnected: number;
  /** The same two during the failover `[start, start + duration)`; 0 without one. */
  failoverMinutesRefused: number;
  failoverRefusedConnectionMinutes: number;
  /**
   * Minutes from the failure to this member's first scale-out started at or after it (a survivor;
   * undefined for the failed member, without a failover, or when it never scaled out during it).
   */
  firstScaleOutMinutes?: number;
  /**
   * A scale-out this member had in flight when the failure came, minutes before it (ARM takes one
   * update at a time: the next waits for its completion); undefined when none was.
   */
  inFlightAtFailureMinutes?: number;
}

/** What one member refused in the minutes `[from, to)`: minutes and connection-minutes. */
function refusedIn(
  run: StrategyRun,
  from: number,
  to: number,
): { minutes: number; connectionMinutes: number } {
  let minutes = 0;
  let connectionMinutes = 0;
  for (let m = Math.max(0, from); m < Math.min(to, run.refused.length); m++) {
    const r = run.refused[m] as number;
    if (r > 0) {
      minutes++;
      connectionMinutes += r;
    }
  }
  return { minutes, connectionMinutes };
}

/** The failover's minutes `[from, to)` as indexes of the run (0, 0 without one). */
function failoverMinutes(startMs: number, failover: FailoverScenario | undefined): [number, number] {
  if (!failover) return [0, 0];
  const from = Math.round((failover.startMs - startMs) / MINUTE_MS);
  return [from, from + Math.round(failover.durationMs / MINUTE_MS)];
}

/** A scale-out in flight at the failure: how many minutes before it it started. */
function inFlightAt(run: StrategyRun, failover: FailoverScenario): number | undefined {
  const op = run.operations.find(
    (o) => o.startedMs < failover.startMs && o.completedMs > failover.startMs && o.to.units > o.from.units,
  );
  return op ? (failover.startMs - op.startedMs) / MINUTE_MS : undefined;
}

/** The first scale-out a member started at or after the failure, minutes after it. */
function firstScaleOut(run: StrategyRun, failover: FailoverScenario): number | undefined {
  const op = run.operations.find(
    (o) =>
      o.startedMs >= failover.startMs &&
      o.startedMs < failover.startMs + failover.durationMs &&
      o.to.units > o.from.units,
  );
  return op ? (op.startedMs - failover.startMs) / MINUTE_MS : undefined;
}

/** Each member's figures, then the group's (`total`), see {@link MemberFigures}. */
export function groupFigures(
  runs: readonly MemberRun[],
  startMs: number,
  failover: FailoverScenario | undefined,
  prices: UnitPrices,
): MemberFigures[] {
  const [from, to] = failoverMinutes(startMs, failover);
  const rows: MemberFigures[] = runs.map((r) => {
    const s = summarize(r.run, { loadTargetPercent: 100, prices });
    const during = refusedIn(r.run, from, to);
    const survivor = failover && failover.member !== r.name ? failover : undefined;
    const first = survivor && firstScaleOut(r.run, survivor);
    const inFlight = survivor && inFlightAt(r.run, survivor);
    return {
      name: r.name,
      minutesRefused: s.minutesRefused,
      refusedConnectionMinutes: s.refusedConnectionMinutes,
      unitHours: s.totalUnitHours,
      clientsDisconnected: s.clientsDisconnected,
      failoverMinutesRefused: during.minutes,
      failoverRefusedConnectionMinutes: during.connectionMinutes,
      ...(first !== undefined ? { firstScaleOutMinutes: first } : {}),
      ...(inFlight !== undefined ? { inFlightAtFailureMinutes: inFlight } : {}),
    };
  });
  const minutes = runs[0]?.run.refused.length ?? 0;
  const anyRefused = (m: number) => runs.some((r) => (r.run.refused[m] as number) > 0);
  let union = 0;
  let unionDuring = 0;
  for (let m = 0; m < minutes; m++) {
    if (!anyRefused(m)) continue;
    union++;
    if (m >= from && m < to) unionDuring++;
  }
  const sum = (f: (x: MemberFigures) => number) => rows.reduce((a, x) => a + f(x), 0);
  rows.push({
    name: "total",
    minutesRefused: union,
    refusedConnectionMinutes: sum((x) => x.refusedConnectionMinutes),
    unitHours: sum((x) => x.unitHours),
    clientsDisconnected: sum((x) => x.clientsDisconnected),
    failoverMinutesRefused: unionDuring,
    failoverRefusedConnectionMinutes: sum((x) => x.failoverRefusedConnectionMinutes),
  });
  return rows;
}

/** One of the two runs of a comparison: the Failover rule on or off. */
export interface GroupRun {
  failoverRule: boolean;
  members: MemberRun[];
  /** Each member's figures, then the group's (`total`). */
  figures: MemberFigures[];
}

/** What {@link replicaComparisonSteps} returns. */
export interface ReplicaComparison {
  members: GroupMember[];
  failover: FailoverScenario | undefined;
  /** Minutes between two polls of the policy. */
  pollMinutes: number;
  initial: SkuUnits[];
  /** With the Failover rule, then without it. */
  runs: [GroupRun, GroupRun];
  /**
   * The same group without the failover (with a failover only): what the members refuse anyway in
   * its minutes — the rest of what the two runs refuse then is the failover's doing.
   */
  baseline?: GroupRun;
}

/** A replica comparison's input: the group's, with each member's start to be found when not given. */
export interface ReplicaComparisonInput extends Omit<ReplicaGroupInput, "initial"> {
  prices: UnitPrices;
  /** Load target the starting sizes are chosen at, % (the oracle's). */
  loadTargetPercent: number;
  /** Each member's size at the start; default: its first minute's oracle size within the policy's bounds. */
  initial?: readonly SkuUnits[];
}

/**
 * The group with the Failover rule and without it (same demand, seed and failover), and without
 * the failover (the baseline, when there is one), as steps: yields member-minutes done of the
 * total (runs × members × minutes).
 */
export function* replicaComparisonSteps(
  input: ReplicaComparisonInput,
): Generator<{ done: number; total: number }, ReplicaComparison, void> {
  const members = normalizedShares(input.members);
  const minutes = input.demand.length;
  if (minutes === 0) throw new RangeError("nothing to simulate: the demand has no minutes");
  const sizes = policySizes(input.policy);
  const firstDemands = memberDemands(
    input.demand.subarray(0, 1),
    input.startMs,
    members,
    undefined,
    input.lifetimeMs,
  );
  const initial =
    input.initial ??
    firstDemands.map((d) => {
      const oracle = oracleRun({ demand: d, mix: input.mix, sizes, targetPercent: input.loadTargetPercent });
      return policyStart(input.policy, sizes, sizeAt(oracle, 0));
    });
  const variants: { enabled: boolean; failover: FailoverScenario | undefined }[] = [
    { enabled: true, failover: input.failover },
    { enabled: false, failover: input.failover },
    ...(input.failover ? [{ enabled: true, failover: undefined }] : []),
  ];
  const total = variants.length * minutes * members.length;
  const runs: GroupRun[] = [];
  const { failover: _, ...rest } = input;
  for (const v of variants) {
    const steps = replicaGroupSimulation({
      ...rest,
      ...(v.failover ? { failover: v.failover } : {}),
      members,
      initial,
      policy: withFailoverRule(input.policy, v.enabled),
    });
    const base = runs.length * minutes * members.length;
    let step = steps.next();
    while (!step.done) {
      yield { done: base + step.value * members.length, total };
      step = steps.next();
    }
    runs.push({
      failoverRule: v.enabled,
      members: step.value,
      // The baseline's figures are counted over the failover's minutes too.
      figures: groupFigures(step.value, input.startMs, input.failover, input.prices),
    });
    yield { done: base + minutes * members.length, total };
  }
  return {
    members,
    failover: input.failover,
    pollMinutes: Math.max(1, Math.round(input.policy.spec.pollIntervalSeconds / 60)),
    initial: [...initial],
    runs: [runs[0] as GroupRun, runs[1] as GroupRun],
    ...(runs[2] ? { baseline: runs[2] } : {}),
  };
}
