/**
 * The published tier tables of Azure SignalR Service and Azure Web PubSub, as data.
 *
 * Every figure is copied from the services' performance guides, the "seeds":
 * - SignalR: "Guía de rendimiento para Azure SignalR Service" (Spanish; `SEED_SIGNALR`), the
 *   tables named in each entry's `seedTable`.
 * - Web PubSub: "Leistungsleitfaden für den Azure Web PubSub-Dienst" (German; `SEED_WEBPUBSUB`).
 *
 * Conventions of the seeds, applied here:
 * - Benchmarks use WebSocket, 2,048-byte messages, one message per connection per second,
 *   default (server) mode. A message below 1,024 B costs as much as a 1,024 B message.
 * - Bandwidth = messages/s × message size. The seeds print bandwidth with mixed labels ("Kbps",
 *   "KBps", "MBit/s", "MB"); read as KB = 1,024 B and MB = 1,000 KB every printed figure equals the
 *   formula (e.g. broadcast at unit 100: 200,000 msg/s × 2,048 B = 409,600,000 B/s = "400 MBps"). The
 *   formula is the authority; the printed strings are kept in `printedBandwidth` for traceability.
 * - Units were measured at 1, 2, 10, 50, 100, 200, 500, 1000 (send to connection's throughput at
 *   unit 20 instead of 10). Between measured points capacity is proportional to units, except for
 *   the routing caps below.
 */
import type { ServiceKind } from "./skus.js";

const SEED_SIGNALR = "Azure SignalR Service performance guide (Spanish edition)";
const SEED_WEBPUBSUB = "Azure Web PubSub performance guide (German edition)";

/** Message size of every benchmark in both seeds, bytes. */
export const BENCHMARK_MESSAGE_BYTES = 2048;
/** Messages smaller than this cost as much as one of this size, bytes. */
export const MIN_BILLED_MESSAGE_BYTES = 1024;
/** Server load under which latency stays low (both seeds), %. */
export const RECOMMENDED_MAX_SERVER_LOAD_PERCENT = 70;

/** SignalR basic scenarios (default mode unless named REST). */
export type SignalRScenario =
  | "echo"
  | "broadcast"
  | "smallGroup"
  | "largeGroup"
  | "sendToConnection"
  | "restBroadcast"
  | "restSendToUser";

/** Web PubSub basic scenarios. */
export type WebPubSubScenario =
  | "largeGroup"
  | "smallGroup"
  | "cloudEventsEcho"
  | "restSendToUser"
  | "restBroadcast";

export type ScenarioName = SignalRScenario | WebPubSubScenario;

export const SIGNALR_SCENARIOS: readonly SignalRScenario[] = [
  "echo",
  "broadcast",
  "smallGroup",
  "largeGroup",
  "sendToConnection",
  "restBroadcast",
  "restSendToUser",
];
export const WEBPUBSUB_SCENARIOS: readonly WebPubSubScenario[] = [
  "largeGroup",
  "smallGroup",
  "cloudEventsEcho",
  "restSendToUser",
  "restBroadcast",
];

/** How outbound messages follow from inbound ones in a scenario. */
export type FanOut =
  /** one outbound message per inbound message (echo, send to connection, send to user) */
  | "one"
  /** every connection receives every message (broadcast) */
  | "all"
  /** every member of one small group receives it (group size, default 10) */
  | "smallGroup"
  /** every member of one of the large groups receives it (connections / group count, default 10 groups) */
  | "largeGroup";

/** The routing cap that only Premium_P2 lifts. */
export interface RoutingCap {
  /** On Standard_S1/Premium_P1 capacity stops growing from this unit count on. */
  fromUnits: number;
  /** Premium_P2 capacity per unit, as a fraction of the unit-1 rate (small group: 1/2, send to connection: 1/5). */
  p2PerUnitFactor: number;
}

/** One seed table: a basic scenario's measured capacity at each measured unit count. */
export interface ScenarioTable {
  service: ServiceKind;
  scenario: ScenarioName;
  /** Human name of the table in the seed. */
  seedTable: string;
  seed: string;
  /** Measured unit counts, ascending (the seed's columns). */
  units: readonly number[];
  /** Maximum concurrent connections at each measured unit count. */
  connections: readonly number[];
  /** Inbound messages/s (2,048 B) at each measured unit count. */
  inboundMessagesPerSecond: readonly number[];
  /** Outbound messages/s (2,048 B) at each measured unit count. */
  outboundMessagesPerSecond: readonly number[];
  /**
   * True when the seed's inbound figure is a total the benchmark sent ("2 in total" for broadcast)
   * rather than a per-unit ceiling: inbound traffic of this scenario is then bounded by the
   * service's maximum inbound bandwidth only.
   */
  inboundIsBenchmarkTotal: boolean;
  /** The bandwidth strings as printed in the seed, per measured unit count. */
  printedBandwidth: { inbound: readonly string[]; outbound: readonly string[] };
  fanOut: FanOut;
  /** Present when only Premium_P2 lifts a routing cap. */
  routingCap?: RoutingCap;
  /** Serverless (REST) scenarios need no app servers. */
  serverless: boolean;
  /** Suggested app servers in default mode, at `appServerUnits`. SignalR only. */
  appServers?: readonly number[];
  appServerUnits?: readonly number[];
  /** Server connections per app server the seed recommends for this scenario (default 5). */
  serverConnectionsPerAppServer?: number;
}

const UNITS = [1, 2, 10, 50, 100, 200, 500, 1000] as const;
const UNITS_SEND_TO_CONNECTION = [1, 2, 20, 50, 100, 200, 500, 1000] as const;
const CONNECTIONS = [1000, 2000, 10000, 50000, 100000, 200000, 500000, 1000000] as const;
const CONNECTIONS_SEND_TO_CONNECTION = [1000, 2000, 20000, 50000, 100000, 200000, 500000, 1000000] as const;

const rep = <T>(value: T): T[] => UNITS.map(() => value);

/** SignalR tables ("Caso práctico" and "Modo sin servidor" sections of the SignalR seed). */
export const SIGNALR_TABLES: readonly ScenarioTable[] = [
  {
    service: "SignalR",
    scenario: "echo",
    seedTable: "Echo (Evaluación rápida; app servers: Echo, Número de servidores de aplicaciones)",
    seed: SEED_SIGNALR,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: [1000, 2000, 10000, 50000, 100000, 200000, 500000, 1000000],
    outboundMessagesPerSecond: [1000, 2000, 10000, 50000, 100000, 200000, 500000, 1000000],
    inboundIsBenchmarkTotal: false,
    printedBandwidth: {
      inbound: ["2 MBps", "4 MBps", "20 MBps", "100 MBps", "200 MBps", "400 MBps", "1000 MBps", "2000 MBps"],
      outbound: ["2 MBps", "4 MBps", "20 MBps", "100 MBps", "200 MBps", "400 MBps", "1000 MBps", "2000 Mbps"],
    },
    fanOut: "one",
    serverless: false,
    appServers: [1, 1, 1, 5, 10, 20, 50, 100],
    appServerUnits: UNITS,
  },
  {
    service: "SignalR",
    scenario: "broadcast",
    seedTable:
      "Difusión (mensajes y ancho de banda; app servers: Difusión, Número de servidores de aplicaciones)",
    seed: SEED_SIGNALR,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: rep(2),
    outboundMessagesPerSecond: [2000, 4000, 20000, 100000, 200000, 400000, 1000000, 2000000],
    inboundIsBenchmarkTotal: true,
    printedBandwidth: {
      inbound: rep("4 Kbps"),
      outbound: ["4 MBps", "8 MBps", "40 MBps", "200 MBps", "400 MBps", "800 MBps", "2000 Mbps", "4000 MBps"],
    },
    fanOut: "all",
    serverless: false,
    appServers: [1, 1, 1, 2, 2, 4, 10, 20],
    appServerUnits: UNITS,
    serverConnectionsPerAppServer: 40,
  },
  {
    service: "SignalR",
    scenario: "smallGroup",
    seedTable: "Enviar a un grupo pequeño (10 miembros)",
    seed: SEED_SIGNALR,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: [200, 400, 2000, 10000, 10000, 20000, 50000, 100000],
    outboundMessagesPerSecond: [2000, 4000, 20000, 100000, 100000, 200000, 500000, 1000000],
    inboundIsBenchmarkTotal: false,
    printedBandwidth: {
      inbound: ["400 Kbps", "800 Kbps", "4 MBps", "20 MBps", "20 MBps", "40 MBps", "100 MBps", "200 MBps"],
      outbound: ["4 MBps", "8 MBps", "40 MBps", "200 MBps", "200 MBps", "400 MBps", "1000 MBps", "2000 Mbps"],
    },
    fanOut: "smallGroup",
    routingCap: { fromUnits: 50, p2PerUnitFactor: 1 / 2 },
    serverless: false,
    appServers: [1, 1, 1, 5, 10, 20, 50, 100],
    appServerUnits: UNITS,
  },
  {
    service: "SignalR",
    scenario: "largeGroup",
    seedTable: "Enviar a grupo grande (10 grupos)",
    seed: SEED_SIGNALR,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: rep(20),
    outboundMessagesPerSecond: [2000, 4000, 20000, 100000, 200000, 400000, 1000000, 2000000],
    inboundIsBenchmarkTotal: true,
    printedBandwidth: {
      inbound: rep("40 KBps"),
      outbound: ["4 MBps", "8 MBps", "40 MBps", "200 MBps", "400 MBps", "800 MBps", "2000 Mbps", "4000 MBps"],
    },
    fanOut: "largeGroup",
    serverless: false,
    appServers: [1, 1, 2, 2, 2, 4, 10, 20],
    appServerUnits: UNITS,
    serverConnectionsPerAppServer: 40,
  },
  {
    service: "SignalR",
    scenario: "sendToConnection",
    seedTable: "Enviar a conexión",
    seed: SEED_SIGNALR,
    units: UNITS_SEND_TO_CONNECTION,
    connections: CONNECTIONS_SEND_TO_CONNECTION,
    inboundMessagesPerSecond: [1000, 2000, 20000, 20000, 20000, 40000, 100000, 200000],
    outboundMessagesPerSecond: [1000, 2000, 20000, 20000, 20000, 40000, 100000, 200000],
    inboundIsBenchmarkTotal: false,
    printedBandwidth: {
      inbound: ["2 MBps", "4 MBps", "40 MBps", "40 MBps", "40 MBps", "80 MBps", "200 MBps", "400 MBps"],
      outbound: ["2 MBps", "4 MBps", "40 MBps", "40 MBps", "40 MBps", "80 MBps", "200 MBps", "400 MBps"],
    },
    fanOut: "one",
    routingCap: { fromUnits: 20, p2PerUnitFactor: 1 / 5 },
    serverless: false,
    appServers: [1, 1, 1, 5, 10, 20, 50, 100],
    // The seed's app-server table for this scenario has a unit-10 column, not unit 20.
    appServerUnits: UNITS,
  },
  {
    service: "SignalR",
    scenario: "restBroadcast",
    seedTable: "Difusión a través de la API de REST",
    seed: SEED_SIGNALR,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: rep(2),
    outboundMessagesPerSecond: [2000, 4000, 20000, 100000, 200000, 400000, 1000000, 2000000],
    inboundIsBenchmarkTotal: true,
    printedBandwidth: {
      inbound: rep("4 Kbps"),
      outbound: ["4 MBps", "8 MBps", "40 MBps", "200 MBps", "400 MBps", "800 MBps", "2000 MBps", "4000 MBps"],
    },
    fanOut: "all",
    serverless: true,
  },
  {
    service: "SignalR",
    scenario: "restSendToUser",
    seedTable: "Enviar al usuario a través de la API de REST",
    seed: SEED_SIGNALR,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: [200, 400, 2000, 10000, 20000, 40000, 100000, 200000],
    outboundMessagesPerSecond: [200, 400, 2000, 10000, 20000, 40000, 100000, 200000],
    inboundIsBenchmarkTotal: false,
    printedBandwidth: {
      inbound: ["400 Kbps", "800 Kbps", "4 MBps", "20 MBps", "40 MBps", "80 MBps", "200 MBps", "400 MBps"],
      outbound: ["400 Kbps", "800 Kbps", "4 MBps", "20 MBps", "40 MBps", "80 MBps", "200 MBps", "400 MBps"],
    },
    fanOut: "one",
    serverless: true,
  },
];

/** Web PubSub tables ("Fallstudie" section of the Web PubSub seed). Web PubSub has no app-server table. */
export const WEBPUBSUB_TABLES: readonly ScenarioTable[] = [
  {
    service: "WebPubSub",
    scenario: "largeGroup",
    seedTable: "An große Gruppe senden (Unterprotokoll, 10 Gruppen)",
    seed: SEED_WEBPUBSUB,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: rep(30),
    outboundMessagesPerSecond: [3000, 6000, 30000, 150000, 300000, 600000, 1500000, 3000000],
    inboundIsBenchmarkTotal: true,
    printedBandwidth: {
      inbound: rep("60 KBit/s"),
      outbound: [
        "6 MBit/s",
        "12 MBit/s",
        "60 MBit/s",
        "300 MBit/s",
        "600 MBit/s",
        "1.200 MBit/s",
        "3.000 MBit/s",
        "6.000 MBit/s",
      ],
    },
    fanOut: "largeGroup",
    serverless: true,
  },
  {
    service: "WebPubSub",
    scenario: "smallGroup",
    seedTable: "An kleine Gruppe senden (Unterprotokoll, 10 Mitglieder)",
    seed: SEED_WEBPUBSUB,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: [200, 400, 2000, 10000, 10000, 20000, 50000, 100000],
    outboundMessagesPerSecond: [2000, 4000, 20000, 100000, 100000, 200000, 500000, 1000000],
    inboundIsBenchmarkTotal: false,
    printedBandwidth: {
      inbound: [
        "400 KBit/s",
        "800 KBit/s",
        "4 MBit/s",
        "20 MBit/s",
        "20 MBit/s",
        "40 MBit/s",
        "100 MBit/s",
        "200 MBit/s",
      ],
      outbound: [
        "4 MBit/s",
        "8 MBit/s",
        "40 MBit/s",
        "200 MBit/s",
        "200 MBit/s",
        "400 MBit/s",
        "1.000 MBit/s",
        "2.000 MBit/s",
      ],
    },
    fanOut: "smallGroup",
    routingCap: { fromUnits: 50, p2PerUnitFactor: 1 / 2 },
    serverless: true,
  },
  {
    service: "WebPubSub",
    scenario: "cloudEventsEcho",
    seedTable: "Echo (CloudEvents-Upstream, HTTP/1.1)",
    seed: SEED_WEBPUBSUB,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: [500, 1000, 5000, 25000, 50000, 100000, 250000, 500000],
    outboundMessagesPerSecond: [500, 1000, 5000, 25000, 50000, 100000, 250000, 500000],
    inboundIsBenchmarkTotal: false,
    printedBandwidth: {
      inbound: [
        "1 MBit/s",
        "2 MBit/s",
        "10 MBit/s",
        "50 MBit/s",
        "100 MBit/s",
        "200 MBit/s",
        "500 MBit/s",
        "1.000 MBit/s",
      ],
      outbound: [
        "1 MBit/s",
        "2 MBit/s",
        "10 MBit/s",
        "50 MBit/s",
        "100 MBit/s",
        "200 MBit/s",
        "500 MBit/s",
        "1.000 MBit/s",
      ],
    },
    fanOut: "one",
    serverless: false,
  },
  {
    service: "WebPubSub",
    scenario: "restSendToUser",
    seedTable: "Über die REST-API an Benutzer senden",
    seed: SEED_WEBPUBSUB,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: [180, 360, 1800, 9000, 18000, 36000, 90000, 180000],
    outboundMessagesPerSecond: [180, 360, 1800, 9000, 18000, 36000, 90000, 180000],
    inboundIsBenchmarkTotal: false,
    printedBandwidth: {
      inbound: [
        "360 KBit/s",
        "720 KBit/s",
        "3,6 MBit/s",
        "18 MBit/s",
        "36 MBit/s",
        "72 MBit/s",
        "180 MBit/s",
        "360 MBit/s",
      ],
      outbound: [
        "360 KBit/s",
        "720 KBit/s",
        "3,6 MBit/s",
        "18 MBit/s",
        "36 MBit/s",
        "72 MBit/s",
        "180 MBit/s",
        "360 MBit/s",
      ],
    },
    fanOut: "one",
    serverless: true,
  },
  {
    service: "WebPubSub",
    scenario: "restBroadcast",
    seedTable: "Übertragen über die REST-API",
    seed: SEED_WEBPUBSUB,
    units: UNITS,
    connections: CONNECTIONS,
    inboundMessagesPerSecond: rep(3),
    outboundMessagesPerSecond: [3000, 6000, 30000, 150000, 300000, 600000, 1500000, 3000000],
    inboundIsBenchmarkTotal: true,
    printedBandwidth: {
      inbound: rep("6 KBit/s"),
      outbound: [
        "6 MBit/s",
        "12 MBit/s",
        "60 MBit/s",
        "300 MBit/s",
        "600 MBit/s",
        "1.200 MBit/s",
        "3.000 MB",
        "6.000 MB",
      ],
    },
    fanOut: "all",
    serverless: true,
  },
];

/**
 * The scenario whose table gives each service's maximum inbound and outbound bandwidth, which a
 * mixed workload's summed bandwidth is checked against (SignalR seed, "Casos de uso mixtos": echo
 * gives the maximum inbound, broadcast the maximum outbound; Web PubSub: CloudEvents echo has the
 * highest inbound, large group and REST broadcast the highest outbound).
 */
export const SERVICE_MAXIMA: Readonly<
  Record<ServiceKind, { inbound: ScenarioName; outbound: ScenarioName }>
> = {
  SignalR: { inbound: "echo", outbound: "broadcast" },
  WebPubSub: { inbound: "cloudEventsEcho", outbound: "largeGroup" },
};

/** The scenarios of a service. */
export function scenariosOf(service: ServiceKind): readonly ScenarioName[] {
  return service === "SignalR" ? SIGNALR_SCENARIOS : WEBPUBSUB_SCENARIOS;
}

/** The seed table of a scenario; throws `RangeError` when the service has no such scenario. */
export function tableFor(service: ServiceKind, scenario: ScenarioName): ScenarioTable {
  const tables = service === "SignalR" ? SIGNALR_TABLES : WEBPUBSUB_TABLES;
  const table = tables.find((t) => t.scenario === scenario);
  if (!table) {
    throw new RangeError(
      `${service} has no scenario "${scenario}" (known: ${scenariosOf(service).join(", ")})`,
    );
  }
  return table;
}
