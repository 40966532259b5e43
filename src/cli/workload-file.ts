/**
 * Reads a workload file (YAML or JSON) for `size`:
 *
 * ```yaml
 * service: SignalR            # SignalR | WebPubSub
 * allowSkus: [Premium_P1, Premium_P2]   # optional
 * connections: 40000          # optional: total when scenarios share connections
 * scenarios:
 *   - scenario: broadcast
 *     connections: 100000
 *     senders: 1
 *     messageSizeBytes: 20480
 *     sendIntervalSeconds: 5
 * ```
 */
import Type, { type Static } from "typebox";
import { parseYamlFile } from "../api/yaml-file.js";
import {
  SCALABLE_SKUS,
  type ScalableSku,
  SERVICE_KINDS,
  SIGNALR_SCENARIOS,
  WEBPUBSUB_SCENARIOS,
  type Workload,
} from "../capacity/index.js";
import { UsageError } from "./errors.js";

const scenarioNames = [...new Set([...SIGNALR_SCENARIOS, ...WEBPUBSUB_SCENARIOS])];

const ScenarioLoadSchema = Type.Object(
  {
    scenario: Type.Union(scenarioNames.map((s) => Type.Literal(s))),
    connections: Type.Integer({ minimum: 0 }),
    senders: Type.Optional(Type.Number({ minimum: 0 })),
    inboundMessagesPerSecond: Type.Optional(Type.Number({ minimum: 0 })),
    messageSizeBytes: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    sendIntervalSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    groupSize: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    groups: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  },
  { additionalProperties: false },
);

const WorkloadFileSchema = Type.Object(
  {
    service: Type.Union(SERVICE_KINDS.map((s) => Type.Literal(s))),
    connections: Type.Optional(Type.Integer({ minimum: 0 })),
    allowSkus: Type.Optional(
      Type.Array(Type.Union(SCALABLE_SKUS.map((s) => Type.Literal(s))), { minItems: 1 }),
    ),
    scenarios: Type.Array(ScenarioLoadSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

type WorkloadFile = Static<typeof WorkloadFileSchema>;

/** A parsed workload file. */
export interface ParsedWorkload {
  workload: Workload;
  allowSkus?: ScalableSku[];
}

/**
 * Parses the text of a workload file.
 * @throws UsageError naming the file and the first problem (not YAML, wrong shape, bad value).
 */
export function parseWorkloadFile(text: string, fileName: string): ParsedWorkload {
  const file: WorkloadFile = parseYamlFile(text, WorkloadFileSchema, (problem) => {
    if (problem.kind === "yaml") return new UsageError(`${fileName}: not valid YAML: ${problem.message}`);
    const where = problem.path ? problem.path.replace(/^\//, "").replaceAll("/", ".") : "(top level)";
    // A key the schema does not know shows up as "schema is false" at its own path.
    const what = problem.message === "schema is false" ? "unknown field" : (problem.message ?? "invalid");
    return new UsageError(
      `${fileName}: not a workload file: ${where}: ${what} (expected service and scenarios[])`,
    );
  });
  const workload: Workload = { service: file.service, scenarios: file.scenarios };
  if (file.connections !== undefined) workload.connections = file.connections;
  const parsed: ParsedWorkload = { workload };
  if (file.allowSkus) parsed.allowSkus = [...file.allowSkus];
  return parsed;
}
