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
}

/** A file the user named (relative to the working directory) or a default (relative to the project). */
function filePath(given: string | undefined, fallback: string, cwd: string): string {
  return given === undefined ? resolve(repoRoot(), fallback) : resolve(cwd, given);
}

const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

async function runDemoCommand(flags: DemoFlags, io: CliIo): Promise<void> {
  // Everything the user typed is checked before anything starts.
  if (!NAMESPACE.test(flags.namespace) || flags.namespace.length > 63)
    throw new UsageError(`--namespace "${flags.namespace}" is not a valid namespace name`);
  const policyPath = filePath(flags.policy, DEFAULT_POLICY, io.cwd);
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
  const tracePath = filePath(flags.trace, DEFAULT_TRACE, io.cwd);
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
  let window: ReturnType<typeof traceWindow>;
  try {
    window = traceWindow(trace, startMs, durationMs);
  } catch (err) {
    if (err instanceof RangeError) throw new UsageError(`--start/--duration: ${err.message}`);
    throw err;
  }
  const peakConnections = numberFlag("peak-connections", flags.peakConnections, {
    exclusiveMin: 0,
  }) as number;
  const speed = numberFlag("speed", flags.speed, { min: 1, max: 100_000 }) as number;
  const scaleDurationMs = durationFlag("scale-duration", flags.scaleDuration);
  const ingestionDelayMs = durationFlag("ingestion-delay", flags.ingestionDelay);
  const outDir = resolve(io.cwd, flags.out);
  const kubeconfig = flags.kubeconfig !== undefined ? resolve(io.cwd, flags.kubeconfig) : undefined;

  const json = flags.output === "json";
  const liveWrite = json ? io.stderr : io.stdout;
  const stream = json ? process.stderr : process.stdout;
  const term = io.env["TERM"];
  const tty = stream.isTTY === true && term !== undefined && term !== "dumb";
  const traceLabel = basename(flags.trace ?? DEFAULT_TRACE);

  // The first Ctrl-C stops the demo gracefully through io.signal (main.ts); a second one quits.
  const onStop = (): void => liveWrite("\nstopping (Ctrl-C again to quit at once)…\n");
  io.signal.addEventListener("abort", onStop, { once: true });
  try {
    const result = await runDemo(
      {
        policy,
        window,
        traceLabel,
        peakConnections,
        speed,
        scaleDurationMs,
        ingestionDelayMs,
        outDir,
        kubeconfig,
        context: flags.context,
        verbose: flags.verbose,
        prometheus: flags.prometheus,
      },
      { live: { write: liveWrite, tty }, log: io.stderr, signal: io.signal, env: { ...io.env } },
    );
    if (!result.started) {
      liveWrite("Stopped before the traffic started; nothing to summarize.\n");
    } else if (json) {
      io.stdout(
        formatJson(
          summaryJson(result, {
            policy: { name: policy.metadata.name, namespace: policy.metadata.namespace, file: policyPath },
            trace: {
              file: tracePath,
              start: isoMinute(window.startMs),
              end: isoMinute(window.startMs + window.durationMs),
            },
            peakConnections,
            speed,
            scaleDurationSeconds: scaleDurationMs / 1000,
            ingestionDelaySeconds: ingestionDelayMs / 1000,
          }),
        ),
      );
    } else {
      io.stdout(`\n${formatSummary(result)}`);
      if (!result.cluster.local) {
        io.stdout(
          `\nThe namespace ${result.cluster.namespace} stays in the cluster; remove it with ` +
            `kubectl delete namespace ${result.cluster.namespace}\n`,
        );
      }
    }
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
      ),
  action: runDemoCommand,
});
