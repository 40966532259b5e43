/**
 * The Azure Monitor metrics data plane of the emulator: `metrics:getBatch` (api-version
 * 2024-02-01, the one `@azure/monitor-query-metrics` sends), served per region under
 * `/metrics/{region}` — the emulator's stand-in for `https://{region}.metrics.monitor.azure.com`:
 *
 *     POST /metrics/{region}/subscriptions/{s}/metrics:getBatch?metricnamespace=…&metricnames=…
 *          &starttime=…&endtime=…&interval=PT1M&aggregation=…[&filter=…]
 *     { "resourceids": ["…", …] }
 *
 * Response: `{ "values": [ { starttime, endtime, interval, namespace, resourceregion, resourceid,
 * value: [ { id, type, name: { value, localizedValue }, displayDescription, unit, errorCode,
 * timeseries: [ { metadatavalues, data: [ { timeStamp, <aggregations> } ] } ] } ] } ] }`, one
 * entry per requested resource, in request order.
 *
 * Strict, as the published contract (`specification/monitor/data-plane/Microsoft.Insights/stable/
 * 2024-02-01/metricBatch.json` and its examples) and the metric reference say:
 * - api-version 2024-02-01 only, the version whose contract is served here (any other: 400
 *   `InvalidApiVersionParameter`);
 * - at most 50 resources, all of the path's subscription and of the namespace's type (else 400):
 *   a replica's metrics are in their own namespace (`Microsoft.SignalRService/SignalR/replicas`,
 *   `…/WebPubSub/replicas`, the same metrics as an instance's), so a batch mixing instances and
 *   replicas is refused; a resource in another region than the endpoint's (a replica is in its
 *   own), or unknown, gets empty `timeseries`;
 * - each metric only with the aggregations the metric reference lists for it
 *   (`traffic/monitor-catalog.ts`): a query asking any metric for another is refused whole, 400
 *   `BadRequest` "Sampling type is not found. Metric: …, SamplingType: …" (the text Azure Monitor
 *   answers such a query with; it has also been reported with status 501);
 * - a filter on a dimension that a requested metric lacks is a 400 ("does not support requested
 *   dimension combination");
 * - a bucket without data is a point carrying only `timeStamp`, as the official example writes it
 *   — never `total: 0` or a `null` field: minutes newer than the ingestion delay, and a counter
 *   (MessageCount, InboundTraffic, OutboundTraffic) that counted nothing; the minute being ingested
 *   has partial totals;
 * - every metric carries `errorCode` — `Success`, or (fault `metricError`) an error code with its
 *   `errorMessage` and no series.
 * Throttling (429/529 with `Retry-After`) is the server's, before this handler (`ratelimit.ts`).
 */
import type { ServiceKind } from "../capacity/index.js";
import {
  AGGREGATIONS,
  type Aggregates,
  type AggregationName,
  EMULATED_METRICS,
  type EmulatedMetric,
  findEmulatedMetric,
  minuteAggregates,
} from "../traffic/monitor-catalog.js";
import { type ArmRef, namespaceOf, parseArmId } from "./arm-id.js";
import { armError, type EmulatorRequest, type EmulatorResponse, isoTime, json, queryParam } from "./http.js";
import type { Bucket, EmulatorState } from "./state.js";

/** The api-versions of getBatch the emulator serves: the one whose contract it follows. */
export const GETBATCH_API_VERSIONS: readonly string[] = ["2024-02-01"];

/** Most resources per getBatch call. */
const MAX_BATCH_RESOURCES = 50;
/** Most data points per time series in one answer (the emulator's bound on an answer's size). */
const MAX_POINTS = 10_000;
/**
 * Longest span of one query: Azure Monitor serves no more than 30 days of metrics per query
 * ("Analyze metrics with Azure Monitor metrics explorer", time range).
 */
const MAX_SPAN_MS = 30 * 86_400_000;

const MINUTE = 60_000;
const GRAINS: Readonly<Record<string, number>> = {
  PT1M: MINUTE,
  PT5M: 5 * MINUTE,
  PT15M: 15 * MINUTE,
  PT30M: 30 * MINUTE,
  PT1H: 60 * MINUTE,
  PT6H: 360 * MINUTE,
  PT12H: 720 * MINUTE,
  P1D: 1440 * MINUTE,
};

/** What a fault asked the metrics handler to do differently. */
export interface MonitorFaultFlags {
  /** Data points keep their timestamps but lose their values. */
  nullSeries?: boolean;
  /** Every metric comes with `timeseries: []`. */
  emptyTimeseries?: boolean;
  /** These metrics (all when `metrics` is absent) answer with an error code and no series. */
  metricError?: { metrics?: readonly string[]; code?: string; message?: string };
}

/** A parsed `filter`: one dimension and the values asked for (`*` = split by every value). */
interface DimensionFilter {
  dimension: string;
  values: string[];
}

const CLAUSE = /^\s*([A-Za-z][\w.]*)\s+eq\s+'([^']*)'\s*$/i;

/** Parses `Dim eq 'a' or Dim eq 'b'` (one dimension); `undefined` when it is not of that form. */
export function parseDimensionFilter(filter: string): DimensionFilter | undefined {
  const clauses = filter.split(/\s+or\s+/i);
  let dimension: string | undefined;
  const values: string[] = [];
  for (const c of clauses) {
    const m = CLAUSE.exec(c);
    if (!m) return undefined;
    const [, dim, value] = m as unknown as [string, string, string];
    if (dimension !== undefined && dimension.toLowerCase() !== dim.toLowerCase()) return undefined;
    dimension ??= dim;
    values.push(value);
  }
  return dimension === undefined ? undefined : { dimension, values };
}

function badRequest(message: string): EmulatorResponse {
  return armError(400, "BadRequest", message);
}

/** Extracts the resource IDs of a getBatch body, for fault matching; `[]` when it has none. */
export function batchResourceIds(body: unknown): string[] {
  if (typeof body !== "object" || body === null) return [];
  const ids = (body as Record<string, unknown>)["resourceids"];
  return Array.isArray(ids) ? ids.filter((x): x is string => typeof x === "string") : [];
}

/** True for the getBatch route. */
export function isGetBatch(req: EmulatorRequest): boolean {
  return /^\/metrics\/[^/]+\/subscriptions\/[^/]+\/metrics:getbatch$/i.test(req.path);
}

/** The refusal of a getBatch for its method (POST only) or api-version; none when both are right. */
function endpointRefusal(req: EmulatorRequest): EmulatorResponse | undefined {
  if (req.method !== "POST") return armError(405, "MethodNotAllowed", "metrics:getBatch takes POST.");
  const apiVersion = queryParam(req.query, "api-version");
  if (!apiVersion) return badRequest("The api-version query parameter is required.");
  if (!GETBATCH_API_VERSIONS.includes(apiVersion)) {
    return armError(
      400,
      "InvalidApiVersionParameter",
      `The api-version '${apiVersion}' is invalid. The supported versions are '${GETBATCH_API_VERSIONS.join(",")}'.`,
    );
  }
  return undefined;
}

/** What a getBatch asks about: the metric namespace, its service, and the resource IDs. */
interface BatchTarget {
  namespace: string;
  service: ServiceKind;
  ids: string[];
}

/**
 * The namespace and the resources of a getBatch, or its refusal: at most 50 IDs, all valid ARM IDs
 * of `subscriptionId` and of the namespace's type.
 */
function batchTarget(req: EmulatorRequest, subscriptionId: string): BatchTarget | EmulatorResponse {
  const namespace = queryParam(req.query, "metricnamespace");
  if (!namespace) return badRequest("metricnamespace is required for metrics:getBatch.");
  const type = namespaceOf(namespace);
  if (!type) return badRequest(`Failed to find metric configuration for provider namespace '${namespace}'.`);
  const service: ServiceKind = type.service;

  const ids = (req.body as Record<string, unknown> | undefined)?.["resourceids"];
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => typeof x === "string")) {
    return badRequest('The request body must be { "resourceids": [ … ] } with at least one resource ID.');
  }
  if (ids.length > MAX_BATCH_RESOURCES) {
    return badRequest(
      `At most ${MAX_BATCH_RESOURCES} resource IDs are allowed per request, got ${ids.length}.`,
    );
  }
  for (const id of ids as string[]) {
    let ref: ArmRef;
    try {
      ref = parseArmId(id);
    } catch {
      return badRequest(`'${id}' is not a valid resource ID for namespace ${namespace}.`);
    }
    if (ref.subscriptionId.toLowerCase() !== subscriptionId.toLowerCase()) {
      return badRequest(`All resources must be in subscription '${subscriptionId}'; '${id}' is not.`);
    }
    if (ref.resourceType !== type.resourceType) {
      return badRequest(`All resources must be of type '${namespace}'; '${id}' is not.`);
    }
  }
  return { namespace, service, ids: ids as string[] };
}

/** The metrics of `metricnames`, or the refusal naming the first the service does not have. */
function requestedMetrics(
  req: EmulatorRequest,
  { service, namespace }: BatchTarget,
): EmulatedMetric[] | EmulatorResponse {
  const namesParam = queryParam(req.query, "metricnames");
  if (!namesParam) return badRequest("metricnames is required.");
  const metrics: EmulatedMetric[] = [];
  for (const name of namesParam
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n !== "")) {
    const metric = findEmulatedMetric(service, name);
    if (!metric) {
      return badRequest(
        `Failed to find metric configuration for provider: Microsoft.SignalRService, resource Type: ${namespace.split("/").slice(1).join("/")}, metric: ${name}, Valid metrics: ${validMetricNames(service)}`,
      );
    }
    metrics.push(metric);
  }
  return metrics;
}

/** The `interval` (default PT1M, as written upper-cased) and its grain in ms, or its refusal. */
function requestedGrain(req: EmulatorRequest): { intervalText: string; grain: number } | EmulatorResponse {
  const intervalText = (queryParam(req.query, "interval") ?? "PT1M").toUpperCase();
  const grain = GRAINS[intervalText];
  if (grain === undefined) {
    return badRequest(`Invalid interval '${intervalText}'; supported: ${Object.keys(GRAINS).join(", ")}.`);
  }
  return { intervalText, grain };
}

/**
 * The `aggregation` list (none: each metric's primary), or the refusal of an unknown one or of one
 * a requested metric does not support.
 */
function requestedAggregations(
  req: EmulatorRequest,
  metrics: readonly EmulatedMetric[],
  namespace: string,
): { aggregations?: AggregationName[] } | EmulatorResponse {
  const aggText = queryParam(req.query, "aggregation");
  if (!aggText) return {};
  const aggregations: AggregationName[] = [];
  for (const a of aggText.split(",").map((x) => x.trim().toLowerCase())) {
    if (!(AGGREGATIONS as readonly string[]).includes(a)) {
      return badRequest(`Invalid aggregation '${a}'; supported: Average, Minimum, Maximum, Total, Count.`);
    }
    aggregations.push(a as AggregationName);
  }
  for (const m of metrics) {
    const unsupported = aggregations.find((a) => !m.aggregations.includes(a));
    if (unsupported !== undefined) return unsupportedAggregation(namespace, m, unsupported);
  }
  return { aggregations };
}

/** The dimension `filter` (or `$filter`), or the refusal of one that does not parse or that a metric lacks. */
function requestedFilter(
  req: EmulatorRequest,
  metrics: readonly EmulatedMetric[],
): { filter?: DimensionFilter } | EmulatorResponse {
  const filterText = queryParam(req.query, "filter") ?? queryParam(req.query, "$filter");
  if (!filterText) return {};
  const filter = parseDimensionFilter(filterText);
  if (!filter) return badRequest(`Invalid filter '${filterText}': expected Dimension eq 'value' [or …].`);
  const dimension = filter.dimension.toLowerCase();
  for (const m of metrics) {
    if (!m.dimensions.some((d) => d.toLowerCase() === dimension)) {
      return badRequest(
        `Metric: ${m.name} does not support requested dimension combination: ${dimension}, supported ones are: ${m.dimensions.join(",") || "none"}`,
      );
    }
  }
  return { filter };
}

/**
 * The time span (ms): `starttime` aligned down to the grain, `endtime` (default `nowMs`; start
 * default an hour before end), or the refusal of one that is no time, empty, over 30 days or over
 * 10,000 points.
 */
function requestedSpan(
  req: EmulatorRequest,
  nowMs: number,
  grain: number,
): { alignedStart: number; end: number } | EmulatorResponse {
  const endText = queryParam(req.query, "endtime");
  const startText = queryParam(req.query, "starttime");
  const end = endText ? Date.parse(endText) : nowMs;
  const start = startText ? Date.parse(startText) : end - 60 * MINUTE;
  if (!Number.isFinite(start) || !Number.isFinite(end))
    return badRequest("starttime and endtime must be ISO 8601 times.");
  if (start >= end) return badRequest("starttime must be before endtime.");
  if (end - start > MAX_SPAN_MS) {
    return badRequest(
      `The requested time range exceeds the maximum allowed of 30 days (${isoTime(start)} to ${isoTime(end)}).`,
    );
  }
  const alignedStart = Math.floor(start / grain) * grain;
  const points = Math.ceil((end - alignedStart) / grain);
  if (points > MAX_POINTS) {
    return badRequest(`The query asks for ${points} points per series; at most ${MAX_POINTS} are allowed.`);
  }
  return { alignedStart, end };
}

/** A getBatch query as validated: what to answer for every resource. Times in ms, grain in ms. */
interface BatchQuery {
  region: string;
  namespace: string;
  metrics: EmulatedMetric[];
  intervalText: string;
  grain: number;
  aggregations?: AggregationName[];
  filter?: DimensionFilter;
  alignedStart: number;
  end: number;
}

/** The series of `metric` for one resource: one per filtered dimension value (one when unfiltered). */
function metricSeries(
  bucketAt: (minuteMs: number) => Bucket | undefined,
  metric: EmulatedMetric,
  q: BatchQuery,
  flags: MonitorFaultFlags,
): Record<string, unknown>[] {
  const { filter } = q;
  return seriesOf(metric, filter).map((dimValue) => ({
    metadatavalues:
      dimValue === undefined || !filter
        ? []
        : [
            {
              name: { value: filter.dimension.toLowerCase(), localizedValue: filter.dimension.toLowerCase() },
              value: dimValue,
            },
          ],
    data: dataPoints(
      bucketAt,
      metric,
      dimValue,
      q.alignedStart,
      q.end,
      q.grain,
      q.aggregations,
      flags.nullSeries ?? false,
    ),
  }));
}

/** The answer's entry for resource `id`: each metric, empty series when not served in `q.region`. */
function resourceValues(
  state: EmulatorState,
  id: string,
  q: BatchQuery,
  flags: MonitorFaultFlags,
): Record<string, unknown> {
  const view = state.getInstance(id);
  const servedHere = view !== undefined && view.location === q.region;
  const bucketAt = minuteBuckets(state, id);
  const value = q.metrics.map((metric) => ({
    id: `${id}/providers/Microsoft.Insights/metrics/${metric.name}`,
    type: "Microsoft.Insights/metrics",
    name: { value: metric.name, localizedValue: metric.displayName },
    displayDescription: metric.description,
    unit: metric.unit,
    ...metricStatus(metric, flags),
    timeseries:
      !servedHere || flags.emptyTimeseries || failing(metric, flags)
        ? []
        : metricSeries(bucketAt, metric, q, flags),
  }));
  return {
    starttime: isoTime(q.alignedStart),
    endtime: isoTime(q.end),
    interval: q.intervalText,
    namespace: q.namespace,
    resourceregion: view?.location ?? q.region,
    resourceid: id,
    value,
  };
}

/** Handles `metrics:getBatch`; `undefined` when the path is not that route. */
export function handleGetBatch(
  req: EmulatorRequest,
  state: EmulatorState,
  flags: MonitorFaultFlags = {},
): EmulatorResponse | undefined {
  if (!isGetBatch(req)) return undefined;
  const seg = req.path.split("/").filter((s) => s !== "");
  const region = (seg[1] as string).toLowerCase();
  const subscriptionId = seg[3] as string;
  const refused = endpointRefusal(req);
  if (refused) return refused;
  const target = batchTarget(req, subscriptionId);
  if ("status" in target) return target;
  const metrics = requestedMetrics(req, target);
  if ("status" in metrics) return metrics;
  const interval = requestedGrain(req);
  if ("status" in interval) return interval;
  const aggregations = requestedAggregations(req, metrics, target.namespace);
  if ("status" in aggregations) return aggregations;
  const filter = requestedFilter(req, metrics);
  if ("status" in filter) return filter;
  const span = requestedSpan(req, state.clock.nowMs(), interval.grain);
  if ("status" in span) return span;
  const query: BatchQuery = {
    region,
    namespace: target.namespace,
    metrics,
    ...interval,
    ...aggregations,
    ...filter,
    ...span,
  };
  return json(200, { values: target.ids.map((id) => resourceValues(state, id, query, flags)) });
}

function aggregationTitle(a: AggregationName): string {
  return a[0]?.toUpperCase() + a.slice(1);
}

/**
 * The refusal of a query that asks `metric` for an aggregation the metric reference does not list
 * for it: 400 `BadRequest`, in the words Azure Monitor answers it with ("Sampling type is not
 * found"), naming what the metric supports.
 */
function unsupportedAggregation(
  namespace: string,
  metric: EmulatedMetric,
  aggregation: AggregationName,
): EmulatorResponse {
  return badRequest(
    `Sampling type is not found. Metric: ${namespace}, ${metric.name}, SamplingType: ${aggregationTitle(aggregation)}. Supported aggregation types of ${metric.name}: ${metric.aggregations.map(aggregationTitle).join(", ")}.`,
  );
}

/** A metric the `metricError` fault names (all of them when it names none). */
function failing(metric: EmulatedMetric, flags: MonitorFaultFlags): boolean {
  const f = flags.metricError;
  if (!f) return false;
  return f.metrics === undefined || f.metrics.some((n) => n.toLowerCase() === metric.name.toLowerCase());
}

/** `errorCode: "Success"`, or the fault's error code and message. */
function metricStatus(
  metric: EmulatedMetric,
  flags: MonitorFaultFlags,
): { errorCode: string; errorMessage?: string } {
  if (!failing(metric, flags)) return { errorCode: "Success" };
  return {
    errorCode: flags.metricError?.code ?? "InternalError",
    errorMessage: flags.metricError?.message ?? `Failed to query metric ${metric.name}.`,
  };
}

/**
 * Combines minute aggregates into one coarser grain's (mean of averages, min of minimums, max of
 * maximums, sum of totals and counts); `undefined` entries (no data) are skipped.
 */
export function combineAggregates(
  minutes: readonly (Required<Aggregates> | undefined)[],
): Required<Aggregates> | undefined {
  const present = minutes.filter((m): m is Required<Aggregates> => m !== undefined);
  if (present.length === 0) return undefined;
  return {
    average: present.reduce((a, m) => a + m.average, 0) / present.length,
    minimum: Math.min(...present.map((m) => m.minimum)),
    maximum: Math.max(...present.map((m) => m.maximum)),
    total: present.reduce((a, m) => a + m.total, 0),
    count: present.reduce((a, m) => a + m.count, 0),
  };
}

function validMetricNames(service: ServiceKind): string {
  return EMULATED_METRICS[service].map((m) => m.name).join(",");
}

/** The series of a metric: one unsplit, or one per dimension value the filter selects. */
function seriesOf(metric: EmulatedMetric, filter: DimensionFilter | undefined): (string | undefined)[] {
  if (!filter) return [undefined];
  const known = metric.dimensionValues ?? [];
  if (filter.values.includes("*")) return [...known];
  return known.filter((v) => filter.values.some((w) => w.toLowerCase() === v.toLowerCase()));
}

/**
 * One resource's minute buckets for one answer, each computed once however many metrics (and
 * dimension values) the answer has: a long history asks for tens of thousands of minutes.
 */
function minuteBuckets(state: EmulatorState, resourceId: string): (minuteMs: number) => Bucket | undefined {
  const seen = new Map<number, Bucket | undefined>();
  return (minuteMs) => {
    if (seen.has(minuteMs)) return seen.get(minuteMs);
    const b = state.bucket(resourceId, minuteMs);
    seen.set(minuteMs, b);
    return b;
  };
}

function dataPoints(
  bucketAt: (minuteMs: number) => Bucket | undefined,
  metric: EmulatedMetric,
  dimValue: string | undefined,
  start: number,
  end: number,
  grain: number,
  aggregations: AggregationName[] | undefined,
  nullSeries: boolean,
): Record<string, unknown>[] {
  const wanted = aggregations ?? [metric.primary];
  const out: Record<string, unknown>[] = [];
  for (let t = start; t < end; t += grain) {
    const point: Record<string, unknown> = { timeStamp: isoTime(t) };
    if (!nullSeries) {
      const minutes: (Required<Aggregates> | undefined)[] = [];
      for (let m = t; m < t + grain && m < end; m += MINUTE) {
        const b = bucketAt(m);
        minutes.push(
          b && b.ingested > 0
            ? minuteAggregates(metric, b.traffic, b.spread, b.ingested, dimValue)
            : undefined,
        );
      }
      const agg = combineAggregates(minutes);
      // A counter that counted nothing has no value in the bucket: a point with only its
      // timestamp, as the official example writes an empty bucket.
      const counted = metric.kind !== "total" || (agg !== undefined && agg.total > 0);
      if (agg && counted) for (const a of wanted) point[a] = agg[a];
    }
    out.push(point);
  }
  return out;
}
