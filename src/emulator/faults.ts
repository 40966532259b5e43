/**
 * Fault injection: rules matched by HTTP method and path pattern (and, for metrics, resource IDs;
 * and by query parameters, e.g. `{ aggregation: "Total" }` for getBatch's counter query), each
 * with a count of how often it fired. The table decides; the server carries out the action.
 *
 * Path patterns are globs on the URL path (no query), case-insensitive: `*` matches within one
 * segment, `**` across segments. Examples: `/subscriptions/sub-a/**`, `**\/SignalR/hub-1`,
 * `**\/metrics:getBatch`.
 *
 * Actions:
 * - `status`: answer with an HTTP status and an ARM error body (`code`, `message`); with
 *   `retryAfterSeconds`, a `Retry-After` header, as seconds or (`retryAfterFormat: "date"`) as an
 *   HTTP date on the emulator's clock. Use it for 429, 409, 500, 503, 401, 403, 404, 400;
 * - `delay`: wait `ms` real milliseconds, then answer normally (slow answers);
 * - `hang`: never answer (the client times out); the connection closes when the emulator stops;
 * - `reset`: destroy the connection without an answer;
 * - `nullSeries`: getBatch data points keep their timestamps but have no values;
 * - `emptyTimeseries`: getBatch metrics come with `timeseries: []`;
 * - `metricError`: getBatch answers 200, but the named metrics (all when `metrics` is absent) come
 *   with `errorCode` (default `InternalError`), `errorMessage` and `timeseries: []`, as Azure
 *   Monitor reports a failure of one metric of a query;
 * - `notApplied`: an update (PATCH/PUT) runs and reports Succeeded but does not change the SKU or units;
 * - `failUpdate`: an update (PATCH/PUT) is accepted, runs its usual time, then ends `Failed`
 *   (provisioning state `Failed`, SKU and units unchanged);
 * - `cancelUpdate`: an update is accepted, runs its usual time, then ends `Canceled` (operation
 *   status and provisioning state `Canceled`, SKU and units unchanged);
 * - `longUpdate`: an update is accepted and stays `Updating` for `seconds` virtual seconds (instead
 *   of the scale duration), then succeeds;
 * - `respond`: answer with `status` (default 200) and this JSON `body` — an answer of Azure's
 *   published examples, replayed as is.
 */

export type FaultAction =
  | {
      kind: "status";
      status: number;
      code?: string;
      message?: string;
      retryAfterSeconds?: number;
      retryAfterFormat?: "seconds" | "date";
    }
  | { kind: "delay"; ms: number }
  | { kind: "hang" }
  | { kind: "reset" }
  | { kind: "nullSeries" }
  | { kind: "emptyTimeseries" }
  | { kind: "metricError"; metrics?: string[]; code?: string; message?: string }
  | { kind: "notApplied" }
  | { kind: "failUpdate" }
  | { kind: "cancelUpdate" }
  | { kind: "longUpdate"; seconds: number }
  | { kind: "respond"; status?: number; body: unknown };

/** A rule as given to {@link FaultTable.add}. */
export interface FaultSpec {
  /** HTTP method to match (any when absent). */
  method?: string;
  /** Glob on the URL path. */
  path: string;
  /** For getBatch: fire only when one of these resource IDs is in the request (any when absent). */
  resourceIds?: string[];
  /**
   * Fire only when every one of these query parameters has this value (names and values
   * case-insensitive), e.g. `{ aggregation: "Total" }`; any query when absent.
   */
  query?: Record<string, string>;
  /** Let this many matching requests through first (default 0). */
  after?: number;
  /** Fire this many times, then stop matching (default: always). */
  times?: number;
  action: FaultAction;
}

/** A rule in the table, with its counters. */
export interface FaultRule extends FaultSpec {
  id: string;
  /** Matching requests seen (including those let through by `after`). */
  seen: number;
  /** Times the action was carried out. */
  fired: number;
}

/** A malformed fault rule; the message says which field. */
export class FaultSpecError extends Error {
  override readonly name = "FaultSpecError";
}

/** Turns a path glob into a case-insensitive regular expression. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        out += ".*";
        i++;
      } else {
        out += "[^/]*";
      }
    } else {
      out += c.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
    }
  }
  return new RegExp(`^${out}$`, "i");
}

const KINDS = new Set([
  "status",
  "delay",
  "hang",
  "reset",
  "nullSeries",
  "emptyTimeseries",
  "metricError",
  "notApplied",
  "failUpdate",
  "cancelUpdate",
  "longUpdate",
  "respond",
]);

/** True for a whole number in 100–599. */
function isHttpStatus(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= 100 && v <= 599;
}

/** True for an array of strings. */
function isStringList(v: unknown): boolean {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/** Checks what a rule matches on: path, method, `after`/`times`, resource IDs, query. @throws FaultSpecError */
function validateMatch(s: Record<string, unknown>): void {
  if (typeof s["path"] !== "string" || s["path"] === "")
    throw new FaultSpecError("fault rule needs a path pattern");
  if (s["method"] !== undefined && typeof s["method"] !== "string")
    throw new FaultSpecError("method must be a string");
  for (const k of ["after", "times"] as const) {
    const v = s[k];
    if (v !== undefined && (typeof v !== "number" || !Number.isInteger(v) || v < 0)) {
      throw new FaultSpecError(`${k} must be a whole number ≥ 0`);
    }
  }
  if (s["resourceIds"] !== undefined && !isStringList(s["resourceIds"])) {
    throw new FaultSpecError("resourceIds must be a list of strings");
  }
  const q = s["query"];
  if (
    q !== undefined &&
    (typeof q !== "object" || q === null || !Object.values(q).every((v) => typeof v === "string"))
  ) {
    throw new FaultSpecError("query must map query parameter names to string values");
  }
}

/** The checks of the actions that take fields, by kind. @throws FaultSpecError */
const ACTION_CHECKS: Readonly<Partial<Record<FaultAction["kind"], (a: Record<string, unknown>) => void>>> = {
  status(a) {
    if (!isHttpStatus(a["status"]))
      throw new FaultSpecError("action.status must be an HTTP status (100–599)");
    const ra = a["retryAfterSeconds"];
    if (ra !== undefined && (typeof ra !== "number" || !(ra >= 0))) {
      throw new FaultSpecError("action.retryAfterSeconds must be ≥ 0");
    }
    const fmt = a["retryAfterFormat"];
    if (fmt !== undefined && fmt !== "seconds" && fmt !== "date") {
      throw new FaultSpecError('action.retryAfterFormat must be "seconds" or "date"');
    }
  },
  metricError(a) {
    if (a["metrics"] !== undefined && !isStringList(a["metrics"])) {
      throw new FaultSpecError("action.metrics must be a list of metric names");
    }
    for (const k of ["code", "message"] as const) {
      if (a[k] !== undefined && typeof a[k] !== "string")
        throw new FaultSpecError(`action.${k} must be a string`);
    }
  },
  delay(a) {
    if (typeof a["ms"] !== "number" || !(a["ms"] >= 0)) throw new FaultSpecError("action.ms must be ≥ 0");
  },
  longUpdate(a) {
    const seconds = a["seconds"];
    if (typeof seconds !== "number" || !Number.isFinite(seconds) || !(seconds >= 0)) {
      throw new FaultSpecError("action.seconds must be a number of virtual seconds ≥ 0");
    }
  },
  respond(a) {
    if (a["status"] !== undefined && !isHttpStatus(a["status"])) {
      throw new FaultSpecError("action.status must be an HTTP status (100–599)");
    }
    if (!("body" in a)) throw new FaultSpecError("action.body is required (the JSON to answer with)");
  },
};

/** Checks a spec from the control API. @throws FaultSpecError */
function validateFaultSpec(spec: unknown): FaultSpec {
  if (typeof spec !== "object" || spec === null) throw new FaultSpecError("a fault rule must be an object");
  const s = spec as Record<string, unknown>;
  validateMatch(s);
  const a = s["action"] as Record<string, unknown> | undefined;
  if (typeof a !== "object" || a === null || typeof a["kind"] !== "string" || !KINDS.has(a["kind"])) {
    throw new FaultSpecError(`action.kind must be one of ${[...KINDS].join(", ")}`);
  }
  ACTION_CHECKS[a["kind"] as FaultAction["kind"]]?.(a);
  return s as unknown as FaultSpec;
}

/** What a request looks like to the fault table. */
export interface FaultProbe {
  method: string;
  path: string;
  /** Resource IDs in a getBatch body. */
  resourceIds?: readonly string[];
  /** The request's query parameters. */
  query?: URLSearchParams;
}

/** True when `query` has every parameter of `wanted` with its value (case-insensitive). */
function queryMatches(wanted: Record<string, string>, query: URLSearchParams | undefined): boolean {
  const given = new Map([...(query ?? [])].map(([k, v]) => [k.toLowerCase(), v.toLowerCase()]));
  return Object.entries(wanted).every(([k, v]) => given.get(k.toLowerCase()) === v.toLowerCase());
}

export class FaultTable {
  readonly #rules: { rule: FaultRule; pattern: RegExp }[] = [];
  #next = 1;

  /** Adds a rule; earlier rules are tried first. @throws FaultSpecError */
  add(spec: FaultSpec): FaultRule {
    const valid = validateFaultSpec(spec);
    const rule: FaultRule = { ...valid, id: `fault-${this.#next++}`, seen: 0, fired: 0 };
    this.#rules.push({ rule, pattern: globToRegExp(valid.path) });
    return rule;
  }

  /** Removes a rule; false when there was none with that ID. */
  remove(id: string): boolean {
    const i = this.#rules.findIndex((r) => r.rule.id === id);
    if (i < 0) return false;
    this.#rules.splice(i, 1);
    return true;
  }

  clear(): void {
    this.#rules.length = 0;
  }

  /** Copies of the rules with their counters. */
  list(): FaultRule[] {
    return this.#rules.map((r) => structuredClone(r.rule));
  }

  /**
   * The first rule that matches and still fires, with its counters updated; `undefined` when none.
   * A matching rule within its `after` allowance counts the request and lets it through.
   */
  match(probe: FaultProbe): FaultRule | undefined {
    for (const { rule, pattern } of this.#rules) {
      if (rule.method && rule.method.toUpperCase() !== probe.method.toUpperCase()) continue;
      if (!pattern.test(probe.path)) continue;
      if (rule.resourceIds) {
        const wanted = new Set(rule.resourceIds.map((id) => id.toLowerCase()));
        if (!(probe.resourceIds ?? []).some((id) => wanted.has(id.toLowerCase()))) continue;
      }
      if (rule.query && !queryMatches(rule.query, probe.query)) continue;
      if (rule.times !== undefined && rule.fired >= rule.times) continue;
      rule.seen++;
      if (rule.seen <= (rule.after ?? 0)) continue;
      rule.fired++;
      return structuredClone(rule);
    }
    return undefined;
  }
}
