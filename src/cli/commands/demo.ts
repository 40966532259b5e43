/**
 * `signalr-autoscaler demo`: the operator end to end on this machine, with nothing of the user's —
 * the local control plane (built on first use) or `--kubeconfig`, the Azure emulator replaying a
 * real traffic trace on a virtual clock, and the operator in process. See src/demo.
 */
import { basename, resolve } from "node:path";
import { type CapacityPolicy, PolicyError, parsePolicyYaml } from "../../api/index.js";
import {
  DEFAULT_TRACE,
  DEFAULT_TRACE_FOCUS_MS,
  type DemoResult,
  type DemoSettings,
  defaultWindowStart,
  formatSummary,
  isoMinute,
  runDemo,
  summaryJson,
  traceWindow,
} from "../../demo/index.js";
import { repoRoot } from "../../localcluster/index.js";
import { parseTrace, type Trace, TraceFormatError } from "../../traffic/index.js";
import { type CliCommand, type CommonOptions, defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { durationFlag, numberFlag, readFlagFile, timeFlag } from "../flags.js";
import type { CliIo } from "../io.js";
import { formatJson } from "../output.js";
import { readDemoGroup } from "./demo-replicas.js";

const DEFAULT_POLICY = "examples/demo.yaml";
const DEFAULT_NAMESPACE = "signalr-autoscaler-demo";

interface DemoFlags extends CommonOptions {
  kubeconfig?: string;
  context?: string;
  namespace: string;
  policy?: string;
  trace?: string;
  start?: string;
  duration: string;
  peakConnections: string;
  speed: string;
  scaleDuration: string;
  ingestionDelay: string;
  out: string;
  /** false with --no-prometheus. */
  prometheus: boolean;
  replicas?: string;
  failover?: string;
  failoverDuration: string;
  failoverCause: string;
  /** false with --no-failover-rule. */
  failoverRule: boolean;
}

/** A file the user named (relative to the working directory) or a default (relative to the project). */
function filePath(given: string | undefined, fallback: string, cwd: string): string {
  return given === undefined ? resolve(repoRoot(), fallback) : resolve(cwd, given);
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** `--policy` (default `examples/demo.yaml`) in `namespace`; it must be mode Auto. @throws UsageError */
async function readDemoPolicy(flags: DemoFlags, policyPath: string): Promise<CapacityPolicy> {
  let policy: CapacityPolicy;
  try {
    const parsed = parsePolicyYaml(await readFlagFile("policy", policyPath, flags.policy ?? DEFAULT_POLICY));
    policy = { ...parsed, metadata: { ...parsed.metadata, namespace: flags.namespace } };
  } catch (err) {
    if (err instanceof PolicyError) throw new UsageError(`--policy: ${err.errors.join("; ") || err.message}`);
    throw err;
  }
  if (policy.spec.mode !== "Auto") {
    throw new UsageError(`--policy: the demo needs mode Auto, the policy has ${policy.spec.mode}`);
  }
  return policy;
}

/**
 * The part of `--trace` (default the project's) the demo replays: `--start` (default the trace's
 * busiest stretch) for `--duration` (10 minutes to 31 days). @throws UsageError
 */
async function readDemoWindow(flags: DemoFlags, tracePath: string): Promise<ReturnType<typeof traceWindow>> {
  let trace: Trace;
  try {
    trace = parseTrace(
      await readFlagFile("trace", tracePath, flags.trace ?? DEFAULT_TRACE),
      flags.trace ?? DEFAULT_TRACE,
    );
  } catch (err) {
    if (err instanceof TraceFormatError) throw new UsageError(`--trace ${err.message}`);
    throw err;
  }
  const durationMs = durationFlag("duration", flags.duration);
  if (durationMs < 10 * 60_000) throw new UsageError("--duration must be at least 10m");
  if (durationMs > 31 * 86_400_000) throw new UsageError("--duration must be at most 31 days");
  const startMs =
    flags.start !== undefined
      ? timeFlag("start", flags.start)
      : defaultWindowStart(trace, durationMs, flags.trace === undefined ? DEFAULT_TRACE_FOCUS_MS : undefined);
  try {
    return traceWindow(trace, startMs, durationMs);
  } catch (err) {
    if (err instanceof RangeError) throw new UsageError(`--start/--duration: ${err.message}`);
    throw err;
  }
}

/** Everything the demo runs with, checked from the flags before anything starts. @throws UsageError */
async function demoSettings(
  flags: DemoFlags,
  io: CliIo,
): Promise<{ settings: DemoSettings; tracePath: string; policyPath: string }> {
  if (!NAMESPACE.test(flags.namespace) || flags.namespace.length > 63)
    throw new UsageError(`--namespace "${flags.namespace}" is not a valid namespace name`);
  const policyPath = filePath(flags.policy, DEFAULT_POLICY, io.cwd);
  const policy = await readDemoPolicy(flags, policyPath);
  const tracePath = filePath(flags.trace, DEFAULT_TRACE, io.cwd);
  const window = await readDemoWindow(flags, tracePath);
  const peakConnections = numberFlag("peak-connections", flags.peakConnections, {
    exclusiveMin: 0,
  }) as number;
  const group = readDemoGroup(flags, policy, window, peakConnections);
  const speed = numberFlag("speed", flags.speed, { min: 1, max: 100_000 }) as number;
  const scaleDurationMs = durationFlag("scale-duration", flags.scaleDuration);
  const ingestionDelayMs = durationFlag("ingestion-delay", flags.ingestionDelay);
  const outDir = resolve(io.cwd, flags.out);
  const kubeconfig = flags.kubeconfig !== undefined ? resolve(io.cwd, flags.kubeconfig) : undefined;
  const settings: DemoSettings = {
    policy,
    window,
    traceLabel: basename(flags.trace ?? DEFAULT_TRACE),
    peakConnections,
    speed,
    scaleDurationMs,
    ingestionDelayMs,
    outDir,
    kubeconfig,
    context: flags.context,
    verbose: flags.verbose,
    prometheus: flags.prometheus,
    ...(group ? { group } : {}),
  };
  return { settings, tracePath, policyPath };
}

/** The summary of a finished demo: JSON on stdout with `--output json`, else the text summary. */
function demoReport(
  result: DemoResult,
  s: DemoSettings,
  files: { policyPath: string; tracePath: string },
  json: boolean,
): string {
  const { policy, window } = s;
  if (json) {
    return formatJson(
      summaryJson(result, {
        policy: { name: policy.metadata.name, namespace: policy.metadata.namespace, file: files.policyPath },
        trace: {
          file: files.tracePath,
          start: isoMinute(window.startMs),
          end: isoMinute(window.startMs + window.durationMs),
        },
        peakConnections: s.peakConnections,
        speed: s.speed,
        scaleDurationSeconds: s.scaleDurationMs / 1000,
        ingestionDelaySeconds: s.ingestionDelayMs / 1000,
      }),
    );
  }
  let text = `\n${formatSummary(result)}`;
  if (!result.cluster.local) {
    text +=
      `\nThe namespace ${result.cluster.namespace} stays in the cluster; remove it with ` +
      `kubectl delete namespace ${result.cluster.namespace}\n`;
  }
  return text;
}

async function runDemoCommand(flags: DemoFlags, io: CliIo): Promise<void> {
  // Everything the user typed is checked before anything starts.
  const { settings, ...files } = await demoSettings(flags, io);
  const json = flags.output === "json";
  const liveWrite = json ? io.stderr : io.stdout;
  const stream = json ? process.stderr : process.stdout;
  const term = io.env["TERM"];
  const tty = stream.isTTY === true && term !== undefined && term !== "dumb";

  // The first Ctrl-C stops the demo gracefully through io.signal (main.ts); a second one quits.
  const onStop = (): void => liveWrite("\nstopping (Ctrl-C again to quit at once)…\n");
  io.signal.addEventListener("abort", onStop, { once: true });
  try {
    const result = await runDemo(settings, {
      live: { write: liveWrite, tty },
      log: io.stderr,
      signal: io.signal,
      env: { ...io.env },
    });
    if (!result.started) liveWrite("Stopped before the traffic started; nothing to summarize.\n");
    else io.stdout(demoReport(result, settings, files, json));
  } finally {
    io.signal.removeEventListener("abort", onStop);
  }
}

/** The `demo` subcommand. */
export const demoCommand: CliCommand = defineCommand<DemoFlags>({
  name: "demo",
  description:
    "Run the operator end to end on this machine: a local Kubernetes control plane (or --kubeconfig), " +
    "the Azure emulator replaying a real traffic trace on a virtual clock, and the operator scaling " +
    "the instance and its app servers; prints a live view, then a summary, a CSV timeline and an SVG chart",
  commonOptions: "first",
  flags: (cmd) =>
    cmd
      .option("--kubeconfig <file>", "use this cluster instead of starting the local control plane")
      .option("--context <name>", "kubeconfig context (with --kubeconfig)")
      .option(
        "--namespace <name>",
        "namespace for the demo's Deployment and CapacityPolicy",
        DEFAULT_NAMESPACE,
      )
      .option("--policy <file>", `the CapacityPolicy to run (default ${DEFAULT_POLICY})`)
      .option("--trace <file>", `demand shape, a timestamp,value CSV (default ${DEFAULT_TRACE})`)
      .option(
        "--start <time>",
        "trace time to start at, UTC (default: the trace's flash crowd a little before the middle of the window)",
      )
      .option("--duration <duration>", "how much of the trace to replay, e.g. 24h, 6h, 90m", "24h")
      .option("--peak-connections <n>", "client connections at the window's largest value", "200000")
      .option("--speed <factor>", "virtual seconds per real second (720: a day in 2 minutes)", "720")
      .option("--scale-duration <duration>", "virtual time an ARM scale operation takes", "3m")
      .option("--ingestion-delay <duration>", "virtual time before a minute's metrics are complete", "2m")
      .option("--out <dir>", "where timeline.csv and chart.svg go", "demo-output")
      .option(
        "--no-prometheus",
        "leave the policy's leading signal out instead of running a real Prometheus (built on first use) for it",
      )
      .option(
        "--replicas <members>",
        "a geo-replica group instead of one instance: the policy's instance as the primary in the first member's region and a replica in each other's, each with its share of the demand and a policy of its own, e.g. eastus=0.5,westus=0.3,westeurope=0.2",
      )
      .option(
        "--failover <member@when>",
        "with --replicas: that member stops serving at the demand's peak (member@peak) or at a time (member@2015-04-14T23:00Z); its clients reconnect to the others",
      )
      .option("--failover-duration <duration>", "how long the failed member stays down", "60m")
      .option(
        "--failover-cause <cause>",
        'what ARM shows of it: stopped (resourceStopped "true"), outage (nothing: only its metrics stop) or endpointDisabled (a drain)',
        "stopped",
      )
      .option(
        "--no-failover-rule",
        "with --replicas: the members' policies without the Failover anticipation rule (spec.anticipation.failover.enabled false), to compare",
      ),
  action: runDemoCommand,
});
