/**
 * `signalr-autoscaler emulator`: runs the HTTPS Azure emulator (ARM + metrics:getBatch) on
 * loopback until stopped, with instances whose demand follows a trace or a pattern scaled to a
 * peak. Prints the endpoints and the CA file to trust.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Option } from "commander";
import {
  formatResourceId,
  parseResourceId,
  parseServiceKind,
  ResourceIdError,
  UnknownServiceError,
} from "../../azure/resource-id.js";
import { isSkuName, type ServiceKind, type SkuName, WorkloadError } from "../../capacity/index.js";
import { type RunningEmulator, startEmulator } from "../../emulator/emulator.js";
import { allowedUnits, type InstanceSpec } from "../../emulator/state.js";
import {
  type DemandPattern,
  type DemandSpec,
  DISCONNECTION_MODELS,
  type DisconnectionModel,
  dailyPattern,
  defaultMix,
  parseMix,
  parsePattern,
  parseTrace,
  TraceFormatError,
  type WorkloadMix,
} from "../../traffic/index.js";
import { type CliCommand, type CommonOptions, defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { durationFlag } from "../flags.js";
import type { CliIo } from "../io.js";
import { formatJson, formatTable } from "../output.js";

interface EmulatorFlags extends CommonOptions {
  trace?: string;
  pattern: string;
  peakHour?: string;
  trough?: string;
  historyDays: string;
  peakConnections: string;
  service: string;
  resourceId?: string[];
  instances: string;
  subscription: string;
  resourceGroup: string;
  location: string;
  sku: string;
  units: string;
  mix?: string;
  messageSize: string;
  speed: string;
  start?: string;
  scaleDuration: string;
  ingestionDelay: string;
  readAfterWriteLag: string;
  unitQuota?: string;
  port: string;
  appServerHttpPort?: string;
  connectionLifetime: string;
  disconnection: DisconnectionModel;
  host: string;
  caFile?: string;
  rateLimit: boolean;
}

function number(flag: string, text: string, check: (n: number) => boolean, what: string): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || !check(n))
    throw new UsageError(`--${flag} must be ${what}, got "${text}"`);
  return n;
}

function parsePatternOrUsage(name: string): DemandPattern {
  try {
    return parsePattern(name);
  } catch (err) {
    throw new UsageError(`--pattern: ${(err as Error).message}`);
  }
}

async function loadDemand(flags: EmulatorFlags, cwd: string, peak: number): Promise<DemandSpec> {
  const daily = flags.peakHour !== undefined || flags.trough !== undefined;
  if (daily && (flags.trace !== undefined || parsePatternOrUsage(flags.pattern).kind !== "daily"))
    throw new UsageError("--peak-hour and --trough shape the daily pattern: give them with --pattern daily");
  if (flags.trace === undefined) {
    if (!daily)
      return { kind: "pattern", pattern: parsePatternOrUsage(flags.pattern), peakConnections: peak };
    const hour =
      flags.peakHour === undefined
        ? undefined
        : number("peak-hour", flags.peakHour, (n) => n >= 0 && n < 24, "an hour in [0, 24) UTC");
    const trough =
      flags.trough === undefined
        ? undefined
        : number("trough", flags.trough, (n) => n >= 0 && n <= 1, "a fraction of the peak in [0, 1]");
    return { kind: "pattern", pattern: dailyPattern(hour, trough), peakConnections: peak };
  }
  const path = resolve(cwd, flags.trace);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new UsageError(
      `cannot read trace file ${flags.trace}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  try {
    return { kind: "trace", trace: parseTrace(text, flags.trace), peakConnections: peak };
  } catch (err) {
    if (err instanceof TraceFormatError) throw new UsageError(`--trace: ${err.message}`);
    throw err;
  }
}

/** `--service` as a service kind. @throws UsageError */
function serviceFlag(flags: EmulatorFlags): ServiceKind {
  try {
    return parseServiceKind(flags.service);
  } catch (err) {
    if (err instanceof UnknownServiceError) throw new UsageError(`--service: ${err.message}`);
    throw err;
  }
}

/** What every instance starts as: its peak connections, SKU, units and workload mix. @throws UsageError */
function instanceShape(
  flags: EmulatorFlags,
  service: ServiceKind,
): { peak: number; sku: SkuName; units: number; mix: WorkloadMix } {
  const peak = number("peak-connections", flags.peakConnections, (n) => n >= 0, "a number ≥ 0");
  const units = number("units", flags.units, (n) => Number.isInteger(n) && n > 0, "a whole number > 0");
  if (!isSkuName(flags.sku)) {
    throw new UsageError(
      `--sku must be one of Free_F1, Standard_S1, Premium_P1, Premium_P2, got "${flags.sku}"`,
    );
  }
  const sku: SkuName = flags.sku;
  if (!allowedUnits(sku).includes(units)) {
    throw new UsageError(
      `--units ${units} is not allowed for ${sku} (allowed: ${allowedUnits(sku).join(", ")})`,
    );
  }
  const messageSize = number("message-size", flags.messageSize, (n) => n > 0, "a number of bytes > 0");
  try {
    const mix = flags.mix
      ? parseMix(service, flags.mix, messageSize)
      : { ...defaultMix(service), messageSizeBytes: messageSize };
    return { peak, sku, units, mix };
  } catch (err) {
    if (err instanceof WorkloadError) throw new UsageError(`--mix: ${err.message}`);
    throw err;
  }
}

/** The `--resource-id`s, each checked to be of `service`. @throws UsageError */
function givenIds(resourceIds: readonly string[], service: ServiceKind): string[] {
  return resourceIds.map((id) => {
    try {
      const ref = parseResourceId(id);
      if (ref.service !== service)
        throw new UsageError(`--resource-id ${id} is a ${ref.service} instance, but --service is ${service}`);
      return ref.id;
    } catch (err) {
      if (err instanceof ResourceIdError) throw new UsageError(`--resource-id: ${err.message}`);
      throw err;
    }
  });
}

/** `--instances` resource IDs named `signalr-001`, `webpubsub-002`, … in the subscription and group. @throws UsageError */
function generatedIds(flags: EmulatorFlags, service: ServiceKind): string[] {
  const count = number(
    "instances",
    flags.instances,
    (n) => Number.isInteger(n) && n >= 1 && n <= 1000,
    "a whole number 1–1000",
  );
  const prefix = service === "SignalR" ? "signalr" : "webpubsub";
  const ids = Array.from({ length: count }, (_, i) =>
    formatResourceId({
      subscriptionId: flags.subscription,
      resourceGroup: flags.resourceGroup,
      service,
      name: `${prefix}-${String(i + 1).padStart(3, "0")}`,
    }),
  );
  try {
    for (const id of ids) parseResourceId(id);
  } catch (err) {
    if (err instanceof ResourceIdError)
      throw new UsageError(`--subscription/--resource-group: ${err.message}`);
    throw err;
  }
  return ids;
}

/** `text` read by {@link number} when given, else `undefined`. @throws UsageError */
function optionalNumber(
  flag: string,
  text: string | undefined,
  check: (n: number) => boolean,
  what: string,
): number | undefined {
  return text === undefined ? undefined : number(flag, text, check, what);
}

/** A port 0–65535. */
function isPort(n: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= 65535;
}

/** `--start` as a time, if given. @throws UsageError */
function startFlag(flags: EmulatorFlags): Date | undefined {
  if (flags.start === undefined) return undefined;
  const start = new Date(flags.start);
  if (!Number.isFinite(start.getTime()))
    throw new UsageError(`--start must be an ISO 8601 time, got "${flags.start}"`);
  return start;
}

/** The emulator's clock, timing, quota and listening options, without instances. @throws UsageError */
function runOptions(flags: EmulatorFlags, cwd: string): Parameters<typeof startEmulator>[0] & object {
  const speed = number("speed", flags.speed, (n) => n >= 0, "a number ≥ 0");
  const start = startFlag(flags);
  const historyDays = number(
    "history-days",
    flags.historyDays,
    (n) => n >= 0 && n <= 93,
    "a number of days 0–93",
  );
  const scaleDurationMs = durationFlag("scale-duration", flags.scaleDuration);
  const ingestionDelayMs = durationFlag("ingestion-delay", flags.ingestionDelay);
  const readAfterWriteLagMs = durationFlag("read-after-write-lag", flags.readAfterWriteLag);
  const unitQuota = optionalNumber(
    "unit-quota",
    flags.unitQuota,
    (n) => Number.isInteger(n) && n >= 0,
    "a whole number of units ≥ 0",
  );
  const port = number("port", flags.port, isPort, "a port 0–65535");
  const appServerHttpPort = optionalNumber(
    "app-server-http-port",
    flags.appServerHttpPort,
    isPort,
    "a port 0–65535",
  );
  const connectionLifetimeMs = durationFlag("connection-lifetime", flags.connectionLifetime);
  if (!(connectionLifetimeMs > 0)) {
    throw new UsageError(`--connection-lifetime must be longer than 0, got "${flags.connectionLifetime}"`);
  }
  if (!["127.0.0.1", "::1", "localhost"].includes(flags.host)) {
    throw new UsageError(
      `--host must be a loopback address (127.0.0.1, ::1, localhost), got "${flags.host}"`,
    );
  }
  return {
    host: flags.host,
    port,
    ...(appServerHttpPort !== undefined ? { appServerHttpPort } : {}),
    connectionLifetimeSeconds: connectionLifetimeMs / 1000,
    disconnection: flags.disconnection,
    speed,
    ...(start ? { start } : {}),
    scaleDurationMs,
    ingestionDelayMs,
    readAfterWriteLagMs,
    ...(unitQuota !== undefined ? { unitQuota } : {}),
    historyDays,
    armRateLimit: flags.rateLimit,
    ...(flags.caFile !== undefined ? { caPath: resolve(cwd, flags.caFile) } : {}),
  };
}

/** Turns the flags into emulator options; every problem is a UsageError. */
async function emulatorPlan(
  flags: EmulatorFlags,
  cwd: string,
): Promise<{ instances: InstanceSpec[]; options: Parameters<typeof startEmulator>[0] & object }> {
  const service = serviceFlag(flags);
  const { peak, sku, units, mix } = instanceShape(flags, service);
  const demand = await loadDemand(flags, cwd, peak);
  const ids =
    flags.resourceId && flags.resourceId.length > 0
      ? givenIds(flags.resourceId, service)
      : generatedIds(flags, service);
  const options = runOptions(flags, cwd);
  const instances: InstanceSpec[] = ids.map((resourceId) => ({
    resourceId,
    location: flags.location,
    sku,
    units,
    mix,
    demand,
  }));
  return { instances, options: { ...options, instances } };
}

function describe(emulator: RunningEmulator, flags: EmulatorFlags): string {
  const views = emulator.control.instances();
  if (flags.output === "json") {
    return formatJson({
      armEndpoint: emulator.armEndpoint,
      metricsEndpoint: emulator.metricsEndpointTemplate,
      controlEndpoint: emulator.controlEndpoint,
      appServerMetrics: `${emulator.url}/appservers/{name}/metrics`,
      ...(emulator.appServerHttpUrl
        ? { appServerHttpMetrics: `${emulator.appServerHttpUrl}/appservers/{name}/metrics` }
        : {}),
      caPath: emulator.caPath,
      clock: { now: emulator.clock.now().toISOString(), speed: emulator.clock.speed },
      instances: views.map((v) => ({
        resourceId: v.resourceId,
        location: v.location,
        sku: v.sku,
        units: v.units,
        demand: v.demand,
      })),
    });
  }
  const endpoints = formatTable(
    ["endpoint", "url"],
    [
      ["ARM", emulator.armEndpoint],
      ["metrics", emulator.metricsEndpointTemplate],
      ["control", emulator.controlEndpoint],
      ["app servers", `${emulator.url}/appservers/{name}/metrics`],
      ...(emulator.appServerHttpUrl
        ? [["app servers (HTTP)", `${emulator.appServerHttpUrl}/appservers/{name}/metrics`]]
        : []),
      ["CA certificate", emulator.caPath],
    ],
  );
  const table = formatTable(
    ["resource ID", "location", "SKU", "units", "demand"],
    views.map((v) => [v.resourceId, v.location, v.sku, v.units, v.demand]),
  );
  return (
    `Azure emulator running; virtual clock at ${emulator.clock.now().toISOString()}, ×${emulator.clock.speed}.\n\n` +
    `${endpoints}\n${table}\n` +
    `Clients trust the CA with the pipeline option tlsOptions.ca (or NODE_EXTRA_CA_CERTS=${emulator.caPath}).\n` +
    `Try: curl --cacert ${emulator.caPath} ${emulator.controlEndpoint}/state\n` +
    "Stop with Ctrl+C.\n"
  );
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolveWait) => {
    if (signal.aborted) return resolveWait();
    signal.addEventListener("abort", () => resolveWait(), { once: true });
  });
}

/** Runs the emulator until `io.signal` aborts. */
async function runEmulatorCommand(flags: EmulatorFlags, io: CliIo): Promise<void> {
  const plan = await emulatorPlan(flags, io.cwd);
  const emulator = await startEmulator({
    ...plan.options,
    ...(flags.verbose
      ? {
          onRequest: (r) =>
            io.stderr(`${r.at} ${r.method} ${r.path} → ${r.status}${r.fault ? ` (fault ${r.fault})` : ""}\n`),
        }
      : {}),
  });
  try {
    io.stdout(describe(emulator, flags));
    await waitForAbort(io.signal);
  } finally {
    await emulator.stop();
  }
  if (flags.output !== "json") io.stdout("Azure emulator stopped.\n");
}

/** The `emulator` subcommand. */
export const emulatorCommand: CliCommand = defineCommand<EmulatorFlags>({
  name: "emulator",
  description:
    "Run an HTTPS stand-in for Azure Resource Manager and Azure Monitor metrics (SignalR, Web PubSub) on loopback, " +
    "driven by a traffic trace or pattern on a virtual clock, until stopped",
  commonOptions: "first",
  flags: (cmd) =>
    cmd
      .option("--trace <file>", "demand shape: a timestamp,value CSV such as traces/nyc_taxi.csv")
      .option("--pattern <name>", "demand shape without a trace: constant, daily or ramp", "daily")
      .option("--peak-hour <hour>", "daily pattern: hour of the peak, UTC (default 14)")
      .option(
        "--trough <fraction>",
        "daily pattern: the night's demand as a fraction of the peak (default 0.2)",
      )
      .option(
        "--history-days <n>",
        "days of past metrics each instance has (the same demand model; for seasonal forecasts)",
        "28",
      )
      .option("--peak-connections <n>", "client connections at the shape's peak", "10000")
      .option("--service <service>", "SignalR or WebPubSub", "SignalR")
      .option(
        "--resource-id <id...>",
        "resource IDs of the instances to emulate (default: --instances generated ones)",
      )
      .option("--instances <n>", "how many instances to generate when no --resource-id is given", "1")
      .option(
        "--subscription <id>",
        "subscription of generated instances",
        "00000000-0000-0000-0000-000000000000",
      )
      .option("--resource-group <name>", "resource group of generated instances", "emulator")
      .option("--location <region>", "region of the instances", "westeurope")
      .option("--sku <sku>", "initial SKU: Standard_S1, Premium_P1, Premium_P2 (or Free_F1)", "Premium_P1")
      .option("--units <n>", "initial units", "1")
      .option("--mix <mix>", "workload as scenario=share[,…], e.g. broadcast=0.2,echo=0.8 (default: echo)")
      .option("--message-size <bytes>", "average message size", "2048")
      .option("--speed <factor>", "virtual seconds per real second (1440: a day per minute)", "1")
      .option("--start <time>", "virtual start time, ISO 8601 (default: now)")
      .option("--scale-duration <duration>", "virtual time a scale operation takes (e.g. 3m)", "3m")
      .option(
        "--ingestion-delay <duration>",
        "virtual time before a minute's metrics are complete (e.g. 3m)",
        "3m",
      )
      .option(
        "--read-after-write-lag <duration>",
        "virtual time after an accepted update during which ARM reads still show the old SKU and units, Succeeded (e.g. 30s)",
        "0s",
      )
      .option(
        "--unit-quota <n>",
        "units each service may hold per subscription and region; an update over it is refused as Azure refuses it (Azure's default is 150; default: unlimited)",
      )
      .option("--port <port>", "port on loopback (0: any free port)", "0")
      .option(
        "--app-server-http-port <port>",
        "also serve the app servers' Prometheus /metrics on plain HTTP on this loopback port (0: any free port)",
      )
      .option(
        "--connection-lifetime <duration>",
        "mean client connection lifetime, from which the app servers' negotiate rate follows",
        "20m",
      )
      .addOption(
        new Option(
          "--disconnection <model>",
          "which clients a completed update disconnects: RemovedUnits (the removed units' share at a scale-in) or Everyone (all clients at any change)",
        )
          .choices([...DISCONNECTION_MODELS])
          .default("RemovedUnits"),
      )
      .option("--host <host>", "loopback address to listen on", "127.0.0.1")
      .option("--ca-file <path>", "where to write the CA certificate (default: a temporary file)")
      .option("--no-rate-limit", "do not apply ARM's per-subscription read/write limits"),
  action: runEmulatorCommand,
});
