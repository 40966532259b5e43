/**
 * Whether a pass writes the policy's status, pure: at once when a field someone relies on changed,
 * else at most once per refresh interval — so a steady policy costs the API server (and etcd) one
 * status write per `statusRefreshInterval` (default 5 minutes) instead of one per poll, as the HPA
 * and KEDA write status only when something in it changed.
 *
 * Written at once when it changes (relied-upon):
 * | field | compared |
 * |---|---|
 * | `observedGeneration`, `current`, `desired`, `operation`, `unappliedUpdates`, `unitLadders` | whole |
 * | `lastScaleTime`, `scaleEvents`, `consecutiveFailures`, `lastReasons` | whole |
 * | `conditions` | type, status, reason, observedGeneration, and the message's words (its figures not) |
 * | `recommendations` | the sizes a stabilization window can still pick (each size's newest entry) |
 * | `ingestion` | `observedDelaySeconds` in whole minutes (the delay decisions use: `effectiveIngestionDelay`) |
 * | `geoReplicas` | whole but `readAt` |
 * | `notServing` | whole |
 * | `anticipation` | mode, lead time, scale duration and its source, units, drivenBy, applied, each rule's units, the forecast's state and cycle, the leading signal's state, reason and lifetime source, the lost members of a failover and what this instance expects of them, and the messages' words |
 *
 * Refreshed (written with the next write, and once per refresh interval while they differ):
 * `geoReplicas.readAt`, `lastSample` (the Load and Connections columns of `kubectl get capol`), the figures of messages,
 * the time of the newest recommendation of each size, `ingestion` (its bucket totals, `seenAt`,
 * `observedAt`, the seconds of `observedDelaySeconds` within its minute) and `anticipation`'s bookkeeping (peaks, growth, forecast figures, the leading
 * signal's readings).
 *
 * The refresh runs on a grid of the refresh interval shifted by a phase of each policy's own: the
 * first pass in each period of that grid writes what differs. Policies written together (all of
 * them at start) so spread their refreshes over the interval instead of all coming due in one
 * poll cycle, and a steady policy is written once per interval, its stored sample never more than
 * an interval and a poll behind the newest one.
 *
 * The next pass reads its history from the status this replica carried in memory (every field as
 * the last pass computed it, `status-memory.ts`), not from the stored one, so skipping a write
 * changes no decision. After a restart or a leader failover the new leader reads the stored status:
 * every relied-upon field is as the last pass left it; the refreshed ones are at most one refresh
 * interval old — a stabilization window may then end up to that much earlier, a peak or a bucket
 * total seen in that time is not remembered, the observed ingestion delay may be forgotten that much
 * earlier.
 */
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { CapacityPolicyStatus, PolicyCondition, Recommendation } from "../api/index.js";

type Status = Partial<CapacityPolicyStatus>;

/** The default refresh interval, ms: 5 minutes. */
export const DEFAULT_STATUS_REFRESH_MS = 300_000;

/** A policy's phase of the refresh grid: a hash of its key (namespace/name), ms in [0, intervalMs). */
export function refreshPhase(key: string, intervalMs: number): number {
  return createHash("sha256").update(key).digest().readUInt32BE(0) % Math.max(1, Math.floor(intervalMs));
}

/** How the write is decided. */
export interface StatusWriteSettings {
  /** A status whose relied-upon fields did not change is written at most this often, ms. */
  refreshIntervalMs: number;
  /**
   * When this replica last wrote the policy's status, ms since the epoch; absent when it has not
   * written it since it started (or took the lead): then any difference is written.
   */
  lastWrittenMs?: number | undefined;
  /** This policy's offset of the refresh grid, ms in [0, refreshIntervalMs) (default 0). */
  phaseMs?: number | undefined;
}

/** The verdict, with the field that decided it (`refresh`, `unchanged` or `refresh not due` otherwise). */
export interface StatusWriteNeed {
  write: boolean;
  reason: string;
}

const FIGURES = /[-+]?\d[\d.,:]*(?:e[-+]?\d+)?/gi;

/** A message without its figures (numbers and the digits of times replaced by `#`). */
export function messageWords(message: string | undefined): string | undefined {
  return message?.replace(FIGURES, "#");
}

const conditionKey = (c: PolicyCondition) => ({
  type: c.type,
  status: c.status,
  reason: c.reason,
  observedGeneration: c.observedGeneration,
  message: messageWords(c.message),
});

/**
 * The sizes a stabilization window can pick from the recommendations, newest first: an entry with
 * a newer one of the same size is in every window that entry is in, so only the newest of each
 * size counts; which sizes are there, and in which order, is what is compared.
 */
export function recommendationSizes(recs: readonly Recommendation[] | undefined): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (let i = (recs?.length ?? 0) - 1; i >= 0; i--) {
    const r = recs?.[i] as Recommendation;
    const size = `${r.sku}/${r.units}`;
    if (seen.has(size)) continue;
    seen.add(size);
    out.push(size);
  }
  return out;
}

function anticipationKey(a: Status["anticipation"]): unknown {
  if (!a) return undefined;
  return {
    mode: a.mode,
    leadTimeSeconds: a.leadTimeSeconds,
    scaleDurationSeconds: a.scaleDurationSeconds,
    scaleDurationSource: a.scaleDurationSource,
    units: a.units,
    drivenBy: a.drivenBy,
    applied: a.applied,
    rules: a.rules?.map((r) => ({ rule: r.rule, units: r.units, message: messageWords(r.message) })),
    forecast: a.forecast && {
      state: a.forecast.state,
      cycle: a.forecast.cycle,
      message: messageWords(a.forecast.message),
    },
    leading: a.leading && {
      state: a.leading.state,
      reason: a.leading.reason,
      lifetimeSource: a.leading.lifetimeSource,
      message: messageWords(a.leading.message),
    },
    failover: a.failover,
    message: messageWords(a.message),
  };
}

const wholeMinutes = (seconds: number | undefined) =>
  seconds === undefined ? undefined : Math.floor(seconds / 60);

/** The relied-upon part of each field, in the order a reason names the first that changed. */
const RELIED_UPON: readonly [string, (s: Status) => unknown][] = [
  ["observedGeneration", (s) => s.observedGeneration],
  ["conditions", (s) => s.conditions?.map(conditionKey)],
  ["current", (s) => s.current],
  ["desired", (s) => s.desired],
  ["operation", (s) => s.operation],
  ["unappliedUpdates", (s) => s.unappliedUpdates],
  ["unitLadders", (s) => s.unitLadders],
  ["lastScaleTime", (s) => s.lastScaleTime],
  ["scaleEvents", (s) => s.scaleEvents],
  ["consecutiveFailures", (s) => s.consecutiveFailures],
  ["lastReasons", (s) => s.lastReasons],
  ["recommendations", (s) => recommendationSizes(s.recommendations)],
  ["ingestion", (s) => wholeMinutes(s.ingestion?.observedDelaySeconds)],
  ["anticipation", (s) => anticipationKey(s.anticipation)],
  ["geoReplicas", (s) => s.geoReplicas && { ...s.geoReplicas, readAt: undefined }],
  ["notServing", (s) => s.notServing],
];

/** The first relied-upon field that differs between two statuses, if any. */
export function changedReliedUpon(previous: Status | undefined, next: Status): string | undefined {
  const before = previous ?? {};
  return RELIED_UPON.find(([, key]) => !isDeepStrictEqual(key(before), key(next)))?.[0];
}

/**
 * Whether to write `next` over the stored `previous` (see the module comment). Pure.
 *
 * @param previous the status as stored (undefined for a new policy)
 * @param next the whole status the pass would store (conditions stamped)
 * @param nowMs the time of the pass, ms since the epoch
 */
export function needsStatusWrite(
  previous: Status | undefined,
  next: Status,
  nowMs: number,
  settings: StatusWriteSettings,
): StatusWriteNeed {
  const field = changedReliedUpon(previous, next);
  if (field !== undefined) return { write: true, reason: field };
  if (isDeepStrictEqual(previous ?? {}, next)) return { write: false, reason: "unchanged" };
  const last = settings.lastWrittenMs;
  // No interval: every pass writes (the behaviour before status writes were skipped).
  if (settings.refreshIntervalMs <= 0) return { write: true, reason: "refresh" };
  const period = (t: number) => Math.floor((t - (settings.phaseMs ?? 0)) / settings.refreshIntervalMs);
  if (last === undefined || period(nowMs) > period(last)) return { write: true, reason: "refresh" };
  return { write: false, reason: "refresh not due" };
}
