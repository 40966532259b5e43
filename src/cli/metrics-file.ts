/**
 * Reads an Azure Monitor metrics response saved to a file — what the REST API (or
 * `az monitor metrics list`) returned — for `recommend`:
 *
 * - a metrics:getBatch body: `{ "values": [ { "resourceid", "starttime", "endtime", "interval",
 *   "value": [metric…] } ] }`;
 * - a single-resource body (`GET {resourceId}/providers/Microsoft.Insights/metrics`):
 *   `{ "timespan": "start/end", "interval", "value": [metric…] }`;
 *
 * where a metric is `{ "id", "name": { "value", "localizedValue" }, "errorCode"?, "timeseries":
 * [ { "metadatavalues": [ { "name": { "value" }, "value" } ], "data": [ { "timeStamp", "maximum"
 * | "average" | "total" | … } ] } ] }`.
 *
 * The body is turned into the SDK's shape (its `interval` becomes the result's `granularity`) and
 * then into samples by the Azure adapter's own mapping, `readMetricsAnswer`
 * (src/azure/metric-samples.ts), so `recommend` reads a pasted response exactly as the operator
 * reads a live one: the same cross-series rules, idle counters, and time grain (a body without
 * `interval` takes it from its timestamps). Every problem is a {@link UsageError} with one line
 * naming the file (and the JSON path, for a malformed body).
 */

import type { MetricSample } from "../autoscale/samples.js";
import { METRIC_DEFINITIONS } from "../azure/metric-definitions.js";
import {
  type DataPointLike,
  MetricGrainError,
  type MetricLike,
  type MetricsAnswer,
  type MetricsResultLike,
  readMetricsAnswer,
} from "../azure/metric-samples.js";
import { resourceKey } from "../azure/resource-id.js";
import type { ServiceKind } from "../capacity/skus.js";
import { UsageError } from "./errors.js";

/** One resource's metrics from a response body. */
export interface ResourceMetrics {
  /** `resourceid` of a getBatch entry; absent in a single-resource body. */
  resourceId?: string;
  /** End of the queried time span, RFC 3339, when the body says. */
  endTime?: string;
  result: MetricsResultLike;
}

/** A parsed metrics body. */
export interface MetricsBody {
  format: "getBatch" | "single";
  resources: ResourceMetrics[];
}

type Json = Record<string, unknown>;

const AGGREGATIONS = ["average", "minimum", "maximum", "total", "count"] as const;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
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

  /** `{ "value": "X", "localizedValue": "Y" }` or a plain string → "X". */
  name(v: unknown, path: string): string {
    if (typeof v === "string") return v;
    const o = this.object(v, path);
    const value = o["value"] ?? o["localizedValue"];
    if (typeof value !== "string") this.fail(`${path}.value`, "must be a string");
    return value;
  }

  metric(v: unknown, path: string): MetricLike {
    const o = this.object(v, path);
    const name = this.name(o["name"], `${path}.name`);
    const id = this.optionalString(o["id"], `${path}.id`) ?? "";
    const errorCode = this.optionalString(o["errorCode"], `${path}.errorCode`);
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
    return metric;
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

  point(v: unknown, path: string) {
    const o = this.object(v, path);
    const stamp = o["timeStamp"] ?? o["timestamp"];
    if (typeof stamp !== "string" || !Number.isFinite(Date.parse(stamp))) {
      this.fail(`${path}.timeStamp`, `must be an RFC 3339 time, got ${JSON.stringify(stamp ?? null)}`);
    }
    const point: DataPointLike = { timeStamp: new Date(stamp) };
    for (const agg of AGGREGATIONS) {
      const value = o[agg];
      if (value === undefined || value === null) continue;
      if (typeof value !== "number")
        this.fail(`${path}.${agg}`, `must be a number, got ${JSON.stringify(value)}`);
      point[agg] = value;
    }
    return point;
  }
}

/** End of a `"start/end"` timespan. */
function timespanEnd(timespan: string | undefined): string | undefined {
  const end = timespan?.split("/")[1];
  return end !== undefined && Number.isFinite(Date.parse(end)) ? end : undefined;
}

/**
 * Parses the text of a metrics response (JSON). Throws {@link UsageError} (one line) when it is not
 * JSON or not one of the two shapes.
 */
export function parseMetricsBody(text: string, file: string): MetricsBody {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`metrics ${file}: not JSON (${(err as Error).message.split("\n")[0]})`);
  }
  const r = new BodyReader(file);
  const root = r.object(doc, "(root)");
  if (root["values"] !== undefined) {
    const values = r.array(root["values"], "values");
    if (values.length === 0) r.fail("values", "is empty: the response holds no resource");
    return {
      format: "getBatch",
      resources: values.map((v, i) => {
        const o = r.object(v, `values[${i}]`);
        const metrics = r
          .array(o["value"], `values[${i}].value`)
          .map((m, j) => r.metric(m, `values[${i}].value[${j}]`));
        const interval = r.optionalString(o["interval"], `values[${i}].interval`);
        const res: ResourceMetrics = { result: { metrics, ...(interval ? { granularity: interval } : {}) } };
        const id = r.optionalString(o["resourceid"] ?? o["resourceId"], `values[${i}].resourceid`);
        if (id !== undefined) {
          res.resourceId = id;
          res.result = { ...res.result, resourceId: id };
        }
        const end = r.optionalString(o["endtime"] ?? o["endTime"], `values[${i}].endtime`);
        if (end !== undefined && Number.isFinite(Date.parse(end))) res.endTime = end;
        return res;
      }),
    };
  }
  if (root["value"] !== undefined) {
    const metrics = r.array(root["value"], "value").map((m, j) => r.metric(m, `value[${j}]`));
    const interval = r.optionalString(root["interval"], "interval");
    const res: ResourceMetrics = { result: { metrics, ...(interval ? { granularity: interval } : {}) } };
    const end = timespanEnd(r.optionalString(root["timespan"], "timespan"));
    if (end !== undefined) res.endTime = end;
    return { format: "single", resources: [res] };
  }
  return r.fail(
    "(root)",
    'has neither "values" (metrics:getBatch) nor "value" (single resource): not an Azure Monitor metrics response',
  );
}

/** What {@link samplesFromBody} found. */
export interface BodySamples {
  samples: MetricSample[];
  resource: ResourceMetrics;
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

/**
 * The samples of `resourceId` in `body`: the matching getBatch entry (case-insensitive ID), or the
 * only one, read by `readMetricsAnswer`. Throws {@link UsageError} when several resources are
 * present and none matches, when the time grain cannot be read (irregular timestamps, or an
 * interval that disagrees with them), or when no metric of the service is present.
 */
export function samplesFromBody(
  body: MetricsBody,
  file: string,
  service: ServiceKind,
  resourceId: string,
): BodySamples {
  const notes: string[] = [];
  const match = body.resources.find(
    (r) => r.resourceId !== undefined && resourceKey(r.resourceId) === resourceKey(resourceId),
  );
  let resource = match;
  if (!resource) {
    if (body.resources.length > 1) {
      throw new UsageError(
        `metrics ${file}: none of its ${body.resources.length} resources is the policy's target ${resourceId}`,
      );
    }
    resource = body.resources[0] as ResourceMetrics;
    if (resource.resourceId !== undefined) {
      notes.push(`the metrics are of ${resource.resourceId}, not of the policy's target ${resourceId}`);
    }
  }
  const defs = METRIC_DEFINITIONS[service];
  let answer: MetricsAnswer;
  try {
    answer = readMetricsAnswer(service, resource.resourceId ?? resourceId, resource.result);
  } catch (err) {
    if (err instanceof MetricGrainError) throw new UsageError(`metrics ${file}: ${err.message}`);
    throw err;
  }
  if (answer.absent.length === defs.length) {
    throw new UsageError(
      `metrics ${file}: no ${service} metric in it (expected some of ${defs.map((d) => d.name).join(", ")})`,
    );
  }
  for (const f of answer.failed) {
    notes.push(`metric ${f.metric} returned errorCode ${f.errorCode}: its values count as unknown`);
  }
  notes.push(...grainNotes(answer));
  return { samples: answer.samples, resource, notes };
}
