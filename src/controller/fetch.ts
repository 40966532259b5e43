/**
 * What one poll cycle reads from Azure for every policy that is due, batched:
 *
 * - instances: one `listBySubscription` per subscription and service (SKU, units, provisioning
 *   state of every instance at once), with a single GET only for an instance the list lacks;
 * - metrics: one `metrics:getBatch` per ≤ 50 resources of the same subscription, region and type
 *   and the same look-back (policies with different look-backs never share a request);
 * - native autoscale settings: one list per subscription, at most every `conflictCheckMs`;
 * - geo-replica groups (`replica-groups.ts`): which instances have replicas, one generic list per
 *   subscription and service every 10 minutes; the replicas of each group a target is in, every
 *   cycle (a replica target's state is read from it); each member's metrics in the same batches,
 *   a policy in a group handed on once every member's batch has answered;
 * - demand history (policies with `spec.anticipation.seasonal`, mode not Off): the history reader
 *   (`azure/history.ts`) is told which histories are wanted, and each such policy gets the one
 *   last read; when a refresh is due (new resources, or the hour turned) it runs in the background,
 *   one at a time, so the cycle and its one-minute metrics never wait for it — a policy gets a new
 *   history from the first cycle after the refresh ends;
 * - unit ladders: `listSkus` per instance, in the background (at most {@link LADDER_READS_AT_ONCE}
 *   at a time, never waited for), when the instance has none read yet, when the last answer is
 *   {@link LADDER_REFRESH_MS} (6 hours) old — counting an answer stored in the policy's status, so
 *   a restart does not re-read them all — and once after an update to a count was not applied
 *   (`CycleTarget.ladder.wantedAfterMs`); after a failed read, not again for
 *   {@link LADDER_RETRY_MS}. A policy gets the last answer (`CycleReading.ladder`); without one
 *   the pass uses the stored or the documented ladders, so a failed `listSkus` never blocks
 *   scaling and costs no read per pass.
 *
 * Failures are kept per policy (a throttled subscription fails only its own policies); nothing
 * here throws for an Azure failure.
 *
 * Deadlines: the cycle's calls run under `deadline` (their own request and token timeouts still
 * apply); a call cut by it fails as a transient error of its policies. Each policy is handed to
 * `onReady` as soon as its own reading is complete — after its metrics batch, not after every
 * batch — so a region whose metrics endpoint hangs holds only its own policies.
 */

import {
  DEFAULT_HISTORY_DAYS,
  DEFAULT_HISTORY_GRAIN,
  HISTORY_GRAINS,
  type HistoryGrain,
  MAX_HISTORY_DAYS,
  MIN_HISTORY_DAYS,
} from "../api/constants.js";
import type { CapacityPolicy } from "../api/index.js";
import { policyTimes } from "../autoscale/decide.js";
import type { DemandHistory } from "../autoscale/demand-history.js";
import type { FailureKind, PassFailure } from "../autoscale/fallback.js";
import { effectiveIngestionDelay } from "../autoscale/ingestion.js";
import type { LadderRead } from "../autoscale/ladders.js";
import type { LeadingObservation } from "../autoscale/leading.js";
import type { SampleField } from "../autoscale/samples.js";
import type { NativeAutoscaleSetting } from "../azure/autoscale-settings.js";
import {
  type AzureAdapters,
  CREDENTIAL_UNAVAILABLE,
  forEachLimited,
  type HistoryRefreshReport,
  isAzureApiError,
  isDurableRefusal,
  type MetricSample,
  type MetricsFailure,
  type MetricsReadResult,
  type ResourceRef,
  resourceKey,
  ThrottledError,
} from "../azure/index.js";
import type { AllowedUnits, InstanceState } from "../azure/instances.js";
import type { ServiceKind } from "../capacity/skus.js";
import type { ApiErrorKind } from "../shared/api-error.js";
import type { Duplicate } from "./ownership.js";
import { type GroupMemberReading, ReplicaGroupReader, type ReplicaGroupReading } from "./replica-groups.js";
import type { TargetCheck } from "./tenancy.js";

/** One policy's target, as the cycle needs it. */
export interface CycleTarget {
  /** Work-queue key (`namespace/name`). */
  key: string;
  resourceId: string;
  /** The resource ID, parsed. */
  ref: ResourceRef;
  service: ServiceKind;
  /** How far back metrics are needed, ms (window + ingestion delay, or the max sample age). */
  lookbackMs: number;
  /** The demand history the policy's seasonal forecast reads; absent when it has none (or mode Off). */
  seasonal?: { days: number; grain: HistoryGrain };
  /**
   * What the policy's status knows of the instance's unit ladders (`status.unitLadders`): when
   * `listSkus` last answered, and when a count was last found not applied (a re-read is due once
   * after it), ms since the epoch. Absent: nothing is known, the ladders are read when due.
   */
  ladder?: { readAtMs?: number; wantedAfterMs?: number };
}

/** What the cycle found for one policy. */
export interface CycleReading {
  fetchedAt: number;
  /** The target as the cycle checked it (parsed once per pass; refused targets are not read). */
  target?: TargetCheck;
  instance?: InstanceState;
  instanceError?: PassFailure & { cause: unknown };
  samples?: MetricSample[];
  metricsError?: PassFailure & { cause: unknown };
  /**
   * Queries of the instance's metrics that failed while others answered: `samples` are those of
   * the queries that answered, the fields listed here are unknown in them (never 0).
   */
  metricsPartial?: (PassFailure & { fields: readonly SampleField[] })[];
  /** Native autoscale settings that target the instance (enabled ones only); undefined when unknown. */
  nativeSettings?: NativeAutoscaleSetting[];
  /** The instance's demand history as last read (policies with a seasonal forecast); undefined before the first read. */
  demandHistory?: DemandHistory;
  /** The leading signal's readings from Prometheus (`leading.ts`; policies with one). */
  leading?: LeadingObservation;
  /** The instance's unit ladders as `listSkus` last answered (undefined before the first answer). */
  ladder?: LadderRead;
  /**
   * The geo-replica group of the target (`replica-groups.ts`): every member's ARM state and its
   * samples of this cycle; absent when the instance has no replicas (or none are known).
   */
  replicaGroup?: ReplicaGroupReading;
  /**
   * The older policy that owns a target this one names (`ownership.ts`), as the cycle found it:
   * Azure is not read for this policy and its pass is refused as a duplicate.
   */
  duplicate?: Duplicate;
}

/** Per-cycle options of {@link CycleFetcher.read}. */
export interface CycleReadOptions {
  /** Aborts the cycle's Azure calls (the poll cycle's deadline); the history refresh is not cut by it. */
  deadline?: AbortSignal;
  /**
   * Told once per target, as soon as its reading is complete (before `read` resolves). Must not
   * throw.
   */
  onReady?: (key: string, reading: CycleReading) => void;
}

/** Settings of {@link CycleFetcher}. */
export interface CycleFetcherOptions {
  /** The operator's clock, ms since the epoch. */
  now: () => number;
  /** How often native autoscale settings are re-read per resource, ms (default 300,000). */
  conflictCheckMs?: number;
  /** Told how each background history refresh ended: its report, or what it threw. Must not throw. */
  onHistoryRefresh?: (outcome: { report: HistoryRefreshReport } | { error: unknown }) => void;
}

/** Every metrics time at its default: sizes the read of a policy whose spec is unreadable (or absent). */
const DEFAULT_TIMES_SPEC = {
  metrics: {},
  behavior: { settleSeconds: 0 },
} as unknown as CapacityPolicy["spec"];

/** The durations a policy's metrics read is sized by. */
export interface MetricsReadTimes {
  /** The decision's window, seconds. */
  windowSeconds: number;
  /** The ingestion delay the decision uses (the spec's, or the longer one observed), seconds. */
  ingestionDelaySeconds: number;
  /** How far back the metrics are read, ms: the window plus that delay, or the max sample age. */
  lookbackMs: number;
}

/**
 * How far back a policy's decision reads metrics (see {@link MetricsReadTimes}); the defaults for
 * an absent policy (a bare resource ID) or a spec the watch delivered invalid — its pass reports
 * it, this only sizes the read.
 */
export function metricsReadTimes(policy: CapacityPolicy | undefined): MetricsReadTimes {
  const spec = policy?.spec;
  const t = spec?.metrics && spec.behavior ? policyTimes(spec) : policyTimes(DEFAULT_TIMES_SPEC);
  const delay = effectiveIngestionDelay(t.ingestionDelaySeconds, policy?.status?.ingestion);
  return {
    windowSeconds: t.windowSeconds,
    ingestionDelaySeconds: delay,
    lookbackMs: Math.max(t.windowSeconds + delay, t.maxSampleAgeSeconds) * 1000,
  };
}

/**
 * The span of a metrics read made at `nowMs` for `lookbackMs`: it ends at the next whole minute
 * and starts one minute more than `lookbackMs` before that.
 */
export function metricsSpan(nowMs: number, lookbackMs: number): { start: Date; end: Date } {
  const end = Math.ceil(nowMs / 60_000) * 60_000;
  return { start: new Date(end - lookbackMs - 60_000), end: new Date(end) };
}

/**
 * The history a policy's seasonal forecast reads (`spec.anticipation.seasonal`, with its defaults;
 * days clamped to 7–28), or undefined when it has none or anticipation is Off. The spec is as the
 * watch delivered it: an invalid one is reported by its pass, this only sizes the read.
 */
export function seasonalHistory(policy: CapacityPolicy): CycleTarget["seasonal"] {
  const anticipation = policy.spec?.anticipation;
  const seasonal = anticipation?.seasonal;
  if (!seasonal || anticipation.mode === "Off") return undefined;
  const grain = seasonal.grain ?? DEFAULT_HISTORY_GRAIN;
  if (!HISTORY_GRAINS.includes(grain)) return undefined;
  const days = Number.isFinite(seasonal.historyDays) ? seasonal.historyDays : DEFAULT_HISTORY_DAYS;
  return { days: Math.min(MAX_HISTORY_DAYS, Math.max(MIN_HISTORY_DAYS, Math.round(days))), grain };
}

/**
 * The decision's failure kind of each Azure error kind; any other durable refusal
 * (`isDurableRefusal`: a quota, an Azure Policy deny, a resource lock) is an `InvalidRequest`, as
 * durable as the table's, and anything else an `ApiError`. A request Azure refused as invalid (400)
 * is `InvalidRequest`: `MetricsAvailable=False, FetchFailed` then reads "InvalidRequest: … invalid
 * request (400 …)" — the request was refused, not lost.
 */
const FAILURE_KINDS: Partial<Record<ApiErrorKind, FailureKind>> = {
  Throttled: "Throttled",
  Unauthorized: "Auth",
  NotFound: "NotFound",
  Transient: "Network",
  Invalid: "InvalidRequest",
};

/**
 * Azure failure → the decision's failure kinds; no token at all (the credential failed or timed
 * out, no request was sent) is `Credential`. A throttle carries when it ends (`notBefore`).
 */
function passFailure(err: unknown, read: "instance" | "metrics"): PassFailure & { cause: unknown } {
  const message = err instanceof Error ? err.message : String(err);
  const kind = isAzureApiError(err)
    ? err.code === CREDENTIAL_UNAVAILABLE
      ? "Credential"
      : (FAILURE_KINDS[err.kind] ?? (isDurableRefusal(err) ? "InvalidRequest" : "ApiError"))
    : "ApiError";
  const notBefore = err instanceof ThrottledError ? err.notBefore.toISOString() : undefined;
  return { kind, message, read, ...(notBefore ? { notBefore } : {}), cause: err };
}

/** How often an instance's unit ladders are re-read (`listSkus`), ms: 6 hours. */
export const LADDER_REFRESH_MS = 6 * 3_600_000;

/** After a failed `listSkus`, the next try of that instance waits this long, ms: 15 minutes. */
export const LADDER_RETRY_MS = 15 * 60_000;

/** Most `listSkus` calls running at once. */
export const LADDER_READS_AT_ONCE = 4;

/** The unit ladders cached for one instance. */
interface CachedLadder {
  /** The last answer. */
  read?: LadderRead;
  /** When the last read failed, ms (cleared by an answer). */
  failedAt?: number;
}

/** A `listSkus` answer as the pass reads it: the ladders of the SKUs it described. */
function ladderRead(allowed: AllowedUnits, nowMs: number): LadderRead {
  const service: LadderRead["service"] = {};
  for (const sku of allowed.fromService) service[sku] = [...allowed.ladders[sku]];
  return { service, readAt: new Date(nowMs).toISOString() };
}

/** One metrics batch's answer → the readings of its policies (`ready`). */
function applyMetrics(
  ready: readonly CycleTarget[],
  out: Map<string, CycleReading>,
  samples: ReadonlyMap<string, MetricSample[]>,
  failures: readonly MetricsFailure[],
): void {
  const failed = new Map<string, MetricsFailure[]>();
  for (const f of failures) {
    if (f.part !== "metrics") continue;
    for (const id of f.batch.resourceIds) {
      const key = resourceKey(id);
      failed.set(key, [...(failed.get(key) ?? []), f]);
    }
  }
  for (const t of ready) {
    const reading = out.get(t.key) as CycleReading;
    const found = samples.get(t.resourceId);
    const errors = failed.get(resourceKey(t.resourceId)) ?? [];
    const error = errors[0]?.error;
    if (found) {
      reading.samples = found;
      if (errors.length > 0) {
        reading.metricsPartial = errors.map((f) => {
          const { kind, message } = passFailure(f.error, "metrics");
          return { kind, message, fields: f.fields };
        });
      }
    } else if (error) reading.metricsError = passFailure(error, "metrics");
    else
      reading.metricsError = {
        kind: "NoData",
        message: "Azure Monitor returned no series",
        cause: undefined,
      };
  }
}

/**
 * The members of the replica groups of `readings` whose region is known, to read beside the
 * targets (the metrics read queries an ID once, however often it is asked for).
 */
function groupMembers(readings: readonly CycleReading[]): { resourceId: string; region: string }[] {
  return readings.flatMap((r) =>
    [...(r.replicaGroup?.members ?? new Map<string, GroupMemberReading>())].flatMap(([id, m]) =>
      m.state?.location ? [{ resourceId: id, region: m.state.location }] : [],
    ),
  );
}

/** Each group member's samples of this read (by resource ID, any case) into the readings' groups. */
function withMemberSamples(
  readings: readonly CycleReading[],
  samples: ReadonlyMap<string, MetricSample[]>,
): void {
  const byKey = new Map([...samples].map(([id, s]) => [resourceKey(id), s]));
  for (const r of readings) {
    for (const [id, m] of r.replicaGroup?.members ?? []) {
      const found = byKey.get(resourceKey(id));
      if (found) m.samples = found;
    }
  }
}

/** One cycle's readings and what of them has been applied and handed on (each target once). */
interface CycleHandout {
  /** The readings, by work-queue key. */
  out: Map<string, CycleReading>;
  /** Keys handed to `onReady`. */
  handed: Set<string>;
  /** Keys whose metrics answer is in their reading. */
  applied: Set<string>;
  /** Hand-outs waiting for the native settings. */
  pending: Promise<void>[];
  /** The native settings read of this cycle. */
  settings: Promise<void>;
  onReady: CycleReadOptions["onReady"];
}

/** `targets` grouped by subscription (case-insensitive) and service, in first-seen order. */
function bySubscriptionAndService(
  targets: readonly CycleTarget[],
): { subscriptionId: string; service: ServiceKind; targets: CycleTarget[] }[] {
  const groups = new Map<string, { subscriptionId: string; service: ServiceKind; targets: CycleTarget[] }>();
  for (const t of targets) {
    const ref = t.ref;
    const gk = `${ref.subscriptionId.toLowerCase()}|${t.service}`;
    const g = groups.get(gk) ?? { subscriptionId: ref.subscriptionId, service: t.service, targets: [] };
    g.targets.push(t);
    groups.set(gk, g);
  }
  return [...groups.values()];
}

export class CycleFetcher {
  readonly #azure: AzureAdapters;
  readonly #now: () => number;
  readonly #conflictCheckMs: number;
  readonly #settings = new Map<string, { at: number; settings: NativeAutoscaleSetting[] }>();
  /**
   * Each resource's claim, taken when a cycle that reads it starts and dropped when it is
   * forgotten (its policy deleted or retargeted): what a read brings back is cached only while the
   * claim it started under stands, so a read that started before a forget does not cache again
   * what the forget dropped (native settings, unit ladders, the history wanted).
   */
  readonly #claims = new Map<string, object>();
  readonly #onHistoryRefresh: CycleFetcherOptions["onHistoryRefresh"];
  #historyRefresh: Promise<void> | undefined;
  readonly #ladders = new Map<string, CachedLadder>();
  /** Instances whose `listSkus` waits for a slot (key → resource ID, claim), and those being read. */
  readonly #ladderQueue = new Map<string, { resourceId: string; claims: ReadonlyMap<string, object> }>();
  readonly #ladderReads = new Map<string, Promise<void>>();
  readonly #groups: ReplicaGroupReader;

  constructor(azure: AzureAdapters, options: CycleFetcherOptions) {
    this.#azure = azure;
    this.#groups = new ReplicaGroupReader(
      (id, o) => azure.instances.listReplicas(id, o),
      (sub, service, o) => azure.instances.listReplicaIds(sub, service, o),
    );
    this.#now = options.now;
    this.#conflictCheckMs = options.conflictCheckMs ?? 300_000;
    this.#onHistoryRefresh = options.onHistoryRefresh;
  }

  /**
   * Reads instances, metrics and (when due) native autoscale settings for `targets`.
   * @param signal aborts everything (the leadership term); the history refresh runs under it.
   * @throws ResourceIdError for a malformed resource ID; the caller's abort.
   */
  async read(
    targets: readonly CycleTarget[],
    signal?: AbortSignal,
    options: CycleReadOptions = {},
  ): Promise<Map<string, CycleReading>> {
    const fetchedAt = this.#now();
    const out = new Map<string, CycleReading>(
      targets.map((t) => [t.key, { fetchedAt, target: { ok: true, ref: t.ref } }]),
    );
    if (targets.length === 0) return out;
    const claims = this.#claim(targets);
    const callSignal =
      signal && options.deadline ? AbortSignal.any([signal, options.deadline]) : (options.deadline ?? signal);
    const opts = callSignal ? { signal: callSignal } : {};
    const listed = await this.#readInstances(targets, out, opts);
    await this.#readGroups(targets, out, listed, fetchedAt, opts);

    // Native autoscale settings (per subscription, not every cycle), beside the metrics.
    const settings = this.#readNativeSettings(targets, claims, fetchedAt, opts);
    settings.catch(() => {}); // awaited below; handled here should the metrics read throw first
    const cycle: CycleHandout = {
      out,
      handed: new Set(),
      applied: new Set(),
      pending: [],
      settings,
      onReady: options.onReady,
    };

    // Metrics: batched across every due policy whose instance (and so region) is known; each
    // batch's policies are ready when it is.
    const withRegion = targets.filter((t) => out.get(t.key)?.instance);
    this.#withSettings(
      cycle,
      targets.filter((t) => !out.get(t.key)?.instance),
    );
    this.#history(
      withRegion.filter((t) => this.#stands(claims, t.resourceId)),
      out,
      fetchedAt,
      signal,
    );
    this.#readLadders(withRegion, claims, fetchedAt, signal);
    await this.#readMetrics(cycle, withRegion, fetchedAt, opts);
    await Promise.all(cycle.pending);
    await settings;
    for (const t of targets) this.#hand(cycle, t);
    return out;
  }

  /**
   * The instances of `targets` into `out`: one list per subscription and service (four at a
   * time), a single GET for an instance the list lacks; an Azure failure fails the readings of
   * its group (or of its one instance).
   */
  async #readInstances(
    targets: readonly CycleTarget[],
    out: Map<string, CycleReading>,
    opts: { signal?: AbortSignal },
  ): Promise<Map<string, InstanceState>> {
    const all = new Map<string, InstanceState>();
    await forEachLimited(bySubscriptionAndService(targets), 4, async (g) => {
      try {
        const listed = await this.#azure.instances.listBySubscription(g.subscriptionId, g.service, opts);
        const byId = new Map(listed.map((i) => [resourceKey(i.resourceId), i]));
        for (const [k, i] of byId) all.set(k, i);
        for (const t of g.targets) {
          const found = byId.get(resourceKey(t.resourceId));
          const reading = out.get(t.key) as CycleReading;
          if (found) reading.instance = found;
          // A replica is read with its group (#readGroups): instance lists do not hold replicas.
          else if (t.ref.replica !== undefined) continue;
          else {
            try {
              reading.instance = await this.#azure.instances.get(t.resourceId, opts);
            } catch (err) {
              reading.instanceError = passFailure(err, "instance");
            }
          }
        }
      } catch (err) {
        if (!isAzureApiError(err)) throw err;
        for (const t of g.targets)
          (out.get(t.key) as CycleReading).instanceError = passFailure(err, "instance");
      }
    });
    return all;
  }

  /**
   * The replica groups of `targets` (`replica-groups.ts`): lists the groups due, gives each
   * replica target its state from its group's list (a GET when the list lacks it or failed), and
   * each target in a group with replicas its `replicaGroup` (the primary's state from the instance
   * lists of this cycle).
   */
  async #readGroups(
    targets: readonly CycleTarget[],
    out: Map<string, CycleReading>,
    listed: ReadonlyMap<string, InstanceState>,
    nowMs: number,
    opts: { signal?: AbortSignal },
  ): Promise<void> {
    const reading = (t: CycleTarget) => out.get(t.key) as CycleReading;
    await this.#groups.read(targets, nowMs, opts);
    await forEachLimited(targets, 4, async (t) => {
      const r = reading(t);
      const group = this.#groups.group(t.resourceId);
      const fresh = group !== undefined && group.readAtMs === nowMs;
      if (t.ref.replica !== undefined && !r.instance && !r.instanceError) {
        const found = fresh
          ? group.replicas.find((m) => resourceKey(m.resourceId) === resourceKey(t.resourceId))
          : undefined;
        if (found) r.instance = found;
        else {
          try {
            r.instance = await this.#azure.instances.get(t.resourceId, opts);
          } catch (err) {
            r.instanceError = passFailure(err, "instance");
          }
        }
      }
      if (!group || group.replicas.length === 0) return;
      const primaryKey = resourceKey(group.primaryId);
      const members = new Map<string, GroupMemberReading>();
      const primary =
        listed.get(primaryKey) ?? (resourceKey(t.resourceId) === primaryKey ? r.instance : undefined);
      members.set(primary?.resourceId ?? group.primaryId, { state: primary, samples: undefined });
      for (const m of group.replicas) members.set(m.resourceId, { state: m, samples: undefined });
      r.replicaGroup = { primaryId: group.primaryId, readAtMs: group.readAtMs, fresh, members };
    });
  }

  /**
   * The metrics of `withRegion`, one read per look-back: a request only carries policies that ask
   * for the same span, so no policy's look-back changes another's requests, and a span Azure
   * rejects fails only the policies that asked for it. Each batch's policies are applied (and
   * handed on) as soon as their batch answers.
   */
  async #readMetrics(
    cycle: CycleHandout,
    withRegion: readonly CycleTarget[],
    fetchedAt: number,
    opts: { signal?: AbortSignal },
  ): Promise<void> {
    const byLookback = new Map<number, CycleTarget[]>();
    for (const t of withRegion) byLookback.set(t.lookbackMs, [...(byLookback.get(t.lookbackMs) ?? []), t]);
    await Promise.all(
      [...byLookback].map(async ([lookback, group]) => {
        const byResource = new Map<string, CycleTarget[]>();
        for (const t of group) {
          const k = resourceKey(t.resourceId);
          byResource.set(k, [...(byResource.get(k) ?? []), t]);
        }
        const { start, end } = metricsSpan(fetchedAt, lookback);
        const inGroup = (t: CycleTarget) => cycle.out.get(t.key)?.replicaGroup !== undefined;
        const result = await this.#azure.metrics.read(
          [
            ...group.map((t) => ({
              resourceId: t.resourceId,
              region: cycle.out.get(t.key)?.instance?.location ?? "",
            })),
            ...groupMembers(group.map((t) => cycle.out.get(t.key) as CycleReading)),
          ],
          {
            start,
            end,
            ...opts,
            // A policy in a replica group waits for every member's batch (they span regions).
            onBatch: (batch, samples, failures) =>
              this.#applyMetrics(
                cycle,
                batch.resourceIds
                  .flatMap((id) => byResource.get(resourceKey(id)) ?? [])
                  .filter((t) => !inGroup(t)),
                { samples: new Map(samples), failures: [...failures] },
              ),
          },
        );
        withMemberSamples(
          group.map((t) => cycle.out.get(t.key) as CycleReading),
          result.samples,
        );
        this.#applyMetrics(cycle, group, result);
      }),
    );
  }

  /** One metrics answer into the readings of the targets in `ready` not applied yet, then handed on. */
  #applyMetrics(
    cycle: CycleHandout,
    ready: readonly CycleTarget[],
    result: Omit<MetricsReadResult, "calls">,
  ): void {
    const fresh = ready.filter((t) => !cycle.applied.has(t.key));
    for (const t of fresh) cycle.applied.add(t.key);
    applyMetrics(fresh, cycle.out, result.samples, result.failures);
    this.#withSettings(cycle, fresh);
  }

  /** Hands each of `ready` on once the native settings are read, with them. */
  #withSettings(cycle: CycleHandout, ready: readonly CycleTarget[]): void {
    const p = cycle.settings.then(() => {
      for (const t of ready) {
        const cached = this.#settings.get(resourceKey(t.resourceId));
        if (cached) (cycle.out.get(t.key) as CycleReading).nativeSettings = cached.settings;
        this.#hand(cycle, t);
      }
    });
    p.catch(() => {});
    cycle.pending.push(p);
  }

  /** Hands `t`'s reading (with its last unit ladders) to `onReady`, once per cycle. */
  #hand(cycle: CycleHandout, t: CycleTarget): void {
    if (cycle.handed.has(t.key)) return;
    cycle.handed.add(t.key);
    const ladder = this.#ladders.get(resourceKey(t.resourceId))?.read;
    if (ladder) (cycle.out.get(t.key) as CycleReading).ladder = ladder;
    try {
      cycle.onReady?.(t.key, cycle.out.get(t.key) as CycleReading);
    } catch {
      // A listener's failure does not stop the cycle.
    }
  }

  /**
   * Re-reads the native autoscale settings of the targets whose cached answer is older than
   * `conflictCheckMs`. A failure leaves the cached answer (if any) standing; retried next cycle.
   */
  async #readNativeSettings(
    targets: readonly CycleTarget[],
    claims: ReadonlyMap<string, object>,
    fetchedAt: number,
    opts: { signal?: AbortSignal },
  ): Promise<void> {
    const stale = targets.filter((t) => {
      const c = this.#settings.get(resourceKey(t.resourceId));
      return !c || fetchedAt - c.at >= this.#conflictCheckMs;
    });
    if (stale.length === 0) return;
    try {
      const found = await this.#azure.autoscaleSettings.findFor(
        stale.map((t) => t.resourceId),
        opts,
      );
      for (const [id, settings] of found) {
        if (!this.#stands(claims, id)) continue;
        this.#settings.set(resourceKey(id), { at: fetchedAt, settings: settings.filter((s) => s.enabled) });
      }
    } catch (err) {
      if (!isAzureApiError(err)) throw err;
    }
  }

  /** Takes (or keeps) the claim of each of `targets`' resources; returns them by resource key. */
  #claim(targets: readonly CycleTarget[]): ReadonlyMap<string, object> {
    const out = new Map<string, object>();
    for (const t of targets) {
      const key = resourceKey(t.resourceId);
      let claim = this.#claims.get(key);
      if (!claim) {
        claim = {};
        this.#claims.set(key, claim);
      }
      out.set(key, claim);
    }
    return out;
  }

  /** True while the claim a cycle took on `resourceId` stands (it was not forgotten since). */
  #stands(claims: ReadonlyMap<string, object>, resourceId: string): boolean {
    const key = resourceKey(resourceId);
    const claim = claims.get(key);
    return claim !== undefined && this.#claims.get(key) === claim;
  }

  /**
   * Tells the history reader which histories the seasonal policies of this cycle want, hands each
   * the one last read, and starts a refresh in the background when one is due and none runs.
   */
  #history(
    targets: readonly CycleTarget[],
    out: Map<string, CycleReading>,
    nowMs: number,
    signal: AbortSignal | undefined,
  ): void {
    const seasonal = targets.flatMap((t) => (t.seasonal ? [{ t, wanted: t.seasonal }] : []));
    if (seasonal.length === 0) return;
    const history = this.#azure.history;
    history.want(
      seasonal.map(({ t, wanted }) => ({
        resourceId: t.resourceId,
        region: out.get(t.key)?.instance?.location ?? "",
        ...wanted,
      })),
      nowMs,
    );
    for (const { t, wanted } of seasonal) {
      const h = history.get(t.resourceId, wanted.grain);
      if (h) (out.get(t.key) as CycleReading).demandHistory = h;
    }
    if (this.#historyRefresh || !history.due(nowMs)) return;
    const report = (outcome: { report: HistoryRefreshReport } | { error: unknown }) => {
      try {
        this.#onHistoryRefresh?.(outcome);
      } catch {
        // A listener's failure does not stop the cycle.
      }
    };
    this.#historyRefresh = history
      .refresh(nowMs, signal ? { signal } : {})
      .then(
        (r) => report({ report: r }),
        (error: unknown) => report({ error }),
      )
      .finally(() => {
        this.#historyRefresh = undefined;
      });
  }

  /** True while a history refresh runs. */
  get historyRefreshing(): boolean {
    return this.#historyRefresh !== undefined;
  }

  /** Resolves when no history refresh runs (tests, and a clean stop). */
  async historySettled(): Promise<void> {
    while (this.#historyRefresh) await this.#historyRefresh;
  }

  /** True when the unit ladders of `t` are due a `listSkus` (see the module comment). */
  #ladderDue(t: CycleTarget, nowMs: number): boolean {
    const key = resourceKey(t.resourceId);
    if (this.#ladderReads.has(key) || this.#ladderQueue.has(key)) return false;
    const cached = this.#ladders.get(key);
    if (cached?.failedAt !== undefined && nowMs - cached.failedAt < LADDER_RETRY_MS) return false;
    const answered = cached?.read ? Date.parse(cached.read.readAt) : Number.NEGATIVE_INFINITY;
    const lastGood = Math.max(answered, t.ladder?.readAtMs ?? Number.NEGATIVE_INFINITY);
    const wanted = t.ladder?.wantedAfterMs ?? Number.NEGATIVE_INFINITY;
    return nowMs - lastGood >= LADDER_REFRESH_MS || wanted > lastGood;
  }

  /** Queues the `listSkus` of every target whose ladders are due, and starts what the slots allow. */
  #readLadders(
    targets: readonly CycleTarget[],
    claims: ReadonlyMap<string, object>,
    nowMs: number,
    signal: AbortSignal | undefined,
  ): void {
    for (const t of targets) {
      if (this.#stands(claims, t.resourceId) && this.#ladderDue(t, nowMs))
        this.#ladderQueue.set(resourceKey(t.resourceId), { resourceId: t.resourceId, claims });
    }
    this.#pumpLadders(signal);
  }

  #pumpLadders(signal: AbortSignal | undefined): void {
    while (this.#ladderReads.size < LADDER_READS_AT_ONCE && this.#ladderQueue.size > 0) {
      const [key, { resourceId, claims }] = this.#ladderQueue.entries().next().value as [
        string,
        { resourceId: string; claims: ReadonlyMap<string, object> },
      ];
      this.#ladderQueue.delete(key);
      const read = this.#azure.instances
        .listSkus(resourceId, signal ? { signal } : {})
        .then(
          (allowed) => {
            if (this.#stands(claims, resourceId))
              this.#ladders.set(key, { read: ladderRead(allowed, this.#now()) });
          },
          () => {
            if (!this.#stands(claims, resourceId)) return;
            // The last answer (or the stored or documented ladders) stays; tried again later.
            const cached = this.#ladders.get(key);
            this.#ladders.set(key, { ...(cached?.read ? { read: cached.read } : {}), failedAt: this.#now() });
          },
        )
        .finally(() => {
          this.#ladderReads.delete(key);
          if (!signal?.aborted) this.#pumpLadders(signal);
        });
      this.#ladderReads.set(key, read);
    }
    if (signal?.aborted) this.#ladderQueue.clear();
  }

  /** Resolves when no `listSkus` runs or waits (tests, the bench). */
  async laddersSettled(): Promise<void> {
    while (this.#ladderReads.size > 0) await Promise.all([...this.#ladderReads.values()]);
  }

  /** Forgets what is cached for a resource (its policy was deleted or retargeted). */
  forget(resourceId: string): void {
    this.#claims.delete(resourceKey(resourceId));
    this.#settings.delete(resourceKey(resourceId));
    this.#ladders.delete(resourceKey(resourceId));
    this.#ladderQueue.delete(resourceKey(resourceId));
    this.#azure.history.forget(resourceId);
    // Its group is listed again by the next cycle that has a target in it.
    this.#groups.forget(resourceId);
  }

  /** How many resources have their native autoscale settings cached. */
  get cachedResources(): number {
    return this.#settings.size;
  }
}
