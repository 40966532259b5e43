/**
 * Runtime validation of CapacityPolicy objects: the JSON Schema (with defaults applied, as the API
 * server applies them) and every cross-field rule — the CRD's CEL rules again, plus what CEL
 * cannot check (cron expressions parse, time zones exist). The operator runs this on every policy
 * it reads and reports failures as `Ready=False, reason=InvalidSpec`.
 */
import { Ajv, type ErrorObject } from "ajv";
import addFormatsModule from "ajv-formats";
import { Cron } from "croner";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { isScalableSku } from "../capacity/skus.js";
import { SIGNALR_SCENARIOS, WEBPUBSUB_SCENARIOS } from "../capacity/tier-tables.js";
import { noUnitCountIn } from "../capacity/unit-bounds.js";
import {
  API_VERSION,
  KIND,
  MAX_INGESTION_DELAY_SECONDS,
  MAX_SAMPLE_AGE_SECONDS,
  MAX_SCALE_DURATION_SECONDS,
  P1_MAX_UNITS,
  P2_MIN_UNITS,
  SHARE_SUM_TOLERANCE,
  SIGNAL_LIST,
  SIGNAL_NAMES,
} from "./constants.js";
import { DURATION_PATTERN, parseDuration } from "./duration.js";
import { parseResourceId, ResourceIdError } from "./resource-id.js";
import {
  type CapacityPolicy,
  CapacityPolicySchema,
  CRON_PATTERN,
  DNS_LABEL_PATTERN,
  DNS_SUBDOMAIN_PATTERN,
  REASON_PATTERN,
  TIME_ZONE_PATTERN,
} from "./schema.js";

export type ValidationResult = { ok: true; policy: CapacityPolicy } | { ok: false; errors: string[] };

/** What {@link validateSpec} returns: the defaulted spec, or the errors. */
export type SpecValidationResult =
  | { ok: true; spec: CapacityPolicy["spec"] }
  | { ok: false; errors: string[] };

/** A document that is not a valid CapacityPolicy. `errors` holds one line per problem. */
export class PolicyError extends Error {
  override readonly name = "PolicyError";
  readonly errors: readonly string[];
  constructor(message: string, errors: readonly string[] = [message]) {
    super(message);
    this.errors = errors;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON Schema

const addFormats = addFormatsModule.default;

const ajv = new Ajv({
  allErrors: true,
  useDefaults: true,
  verbose: true,
  strict: true,
  strictRequired: false,
});
addFormats(ajv, ["date-time"]);
ajv.addVocabulary(["x-kubernetes-validations", "x-kubernetes-list-type", "x-kubernetes-list-map-keys"]);
const validateSchema = ajv.compile(CapacityPolicySchema);

const PATTERN_TEXT: Readonly<Record<string, string>> = {
  [DURATION_PATTERN]: 'a duration such as "30s", "5m" or "1h30m" (units ms, s, m, h)',
  [CRON_PATTERN]: 'a five-field cron expression such as "0 8 * * 1-5"',
  [DNS_SUBDOMAIN_PATTERN]: "a lowercase DNS-1123 subdomain name",
  [DNS_LABEL_PATTERN]: "a lowercase DNS-1123 label (letters, digits, '-')",
  [TIME_ZONE_PATTERN]: 'an IANA time zone name such as "Europe/Madrid"',
  [REASON_PATTERN]: "a CamelCase reason",
};

/** "/spec/units/min" → "spec.units.min", "/spec/schedules/0/cron" → "spec.schedules[0].cron". */
function jsonPath(pointer: string, child?: string): string {
  const parts = pointer === "" ? [] : pointer.slice(1).split("/");
  if (child !== undefined) parts.push(child);
  let out = "";
  for (const raw of parts) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^[0-9]+$/.test(part)) out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part)) out += out === "" ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === "" ? "(root)" : out;
}

const show = (value: unknown): string => {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

function schemaErrorText(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return `${jsonPath(e.instancePath, String(p["missingProperty"]))}: is required`;
    case "additionalProperties":
      return `${jsonPath(e.instancePath, String(p["additionalProperty"]))}: unknown field`;
    case "enum":
      return `${jsonPath(e.instancePath)}: ${show(e.data)} is not one of ${(p["allowedValues"] as unknown[]).map(show).join(", ")}`;
    case "type":
      return `${jsonPath(e.instancePath)}: must be ${p["type"] === "integer" ? "an integer" : `a ${String(p["type"])}`} (is ${show(e.data)})`;
    case "pattern": {
      const what = PATTERN_TEXT[String(p["pattern"])];
      return `${jsonPath(e.instancePath)}: ${show(e.data)} is not ${what ?? `matching ${String(p["pattern"])}`}`;
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `${jsonPath(e.instancePath)}: ${show(e.data)} ${e.message ?? "is out of range"}`;
    case "uniqueItems":
      return `${jsonPath(e.instancePath)}: items ${String(p["j"])} and ${String(p["i"])} are duplicates`;
    case "format":
      return `${jsonPath(e.instancePath)}: ${show(e.data)} is not a ${String(p["format"])} (RFC 3339)`;
    default:
      return `${jsonPath(e.instancePath)}: ${e.message ?? "is invalid"}`;
  }
}

function schemaErrors(errors: readonly ErrorObject[]): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const line = schemaErrorText(e);
    if (!out.includes(line)) out.push(line);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// cross-field rules

/** True when `timeZone` is an IANA zone this runtime knows. */
function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * A paused croner job for a five-field cron expression in `timeZone` — the one way schedules and
 * scale-in windows are read (classic cron: day-of-month OR day-of-week). Throws RangeError when the
 * expression or the zone is invalid.
 */
export function parseCron(expression: string, timeZone = "UTC"): Cron {
  if (!isValidTimeZone(timeZone)) throw new RangeError(`unknown time zone ${JSON.stringify(timeZone)}`);
  try {
    return new Cron(expression, { timezone: timeZone, paused: true, mode: "5-part" });
  } catch (err) {
    const detail = err instanceof Error ? err.message.replace(/^CronPattern: /, "") : String(err);
    throw new RangeError(`invalid cron expression ${JSON.stringify(expression)}: ${detail}`);
  }
}

const SCENARIOS = { SignalR: SIGNALR_SCENARIOS, WebPubSub: WEBPUBSUB_SCENARIOS } as const;

/** One cross-field rule: the errors it finds in a policy that passed the schema (defaults applied). */
type CrossFieldRule = (spec: CapacityPolicy["spec"]) => string[];

/** The CRD's CEL rules on bounds: `units`, `appServer.replicas` and the scale-down windows min <= max. */
const boundRules: CrossFieldRule = (spec) => {
  const errors: string[] = [];
  const { units } = spec;
  if (units.min > units.max) errors.push(`spec.units: min (${units.min}) must be <= max (${units.max})`);
  if (spec.appServer && spec.appServer.replicas.min > spec.appServer.replicas.max) {
    const r = spec.appServer.replicas;
    errors.push(`spec.appServer.replicas: min (${r.min}) must be <= max (${r.max})`);
  }
  const down = spec.behavior.scaleDown;
  if (
    down.minStabilizationWindowSeconds !== undefined &&
    down.minStabilizationWindowSeconds > down.stabilizationWindowSeconds
  ) {
    errors.push(
      `spec.behavior.scaleDown: minStabilizationWindowSeconds (${down.minStabilizationWindowSeconds}) must be <= stabilizationWindowSeconds (${down.stabilizationWindowSeconds})`,
    );
  }
  return errors;
};

/** The CRD's CEL rules on Premium_P2: listed only with units above P1's, and needed above them. */
const premiumP2Rules: CrossFieldRule = ({ units, skus }) => {
  const errors: string[] = [];
  const hasP2 = skus.includes("Premium_P2");
  if (hasP2 && units.max < P2_MIN_UNITS) {
    errors.push(
      `spec.skus: Premium_P2 serves ${P2_MIN_UNITS} units and more; list it only when units.max >= ${P2_MIN_UNITS} (is ${units.max})`,
    );
  }
  if (!hasP2 && units.max > P1_MAX_UNITS) {
    errors.push(
      `spec.units.max: ${units.max} units need Premium_P2 in skus (${skus.join(", ")} stop at ${P1_MAX_UNITS})`,
    );
  }
  if (skus.every((s) => s === "Premium_P2") && units.min < P2_MIN_UNITS) {
    errors.push(
      `spec.units.min: must be >= ${P2_MIN_UNITS} when Premium_P2 is the only SKU (is ${units.min})`,
    );
  }
  return errors;
};

/**
 * Every bound on the unit count (the range, each schedule's floor, the fixed fallback size) holds
 * a unit count an allowed SKU offers.
 */
const unitCountRules: CrossFieldRule = (spec) => {
  const { units } = spec;
  if (units.min > units.max) return [];
  const allowed = spec.skus.filter(isScalableSku);
  const range = noUnitCountIn("spec.units", units.min, units.max, allowed);
  if (range) return [range];
  const errors: string[] = [];
  spec.schedules?.forEach((s, i) => {
    if (s.minUnits > units.max) return;
    const floor = Math.max(s.minUnits, units.min);
    const none = noUnitCountIn(`spec.schedules[${i}].minUnits`, floor, units.max, allowed);
    if (none) errors.push(`${none} (minUnits ${s.minUnits} is rounded up; units.max is ${units.max})`);
  });
  const f = spec.fallback;
  if (f.action === "Fixed" && f.units !== undefined && f.units >= units.min && f.units <= units.max) {
    const none = noUnitCountIn("spec.fallback.units", f.units, units.max, allowed);
    if (none) errors.push(`${none} (the fixed size is rounded up; units.max is ${units.max})`);
  }
  return errors;
};

/** `target.resourceId` parses and names an instance of `target.service`. */
const targetRules: CrossFieldRule = ({ target: { service, resourceId } }) => {
  try {
    const ref = parseResourceId(resourceId);
    return ref.service !== service
      ? [`spec.target.resourceId: names a ${ref.service} instance, but target.service is ${service}`]
      : [];
  } catch (err) {
    if (!(err instanceof ResourceIdError)) throw err;
    return [`spec.target.resourceId: ${err.message}`];
  }
};

/** Each traffic workload names a scenario of the target's service. */
const scenarioRules: CrossFieldRule = (spec) => {
  const traffic = spec.metrics.traffic;
  if (!traffic) return [];
  const service = spec.target.service;
  const allowed: readonly string[] = SCENARIOS[service];
  return traffic.workload.flatMap((w, i) =>
    allowed.includes(w.scenario)
      ? []
      : [
          `spec.metrics.traffic.workload[${i}].scenario: "${w.scenario}" is not a ${service} scenario (one of ${allowed.join(", ")})`,
        ],
  );
};

/** A Fixed fallback has units within the unit range; schedule floors are at most units.max. */
const fallbackAndScheduleRules: CrossFieldRule = ({ units, fallback, schedules }) => {
  const errors: string[] = [];
  if (fallback.action === "Fixed") {
    if (fallback.units === undefined) errors.push("spec.fallback.units: is required when action is Fixed");
    else if (fallback.units < units.min || fallback.units > units.max) {
      errors.push(`spec.fallback.units: ${fallback.units} must be within units ${units.min}..${units.max}`);
    }
  }
  schedules?.forEach((s, i) => {
    if (s.minUnits > units.max) {
      errors.push(`spec.schedules[${i}].minUnits: ${s.minUnits} must be <= units.max (${units.max})`);
    }
  });
  return errors;
};

/** The metrics object's rules: at least one metric; sample age and ingestion delay in bounds. */
const metricsRules: CrossFieldRule = ({ metrics: m }) => {
  const errors: string[] = [];
  if (!SIGNAL_NAMES.some((name) => m[name])) {
    errors.push(`spec.metrics: set at least one of ${SIGNAL_LIST}`);
  }
  if (parseDuration(m.maxSampleAge) <= parseDuration(m.ingestionDelay)) {
    errors.push(
      `spec.metrics.maxSampleAge: ${m.maxSampleAge} must be longer than ingestionDelay (${m.ingestionDelay})`,
    );
  }
  if (parseDuration(m.ingestionDelay) > MAX_INGESTION_DELAY_SECONDS) {
    errors.push(`spec.metrics.ingestionDelay: ${m.ingestionDelay} must be at most 1h`);
  }
  if (parseDuration(m.maxSampleAge) > MAX_SAMPLE_AGE_SECONDS) {
    errors.push(`spec.metrics.maxSampleAge: ${m.maxSampleAge} must be at most 24h`);
  }
  return errors;
};

/** The anticipation object's rules: the headroom horizon (1m..24h) and scale duration (<= 2h). */
const anticipationRules: CrossFieldRule = ({ anticipation }) => {
  if (!anticipation) return [];
  const errors: string[] = [];
  const horizon = parseDuration(anticipation.headroom.horizon);
  if (horizon < 60 || horizon > 86_400) {
    errors.push(
      `spec.anticipation.headroom.horizon: ${anticipation.headroom.horizon} must be between 1m and 24h`,
    );
  }
  if (parseDuration(anticipation.scaleDuration) > MAX_SCALE_DURATION_SECONDS) {
    errors.push(`spec.anticipation.scaleDuration: ${anticipation.scaleDuration} must be at most 2h`);
  }
  return errors;
};

/**
 * The leading signal's rules: one Prometheus credential and one CA at most, a timeout of 1..30 s,
 * a way to measure connection lifetime for new-connection signals, a lifetime of 1m..24h.
 */
const leadingSignalRules: CrossFieldRule = ({ anticipation, metrics }) => {
  const leading = anticipation?.leadingSignal;
  if (!leading) return [];
  const errors: string[] = [];
  const at = "spec.anticipation.leadingSignal";
  const p = leading.prometheus;
  const auth = [
    p.bearerTokenFile !== undefined,
    p.bearerTokenSecretRef !== undefined,
    p.useAzureCredential === true,
  ];
  if (auth.filter(Boolean).length > 1) {
    errors.push(
      `${at}.prometheus: set at most one of bearerTokenFile, bearerTokenSecretRef and useAzureCredential`,
    );
  }
  if (p.caFile !== undefined && p.caSecretRef !== undefined) {
    errors.push(`${at}.prometheus: set at most one of caFile and caSecretRef`);
  }
  const timeout = parseDuration(p.timeout);
  if (timeout < 1 || timeout > 30)
    errors.push(`${at}.prometheus.timeout: ${p.timeout} must be between 1s and 30s`);
  if (
    leading.measures !== "Connections" &&
    leading.connectionLifetime === undefined &&
    !metrics.connections
  ) {
    errors.push(
      `${at}: measuring new connections needs connectionLifetime, or metrics.connections to measure it from`,
    );
  }
  if (leading.connectionLifetime !== undefined) {
    const lifetime = parseDuration(leading.connectionLifetime);
    if (lifetime < 60 || lifetime > 86_400) {
      errors.push(`${at}.connectionLifetime: ${leading.connectionLifetime} must be between 1m and 24h`);
    }
  }
  return errors;
};

/** The traffic object's rule: the workload shares sum to 1 (± SHARE_SUM_TOLERANCE). */
const shareSumRules: CrossFieldRule = (spec) => {
  const traffic = spec.metrics.traffic;
  if (!traffic) return [];
  const sum = traffic.workload.reduce((acc, w) => acc + w.share, 0);
  return Math.abs(sum - 1) > SHARE_SUM_TOLERANCE + 1e-9
    ? [
        `spec.metrics.traffic.workload: shares must sum to 1 (± ${SHARE_SUM_TOLERANCE}), they sum to ${Number(sum.toFixed(4))}`,
      ]
    : [];
};

/** `path[i]: duplicate "key"` for each key that comes again at index i. */
function duplicateKeys(path: string, keys: readonly string[]): string[] {
  return keys.flatMap((k, i) =>
    keys.indexOf(k) !== i ? [`${path}[${i}]: duplicate ${JSON.stringify(k)}`] : [],
  );
}

/** The list-map keys (the API server enforces these through x-kubernetes-list-map-keys). */
const listMapKeyRules: CrossFieldRule = (spec) => [
  ...duplicateKeys(
    "spec.metrics.traffic.workload",
    spec.metrics.traffic?.workload.map((w) => w.scenario) ?? [],
  ),
  ...duplicateKeys("spec.schedules", spec.schedules?.map((s) => s.name) ?? []),
  ...duplicateKeys("spec.scaleInWindows", spec.scaleInWindows?.map((s) => s.name) ?? []),
];

/** What CEL cannot check: each schedule's and scale-in window's time zone and cron expression. */
const cronRules: CrossFieldRule = (spec) => {
  const errors: string[] = [];
  const timed = [
    ...(spec.schedules ?? []).map((s, i) => ({ s, path: `spec.schedules[${i}]` })),
    ...(spec.scaleInWindows ?? []).map((s, i) => ({ s, path: `spec.scaleInWindows[${i}]` })),
  ];
  for (const { s, path } of timed) {
    if (!isValidTimeZone(s.timeZone)) {
      errors.push(`${path}.timeZone: unknown time zone ${JSON.stringify(s.timeZone)}`);
      continue;
    }
    try {
      parseCron(s.cron, s.timeZone);
    } catch (err) {
      errors.push(`${path}.cron: ${(err as Error).message}`);
    }
  }
  return errors;
};

/**
 * The cross-field rules, in the order their errors are reported: the CRD's CEL rules in the
 * CRD's order, then the list-map keys, then what CEL cannot check.
 */
const CROSS_FIELD_RULES: readonly CrossFieldRule[] = [
  boundRules,
  premiumP2Rules,
  unitCountRules,
  targetRules,
  scenarioRules,
  fallbackAndScheduleRules,
  metricsRules,
  anticipationRules,
  leadingSignalRules,
  shareSumRules,
  listMapKeyRules,
  cronRules,
];

/** The cross-field rules on a policy that passed the schema (defaults applied). */
function crossFieldErrors(policy: CapacityPolicy): string[] {
  return CROSS_FIELD_RULES.flatMap((rule) => rule(policy.spec));
}

// ---------------------------------------------------------------------------------------------
// entry points

/**
 * Validates a CapacityPolicy object (as read from the API server or parsed from YAML). On success
 * returns a deep copy with every default applied; the input is never modified.
 */
export function validatePolicy(obj: unknown): ValidationResult {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
    return { ok: false, errors: [`(root): expected a ${KIND} object, got ${show(obj)}`] };
  }
  const copy: unknown = structuredClone(obj);
  if (!validateSchema(copy)) return { ok: false, errors: schemaErrors(validateSchema.errors ?? []) };
  const policy = copy as CapacityPolicy;
  const errors = crossFieldErrors(policy);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, policy };
}

/**
 * Validates the spec of a policy read from the API server: {@link validatePolicy} on the object
 * without its status and with only the name and namespace of its metadata — what the schema and
 * the cross-field rules judge of a spec; the status is the operator's own, written through the
 * API server's validation, and copying it (and `managedFields`) on every pass is most of the cost.
 * On success returns a deep copy of the spec with every default applied.
 */
export function validateSpec(policy: CapacityPolicy): SpecValidationResult {
  const { apiVersion, kind, metadata, spec } = policy;
  const meta = {
    ...(metadata?.name !== undefined ? { name: metadata.name } : {}),
    ...(metadata?.namespace !== undefined ? { namespace: metadata.namespace } : {}),
  };
  const result = validatePolicy({ apiVersion, kind, metadata: meta, spec });
  return result.ok ? { ok: true, spec: result.policy.spec } : result;
}

/** validatePolicy that throws PolicyError instead of returning errors. */
function parsePolicy(obj: unknown): CapacityPolicy {
  const result = validatePolicy(obj);
  if (result.ok) return result.policy;
  throw new PolicyError(describe(obj, result.errors), result.errors);
}

function describe(obj: unknown, errors: readonly string[]): string {
  const meta = (obj as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  const name =
    typeof meta?.name === "string"
      ? ` ${typeof meta.namespace === "string" ? `${meta.namespace}/` : ""}${meta.name}`
      : "";
  return `invalid ${KIND}${name}:\n  ${errors.join("\n  ")}`;
}

/**
 * Parses one YAML (or JSON) document into a validated CapacityPolicy with defaults applied.
 * Throws PolicyError when the text is not YAML, holds several documents, or is not a valid
 * CapacityPolicy.
 */
export function parsePolicyYaml(text: string): CapacityPolicy {
  let doc: unknown;
  try {
    doc = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
  } catch (err) {
    if (err instanceof YAMLParseError) {
      const msg = /multiple documents/i.test(err.message)
        ? "expected one YAML document, found several"
        : err.message.split("\n")[0];
      throw new PolicyError(`not a ${KIND}: ${msg}`);
    }
    throw err;
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    const what =
      doc === null || doc === undefined ? "empty" : Array.isArray(doc) ? "a list" : `a ${typeof doc}`;
    throw new PolicyError(`not a ${KIND}: the document is ${what}`);
  }
  const { apiVersion, kind } = doc as { apiVersion?: unknown; kind?: unknown };
  if (kind !== KIND || apiVersion !== API_VERSION) {
    throw new PolicyError(
      `not a ${KIND}: expected apiVersion ${API_VERSION} and kind ${KIND}, got apiVersion ${show(apiVersion)} and kind ${show(kind)}`,
    );
  }
  return parsePolicy(doc);
}
