/**
 * The demo's replay: the emulator's clock runs at `speed` with the operator started on it until
 * the trace window has passed or the signal aborts. Every pass of the operator updates the live
 * status line and the app-server replica log; a sampler follows the capacity of the instance (of
 * each member of a replica group). With `--failover`, the member stops serving at its time (the
 * emulator's failover action) and serves again after the duration. At the end the clock stops and
 * the operator is stopped (after its last poll cycle), so the emulator's history is complete for
 * the report.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { PassReport } from "../controller/operator.js";
import type { FailoverRecord } from "../emulator/state.js";
import { type LiveView, passReason, type StatusView } from "./live.js";
import type { AnticipatedScaleOut, DemoIo, DemoSettings } from "./settings.js";
import { type DemoStage, type StagedMember, type Started, untilAborted } from "./setup.js";

/** A scale-out a member's policy sent (`--replicas`): which member, when, from and to how many units. */
export interface SentScaleOut {
  member: string;
  /** Virtual ms ARM accepted it (the emulator's operation started). */
  time: number;
  fromUnits: number;
  toUnits: number;
}

/** How the replay went. */
export interface Replay {
  /** The signal aborted it before the window had passed. */
  interrupted: boolean;
  /** Real seconds from the clock's start to its stop. */
  replaySeconds: number;
  /**
   * The operator's passes of the demo's policies: how many, how many failed, the virtual times of
   * the first and the last.
   */
  passes: { count: number; failed: number; firstMs: number | undefined; lastMs: number | undefined };
  /** The scale-outs anticipation drove (an update sent, raised by `spec.anticipation`). */
  anticipated: AnticipatedScaleOut[];
  /** With `--replicas`: every scale-out the members' policies sent. */
  scaleOuts: SentScaleOut[];
  /** With `--failover`: the emulator's record of the failover (restoredMs set once restored). */
  failover?: FailoverRecord;
}

/** The status line of a member after its pass. */
function memberStatus(
  stage: DemoStage,
  member: StagedMember,
  now: number,
  report: PassReport,
  label: string | undefined,
): StatusView | undefined {
  const control = stage.emulator.control;
  const view = control.instance(member.resourceId);
  if (!view) return undefined;
  const traffic = control.traffic(member.resourceId);
  return {
    time: now,
    loadPercent: traffic?.serverLoadPercent,
    connections: traffic?.clientConnections,
    demand: traffic?.offeredConnections,
    sku: view.sku,
    units: view.units,
    updatingTo: view.operation?.status === "Running" ? view.operation.target : undefined,
    replicas: member.replicaLog[member.replicaLog.length - 1]?.replicas,
    reason: view.serving ? passReason(report) : `NotServing (${view.outage?.cause ?? "stopped"})`,
    ...(label !== undefined ? { member: label } : {}),
  };
}

/**
 * Whether a pass sent an update, and when ARM took it: with one instance, another ARM write since
 * the last pass (as the demo has always counted); with a group, a new operation on the member (its
 * start time), and whether it raises the member's units — its target against the capacity it
 * started from: the member's units while it runs, and once it has ended (a pass is reported in
 * real time, and at the demo's speed a 5-minute scale can end first) the size the pass decided
 * from.
 */
function sentDetector(stage: DemoStage, group: boolean) {
  const control = stage.emulator.control;
  let armWrites = control.calls().armWrites;
  const lastOp = new Map<string, string | undefined>(
    stage.members.map((m) => [m.resourceId, control.instance(m.resourceId)?.operation?.id]),
  );
  return (
    member: StagedMember,
    now: number,
    decidedFromUnits?: number,
  ): { sent: boolean; atMs: number; raised?: { fromUnits: number; toUnits: number } } => {
    if (!group) {
      const writes = control.calls().armWrites;
      const sent = writes > armWrites;
      armWrites = writes;
      return { sent, atMs: now };
    }
    const view = control.instance(member.resourceId);
    const op = view?.operation;
    const sent = op !== undefined && op.id !== lastOp.get(member.resourceId);
    lastOp.set(member.resourceId, op?.id);
    if (!op || !sent) return { sent: false, atMs: now };
    // Capacity changes when the operation completes: while it runs the view shows the units before it.
    const from = op.status === "Running" ? view?.units : decidedFromUnits;
    const raises = op.kind === "update" && from !== undefined && op.target.units > from;
    return {
      sent,
      atMs: op.startedMs,
      ...(raises ? { raised: { fromUnits: from, toUnits: op.target.units } } : {}),
    };
  };
}

/** Adds the app-server replica count a pass left to the member's log, when it changed. */
function logReplicas(member: StagedMember, report: PassReport, now: number): void {
  const decision = report.result?.decision;
  const after =
    decision?.action === "Scale" && decision.desired?.replicas !== undefined
      ? decision.desired.replicas
      : decision?.current.replicas;
  const log = member.replicaLog;
  if (after !== undefined && after !== log[log.length - 1]?.replicas)
    log.push({ time: now, replicas: after });
}

/**
 * Follows the operator's passes of the demo's policies: counts, the scale-outs sent (anticipated
 * ones, and with a group every one, by member), the app-server replica logs and the live status.
 */
function followPasses(
  settings: DemoSettings,
  live: LiveView,
  stage: DemoStage,
): Pick<Replay, "passes" | "anticipated" | "scaleOuts"> {
  const { clock, operator } = stage;
  const group = settings.group !== undefined;
  const passes: Replay["passes"] = { count: 0, failed: 0, firstMs: undefined, lastMs: undefined };
  const anticipated: AnticipatedScaleOut[] = [];
  const scaleOuts: SentScaleOut[] = [];
  const sentBy = sentDetector(stage, group);
  // Only the demo's own policies drive the live view and its counts (a person may add others).
  const byKey = new Map(
    stage.members.map((m) => [`${m.policy.metadata.namespace}/${m.policy.metadata.name}`, m]),
  );
  operator.onPass((report: PassReport) => {
    const member = byKey.get(report.key);
    if (!member) return;
    const now = clock.nowMs();
    passes.count++;
    if (report.error !== undefined) passes.failed++;
    passes.firstMs ??= now;
    passes.lastMs = now;
    member.tracker.observe();
    const decision = report.result?.decision;
    const desired = decision?.desired;
    const { sent, atMs, raised } = sentBy(member, now, decision?.current.units);
    if (raised) scaleOuts.push({ member: member.name, time: atMs, ...raised });
    if (sent && desired !== undefined && decision !== undefined && desired.units > decision.current.units) {
      const from = { sku: decision.current.sku, units: decision.current.units };
      if (decision.anticipation?.applied) {
        anticipated.push({
          time: now,
          rule: decision.anticipation.drivenBy ?? "Trend",
          from,
          to: { sku: desired.sku, units: desired.units },
          ...(group ? { member: member.name } : {}),
        });
      }
    }
    logReplicas(member, report, now);
    const status = memberStatus(stage, member, now, report, group ? member.name : undefined);
    if (status) live.status(status);
  });
  return { passes, anticipated, scaleOuts };
}

/** A virtual time as `HH:MM`. */
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/**
 * The failover of `settings.group.failover`, at its time on the virtual clock: the emulator's
 * failover action on the member, then its restore after the duration, each said in the live view.
 * `tick()` acts when the time has come; `record()` is the emulator's record once it failed.
 */
function failoverSchedule(settings: DemoSettings, live: LiveView, stage: DemoStage) {
  const plan = settings.group?.failover;
  const member = stage.members.find((m) => m.name === plan?.member);
  const control = stage.emulator.control;
  let record: FailoverRecord | undefined;
  let restored = false;
  const names = new Map(stage.members.map((m) => [m.resourceId.toLowerCase(), m.name]));
  const shown: Record<string, string> = {
    stopped: 'ARM shows resourceStopped "true"',
    outage: "ARM shows nothing: only its metrics stop",
    endpointDisabled: 'ARM shows regionEndpointEnabled "Disabled": a drain',
  };
  return {
    tick(): void {
      if (!plan || !member) return;
      const now = stage.clock.nowMs();
      if (!record && now >= plan.startMs) {
        record = control.failover(member.resourceId, { cause: plan.cause });
        const to = record.reconnects
          .map(
            (r) => `${names.get(r.resourceId.toLowerCase()) ?? r.resourceId} ${Math.round(r.share * 100)} %`,
          )
          .join(", ");
        const clients = Math.round(record.connections).toLocaleString("en-US");
        // A drain disconnects no one: new connections go elsewhere, its clients as theirs end.
        const moved =
          plan.cause === "endpointDisabled"
            ? `new connections go to ${to}; its ${clients} clients move as their connections end`
            : `its ${clients} clients reconnect to ${to}`;
        live.line(
          now,
          `${hhmm(now)}  failover  ${member.name} stops serving (${plan.cause}: ${shown[plan.cause]}); ` +
            `${moved}; restored at ${hhmm(plan.startMs + plan.durationMs)}`,
        );
      } else if (record && !restored && now >= plan.startMs + plan.durationMs) {
        restored = true;
        record = control.restore(member.resourceId);
        live.line(
          now,
          `${hhmm(now)}  restore   ${member.name} serves again; its clients drift back as their connections end`,
        );
      }
    },
    record: () => record,
  };
}

/** Replays the window (see the module comment). */
export async function replayWindow(
  settings: DemoSettings,
  io: DemoIo,
  live: LiveView,
  stage: DemoStage,
  started: Started,
): Promise<Replay> {
  const say = (text: string) => live.note(text);
  const { window } = settings;
  const { clock, operator } = stage;
  const endMs = window.startMs + window.durationMs;
  const followed = followPasses(settings, live, stage);
  const failover = failoverSchedule(settings, live, stage);
  const observeAll = () => {
    for (const m of stage.members) m.tracker.observe();
  };
  started.sampler = setInterval(observeAll, 20);
  const hours = window.durationMs / 3_600_000;
  const realSeconds = window.durationMs / settings.speed / 1000;
  say(
    `Replaying ${hours.toLocaleString("en-US", { maximumFractionDigits: 1 })} h of ${settings.traceLabel} ` +
      `(peak ${settings.peakConnections.toLocaleString("en-US")} connections) at ×${settings.speed}: ` +
      `about ${realSeconds < 90 ? `${Math.round(realSeconds)} s` : `${(realSeconds / 60).toFixed(1)} min`}. Ctrl-C stops early.`,
  );
  const replayStarted = performance.now();
  clock.setSpeed(settings.speed);
  await Promise.race([operator.start(), untilAborted(io.signal)]);

  // Until the window has passed or the signal aborts.
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      failover.tick();
      if (clock.nowMs() >= endMs || io.signal.aborted) {
        clearInterval(check);
        resolve();
      }
    }, 20);
  });
  clock.setSpeed(0);
  const replayEnded = performance.now();
  const interrupted = clock.nowMs() < endMs;
  live.finish();
  if (interrupted)
    say(`Interrupted at ${new Date(clock.nowMs()).toISOString().slice(11, 16)} (virtual); stopping.`);

  await operator.stop(3000);
  started.operator = undefined;
  // A poll cycle may still be reading Azure: let it finish before the emulator goes away (a
  // request cut off by the server leaves the SDK's timeout timer running until it expires).
  await sleep(250);
  clearInterval(started.sampler);
  started.sampler = undefined;
  observeAll();

  const record = failover.record();
  return {
    interrupted,
    replaySeconds: (replayEnded - replayStarted) / 1000,
    ...followed,
    ...(record ? { failover: record } : {}),
  };
}
