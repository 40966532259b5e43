/**
 * The demo's replay: the emulator's clock runs at `speed` with the operator started on it until
 * the trace window has passed or the signal aborts. Every pass of the operator updates the live
 * status line and the app-server replica log; a sampler follows the instance's capacity. At the
 * end the clock stops and the operator is stopped (after its last poll cycle), so the emulator's
 * history is complete for the report.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { PassReport } from "../controller/operator.js";
import { type LiveView, passReason } from "./live.js";
import type { AnticipatedScaleOut, DemoIo, DemoSettings } from "./settings.js";
import { type DemoStage, type Started, untilAborted } from "./setup.js";

/** How the replay went. */
export interface Replay {
  /** The signal aborted it before the window had passed. */
  interrupted: boolean;
  /** Real seconds from the clock's start to its stop. */
  replaySeconds: number;
  /** The operator's passes: how many, how many failed, the virtual times of the first and the last. */
  passes: { count: number; failed: number; firstMs: number | undefined; lastMs: number | undefined };
  /** The scale-outs anticipation drove (an update sent, raised by `spec.anticipation`). */
  anticipated: AnticipatedScaleOut[];
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
  const { policy, window } = settings;
  const { clock, emulator, operator, tracker, replicaLog } = stage;
  const control = emulator.control;
  const resourceId = policy.spec.target.resourceId;
  const endMs = window.startMs + window.durationMs;
  const passes: Replay["passes"] = { count: 0, failed: 0, firstMs: undefined, lastMs: undefined };
  const anticipated: AnticipatedScaleOut[] = [];
  let armWrites = control.calls().armWrites;

  // Only the demo's own policy drives the live view and its counts (a person may add others).
  const demoKey = `${policy.metadata.namespace}/${policy.metadata.name}`;
  operator.onPass((report: PassReport) => {
    if (report.key !== demoKey) return;
    const now = clock.nowMs();
    passes.count++;
    if (report.error !== undefined) passes.failed++;
    passes.firstMs ??= now;
    passes.lastMs = now;
    tracker.observe();
    const decision = report.result?.decision;
    const desired = decision?.desired;
    // An update was sent in this pass when the emulator counted another ARM write.
    const writes = control.calls().armWrites;
    const sent = writes > armWrites;
    armWrites = writes;
    if (sent && decision?.anticipation?.applied && desired && desired.units > decision.current.units) {
      anticipated.push({
        time: now,
        rule: decision.anticipation.drivenBy ?? "Trend",
        from: { sku: decision.current.sku, units: decision.current.units },
        to: { sku: desired.sku, units: desired.units },
      });
    }
    const after =
      decision?.action === "Scale" && decision.desired?.replicas !== undefined
        ? decision.desired.replicas
        : decision?.current.replicas;
    if (after !== undefined && after !== replicaLog[replicaLog.length - 1]?.replicas) {
      replicaLog.push({ time: now, replicas: after });
    }
    const view = control.instance(resourceId);
    const traffic = control.traffic(resourceId);
    if (!view) return;
    live.status({
      time: now,
      loadPercent: traffic?.serverLoadPercent,
      connections: traffic?.clientConnections,
      demand: traffic?.offeredConnections,
      sku: view.sku,
      units: view.units,
      updatingTo: view.operation?.status === "Running" ? view.operation.target : undefined,
      replicas: replicaLog[replicaLog.length - 1]?.replicas,
      reason: passReason(report),
    });
  });
  started.sampler = setInterval(() => tracker.observe(), 20);

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
  tracker.observe();

  return { interrupted, replaySeconds: (replayEnded - replayStarted) / 1000, passes, anticipated };
}
