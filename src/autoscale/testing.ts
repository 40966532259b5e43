/**
 * Builders for decision inputs in tests and examples: a defaulted policy spec and runs of
 * one-minute samples. Not part of the public API (not exported from index.ts).
 */
import { DEFAULT_DISCONNECTIONS_PER_UNIT_HOUR } from "../api/constants.js";
import type { CapacityPolicySpec } from "../api/index.js";
import type { DecisionInput, DecisionPolicy } from "./decide.js";
import { emptySample, type MetricSample } from "./samples.js";

type DeepPartial<T> = T extends readonly (infer U)[]
  ? readonly U[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** A policy spec as the API server stores it after defaulting, server load 70 % only. */
export function baseSpec(): CapacityPolicySpec {
  return {
    target: {
      service: "SignalR",
      resourceId:
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat",
    },
    units: { min: 1, max: 100 },
    skus: ["Premium_P1"],
    metrics: {
      serverLoad: { targetPercent: 70 },
      window: "5m",
      ingestionDelay: "3m",
      maxSampleAge: "10m",
    },
    behavior: {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: "Max",
        policies: [{ type: "Steps", value: 100, periodSeconds: 60 }],
      },
      scaleDown: {
        stabilizationWindowSeconds: 0,
        selectPolicy: "Max",
        policies: [{ type: "Percent", value: 100, periodSeconds: 60 }],
        disruption: { policy: "Weigh", maxDisconnectionsPerUnitHour: DEFAULT_DISCONNECTIONS_PER_UNIT_HOUR },
      },
      tolerance: 0.1,
      settleSeconds: 300,
    },
    fallback: { failureThreshold: 3, action: "Hold" },
    mode: "Auto",
    pollIntervalSeconds: 30,
  };
}

function merge<T>(base: T, patch: DeepPartial<T> | undefined): T {
  if (patch === undefined) return base;
  if (Array.isArray(patch) || typeof patch !== "object" || patch === null) return patch as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] =
      typeof v === "object" && v !== null && !Array.isArray(v) && typeof b === "object" && b !== null
        ? merge(b, v as DeepPartial<typeof b>)
        : v;
  }
  return out as T;
}

/** {@link baseSpec} with `patch` merged in (objects deep, arrays replaced). */
export function spec(patch?: DeepPartial<CapacityPolicySpec>): CapacityPolicySpec {
  return merge(baseSpec(), patch);
}

/** A policy around a spec. */
export function policy(s: CapacityPolicySpec, annotations?: Record<string, string>): DecisionPolicy {
  return annotations ? { spec: s, metadata: { annotations } } : { spec: s };
}

/** The decision time used by most tests: 2025-06-02T12:00:00Z (a Monday). */
export const NOW = Date.parse("2025-06-02T12:00:00Z");

/** An all-unknown sample at `time`. */
export function blank(time: number): MetricSample {
  return emptySample(new Date(time).toISOString());
}

/**
 * `count` one-minute samples ending with the bucket that starts `minutesAgoNewest` minutes before
 * `now` (default: the newest bucket Azure could have, 1 minute ago), each with `values`.
 */
export function samples(
  values: Partial<Omit<MetricSample, "time">>,
  options: { count?: number; now?: number; newestMinutesAgo?: number } = {},
): MetricSample[] {
  const now = options.now ?? NOW;
  const count = options.count ?? 15;
  const newest = Math.floor(now / 60_000) * 60_000 - (options.newestMinutesAgo ?? 1) * 60_000;
  const out: MetricSample[] = [];
  for (let i = count - 1; i >= 0; i--) out.push({ ...blank(newest - i * 60_000), ...values });
  return out;
}

/** A decision input with defaults: P1 10 units, no history, at {@link NOW}. */
export function input(partial: Partial<DecisionInput> & { spec?: CapacityPolicySpec }): DecisionInput {
  const { spec: s, ...rest } = partial;
  return {
    policy: policy(s ?? baseSpec()),
    samples: [],
    current: { sku: "Premium_P1", units: 10 },
    now: NOW,
    ...rest,
  };
}
