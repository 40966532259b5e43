/**
 * The CapacityPolicy schema (autoscaling.signalr.dev/v1alpha1): the single source of the TypeScript
 * types, of runtime validation (validate.ts) and of the CRD and field reference (crd.ts, docs.ts).
 *
 * Conventions:
 * - Every field has a description that names its unit (units, %, seconds, bytes, minutes).
 * - A field with a `default` is listed as required here, so the types describe a policy *after*
 *   defaulting (what the API server stores and `validatePolicy` returns). The CRD generator drops
 *   defaulted fields from `required`, so users may omit them.
 * - Kubernetes extensions (`x-kubernetes-validations`, `x-kubernetes-list-type`, ...) are written
 *   inline; the CEL rules are re-checked in TypeScript by validate.ts.
 * - Only constructs a structural CRD schema allows: every node has a `type`, no anyOf/oneOf, no
 *   nullable.
 */
import { type Static, type TProperties, Type } from "typebox";
import {
  DEFAULT_LADDERS,
  SCALABLE_SKUS,
  type ScalableSku,
  SERVICE_KINDS,
  SKU_NAMES,
  type SkuName,
} from "../capacity/skus.js";
import {
  RECOMMENDED_MAX_SERVER_LOAD_PERCENT,
  type ScenarioName,
  SIGNALR_SCENARIOS,
  WEBPUBSUB_SCENARIOS,
} from "../capacity/tier-tables.js";
import { celSomeUnitCount, describeLadder } from "../capacity/unit-bounds.js";
import {
  ANTICIPATION_MODES,
  API_VERSION,
  CONDITION_STATUSES,
  CONDITION_TYPES,
  DEFAULT_DISCONNECTIONS_PER_UNIT_HOUR,
  DEFAULT_FAILOVER_RESERVE_PERCENT,
  DEFAULT_HISTORY_DAYS,
  DEFAULT_HISTORY_GRAIN,
  DISRUPTION_POLICIES,
  FALLBACK_ACTIONS,
  HISTORY_GRAINS,
  KIND,
  LADDER_SOURCES,
  LEADING_MEASURES,
  MAX_EXCLUDED_COUNTS,
  MAX_HISTORY_DAYS,
  MAX_INGESTION_DELAY_SECONDS,
  MAX_LADDER_RUNGS,
  MAX_REASONS,
  MAX_RECOMMENDATIONS,
  MAX_SAMPLE_AGE_SECONDS,
  MAX_SCALE_EVENTS,
  MAX_SCALE_IN_RECORDS,
  MAX_UNITS,
  MIN_HISTORY_DAYS,
  MIN_UNITS,
  MODES,
  P1_MAX_UNITS,
  P2_MIN_UNITS,
  REFUSAL_CAUSES,
  SCALING_POLICY_TYPES,
  SELECT_POLICIES,
  SHARE_SUM_TOLERANCE,
  SIGNAL_LIST,
  SIGNAL_NAMES,
  STRICT_DISCONNECTIONS_PER_UNIT_HOUR,
  TIME_GRAINS,
  UNAPPLIED_OUTCOMES,
} from "./constants.js";
import { DURATION_PATTERN } from "./duration.js";
import { resourceIdCelRule } from "./resource-id.js";

// ---------------------------------------------------------------------------------------------
// Patterns (valid for both ECMAScript and RE2, the engine of the Kubernetes API server)

/** DNS-1123 subdomain (Deployment and HorizontalPodAutoscaler names). */
export const DNS_SUBDOMAIN_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
/** DNS-1123 label (schedule and window names). */
export const DNS_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/** Five whitespace-separated cron fields (minute hour day-of-month month day-of-week). */
export const CRON_PATTERN = "^[^\\s]+(\\s+[^\\s]+){4}$";
/** Shape of an IANA time zone name; validate.ts checks that the zone exists. */
export const TIME_ZONE_PATTERN = "^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$";
/** metav1.Condition reason. */
export const REASON_PATTERN = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$";

// ---------------------------------------------------------------------------------------------
// Helpers

interface CelRule {
  rule: string;
  message: string;
  fieldPath?: string;
  reason?: "FieldValueInvalid" | "FieldValueForbidden" | "FieldValueRequired" | "FieldValueDuplicate";
}

/** A string enum with `type: string` (as structural CRD schemas need). */
function StringEnum<const T extends string>(
  values: readonly T[],
  options: { description: string; default?: NoInfer<T> },
) {
  return Type.Unsafe<T>({ type: "string", enum: [...values], ...options });
}

function Int(description: string, minimum: number, maximum?: number, def?: number) {
  return Type.Integer({
    description,
    minimum,
    ...(maximum === undefined ? {} : { maximum }),
    ...(def === undefined ? {} : { default: def }),
  });
}

function Name(description: string, pattern: string, maxLength: number) {
  return Type.String({ description, minLength: 1, maxLength, pattern });
}

const DateTime = (description: string) => Type.String({ description, format: "date-time", maxLength: 64 });

// ---------------------------------------------------------------------------------------------
// spec

const TargetSchema = Type.Object(
  {
    service: StringEnum(SERVICE_KINDS, {
      description:
        "Azure service of the instance: SignalR (Azure SignalR Service) or WebPubSub (Azure Web PubSub).",
    }),
    resourceId: Type.String({
      description:
        "ARM resource ID of the instance: /subscriptions/<subscription>/resourceGroups/<group>/providers/Microsoft.SignalRService/SignalR/<name> (or .../WebPubSub/<name>, matching service), or of one of its geo-replicas: .../SignalR/<name>/replicas/<replica name>; by Azure's naming rules: the subscription a GUID; the group 1–90 letters, digits, '_', '-', '.', '(' or ')', not ending with '.'; the name 3–63 letters, digits and single hyphens, starting with a letter and ending with a letter or digit; the replica name 3–63 letters, digits and hyphens, starting with a letter and ending with a letter or digit. Compared case-insensitively.",
      minLength: 1,
      maxLength: 512,
    }),
  },
  { additionalProperties: false, description: "The Azure instance this policy scales." },
);

const UnitRangeSchema = Type.Object(
  {
    min: Int("Fewest units (capacity) the operator sets, units.", MIN_UNITS, MAX_UNITS),
    max: Int("Most units (capacity) the operator sets, units.", MIN_UNITS, MAX_UNITS),
  },
  {
    additionalProperties: false,
    description:
      "Bounds of the instance's unit count, units. Decisions snap to the SKU's unit ladder (1–10, 20 … 100 for Standard_S1/Premium_P1; 100, 200 … 1000 for Premium_P2) inside these bounds.",
  },
);

const SkusSchema = Type.Array(StringEnum(SCALABLE_SKUS, { description: "A SKU the operator may use." }), {
  description:
    "SKUs the operator may move the instance between (Free_F1 never is one). Premium_P2 serves 100 to 1000 units and may only be listed when units.max >= 100; units above 100 need it.",
  minItems: 1,
  maxItems: SCALABLE_SKUS.length,
  uniqueItems: true,
  default: ["Premium_P1"],
  "x-kubernetes-list-type": "set",
});

const TargetPercent = (description: string, def: number) => Int(description, 1, 100, def);

const ServerLoadMetricSchema = Type.Object(
  {
    targetPercent: TargetPercent(
      "Server load the operator aims for, % (Azure Monitor ServerLoad: the window's peak; a scale-in reads a complete window whose buckets all lie within the smaller of the scale-up and scale-down tolerances of their mean at that mean).",
      RECOMMENDED_MAX_SERVER_LOAD_PERCENT,
    ),
  },
  { additionalProperties: false, description: "Scale on the instance's server load." },
);

const ConnectionsMetricSchema = Type.Object(
  {
    targetPercent: TargetPercent(
      "Connection quota utilization the operator aims for, % of units × 1,000 connections.",
      80,
    ),
    spareConnections: Type.Optional(
      Int(
        "Standing headroom: connections the quota keeps free above the window's peak, connections (0 when absent). The need is at least (peak + spareConnections) ÷ 1,000 units, so it only matters at small sizes, where the target's share is less than this (at 80 % and 1,000: below 5 units), and a burst of up to this many clients is not refused while the metrics and a scale catch up.",
        0,
        1_000_000,
      ),
    ),
  },
  { additionalProperties: false, description: "Scale on concurrent client connections." },
);

const ALL_SCENARIOS: readonly ScenarioName[] = [...new Set([...SIGNALR_SCENARIOS, ...WEBPUBSUB_SCENARIOS])];

const WorkloadShareSchema = Type.Object(
  {
    scenario: StringEnum(ALL_SCENARIOS, {
      description: `Tier-table scenario. SignalR: ${SIGNALR_SCENARIOS.join(", ")}. WebPubSub: ${WEBPUBSUB_SCENARIOS.join(", ")}.`,
    }),
    share: Type.Number({
      description: "Fraction of the traffic that follows this scenario, 0..1; the shares sum to 1.",
      minimum: 0,
      maximum: 1,
    }),
  },
  { additionalProperties: false, description: "One scenario of the workload mix." },
);

const scenarioInList = (list: readonly string[]) => `[${list.map((s) => `'${s}'`).join(", ")}]`;

const TrafficMetricSchema = Type.Object(
  {
    workload: Type.Array(WorkloadShareSchema, {
      description:
        "The traffic's mix of tier-table scenarios; the published capacity of each scenario at each unit count sizes the instance for the measured messages.",
      minItems: 1,
      maxItems: 10,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["scenario"],
    }),
    messageSizeBytes: Int(
      "Typical message size, bytes (messages below 1,024 bytes cost as much as 1,024 bytes).",
      1,
      1_048_576,
      2048,
    ),
    targetPercent: TargetPercent("Share of the tier table's message capacity the operator aims for, %.", 80),
  },
  {
    additionalProperties: false,
    description: "Scale on measured messages and bandwidth against the published tier tables.",
    "x-kubernetes-validations": [
      {
        rule: `self.workload.map(w, w.share).sum() >= ${1 - SHARE_SUM_TOLERANCE} && self.workload.map(w, w.share).sum() <= ${1 + SHARE_SUM_TOLERANCE}`,
        message: `workload shares must sum to 1 (± ${SHARE_SUM_TOLERANCE})`,
        fieldPath: ".workload",
      },
    ] satisfies CelRule[],
  },
);

const MetricsSchema = Type.Object(
  {
    serverLoad: Type.Optional(ServerLoadMetricSchema),
    connections: Type.Optional(ConnectionsMetricSchema),
    traffic: Type.Optional(TrafficMetricSchema),
    window: StringEnum(TIME_GRAINS, {
      description: `Aggregation window; an Azure Monitor time grain: ${TIME_GRAINS.join(", ")}.`,
      default: "5m",
    }),
    ingestionDelay: Type.String({
      description:
        'Newest span of metrics to ignore because its buckets are still filling, a duration ("30s", "3m"; at most 1h).',
      pattern: DURATION_PATTERN,
      maxLength: 32,
      default: "3m",
    }),
    maxSampleAge: Type.String({
      description:
        "A sample older than this counts as missing (MetricsAvailable=False), a duration; longer than ingestionDelay and at most 24h (each pass reads this far back, or window + ingestionDelay when longer).",
      pattern: DURATION_PATTERN,
      maxLength: 32,
      default: "10m",
    }),
  },
  {
    additionalProperties: false,
    description:
      "Signals the operator scales on. With several, the largest unit count any of them needs wins.",
    default: {
      serverLoad: { targetPercent: RECOMMENDED_MAX_SERVER_LOAD_PERCENT },
      connections: { targetPercent: 80 },
    },
    "x-kubernetes-validations": [
      {
        rule: SIGNAL_NAMES.map((name) => `has(self.${name})`).join(" || "),
        message: `at least one of ${SIGNAL_LIST} must be set`,
      },
      {
        // The pattern guards keep a malformed duration to the pattern's own error (no CEL conversion error).
        rule: `!has(self.ingestionDelay) || !has(self.maxSampleAge) || !self.ingestionDelay.matches('${DURATION_PATTERN}') || !self.maxSampleAge.matches('${DURATION_PATTERN}') || duration(self.maxSampleAge) > duration(self.ingestionDelay)`,
        message: "maxSampleAge must be longer than ingestionDelay",
        fieldPath: ".maxSampleAge",
      },
      {
        rule: `!has(self.ingestionDelay) || !self.ingestionDelay.matches('${DURATION_PATTERN}') || duration(self.ingestionDelay) <= duration('${MAX_INGESTION_DELAY_SECONDS}s')`,
        message: "ingestionDelay must be at most 1h",
        fieldPath: ".ingestionDelay",
      },
      {
        rule: `!has(self.maxSampleAge) || !self.maxSampleAge.matches('${DURATION_PATTERN}') || duration(self.maxSampleAge) <= duration('${MAX_SAMPLE_AGE_SECONDS}s')`,
        message: "maxSampleAge must be at most 24h",
        fieldPath: ".maxSampleAge",
      },
    ] satisfies CelRule[],
  },
);

const ReplicaRangeSchema = Type.Object(
  {
    min: Int("Fewest app-server replicas, replicas.", 0, 10_000),
    max: Int("Most app-server replicas, replicas.", 1, 10_000),
  },
  { additionalProperties: false, description: "Bounds of the app-server replica count, replicas." },
);

const AppServerSchema = Type.Object(
  {
    deploymentName: Name(
      "Deployment (in the policy's namespace) running the app servers (hub servers or event handlers).",
      DNS_SUBDOMAIN_PATTERN,
      253,
    ),
    horizontalPodAutoscalerName: Type.Optional(
      Name(
        "HorizontalPodAutoscaler that owns the Deployment's replicas; when set the operator raises its minReplicas instead of setting replicas.",
        DNS_SUBDOMAIN_PATTERN,
        253,
      ),
    ),
    replicas: ReplicaRangeSchema,
    connectionsPerReplica: Type.Optional(
      Int(
        "Client connections one replica serves, connections; without it the tier tables' app-server counts apply.",
        1,
      ),
    ),
    eventsPerSecondPerReplica: Type.Optional(
      Type.Number({
        description: "Upstream events per second one replica handles, events/s (Web PubSub event handlers).",
        exclusiveMinimum: 0,
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "The app-server Deployment behind the instance, sized together with it.",
  },
);

const ScalingPolicySchema = Type.Object(
  {
    type: StringEnum(SCALING_POLICY_TYPES, {
      description:
        "Units: change by at most value units; Percent: by at most value % of the units at the start of the period (the HPA's rule: scale-outs within the period are not counted, so a scale-in may undo them); Steps: by at most value rungs of the SKU's unit ladder.",
    }),
    value: Int("Size of the allowed change, in units, % or ladder steps (see type).", 1),
    periodSeconds: Int(
      "Window the allowed change applies to, seconds, counted back from now over the updates sent in it (as the HPA counts a rescale from when it made it: with a period as long as the scale, the next update may go as soon as the last completes). A period shorter than one scale operation (the measured scale duration, else spec.anticipation.scaleDuration, else 5 min) applies once per period of it: Percent 100 per 60 s allows 2^5 = 32 × per 5-minute scale, as the HPA would reach in 5 minutes.",
      1,
      3600,
    ),
  },
  { additionalProperties: false, description: "How much the unit count may change within a period." },
);

const DisruptionSchema = Type.Object(
  {
    policy: StringEnum(DISRUPTION_POLICIES, {
      description:
        "Weigh: a scale-in is made only when the smaller size is expected to hold long enough to repay the clients it disconnects (see maxDisconnectionsPerUnitHour); Ignore: scale-ins are not weighed (only stabilization and the rate policies shape them).",
      default: "Weigh",
    }),
    maxDisconnectionsPerUnitHour: Int(
      `Clients a scale-in may disconnect per unit-hour it is expected to save, clients per unit-hour (default ${DEFAULT_DISCONNECTIONS_PER_UNIT_HOUR}; ${STRICT_DISCONNECTIONS_PER_UNIT_HOUR} is stricter: fewer disconnections for a little more capacity; 0: never disconnect a client to save capacity). The clients are the removed units' share of the window's peak connections (connections × removed ÷ current units); the saving is the removed units × how long the smaller size is expected to hold, from the seasonal forecast and this instance's past scale-ins.`,
      0,
      1_000_000,
      DEFAULT_DISCONNECTIONS_PER_UNIT_HOUR,
    ),
  },
  {
    additionalProperties: false,
    description:
      "How much disruption a scale-in may cause: removing units disconnects the clients on them (they reconnect and negotiate again).",
    default: {},
  },
);

function ScalingRulesSchema<Extra extends TProperties = Record<never, never>>(
  direction: "up" | "down",
  stabilization: number,
  policies: object[],
  extra: Extra = {} as Extra,
  validations: readonly CelRule[] = [],
) {
  return Type.Object(
    {
      stabilizationWindowSeconds: Int(
        direction === "up"
          ? "Scale up to the lowest recommendation of this trailing window, seconds."
          : "Scale down only to the highest recommendation of this trailing window, seconds.",
        0,
        3600,
        stabilization,
      ),
      selectPolicy: StringEnum(SELECT_POLICIES, {
        description:
          "Max: the policy allowing the largest change applies; Min: the smallest; Disabled: never scale in this direction.",
        default: "Max",
      }),
      tolerance: Type.Optional(
        Type.Number({
          description: `Tolerance in this direction, overriding behavior.tolerance (as the HorizontalPodAutoscaler's ${direction === "up" ? "scaleUp" : "scaleDown"}.tolerance): a need ${direction === "up" ? "above" : "below"} the current capacity by less than this fraction of it is ignored, 0..1.`,
          minimum: 0,
          maximum: 1,
        }),
      ),
      policies: Type.Array(ScalingPolicySchema, {
        description: "Rate limits of this direction.",
        minItems: 1,
        maxItems: 10,
        default: policies,
      }),
      ...extra,
    },
    {
      additionalProperties: false,
      description: direction === "up" ? "Rules for scaling up." : "Rules for scaling down.",
      default: {},
      ...(validations.length > 0 ? { "x-kubernetes-validations": validations } : {}),
    },
  );
}

const ScaleUpRulesSchema = ScalingRulesSchema("up", 0, [{ type: "Steps", value: 2, periodSeconds: 60 }]);
const ScaleDownRulesSchema = ScalingRulesSchema(
  "down",
  1800,
  [{ type: "Percent", value: 50, periodSeconds: 600 }],
  {
    minStabilizationWindowSeconds: Type.Optional(
      Type.Integer({
        description:
          "When a peak may be let go in part, seconds (0..3600, at most stabilizationWindowSeconds): after this long, the scale-down window's highest recommendation is held only as high as this instance's peaks came back in its seasonal history (spec.anticipation.seasonal, grain 5m, anticipation.mode Enabled). A drop is the first 5-minute bucket below 70 % of the highest of the 10 minutes before it (a peak of 3,000 connections or more); its return is the highest bucket within stabilizationWindowSeconds after it, as a fraction of that peak (unbounded where the quota filled: ConnectionQuotaUtilization 99 % or more). The peak is held at the 60 % quantile of the returns (its units rounded up to the ladder, so whole where no smaller size holds that share; the highest recommendation of these last seconds whole); at 100 % or more, whole. Whole while the history cannot say (not read, grain 1h, under a day, fewer than 5 drops: always for an instance whose peaks stay under 3,000 connections) and in ForecastOnly (the StabilizedDown reason then says what the history would hold). Unset, or equal to stabilizationWindowSeconds: the window's highest recommendation is held whole.",
        minimum: 0,
        maximum: 3600,
      }),
    ),
    disruption: DisruptionSchema,
  },
  [
    {
      rule: "!has(self.minStabilizationWindowSeconds) || self.minStabilizationWindowSeconds <= self.stabilizationWindowSeconds",
      message: "minStabilizationWindowSeconds must be less than or equal to stabilizationWindowSeconds",
      fieldPath: ".minStabilizationWindowSeconds",
    },
  ],
);

const BehaviorSchema = Type.Object(
  {
    scaleUp: ScaleUpRulesSchema,
    scaleDown: ScaleDownRulesSchema,
    tolerance: Type.Number({
      description:
        "Ignore a need that differs from the current capacity by less than this fraction of it, 0..1 (0.1 = 10 %).",
      minimum: 0,
      maximum: 1,
      default: 0.1,
    }),
    settleSeconds: Int(
      "After a unit change, ignore metrics for this long while connections rebalance, seconds.",
      0,
      3600,
      300,
    ),
  },
  {
    additionalProperties: false,
    description: "How fast the operator scales (shaped like the HorizontalPodAutoscaler's behavior).",
    default: {},
  },
);

const CronField = (what: string) =>
  Type.String({
    description: `Five-field cron expression (minute hour day-of-month month day-of-week) of when ${what} starts, in timeZone.`,
    maxLength: 128,
    pattern: CRON_PATTERN,
  });

const TimeZoneField = () =>
  Type.String({
    description: 'IANA time zone of cron, e.g. "Europe/Madrid".',
    minLength: 1,
    maxLength: 64,
    pattern: TIME_ZONE_PATTERN,
    default: "UTC",
  });

const ScheduleSchema = Type.Object(
  {
    name: Name("Name of the schedule, unique in the policy.", DNS_LABEL_PATTERN, 63),
    cron: CronField("the pre-scale"),
    timeZone: TimeZoneField(),
    durationMinutes: Int("How long the pre-scale lasts after each start, minutes.", 1, 10_080),
    minUnits: Int("Floor of the unit count while the schedule is active, units.", MIN_UNITS, MAX_UNITS),
  },
  { additionalProperties: false, description: "A known peak: a higher floor of units for a while." },
);

const ScaleInWindowSchema = Type.Object(
  {
    name: Name("Name of the window, unique in the policy.", DNS_LABEL_PATTERN, 63),
    cron: CronField("the window"),
    timeZone: TimeZoneField(),
    durationMinutes: Int("How long the window stays open after each start, minutes.", 1, 10_080),
  },
  { additionalProperties: false, description: "A time span in which scaling in is allowed." },
);

const FallbackSchema = Type.Object(
  {
    failureThreshold: Int(
      "Consecutive polls without usable metrics (or failed Azure calls) before the fallback applies, polls.",
      1,
      100,
      3,
    ),
    action: StringEnum(FALLBACK_ACTIONS, {
      description: "Hold: keep the current capacity (never scale in blind); Fixed: scale to units.",
      default: "Hold",
    }),
    units: Type.Optional(
      Int("Unit count for action Fixed, units; within units.min..units.max.", MIN_UNITS, MAX_UNITS),
    ),
  },
  {
    additionalProperties: false,
    description: "What to do while metrics are missing.",
    default: {},
    "x-kubernetes-validations": [
      {
        rule: "!has(self.action) || self.action != 'Fixed' || has(self.units)",
        message: "units is required when action is Fixed",
        fieldPath: ".units",
      },
    ] satisfies CelRule[],
  },
);

const DurationField = (description: string, def: string) =>
  Type.String({ description, pattern: DURATION_PATTERN, maxLength: 32, default: def });

const HeadroomSchema = Type.Object(
  {
    peakPercent: Int(
      "Keep at least this share of the recent peak need, % (0 = no headroom). A peak's share decays linearly to nothing over horizon, so a steady instance keeps no extra capacity and one that just had a burst keeps most of it for a while.",
      0,
      100,
      0,
    ),
    horizon: DurationField('How long a peak is remembered, a duration ("30m", "2h"; at most 24h).', "1h"),
  },
  {
    additionalProperties: false,
    description:
      "Headroom that follows volatility: after a burst, a floor of units derived from the recent peaks, decaying over time.",
    default: {},
    "x-kubernetes-validations": [
      {
        rule: `!has(self.horizon) || !self.horizon.matches('${DURATION_PATTERN}') || (duration(self.horizon) >= duration('1m') && duration(self.horizon) <= duration('24h'))`,
        message: "horizon must be between 1m and 24h",
        fieldPath: ".horizon",
      },
    ] satisfies CelRule[],
  },
);

const SeasonalSchema = Type.Object(
  {
    historyDays: Int(
      `Days of Azure Monitor history the forecast reads, days (${MIN_HISTORY_DAYS}–${MAX_HISTORY_DAYS}; with 21 or more the cycle is weekly, else daily).`,
      MIN_HISTORY_DAYS,
      MAX_HISTORY_DAYS,
      DEFAULT_HISTORY_DAYS,
    ),
    grain: StringEnum(HISTORY_GRAINS, {
      description: "Time grain of the history (Azure Monitor Maximum of connections, Total of traffic).",
      default: DEFAULT_HISTORY_GRAIN,
    }),
  },
  {
    additionalProperties: false,
    description:
      "Seasonal forecast: the growth the same hours of past days or weeks saw, applied to the current demand one lead time ahead. History (peak connections and inbound + outbound traffic per grain) is read from Azure Monitor with the same metrics:getBatch call and role as the metrics: in full once, then hourly, only the buckets completed since; a failed read leaves the decision reactive, never scales in. With too little of it the forecast says so and the decision stays reactive.",
  },
);

const SecretKeyRefSchema = (what: string) =>
  Type.Object(
    {
      name: Name("Name of a Secret in the policy's namespace.", DNS_SUBDOMAIN_PATTERN, 253),
      key: Type.String({
        description: "Key of the Secret's data.",
        pattern: "^[-._a-zA-Z0-9]+$",
        minLength: 1,
        maxLength: 253,
      }),
    },
    { additionalProperties: false, description: what },
  );

const PrometheusSourceSchema = Type.Object(
  {
    serverAddress: Type.String({
      description:
        "Base URL of the Prometheus HTTP API (the part before /api/v1/query), http or https: e.g. http://prometheus-operated.monitoring.svc:9090, or an Azure Monitor workspace's query endpoint.",
      pattern: "^https?://[^\\s/?#@]+(/[^\\s?#]*)?$",
      maxLength: 2048,
    }),
    query: Type.String({
      description:
        "PromQL that returns one series or a scalar (wrap it in sum() when it would return several), evaluated as an instant query at each poll.",
      minLength: 1,
      maxLength: 4096,
    }),
    bearerTokenFile: Type.Optional(
      Type.String({
        description:
          "File in the operator's container with a bearer token, read at each query (a projected service-account token rotates).",
        pattern: "^/",
        maxLength: 1024,
      }),
    ),
    bearerTokenSecretRef: Type.Optional(SecretKeyRefSchema("A Secret key holding a bearer token.")),
    useAzureCredential: Type.Optional(
      Type.Boolean({
        description:
          "Send a token for https://prometheus.monitor.azure.com from the operator's Azure credential (the one it uses for ARM): Azure Monitor managed service for Prometheus.",
      }),
    ),
    caFile: Type.Optional(
      Type.String({
        description: "File in the operator's container with the CA bundle (PEM) to trust for https.",
        pattern: "^/",
        maxLength: 1024,
      }),
    ),
    caSecretRef: Type.Optional(
      SecretKeyRefSchema("A Secret key holding the CA bundle (PEM) to trust for https."),
    ),
    timeout: DurationField("Deadline of each query, a duration (1s–30s).", "5s"),
  },
  {
    additionalProperties: false,
    description: "Where and what to ask Prometheus.",
    "x-kubernetes-validations": [
      {
        rule: "[has(self.bearerTokenFile), has(self.bearerTokenSecretRef), has(self.useAzureCredential) && self.useAzureCredential].filter(x, x).size() <= 1",
        message: "set at most one of bearerTokenFile, bearerTokenSecretRef and useAzureCredential",
        fieldPath: ".bearerTokenFile",
      },
      {
        rule: "!(has(self.caFile) && has(self.caSecretRef))",
        message: "set at most one of caFile and caSecretRef",
        fieldPath: ".caFile",
      },
      {
        rule: `!has(self.timeout) || !self.timeout.matches('${DURATION_PATTERN}') || (duration(self.timeout) >= duration('1s') && duration(self.timeout) <= duration('30s'))`,
        message: "timeout must be between 1s and 30s",
        fieldPath: ".timeout",
      },
    ] satisfies CelRule[],
  },
);

const LeadingSignalSchema = Type.Object(
  {
    prometheus: PrometheusSourceSchema,
    measures: StringEnum(LEADING_MEASURES, {
      description:
        "What the query returns: NewConnectionsPerSecond (the negotiate rate, clients per second), NewConnectionsTotal (the negotiate counter; the operator takes its increase per second between polls, a decrease being a counter reset), or Connections (concurrent client connections).",
      default: "NewConnectionsPerSecond",
    }),
    connectionLifetime: Type.Optional(
      Type.String({
        description:
          "For new connections: how long a client stays connected on average, a duration (1m–24h). Concurrent connections = new connections per second × lifetime (Little's law). When absent it is measured: the median, over the last 30 minutes, of Azure Monitor's connection count ÷ this signal's rate while the quota was not full.",
        pattern: DURATION_PATTERN,
        maxLength: 32,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "A leading signal from the app servers through Prometheus, seconds old instead of Azure Monitor's minutes, and still counting the clients a full connection quota turns away. It only ever raises capacity (a rule of anticipation); unknown or failing, it is ignored and reported.",
    "x-kubernetes-validations": [
      {
        rule: `!has(self.connectionLifetime) || !self.connectionLifetime.matches('${DURATION_PATTERN}') || (duration(self.connectionLifetime) >= duration('1m') && duration(self.connectionLifetime) <= duration('24h'))`,
        message: "connectionLifetime must be between 1m and 24h",
        fieldPath: ".connectionLifetime",
      },
    ] satisfies CelRule[],
  },
);

const FailoverSchema = Type.Object(
  {
    enabled: Type.Boolean({
      description:
        "Raise this instance's capacity when another member of its replica group (the primary or a replica of the same instance) stops serving: by the share of that member's clients it is about to receive (status.anticipation.failover). It asks nothing for an instance without replicas.",
      default: true,
    }),
    reservePercent: Type.Optional(
      Int(
        `While every member of the replica group serves, also hold this share of the clients this instance would receive if the sibling whose loss would send it the most stopped serving, % (${DEFAULT_FAILOVER_RESERVE_PERCENT} when absent; 0: no reserve): that sibling's connections × this instance's share of the others', both read ahead to when capacity asked now is in place, on top of its own, at the connections target. They arrive within seconds and a scale takes minutes; the target's headroom holds the rest (at 80 %, 25 covers arrivals up to 36 % of this instance's connections, 50 up to 67 %, 80 any). Scale-out only; units.max holds.`,
        0,
        100,
        DEFAULT_FAILOVER_RESERVE_PERCENT,
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Failover awareness between geo-replicas: a member that stops serving (ARM says so, or its connections vanish while the others' rise) sends its clients to the others within seconds.",
    default: {},
  },
);

const AnticipationSchema = Type.Object(
  {
    mode: StringEnum(ANTICIPATION_MODES, {
      description:
        "Off: reactive only; ForecastOnly: projections and forecast computed and shown in status.anticipation, never acted on; Enabled: scale out ahead for them (never in).",
      default: "Enabled",
    }),
    scaleDuration: DurationField(
      "How long a scale takes until this instance's own completed updates have measured it (then the median of the recent ones is used), a duration. Part of the lead time: ingestion delay + scale duration + one poll interval.",
      "5m",
    ),
    headroom: HeadroomSchema,
    seasonal: Type.Optional(SeasonalSchema),
    leadingSignal: Type.Optional(LeadingSignalSchema),
    failover: Type.Optional(FailoverSchema),
  },
  {
    additionalProperties: false,
    "x-kubernetes-validations": [
      {
        rule: `!has(self.scaleDuration) || !self.scaleDuration.matches('${DURATION_PATTERN}') || duration(self.scaleDuration) <= duration('2h')`,
        message: "scaleDuration must be at most 2h",
        fieldPath: ".scaleDuration",
      },
    ] satisfies CelRule[],
    description:
      "Anticipation: scale out for the demand expected one lead time ahead — the trend of the recent buckets, the demand hidden by a full connection quota, a headroom after bursts, the clients of a geo-replica that stopped serving and, optionally, a seasonal forecast from history. Scale-out only; units.max always holds.",
  },
);

/** CEL rules of `spec` (validate.ts implements each of them again, plus what CEL cannot check). */
export const SPEC_CEL_RULES: readonly CelRule[] = [
  {
    rule: "self.units.min <= self.units.max",
    message: "units.min must be less than or equal to units.max",
    fieldPath: ".units.min",
  },
  {
    rule: "!has(self.appServer) || self.appServer.replicas.min <= self.appServer.replicas.max",
    message: "appServer.replicas.min must be less than or equal to appServer.replicas.max",
    fieldPath: ".appServer.replicas.min",
  },
  {
    rule: `!('Premium_P2' in self.skus) || self.units.max >= ${P2_MIN_UNITS}`,
    message: `Premium_P2 may only be listed in skus when units.max >= ${P2_MIN_UNITS}`,
    fieldPath: ".skus",
  },
  {
    rule: `self.units.max <= ${P1_MAX_UNITS} || 'Premium_P2' in self.skus`,
    message: `units.max above ${P1_MAX_UNITS} needs Premium_P2 in skus`,
    fieldPath: ".units.max",
  },
  {
    rule: `!self.skus.all(s, s == 'Premium_P2') || self.units.min >= ${P2_MIN_UNITS}`,
    message: `units.min must be >= ${P2_MIN_UNITS} when Premium_P2 is the only SKU`,
    fieldPath: ".units.min",
  },
  {
    rule: celSomeUnitCount("self.skus", "u >= self.units.min && u <= self.units.max"),
    message: `units.min..units.max must hold a unit count an allowed SKU offers (Standard_S1, Premium_P1: ${describeLadder(DEFAULT_LADDERS.Premium_P1)}; Premium_P2: ${describeLadder(DEFAULT_LADDERS.Premium_P2)})`,
    fieldPath: ".units",
  },
  {
    rule: `!has(self.schedules) || self.schedules.all(s, ${celSomeUnitCount("self.skus", "u >= s.minUnits && u >= self.units.min && u <= self.units.max")})`,
    message:
      "schedules[].minUnits: a unit count an allowed SKU offers must lie between minUnits (and units.min) and units.max",
    fieldPath: ".schedules",
  },
  {
    rule: `!has(self.fallback) || !has(self.fallback.action) || self.fallback.action != 'Fixed' || !has(self.fallback.units) || ${celSomeUnitCount("self.skus", "u >= self.fallback.units && u <= self.units.max")}`,
    message:
      "fallback.units: a unit count an allowed SKU offers must lie between fallback.units (the fixed size is rounded up to one) and units.max",
    fieldPath: ".fallback.units",
  },
  {
    rule: resourceIdCelRule(),
    message:
      "target.resourceId must be an ARM ID /subscriptions/<subscription GUID>/resourceGroups/<group: 1-90 letters, digits, _-.() not ending in .>/providers/Microsoft.SignalRService/<SignalR|WebPubSub, as target.service>/<name: 3-63 letters, digits, single hyphens, starting with a letter, ending with a letter or digit>[/replicas/<replica name: 3-63 letters, digits, hyphens, starting with a letter, ending with a letter or digit>]",
    fieldPath: ".target.resourceId",
  },
  {
    rule: `!has(self.metrics) || !has(self.metrics.traffic) || self.metrics.traffic.workload.all(w, self.target.service == 'SignalR' ? w.scenario in ${scenarioInList(SIGNALR_SCENARIOS)} : w.scenario in ${scenarioInList(WEBPUBSUB_SCENARIOS)})`,
    message: "metrics.traffic.workload names a scenario the target service does not have",
    fieldPath: ".metrics.traffic.workload",
  },
  {
    rule: "!has(self.fallback) || !has(self.fallback.action) || self.fallback.action != 'Fixed' || !has(self.fallback.units) || (self.fallback.units >= self.units.min && self.fallback.units <= self.units.max)",
    message: "fallback.units must be within units.min..units.max",
    fieldPath: ".fallback.units",
  },
  {
    rule: "!has(self.anticipation) || !has(self.anticipation.leadingSignal) || (has(self.anticipation.leadingSignal.measures) && self.anticipation.leadingSignal.measures == 'Connections') || has(self.anticipation.leadingSignal.connectionLifetime) || (has(self.metrics) && has(self.metrics.connections))",
    message:
      "anticipation.leadingSignal measuring new connections needs connectionLifetime, or metrics.connections to measure it from",
    fieldPath: ".anticipation.leadingSignal",
  },
  {
    rule: "!has(self.schedules) || self.schedules.all(s, s.minUnits <= self.units.max)",
    message: "schedules[].minUnits must be less than or equal to units.max",
    fieldPath: ".schedules",
  },
];

export const CapacityPolicySpecSchema = Type.Object(
  {
    target: TargetSchema,
    units: UnitRangeSchema,
    skus: SkusSchema,
    metrics: MetricsSchema,
    appServer: Type.Optional(AppServerSchema),
    behavior: BehaviorSchema,
    schedules: Type.Optional(
      Type.Array(ScheduleSchema, {
        description:
          "Pre-scale for known peaks: while a schedule is active, units stay at or above its minUnits.",
        maxItems: 20,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
    ),
    scaleInWindows: Type.Optional(
      Type.Array(ScaleInWindowSchema, {
        description: "When set, the operator scales in only while one of these windows is open.",
        maxItems: 20,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
    ),
    fallback: FallbackSchema,
    anticipation: Type.Optional(AnticipationSchema),
    mode: StringEnum(MODES, {
      description:
        "Auto: apply decisions; Recommend: only record them in status (dry run); Paused: do nothing (like the autoscaling.signalr.dev/paused annotation).",
      default: "Auto",
    }),
    pollIntervalSeconds: Int("How often the operator polls metrics and decides, seconds.", 10, 3600, 30),
  },
  {
    additionalProperties: false,
    description: "Desired behavior of the autoscaler. The operator never writes spec.",
    "x-kubernetes-validations": SPEC_CEL_RULES,
  },
);

// ---------------------------------------------------------------------------------------------
// status

const UnitsField = (description: string) => Type.Integer({ description, minimum: 0, maximum: MAX_UNITS });
const ObservedSku = (description: string) => StringEnum<SkuName>(SKU_NAMES, { description });
const TargetSku = (description: string) => StringEnum<ScalableSku>(SCALABLE_SKUS, { description });

/** A capacity: SKU (of `sku`'s names), units and, when there are app servers, their replicas. */
function CapacitySchema<Sku extends SkuName>(
  sku: readonly Sku[],
  text: { sku: string; units: string; replicas: string; capacity: string },
) {
  return Type.Object(
    {
      sku: StringEnum<Sku>(sku, { description: text.sku }),
      units: UnitsField(text.units),
      replicas: Type.Optional(Type.Integer({ description: text.replicas, minimum: 0 })),
    },
    { additionalProperties: false, description: text.capacity },
  );
}

const ObservedCapacitySchema = CapacitySchema(SKU_NAMES, {
  sku: "SKU the instance has.",
  units: "Units the instance has, units.",
  replicas: "Replicas the app-server Deployment has, replicas.",
  capacity: "Capacity the instance (and app servers) have now.",
});

const DesiredCapacitySchema = CapacitySchema(SCALABLE_SKUS, {
  sku: "SKU the last decision wants.",
  units: "Units the last decision wants, units.",
  replicas: "App-server replicas the last decision wants, replicas.",
  capacity: "Capacity the last decision wants.",
});

const NonNegative = (description: string) => Type.Optional(Type.Number({ description, minimum: 0 }));

export const MetricSampleSchema = Type.Object(
  {
    time: DateTime("Start of the metrics bucket the values come from (RFC 3339)."),
    serverLoadPercent: NonNegative("Server load, %."),
    connectionQuotaUtilizationPercent: NonNegative("Connection quota utilization, %."),
    connections: NonNegative("Concurrent connections, client and server, connections."),
    messagesPerSecond: NonNegative("Messages per second, messages/s (SignalR only)."),
    inboundBytesPerSecond: NonNegative("Inbound traffic, bytes/s."),
    outboundBytesPerSecond: NonNegative("Outbound traffic, bytes/s."),
  },
  {
    additionalProperties: false,
    description:
      "The last usable metrics sample; a metric Azure did not report is omitted (missing is not zero).",
  },
);

/** A SKU (of `sku`'s names) and unit count. */
function SkuUnitsSchema<Sku extends SkuName>(sku: readonly Sku[]) {
  return Type.Object(
    { sku: StringEnum<Sku>(sku, { description: "SKU." }), units: UnitsField("Units, units.") },
    { additionalProperties: false, description: "A SKU and unit count." },
  );
}

const SignalLevelsSchema = Type.Object(
  {
    serverLoadPercent: NonNegative("Peak server load of the window, %."),
    connections: NonNegative("Peak concurrent connections of the window, connections."),
    bytesPerSecond: NonNegative("Peak inbound + outbound traffic of the window, bytes/s."),
  },
  {
    additionalProperties: false,
    description:
      "The metrics window's peaks when the update was sent: for up to an hour after a completed scale-out, server load that did not fall while connections and traffic did not grow is suspect (its scale-out is held, reason SignalSuspect).",
  },
);

const OperationSchema = Type.Object(
  {
    startedAt: DateTime("When the update was sent (RFC 3339)."),
    from: SkuUnitsSchema(SKU_NAMES),
    to: SkuUnitsSchema(SCALABLE_SKUS),
    asyncOperationUrl: Type.Optional(
      Type.String({ description: "Azure-AsyncOperation URL ARM returned for the update.", maxLength: 2048 }),
    ),
    before: Type.Optional(SignalLevelsSchema),
    recovered: Type.Optional(
      Type.Boolean({
        description:
          "True for an update found running on the instance with no record of it being sent (a lost status write, or another writer): startedAt is when it was found, and every minute before its completion may have been served by either size.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "The ARM update in flight; kept in status so it survives operator restarts.",
  },
);

const RecommendationSchema = Type.Object(
  {
    time: DateTime("When the decision was made (RFC 3339)."),
    units: UnitsField("Units the decision wanted, units."),
    sku: TargetSku("SKU the decision wanted."),
  },
  { additionalProperties: false, description: "One past decision." },
);

const ScaleEventSchema = Type.Object(
  {
    time: DateTime("When the change was observed complete (RFC 3339)."),
    startedAt: Type.Optional(
      DateTime(
        "When the update was sent (RFC 3339). Minutes between it and time may have been served by either size: they are read at the smaller one and never justify a scale-in. Absent: taken as time.",
      ),
    ),
    fromSku: ObservedSku("SKU before."),
    fromUnits: UnitsField("Units before, units."),
    toSku: TargetSku("SKU after."),
    toUnits: UnitsField("Units after, units."),
    before: Type.Optional(SignalLevelsSchema),
    recovered: Type.Optional(
      Type.Boolean({
        description:
          "True for a change found on the instance with no record of its update being sent (a lost status write, or another writer): when it began is unknown, so every minute before time may have been served by either size (read at the smaller one, never justifying a scale-in).",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "One applied capacity change (an update that failed or did not apply is never recorded).",
  },
);

const ScaleInRecordSchema = Type.Object(
  {
    time: DateTime(
      "When the scale-in was observed complete (RFC 3339); for a held one, when the disruption weighing first held it.",
    ),
    fromUnits: UnitsField("Units before, units."),
    toUnits: UnitsField(
      "Units after, units; for a held one, the largest size the weighing held a scale-in at while the need stayed at or below it.",
    ),
    endedAt: Type.Optional(
      DateTime(
        "When the smaller size stopped holding (RFC 3339): the next change was sent. Absent: it still holds.",
      ),
    ),
    reversed: Type.Optional(
      Type.Boolean({
        description:
          "True when a scale-out ended it (the scale-in was reversed); false or absent when a further scale-in did, or it still holds.",
      }),
    ),
    held: Type.Optional(
      Type.Boolean({
        description:
          "True for a scale-in the disruption weighing holds now (never applied; at most one, last): it opened when the weighing first held it, is raised to a larger size held since, and leaves when the need rises above toUnits or a change completes. Its age is how long the need has already stayed low; the expected hold is read past it.",
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "One past scale-in and how long its smaller size held.",
  },
);

const UnappliedUpdatesSchema = Type.Object(
  {
    count: Type.Integer({
      description:
        "Consecutive updates that did not take — ARM reported Succeeded while the instance kept its size, the update ended Failed or Canceled, or ARM refused it durably (a quota, an Azure Policy deny, a resource lock, an invalid request, a missing role, a missing resource) — updates. The operator waits 1, 2, 4, 8 … minutes (at most 30) after each before the next, and sends none after 5 until the spec (metadata.generation) or the instance (its SKU, units or provisioning state) changes.",
      minimum: 1,
    }),
    lastTime: DateTime("When the last of them was observed ending (RFC 3339)."),
    to: SkuUnitsSchema(SCALABLE_SKUS),
    instance: SkuUnitsSchema(SKU_NAMES),
    generation: Type.Optional(
      Type.Integer({ description: "metadata.generation they were sent under.", minimum: 0 }),
    ),
    lastOutcome: Type.Optional(
      StringEnum(UNAPPLIED_OUTCOMES, {
        description:
          "How the last of them ended: NotApplied — ARM answered Succeeded, the SKU and units did not change (reason UpdateNotApplied); Failed or Canceled — its provisioning state (reason UpdateFailed); Refused — ARM refused the PATCH outright (reason UpdateRefused; refusedBy, code and message say why). Absent: NotApplied.",
      }),
    ),
    refusedBy: Type.Optional(
      StringEnum(REFUSAL_CAUSES, {
        description:
          "What refused the last of them (lastOutcome Refused): Quota — a subscription quota (SignalR: 150 units per region by default); Policy — an Azure Policy deny (403 RequestDisallowedByPolicy); Lock — a resource lock (409 ScopeLocked); Invalid — ARM called the request invalid (400); Unauthorized — the operator's identity may not write the instance (401, 403); NotFound — the instance does not exist (404).",
      }),
    ),
    code: Type.Optional(
      Type.String({ description: "Azure's error code of the refusal (error.code).", maxLength: 128 }),
    ),
    message: Type.Optional(
      Type.String({ description: "Azure's error message of the refusal, as ARM gave it.", maxLength: 1024 }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Updates that did not take (ARM answered Succeeded and the SKU and units did not change, the update ended Failed or Canceled, or ARM refused it durably): to is what the last one asked, instance the size it kept.",
  },
);

const UnitCountList = (description: string) =>
  Type.Array(Type.Integer({ description: "A unit count, units.", minimum: 1, maximum: MAX_UNITS }), {
    description,
    maxItems: MAX_LADDER_RUNGS,
  });

const UnitLaddersSchema = Type.Object(
  {
    source: StringEnum(LADDER_SOURCES, {
      description:
        "Where the unit counts of the last decision came from: Service — ARM listSkus (capacity.allowedValues) for at least one allowed SKU; BuiltIn — the documented ladders (docs/tier-tables.md: 1–10, 20 … 100; Premium_P2 100 … 1,000), used until listSkus answers, when it fails, or when it describes none of the allowed SKUs.",
    }),
    readAt: Type.Optional(
      DateTime("When listSkus last answered for the instance (RFC 3339); re-read every 6 hours."),
    ),
    service: Type.Optional(
      Type.Array(
        Type.Object(
          {
            sku: TargetSku("SKU listSkus described."),
            units: UnitCountList("Its allowedValues, ascending, units."),
          },
          { additionalProperties: false },
        ),
        {
          description:
            "The ladders listSkus reported, per SKU it described with allowedValues; SKUs it did not describe keep the documented ladder. Kept so that a restarted operator uses them until its next read.",
          maxItems: SCALABLE_SKUS.length,
        },
      ),
    ),
    excluded: Type.Optional(
      Type.Array(
        Type.Object(
          {
            sku: TargetSku("SKU of the unit count."),
            units: UnitsField("The unit count, units."),
            time: DateTime("When the update to it was observed not taking (RFC 3339)."),
            outcome: StringEnum(["NotApplied", "Refused"] as const, {
              description:
                "NotApplied — ARM answered Succeeded and the instance kept its size; Refused — ARM refused the PATCH as invalid (400).",
            }),
          },
          { additionalProperties: false },
        ),
        {
          description: `Unit counts the operator no longer asks for (at most ${MAX_EXCLUDED_COUNTS}): an update to one was answered but did not apply, so the service does not offer it whatever its ladder says. Cleared when the spec (metadata.generation) or the ladder the service reports changes.`,
          maxItems: MAX_EXCLUDED_COUNTS,
        },
      ),
    ),
    generation: Type.Optional(
      Type.Integer({
        description: "metadata.generation the excluded counts were recorded under.",
        minimum: 0,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "The unit ladders (allowed unit counts per SKU) the decision used: where they came from, and the counts left out because the service did not apply them.",
  },
);

const PolicyConditionSchema = Type.Object(
  {
    type: StringEnum(CONDITION_TYPES, { description: `Condition type: ${CONDITION_TYPES.join(", ")}.` }),
    status: StringEnum(CONDITION_STATUSES, { description: "True, False or Unknown." }),
    observedGeneration: Type.Optional(
      Type.Integer({ description: "metadata.generation the condition was set for.", minimum: 0 }),
    ),
    lastTransitionTime: DateTime("When status last changed (RFC 3339)."),
    reason: Type.String({
      description: "Machine-readable CamelCase reason.",
      minLength: 1,
      maxLength: 1024,
      pattern: REASON_PATTERN,
    }),
    message: Type.String({ description: "Human-readable detail.", maxLength: 32_768 }),
  },
  { additionalProperties: false, description: "A metav1.Condition." },
);

const NotServingSchema = Type.Object(
  {
    since: DateTime("When the instance was first seen not serving (RFC 3339)."),
    until: Type.Optional(
      DateTime("When it was first seen serving again (RFC 3339); absent while it does not."),
    ),
    reason: Type.String({ description: "Why, in ARM's words or the metrics' figures.", maxLength: 256 }),
  },
  {
    additionalProperties: false,
    description:
      "The instance itself stopped serving (a member of a replica group: ARM says so, or its connections vanished while the other members' rose). No scale-in while it does not serve, nor after until the scale-down stabilization window (at least the metrics window and the ingestion delay) has passed since it serves again: its clients come back as they reconnect.",
  },
);

const IngestionSchema = Type.Object(
  {
    observedDelaySeconds: Type.Optional(
      Type.Integer({
        description:
          "The longest time after its end that a metrics bucket was seen still filling (its totals grew on a later pass), seconds — measured from the bucket's end, as spec.metrics.ingestionDelay is. Decisions then read only buckets older than the next whole minute above it (reason IngestionDelayObserved names the setting to use). Forgotten 6 hours after it was observed, when a new observation comes.",
        minimum: 0,
      }),
    ),
    observedAt: Type.Optional(DateTime("When observedDelaySeconds was observed (RFC 3339).")),
    seenAt: Type.Optional(
      DateTime("When the pass that read the remembered bucket totals (buckets) ran (RFC 3339)."),
    ),
    buckets: Type.Optional(
      Type.Array(
        Type.Object(
          {
            time: DateTime("Bucket start (RFC 3339)."),
            total: Type.Number({
              description:
                "Bookkeeping, not a measurement: the bucket's MessageCount, InboundTraffic and OutboundTraffic rates added up as read then, compared on the next pass to see whether the bucket was still filling.",
              minimum: 0,
            }),
          },
          { additionalProperties: false },
        ),
        { description: "The newest buckets' totals as last read (at most 10).", maxItems: 10 },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: "How late Azure Monitor's buckets complete, as the operator observed it.",
  },
);

/** Rules of anticipation, as status and reasons name them. */
export const ANTICIPATION_RULES = [
  "Trend",
  "CensoredDemand",
  "Headroom",
  "Seasonal",
  "LeadingSignal",
  "Failover",
] as const;
export type AnticipationRule = (typeof ANTICIPATION_RULES)[number];

/** States of the leading signal, as `status.anticipation.leading.state` names them. */
export const LEADING_STATES = ["Ok", "Calibrating", "Unavailable"] as const;
export type LeadingState = (typeof LEADING_STATES)[number];

/** Most members of a replica group a failover status lists (an instance and its replicas). */
export const MAX_FAILOVER_MEMBERS = 16;

/** How a member of the replica group was found not serving (failover.ts). */
export const FAILOVER_CAUSES = ["NotServing", "ConnectionsVanished"] as const;
export type FailoverCause = (typeof FAILOVER_CAUSES)[number];

const FailoverStatusSchema = Type.Object(
  {
    lost: Type.Array(
      Type.Object(
        {
          resourceId: Type.String({ description: "The member's ARM resource ID.", maxLength: 1024 }),
          location: Type.Optional(Type.String({ description: "Its region.", maxLength: 64 })),
          cause: StringEnum(FAILOVER_CAUSES, {
            description:
              "NotServing: ARM says it does not serve clients (provisioning state, resourceStopped, regionEndpointEnabled); ConnectionsVanished: its connections fell to a small fraction of their level while the other members' rose by a good part of them.",
          }),
          reason: Type.String({
            description: "Why, in ARM's words or the metrics' figures.",
            maxLength: 256,
          }),
          since: DateTime("When it was first seen not serving (RFC 3339)."),
          connections: Type.Number({
            description:
              "Its connections when it last served (its peak bucket before the loss), connections.",
            minimum: 0,
          }),
        },
        { additionalProperties: false },
      ),
      {
        description: "The members not serving, as first seen; each is dropped when it serves again.",
        maxItems: MAX_FAILOVER_MEMBERS,
      },
    ),
    ownConnections: Type.Number({
      description: "This instance's connections before the first loss (its peak bucket then), connections.",
      minimum: 0,
    }),
    share: Type.Number({
      description:
        "This instance's share of the lost members' clients: its connections ÷ every serving member's before the loss (by units when a member's connections are unknown), 0–1.",
      minimum: 0,
      maximum: 1,
    }),
    expectedConnections: Type.Number({
      description:
        "Connections this instance expects: its own + its share of the lost members', connections.",
      minimum: 0,
    }),
    ownUnits: Type.Optional(
      Type.Number({
        description:
          "This instance's measured need before the arrivals (the largest signal's, read while its window had no bucket from after the loss), units; the ask is at least it × expectedConnections ÷ ownConnections.",
        minimum: 0,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Bookkeeping for the Failover rule (spec.anticipation.failover): the members of this instance's replica group that stopped serving and the clients this instance expects from them, kept while they are down.",
  },
);

const AnticipationStatusSchema = Type.Object(
  {
    mode: StringEnum(ANTICIPATION_MODES, { description: "spec.anticipation.mode when this was computed." }),
    leadTimeSeconds: Type.Integer({
      description:
        "How far ahead of the newest complete bucket capacity must be sized: ingestion delay + scale duration + one poll interval, seconds.",
      minimum: 0,
    }),
    scaleDurationSeconds: Type.Integer({
      description: "The scale duration in the lead time, seconds.",
      minimum: 0,
    }),
    scaleDurationSource: StringEnum(["Measured", "Default"] as const, {
      description:
        "Measured: the median of this instance's recent completed updates (send → completion observed); Default: spec.anticipation.scaleDuration.",
    }),
    units: Type.Optional(
      UnitsField(
        "Units anticipation asks for (the largest rule's), before the ladder, rate policies and bounds, units.",
      ),
    ),
    drivenBy: Type.Optional(
      StringEnum(ANTICIPATION_RULES, { description: "The rule that asks for the most." }),
    ),
    applied: Type.Boolean({
      description:
        "The decision was raised by anticipation: false in ForecastOnly, or when the measured need alone, through the same ladder, stabilization and rate policies, comes to the same size.",
    }),
    rules: Type.Optional(
      Type.Array(
        Type.Object(
          {
            rule: StringEnum(ANTICIPATION_RULES, { description: "Which rule." }),
            units: UnitsField("Units this rule asks for, units."),
            message: Type.String({ description: "The rule's numbers, in words.", maxLength: 512 }),
          },
          { additionalProperties: false },
        ),
        { description: "Each rule that asked for something this pass.", maxItems: ANTICIPATION_RULES.length },
      ),
    ),
    forecast: Type.Optional(
      Type.Object(
        {
          state: StringEnum(["Ok", "InsufficientHistory", "Unavailable"] as const, {
            description:
              "Ok: forecast made; InsufficientHistory: fewer than the days needed (the decision stays reactive); Unavailable: history could not be read.",
          }),
          cycle: Type.Optional(
            StringEnum(["Daily", "Weekly"] as const, { description: "The cycle the forecast uses." }),
          ),
          cycles: Type.Optional(Type.Integer({ description: "Past cycles the forecast used.", minimum: 0 })),
          ratio: Type.Optional(
            Type.Number({
              description: "Expected demand one lead time ahead ÷ demand now, from the past cycles (median).",
              minimum: 0,
            }),
          ),
          historyFrom: Type.Optional(DateTime("Oldest history point read (RFC 3339).")),
          readAt: Type.Optional(DateTime("When the history was last read (RFC 3339).")),
          message: Type.String({ description: "The forecast, in words.", maxLength: 512 }),
        },
        { additionalProperties: false, description: "The seasonal forecast (spec.anticipation.seasonal)." },
      ),
    ),
    peaks: Type.Optional(
      Type.Array(
        Type.Object(
          {
            time: DateTime("Start of the slot (RFC 3339)."),
            units: Type.Number({
              description: "Highest need seen in the slot, units (not snapped).",
              minimum: 0,
            }),
          },
          { additionalProperties: false },
        ),
        {
          description:
            "Bookkeeping for headroom: the highest need per 5-minute slot over spec.anticipation.headroom.horizon (at most 24, merged when more).",
          maxItems: 24,
        },
      ),
    ),
    growth: Type.Optional(
      Type.Object(
        {
          time: DateTime("Middle of the newest unsaturated bucket the growth was measured on (RFC 3339)."),
          units: Type.Number({
            description: "The connections' need then (connections ÷ (1,000 · target%)), units.",
            minimum: 0,
          }),
          perMinute: Type.Number({ description: "Robust growth of that need before it, units per minute." }),
        },
        {
          additionalProperties: false,
          description:
            "Bookkeeping for censored demand: the connection growth measured before the quota filled.",
        },
      ),
    ),
    leading: Type.Optional(
      Type.Object(
        {
          state: StringEnum(LEADING_STATES, {
            description:
              "Ok: read and used; Calibrating: read, but the connection lifetime is not measured yet (no pairs with Azure Monitor's unsaturated connection count); Unavailable: the query failed or its answer is unusable (ignored, never a scale-in).",
          }),
          reason: Type.Optional(
            Type.String({
              description:
                "Why it is unavailable (absent otherwise): Unreachable, Timeout, Tls, Http, QueryError, BadResponse, NoData, ManySeries, NotFinite, Unsupported, Negative, Stale, Credential, NoPreviousReading, NotRead.",
              maxLength: 64,
            }),
          ),
          value: Type.Optional(
            Type.Number({
              description:
                "The query's value at readAt, in spec.measures' unit (for NewConnectionsPerSecond it is newConnectionsPerSecond, not repeated).",
            }),
          ),
          readAt: Type.Optional(DateTime("The evaluation time of that value (RFC 3339).")),
          newConnectionsPerSecond: Type.Optional(
            Type.Number({ description: "Clients starting a connection, per second.", minimum: 0 }),
          ),
          lifetimeSeconds: Type.Optional(
            Type.Number({ description: "Mean connection lifetime used, seconds.", minimum: 0 }),
          ),
          lifetimeSource: Type.Optional(
            StringEnum(["Spec", "Measured"] as const, {
              description:
                "Spec: spec.anticipation.leadingSignal.connectionLifetime; Measured: from the pairs.",
            }),
          ),
          connections: Type.Optional(
            Type.Number({
              description:
                "Concurrent client connections the signal expects at the target time (lead time minus the ingestion delay ahead), connections.",
              minimum: 0,
            }),
          ),
          message: Type.String({ description: "The leading signal, in words.", maxLength: 512 }),
        },
        {
          additionalProperties: false,
          description: "The leading signal (spec.anticipation.leadingSignal) on the last pass.",
        },
      ),
    ),
    failover: Type.Optional(FailoverStatusSchema),
    message: Type.String({ description: "What anticipation did this pass, in words.", maxLength: 1024 }),
  },
  {
    additionalProperties: false,
    description: "What anticipation (spec.anticipation) computed on the last pass and why.",
  },
);

/** Most members of a replica group `status.geoReplicas` lists. */
export const MAX_GEO_REPLICAS = 16;

/** Roles of the members of a replica group. */
export const REPLICA_ROLES = ["Primary", "Replica"] as const;
export type ReplicaRole = (typeof REPLICA_ROLES)[number];

const GeoReplicaSchema = Type.Object(
  {
    resourceId: Type.String({ description: "ARM resource ID of the member.", maxLength: 512 }),
    role: StringEnum(REPLICA_ROLES, {
      description: "Primary: the instance the replicas belong to; Replica: one of its geo-replicas.",
    }),
    location: Type.String({ description: "Its Azure region (ARM location, normalized).", maxLength: 64 }),
    sku: Type.String({ description: "Its SKU (ARM sku.name).", maxLength: 64 }),
    units: UnitsField("Its units (ARM sku.capacity), units."),
    serving: Type.Optional(
      Type.Boolean({
        description:
          'ARM says it serves clients: provisioningState is not Failed or Deleting, resourceStopped is not "true" and regionEndpointEnabled is not "Disabled". Absent when ARM\'s state of it was not read.',
      }),
    ),
    notServingReason: Type.Optional(
      Type.String({ description: "Why it does not serve, in ARM's words.", maxLength: 256 }),
    ),
    policy: Type.Optional(
      Type.String({
        description:
          "namespace/name of the CapacityPolicy that scales it; absent when none does (its capacity is unmanaged).",
        maxLength: 320,
      }),
    ),
  },
  { additionalProperties: false },
);

const GeoReplicasSchema = Type.Object(
  {
    role: StringEnum(REPLICA_ROLES, { description: "The role of this policy's own target in its group." }),
    primary: Type.String({
      description: "ARM resource ID of the group's instance (the primary).",
      maxLength: 512,
    }),
    members: Type.Array(GeoReplicaSchema, {
      description: `The other members of the group (the primary and its replicas, this policy's target left out), as ARM listed them (at most ${MAX_GEO_REPLICAS}).`,
      maxItems: MAX_GEO_REPLICAS,
    }),
    unmanaged: Type.Integer({
      description: "How many of those members no CapacityPolicy scales.",
      minimum: 0,
    }),
    readAt: DateTime("When ARM listed the group (RFC 3339)."),
  },
  {
    additionalProperties: false,
    description:
      "The geo-replica group of the target (Azure SignalR / Web PubSub replicas, Premium tier): every member with its capacity and the policy that scales it. Absent when the instance has no replicas.",
  },
);

export const CapacityPolicyStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(
      Type.Integer({ description: "metadata.generation the status describes.", minimum: 0 }),
    ),
    current: Type.Optional(ObservedCapacitySchema),
    desired: Type.Optional(DesiredCapacitySchema),
    lastSample: Type.Optional(MetricSampleSchema),
    operation: Type.Optional(OperationSchema),
    unappliedUpdates: Type.Optional(UnappliedUpdatesSchema),
    unitLadders: Type.Optional(UnitLaddersSchema),
    geoReplicas: Type.Optional(GeoReplicasSchema),
    lastScaleTime: Type.Optional(DateTime("When the unit count or SKU last changed (RFC 3339).")),
    recommendations: Type.Optional(
      Type.Array(RecommendationSchema, {
        description: `Recent decisions, oldest first (at most ${MAX_RECOMMENDATIONS}); stabilization windows read them, so they survive failover.`,
        maxItems: MAX_RECOMMENDATIONS,
      }),
    ),
    scaleEvents: Type.Optional(
      Type.Array(ScaleEventSchema, {
        description: `Recent capacity changes, oldest first (at most ${MAX_SCALE_EVENTS}).`,
        maxItems: MAX_SCALE_EVENTS,
      }),
    ),
    scaleIns: Type.Optional(
      Type.Array(ScaleInRecordSchema, {
        description: `Recent scale-ins and how long each held before the next change, oldest first (at most ${MAX_SCALE_IN_RECORDS}): how long a smaller size is expected to hold (behavior.scaleDown.disruption) reads them.`,
        maxItems: MAX_SCALE_IN_RECORDS,
      }),
    ),
    consecutiveFailures: Type.Optional(
      Type.Integer({
        description: "Consecutive polls without usable metrics or with failed Azure calls, polls.",
        minimum: 0,
      }),
    ),
    ingestion: Type.Optional(IngestionSchema),
    anticipation: Type.Optional(AnticipationStatusSchema),
    notServing: Type.Optional(NotServingSchema),
    lastReasons: Type.Optional(
      Type.Array(Type.String({ description: "A reason code.", maxLength: 128 }), {
        description: `Machine-readable reason codes of the last decision (at most ${MAX_REASONS}).`,
        maxItems: MAX_REASONS,
      }),
    ),
    conditions: Type.Optional(
      Type.Array(PolicyConditionSchema, {
        description: "Latest observations of the policy's state.",
        maxItems: CONDITION_TYPES.length,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      }),
    ),
  },
  {
    additionalProperties: false,
    description: "Observed state, written by the operator through the status subresource.",
  },
);

// ---------------------------------------------------------------------------------------------
// the resource

const ObjectMetaSchema = Type.Object(
  {
    name: Type.String({ description: "Name of the policy.", minLength: 1, maxLength: 253 }),
    namespace: Type.String({
      description: "Namespace of the policy (and of the app-server Deployment).",
      minLength: 1,
      maxLength: 63,
      default: "default",
    }),
    uid: Type.Optional(Type.String()),
    resourceVersion: Type.Optional(Type.String()),
    generation: Type.Optional(Type.Integer({ minimum: 0 })),
    creationTimestamp: Type.Optional(Type.String()),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
    annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: true, description: "Standard object metadata (not part of the CRD schema)." },
);

export const CapacityPolicySchema = Type.Object(
  {
    apiVersion: StringEnum([API_VERSION], { description: `Always ${API_VERSION}.` }),
    kind: StringEnum([KIND], { description: `Always ${KIND}.` }),
    metadata: ObjectMetaSchema,
    spec: CapacityPolicySpecSchema,
    status: Type.Optional(CapacityPolicyStatusSchema),
  },
  {
    additionalProperties: false,
    description:
      "CapacityPolicy autoscales one Azure SignalR Service or Azure Web PubSub instance (units and SKU) and, optionally, the app-server Deployment behind it.",
  },
);

// ---------------------------------------------------------------------------------------------
// types (after defaulting)

export type CapacityPolicy = Static<typeof CapacityPolicySchema>;
export type CapacityPolicySpec = Static<typeof CapacityPolicySpecSchema>;
export type CapacityPolicyStatus = Static<typeof CapacityPolicyStatusSchema>;
export type PolicyMetadata = Static<typeof ObjectMetaSchema>;
export type PolicyTarget = Static<typeof TargetSchema>;
export type UnitRange = Static<typeof UnitRangeSchema>;
export type MetricsSpec = Static<typeof MetricsSchema>;
export type TrafficMetricSpec = Static<typeof TrafficMetricSchema>;
export type WorkloadShare = Static<typeof WorkloadShareSchema>;
export type AppServerSpec = Static<typeof AppServerSchema>;
export type BehaviorSpec = Static<typeof BehaviorSchema>;
export type ScalingRules = Static<typeof ScaleUpRulesSchema>;
export type ScaleDownRules = Static<typeof ScaleDownRulesSchema>;
export type DisruptionSpec = Static<typeof DisruptionSchema>;
export type ScalingPolicy = Static<typeof ScalingPolicySchema>;
export type ScheduleSpec = Static<typeof ScheduleSchema>;
export type ScaleInWindowSpec = Static<typeof ScaleInWindowSchema>;
export type FallbackSpec = Static<typeof FallbackSchema>;
export type AnticipationSpec = Static<typeof AnticipationSchema>;
export type HeadroomSpec = Static<typeof HeadroomSchema>;
export type SeasonalSpec = Static<typeof SeasonalSchema>;
export type LeadingSignalSpec = Static<typeof LeadingSignalSchema>;
export type FailoverSpec = Static<typeof FailoverSchema>;
export type PrometheusSourceSpec = Static<typeof PrometheusSourceSchema>;
export type ObservedCapacity = Static<typeof ObservedCapacitySchema>;
export type GeoReplicasStatus = Static<typeof GeoReplicasSchema>;
export type GeoReplicaStatus = Static<typeof GeoReplicaSchema>;
export type DesiredCapacity = Static<typeof DesiredCapacitySchema>;
export type MetricSample = Static<typeof MetricSampleSchema>;
export type ScaleOperation = Static<typeof OperationSchema>;
export type Recommendation = Static<typeof RecommendationSchema>;
export type ScaleEvent = Static<typeof ScaleEventSchema>;
export type ScaleInRecord = Static<typeof ScaleInRecordSchema>;
export type UnappliedUpdates = Static<typeof UnappliedUpdatesSchema>;
export type UnitLaddersStatus = Static<typeof UnitLaddersSchema>;
export type PolicyCondition = Static<typeof PolicyConditionSchema>;
export type AnticipationStatus = Static<typeof AnticipationStatusSchema>;
export type FailoverStatus = NonNullable<AnticipationStatus["failover"]>;
export type NotServingStatus = Static<typeof NotServingSchema>;

/** A JSON merge patch of `status`: a field set to `null` is removed, others replace it whole. */
export type StatusPatch = { [K in keyof CapacityPolicyStatus]?: CapacityPolicyStatus[K] | null };
