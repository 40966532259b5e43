/**
 * Reads the Azure Monitor metrics answers a user saved to files — what the REST API, `az rest` or
 * `az monitor metrics list` printed — for `recommend`. Each file is one of:
 *
 * - a metrics:getBatch body: `{ "values": [ { "resourceid", "starttime", "endtime", "interval",
 *   "value": [metric…] } ] }` (Monitor `data-plane/Microsoft.Insights/stable/2024-02-01/metricBatch.json`);
 * - a single-resource body (`GET {resourceId}/providers/Microsoft.Insights/metrics`,
 *   `resource-manager/Microsoft.Insights/stable/2018-01-01/metrics_API.json`):
 *   `{ "cost", "timespan": "start/end", "interval", "namespace", "resourceregion", "value": [metric…] }`
 *   — also as `az monitor metrics list --output json` prints it: keys sorted, every aggregation of
 *   a data point present (`null` for those not asked for), timestamps with a `+00:00` offset, the
 *   interval as a Python time span (`0:01:00`, `1 day, 0:00:00`), `errorMessage: null` and a
 *   `resourceGroup` on each metric;
 *
 * where a metric is `{ "id", "name": { "value", "localizedValue" }, "errorCode"?, "errorMessage"?,
 * "timeseries": [ { "metadatavalues": [ { "name": { "value" }, "value" } ], "data": [ { "timeStamp",
 * "maximum" | "average" | "total" | … } ] } ] }`. Timestamps are RFC 3339 with an offset; the
 * interval is ISO 8601 (`PT1M`) or a time span as Python or .NET prints it (shared/time-text.ts).
 *
 * Several files (one per aggregation, as `az` queries them: gauges with Maximum, counters with
 * Total) are merged per metric: the copy that carries the aggregation the operator reads wins; two
 * such copies of one metric are refused.
 *
 * The answer is turned into the SDK's shape (its `interval` becomes the result's `granularity`) and
 * then into samples by the Azure adapter's own mapping, `readMetricsAnswer`
 * (src/azure/metric-samples.ts), so `recommend` reads a pasted response exactly as the operator
 * reads a live one: the same cross-series rules, idle counters, and time grain (a body without
 * `interval` takes it from its timestamps).
 *
 * Said, not hidden: an Azure error body pasted instead of metrics (`{"error": {"code", "message"}}`,
 * `{"code", "message"}`, or the Azure CLI's `(Code) message` text) is refused with its code and
 * message; a metric answered with an `errorCode` is named with its `errorMessage`; a metric that
 * carries only other aggregations than the one the operator reads (an `average`-only body, the
 * portal's default) is named with the aggregation it lacks and the `az` command that gets it —
 * refused when no metric is left to decide on, a note otherwise. Every problem is a
 * {@link UsageError} with one line naming the file (and the JSON path, for a malformed body).
 */

import type { MetricSample } from "../autoscale/samples.js";
import {
  type AggregationField,
  aggregationType,
  METRIC_DEFINITIONS,
  type MetricDefinition,
  timeGrainSeconds,
} from "../azure/metric-definitions.js";
import {
  type DataPointLike,
  isMetricOf,
  MetricGrainError,
  type MetricLike,
  type MetricsAnswer,
  type MetricsResultLike,
  readMetricsAnswer,
} from "../azure/metric-samples.js";
import { metricQueries } from "../azure/query-plan.js";
import { resourceKey } from "../azure/resource-id.js";
import type { ServiceKind } from "../capacity/skus.js";
import { isoDuration, parseRfc3339, parseTimeSpan } from "../shared/time-text.js";
import { UsageError } from "./errors.js";

/** One metric of a body, with what the reader needs to say about it. */
export interface BodyMetric {
  metric: MetricLike;
  /** `errorMessage` of a metric answered with an error code. */
  errorMessage?: string;
  /** The aggregations at least one of its data points has a value for. */
  aggregations: AggregationField[];
}

/** One resource's metrics from a response body. */
export interface ResourceMetrics {
  /** `resourceid` of a getBatch entry; absent in a single-resource body. */
  resourceId?: string;
  /** End of the queried time span, ms since the epoch, when the body says. */
  endMs?: number;
  /** The body's interval as written, and as ISO 8601. */
  interval?: { text: string; iso: string };
  metrics: BodyMetric[];
}

/** A parsed metrics body. */
export interface MetricsBody {
  /** The file, as the user named it. */
  file: string;
  format: "getBatch" | "single";
  resources: ResourceMetrics[];
}

type Json = Record<string, unknown>;

const AGGREGATIONS = ["average", "minimum", "maximum", "total", "count"] as const;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** One line of a service message: whitespace runs (newlines included) become one space. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

class BodyReader {
  constructor(readonly file: string) {}

  fail(path: string, what: string): never {
    throw new UsageError(`metrics ${this.file}: ${path} ${what}`);
  }

  object(v: unknown, path: string): Json {
    if (!isObject(v)) this.fail(path, "must be an object");
    return v;
  }

  array(v: unknown, path: string): unknown[] {
    if (!Array.isArray(v)) this.fail(path, "must be an array");
    return v;
  }

  optionalString(v: unknown, path: string): string | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") this.fail(path, "must be a string");
    return v;
  }

  /** An RFC 3339 time with an offset, ms. */
  time(v: unknown, path: string): number {
    const ms = typeof v === "string" ? parseRfc3339(v) : undefined;
    if (ms === undefined) {
      this.fail(
        path,
        `must be an RFC 3339 time with Z or a UTC offset (2025-06-02T11:40:00Z, …+00:00), got ${JSON.stringify(v ?? null)}`,
      );
    }
    return ms;
  }

  optionalTime(v: unknown, path: string): number | undefined {
    return v === undefined || v === null ? undefined : this.time(v, path);
  }

  /** `PT1M`, `0:01:00` (Python), `00:01:00` (.NET) → the text and its ISO 8601 form. */
  interval(v: unknown, path: string): ResourceMetrics["interval"] {
    const text = this.optionalString(v, path);
    if (text === undefined) return undefined;
    if (timeGrainSeconds(text) !== undefined) return { text, iso: text.trim().toUpperCase() };
    const seconds = parseTimeSpan(text);
    if (seconds === undefined) {
      this.fail(
        path,
        `must be an ISO 8601 duration (PT1M) or a time span as the Azure CLI prints it (0:01:00, 1 day, 0:00:00), got ${JSON.stringify(text)}`,
      );
    }
    if (seconds <= 0) this.fail(path, `${JSON.stringify(text)} is not a positive duration`);
    if (!Number.isInteger(seconds)) {
      this.fail(path, `${JSON.stringify(text)} (${seconds} seconds) is not a whole number of minutes`);
    }
    return { text, iso: isoDuration(seconds) };
  }

  /** `{ "value": "X", "localizedValue": "Y" }` or a plain string → "X". */
  name(v: unknown, path: string): string {
    if (typeof v === "string") return v;
    const o = this.object(v, path);
    const value = o["value"] ?? o["localizedValue"];
    if (typeof value !== "string") this.fail(`${path}.value`, "must be a string");
    return value;
  }

  metric(v: unknown, path: string): BodyMetric {
    const o = this.object(v, path);
    const name = this.name(o["name"], `${path}.name`);
    const id = this.optionalString(o["id"], `${path}.id`) ?? "";
    const errorCode = this.optionalString(o["errorCode"], `${path}.errorCode`);
    const errorMessage = this.optionalString(o["errorMessage"], `${path}.errorMessage`);
    const series =
      o["timeseries"] === undefined || o["timeseries"] === null
        ? []
        : this.array(o["timeseries"], `${path}.timeseries`);
    const metric: MetricLike = {
      id,
      name,
      timeseries: series.map((s, i) => this.series(s, `${path}.timeseries[${i}]`)),
    };
    if (errorCode !== undefined) metric.errorCode = errorCode;
    const aggregations = AGGREGATIONS.filter((agg) =>
      metric.timeseries.some((s) => (s.data ?? []).some((p) => p[agg] !== undefined)),
    );
    return { metric, aggregations, ...(errorMessage ? { errorMessage: oneLine(errorMessage) } : {}) };
  }

  series(v: unknown, path: string): MetricLike["timeseries"][number] {
    const o = this.object(v, path);
    const meta =
      o["metadatavalues"] === undefined || o["metadatavalues"] === null
        ? []
        : this.array(o["metadatavalues"], `${path}.metadatavalues`);
    const data = o["data"] === undefined || o["data"] === null ? [] : this.array(o["data"], `${path}.data`);
    return {
      metadatavalues: meta.map((m, i) => {
        const mo = this.object(m, `${path}.metadatavalues[${i}]`);
        const out: { name?: string; value?: string } = {};
        if (mo["name"] !== undefined && mo["name"] !== null)
          out.name = this.name(mo["name"], `${path}.metadatavalues[${i}].name`);
        const value = this.optionalString(mo["value"], `${path}.metadatavalues[${i}].value`);
        if (value !== undefined) out.value = value;
        return out;
      }),
      data: data.map((d, i) => this.point(d, `${path}.data[${i}]`)),
    };
  }

  point(v: unknown, path: string): DataPointLike {
    const o = this.object(v, path);
    const point: DataPointLike = {
      timeStamp: new Date(this.time(o["timeStamp"] ?? o["timestamp"], `${path}.timeStamp`)),
    };
    for (const agg of AGGREGATIONS) {
      const value = o[agg];
      if (value === undefined || value === null) continue;
      if (typeof value !== "number")
        this.fail(`${path}.${agg}`, `must be a number, got ${JSON.stringify(value)}`);
      point[agg] = value;
    }
    return point;
  }

  /** A resource's entry: its metrics, interval and end, from the keys of either layout. */
  resource(o: Json, path: string, metricsPath: string): ResourceMetrics {
    const metrics = this.array(o["value"], metricsPath).map((m, j) => this.metric(m, `${metricsPath}[${j}]`));
    const res: ResourceMetrics = { metrics };
    const interval = this.interval(o["interval"], `${path}interval`);
    if (interval) res.interval = interval;
    const timespan = this.optionalString(o["timespan"], `${path}timespan`);
    const end =
      timespan !== undefined
        ? this.time(timespan.split("/")[1], `${path}timespan (its end)`)
        : this.optionalTime(o["endtime"] ?? o["endTime"], `${path}endtime`);
    if (end !== undefined) res.endMs = end;
    return res;
  }
}

/** The code and message of an Azure error body (`{ error: { code, message } }` or `{ code, message }`). */
function azureErrorOf(root: Json): { code: string; message: string } | undefined {
  const e = isObject(root["error"]) ? root["error"] : root["value"] === undefined ? root : undefined;
  if (!e || root["values"] !== undefined) return undefined;
  const code = e["code"];
  const message = e["message"];
  if (typeof code !== "string" && typeof message !== "string") return undefined;
  return { code: typeof code === "string" ? code : "(no code)", message: oneLine(String(message ?? "")) };
}

/** `(Code) message` as the Azure CLI prints an error (after `ERROR: `), from its first such line. */
const CLI_ERROR = /^\s*(?:ERROR:\s*)?\(([A-Za-z][\w.]*)\)\s*(.*)$/m;

/**
 * Parses the text of a metrics response (JSON) saved to `file`.
 * @throws UsageError (one line) when it is not JSON, is an Azure error rather than metrics (its
 *   code and message said), or is not one of the two layouts.
 */
export function parseMetricsBody(text: string, file: string): MetricsBody {
  if (text.trim() === "")
    throw new UsageError(
      `metrics ${file}: the file is empty (a command that failed, such as az printing its error on stderr, leaves it so)`,
    );
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const cli = CLI_ERROR.exec(text);
    if (cli) {
      throw new UsageError(
        `metrics ${file}: is an Azure CLI error, not a metrics answer: ${cli[1]}: ${oneLine(cli[2] ?? "")}`,
      );
    }
    throw new UsageError(`metrics ${file}: not JSON (${(err as Error).message.split("\n")[0]})`);
  }
  const r = new BodyReader(file);
  const root = r.object(doc, "(root)");
  const error = azureErrorOf(root);
  if (error) {
    throw new UsageError(
      `metrics ${file}: is an Azure error answer, not metrics: ${error.code}: ${error.message}`,
    );
  }
  if (root["values"] !== undefined) {
    const values = r.array(root["values"], "values");
    if (values.length === 0) r.fail("values", "is empty: the response holds no resource");
    return {
      file,
      format: "getBatch",
      resources: values.map((v, i) => {
        const o = r.object(v, `values[${i}]`);
        const res = r.resource(o, `values[${i}].`, `values[${i}].value`);
        const id = r.optionalString(o["resourceid"] ?? o["resourceId"], `values[${i}].resourceid`);
        if (id !== undefined) res.resourceId = id;
        return res;
      }),
    };
  }
  if (root["value"] !== undefined) {
    return { file, format: "single", resources: [r.resource(root, "", "value")] };
  }
  return r.fail(
    "(root)",
    'has neither "values" (metrics:getBatch) nor "value" (single resource): not an Azure Monitor metrics answer',
  );
}

/** What {@link samplesFromBodies} found. */
export interface BodySamples {
  samples: MetricSample[];
  /** End of the queried time span (the latest of the files'), ms, when they say. */
  endMs?: number;
  /** Notes for the reader (e.g. the resource ID differs from the policy's). */
  notes: string[];
}

function grainNotes(answer: MetricsAnswer): string[] {
  const minutes = answer.grainSeconds / 60;
  const notes: string[] = [];
  if (answer.grainFrom === "timestamps") {
    notes.push(
      `the body has no interval: its timestamps are ${minutes === 1 ? "1 minute" : `${minutes} minutes`} apart, read as PT${minutes}M buckets`,
    );
  } else if (answer.grainFrom === "assumed") {
    notes.push("the body has no interval and a single timestamp: read as a one-minute bucket");
  }
  if (minutes !== 1) {
    notes.push(
      `${minutes}-minute buckets: rates are per second over each bucket (Total ÷ ${answer.grainSeconds} s) and each sample stands at its bucket's start, so the one-minute window knows one minute in ${minutes} — query with interval=PT1M for a full window`,
    );
  }
  return notes;
}

/** The entry of `resourceId` in `body`: the matching getBatch entry (case-insensitive ID), or the only one. */
function resourceOf(body: MetricsBody, resourceId: string, notes: string[]): ResourceMetrics {
  const match = body.resources.find(
    (r) => r.resourceId !== undefined && resourceKey(r.resourceId) === resourceKey(resourceId),
  );
  if (match) return match;
  if (body.resources.length > 1) {
    throw new UsageError(
      `metrics ${body.file}: none of its ${body.resources.length} resources is the policy's target ${resourceId}`,
    );
  }
  const only = body.resources[0] as ResourceMetrics;
  if (only.resourceId !== undefined) {
    notes.push(
      `the metrics of ${body.file} are of ${only.resourceId}, not of the policy's target ${resourceId}`,
    );
  }
  return only;
}

const answered = (m: BodyMetric) => m.metric.errorCode === undefined || m.metric.errorCode === "Success";

/** Why a metric of the service gives the decision nothing. */
type Missing =
  | { def: MetricDefinition; why: "absent" }
  | { def: MetricDefinition; why: "failed"; errorCode: string; errorMessage?: string; file: string }
  | { def: MetricDefinition; why: "aggregation"; has: AggregationField[]; file: string };

/**
 * The metric of `def` across the files: the one copy answered without error that carries the
 * aggregation the operator reads, else what is wrong with the copies there are.
 * @throws UsageError when two files both carry it.
 */
function pickMetric(
  def: MetricDefinition,
  found: readonly { file: string; metric: BodyMetric }[],
): { chosen?: BodyMetric; missing?: Missing } {
  const copies = found.filter((f) => isMetricOf(f.metric.metric, def));
  const good = copies.filter((c) => answered(c.metric) && c.metric.aggregations.includes(def.aggregation));
  if (good.length > 1) {
    throw new UsageError(
      `metrics: ${def.name} with its ${aggregationType(def.aggregation)} is in ${good.map((g) => g.file).join(" and ")}: give each metric once`,
    );
  }
  if (good[0]) return { chosen: good[0].metric };
  // Answered without error and without any value (idle, or still being ingested): it speaks for itself.
  const empty = copies.find((c) => answered(c.metric) && c.metric.aggregations.length === 0);
  if (empty) return { chosen: empty.metric };
  const failed = copies.find((c) => !answered(c.metric));
  if (failed) {
    return {
      chosen: failed.metric,
      missing: {
        def,
        why: "failed",
        errorCode: String(failed.metric.metric.errorCode),
        file: failed.file,
        ...(failed.metric.errorMessage ? { errorMessage: failed.metric.errorMessage } : {}),
      },
    };
  }
  const other = copies[0];
  if (other) {
    return { missing: { def, why: "aggregation", has: other.metric.aggregations, file: other.file } };
  }
  return { missing: { def, why: "absent" } };
}

/** `a, b and c` */
function list(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** An `az` command line and the file it writes. */
interface AzFetch {
  command: string;
  file: string;
}

/**
 * The `az monitor metrics list` command lines that get `defs` of `resourceId` as the operator
 * reads them: one per query of the operator's query plan (`metricQueries`: the gauges' Maximum,
 * the counters' Total), PT1M, JSON, each into its own file.
 */
function azMetricsCommands(
  service: ServiceKind,
  resourceId: string,
  defs: readonly MetricDefinition[],
): AzFetch[] {
  if (defs.length === 0) return [];
  return metricQueries(service, { fields: defs.map((d) => d.field) }).map((query) => {
    const kind = defs.find((d) => d.field === query.fields[0])?.kind;
    const file = `${kind === "gauge" ? "gauges" : "counters"}.json`;
    return {
      command: `az monitor metrics list --resource ${resourceId} --metrics ${query.metricNames.join(" ")} --aggregation ${query.aggregation} --interval PT1M --output json > ${file}`,
      file,
    };
  });
}

/** What a missing metric lacks, grouped: one phrase per kind of problem. */
function missingPhrases(missing: readonly Missing[]): string[] {
  const phrases: string[] = [];
  const lacking = missing.filter(
    (m): m is Extract<Missing, { why: "aggregation" }> => m.why === "aggregation",
  );
  const groups = new Map<string, typeof lacking>();
  for (const m of lacking) {
    const key = `${m.def.aggregation}|${m.has.join(",")}`;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  for (const group of groups.values()) {
    const first = group[0] as (typeof lacking)[number];
    const kind = first.def.kind === "gauge" ? "gauges" : "counters";
    phrases.push(
      `${list(group.map((m) => m.def.name))} ${group.length === 1 ? "carries" : "carry"} only ${list(first.has)} and the operator reads ${group.length === 1 ? "its" : "their"} ${aggregationType(first.def.aggregation)} (${kind})`,
    );
  }
  const failures = new Map<string, string[]>();
  for (const m of missing) {
    if (m.why !== "failed") continue;
    const answer = `errorCode ${m.errorCode}${m.errorMessage ? ` ("${m.errorMessage}")` : ""}`;
    failures.set(answer, [...(failures.get(answer) ?? []), m.def.name]);
  }
  for (const [answer, names] of failures) phrases.push(`${list(names)} came back with ${answer}`);
  const absent = missing.filter((m) => m.why === "absent").map((m) => m.def.name);
  if (absent.length > 0) phrases.push(`${list(absent)} ${absent.length === 1 ? "is" : "are"} not in it`);
  return phrases;
}

/**
 * The samples of `resourceId` in `bodies` (one or more files, merged per metric), read by
 * `readMetricsAnswer`, with notes on what is missing and why.
 * @throws UsageError when several resources are present in a file and none matches, when the files'
 *   intervals differ, when the time grain cannot be read (irregular timestamps, or an interval that
 *   disagrees with them), when a metric is in two files, or when no metric of the service is left
 *   to decide on (each one absent, answered with an error, or without the aggregation the
 *   operator reads — the message says which, and the `az` command lines that get them).
 */
export function samplesFromBodies(
  bodies: readonly MetricsBody[],
  service: ServiceKind,
  resourceId: string,
): BodySamples {
  const notes: string[] = [];
  const files = bodies.map((b) => b.file).join(", ");
  const picked = bodies.map((body) => ({ body, resource: resourceOf(body, resourceId, notes) }));
  const intervals = picked.flatMap(({ body, resource }) =>
    resource.interval ? [{ file: body.file, ...resource.interval }] : [],
  );
  const interval = intervals[0];
  const other = intervals.find((i) => i.iso !== interval?.iso);
  if (interval && other) {
    throw new UsageError(
      `metrics: ${interval.file} has interval ${interval.text} and ${other.file} ${other.text}: give answers of one interval`,
    );
  }
  const found = picked.flatMap(({ body, resource }) =>
    resource.metrics.map((metric) => ({ file: body.file, metric })),
  );
  const defs = METRIC_DEFINITIONS[service];
  const chosen: MetricLike[] = [];
  const missing: Missing[] = [];
  for (const def of defs) {
    const pick = pickMetric(def, found);
    if (pick.chosen) chosen.push(pick.chosen.metric);
    if (pick.missing) missing.push(pick.missing);
  }
  if (missing.every((m) => m.why === "absent") && missing.length === defs.length) {
    throw new UsageError(
      `metrics ${files}: no ${service} metric in it (expected some of ${defs.map((d) => d.name).join(", ")})`,
    );
  }
  const fetch = azMetricsCommands(
    service,
    resourceId,
    missing.filter((m) => m.why !== "failed").map((m) => m.def),
  );
  const commands = fetch.map((f) => f.command).join(" ; ");
  if (missing.length === defs.length) {
    throw new UsageError(
      `metrics ${files}: no metric the operator reads is usable: ${missingPhrases(missing).join("; ")}${fetch.length > 0 ? `. Get them as the operator reads them: ${commands} — then give each file: ${fetch.map((f) => `--metrics ${f.file}`).join(" ")}` : ""}`,
    );
  }
  for (const phrase of missingPhrases(missing)) notes.push(`${phrase}: read as unknown`);
  if (fetch.length > 0)
    notes.push(`get what is missing with: ${commands} — and give each file as one more --metrics`);
  const result: MetricsResultLike = { metrics: chosen, ...(interval ? { granularity: interval.iso } : {}) };
  let answer: MetricsAnswer;
  try {
    answer = readMetricsAnswer(service, resourceId, result);
  } catch (err) {
    if (err instanceof MetricGrainError) throw new UsageError(`metrics ${files}: ${err.message}`);
    throw err;
  }
  notes.push(...grainNotes(answer));
  const ends = picked.flatMap(({ resource }) => (resource.endMs !== undefined ? [resource.endMs] : []));
  return { samples: answer.samples, notes, ...(ends.length > 0 ? { endMs: Math.max(...ends) } : {}) };
}
