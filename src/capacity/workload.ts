/**
 * Workloads: a mix of basic scenarios, and the demand (connections, messages/s, bytes/s) each puts
 * on the service, by the seeds' formulas:
 *
 *     inboundBandwidth  = inboundConnections  × messageSize / sendInterval   (bytes/s)
 *     outboundBandwidth = outboundConnections × messageSize / sendInterval   (bytes/s)
 *
 * with a message below 1,024 B costing as much as one of 1,024 B (both seeds, "messageSize").
 */
import type { ServiceKind } from "./skus.js";
import {
  BENCHMARK_MESSAGE_BYTES,
  MIN_BILLED_MESSAGE_BYTES,
  type ScenarioName,
  scenariosOf,
  tableFor,
} from "./tier-tables.js";

/** One basic scenario of a workload. */
export interface ScenarioLoad {
  scenario: ScenarioName;
  /** Concurrent client connections taking part (they receive the scenario's messages). */
  connections: number;
  /**
   * Connections that send, each one message every `sendIntervalSeconds`. Default: every
   * connection for one-to-one and small-group scenarios, 1 for broadcast and large-group ones.
   * Give either this or `inboundMessagesPerSecond`.
   */
  senders?: number;
  /** Inbound messages/s, instead of `senders` / `sendIntervalSeconds`. */
  inboundMessagesPerSecond?: number;
  /** Average message size, bytes (default 2,048). */
  messageSizeBytes?: number;
  /** Seconds between two messages of one sender (default 1). */
  sendIntervalSeconds?: number;
  /** Members per small group (default 10, as in the seeds' benchmark). */
  groupSize?: number;
  /** Number of large groups (default 10, as in the seeds' benchmark). */
  groups?: number;
}

/** A workload: the service and its mix of scenarios. */
export interface Workload {
  service: ServiceKind;
  scenarios: readonly ScenarioLoad[];
  /**
   * Total concurrent connections, when scenarios share connections (default: the sum of the
   * scenarios' connections). Must be at least the largest scenario's connections.
   */
  connections?: number;
}

/** The demand one scenario puts on the service. */
export interface ScenarioDemand {
  scenario: ScenarioName;
  connections: number;
  /** Messages/s as sent. */
  inboundMessagesPerSecond: number;
  outboundMessagesPerSecond: number;
  /** Bandwidth with the 1,024-B minimum applied, bytes/s. */
  inboundBytesPerSecond: number;
  outboundBytesPerSecond: number;
  /** max(message size, 1,024), bytes. */
  billedMessageBytes: number;
}

/** A workload that cannot be sized; the message names the field and the value. */
export class WorkloadError extends RangeError {
  override readonly name = "WorkloadError";
}

function positive(value: number | undefined, what: string, allowZero = false): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new WorkloadError(
      `${what} must be a ${allowZero ? "non-negative" : "positive"} number, got ${value}`,
    );
  }
}

/**
 * Checks a workload; throws {@link WorkloadError} naming the first bad field (unknown scenario for
 * the service, negative or non-finite numbers, message size or send interval of 0, both senders
 * and inbound rate, senders above connections).
 */
function validateWorkload(workload: Workload): void {
  const known = scenariosOf(workload.service);
  if (workload.scenarios.length === 0) throw new WorkloadError("a workload needs at least one scenario");
  if (workload.connections !== undefined) {
    positive(workload.connections, "connections", true);
    const largest = Math.max(...workload.scenarios.map((s) => s.connections));
    if (workload.connections < largest) {
      throw new WorkloadError(
        `connections (${workload.connections}) is below the largest scenario's connections (${largest})`,
      );
    }
  }
  workload.scenarios.forEach((s, i) => {
    const at = `scenarios[${i}] (${s.scenario})`;
    if (!known.includes(s.scenario)) {
      throw new WorkloadError(
        `${at}: ${workload.service} has no scenario "${s.scenario}" (known: ${known.join(", ")})`,
      );
    }
    positive(s.connections, `${at}.connections`, true);
    if (!Number.isInteger(s.connections)) throw new WorkloadError(`${at}.connections must be a whole number`);
    positive(s.senders, `${at}.senders`, true);
    positive(s.inboundMessagesPerSecond, `${at}.inboundMessagesPerSecond`, true);
    positive(s.messageSizeBytes, `${at}.messageSizeBytes`);
    positive(s.sendIntervalSeconds, `${at}.sendIntervalSeconds`);
    positive(s.groupSize, `${at}.groupSize`);
    positive(s.groups, `${at}.groups`);
    if (s.senders !== undefined && s.inboundMessagesPerSecond !== undefined) {
      throw new WorkloadError(`${at}: give senders or inboundMessagesPerSecond, not both`);
    }
    if (s.senders !== undefined && s.senders > s.connections && s.connections > 0) {
      throw new WorkloadError(`${at}.senders (${s.senders}) exceeds connections (${s.connections})`);
    }
  });
}

/**
 * The demand of one scenario, by the seeds' formulas.
 * @throws WorkloadError for a scenario the service does not have.
 */
export function scenarioDemand(service: ServiceKind, load: ScenarioLoad): ScenarioDemand {
  let table: ReturnType<typeof tableFor>;
  try {
    table = tableFor(service, load.scenario);
  } catch (err) {
    throw new WorkloadError((err as Error).message);
  }
  const interval = load.sendIntervalSeconds ?? 1;
  const defaultSenders = table.fanOut === "all" || table.fanOut === "largeGroup" ? 1 : load.connections;
  const inbound = load.inboundMessagesPerSecond ?? (load.senders ?? defaultSenders) / interval;
  let outbound: number;
  switch (table.fanOut) {
    case "one":
      outbound = inbound;
      break;
    case "all":
      outbound = inbound * load.connections;
      break;
    case "smallGroup":
      outbound = inbound * (load.groupSize ?? 10);
      break;
    case "largeGroup":
      outbound = inbound * (load.connections / (load.groups ?? 10));
      break;
  }
  const billed = Math.max(load.messageSizeBytes ?? BENCHMARK_MESSAGE_BYTES, MIN_BILLED_MESSAGE_BYTES);
  return {
    scenario: load.scenario,
    connections: load.connections,
    inboundMessagesPerSecond: inbound,
    outboundMessagesPerSecond: outbound,
    inboundBytesPerSecond: inbound * billed,
    outboundBytesPerSecond: outbound * billed,
    billedMessageBytes: billed,
  };
}

/** The demand of every scenario of a (validated) workload. */
export function workloadDemand(workload: Workload): ScenarioDemand[] {
  validateWorkload(workload);
  return workload.scenarios.map((s) => scenarioDemand(workload.service, s));
}
