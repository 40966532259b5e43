/**
 * The preflight's reads: every read the operator makes for one instance, made once through the
 * operator's own adapters, recorded as {@link PreflightObservations}. Read-only: no call here
 * writes (the one POST is `metrics:getBatch`, a query).
 *
 * In order:
 * 1. a token for ARM and one for the metrics data plane, each within the token timeout;
 * 2. the instance (GET), its geo-replicas (`Replicas_List`, read each poll cycle for failover),
 *    the subscription's instances of the service (the list the poll cycle reads), and `listSkus`.
 *    For a replica target: the replica (GET), its instance's replicas (which is then the list the
 *    poll cycle reads it from), and the replica's own SKU list (`ListReplicaSkus`);
 * 3. the metrics, through `AzureMetrics` itself — the same `read` the poll cycle calls, over the
 *    same span (controller/fetch.ts `metricsReadTimes` and `metricsSpan`: the decision's window
 *    plus ingestion delay, or its maximum sample age, before the next whole minute) — and, for a
 *    policy with a seasonal forecast, the history reader's first full read
 *    (`HistoryReader.refresh`). Every getBatch call is recorded as `queryBatch` was asked to send
 *    it, so whatever queries the operator sends, this sends the same;
 * 4. the subscription's quotas in the target's region (`Usages_List`; a replica's own region): not a read the operator
 *    makes, but what decides whether its scale-outs above some size will be refused;
 * 5. the native autoscale settings of the subscription that target the instance.
 *
 * Every HTTP call has the connection's request timeout and every token request its token
 * timeout; `signal` aborts everything. Azure failures are recorded, never thrown.
 */
import { KnownMonitorMetricsQueryAudience } from "@azure/monitor-query-metrics";
import {
  AuthenticationError,
  AzureAutoscaleSettings,
  type AzureConnection,
  AzureInstances,
  AzureMetrics,
  type BatchAnswer,
  type BatchQuery,
  CREDENTIAL_UNAVAILABLE,
  classifyAzureError,
  HistoryReader,
  type InstanceState,
  isAzureApiError,
  isReplica,
  type MetricsBatch,
  parseResourceId,
  QuotaRecorder,
  resolveConnection,
  resourceKey,
  ThrottleGate,
} from "../azure/index.js";
import { metricsReadTimes, metricsSpan, seasonalHistory } from "../controller/fetch.js";
import type {
  MetricsQueryObservation,
  Outcome,
  PreflightObservations,
  PreflightTarget,
  TokenObservation,
} from "./observations.js";
import { principalOfToken } from "./principal.js";

/** How a preflight reaches Azure. */
export interface ProbeOptions {
  /** The connection the operator would use (endpoints, CA, credential, request and token timeouts). */
  connection: AzureConnection;
  /** Wall-clock time, ms: the metrics span ends at the next whole minute after it. */
  now: () => number;
  /** Aborts every call (the user pressed Ctrl-C). */
  signal?: AbortSignal;
}

/** An {@link AzureMetrics} that records every getBatch call it is asked to send, and its answer. */
class RecordingMetrics extends AzureMetrics {
  readonly queries: MetricsQueryObservation[] = [];

  override async queryBatch(batch: MetricsBatch, query: BatchQuery): Promise<BatchAnswer> {
    const answer = await super.queryBatch(batch, query);
    const { signal: _signal, ...asked } = query;
    this.queries.push({
      query: asked,
      region: batch.scope.region,
      resourceIds: [...batch.resourceIds],
      sent: answer.sent,
      answer: "error" in answer ? { error: answer.error } : { results: answer.results },
    });
    return answer;
  }
}

/** Runs `fn`; an Azure failure becomes the outcome's error, anything else is thrown. */
async function attempt<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: await fn() };
  } catch (err) {
    if (isAzureApiError(err)) return { error: err };
    throw err;
  }
}

/** A token for `scope` from the connection's credential, within its token timeout. */
async function token(
  audience: TokenObservation["audience"],
  scope: string,
  options: ProbeOptions,
): Promise<TokenObservation> {
  const conn = resolveConnection(options.connection);
  const operation = `credential.getToken(${audience})`;
  try {
    const got = await conn.credential.getToken(scope, options.signal ? { abortSignal: options.signal } : {});
    if (!got) {
      const error = new AuthenticationError(`${operation}: the credential returned no token`, {
        operation,
        code: CREDENTIAL_UNAVAILABLE,
      });
      return { audience, scope, outcome: { error } };
    }
    const principal = principalOfToken(got.token);
    return {
      audience,
      scope,
      outcome: { ok: { expiresOnMs: got.expiresOnTimestamp, ...(principal ? { principal } : {}) } },
    };
  } catch (err) {
    const typed = classifyAzureError(err, {
      operation,
      now: new Date(options.now()),
      callerAborted: options.signal?.aborted === true,
    });
    if (!typed) throw err;
    return { audience, scope, outcome: { error: typed } };
  }
}

const skipped = (why: string) => ({ skipped: why }) as const;

/** How many a list holds and `id` among them, from the list's outcome. */
function listed(
  list: Outcome<InstanceState[]>,
  id: string,
): Outcome<{ count: number; found?: InstanceState }> {
  if (!("ok" in list)) return list;
  const found = list.ok.find((i) => resourceKey(i.resourceId) === resourceKey(id));
  return { ok: { count: list.ok.length, ...(found ? { found } : {}) } };
}

/**
 * Reads what the operator reads for `target`, once.
 * @throws ResourceIdError for a malformed resource ID; the caller's abort; errors that are not
 *   Azure failures. Azure failures are recorded in the observations.
 */
export async function probeAzure(
  target: PreflightTarget,
  options: ProbeOptions,
): Promise<PreflightObservations> {
  const ref = parseResourceId(target.resourceId);
  const atMs = options.now();
  const conn = resolveConnection(options.connection);
  const metricsScope = conn.metricsScope ?? `${KnownMonitorMetricsQueryAudience.AzurePublicCloud}/.default`;
  const tokens = [await token("ARM", conn.armScope, options), await token("metrics", metricsScope, options)];
  const armToken = tokens[0]?.outcome;
  const metricsToken = tokens[1]?.outcome;
  const call = options.signal ? { signal: options.signal } : {};

  const armGate = new ThrottleGate(conn.now);
  const quota = new QuotaRecorder();
  const instances = new AzureInstances(options.connection, { gate: armGate, quota });
  const settings = new AzureAutoscaleSettings(options.connection, { gate: armGate, quota });
  const metrics = new RecordingMetrics(options.connection);
  const noArm = armToken && !("ok" in armToken) ? "no ARM token (see the credential)" : undefined;

  const instance = noArm ? skipped(noArm) : await attempt(() => instances.get(ref.id, call));
  const replicas = noArm ? skipped(noArm) : await attempt(() => instances.listReplicas(ref.primaryId, call));
  const instanceList = noArm
    ? skipped(noArm)
    : isReplica(ref)
      ? listed(replicas, ref.id)
      : listed(
          await attempt(() => instances.listBySubscription(ref.subscriptionId, ref.service, call)),
          ref.id,
        );
  const skus = noArm ? skipped(noArm) : await attempt(() => instances.listSkus(ref.id, call));

  const times = metricsReadTimes(target.policy);
  const region =
    "ok" in instance
      ? instance.ok.location
      : "ok" in instanceList
        ? instanceList.ok.found?.location
        : undefined;
  const usages = noArm
    ? skipped(noArm)
    : region === undefined
      ? skipped("the instance's region is unknown (its read failed): quotas are per region")
      : await attempt(() => instances.listUsages(ref.id, region, call));
  let metricsOutcome: Outcome<MetricsQueryObservation[]>;
  if (metricsToken && !("ok" in metricsToken))
    metricsOutcome = skipped("no metrics token (see the credential)");
  else if (region === undefined) {
    metricsOutcome = skipped(
      "the instance's region is unknown (its read failed): the metrics endpoint is regional",
    );
  } else {
    await metrics.read([{ resourceId: target.resourceId, region }], {
      ...metricsSpan(atMs, times.lookbackMs),
      ...call,
    });
    const seasonal = target.policy ? seasonalHistory(target.policy) : undefined;
    if (seasonal) {
      const history = new HistoryReader(metrics);
      history.want([{ resourceId: target.resourceId, region, ...seasonal }], atMs);
      await history.refresh(atMs, call);
    }
    metricsOutcome = { ok: metrics.queries };
  }

  const autoscaleSettings = noArm
    ? skipped(noArm)
    : await attempt(async () => (await settings.findFor([ref.id], call)).get(ref.id) ?? []);

  return {
    atMs,
    tokens,
    instance,
    instanceList,
    replicas,
    skus,
    usages,
    metrics: metricsOutcome,
    times: { windowSeconds: times.windowSeconds, ingestionDelaySeconds: times.ingestionDelaySeconds },
    autoscaleSettings,
    armQuota: quota.snapshot(),
  };
}
