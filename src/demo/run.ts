/**
 * `demo`: the whole operator on a real traffic shape, on one machine.
 *
 * 1. A cluster: the local control plane (built on first use) or an existing one.
 * 2. The CRDs from crds/, a namespace, the app-server Deployment and the CapacityPolicy.
 * 3. The Azure emulator, its virtual clock stopped at the start of the trace window, with one
 *    instance whose demand replays the window scaled to the requested peak (with `--replicas`, a
 *    primary and its geo-replicas sharing it, a Deployment and a policy each; `--failover` stops
 *    one at its time and restores it after its duration).
 * 4. The operator, in this process, its clock following the emulator's; then the clock runs at
 *    `speed` until the window has passed (or the signal aborts).
 * 5. Live: a status line per change (or every half hour of virtual time) and the Kubernetes Events
 *    as the API server serves them.
 * 6. At the end (or when interrupted): the timeline from the emulator's history, minute by minute,
 *    its summary, a CSV and an SVG chart. Everything started is stopped.
 *
 * The set-up (1–3, and the operator of 4 built but not started; the Events of 5 with
 * `events.ts`) is `setup.ts`, the replay (4–5) `replay.ts`, the report (6, with the capacity
 * history of `tracker.ts`) `results.ts`; this module runs them in order and stops whatever they
 * started, whether the run ends, is interrupted or fails.
 */
import { LiveView } from "./live.js";
import { replayWindow } from "./replay.js";
import { reportDemo } from "./results.js";
import type { DemoIo, DemoResult, DemoSettings } from "./settings.js";
import { type Started, setUpDemo } from "./setup.js";
import { summarize } from "./timeline.js";
import { MINUTE_MS } from "./trace-window.js";

/** Real ms a live line waits for older ones the Events watch may still deliver. */
const LIVE_HOLD_REAL_MS = 500;

/** Runs the demo (see the module comment). */
export async function runDemo(settings: DemoSettings, io: DemoIo): Promise<DemoResult> {
  const wallStart = performance.now();
  // Lines wait half a real second of virtual time (6 min at ×720) to print in virtual-time order.
  const live = new LiveView(io.live, {
    everyMs: (settings.statusEveryMinutes ?? 30) * MINUTE_MS,
    holdMs: Math.max(MINUTE_MS, settings.speed * LIVE_HOLD_REAL_MS),
  });
  const started: Started = { eventsStop: new AbortController() };
  let result: DemoResult | undefined;
  try {
    const stage = await setUpDemo(settings, io, live, started);
    if (!stage) {
      result = notStarted(settings, started);
      return result;
    }
    const replay = await replayWindow(settings, io, live, stage, started);
    result = await reportDemo(settings, stage, replay);
    return result;
  } finally {
    live.finish();
    await stopAll(started);
    if (result) result.wallSeconds = (performance.now() - wallStart) / 1000;
  }
}

/** Stops whatever was started, the operator first and the cluster last; failures are ignored. */
async function stopAll(started: Started): Promise<void> {
  if (started.sampler) clearInterval(started.sampler);
  await started.operator?.stop(1000).catch(() => {});
  started.eventsStop.abort();
  await started.events?.stop().catch(() => {});
  await started.prometheus?.stop().catch(() => {});
  await started.emulator?.stop().catch(() => {});
  await started.cluster?.stop().catch(() => {});
}

/** The result of a run interrupted before the traffic started: nothing to summarize. */
function notStarted(settings: DemoSettings, started: Started): DemoResult {
  const { policy } = settings;
  return {
    started: false,
    interrupted: true,
    summary: summarize([], { loadTargetPercent: policy.spec.metrics.serverLoad?.targetPercent ?? 70 }),
    rows: [],
    files: undefined,
    replaySeconds: 0,
    wallSeconds: 0,
    operator: { passes: 0, failedPasses: 0, meanPassMs: 0, meanPassIntervalSeconds: 0 },
    azureCalls: { armReads: 0, armWrites: 0, getBatch: 0 },
    anticipation: { mode: policy.spec.anticipation?.mode ?? "Off", scaleOuts: [] },
    cluster: {
      local: started.cluster?.local !== undefined,
      kubeconfig: started.cluster?.kubeconfig ?? "",
      namespace: policy.metadata.namespace,
    },
  };
}
