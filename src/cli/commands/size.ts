/**
 * `signalr-autoscaler size`: which SKU and how many units (and app servers) a workload needs, by
 * the seeds' tier tables and formulas (see src/capacity).
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Option } from "commander";
import {
  type Dimension,
  isScalableSku,
  type ScalableSku,
  type ScenarioLoad,
  type ScenarioName,
  type ServiceKind,
  type SizingResult,
  scenariosOf,
  size,
  type Workload,
  WorkloadError,
  workloadDemand,
} from "../../capacity/index.js";
import { type CliCommand, type CommonOptions, defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { numberFlag } from "../flags.js";
import type { CliIo } from "../io.js";
import { formatJson, formatNumber, formatTable } from "../output.js";
import { parseWorkloadFile } from "../workload-file.js";

interface SizeFlags extends CommonOptions {
  service: ServiceKind;
  scenario?: string;
  connections?: string;
  senders?: string;
  inboundRate?: string;
  messageSize?: string;
  sendInterval?: string;
  groupSize?: string;
  groups?: string;
  allowSku?: string[];
  workload?: string;
  maxUtilization: string;
}

function parseSkus(values: readonly string[]): ScalableSku[] {
  const skus = values.flatMap((v) => v.split(",")).map((v) => v.trim());
  for (const sku of skus) {
    if (!isScalableSku(sku)) {
      throw new UsageError(
        `--allow-sku "${sku}" is not a SKU the operator scales (Standard_S1, Premium_P1, Premium_P2; never Free_F1)`,
      );
    }
  }
  return skus as ScalableSku[];
}

function workloadFromFlags(flags: SizeFlags): Workload {
  if (!flags.scenario) throw new UsageError("give --scenario (with --connections) or --workload FILE.yaml");
  const known = scenariosOf(flags.service);
  if (!(known as readonly string[]).includes(flags.scenario)) {
    throw new UsageError(
      `--scenario "${flags.scenario}" is not a ${flags.service} scenario (${known.join(", ")})`,
    );
  }
  const connections = numberFlag("connections", flags.connections, { integer: true, min: 0 });
  if (connections === undefined) throw new UsageError("--connections is required with --scenario");
  if (flags.senders !== undefined && flags.inboundRate !== undefined) {
    throw new UsageError("give --senders or --inbound-rate, not both");
  }
  const load: ScenarioLoad = { scenario: flags.scenario as ScenarioName, connections };
  const optional: [keyof ScenarioLoad, number | undefined][] = [
    ["senders", numberFlag("senders", flags.senders, { min: 0 })],
    ["inboundMessagesPerSecond", numberFlag("inbound-rate", flags.inboundRate, { min: 0 })],
    ["messageSizeBytes", numberFlag("message-size", flags.messageSize, { exclusiveMin: 0 })],
    ["sendIntervalSeconds", numberFlag("send-interval", flags.sendInterval, { exclusiveMin: 0 })],
    ["groupSize", numberFlag("group-size", flags.groupSize, { exclusiveMin: 0 })],
    ["groups", numberFlag("groups", flags.groups, { exclusiveMin: 0 })],
  ];
  const mutable = load as unknown as Record<string, unknown>;
  for (const [key, value] of optional) if (value !== undefined) mutable[key] = value;
  return { service: flags.service, scenarios: [load] };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function describeDimension(d: Dimension): string {
  return d.name;
}

function renderTable(result: SizingResult, limit: number): string {
  const head = result.fits
    ? `${result.service}: ${result.sku} × ${plural(result.units, "unit")}` +
      (result.service === "SignalR" ? `, ${plural(result.appServers, "app server")} (default mode)` : "") +
      `\nlimited by: ${result.limitedBy}${limit < 1 ? ` (at most ${formatNumber(limit * 100)} % utilization)` : ""}\n\n`
    : `${result.service}: does NOT fit in any allowed SKU; the largest allowed is ${result.sku} × ${result.units} units\n` +
      `short: ${result.shortfall
        .map((s) => `${s.name} by ${formatNumber(s.missing)} ${s.unit}`)
        .join("; ")}\n\n`;
  const rows = result.dimensions.map((d) => [
    describeDimension(d),
    d.unit,
    d.required,
    d.capacity,
    d.requiredMessagesPerSecond === undefined ? "" : formatNumber(d.requiredMessagesPerSecond),
    d.capacityMessagesPerSecond === undefined ? "" : formatNumber(d.capacityMessagesPerSecond),
    `${formatNumber(d.utilization * 100)} %`,
  ]);
  return (
    head +
    formatTable(["DIMENSION", "UNIT", "REQUIRED", "CAPACITY", "REQ MSG/S", "CAP MSG/S", "UTILIZATION"], rows)
  );
}

async function runSize(flags: SizeFlags, io: CliIo): Promise<void> {
  let workload: Workload;
  let allowed: ScalableSku[] | undefined;
  if (flags.workload) {
    if (flags.scenario) throw new UsageError("give --workload or --scenario, not both");
    const path = resolve(io.cwd, flags.workload);
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (err) {
      throw new UsageError(
        `cannot read --workload ${flags.workload}: ${(err as NodeJS.ErrnoException).code ?? err}`,
      );
    }
    const parsed = parseWorkloadFile(text, flags.workload);
    workload = parsed.workload;
    allowed = parsed.allowSkus;
  } else {
    workload = workloadFromFlags(flags);
  }
  if (flags.allowSku && flags.allowSku.length > 0) allowed = parseSkus(flags.allowSku);
  const limit =
    (numberFlag("max-utilization", flags.maxUtilization, { exclusiveMin: 0, max: 100 }) ?? 100) / 100;
  let demands: ReturnType<typeof workloadDemand>;
  try {
    demands = workloadDemand(workload);
  } catch (err) {
    if (err instanceof WorkloadError) throw new UsageError(err.message);
    throw err;
  }
  const result = size(workload.service, demands, {
    ...(allowed ? { allowedSkus: allowed } : {}),
    ...(workload.connections !== undefined ? { totalConnections: workload.connections } : {}),
    maxUtilization: limit,
  });
  io.stdout(flags.output === "json" ? formatJson(result) : renderTable(result, limit));
}

/** The `size` subcommand. */
export const sizeCommand: CliCommand = defineCommand<SizeFlags>({
  name: "size",
  description:
    "Size an instance for a workload: the smallest allowed SKU and unit count, the binding dimension, the headroom of every dimension and the app servers (SignalR default mode), from the published tier tables.",
  flags: (cmd) =>
    cmd
      .addOption(
        new Option("--service <service>", "SignalR or WebPubSub")
          .choices(["SignalR", "WebPubSub"])
          .default("SignalR"),
      )
      .option(
        "--scenario <name>",
        "basic scenario (SignalR: echo, broadcast, smallGroup, largeGroup, sendToConnection, restBroadcast, restSendToUser; WebPubSub: largeGroup, smallGroup, cloudEventsEcho, restSendToUser, restBroadcast)",
      )
      .option("--connections <n>", "concurrent client connections")
      .option("--senders <n>", "connections that send, one message each per send interval")
      .option("--inbound-rate <n>", "inbound messages/s (instead of --senders)")
      .option("--message-size <bytes>", "average message size, bytes (default 2048; below 1024 costs 1024)")
      .option("--send-interval <seconds>", "seconds between two messages of one sender (default 1)")
      .option("--group-size <n>", "members per group for smallGroup (default 10)")
      .option("--groups <n>", "number of groups for largeGroup (default 10)")
      .option("--allow-sku <sku...>", "SKUs that may be chosen (default all three; comma or space separated)")
      .option("--workload <file>", "YAML/JSON workload file with a mix of scenarios")
      .option("--max-utilization <percent>", "keep every dimension at or below this % of capacity", "100"),
  examples: [
    "signalr-autoscaler size --scenario broadcast --connections 100000 --message-size 20480 --send-interval 5",
    "signalr-autoscaler size --workload examples/workload-chat.yaml --output json",
  ],
  action: runSize,
});
