/**
 * The getBatch queries one batch of resources needs: which metrics, with which aggregation and
 * filter. Pure; the one plan of every reader that builds getBatch queries — the one-minute
 * metrics (`metrics.ts`), the demand history (`history.ts`) and whoever checks a subscription the
 * way the operator reads it.
 *
 * Rule: each metric is asked only for the aggregation it is read as (`metric-definitions.ts`),
 * which must be one Azure Monitor supports for it; metrics read as the same aggregation share one
 * query, in the order of the definitions. So a SignalR batch needs two queries — `Maximum` for
 * ServerLoad, ConnectionQuotaUtilization and ConnectionCount, `Total` for MessageCount,
 * InboundTraffic and OutboundTraffic — and a third, `Maximum` of ConnectionCount with the filter
 * `Endpoint eq '*'`, when the connections are wanted split by endpoint (a dimension filter the
 * other metrics lack would be refused). Web PubSub the same without MessageCount and the split.
 * Calls per scope (subscription, region, service) = queries × ceil(resources / 50).
 */
import type { SampleField } from "../autoscale/samples.js";
import type { ServiceKind } from "../capacity/index.js";
import {
  type AggregationType,
  aggregationType,
  ENDPOINT_SPLIT,
  METRIC_DEFINITIONS,
  type MetricDefinition,
} from "./metric-definitions.js";

/** What a query reads: the metrics' values (one query per aggregation), or connections split by endpoint. */
export type MetricQueryPart = "metrics" | "endpointSplit";

/** One getBatch query of a batch. */
export interface MetricQuery {
  part: MetricQueryPart;
  /** Metric names (REST names), all of the batch's service. */
  metricNames: readonly string[];
  /** The one aggregation asked for, e.g. `Maximum`: every metric of the query supports it. */
  aggregation: AggregationType;
  /** Dimension filter, e.g. `Endpoint eq '*'`. */
  filter?: string;
  /** The sample fields its answer fills (unknown when it fails). */
  fields: readonly SampleField[];
}

/** What {@link metricQueries} plans for. */
export interface MetricQueryOptions {
  /** Read only the metrics of these fields (default: every metric of the service). */
  fields?: readonly SampleField[];
  /** Add the query of SignalR's ConnectionCount split by `Endpoint` (ignored for Web PubSub). */
  connectionsByEndpoint?: boolean;
}

/** A metric definition asks for an aggregation its metric does not support: the table is wrong. */
export class UnsupportedAggregationError extends Error {
  override readonly name = "UnsupportedAggregationError";
}

function checked(service: ServiceKind, def: MetricDefinition): AggregationType {
  const wanted = aggregationType(def.aggregation);
  if (!def.supportedAggregations.includes(wanted)) {
    throw new UnsupportedAggregationError(
      `${service} ${def.name} is read as ${wanted}, which it does not support (${def.supportedAggregations.join(", ")})`,
    );
  }
  return wanted;
}

/**
 * The queries a batch of `service` needs (see the module comment), in a stable order: the
 * metrics' queries by first aggregation in the definitions, then the endpoint split.
 * @throws UnsupportedAggregationError when a definition reads an aggregation its metric does not
 *   support (a wrong table, never the input); RangeError when `fields` selects no metric.
 */
export function metricQueries(service: ServiceKind, options: MetricQueryOptions = {}): MetricQuery[] {
  const wanted = options.fields ? new Set(options.fields) : undefined;
  const defs = METRIC_DEFINITIONS[service].filter((d) => !wanted || wanted.has(d.field));
  if (defs.length === 0) {
    throw new RangeError(`no ${service} metric is read for ${[...(wanted ?? [])].join(", ")}`);
  }
  const byAggregation = new Map<AggregationType, MetricDefinition[]>();
  for (const def of defs) {
    const aggregation = checked(service, def);
    byAggregation.set(aggregation, [...(byAggregation.get(aggregation) ?? []), def]);
  }
  const queries: MetricQuery[] = [...byAggregation].map(([aggregation, group]) => ({
    part: "metrics",
    metricNames: group.map((d) => d.name),
    aggregation,
    fields: group.map((d) => d.field),
  }));
  if (options.connectionsByEndpoint && service === "SignalR") {
    const def = METRIC_DEFINITIONS.SignalR.find((d) => d.name === ENDPOINT_SPLIT.metric) as MetricDefinition;
    queries.push({
      part: "endpointSplit",
      metricNames: [def.name],
      aggregation: checked(service, def),
      filter: ENDPOINT_SPLIT.filter,
      fields: [],
    });
  }
  return queries;
}
