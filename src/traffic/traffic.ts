/**
 * The traffic model: what an instance of a given SKU and unit count carries, and how loaded it
 * is, when a number of client connections want it. Pure (noise is an argument); shared by the
 * emulator, `simulate` and `demo`.
 *
 * For one minute:
 * 1. Connection quota: units × 1,000 (Free_F1: 20). SignalR app servers in default mode hold
 *    server connections that count against it (app servers from the SignalR seed's table × the
 *    seed's server connections per app server, 5 unless the table says otherwise). Client
 *    connections above what is left are **refused**.
 * 2. The accepted clients are split over the workload's scenarios by share, and each scenario's
 *    messages and bandwidth follow the seeds' formulas (`capacity/workload.ts`).
 * 3. Capacity at the SKU and units comes from the tier tables (`capacity/sizing.ts` `evaluate`):
 *    bandwidth per direction and the routing-bound scenarios. When demand exceeds a bandwidth
 *    dimension, the service delivers only what that dimension allows (messages scale down).
 * 4. **Server load** = the highest utilization over connections and bandwidth dimensions, × 100,
 *    times (1 + amplitude × noise), clamped to 0–100 %.
 * 5. Metrics: connection quota utilization = (clients + server connections) / quota;
 *    `MessageCount` counts inbound and outbound messages in 2 KB units (a 5 KB message counts 3);
 *    traffic is messages × the actual message size, bytes.
 *
 * Free_F1 is modelled as one Standard_S1 unit with a 20-connection quota.
 */
import {
  BENCHMARK_MESSAGE_BYTES,
  CONNECTIONS_PER_UNIT,
  evaluate,
  type ScalableSku,
  type ScenarioLoad,
  type ScenarioName,
  type ServiceKind,
  type SkuName,
  scenarioAppServers,
  scenarioDemand,
  scenariosOf,
  tableFor,
  WorkloadError,
} from "../capacity/index.js";

/** One scenario of a mix. */
export interface MixEntry {
  scenario: ScenarioName;
  /** Share of the connections taking part, 0–1; shares of a mix add up to 1. */
  share: number;
  /** Seconds between two messages of one sender (default 1). */
  sendIntervalSeconds?: number;
  /** Members per small group (default 10). */
  groupSize?: number;
  /** Number of large groups (default 10). */
  groups?: number;
}

/** What the clients of an instance do. */
export interface WorkloadMix {
  service: ServiceKind;
  entries: readonly MixEntry[];
  /** Average message size, bytes (default 2,048). */
  messageSizeBytes: number;
}

/** The mix used when none is given: SignalR echo every second; Web PubSub CloudEvents echo every 2 s. */
export function defaultMix(service: ServiceKind): WorkloadMix {
  return service === "SignalR"
    ? { service, entries: [{ scenario: "echo", share: 1 }], messageSizeBytes: BENCHMARK_MESSAGE_BYTES }
    : {
        service,
        entries: [{ scenario: "cloudEventsEcho", share: 1, sendIntervalSeconds: 2 }],
        messageSizeBytes: BENCHMARK_MESSAGE_BYTES,
      };
}

/**
 * Checks a mix: known scenarios for the service, positive shares adding up to 1 (±0.001),
 * positive message size and intervals.
 * @throws WorkloadError naming the first problem.
 */
export function validateMix(mix: WorkloadMix): void {
  const known = scenariosOf(mix.service);
  if (mix.entries.length === 0) throw new WorkloadError("a workload mix needs at least one scenario");
  for (const e of mix.entries) {
    if (!known.includes(e.scenario)) {
      throw new WorkloadError(`${mix.service} has no scenario "${e.scenario}" (known: ${known.join(", ")})`);
    }
    if (!(e.share > 0) || !Number.isFinite(e.share))
      throw new WorkloadError(`share of ${e.scenario} must be > 0, got ${e.share}`);
    for (const [k, v] of [
      ["sendIntervalSeconds", e.sendIntervalSeconds],
      ["groupSize", e.groupSize],
      ["groups", e.groups],
    ] as const) {
      if (v !== undefined && (!(v > 0) || !Number.isFinite(v))) {
        throw new WorkloadError(`${k} of ${e.scenario} must be > 0, got ${v}`);
      }
    }
  }
  const total = mix.entries.reduce((a, e) => a + e.share, 0);
  if (Math.abs(total - 1) > 1e-3) throw new WorkloadError(`scenario shares must add up to 1, got ${total}`);
  if (!(mix.messageSizeBytes > 0) || !Number.isFinite(mix.messageSizeBytes)) {
    throw new WorkloadError(`message size must be > 0 bytes, got ${mix.messageSizeBytes}`);
  }
}

/**
 * Parses `scenario=share[,scenario=share…]` (e.g. `broadcast=0.2,echo=0.8`); a single scenario
 * without `=share` takes all.
 * @throws WorkloadError for a malformed entry or an invalid mix.
 */
export function parseMix(
  service: ServiceKind,
  text: string,
  messageSizeBytes = BENCHMARK_MESSAGE_BYTES,
): WorkloadMix {
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const entries: MixEntry[] = parts.map((p) => {
    const [name, share] = p.split("=").map((s) => s.trim());
    if (!name) throw new WorkloadError(`malformed mix entry "${p}" (expected scenario=share)`);
    const value = share === undefined ? (parts.length === 1 ? 1 : Number.NaN) : Number(share);
    if (!Number.isFinite(value))
      throw new WorkloadError(`malformed mix entry "${p}" (expected scenario=share)`);
    return { scenario: name as ScenarioName, share: value };
  });
  const mix: WorkloadMix = { service, entries, messageSizeBytes };
  validateMix(mix);
  return mix;
}

/** One minute of an instance's traffic. Rates are per second. */
export interface TrafficMinute {
  /** Client connections that wanted the service. */
  offeredConnections: number;
  /** Client connections accepted. */
  clientConnections: number;
  /** Client connections refused (over the quota). */
  refusedConnections: number;
  /** App-server connections (SignalR default mode). */
  serverConnections: number;
  /** Connection quota: units × 1,000 (Free_F1: 20). */
  connectionQuota: number;
  inboundMessagesPerSecond: number;
  outboundMessagesPerSecond: number;
  /** `MessageCount` rate: inbound + outbound messages in 2 KB units. */
  messageCountPerSecond: number;
  inboundBytesPerSecond: number;
  outboundBytesPerSecond: number;
  /** Server load with noise, 0–100. */
  serverLoadPercent: number;
  /** (clients + server connections) / quota, 0–100. */
  connectionQuotaUtilizationPercent: number;
  /** Highest utilization before noise (can exceed 1: demand above capacity). */
  utilization: number;
  /** The dimension with that utilization: `connections`, `inboundBandwidth`, `<scenario>.outbound`, … */
  limitedBy: string;
}

/** Inputs of {@link trafficAt}. */
export interface TrafficInput {
  mix: WorkloadMix;
  /** Client connections that want the service. */
  offeredConnections: number;
  sku: SkuName;
  units: number;
  /** A value in [−1, 1]. */
  noise: number;
  /** Relative amplitude of the noise on server load (default 0.05 = ±5 %). */
  noiseAmplitude?: number;
}

function serverConnectionsFor(mix: WorkloadMix, units: number): number {
  if (mix.service !== "SignalR") return 0;
  let most = 0;
  for (const e of mix.entries) {
    const table = tableFor(mix.service, e.scenario);
    if (table.serverless) continue;
    const perAppServer = table.serverConnectionsPerAppServer ?? 5;
    most = Math.max(most, scenarioAppServers(mix.service, e.scenario, units) * perAppServer);
  }
  return most;
}

/**
 * The traffic, load and metrics of one minute.
 * @throws RangeError for a non-positive unit count or negative demand.
 */
export function trafficAt(input: TrafficInput): TrafficMinute {
  const { mix, sku, units } = input;
  if (!(units > 0)) throw new RangeError(`units must be positive, got ${units}`);
  if (!(input.offeredConnections >= 0)) {
    throw new RangeError(`offered connections must be ≥ 0, got ${input.offeredConnections}`);
  }
  const quota = sku === "Free_F1" ? 20 : units * CONNECTIONS_PER_UNIT;
  const capacitySku: ScalableSku = sku === "Free_F1" ? "Standard_S1" : sku;
  const capacityUnits = sku === "Free_F1" ? 1 : units;
  const serverConnections = Math.min(quota, serverConnectionsFor(mix, capacityUnits));
  const offered = input.offeredConnections;
  const clientConnections = Math.min(offered, quota - serverConnections);
  const refusedConnections = offered - clientConnections;

  const loads: ScenarioLoad[] = mix.entries.map((e) => ({
    scenario: e.scenario,
    connections: clientConnections * e.share,
    messageSizeBytes: mix.messageSizeBytes,
    ...(e.sendIntervalSeconds !== undefined ? { sendIntervalSeconds: e.sendIntervalSeconds } : {}),
    ...(e.groupSize !== undefined ? { groupSize: e.groupSize } : {}),
    ...(e.groups !== undefined ? { groups: e.groups } : {}),
  }));
  const demands = loads.map((l) => scenarioDemand(mix.service, l));
  const dims = evaluate(mix.service, demands, capacitySku, capacityUnits).filter(
    (d) => d.name !== "connections",
  );

  const connectionUtilization = (clientConnections + serverConnections) / quota;
  let limitedBy = "connections";
  let bandwidthUtilization = 0;
  let bandwidthDim = "";
  for (const d of dims) {
    if (d.utilization > bandwidthUtilization) {
      bandwidthUtilization = d.utilization;
      bandwidthDim = d.name;
    }
  }
  let utilization = connectionUtilization;
  if (bandwidthUtilization > connectionUtilization) {
    utilization = bandwidthUtilization;
    limitedBy = bandwidthDim;
  }
  const delivered = bandwidthUtilization > 1 ? 1 / bandwidthUtilization : 1;
  const inbound = demands.reduce((a, d) => a + d.inboundMessagesPerSecond, 0) * delivered;
  const outbound = demands.reduce((a, d) => a + d.outboundMessagesPerSecond, 0) * delivered;
  const unitsPerMessage = Math.max(1, Math.ceil(mix.messageSizeBytes / BENCHMARK_MESSAGE_BYTES));
  const amplitude = input.noiseAmplitude ?? 0.05;
  const noisy = utilization * 100 * (1 + amplitude * Math.max(-1, Math.min(1, input.noise)));
  return {
    offeredConnections: offered,
    clientConnections,
    refusedConnections,
    serverConnections,
    connectionQuota: quota,
    inboundMessagesPerSecond: inbound,
    outboundMessagesPerSecond: outbound,
    messageCountPerSecond: (inbound + outbound) * unitsPerMessage,
    inboundBytesPerSecond: inbound * mix.messageSizeBytes,
    outboundBytesPerSecond: outbound * mix.messageSizeBytes,
    serverLoadPercent: Math.min(100, Math.max(0, noisy)),
    connectionQuotaUtilizationPercent: Math.min(100, connectionUtilization * 100),
    utilization,
    limitedBy,
  };
}
