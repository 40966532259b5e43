/**
 * `signalr-autoscaler recommend`: the decision the operator would make for a policy, from a saved
 * Azure Monitor metrics response, with every reason — the answer to "why did it (not) scale?".
 *
 *     signalr-autoscaler recommend --policy chat.yaml --metrics metrics.json --current Premium_P1/10/3
 *
 * Inputs: a CapacityPolicy manifest (`--policy`, YAML or JSON, as applied or as
 * `kubectl get capol NAME -o yaml` prints it — its status then supplies the history), the metrics
 * response (`--metrics`, once or more: a metrics:getBatch body, a single-resource metrics body, or
 * what `az monitor metrics list` prints, see ../metrics-file.ts), the current capacity
 * (`--current SKU/units[/replicas]`, or the status's `current`), an optional status file with the
 * history (`--status`), and the time of the decision (`--now`, RFC 3339 with an offset; default:
 * the end of the responses' time span).
 *
 * A policy's leading signal (`spec.anticipation.leadingSignal`) is not read: `recommend` asks no
 * Prometheus, so its decision is what Azure Monitor alone gives, and a note says so.
 */
import { parse as parseYaml } from "yaml";
import type { CapacityPolicyStatus } from "../../api/index.js";
import {
  type CurrentState,
  type Decision,
  type DecisionHistory,
  decide,
  expectedDisconnects,
  fmt,
  historyFromStatus,
  type SignalReport,
} from "../../autoscale/index.js";
import type { SkuName } from "../../capacity/skus.js";
import { describePrometheusServer } from "../../prometheus/index.js";
import { parseRfc3339 } from "../../shared/time-text.js";
import { type CliCommand, type CommonOptions, defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { readFlagText } from "../flags.js";
import type { CliIo } from "../io.js";
import { parseMetricsBody, samplesFromBodies } from "../metrics-file.js";
import { formatJson, formatTable } from "../output.js";
import { readPolicyFile } from "../policy-file.js";

interface RecommendFlags extends CommonOptions {
  policy?: string;
  metrics?: string[];
  current?: string;
  hpaMinReplicas?: string;
  status?: string;
  now?: string;
}

const CURRENT = /^(Free_F1|Standard_S1|Premium_P1|Premium_P2)\/([0-9]+)(?:\/([0-9]+))?$/;

/** Parses `--current SKU/units[/replicas]` (e.g. `Premium_P1/20/4`). */
export function parseCurrent(raw: string): CurrentState {
  const m = CURRENT.exec(raw.trim());
  if (!m) {
    throw new UsageError(
      `--current must be SKU/units[/replicas] with SKU one of Free_F1, Standard_S1, Premium_P1, Premium_P2 (e.g. Premium_P1/20/4), got "${raw}"`,
    );
  }
  const units = Number(m[2]);
  if (units < 1) throw new UsageError(`--current units must be at least 1, got "${raw}"`);
  const current: CurrentState = { sku: m[1] as SkuName, units };
  if (m[3] !== undefined) current.replicas = Number(m[3]);
  return current;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Reads a status file: a status object, or a whole CapacityPolicy (its `status`). */
function parseStatusFile(text: string, file: string): Partial<CapacityPolicyStatus> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new UsageError(`status ${file}: not YAML or JSON (${(err as Error).message.split("\n")[0]})`);
  }
  if (isObject(doc) && isObject(doc["status"])) doc = doc["status"];
  if (!isObject(doc)) throw new UsageError(`status ${file}: must be a CapacityPolicy status object`);
  for (const key of ["recommendations", "scaleEvents"] as const) {
    if (doc[key] !== undefined && !Array.isArray(doc[key]))
      throw new UsageError(`status ${file}: ${key} must be a list`);
  }
  const failures = doc["consecutiveFailures"];
  if (failures !== undefined && typeof failures !== "number") {
    throw new UsageError(`status ${file}: consecutiveFailures must be a number`);
  }
  const current = doc["current"];
  if (
    current !== undefined &&
    (!isObject(current) || typeof current["sku"] !== "string" || typeof current["units"] !== "number")
  ) {
    throw new UsageError(`status ${file}: current must be { sku, units, replicas? }`);
  }
  return doc as Partial<CapacityPolicyStatus>;
}

function parseNow(raw: string): number {
  const ms = parseRfc3339(raw);
  if (ms === undefined) {
    throw new UsageError(
      `--now must be an RFC 3339 time with Z or a UTC offset, such as 2025-06-02T12:00:00Z, got "${raw}"`,
    );
  }
  return ms;
}

/** Everything `recommend` prints, before formatting. */
export interface RecommendReport {
  policy: string;
  service: string;
  now: string;
  /** Where `now` came from. */
  nowSource: "flag" | "response" | "clock";
  notes: string[];
  decision: Decision;
}

/**
 * A decision none of whose signals had a value from the files (MetricsAvailable False, NoMetrics)
 * decides nothing: refused, naming the signals and what the files lacked — as the files are when no
 * metric of the service is usable, whichever metrics they do carry.
 * @throws UsageError
 */
function refuseWithoutSignal(decision: Decision, files: readonly string[], notes: readonly string[]): void {
  const available = decision.conditions.find((c) => c.type === "MetricsAvailable");
  if (available?.status !== "False" || available.reason !== "NoMetrics") return;
  const signals = decision.signals.map((s) => s.signal).join(", ");
  throw new UsageError(
    `metrics ${files.join(", ")}: none of the metrics the policy's signals (${signals}) read has a value${notes.length > 0 ? `: ${notes.join("; ")}` : ""}`,
  );
}

async function recommend(flags: RecommendFlags, io: CliIo): Promise<RecommendReport> {
  if (!flags.policy) throw new UsageError("--policy FILE is required (a CapacityPolicy manifest)");
  if (!flags.metrics || flags.metrics.length === 0)
    throw new UsageError("--metrics FILE is required (an Azure Monitor metrics response)");
  const policy = await readPolicyFile(flags.policy, io.cwd);
  const bodies = [];
  for (const file of flags.metrics)
    bodies.push(parseMetricsBody(await readFlagText(file, "--metrics", io.cwd), file));
  const spec = policy.spec;
  const { samples, endMs, notes } = samplesFromBodies(bodies, spec.target.service, spec.target.resourceId);
  const metricsNotes = [...notes];

  let status: Partial<CapacityPolicyStatus> | undefined = policy.status;
  if (flags.status)
    status = parseStatusFile(await readFlagText(flags.status, "--status", io.cwd), flags.status);
  const history: DecisionHistory = historyFromStatus(status);
  if (!status)
    notes.push(
      "no status given: no stored history, so the scale-down window starts now (as on a first sight)",
    );

  let current: CurrentState;
  if (flags.current) current = parseCurrent(flags.current);
  else if (status?.current) {
    current = { sku: status.current.sku, units: status.current.units };
    if (status.current.replicas !== undefined) current.replicas = status.current.replicas;
  } else {
    throw new UsageError("--current SKU/units[/replicas] is required (or a status with current)");
  }
  if (flags.hpaMinReplicas !== undefined) {
    const n = Number(flags.hpaMinReplicas);
    if (!Number.isInteger(n) || n < 0) {
      throw new UsageError(`--hpa-min-replicas must be a whole number, got "${flags.hpaMinReplicas}"`);
    }
    current.hpaMinReplicas = n;
  }

  let nowMs: number;
  let nowSource: RecommendReport["nowSource"];
  if (flags.now) {
    nowMs = parseNow(flags.now);
    nowSource = "flag";
  } else if (endMs !== undefined) {
    nowMs = endMs;
    nowSource = "response";
  } else {
    nowMs = Date.now();
    nowSource = "clock";
  }

  const annotations = policy.metadata.annotations;
  const decision = decide({
    policy: {
      spec,
      metadata: {
        name: policy.metadata.name,
        namespace: policy.metadata.namespace,
        ...(annotations ? { annotations } : {}),
      },
    },
    samples,
    current,
    history,
    ...(status?.operation ? { operation: status.operation } : {}),
    now: nowMs,
  });
  refuseWithoutSignal(decision, flags.metrics, metricsNotes);
  const leading = spec.anticipation?.leadingSignal;
  if (leading && spec.anticipation?.mode !== "Off") {
    notes.push(
      `the leading signal (Prometheus ${describePrometheusServer(leading.prometheus.serverAddress)}) is not read by recommend: the decision is what Azure Monitor alone gives (the operator, reading it, may scale out further)`,
    );
  }
  if (status?.operation) {
    const op = status.operation;
    notes.push(
      `an update to ${op.to.sku} × ${op.to.units} was sent at ${op.startedAt} and is not observed complete: the operator sends no other until it is (AbleToScale=False, ScaleInProgress)`,
    );
  }
  return {
    policy: `${policy.metadata.namespace}/${policy.metadata.name}`,
    service: spec.target.service,
    now: decision.now,
    nowSource,
    notes,
    decision,
  };
}

function signalValue(s: SignalReport): string {
  if (s.value === undefined) return "—";
  return s.signal === "connections" ? fmt(s.value) : `${fmt(s.value)} %`;
}

/** The decision shown by `recommend`. */
type ShownDecision = RecommendReport["decision"];

/** `decision: VERB  from → to units[, replicas …]`, or NONE when no decision is possible. */
function decisionLine(d: ShownDecision): string {
  const cur = `${d.current.sku} ${d.current.units}${d.current.replicas !== undefined ? `, replicas ${d.current.replicas}` : ""}`;
  if (!d.desired) return `decision: NONE — no decision is possible for ${cur}`;
  const want = d.desired;
  const replicas =
    want.replicas !== undefined
      ? `, replicas ${d.current.replicas ?? "?"} → ${want.replicas}`
      : want.hpaMinReplicas !== undefined
        ? `, HPA minReplicas ${d.current.hpaMinReplicas ?? "?"} → ${want.hpaMinReplicas}`
        : "";
  const verb =
    d.action === "Scale" ? "SCALE" : d.action === "Recommend" ? "RECOMMEND (not applied)" : "NO ACTION";
  return `decision: ${verb}  ${d.current.sku} ${d.current.units} → ${want.sku} ${want.units} units${replicas}`;
}

/**
 * Clients the decision's change is expected to disconnect (operation.ts `expectedDisconnects`: the
 * removed units' share of the window's peak connections); undefined without a scale-in or without
 * the connections.
 */
function disconnectsOf(d: ShownDecision): { clients: number; connections: number } | undefined {
  if (!d.desired || d.desired.units >= d.current.units) return undefined;
  const clients = expectedDisconnects({
    from: d.current,
    to: d.desired,
    ...(d.levels ? { before: d.levels } : {}),
  });
  const connections = d.levels?.connections;
  return clients === undefined || connections === undefined ? undefined : { clients, connections };
}

/** `disruption: …` for a scale-in, or one held for what it would disconnect, or nothing. */
function disruptionLines(d: ShownDecision): string[] {
  const n = (v: number) => Math.round(v).toLocaleString("en-US");
  const w = d.disruption;
  if (w?.held) {
    return [
      `disruption: the scale-in to ${w.to.sku} ${w.to.units} is held (DisruptionHeld): it would disconnect about ${n(w.clients)} clients (the removed units' share of ${n(w.connections)}) and is not expected to hold long enough to repay them`,
    ];
  }
  const x = disconnectsOf(d);
  if (!x) return [];
  return [
    `disruption: the scale-in disconnects about ${n(x.clients)} clients (the removed units' share of ${n(x.connections)}); they reconnect and negotiate again`,
  ];
}

/** `metrics ask for: …` with what drove it and what limited it. */
function metricsLine(d: ShownDecision): string {
  const asked = d.recommendation
    ? `${d.recommendation.sku} ${d.recommendation.units}`
    : "nothing (no usable metrics)";
  const raised = d.anticipation?.applied ? `, raised by anticipation: ${d.anticipation.drivenBy}` : "";
  const driven = d.drivenBy ? ` (driven by ${d.drivenBy}${raised})` : "";
  return `metrics ask for: ${asked}${driven}; limited by: ${d.limitedBy ?? "nothing"}`;
}

/** The anticipation lines: lead time and what it asks for, then one per rule and the forecast. */
function anticipationLines(a: NonNullable<ShownDecision["anticipation"]>): string[] {
  const lines = [
    `anticipation (${a.mode}${a.applied ? ", acted on" : ""}): lead time ${a.leadTimeSeconds}s (scale ${a.scaleDurationSeconds}s, ${a.scaleDurationSource === "Measured" ? "measured" : "default"})` +
      (a.units !== undefined
        ? `; asks for ${a.units} units (${a.drivenBy})`
        : "; asks for nothing above the measured need"),
  ];
  for (const rule of a.rules ?? [])
    lines.push(
      `  ${rule.rule === "Seasonal" ? "forecast" : "projection"} ${rule.rule}: ${rule.units} units — ${rule.message}`,
    );
  if (a.forecast) lines.push(`  forecast (${a.forecast.state}): ${a.forecast.message}`);
  return lines;
}

/** The signals table: one row per signal with its value, target, ratio, units and buckets. */
function signalTable(d: ShownDecision): string {
  return formatTable(
    ["SIGNAL", "STATUS", "VALUE", "TARGET", "RATIO", "UNITS", "BUCKETS"],
    d.signals.map((s) => [
      s.signal,
      s.status,
      signalValue(s),
      `${s.targetPercent} %`,
      s.ratio === undefined ? "—" : fmt(s.ratio),
      s.desiredUnits === undefined
        ? "—"
        : `${s.desiredUnits}${s.desiredSku && s.desiredSku !== d.current.sku ? ` (${s.desiredSku})` : ""}`,
      `${s.knownBuckets}/${s.expectedBuckets}`,
    ]),
  );
}

/** The human rendering of a recommendation. */
function renderRecommendation(r: RecommendReport): string {
  const d = r.decision;
  const lines: string[] = [];
  lines.push(
    `policy ${r.policy} (${r.service}, mode ${d.mode}) at ${r.now}${r.nowSource === "response" ? " (end of the response's time span)" : ""}`,
  );
  lines.push(decisionLine(d), ...disruptionLines(d), metricsLine(d));
  if (d.window) {
    lines.push(
      `window: ${d.window.from} – ${d.window.to}, newest sample used: ${d.newestSampleTime ?? "none"}` +
        (d.window.ignoredTooNew > 0
          ? `; ${d.window.ignoredTooNew} newer bucket(s) still filling, ignored`
          : ""),
    );
  }
  if (d.anticipation) lines.push(...anticipationLines(d.anticipation));
  lines.push(
    `scale-in gate: ${d.scaleIn.allowed ? "open (the metrics may justify a scale-in)" : `closed (${d.scaleIn.blockedBy.join(", ") || "no decision"})`}`,
  );
  for (const n of r.notes) lines.push(`note: ${n}`);
  let out = `${lines.join("\n")}\n\n`;
  if (d.signals.length > 0) out += `${signalTable(d)}\n`;
  out += `REASONS\n${d.reasons.map((x) => `  ${x.code.padEnd(24)} ${x.message}`).join("\n")}\n\n`;
  out += formatTable(
    ["CONDITION", "STATUS", "REASON", "MESSAGE"],
    d.conditions.map((c) => [c.type, c.status, c.reason, c.message]),
  );
  return out;
}

/** The decision's fields in `recommend -o json`, in this order; an absent one is null. */
const DECISION_JSON_FIELDS = [
  "mode",
  "action",
  "current",
  "desired",
  "recommendation",
  "drivenBy",
  "limitedBy",
  "anticipation",
  "reasons",
  "conditions",
  "signals",
  "scaleIn",
  "disruption",
  "newestSampleTime",
  "lastSample",
  "window",
] as const satisfies readonly (keyof Decision)[];

/** The JSON rendering: desired, reasons, limitedBy, conditions and the rest of the decision. */
function recommendationJson(r: RecommendReport): unknown {
  const d = r.decision;
  return {
    policy: r.policy,
    now: r.now,
    nowSource: r.nowSource,
    ...Object.fromEntries(DECISION_JSON_FIELDS.map((field) => [field, d[field] ?? null])),
    clientsDisconnected: disconnectsOf(d)?.clients ?? 0,
    notes: r.notes,
    history: d.history,
  };
}

/** The `recommend` subcommand. */
export const recommendCommand: CliCommand = defineCommand<RecommendFlags>({
  name: "recommend",
  description:
    "Explain the scaling decision for a policy from a saved Azure Monitor metrics response: the desired SKU, units and replicas, which signal drove it, what limited it, and the status conditions.",
  flags: (cmd) =>
    cmd
      .option(
        "--policy <file>",
        "CapacityPolicy manifest (YAML or JSON; a kubectl -o yaml dump also supplies its status)",
      )
      .option(
        "--metrics <file...>",
        "Azure Monitor metrics response (JSON): a metrics:getBatch body, a single-resource body or az monitor metrics list output; several files (one per aggregation) are merged",
      )
      .option(
        "--current <sku/units[/replicas]>",
        "current capacity, e.g. Premium_P1/20/4 (default: the status's current)",
      )
      .option("--hpa-min-replicas <n>", "current minReplicas of the HorizontalPodAutoscaler the policy names")
      .option("--status <file>", "CapacityPolicy status (or whole object) with the decision history")
      .option(
        "--now <time>",
        "time of the decision, RFC 3339 (default: the end of the response's time span)",
      ),
  examples: [
    "signalr-autoscaler recommend --policy chat.yaml --metrics getbatch.json --current Premium_P1/10/3",
    "signalr-autoscaler recommend --policy chat.yaml --metrics gauges.json counters.json --current Premium_P1/10",
    "kubectl get capol chat -o yaml > chat.yaml && signalr-autoscaler recommend --policy chat.yaml --metrics metrics.json -o json",
  ],
  action: async (flags, io) => {
    const r = await recommend(flags, io);
    io.stdout(flags.output === "json" ? formatJson(recommendationJson(r)) : renderRecommendation(r));
  },
});
