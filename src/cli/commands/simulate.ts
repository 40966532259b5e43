/**
 * `signalr-autoscaler simulate`: backtests a CapacityPolicy on a traffic trace — or on an
 * instance's last days of connections read from Azure Monitor (`--resource-id`, through the
 * operator's history reader) — against Azure's native autoscale (on Premium_P1 and Premium_P2), a
 * static allocation at peak and the oracle, on a virtual clock with the emulator's traffic model;
 * beside them, the reference of simple causal rules and the policy's distance to it (unless
 * `--no-reference`); with `--sweep`, also variants of the policy's settings on the
 * cost-versus-refusals frontier (see src/simulate and docs/simulate.md).
 */
import { mkdir, open, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { SingleBar } from "cli-progress";
import { Option } from "commander";
import { HISTORY_GRAIN_SECONDS, HISTORY_GRAINS, type HistoryGrain } from "../../api/constants.js";
import { type CapacityPolicy, PolicyError, parsePolicyYaml } from "../../api/index.js";
import {
  createAzureAdapters,
  HistoryReader,
  isAzureApiError,
  parseResourceId,
  ResourceIdError,
  type ResourceRef,
} from "../../azure/index.js";
import {
  BENCHMARK_MESSAGE_BYTES,
  SCALABLE_SKUS,
  type ScalableSku,
  type SkuUnits,
  WorkloadError,
} from "../../capacity/index.js";
import { renderSvg } from "../../chart/index.js";
import { chartSpec } from "../../simulate/chart.js";
import { type Comparison, type ComparisonInput, compareAsync, startingSize } from "../../simulate/compare.js";
import { demandSeries, MINUTE_MS } from "../../simulate/engine.js";
import { frontierChartSpec } from "../../simulate/frontier-chart.js";
import { HIGH_LOAD_PERCENT, parsePrices } from "../../simulate/metrics.js";
import { type Reference, referenceInput, referenceSteps } from "../../simulate/reference.js";
import { type ReplicaComparison, replicaComparisonSteps } from "../../simulate/replicas.js";
import { finishAsync } from "../../simulate/steps.js";
import { comparisonPoints, DEFAULT_MAX_TRIALS, type Sweep, sweepAsync } from "../../simulate/sweep.js";
import { timelineChunks } from "../../simulate/timeline.js";
import {
  DISCONNECTION_MODELS,
  type DisconnectionModel,
  defaultMix,
  type MixEntry,
  negotiateArrivals,
  parseMix,
  parseTrace,
  type Trace,
  TraceFormatError,
  traceDemand,
  validateMix,
  type WorkloadMix,
} from "../../traffic/index.js";
import { type AzureFlags, azureConnection, azureOptions } from "../azure-flags.js";
import { type CliCommand, type CommonOptions, defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { durationFlag, numberFlag, readFlagFile, timeFlag } from "../flags.js";
import type { CliIo } from "../io.js";
import { formatJson, formatNumber, formatTable } from "../output.js";
import { referenceJson, renderReference } from "./simulate-reference.js";
import { parseFailover, parseReplicas, renderReplicas, replicasJson } from "./simulate-replicas.js";
import { renderSweep, sweepJson } from "./simulate-sweep.js";

interface SimulateFlags extends CommonOptions, AzureFlags {
  policy?: string;
  trace?: string;
  peakConnections?: string;
  resourceId?: string;
  grain?: string;
  mix?: string;
  messageSize?: string;
  scaleDuration: string;
  ingestionDelay: string;
  connectionLifetime: string;
  scrapeInterval: string;
  start?: string;
  end?: string;
  days?: string;
  seed: string;
  noise: string;
  price: string[];
  loadTarget?: string;
  nativeSku?: "Premium_P1" | "Premium_P2";
  initialSku?: ScalableSku;
  initialUnits?: string;
  nativeOut: string;
  nativeIn: string;
  nativeWindow: string;
  nativeCooldown: string;
  out?: string;
  progress?: boolean;
  sweep?: boolean;
  maxTrials?: string;
  disconnection: DisconnectionModel;
  /** `--no-reference` sets it false. */
  reference: boolean;
  replicas?: string;
  failover?: string;
  failoverDuration: string;
}

/** Most policy variants one sweep may run (`--max-trials`): 1,000, some hours on a long trace. */
const MAX_TRIALS = 1000;

/** Most minutes one run simulates (three years). */
const MAX_MINUTES = 3 * 366 * 1440;
const DEFAULT_TRACE = "traces/twitter_volume_aapl.csv";
const DEFAULT_PEAK = "120000";
/** Days of Azure Monitor history a backtest reads by default, and at most (platform metrics are kept 93 days). */
const DEFAULT_BACKTEST_DAYS = "7";
const MAX_BACKTEST_DAYS = 93;

/** The demand a comparison runs on, and how to name it. */
interface DemandSource {
  startMs: number;
  minutes: number;
  demand: Float64Array;
  /** Peak connections of the demand. */
  peak: number;
  /** What it was replayed from, for the header line and the chart title. */
  name: string;
  /** The header's `demand:` line, before the mix. */
  describe: string;
  /** The JSON output's description of the source (`trace` or `instance`). */
  json: Record<string, unknown>;
}

function mixOf(policy: CapacityPolicy, flags: SimulateFlags): WorkloadMix {
  const spec = policy.spec;
  const service = spec.target.service;
  const traffic = spec.metrics.traffic;
  const size =
    numberFlag("message-size", flags.messageSize, { exclusiveMin: 0 }) ??
    traffic?.messageSizeBytes ??
    BENCHMARK_MESSAGE_BYTES;
  try {
    if (flags.mix !== undefined) return parseMix(service, flags.mix, size);
    if (traffic && traffic.workload.length > 0) {
      const entries: MixEntry[] = traffic.workload
        .filter((w) => w.share > 0)
        .map((w) => ({ scenario: w.scenario, share: w.share }));
      const total = entries.reduce((a, e) => a + e.share, 0);
      const mix: WorkloadMix = {
        service,
        entries: entries.map((e) => ({ ...e, share: e.share / total })),
        messageSizeBytes: size,
      };
      validateMix(mix);
      return mix;
    }
    return { ...defaultMix(service), messageSizeBytes: size };
  } catch (err) {
    if (err instanceof WorkloadError) throw new UsageError(`--mix: ${err.message}`);
    throw err;
  }
}

/** The instance's size at the start (`--initial-sku` with `--initial-units`), when given. */
function initialOf(flags: SimulateFlags): SkuUnits | undefined {
  if (flags.initialSku === undefined && flags.initialUnits === undefined) return undefined;
  if (flags.initialSku === undefined || flags.initialUnits === undefined)
    throw new UsageError(
      "--initial-sku and --initial-units go together (e.g. --initial-sku Premium_P1 --initial-units 20)",
    );
  const units = numberFlag("initial-units", flags.initialUnits, { integer: true, min: 1 }) as number;
  try {
    return startingSize(flags.initialSku, units);
  } catch (err) {
    if (err instanceof RangeError) throw new UsageError(`--initial-units ${err.message}`);
    throw err;
  }
}

/** The slice of time to simulate: start (a whole minute) and number of minutes. */
function sliceOf(trace: Trace, flags: SimulateFlags): { startMs: number; minutes: number } {
  const first = (trace.points[0] as { t: number }).t;
  const startMs =
    Math.floor((flags.start !== undefined ? timeFlag("start", flags.start) : first) / MINUTE_MS) * MINUTE_MS;
  if (flags.end !== undefined && flags.days !== undefined)
    throw new UsageError("give --end or --days, not both");
  let endMs: number;
  if (flags.end !== undefined) endMs = timeFlag("end", flags.end);
  else if (flags.days !== undefined) {
    const days = numberFlag("days", flags.days, { exclusiveMin: 0 }) as number;
    endMs = startMs + days * 1440 * MINUTE_MS;
  } else endMs = first + trace.durationMs;
  const minutes = Math.floor((endMs - startMs) / MINUTE_MS);
  if (minutes < 1) throw new UsageError("the time to simulate is empty: --end must come after --start");
  if (minutes > MAX_MINUTES)
    throw new UsageError(`at most ${MAX_MINUTES / 1440} days can be simulated at once`);
  return { startMs, minutes };
}

/** Demand from `--trace`, scaled to `--peak-connections`. */
async function traceSource(flags: SimulateFlags, io: CliIo): Promise<DemandSource> {
  const file = flags.trace ?? DEFAULT_TRACE;
  const traceText = await readFlagFile("trace", resolve(io.cwd, file), file);
  let trace: Trace;
  try {
    trace = parseTrace(traceText, file);
  } catch (err) {
    if (err instanceof TraceFormatError) throw new UsageError(`--trace ${err.message}`);
    throw err;
  }
  const peak = numberFlag("peak-connections", flags.peakConnections ?? DEFAULT_PEAK, { min: 0 }) as number;
  const { startMs, minutes } = sliceOf(trace, flags);
  const first = (trace.points[0] as { t: number }).t;
  const demand = demandSeries(traceDemand(trace, new Date(first), peak), startMs, minutes);
  return {
    startMs,
    minutes,
    demand,
    peak,
    name: file,
    describe: `trace scaled to a peak of ${formatNumber(peak)} connections`,
    json: { trace: { file, start: iso(startMs), end: iso(startMs + minutes * MINUTE_MS), minutes } },
  };
}

/**
 * Demand from `--resource-id`: the instance's connections over the last `--days` days up to
 * `--end` (default now), read from Azure Monitor by the operator's history reader at `--grain`
 * (each bucket's peak connections, linear between buckets), as measured — no scaling.
 * @throws UsageError for flags that do not go with it or a malformed ID; Error when Azure cannot
 *   be read or has too little data.
 */
async function instanceSource(
  flags: SimulateFlags,
  io: CliIo,
  policy: CapacityPolicy,
): Promise<DemandSource> {
  if (flags.trace !== undefined) throw new UsageError("give --trace or --resource-id, not both");
  if (flags.peakConnections !== undefined)
    throw new UsageError("--peak-connections scales a trace; --resource-id replays the measured connections");
  if (flags.start !== undefined)
    throw new UsageError(
      "--resource-id replays the last --days days up to --end (default now); --start is for traces",
    );
  let ref: ResourceRef;
  try {
    ref = parseResourceId(flags.resourceId as string);
  } catch (err) {
    if (err instanceof ResourceIdError) throw new UsageError(`--resource-id: ${err.message}`);
    throw err;
  }
  if (ref.service !== policy.spec.target.service)
    throw new UsageError(
      `--resource-id is a ${ref.service} instance but the policy targets ${policy.spec.target.service}`,
    );
  const days = numberFlag("days", flags.days ?? DEFAULT_BACKTEST_DAYS, {
    exclusiveMin: 0,
    max: MAX_BACKTEST_DAYS,
  }) as number;
  const grain = (flags.grain ?? "5m") as HistoryGrain;
  if (!HISTORY_GRAINS.includes(grain))
    throw new UsageError(`--grain must be ${HISTORY_GRAINS.join(" or ")}, got "${flags.grain}"`);
  const endMs = flags.end !== undefined ? timeFlag("end", flags.end) : Date.now();
  const { connection } = await azureConnection(flags, io.env, io.cwd);
  const azure = createAzureAdapters(connection);
  let region: string;
  try {
    region = (await azure.instances.get(ref.id, { signal: io.signal })).location;
  } catch (err) {
    if (isAzureApiError(err)) throw new Error(`cannot read instance ${ref.id}: ${err.message}`);
    throw err;
  }
  const reader = new HistoryReader(azure.metrics);
  reader.want([{ resourceId: ref.id, region, days, grain }], endMs);
  await reader.refresh(endMs, { signal: io.signal });
  const history = reader.get(ref.id, grain);
  if (history?.error !== undefined) throw new Error(`cannot read the history of ${ref.id}: ${history.error}`);
  const points = (history?.points ?? []).flatMap((p) =>
    p.connections === null ? [] : [{ t: p.timeMs, value: p.connections, bytes: p.bytesPerSecond }],
  );
  if (points.length < 2)
    throw new Error(
      `Azure Monitor has ${points.length} ${grain} bucket(s) of connections for ${ref.id} in the ${days} days before ${iso(endMs)}; a backtest needs 2 or more`,
    );
  const grainMs = HISTORY_GRAIN_SECONDS[grain] * 1000;
  const first = (points[0] as { t: number }).t;
  const last = (points.at(-1) as { t: number }).t;
  const peak = Math.max(...points.map((p) => p.value));
  // The last bucket holds its value to its end (a trace would loop back to its first value).
  const held = [
    ...points,
    { t: last + grainMs - MINUTE_MS, value: (points.at(-1) as { value: number }).value },
  ];
  const trace: Trace = {
    source: ref.id,
    points: held,
    max: peak,
    stepMs: grainMs,
    durationMs: last - first + grainMs,
  };
  const minutes = (last + grainMs - first) / MINUTE_MS;
  const demand = demandSeries(traceDemand(trace, new Date(first), peak), first, minutes);
  const peakBytes = Math.max(0, ...points.map((p) => p.bytes ?? 0));
  return {
    startMs: first,
    minutes,
    demand,
    peak,
    name: ref.name,
    describe: `${ref.name}'s connections from Azure Monitor (${grain} peaks, ${formatNumber(points.length)} buckets), peak ${formatNumber(peak)}; traffic up to ${formatNumber(Math.round(peakBytes))} bytes/s in + out`,
    json: {
      instance: {
        resourceId: ref.id,
        region,
        grain,
        days,
        start: iso(first),
        end: iso(first + minutes * MINUTE_MS),
        minutes,
        buckets: points.length,
        peakConnections: peak,
        peakBytesPerSecond: peakBytes,
      },
    },
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/:00\.000Z$/, "Z");
}

function hours(minutes: number): number {
  return Math.round((minutes / 60) * 10) / 10;
}

function renderTable(c: Comparison, header: string[]): string {
  const rows = c.metrics.map((m) => [
    m.name,
    m.minutesAboveTarget,
    m.minutesAboveHighLoad,
    m.minutesRefused,
    m.minutesThrottled,
    Math.round(m.totalUnitHours * 10) / 10,
    Math.round(m.cost * 100) / 100,
    m.scaleOperations,
    m.reversals,
    Math.round(m.clientsDisconnected),
    hours(m.p2Minutes),
    Math.round(m.meanUnits * 10) / 10,
    m.peakUnits,
  ]);
  const table = formatTable(
    [
      "STRATEGY",
      `MIN > ${c.loadTargetPercent}%`,
      `MIN > ${HIGH_LOAD_PERCENT}%`,
      "MIN REFUSED",
      "MIN THROTTLED",
      "UNIT-HOURS",
      "COST USD",
      "SCALE OPS",
      "REVERSALS",
      "DISCONNECTED",
      "P2 HOURS",
      "MEAN UNITS",
      "PEAK UNITS",
    ],
    rows,
  );
  const width = Math.max(...c.metrics.map((m) => m.name.length));
  const legend = c.metrics.map((m) => `  ${m.name.padEnd(width)}  ${m.description}`);
  return `${header.join("\n")}\n\n${table}\n${legend.join("\n")}\n`;
}

function startLine(c: Comparison): string {
  const size = (s: SkuUnits) => `${s.sku} × ${formatNumber(s.units)}`;
  const from =
    c.start.from === "instance"
      ? "the instance's size (--initial-sku, --initial-units)"
      : "the oracle's first minute";
  const natives = c.initial.native.map((n) => `, ${n.name} at ${size(n)}`).join("");
  return `start: policy at ${size(c.initial.policy)}${natives}, from ${from}`;
}

function progressBar(enabled: boolean): { update: (done: number, total: number) => void; stop: () => void } {
  if (!enabled) return { update: () => {}, stop: () => {} };
  const bar = new SingleBar({
    stream: process.stderr,
    format: "simulating [{bar}] {percentage}% | {value}/{total} strategy-minutes | eta {eta}s",
    hideCursor: true,
    etaBuffer: 50,
    noTTYOutput: true,
    notTTYSchedule: 5000,
  });
  let started = false;
  let of = 0;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      } else if (total !== of) bar.setTotal(total);
      of = total;
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/** Reads and parses `--policy`. @throws UsageError when it is missing or not a valid CapacityPolicy */
async function readPolicy(flags: SimulateFlags, io: CliIo): Promise<CapacityPolicy> {
  if (!flags.policy)
    throw new UsageError("--policy FILE is required (e.g. --policy examples/signalr-chat.yaml)");
  const policyText = await readFlagFile("policy", resolve(io.cwd, flags.policy), flags.policy);
  try {
    return parsePolicyYaml(policyText);
  } catch (err) {
    if (err instanceof PolicyError)
      throw new UsageError(`--policy ${flags.policy}: ${err.errors.join("; ")}`);
    throw err;
  }
}

/** The model and strategy settings of a run, from the flags (durations in ms, percentages 0–100). */
interface SimulateSettings {
  policy: CapacityPolicy;
  mix: WorkloadMix;
  scaleDurationMs: number;
  metricDelayMs: number;
  /** Mean client connection lifetime, ms. */
  lifetimeMs: number;
  /** Lag of the app servers' metrics behind the minute (the scrape interval), ms. */
  scrapeLagMs: number;
  /** The policy reads a leading signal (the app servers' metrics) and anticipation is on. */
  leading: boolean;
  noiseAmplitude: number;
  loadTarget: number | undefined;
  prices: ReturnType<typeof parsePrices>;
  native: NonNullable<ComparisonInput["native"]>;
  initial: SkuUnits | undefined;
  maxTrials: number | undefined;
  disconnection: DisconnectionModel;
}

/** Reads the model flags, in the order their errors are reported. @throws UsageError */
function settingsOf(policy: CapacityPolicy, flags: SimulateFlags): SimulateSettings {
  const mix = mixOf(policy, flags);
  const scaleDurationMs = durationFlag("scale-duration", flags.scaleDuration);
  const metricDelayMs = durationFlag("ingestion-delay", flags.ingestionDelay);
  const lifetimeMs = durationFlag("connection-lifetime", flags.connectionLifetime);
  if (lifetimeMs < MINUTE_MS) throw new UsageError("--connection-lifetime must be at least 1m");
  const scrapeLagMs = durationFlag("scrape-interval", flags.scrapeInterval);
  if (scrapeLagMs > MINUTE_MS) throw new UsageError("--scrape-interval must be at most 1m");
  const leading =
    policy.spec.anticipation?.leadingSignal !== undefined && policy.spec.anticipation.mode !== "Off";
  const noiseAmplitude = numberFlag("noise", flags.noise, { min: 0, max: 1 }) as number;
  const loadTarget = numberFlag("load-target", flags.loadTarget, { exclusiveMin: 0, max: 100 });
  let prices: ReturnType<typeof parsePrices>;
  try {
    prices = parsePrices(flags.price);
  } catch (err) {
    throw new UsageError(`--price: ${(err as Error).message}`);
  }
  const native = nativeOf(flags);
  const initial = initialOf(flags);
  const maxTrials = numberFlag("max-trials", flags.maxTrials, { integer: true, min: 1, max: MAX_TRIALS });
  if (maxTrials !== undefined && !flags.sweep)
    throw new UsageError("--max-trials goes with --sweep (e.g. --sweep --max-trials 50)");
  return {
    policy,
    mix,
    scaleDurationMs,
    metricDelayMs,
    lifetimeMs,
    scrapeLagMs,
    leading,
    noiseAmplitude,
    loadTarget,
    prices,
    native,
    initial,
    maxTrials,
    disconnection: flags.disconnection,
  };
}

/** The native autoscale model of `--native-*` (thresholds %, window and cooldown in minutes). @throws UsageError */
function nativeOf(flags: SimulateFlags): NonNullable<ComparisonInput["native"]> {
  const nativeOut = numberFlag("native-out", flags.nativeOut, { exclusiveMin: 0, max: 100 }) as number;
  const nativeIn = numberFlag("native-in", flags.nativeIn, { min: 0, max: 100 }) as number;
  if (nativeIn >= nativeOut) throw new UsageError("--native-in must be below --native-out");
  const nativeWindow = durationFlag("native-window", flags.nativeWindow) / MINUTE_MS;
  const nativeCooldown = durationFlag("native-cooldown", flags.nativeCooldown) / MINUTE_MS;
  if (nativeWindow < 1) throw new UsageError("--native-window must be at least 1m");
  return {
    ...(flags.nativeSku ? { skus: [flags.nativeSku] } : {}),
    outPercent: nativeOut,
    inPercent: nativeIn,
    timeWindowMinutes: nativeWindow,
    cooldownMinutes: nativeCooldown,
  };
}

/**
 * What a run produced: the comparison, the sweep (with `--sweep`), the simple rules' reference
 * (unless `--no-reference`) and the run times, seconds (all, and the reference's part).
 */
interface SimulateOutcome {
  comparison: Comparison;
  swept: Sweep | undefined;
  reference: Reference | undefined;
  seconds: number;
  referenceSeconds: number;
}

/** Runs the comparison (or the sweep) on `source`, with a progress bar on stderr when asked or long. */
async function simulateOn(
  s: SimulateSettings,
  source: DemandSource,
  flags: SimulateFlags,
  io: CliIo,
): Promise<SimulateOutcome> {
  const { startMs, minutes, demand } = source;
  const showProgress =
    flags.progress ?? (process.stderr.isTTY === true && (minutes > 7 * 1440 || flags.sweep === true));
  const bar = progressBar(showProgress);
  const started = performance.now();
  let comparison: Comparison;
  let swept: Sweep | undefined;
  let reference: Reference | undefined;
  let referenceStarted = started;
  try {
    const input: ComparisonInput = {
      policy: s.policy,
      startMs,
      demand,
      mix: s.mix,
      scaleDurationMs: s.scaleDurationMs,
      metricDelayMs: s.metricDelayMs,
      // The app servers' metrics, for a policy that reads them.
      ...(s.leading
        ? {
            arrivals: negotiateArrivals(demand, { lifetimeSeconds: s.lifetimeMs / 1000 }),
            scrapeLagMs: s.scrapeLagMs,
          }
        : {}),
      seed: flags.seed,
      noiseAmplitude: s.noiseAmplitude,
      disconnection: s.disconnection,
      ...(s.loadTarget !== undefined ? { loadTargetPercent: s.loadTarget } : {}),
      ...(s.initial ? { initial: s.initial } : {}),
      prices: s.prices,
      native: s.native,
      onProgress: (done, total) => bar.update(done, total),
    };
    if (flags.sweep) {
      swept = await sweepAsync({ ...input, maxTrials: s.maxTrials ?? DEFAULT_MAX_TRIALS }, io.signal);
      comparison = swept.comparison;
    } else comparison = await compareAsync(input, io.signal);
    referenceStarted = performance.now();
    if (flags.reference) {
      const steps = referenceSteps(referenceInput(input, comparison));
      reference = await finishAsync(steps, (done, total) => bar.update(done, total), io.signal);
    }
  } finally {
    bar.stop();
  }
  const now = performance.now();
  return {
    comparison,
    swept,
    reference,
    seconds: (now - started) / 1000,
    referenceSeconds: (now - referenceStarted) / 1000,
  };
}

/** Paths of the files written to `--out`. */
interface SimulateFiles {
  timeline?: string;
  chart?: string;
  frontier?: string;
}

/**
 * Writes `timeline.csv`, `chart.svg` and (with a sweep or the reference) `frontier.svg` to
 * `outDir`, made if missing.
 */
async function writeOutputs(
  outDir: string,
  policy: CapacityPolicy,
  source: DemandSource,
  { comparison, swept, reference }: SimulateOutcome,
): Promise<SimulateFiles> {
  const { startMs, demand, peak } = source;
  const files: SimulateFiles = {};
  await mkdir(outDir, { recursive: true });
  files.timeline = join(outDir, "timeline.csv");
  const fh = await open(files.timeline, "w");
  try {
    for (const chunk of timelineChunks(startMs, demand, comparison.runs)) await fh.write(chunk);
  } finally {
    await fh.close();
  }
  const title = `${policy.metadata.name} on ${basename(source.name)} — peak ${formatNumber(peak)} connections`;
  files.chart = join(outDir, "chart.svg");
  await writeFile(
    files.chart,
    await renderSvg(
      chartSpec(startMs, demand, comparison.runs, {
        title,
        loadTargetPercent: comparison.loadTargetPercent,
      }),
    ),
  );
  if (swept || reference) {
    files.frontier = join(outDir, "frontier.svg");
    await writeFile(files.frontier, await renderSvg(frontierChart(title, comparison, swept, reference)));
  }
  return files;
}

/** The frontier chart of a run: the sweep's points (else the comparison's) and the reference's rules. */
function frontierChart(
  title: string,
  comparison: Comparison,
  swept: Sweep | undefined,
  reference: Reference | undefined,
) {
  const parts: string[] = [];
  if (swept) {
    const variants = swept.points.filter((p) => p.role === "variant").length;
    parts.push(
      `the policy and ${variants} variants of ${swept.plan.knobs.map((k) => k.name).join(" × ") || "nothing"}; the line: their Pareto frontier`,
    );
  } else parts.push("the policy and the reference strategies");
  if (reference) {
    parts.push(
      `crosses: the ${formatNumber(reference.points.length)} simple causal rules not dominated on refused minutes, refused connection-minutes, unit-hours and disconnections`,
    );
  }
  return frontierChartSpec(swept?.points ?? comparisonPoints(comparison), {
    title,
    subtitle: parts.join("; "),
    ...(reference ? { rules: reference.points, bestRule: reference.policy.atPolicyCost } : {}),
  });
}

/** A finished run, as its reports need it. */
interface SimulateReport {
  s: SimulateSettings;
  source: DemandSource;
  flags: SimulateFlags;
  outcome: SimulateOutcome;
  files: SimulateFiles;
}

/** The `--output json` document of a run. */
function simulateJson({ s, source, flags, outcome, files }: SimulateReport): string {
  const { comparison, swept, reference, seconds } = outcome;
  return formatJson({
    policy: { name: s.policy.metadata.name, namespace: s.policy.metadata.namespace, file: flags.policy },
    ...source.json,
    demand: { peakConnections: source.peak, mix: s.mix },
    model: {
      scaleDurationSeconds: s.scaleDurationMs / 1000,
      metricDelaySeconds: s.metricDelayMs / 1000,
      ...(s.leading
        ? { connectionLifetimeSeconds: s.lifetimeMs / 1000, scrapeIntervalSeconds: s.scrapeLagMs / 1000 }
        : {}),
      noiseAmplitude: s.noiseAmplitude,
      seed: flags.seed,
      disconnection: s.disconnection,
    },
    loadTargetPercent: comparison.loadTargetPercent,
    highLoadPercent: HIGH_LOAD_PERCENT,
    pricesUsdPerUnitDay: comparison.prices,
    native: comparison.native,
    staticSize: comparison.staticSize,
    initial: comparison.initial,
    start: comparison.start,
    policyOverrides: comparison.policyOverrides,
    anticipation: comparison.anticipation,
    strategies: comparison.metrics,
    ...(reference ? { reference: referenceJson(reference, outcome.referenceSeconds) } : {}),
    ...(swept ? { sweep: sweepJson(swept) } : {}),
    runTimeSeconds: Math.round(seconds * 1000) / 1000,
    ...(flags.out !== undefined ? { files } : {}),
  });
}

/** The text report of a run: header lines, the table and legend, cost, anticipation, sweep, files. */
function simulateText({ s, source, flags, outcome, files }: SimulateReport): string {
  const { comparison, swept, reference, seconds } = outcome;
  const { startMs, minutes } = source;
  const { mix } = s;
  const mixText = mix.entries.map((e) => `${e.scenario} ${formatNumber(e.share)}`).join(", ");
  const endMs = startMs + minutes * MINUTE_MS;
  const header = [
    `simulate: policy ${s.policy.metadata.name} on ${source.name}, ${iso(startMs)} → ${iso(endMs)} (${formatNumber(minutes / 1440)} days, ${formatNumber(minutes)} minutes)`,
    `demand: ${source.describe}; ${mix.service} ${mixText}, ${formatNumber(mix.messageSizeBytes)} B messages`,
    `model: scale takes ${s.scaleDurationMs / 1000}s, metrics delayed ${s.metricDelayMs / 1000}s, load target ${comparison.loadTargetPercent} %, noise ±${formatNumber(s.noiseAmplitude * 100)} %, seed "${flags.seed}", ${s.disconnection === "Everyone" ? "every change disconnects every client" : "a scale-in disconnects the removed units' clients"}${s.leading ? `; app servers: clients stay ${formatNumber(s.lifetimeMs / MINUTE_MS)} min, negotiate metrics scraped every ${s.scrapeLagMs / 1000}s` : ""}`,
    startLine(comparison),
    ...comparison.start.notes.map((n) => `note: ${n}`),
    ...(comparison.policyOverrides.length > 0 ? [`note: ${comparison.policyOverrides.join("; ")}`] : []),
  ];
  let text = renderTable(comparison, header);
  const priceText = Object.entries(comparison.prices)
    .map(([sku, p]) => `${sku} ${formatNumber(p)}`)
    .join(", ");
  text += `\ncost: list-price estimate, USD per unit-day: ${priceText} (set with --price SKU=USD)\n`;
  text += `${anticipationLine(comparison.anticipation)}\n`;
  if (reference) text += `\n${renderReference(reference, outcome.referenceSeconds)}\n`;
  if (swept) text += `\n${renderSweep(swept, comparison.loadTargetPercent)}\n`;
  const variants = swept
    ? ` and ${swept.points.filter((p) => p.role === "variant").length} policy variants`
    : "";
  const rules = reference ? ` and ${formatNumber(reference.configurations)} simple rules` : "";
  text += `simulated ${comparison.runs.length} strategies${variants}${rules} × ${formatNumber(minutes)} minutes in ${seconds.toFixed(1)} s\n`;
  if (files.timeline) text += `timeline: ${files.timeline}\n`;
  if (files.chart) text += `chart: ${files.chart}\n`;
  if (files.frontier) text += `frontier: ${files.frontier}\n`;
  return text;
}

async function runSimulate(flags: SimulateFlags, io: CliIo): Promise<void> {
  const policy = await readPolicy(flags, io);
  const settings = settingsOf(policy, flags);
  if (flags.failover !== undefined && flags.replicas === undefined)
    throw new UsageError(
      "--failover goes with --replicas (e.g. --replicas eastus=0.5,westus=0.5 --failover westus@peak)",
    );
  if (flags.replicas !== undefined && flags.sweep)
    throw new UsageError("--replicas backtests one policy on a replica group; --sweep is for one instance");
  if (flags.replicas !== undefined && flags.out !== undefined)
    throw new UsageError(
      "--out writes one instance's timeline and chart; with --replicas the report is text, or JSON with -o json",
    );
  const members = flags.replicas !== undefined ? parseReplicas(flags.replicas) : undefined;
  const source =
    flags.resourceId !== undefined ? await instanceSource(flags, io, policy) : await traceSource(flags, io);
  if (members) {
    await runReplicas(settings, source, members, flags, io);
    return;
  }
  const outcome = await simulateOn(settings, source, flags, io);
  const files =
    flags.out !== undefined ? await writeOutputs(resolve(io.cwd, flags.out), policy, source, outcome) : {};
  const render = flags.output === "json" ? simulateJson : simulateText;
  io.stdout(render({ s: settings, source, flags, outcome, files }));
}

/**
 * `--replicas`: the replica group on the demand, with the Failover rule and without it (and the
 * failover of `--failover`), reported per member and in total.
 */
async function runReplicas(
  s: SimulateSettings,
  source: DemandSource,
  members: ReturnType<typeof parseReplicas>,
  flags: SimulateFlags,
  io: CliIo,
): Promise<void> {
  const { startMs, minutes, demand } = source;
  const failover =
    flags.failover !== undefined
      ? parseFailover(flags.failover, flags.failoverDuration, members, { startMs, demand })
      : undefined;
  const bar = progressBar(flags.progress ?? (process.stderr.isTTY === true && minutes > 7 * 1440));
  const started = performance.now();
  let comparison: ReplicaComparison;
  try {
    const steps = replicaComparisonSteps({
      policy: s.policy,
      startMs,
      demand,
      mix: s.mix,
      scaleDurationMs: s.scaleDurationMs,
      metricDelayMs: s.metricDelayMs,
      seed: flags.seed,
      noiseAmplitude: s.noiseAmplitude,
      disconnection: s.disconnection,
      members,
      ...(failover ? { failover } : {}),
      lifetimeMs: s.lifetimeMs,
      prices: s.prices,
      loadTargetPercent: s.loadTarget ?? s.policy.spec.metrics.serverLoad?.targetPercent ?? 70,
      ...(s.initial ? { initial: members.map(() => s.initial as SkuUnits) } : {}),
    });
    comparison = await finishAsync(steps, (done, total) => bar.update(done, total), io.signal);
  } finally {
    bar.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const model = {
    scaleDurationSeconds: s.scaleDurationMs / 1000,
    metricDelaySeconds: s.metricDelayMs / 1000,
    connectionLifetimeSeconds: s.lifetimeMs / 1000,
    noiseAmplitude: s.noiseAmplitude,
    seed: flags.seed,
    disconnection: s.disconnection,
  };
  if (flags.output === "json") {
    io.stdout(
      formatJson({
        policy: { name: s.policy.metadata.name, namespace: s.policy.metadata.namespace, file: flags.policy },
        ...source.json,
        demand: { peakConnections: source.peak, mix: s.mix },
        model,
        anticipationMode: s.policy.spec.anticipation?.mode ?? "Off",
        replicas: replicasJson(comparison),
        runTimeSeconds: Math.round(seconds * 1000) / 1000,
      }),
    );
    return;
  }
  const shares = comparison.members.map(
    (m) => `${m.name} ${formatNumber(Math.round(m.share * 1000) / 10)} %`,
  );
  const header = [
    `simulate: policy ${s.policy.metadata.name} on a replica group on ${source.name}, ${iso(startMs)} → ${iso(startMs + minutes * MINUTE_MS)} (${formatNumber(minutes)} minutes)`,
    `demand: ${source.describe}, split ${shares.join(", ")} (${comparison.members[0]?.name} the primary); each member runs the policy through the operator's planner, in lockstep`,
    `model: scale takes ${model.scaleDurationSeconds}s, metrics delayed ${model.metricDelaySeconds}s, clients stay ${formatNumber(s.lifetimeMs / MINUTE_MS)} min, noise ±${formatNumber(s.noiseAmplitude * 100)} %, seed "${flags.seed}"; anticipation ${s.policy.spec.anticipation?.mode ?? "Off"}${s.policy.spec.anticipation && s.policy.spec.anticipation.mode !== "Off" ? "" : " (the Failover rule is part of anticipation: on and off are the same run)"}`,
  ];
  io.stdout(
    `${renderReplicas(comparison, header)}simulated ${comparison.members.length} members × ${formatNumber(comparison.baseline ? 3 : 2)} runs × ${formatNumber(minutes)} minutes in ${seconds.toFixed(1)} s\n`,
  );
}

/** What anticipation did in the policy's run, in one line. */
function anticipationLine(a: Comparison["anticipation"]): string {
  if (a.mode === "Off") return "anticipation: Off (the policy is reactive only)";
  if (a.mode === "ForecastOnly")
    return "anticipation: ForecastOnly — computed at every pass and never acted on, as in the cluster (set Enabled to backtest its effect)";
  const rules = Object.entries(a.byRule)
    .map(([rule, n]) => `${rule} ${formatNumber(n)}`)
    .join(", ");
  return `anticipation: Enabled — ${formatNumber(a.scaleOuts)} of the policy's scale operations went out ahead of the measured need${rules ? ` (${rules})` : ""}`;
}

/** The `simulate` subcommand. */
export const simulateCommand: CliCommand = defineCommand<SimulateFlags>({
  name: "simulate",
  description:
    "Backtest a CapacityPolicy on a traffic trace or on an instance's last days in Azure Monitor: the policy, Azure's native autoscale on Premium_P1 and Premium_P2, a static allocation at peak and the oracle, side by side — minutes above the load target and above 90 % load, refused connections, throttled traffic, unit-hours, cost, scale operations and their reversals, clients disconnected by scaling, Premium_P2 time; beside them, the best simple causal rules on the same traffic and mechanics and the policy's distance to them; with --sweep, the cost-versus-refusals frontier of the policy's variants.",
  flags: (cmd, { env }) =>
    azureOptions(
      cmd
        .option("--policy <file>", "CapacityPolicy YAML to test (required), e.g. examples/signalr-chat.yaml")
        .option(
          "--trace <file>",
          `traffic trace, CSV timestamp,value (any step) (default: "${DEFAULT_TRACE}")`,
        )
        .option(
          "--peak-connections <n>",
          `connections the trace's largest value stands for (default: "${DEFAULT_PEAK}")`,
        )
        .option(
          "--resource-id <id>",
          "backtest on this SignalR / Web PubSub instance's last --days days of connections, read from Azure Monitor instead of a trace",
        )
        .addOption(
          new Option("--grain <grain>", "with --resource-id: Azure Monitor time grain of the history read")
            .choices([...HISTORY_GRAINS])
            .default("5m"),
        )
        .option(
          "--mix <mix>",
          "workload mix scenario=share[,…] (default: the policy's traffic workload, else echo)",
        )
        .option("--message-size <bytes>", "average message size (default: the policy's, else 2048)")
        .option("--scale-duration <duration>", "time a scale operation takes", "5m")
        .option("--ingestion-delay <duration>", "time before a minute's metrics are fully ingested", "3m")
        .option(
          "--connection-lifetime <duration>",
          "how long a client stays connected on average, at least 1m (the app servers' negotiate rate for a leading signal)",
          "20m",
        )
        .option(
          "--scrape-interval <duration>",
          "how old the app servers' newest metrics are for a leading signal (Prometheus's scrape interval), at most 1m",
          "15s",
        )
        .option("--start <time>", "start of the slice to simulate (default: the trace's start), UTC")
        .option("--end <time>", "end of the slice (default: the trace's end; with --resource-id, now)")
        .option(
          "--days <n>",
          `length of the slice in days (the trace loops when shorter; with --resource-id, days back, default ${DEFAULT_BACKTEST_DAYS}, at most ${MAX_BACKTEST_DAYS})`,
        )
        .option("--seed <text>", "noise seed: the same seed gives the same run", "simulate")
        .option("--noise <fraction>", "relative noise on server load", "0.05")
        .option(
          "--price <sku=usd>",
          "price per unit per day, repeatable (defaults: Standard_S1=1.61, Premium_P1=2, Premium_P2=2)",
          (value: string, previous: string[]) => [...previous, value],
          [] as string[],
        )
        .option(
          "--load-target <percent>",
          "load counted as too hot (default: the policy's serverLoad target, else 70)",
        )
        .addOption(
          new Option(
            "--initial-sku <sku>",
            "SKU of the instance at the start, with --initial-units (default: the oracle's first size)",
          ).choices(SCALABLE_SKUS),
        )
        .option(
          "--initial-units <n>",
          "units of the instance at the start, on the SKU's ladder: the policy (and native autoscale on that SKU) starts there",
        )
        .addOption(
          new Option(
            "--native-sku <sku>",
            "model native autoscale on this SKU only (default: both, as native-p1 and native-p2)",
          ).choices(["Premium_P1", "Premium_P2"]),
        )
        .addOption(
          new Option(
            "--disconnection <model>",
            "which clients a completed scale disconnects: RemovedUnits (the removed units' share at a scale-in) or Everyone (all clients at any change, Azure/azure-signalr#486)",
          )
            .choices([...DISCONNECTION_MODELS])
            .default("RemovedUnits"),
        )
        .option("--native-out <percent>", "native autoscale: scale out above this average", "70")
        .option("--native-in <percent>", "native autoscale: scale in below this average (both metrics)", "30")
        .option("--native-window <duration>", "native autoscale: rules' time window", "10m")
        .option("--native-cooldown <duration>", "native autoscale: cooldown after any scale action", "5m")
        .option(
          "--sweep",
          "also run variants of the policy's settings (every signal's targetPercent 50–90, units.min, anticipation on/off, headroom) and show the cost-versus-refusals Pareto frontier",
        )
        .option(
          "--max-trials <n>",
          `with --sweep: most variants to run, spread evenly over the grid (default ${DEFAULT_MAX_TRIALS})`,
        )
        .option(
          "--no-reference",
          "skip the reference: the best of 1,080 simple causal rules on the same traffic and mechanics, and the policy's distance to it",
        )
        .option(
          "--out <dir>",
          "write timeline.csv and chart.svg there, and frontier.svg (the reference's rules, the sweep's variants)",
        )
        .option(
          "--progress",
          "show a progress bar on stderr (default: on a terminal for runs over a week, and for sweeps)",
        )
        .option("--no-progress", "never show a progress bar")
        .option(
          "--replicas <members>",
          "backtest a replica group instead: name=share[,…], the primary first (e.g. eastus=0.5,westus=0.3,westeurope=0.2), each member on its share of the demand with the policy, with the Failover rule and without it",
        )
        .option(
          "--failover <member@when>",
          "with --replicas: that member stops serving at the demand's peak (member@peak) or at a time (member@2015-03-01T12:00Z); its clients reconnect to the others",
        )
        .option("--failover-duration <duration>", "how long the failed member stays down", "60m"),
      env,
    ),
  examples: [
    "signalr-autoscaler simulate --policy examples/signalr-chat.yaml",
    "signalr-autoscaler simulate --policy examples/signalr-chat.yaml --trace traces/nyc_taxi.csv --days 14 --out out/",
    "signalr-autoscaler simulate --policy examples/signalr-chat.yaml --price Premium_P1=1.9 --output json",
    "signalr-autoscaler simulate --policy my-policy.yaml --trace my-traffic.csv --initial-sku Premium_P1 --initial-units 20",
    "signalr-autoscaler simulate --policy examples/signalr-chat.yaml --sweep --out out/",
    "signalr-autoscaler simulate --policy examples/signalr-chat.yaml --resource-id /subscriptions/…/SignalR/chat-signalr --days 14",
    "signalr-autoscaler simulate --policy examples/signalr-chat.yaml --replicas eastus=0.5,westus=0.3,westeurope=0.2 --failover westus@peak",
  ],
  action: runSimulate,
});
