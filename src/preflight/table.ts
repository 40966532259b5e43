/**
 * The preflight's table: one row per check, in the order the reads were made, each with a result
 * and what Azure returned (or why not). Pure: built from {@link PreflightObservations} alone.
 *
 * A geo-replica target gets the same checks on the replica's own calls (`replica (GET)`, its
 * instance's list of replicas as the list it is read from, its own ladders, the quota of its own
 * region, its metrics in its own namespace) and the `replicas` permissions; an instance target
 * also gets the list of its replicas, which the poll cycle reads for failover.
 *
 * Results:
 * - `OK`: Azure answered as the operator needs;
 * - `WARN`: the operator works, but not fully, or the check could not tell (a throttle, a timeout:
 *   run it again);
 * - `FAIL`: the operator cannot work on this instance as it is (no token, the instance missing, a
 *   permission refused, a query Azure refuses, a competing native autoscale setting);
 * - `SKIP`: not checked — it needs an earlier read that failed, or a write (the one permission a
 *   read-only check cannot test).
 *
 * The exit code ({@link preflightExitCode}): 1 when a row is FAIL (or, with `strict`, WARN), else 0.
 */
import { fmt } from "../autoscale/signals.js";
import {
  type AzureApiError,
  CREDENTIAL_UNAVAILABLE,
  findMetric,
  type InstanceState,
  isReplica,
  METRIC_DEFINITIONS,
  type MetricDefinition,
  type NativeAutoscaleSetting,
  parseResourceId,
  REFUSED_AS,
  type RefusedError,
  resultsByResource,
  type ThrottledError,
} from "../azure/index.js";
import { DEFAULT_LADDERS, SCALABLE_SKUS, type ScalableSku } from "../capacity/skus.js";
import type {
  MetricsQueryObservation,
  Outcome,
  PreflightObservations,
  PreflightTarget,
  TokenObservation,
} from "./observations.js";
import { type AzureCallKind, type Permission, permissionsFor } from "./permissions.js";
import { describePrincipal } from "./principal.js";
import { quotaVerdict } from "./quota.js";

/** The result of one check. */
export type CheckResult = "OK" | "WARN" | "FAIL" | "SKIP";

/** One row of the table. */
export interface PreflightRow {
  /** What was checked, e.g. `instance (GET)`. */
  check: string;
  result: CheckResult;
  /** What Azure returned, or why: one line each. */
  detail: string[];
  /** The RBAC action the row is about: permission rows, and reads refused with 401 or 403. */
  action?: string;
  /** The typed Azure error behind the row (kind, status, code, message, request IDs), for machines. */
  error?: Record<string, unknown>;
}

/** What the table needs to know beside the observations. */
export interface TableContext {
  /** Where the credential gets its tokens (`workload identity (client …)`), never a secret. */
  credential?: string;
}

const RANK: Readonly<Record<CheckResult, number>> = { SKIP: 0, OK: 1, WARN: 2, FAIL: 3 };

/** The worse of two results (SKIP < OK < WARN < FAIL). */
function worse(a: CheckResult, b: CheckResult): CheckResult {
  return RANK[a] >= RANK[b] ? a : b;
}

/** `11:57 UTC` */
const clock = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;
/** `11:57:20 UTC` */
const clockSeconds = (ms: number) => `${new Date(ms).toISOString().slice(11, 19)} UTC`;
/** `2025-06-02 11:57 UTC` */
const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

/**
 * A unit ladder in few words: arithmetic runs of three or more as `a–b` (step 1) or `a–b by s`,
 * the rest listed: `1–10, 20–100 by 10`; `1, 2, 5, 10, 20, 50, 100`.
 */
export function describeLadder(values: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < values.length) {
    const start = values[i] as number;
    const step = (values[i + 1] ?? Number.NaN) - start;
    let j = i + 1;
    while (j + 1 < values.length && (values[j + 1] as number) - (values[j] as number) === step) j++;
    if (j - i >= 2) {
      parts.push(`${fmt(start)}–${fmt(values[j] as number)}${step === 1 ? "" : ` by ${fmt(step)}`}`);
      i = j + 1;
    } else {
      parts.push(fmt(start));
      i++;
    }
  }
  return parts.join(", ");
}

/** Where a permission must be granted, in words. */
const onScope = (p: Permission) =>
  p.scope === "subscription"
    ? "the subscription"
    : p.scope === "parent"
      ? "the replica's instance"
      : "the instance";

/** The SKUs a geo-replica can have: Premium only ("Geo-replication in Azure SignalR Service", prerequisites). */
const REPLICA_SKUS: readonly ScalableSku[] = ["Premium_P1", "Premium_P2"];

/** True when the target is a geo-replica. */
const replicaTarget = (target: PreflightTarget) => isReplica(parseResourceId(target.resourceId));

/** One member of a replica list in a line: `chat-eastus in eastus, Premium_P1 × 5, serving`. */
function describeMember(m: InstanceState): string {
  const serving = m.serving ? "serving" : `not serving (${m.notServingReason ?? "ARM says so"})`;
  return `${m.replica ?? m.name} in ${m.location}, ${m.sku} × ${fmt(m.units)}, ${serving}`;
}

/**
 * The result and lines of a read that failed. A refused token or role is FAIL, and so is what
 * Azure refuses durably; a throttle or a timeout is WARN (nothing was learnt: run it again).
 * `severity` is the result a durable refusal gets (WARN for reads the operator can do without).
 */
function failedRead(
  err: AzureApiError,
  permission: Permission,
  severity: CheckResult,
  notFound: string,
): Pick<PreflightRow, "result" | "detail" | "action" | "error"> {
  const said = `${err.status ?? "no answer"}${err.code ? ` ${err.code}` : ""}`;
  const base = { error: err.toJSON(), detail: [] as string[] };
  switch (err.kind) {
    case "Unauthorized":
      if (err.code === CREDENTIAL_UNAVAILABLE) {
        return {
          ...base,
          result: "FAIL",
          detail: ["no token: the credential could not get one", err.message],
        };
      }
      if (err.status === 401) {
        return {
          ...base,
          result: "FAIL",
          action: permission.action,
          detail: [
            `${said}: the token was refused (issued for another tenant or audience, or expired)`,
            azureSaid(err),
          ],
        };
      }
      return {
        ...base,
        result: severity,
        action: permission.action,
        detail: [
          `${said}: the principal lacks ${permission.action} on ${onScope(permission)} — assign ${permission.role}`,
          azureSaid(err),
        ],
      };
    case "Refused":
      return {
        ...base,
        result: severity,
        detail: [`${said}: ${REFUSED_AS[(err as RefusedError).refusedBy]}`, azureSaid(err)],
      };
    case "NotFound":
      return { ...base, result: severity, detail: [`${said}: ${notFound}`, azureSaid(err)] };
    case "Throttled": {
      const t = err as ThrottledError;
      return {
        ...base,
        result: "WARN",
        detail: [
          t.fromGate
            ? `not sent: an earlier answer of this scope asked to wait until ${clockSeconds(t.notBefore.getTime())}`
            : `${said}: throttled, Azure asks to wait ${Math.ceil(t.retryAfterMs / 1000)} s (until ${clockSeconds(t.notBefore.getTime())}): not checked — run check again after it`,
          azureSaid(err),
        ],
      };
    }
    case "Invalid":
      return {
        ...base,
        result: "FAIL",
        detail: [`${said}: Azure refused the request as the operator sends it`, azureSaid(err)],
      };
    default:
      return {
        ...base,
        result: "WARN",
        detail: [`${said}: no usable answer (${err.kind}): not checked — run check again`, azureSaid(err)],
      };
  }
}

/**
 * What Azure said, from a typed error's message: its `(<status> <code>: <service message>)` part,
 * without the adapter operation and scope before it; the whole message when it has none.
 */
export function azureSaid(err: AzureApiError): string {
  const open = err.status !== undefined ? err.message.indexOf(`(${err.status}`) : -1;
  const close = err.message.lastIndexOf(")");
  return open >= 0 && close > open ? `Azure: ${err.message.slice(open + 1, close)}` : err.message;
}

/** A row for a read that was not made. */
const skippedRow = (check: string, why: string): PreflightRow => ({ check, result: "SKIP", detail: [why] });

function tokenRow(
  t: TokenObservation,
  atMs: number,
  context: TableContext,
  armScope: string | undefined,
): PreflightRow {
  const check = `credential: ${t.audience} token`;
  if ("skipped" in t.outcome) return skippedRow(check, t.outcome.skipped);
  if ("error" in t.outcome) {
    return {
      check,
      result: "FAIL",
      error: t.outcome.error.toJSON(),
      detail: [
        `no token for ${t.scope}: every call with it fails`,
        t.outcome.error.message,
        ...(context.credential ? [`credential: ${context.credential}`] : []),
      ],
    };
  }
  const { expiresOnMs, principal } = t.outcome.ok;
  const minutes = Math.floor((expiresOnMs - atMs) / 60_000);
  return {
    check,
    result: expiresOnMs > atMs ? "OK" : "WARN",
    detail: [
      `token for ${t.scope}${t.audience === "metrics" && t.scope === armScope ? " (the metrics data plane's default audience is ARM's)" : ""}, valid until ${clock(expiresOnMs)} (${minutes} min)`,
      principal
        ? `issued to ${describePrincipal(principal)}`
        : "not a Microsoft Entra token (an emulator's fixed token): no principal to name",
      ...(context.credential ? [`credential: ${context.credential}`] : []),
    ],
  };
}

function instanceRow(target: PreflightTarget, obs: PreflightObservations, p: Permission): PreflightRow {
  const replica = replicaTarget(target);
  const check = replica ? "replica (GET)" : "instance (GET)";
  const o = obs.instance;
  if ("skipped" in o) return skippedRow(check, o.skipped);
  if ("error" in o) {
    return {
      check,
      ...failedRead(
        o.error,
        p,
        "FAIL",
        replica
          ? `no replica ${target.resourceId}: check its instance and the replica's name (az signalr replica list)`
          : `no instance ${target.resourceId}: check its subscription, resource group, name and type (SignalR or WebPubSub)`,
      ),
    };
  }
  const i = o.ok;
  const detail = [
    `${i.sku} × ${fmt(i.units)} units, provisioning state ${i.provisioningState}, location ${i.location}`,
    ...(replica
      ? [`replica ${i.replica} of ${i.primaryId}: scaled on its own resource, from its own metrics`]
      : []),
  ];
  let result: CheckResult = "OK";
  if (!i.serving) {
    result = "WARN";
    detail.push(
      `ARM says it does not serve (${i.notServingReason ?? "no reason given"}): it has no clients to measure, and the operator does not scale it in while it does not serve`,
    );
  }
  if (i.sku === "Free_F1") {
    result = "FAIL";
    detail.push(
      "a Free_F1 instance is never scaled (changing it changes its IP): move it to Standard_S1 or Premium_P1 first",
    );
  } else if (!i.terminal) {
    result = "WARN";
    detail.push(
      `an operation is running (${i.provisioningState}): the operator sends no update until it ends`,
    );
  } else if (i.provisioningState.toLowerCase() !== "succeeded") {
    result = "WARN";
    detail.push(`the last operation on the instance ended ${i.provisioningState}: see its activity log`);
  }
  return { check, result, detail };
}

/** The list a replica is read from: its instance's replicas. */
function replicaListRow(target: PreflightTarget, obs: PreflightObservations, p: Permission): PreflightRow {
  const check = "replicas of the instance (list)";
  const primary = parseResourceId(target.resourceId).primaryId;
  const o = obs.replicas;
  if ("skipped" in o) return skippedRow(check, o.skipped);
  if ("error" in o) {
    return {
      check,
      ...failedRead(o.error, p, "FAIL", `no instance ${primary}: the replica's instance is missing`),
    };
  }
  const what = `${fmt(o.ok.length)} replica${o.ok.length === 1 ? "" : "s"} of ${primary}`;
  const found = o.ok.some((m) => m.resourceId.toLowerCase() === target.resourceId.toLowerCase());
  return {
    check,
    result: found ? "OK" : "WARN",
    detail: [
      found
        ? `${what}, the target among them (the poll cycle reads the replica group from this list)`
        : `${what}, not the target: the operator reads it with one more GET each poll cycle`,
      ...o.ok.map(describeMember),
    ],
  };
}

/** The replicas of an instance target, which the poll cycle reads for failover. */
function replicasRow(obs: PreflightObservations, p: Permission): PreflightRow {
  const check = "replicas (list)";
  const o = obs.replicas;
  if ("skipped" in o) return skippedRow(check, o.skipped);
  if ("error" in o) {
    const failed = failedRead(o.error, p, "WARN", "the instance has no list of replicas");
    return {
      check,
      ...failed,
      detail: [
        ...failed.detail,
        "the operator cannot see the instance's replicas: a replica's failover is not anticipated",
      ],
    };
  }
  if (o.ok.length === 0)
    return { check, result: "OK", detail: ["no geo-replicas (a Premium instance can have some)"] };
  return {
    check,
    result: "OK",
    detail: [
      `${fmt(o.ok.length)} geo-replica${o.ok.length === 1 ? "" : "s"}, each scaled only by a policy of its own:`,
      ...o.ok.map(describeMember),
    ],
  };
}

function listRow(target: PreflightTarget, obs: PreflightObservations, p: Permission): PreflightRow {
  if (replicaTarget(target)) return replicaListRow(target, obs, p);
  const check = "instances (list)";
  const o = obs.instanceList;
  const sub = parseResourceId(target.resourceId).subscriptionId;
  if ("skipped" in o) return skippedRow(check, o.skipped);
  if ("error" in o) {
    return {
      check,
      ...failedRead(
        o.error,
        p,
        "FAIL",
        `subscription ${sub} not found, or ${target.service} not registered in it`,
      ),
    };
  }
  const what = `${fmt(o.ok.count)} ${target.service} instance${o.ok.count === 1 ? "" : "s"} in subscription ${sub}`;
  if (o.ok.found) {
    return {
      check,
      result: "OK",
      detail: [`${what}, the target among them (the poll cycle reads it from this list)`],
    };
  }
  const missing = "error" in obs.instance && obs.instance.error.kind === "NotFound";
  return {
    check,
    result: "WARN",
    detail: [
      missing
        ? `${what}, not the target: it is not in the subscription either`
        : `${what}, not the target: the operator reads it with one more GET each poll cycle`,
    ],
  };
}

function skusRow(target: PreflightTarget, obs: PreflightObservations, p: Permission): PreflightRow {
  const check = "unit ladders (listSkus)";
  const o = obs.skus;
  if ("skipped" in o) return skippedRow(check, o.skipped);
  if ("error" in o) {
    const failed = failedRead(o.error, p, "WARN", "the instance has no SKU list");
    return { check, ...failed, detail: [...failed.detail, "without it the built-in ladders stand"] };
  }
  // A replica is Premium only (geo-replication is a Premium tier feature): without a policy, the
  // SKUs it can be scaled to are the Premium ones.
  const allowed: readonly string[] =
    target.policy?.spec.skus ?? (replicaTarget(target) ? REPLICA_SKUS : SCALABLE_SKUS);
  const listed = new Set(o.ok.skus.map((s) => s.sku));
  let result: CheckResult = "OK";
  const detail = SCALABLE_SKUS.map((sku: ScalableSku) => {
    const builtIn = describeLadder(DEFAULT_LADDERS[sku]);
    if (!o.ok.fromService.includes(sku)) {
      const policyUses = allowed.includes(sku) && !listed.has(sku);
      if (policyUses) result = worse(result, "WARN");
      return `${sku}: ${listed.has(sku) ? "listed without unit counts" : "not listed"}${policyUses ? ", and the policy allows it" : ""}: the built-in ladder ${builtIn} stands`;
    }
    const service = describeLadder(o.ok.ladders[sku]);
    if (service === builtIn) return `${sku}: ${service} (as the built-in ladder)`;
    result = worse(result, "WARN");
    return `${sku}: Azure allows ${service}; the built-in ladder is ${builtIn}`;
  });
  return { check, result, detail };
}

function quotaRow(target: PreflightTarget, obs: PreflightObservations, p: Permission): PreflightRow {
  const check = "unit quota (usages)";
  const o = obs.usages;
  if ("skipped" in o) return skippedRow(check, o.skipped);
  if ("error" in o) {
    const failed = failedRead(o.error, p, "WARN", "no usages in the instance's region");
    return { check, ...failed, detail: [...failed.detail, "the quota a scale-out may meet is not known"] };
  }
  const instance = "ok" in obs.instance ? obs.instance.ok : undefined;
  return {
    check,
    ...quotaVerdict({
      service: target.service,
      usages: o.ok,
      region: instance?.location,
      ...(instance ? { instanceUnits: instance.units } : {}),
      ...(target.policy ? { maxUnits: target.policy.spec.units.max } : {}),
    }),
  };
}

/** What one metrics query's answer is checked against, for {@link metricLine}. */
interface MetricRead {
  /** The metric definitions of the target's service. */
  defs: readonly MetricDefinition[];
  /** The answer's metrics for the instance. */
  metrics: Parameters<typeof findMetric>[0];
  /** The query's aggregations, lower case. */
  aggregations: readonly string[];
  /** The query reads the seasonal forecast's history (not one-minute buckets). */
  history: boolean;
  /** The window the decision reads, ms since the epoch. */
  windowStart: number;
  windowEnd: number;
  ingestionDelaySeconds: number;
}

/**
 * One metric's line of a metrics query row and its result: WARN when it is missing, has no
 * value or (one-minute metrics) is older than the decision's window; FAIL when Azure answered it
 * with an error code; OK otherwise (a counter with no value is read as 0, so OK).
 */
function metricLine(name: string, read: MetricRead): { line: string; result: CheckResult } {
  const { history, windowStart, windowEnd } = read;
  const def = read.defs.find((d) => d.name.toLowerCase() === name.toLowerCase());
  const m = def ? findMetric(read.metrics, def) : undefined;
  if (!m) return { result: "WARN", line: `${name}: not in the answer: read as unknown` };
  if (m.errorCode !== undefined && m.errorCode !== "Success") {
    const message = (m as { errorMessage?: string }).errorMessage;
    return {
      result: "FAIL",
      line: `${name}: errorCode ${m.errorCode}${message ? ` ("${message}")` : ""}: the operator never gets it`,
    };
  }
  const points = m.timeseries.flatMap((s) => s.data ?? []);
  const valued = points.filter((pt) =>
    read.aggregations.some((a) => {
      const v = (pt as unknown as Record<string, unknown>)[a];
      return typeof v === "number" && Number.isFinite(v);
    }),
  );
  const newest = Math.max(...valued.map((pt) => pt.timeStamp.getTime()));
  const seen = `${name}: ${fmt(valued.length)} of ${fmt(points.length)} point${points.length === 1 ? "" : "s"} with a value${valued.length > 0 ? `, newest ${history ? stamp(newest) : clock(newest)}` : ""}`;
  if (def?.kind === "counter") {
    return {
      result: "OK",
      line:
        valued.length === 0
          ? `${seen} (a counter that counted nothing: read as 0 next to a known gauge)`
          : seen,
    };
  }
  if (valued.length === 0) {
    return {
      result: "WARN",
      line: `${seen}: ${history ? "the seasonal forecast has no history of it" : "the decision sees it unknown and never scales in on it"}`,
    };
  }
  if (!history && newest < windowStart) {
    return {
      result: "WARN",
      line: `${seen}: older than the window the decision reads (${clock(windowStart)} – ${clock(windowEnd)}, ${read.ingestionDelaySeconds / 60} min ingestion delay): raise metrics.ingestionDelay`,
    };
  }
  return { result: "OK", line: seen };
}

/** One query's lines and result. */
function metricsQueryRow(
  q: MetricsQueryObservation,
  index: number,
  count: number,
  target: PreflightTarget,
  obs: PreflightObservations,
  p: Permission,
): PreflightRow {
  const check = `metrics query ${index + 1} of ${count}`;
  const history = q.query.interval !== "PT1M";
  const span = history
    ? `${stamp(q.query.start.getTime())} – ${stamp(q.query.end.getTime())}`
    : `${clock(q.query.start.getTime())} – ${clock(q.query.end.getTime())}`;
  const asked = `POST metrics:getBatch (${q.region}): ${q.query.metricNames.join(", ")}; aggregation ${q.query.aggregation}, interval ${q.query.interval}${q.query.filter ? `, filter ${q.query.filter}` : ""}, ${span}${history ? " (the seasonal forecast's history)" : ""}`;
  if ("error" in q.answer) {
    const failed = failedRead(
      q.answer.error,
      p,
      "FAIL",
      "the metrics endpoint does not know the subscription or resource",
    );
    return { check, ...failed, detail: [asked, ...failed.detail] };
  }
  const result = resultsByResource([target.resourceId], q.answer.results).get(target.resourceId);
  if (!result) {
    return { check, result: "WARN", detail: [asked, "the answer has no entry for the instance"] };
  }
  // The decision reads the window's buckets before the ingestion delay.
  const windowEnd = obs.atMs - obs.times.ingestionDelaySeconds * 1000;
  const read: MetricRead = {
    defs: METRIC_DEFINITIONS[target.service],
    metrics: result.metrics,
    aggregations: q.query.aggregation.split(",").map((a) => a.trim().toLowerCase()),
    history,
    windowStart: windowEnd - obs.times.windowSeconds * 1000,
    windowEnd,
    ingestionDelaySeconds: obs.times.ingestionDelaySeconds,
  };
  let verdict: CheckResult = "OK";
  const lines = q.query.metricNames.map((name) => {
    const checked = metricLine(name, read);
    verdict = worse(verdict, checked.result);
    return checked.line;
  });
  return { check, result: verdict, detail: [asked, ...lines] };
}

function metricsRows(target: PreflightTarget, obs: PreflightObservations, p: Permission): PreflightRow[] {
  const o = obs.metrics;
  if ("skipped" in o) return [skippedRow("metrics", o.skipped)];
  if ("error" in o) return [{ check: "metrics", ...failedRead(o.error, p, "FAIL", "not found") }];
  if (o.ok.length === 0)
    return [{ check: "metrics", result: "WARN", detail: ["the operator's read sent no query"] }];
  return o.ok.map((q, i) => metricsQueryRow(q, i, o.ok.length, target, obs, p));
}

function describeSetting(s: NativeAutoscaleSetting): string {
  const bounds =
    s.minimum !== undefined || s.maximum !== undefined
      ? `, ${s.minimum ?? "?"}–${s.maximum ?? "?"} units${s.default !== undefined ? `, default ${s.default}` : ""}`
      : "";
  return `${s.name} (${s.enabled ? "enabled" : "disabled"}${bounds})`;
}

function settingsRow(obs: PreflightObservations, p: Permission): PreflightRow {
  const check = "native autoscale settings";
  const o = obs.autoscaleSettings;
  if ("skipped" in o) return skippedRow(check, o.skipped);
  if ("error" in o) {
    const failed = failedRead(o.error, p, "WARN", "not found");
    return {
      check,
      ...failed,
      detail: [
        ...failed.detail,
        "the operator cannot tell a competing autoscaler: it would scale beside one",
      ],
    };
  }
  const enabled = o.ok.filter((s) => s.enabled);
  if (enabled.length > 0) {
    return {
      check,
      result: "FAIL",
      detail: [
        ...enabled.map((s) => `${describeSetting(s)} scales this instance`),
        "the operator reports Conflict=True and does not scale beside it: delete or disable it, or keep mode: Recommend",
      ],
    };
  }
  return {
    check,
    result: "OK",
    detail:
      o.ok.length === 0
        ? ["none of the subscription's autoscale settings targets the instance"]
        : o.ok.map((s) => `${describeSetting(s)} targets it: disabled, it does not act`),
  };
}

/** Reads fewer than this many left in the subscription's ARM read bucket (of 250) is a warning. */
const LOW_ARM_READS = 25;

function budgetRow(obs: PreflightObservations): PreflightRow {
  const check = "ARM request budget";
  const reads = obs.armQuota.flatMap((q) =>
    q.remaining["subscription-reads"] !== undefined ? [{ left: q.remaining["subscription-reads"], q }] : [],
  );
  if (reads.length === 0)
    return skippedRow(check, "no x-ms-ratelimit-remaining-subscription-reads header came back");
  const low = reads.reduce((a, b) => (b.left < a.left ? b : a));
  const line = `${fmt(low.left)} reads left in the subscription's bucket (x-ms-ratelimit-remaining-subscription-reads)${low.q.servedBy ? `, served by ARM in ${low.q.servedBy}` : ""}`;
  return low.left < LOW_ARM_READS
    ? {
        check,
        result: "WARN",
        detail: [line, "another client spends this subscription's ARM reads: the operator may be throttled"],
      }
    : { check, result: "OK", detail: [line] };
}

/** The permission a read needed, from how the reads that needed it went. */
function permissionRow(
  p: Permission,
  reads: readonly { name: string; outcome: Outcome<unknown>; severity: CheckResult }[],
): PreflightRow {
  let result: CheckResult = "SKIP";
  const granted: string[] = [];
  const refused = new Map<string, string[]>();
  const unknown: string[] = [];
  for (const r of reads) {
    const o = r.outcome;
    if ("ok" in o) {
      result = worse(result, "OK");
      granted.push(r.name);
    } else if ("error" in o && o.error.kind === "Unauthorized" && o.error.status === 403) {
      result = worse(result, r.severity);
      const code = `403${o.error.code ? ` ${o.error.code}` : ""}`;
      refused.set(code, [...(refused.get(code) ?? []), r.name]);
    } else {
      unknown.push(r.name);
    }
  }
  const detail = [
    ...(granted.length > 0 ? [`granted: ${list(granted)} answered`] : []),
    ...[...refused].map(([code, names]) => `refused: ${list(names)} answered ${code} — assign ${p.role}`),
    ...(unknown.length > 0 ? [`not known: ${list(unknown)} got no answer that tells`] : []),
    `used to ${p.usedFor}`,
  ];
  return { check: `permission ${p.action}`, result, detail, action: p.action };
}

/** `a`, `a and b`, `a, b and c`. */
function list(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

function writeRow(obs: PreflightObservations, target: PreflightTarget, p: Permission): PreflightRow {
  const token = obs.tokens.find((t) => t.audience === "ARM");
  const oid = token && "ok" in token.outcome ? token.outcome.ok.principal?.objectId : undefined;
  return {
    check: `permission ${p.action}`,
    result: "SKIP",
    action: p.action,
    detail: [
      "not checked: only a write shows it, and check writes nothing",
      "a write also meets resource locks and Azure Policy deny assignments, which check does not read:",
      `  az lock list --resource ${target.resourceId} --output table`,
      `  az policy assignment list --scope ${target.resourceId} --disable-scope-strict-match --output table`,
      `used to ${p.usedFor}; role: ${p.role}`,
      `see the role assignments: az role assignment list --assignee ${oid ?? "<principal object ID>"} --scope ${target.resourceId} --include-inherited --output table`,
    ],
  };
}

/**
 * The table of a preflight: credential, instance (or replica), list, the instance's replicas, ladders, each metrics query, native
 * autoscale settings, ARM's request budget, then the permissions each read needed (and the write,
 * which a read cannot show).
 */
export function preflightRows(
  target: PreflightTarget,
  obs: PreflightObservations,
  context: TableContext = {},
): PreflightRow[] {
  const replica = replicaTarget(target);
  const perms: Readonly<Record<AzureCallKind, Permission>> = permissionsFor(
    target.service,
    replica ? "Replica" : "Primary",
  );
  const armScope = obs.tokens.find((t) => t.audience === "ARM")?.scope;
  const reads = [
    { name: "the instance's GET", outcome: obs.instance, severity: "FAIL" as const },
    { name: "the subscription's list", outcome: obs.instanceList, severity: "FAIL" as const },
  ];
  const replicaReads = [
    { name: "the replica's GET", outcome: obs.instance, severity: "FAIL" as const },
    { name: "the instance's list of replicas", outcome: obs.replicas, severity: "FAIL" as const },
  ];
  return [
    ...obs.tokens.map((t) => tokenRow(t, obs.atMs, context, armScope)),
    instanceRow(target, obs, perms.instanceRead),
    listRow(target, obs, perms.instanceList),
    ...(replica ? [] : [replicasRow(obs, perms.replicaList)]),
    skusRow(target, obs, perms.skus),
    quotaRow(target, obs, perms.usages),
    ...metricsRows(target, obs, perms.metrics),
    settingsRow(obs, perms.autoscaleSettings),
    budgetRow(obs),
    ...(replica
      ? [permissionRow(perms.instanceRead, replicaReads)]
      : [
          permissionRow(perms.instanceRead, reads),
          permissionRow(perms.replicaList, [
            { name: "the list of replicas", outcome: obs.replicas, severity: "WARN" },
          ]),
        ]),
    permissionRow(perms.skus, [
      { name: replica ? "ListReplicaSkus" : "listSkus", outcome: obs.skus, severity: "WARN" },
    ]),
    permissionRow(perms.usages, [{ name: "the usages' list", outcome: obs.usages, severity: "WARN" }]),
    permissionRow(
      perms.metrics,
      "ok" in obs.metrics
        ? obs.metrics.ok.map((q, i) => ({
            name: `metrics query ${i + 1}`,
            outcome: "error" in q.answer ? { error: q.answer.error } : { ok: true },
            severity: "FAIL" as const,
          }))
        : [{ name: "the metrics read", outcome: obs.metrics, severity: "FAIL" }],
    ),
    permissionRow(perms.autoscaleSettings, [
      { name: "the autoscale settings' list", outcome: obs.autoscaleSettings, severity: "WARN" },
    ]),
    writeRow(obs, target, perms.write),
  ];
}

/** How many rows have each result. */
export function preflightSummary(rows: readonly PreflightRow[]): Record<CheckResult, number> {
  const out: Record<CheckResult, number> = { OK: 0, WARN: 0, FAIL: 0, SKIP: 0 };
  for (const r of rows) out[r.result]++;
  return out;
}

/** 1 when a row is FAIL, or WARN with `strict`; else 0. */
export function preflightExitCode(rows: readonly PreflightRow[], strict: boolean): 0 | 1 {
  return rows.some((r) => r.result === "FAIL" || (strict && r.result === "WARN")) ? 1 : 0;
}
