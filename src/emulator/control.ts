/**
 * The emulator's control API, in process ({@link EmulatorControl}) and over HTTPS under
 * `/_emulator` (no token needed; loopback only):
 *
 * | method | path                              | body / query                                             | does |
 * |--------|-----------------------------------|----------------------------------------------------------|------|
 * | GET    | `/_emulator/state`                |                                                          | clock, timing, instances with their current traffic, faults, autoscale settings, call counters |
 * | POST   | `/_emulator/instances`            | instance (below)                                         | adds or replaces an instance |
 * | PATCH  | `/_emulator/instances`            | `{ resourceId, sku?, units?, provisioningState?, ladders?, ladderEnforcement?, <demand> }` | changes it at once (no operation; ladders merged per SKU) |
 * | DELETE | `/_emulator/instances?resourceId=`|                                                          | removes it |
 * | POST   | `/_emulator/faults`               | fault rule (`faults.ts`)                                 | adds a rule → `{ id, … }` |
 * | GET    | `/_emulator/faults`               |                                                          | rules with their counters |
 * | DELETE | `/_emulator/faults[/{id}]`        |                                                          | removes one rule or all |
 * | POST   | `/_emulator/clock`                | `{ time?, speed?, advanceSeconds? }`                     | sets the virtual clock |
 * | POST   | `/_emulator/timing`               | `{ scaleDurationSeconds?, ingestionDelaySeconds?, readAfterWriteLagSeconds? }` | changes operation, ingestion and read-after-write times |
 * | GET    | `/_emulator/ratelimit`            |                                                          | the metrics plane's rate limit (`metrics`, `null` when off) |
 * | POST   | `/_emulator/ratelimit`            | `{ metrics: { capacity, refillPerSecond, status? } \| null }` | switches getBatch throttling on (buckets full) or off |
 * | POST   | `/_emulator/quotas`               | `{ subscriptionId?, region?, service?, units }`           | sets a unit quota (absent fields: any) |
 * | GET    | `/_emulator/quotas`               |                                                          | the unit quotas |
 * | DELETE | `/_emulator/quotas[?subscriptionId=&region=&service=]` |                                     | removes the quota of exactly that key (none given: all) |
 * | POST   | `/_emulator/locks`                | `{ scope, level: "ReadOnly" \| "CanNotDelete", name? }`   | adds a resource lock |
 * | GET    | `/_emulator/locks`                |                                                          | the locks |
 * | DELETE | `/_emulator/locks?scope=[&name=]` |                                                          | removes the locks at that scope |
 * | POST   | `/_emulator/policies`             | `{ name, scope?, deny: { skus?, maxUnits? } }`            | sets an Azure Policy deny assignment |
 * | GET    | `/_emulator/policies`             |                                                          | the policy assignments |
 * | DELETE | `/_emulator/policies[?name=]`     |                                                          | removes one (no name: all) |
 * | POST   | `/_emulator/autoscalesettings`    | `{ targetResourceId, enabled?, minimum?, maximum?, default? }` | adds a native autoscale setting |
 * | DELETE | `/_emulator/autoscalesettings`    |                                                          | removes them all |
 * | GET    | `/_emulator/requests`             |                                                          | the last requests served (method, path, status, fault) |
 * | DELETE | `/_emulator/requests`             |                                                          | clears that log and the counters |
 * | GET    | `/_emulator/appservers/{name}`    |                                                          | the app servers of the SignalR instance `name`: negotiations since their start, connections |
 * | POST   | `/_emulator/appservers/{name}/restart` |                                                     | restarts them: their `/metrics` counters start again from 0 now (a counter reset) |
 * | GET    | `/_emulator/replicas?resourceId=` |                                                          | the replicas of an instance (instance views) |
 * | POST   | `/_emulator/failover`             | `{ resourceId, cause?: "stopped" \| "outage" \| "endpointDisabled" }` | the member stops serving now (or, disabled, drains); its clients go to the others → the failover record |
 * | POST   | `/_emulator/restore`              | `{ resourceId }`                                         | it serves again; its clients drift back → the failover record |
 * | GET    | `/_emulator/failovers?resourceId=`|                                                          | the failovers of a member (of the whole group for an instance) |
 *
 * Instance body: `{ resourceId, location?, sku?, units?, provisioningState?, tags?, mix?
 * ("broadcast=0.2,echo=0.8"), messageSizeBytes?, ladders? ({ "<sku>": [units, …] }),
 * ladderEnforcement? ("refuse" | "ignore"), <demand> }`, where `<demand>` is
 * `connections` (fixed), or `pattern` (`constant` | `daily` | `ramp`) with `peakConnections` (and,
 * for `daily`, optionally `peakHourUtc` and `troughFraction`), or `traceCsv` (the text of a
 * `timestamp,value` trace) with `peakConnections`. A replica is added the same way, with its
 * resource ID (`…/<name>/replicas/<replica>`) and its own `location`.
 *
 * A failover record (JSON): `{ resourceId, cause, at, restoredAt?, connections, reconnects: [{
 * resourceId, share, connections, reconnected, refused, negotiations }] }` — times ISO 8601, see
 * {@link FailoverRecord}.
 */
import { isSkuName, type ServiceKind, WorkloadError } from "../capacity/index.js";
import {
  type DemandSpec,
  dailyPattern,
  parseMix,
  parsePattern,
  parseTrace,
  TraceFormatError,
  type TrafficMinute,
} from "../traffic/index.js";
import { ArmIdError, parseArmId } from "./arm-id.js";
import { type FaultRule, type FaultSpec, FaultSpecError } from "./faults.js";
import {
  armError,
  type EmulatorRequest,
  type EmulatorResponse,
  INVALID_JSON,
  isObject,
  json,
  queryParam,
} from "./http.js";
import { type MetricsRateLimit, validMetricsRateLimit } from "./ratelimit.js";
import { type PolicyAssignment, type ResourceLock, RuleSpecError, type UnitQuota } from "./refusals.js";
import {
  type AppServersView,
  type AutoscaleSettingRecord,
  type AutoscaleSettingSpec,
  type DisconnectionRecord,
  type FailoverRecord,
  type InstanceLadders,
  type InstanceSpec,
  type InstanceView,
  type LadderEnforcement,
  OUTAGE_CAUSES,
  type OutageCause,
  parseLadders,
  StateError,
} from "./state.js";

/** One request the emulator served (control requests are not logged). */
export interface RequestRecord {
  /** Virtual time. */
  at: string;
  method: string;
  path: string;
  kind: "armRead" | "armWrite" | "getBatch" | "other";
  status: number;
  /** Subscription of the request path. */
  subscriptionId?: string;
  /** The request's `api-version` query parameter. */
  apiVersion?: string;
  /** The JSON body of an ARM write (PATCH, PUT, POST). */
  body?: unknown;
  /** Region of a getBatch endpoint. */
  region?: string;
  /** Resource IDs of a getBatch body. */
  resourceIds?: string[];
  /** The time span a getBatch asked for (its `starttime` and `endtime`). */
  span?: { start: string; end: string };
  /** The metrics a getBatch asked for (its `metricnames`). */
  metricNames?: string[];
  /** The aggregations a getBatch asked for (its `aggregation`, e.g. `Maximum`). */
  aggregation?: string;
  /** ID of the fault rule that fired. */
  fault?: string;
}

/** Counts of requests served. */
export interface CallCounters {
  total: number;
  armReads: number;
  armWrites: number;
  getBatch: number;
  /** Requests a fault rule answered. */
  faulted: number;
  /** Requests refused by the ARM rate limit. */
  rateLimited: number;
}

/** A snapshot for `GET /_emulator/state`. */
export interface EmulatorSnapshot {
  now: string;
  speed: number;
  scaleDurationSeconds: number;
  ingestionDelaySeconds: number;
  readAfterWriteLagSeconds: number;
  quotas: UnitQuota[];
  locks: ResourceLock[];
  policies: PolicyAssignment[];
  instances: (Omit<InstanceView, "ref" | "createdAt" | "mix"> & {
    service: ServiceKind;
    createdAt: string;
    mix: string;
    traffic?: TrafficMinute;
  })[];
  faults: FaultRule[];
  autoscaleSettings: AutoscaleSettingRecord[];
  calls: CallCounters;
  /** The metrics plane's rate limit; `null` when off. */
  metricsRateLimit: MetricsRateLimit | null;
}

/** The control operations, in process. */
export interface EmulatorControl {
  addInstance(spec: InstanceSpec): InstanceView;
  updateInstance(
    resourceId: string,
    patch: {
      sku?: string;
      units?: number;
      provisioningState?: string;
      ladders?: InstanceLadders;
      ladderEnforcement?: LadderEnforcement;
    },
  ): InstanceView;
  setDemand(resourceId: string, demand: { demand?: DemandSpec; connections?: number }): InstanceView;
  removeInstance(resourceId: string): boolean;
  instance(resourceId: string): InstanceView | undefined;
  instances(): InstanceView[];
  /** The traffic of the minute containing `at` (default: the last complete minute). */
  traffic(resourceId: string, at?: Date): TrafficMinute | undefined;
  /** Clients the instance's completed updates disconnected, in time order. @throws StateError 404 */
  disconnections(resourceId: string): DisconnectionRecord[];
  /** The replicas of an instance, in the order added (`[]` for an unknown one or a replica). */
  replicas(resourceId: string): InstanceView[];
  /**
   * A member of a replica group — a replica, or an instance (the primary) — stops serving at the
   * current virtual time. ARM shows it as `cause` says: `stopped` (default) — `resourceStopped:
   * "true"`, what a stopped replica shows; `outage` — nothing (a regional outage changes no ARM
   * property; only the metrics show it); `endpointDisabled` — `regionEndpointEnabled: "Disabled"`.
   * Stopped or out: from the current minute its metrics have no data; its client connections of
   * the minute before reconnect to the members still serving, split by their own demand, at the
   * SignalR client's reconnect delays (0, 2, 10, 30 s), so their offered demand rises by that much
   * — refused where their capacity has no room — until {@link restore}. Disabled: a drain — its
   * connections stay and its metrics go on, and its clients move to the others by the same split
   * as their connections end (mean connection lifetime). Returns the record: per sibling its share
   * and the clients it received at once, reconnected and refused (none for a drain).
   * @throws StateError 404 (unknown), 409 (not serving already), 400 (an unknown cause)
   */
  failover(resourceId: string, options?: { cause?: OutageCause }): FailoverRecord;
  /**
   * The member serves again at the current virtual time: from the current minute it has metrics and
   * its new clients; the clients that moved drift back by the same split as their connections end
   * (mean connection lifetime). Returns its last failover record, with `restoredMs`.
   * @throws StateError 404 (unknown), 409 (it is serving)
   */
  restore(resourceId: string): FailoverRecord;
  /** Failovers of a member, or of every member of the group for an instance, in time order. @throws StateError 404 */
  failovers(resourceId: string): FailoverRecord[];
  addFault(spec: FaultSpec): FaultRule;
  removeFault(id: string): boolean;
  clearFaults(): void;
  faults(): FaultRule[];
  now(): Date;
  setClock(change: { time?: Date; speed?: number }): void;
  advance(ms: number): void;
  setTiming(timing: {
    scaleDurationMs?: number;
    ingestionDelayMs?: number;
    readAfterWriteLagMs?: number;
  }): void;
  /** The metrics plane's rate limit; `undefined` when off. */
  metricsRateLimit(): MetricsRateLimit | undefined;
  /** Switches getBatch throttling on (its buckets full) or, with `undefined`, off. @throws RangeError */
  setMetricsRateLimit(limit: MetricsRateLimit | undefined): void;
  /** Sets a unit quota (absent fields match any subscription, region, service). @throws RuleSpecError */
  setQuota(spec: UnitQuota): UnitQuota;
  /** Removes the quota of exactly that key; false when none. */
  removeQuota(key: Omit<UnitQuota, "units">): boolean;
  clearQuotas(): void;
  quotas(): UnitQuota[];
  /** Adds a resource lock on a subscription, resource group or resource. @throws RuleSpecError */
  addLock(spec: { scope: string; level: ResourceLock["level"]; name?: string }): ResourceLock;
  /** Removes the locks at exactly `scope` (or the one named `name`); how many went. */
  removeLocks(scope: string, name?: string): number;
  locks(): ResourceLock[];
  /** Sets an Azure Policy deny assignment. @throws RuleSpecError */
  setPolicy(spec: PolicyAssignment): PolicyAssignment;
  /** Removes a policy assignment; false when none had that name. */
  removePolicy(name: string): boolean;
  policies(): PolicyAssignment[];
  addAutoscaleSetting(spec: Omit<AutoscaleSettingSpec, "resourceGroup">): AutoscaleSettingRecord;
  clearAutoscaleSettings(): void;
  requests(): RequestRecord[];
  calls(): CallCounters;
  resetRequests(): void;
  /** The app servers of the SignalR instance named `instanceName`. @throws StateError 404, 409 */
  appServers(instanceName: string): AppServersView;
  /** Restarts them: their counters start again from 0 now. @throws StateError 404, 409 */
  restartAppServers(instanceName: string): AppServersView;
  snapshot(): EmulatorSnapshot;
}

function num(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v))
    throw new StateError(400, "InvalidRequest", `${key} must be a number`);
  return v;
}

function str(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string") throw new StateError(400, "InvalidRequest", `${key} must be a string`);
  return v;
}

/** Reads the demand fields of a control body. */
function demandFromJson(body: Record<string, unknown>): { demand?: DemandSpec; connections?: number } {
  const connections = num(body, "connections");
  if (connections !== undefined) return { connections };
  const peak = num(body, "peakConnections");
  const pattern = str(body, "pattern");
  const traceCsv = str(body, "traceCsv");
  if (pattern === undefined && traceCsv === undefined) {
    if (peak !== undefined)
      throw new StateError(400, "InvalidRequest", "peakConnections needs pattern or traceCsv");
    return {};
  }
  if (peak === undefined)
    throw new StateError(400, "InvalidRequest", "pattern and traceCsv need peakConnections");
  if (traceCsv !== undefined) {
    return { demand: { kind: "trace", trace: parseTrace(traceCsv, "traceCsv"), peakConnections: peak } };
  }
  let parsed = parsePattern(pattern as string);
  const peakHourUtc = num(body, "peakHourUtc");
  const troughFraction = num(body, "troughFraction");
  if (peakHourUtc !== undefined || troughFraction !== undefined) {
    if (parsed.kind !== "daily")
      throw new StateError(400, "InvalidRequest", "peakHourUtc and troughFraction are for pattern daily");
    parsed = dailyPattern(peakHourUtc, troughFraction);
  }
  return { demand: { kind: "pattern", pattern: parsed, peakConnections: peak } };
}

/** Reads an instance body. */
function instanceFromJson(body: Record<string, unknown>): InstanceSpec {
  const resourceId = str(body, "resourceId");
  if (!resourceId) throw new StateError(400, "InvalidRequest", "resourceId is required");
  const ref = parseArmId(resourceId);
  const sku = str(body, "sku");
  const mixText = str(body, "mix");
  const size = num(body, "messageSizeBytes");
  const spec: InstanceSpec = { resourceId: ref.id, ...demandFromJson(body) };
  const location = str(body, "location");
  if (location !== undefined) spec.location = location;
  if (sku !== undefined) {
    if (!isSkuName(sku)) throw new StateError(400, "InvalidSku", `unknown SKU "${sku}"`);
    spec.sku = sku;
  }
  const units = num(body, "units");
  if (units !== undefined) spec.units = units;
  const state = str(body, "provisioningState");
  if (state !== undefined) spec.provisioningState = state;
  if (body["ladders"] !== undefined) spec.ladders = parseLadders(body["ladders"]);
  const enforcement = str(body, "ladderEnforcement");
  if (enforcement !== undefined) spec.ladderEnforcement = enforcement as LadderEnforcement;
  if (isObject(body["tags"])) {
    spec.tags = Object.fromEntries(Object.entries(body["tags"]).map(([k, v]) => [k, String(v)]));
  }
  if (mixText !== undefined || size !== undefined) {
    spec.mix = parseMix(
      ref.service,
      mixText ?? (ref.service === "SignalR" ? "echo" : "cloudEventsEcho"),
      size,
    );
  }
  return spec;
}

function toResponse(err: unknown): EmulatorResponse {
  if (err instanceof StateError) return armError(err.status, err.code, err.message);
  if (
    err instanceof ArmIdError ||
    err instanceof FaultSpecError ||
    err instanceof RuleSpecError ||
    err instanceof TraceFormatError ||
    err instanceof WorkloadError ||
    err instanceof RangeError
  ) {
    return armError(400, "InvalidRequest", err.message);
  }
  throw err;
}

/** `{ [name]: value }` for a query parameter that is present, else `{}`. */
function optionalQuery(req: EmulatorRequest, name: string): Record<string, string> {
  const v = queryParam(req.query, name);
  return v === undefined ? {} : { [name]: v };
}

/** A control request as a route handler sees it: `body` is `{}` unless the request sent an object. */
interface ControlCall {
  req: EmulatorRequest;
  control: EmulatorControl;
  body: Record<string, unknown>;
  /** The path's segments, `["_emulator", "<collection>", …]`. */
  seg: string[];
}

/** Answers one control route. @throws the control's and parsers' errors (`toResponse` maps them) */
type ControlRoute = (call: ControlCall) => EmulatorResponse;

/** `PATCH /_emulator/instances`: changes an instance's SKU, units, state, ladders and demand. */
function patchInstance({ control, body }: ControlCall): EmulatorResponse {
  const resourceId = str(body, "resourceId");
  if (!resourceId) return armError(400, "InvalidRequest", "resourceId is required");
  const sku = str(body, "sku");
  const units = num(body, "units");
  const provisioningState = str(body, "provisioningState");
  const ladderEnforcement = str(body, "ladderEnforcement");
  let view = control.updateInstance(resourceId, {
    ...(sku !== undefined ? { sku } : {}),
    ...(units !== undefined ? { units } : {}),
    ...(provisioningState !== undefined ? { provisioningState } : {}),
    ...(body["ladders"] !== undefined ? { ladders: parseLadders(body["ladders"]) } : {}),
    ...(ladderEnforcement !== undefined ? { ladderEnforcement: ladderEnforcement as LadderEnforcement } : {}),
  });
  const demand = demandFromJson(body);
  if (demand.demand || demand.connections !== undefined) view = control.setDemand(resourceId, demand);
  return json(200, viewJson(view));
}

/** `DELETE /_emulator/instances?resourceId=`. */
function deleteInstance({ req, control }: ControlCall): EmulatorResponse {
  const id = queryParam(req.query, "resourceId");
  if (!id) return armError(400, "InvalidRequest", "resourceId query parameter is required");
  return control.removeInstance(id) ? { status: 204 } : armError(404, "NotFound", `no instance ${id}`);
}

/** `DELETE /_emulator/faults[/{id}]`: one fault rule, or all of them. */
function deleteFaults({ control, seg }: ControlCall): EmulatorResponse {
  const id = seg[2];
  if (id === undefined) {
    control.clearFaults();
    return { status: 204 };
  }
  return control.removeFault(id) ? { status: 204 } : armError(404, "NotFound", `no fault ${id}`);
}

/** `POST /_emulator/clock`: sets the time (ISO 8601), the speed, and/or advances it (seconds). */
function postClock({ control, body }: ControlCall): EmulatorResponse {
  const time = str(body, "time");
  const speed = num(body, "speed");
  const advance = num(body, "advanceSeconds");
  if (time !== undefined) {
    const t = new Date(time);
    if (!Number.isFinite(t.getTime())) return armError(400, "InvalidRequest", `"${time}" is not a time`);
    control.setClock({ time: t });
  }
  if (speed !== undefined) control.setClock({ speed });
  if (advance !== undefined) control.advance(advance * 1000);
  return json(200, { now: control.now().toISOString(), speed: control.snapshot().speed });
}

/** `POST /_emulator/timing`: scale duration, ingestion delay, read-after-write lag (seconds). */
function postTiming({ control, body }: ControlCall): EmulatorResponse {
  const scale = num(body, "scaleDurationSeconds");
  const ingestion = num(body, "ingestionDelaySeconds");
  const lag = num(body, "readAfterWriteLagSeconds");
  control.setTiming({
    ...(scale !== undefined ? { scaleDurationMs: scale * 1000 } : {}),
    ...(ingestion !== undefined ? { ingestionDelayMs: ingestion * 1000 } : {}),
    ...(lag !== undefined ? { readAfterWriteLagMs: lag * 1000 } : {}),
  });
  const s = control.snapshot();
  return json(200, {
    scaleDurationSeconds: s.scaleDurationSeconds,
    ingestionDelaySeconds: s.ingestionDelaySeconds,
    readAfterWriteLagSeconds: s.readAfterWriteLagSeconds,
  });
}

/** `POST /_emulator/ratelimit`: the metrics plane's bucket `{ capacity, refillPerSecond }`, or null (off). */
function postRateLimit({ control, body }: ControlCall): EmulatorResponse {
  if (!("metrics" in body)) {
    return armError(400, "InvalidRequest", "metrics is required: { capacity, refillPerSecond } or null");
  }
  control.setMetricsRateLimit(body["metrics"] === null ? undefined : validMetricsRateLimit(body["metrics"]));
  return json(200, { metrics: control.metricsRateLimit() ?? null });
}

/** `DELETE /_emulator/quotas[?subscriptionId&region&service]`: the quota with that key, or all. */
function deleteQuotas({ req, control }: ControlCall): EmulatorResponse {
  const key = {
    ...optionalQuery(req, "subscriptionId"),
    ...optionalQuery(req, "region"),
    ...optionalQuery(req, "service"),
  } as Omit<UnitQuota, "units">;
  if (Object.keys(key).length === 0) {
    control.clearQuotas();
    return { status: 204 };
  }
  return control.removeQuota(key) ? { status: 204 } : armError(404, "NotFound", "no quota with that key");
}

/** `DELETE /_emulator/locks?scope=[&name=]`. */
function deleteLocks({ req, control }: ControlCall): EmulatorResponse {
  const scope = queryParam(req.query, "scope");
  if (!scope) return armError(400, "InvalidRequest", "scope query parameter is required");
  const name = queryParam(req.query, "name");
  return control.removeLocks(scope, name) > 0
    ? { status: 204 }
    : armError(404, "NotFound", `no lock at ${scope}`);
}

/** `DELETE /_emulator/policies[?name=]`: one policy assignment, or all. */
function deletePolicies({ req, control }: ControlCall): EmulatorResponse {
  const name = queryParam(req.query, "name");
  if (name === undefined) {
    for (const p of control.policies()) control.removePolicy(p.name);
    return { status: 204 };
  }
  return control.removePolicy(name) ? { status: 204 } : armError(404, "NotFound", `no policy ${name}`);
}

/** `POST /_emulator/autoscalesettings`: an Azure autoscale setting on `targetResourceId`. */
function postAutoscaleSetting({ control, body }: ControlCall): EmulatorResponse {
  const targetResourceId = str(body, "targetResourceId");
  if (!targetResourceId) return armError(400, "InvalidRequest", "targetResourceId is required");
  const enabled = body["enabled"];
  const name = str(body, "name");
  const minimum = num(body, "minimum");
  const maximum = num(body, "maximum");
  const dflt = num(body, "default");
  return json(
    201,
    control.addAutoscaleSetting({
      targetResourceId,
      ...(name !== undefined ? { name } : {}),
      ...(typeof enabled === "boolean" ? { enabled } : {}),
      ...(minimum !== undefined ? { minimum } : {}),
      ...(maximum !== undefined ? { maximum } : {}),
      ...(dflt !== undefined ? { default: dflt } : {}),
    }),
  );
}

/** `GET /_emulator/appservers/{name}` and `POST /_emulator/appservers/{name}/restart`. */
function appServersRoute({ req, control, seg }: ControlCall): EmulatorResponse {
  const name = seg[2];
  const action = seg.slice(3).join("/");
  if (name !== undefined && req.method === "GET" && action === "")
    return json(200, appServersJson(control.appServers(name)));
  if (name !== undefined && req.method === "POST" && action === "restart")
    return json(200, appServersJson(control.restartAppServers(name)));
  return armError(404, "NotFound", `no control route ${req.method} ${req.path}`);
}

/** A failover record as JSON: times as ISO 8601. */
function failoverJson(record: FailoverRecord): Record<string, unknown> {
  const { atMs, restoredMs, ...rest } = record;
  return {
    ...rest,
    at: new Date(atMs).toISOString(),
    ...(restoredMs !== undefined ? { restoredAt: new Date(restoredMs).toISOString() } : {}),
  };
}

/** The `resourceId` of a control body, or the 400 without it. */
function bodyResourceId(body: Record<string, unknown>): string {
  const id = str(body, "resourceId");
  if (!id) throw new StateError(400, "InvalidRequest", "resourceId is required");
  return id;
}

/** The `resourceId` query parameter, or the 400 without it. */
function queryResourceId(req: EmulatorRequest): string {
  const id = queryParam(req.query, "resourceId");
  if (!id) throw new StateError(400, "InvalidRequest", "resourceId query parameter is required");
  return id;
}

/** `POST /_emulator/failover`: `{ resourceId, cause? }`. */
function postFailover({ control, body }: ControlCall): EmulatorResponse {
  const resourceId = bodyResourceId(body);
  const cause = str(body, "cause");
  if (cause !== undefined && !OUTAGE_CAUSES.includes(cause as OutageCause)) {
    return armError(
      400,
      "InvalidRequest",
      `cause must be one of ${OUTAGE_CAUSES.join(", ")}, got "${cause}"`,
    );
  }
  return json(200, failoverJson(control.failover(resourceId, cause ? { cause: cause as OutageCause } : {})));
}

/** The control API: `"<METHOD> /_emulator/<collection>"` → its handler. */
const CONTROL_ROUTES = new Map<string, ControlRoute>([
  ["GET /_emulator/state", ({ control }) => json(200, control.snapshot())],
  [
    "POST /_emulator/instances",
    ({ control, body }) => json(201, viewJson(control.addInstance(instanceFromJson(body)))),
  ],
  ["PATCH /_emulator/instances", patchInstance],
  ["DELETE /_emulator/instances", deleteInstance],
  [
    "POST /_emulator/faults",
    ({ control, body }) => json(201, control.addFault(body as unknown as FaultSpec)),
  ],
  ["GET /_emulator/faults", ({ control }) => json(200, control.faults())],
  ["DELETE /_emulator/faults", deleteFaults],
  ["POST /_emulator/clock", postClock],
  ["POST /_emulator/timing", postTiming],
  ["GET /_emulator/ratelimit", ({ control }) => json(200, { metrics: control.metricsRateLimit() ?? null })],
  ["POST /_emulator/ratelimit", postRateLimit],
  [
    "POST /_emulator/quotas",
    ({ control, body }) => json(201, control.setQuota(body as unknown as UnitQuota)),
  ],
  ["GET /_emulator/quotas", ({ control }) => json(200, control.quotas())],
  ["DELETE /_emulator/quotas", deleteQuotas],
  [
    "POST /_emulator/locks",
    ({ control, body }) =>
      json(201, control.addLock(body as unknown as Parameters<EmulatorControl["addLock"]>[0])),
  ],
  ["GET /_emulator/locks", ({ control }) => json(200, control.locks())],
  ["DELETE /_emulator/locks", deleteLocks],
  [
    "POST /_emulator/policies",
    ({ control, body }) => json(201, control.setPolicy(body as unknown as PolicyAssignment)),
  ],
  ["GET /_emulator/policies", ({ control }) => json(200, control.policies())],
  ["DELETE /_emulator/policies", deletePolicies],
  ["POST /_emulator/autoscalesettings", postAutoscaleSetting],
  [
    "DELETE /_emulator/autoscalesettings",
    ({ control }) => {
      control.clearAutoscaleSettings();
      return { status: 204 };
    },
  ],
  [
    "GET /_emulator/requests",
    ({ control }) => json(200, { calls: control.calls(), requests: control.requests() }),
  ],
  [
    "DELETE /_emulator/requests",
    ({ control }) => {
      control.resetRequests();
      return { status: 204 };
    },
  ],
  ["GET /_emulator/appservers", appServersRoute],
  [
    "GET /_emulator/replicas",
    ({ req, control }) => json(200, control.replicas(queryResourceId(req)).map(viewJson)),
  ],
  ["POST /_emulator/failover", postFailover],
  [
    "POST /_emulator/restore",
    ({ control, body }) => json(200, failoverJson(control.restore(bodyResourceId(body)))),
  ],
  [
    "GET /_emulator/failovers",
    ({ req, control }) => json(200, control.failovers(queryResourceId(req)).map(failoverJson)),
  ],
  ["POST /_emulator/appservers", appServersRoute],
]);

/** Handles `/_emulator/…`; `undefined` for other paths. */
export function handleControl(req: EmulatorRequest, control: EmulatorControl): EmulatorResponse | undefined {
  if (!req.path.startsWith("/_emulator")) return undefined;
  const seg = req.path.split("/").filter((s) => s !== "");
  const route = `${req.method} /${seg.slice(0, 2).join("/")}`;
  if (req.body === INVALID_JSON) return armError(400, "InvalidRequest", "the body is not valid JSON");
  const body = isObject(req.body) ? req.body : {};
  const handler = CONTROL_ROUTES.get(route);
  if (!handler) return armError(404, "NotFound", `no control route ${route}`);
  try {
    return handler({ req, control, body, seg });
  } catch (err) {
    return toResponse(err);
  }
}

/** An app servers' view as JSON: times as ISO 8601. */
function appServersJson(view: AppServersView): Record<string, unknown> {
  const { atMs, startedMs, ...rest } = view;
  return { ...rest, at: new Date(atMs).toISOString(), startedAt: new Date(startedMs).toISOString() };
}

/** An instance view as JSON. */
export function viewJson(view: InstanceView): Record<string, unknown> {
  const { ref, createdAt, mix, ...rest } = view;
  return {
    ...rest,
    service: ref.service,
    createdAt: createdAt.toISOString(),
    mix: mix.entries.map((e) => `${e.scenario}=${e.share}`).join(","),
  };
}
