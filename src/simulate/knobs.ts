/**
 * What a frontier sweep (`sweep.ts`) varies in a policy: knobs, as data. Each knob names a spec
 * field, the values to try on a given spec (none when it does not apply to that spec) and how to
 * set one on a copy of the spec. The sweep runs the grid of every knob's values.
 *
 * To sweep another field, add a row to {@link SWEEP_KNOBS}; a plain field is one
 * {@link fieldKnob} line, e.g. `fieldKnob("anticipation.headroom.peakPercent", [0, 25, 50])`,
 * which applies only to policies that have the field's parent (here `spec.anticipation`).
 */
import { SIGNAL_NAMES } from "../api/constants.js";
import type { CapacityPolicySpec } from "../api/index.js";

/** A value a knob sets. */
export type KnobValue = number | string;

/** One thing a sweep varies. */
export interface SweepKnob<V extends KnobValue = KnobValue> {
  /** The spec field it sets, as tables and JSON show it (`metrics.*.targetPercent`, `units.min`). */
  readonly name: string;
  /** The values to try on `spec`, in order; none when the knob does not apply to it. */
  values(spec: CapacityPolicySpec): readonly V[];
  /** Sets `value` on `spec` — a copy of the policy's spec, which it changes in place. */
  apply(spec: CapacityPolicySpec, value: V): void;
  /** The spec's own setting, as shown for the policy under test (text when it is not one value). */
  read(spec: CapacityPolicySpec): KnobValue | undefined;
}

type Fields = Record<string, unknown>;

const isFields = (v: unknown): v is Fields => typeof v === "object" && v !== null && !Array.isArray(v);

/** The object holding the last field of `path` in `spec`, when every step to it exists. */
function parentOf(spec: CapacityPolicySpec, path: readonly string[]): Fields | undefined {
  let at: unknown = spec;
  for (const key of path.slice(0, -1)) {
    if (!isFields(at)) return undefined;
    at = at[key];
  }
  return isFields(at) ? at : undefined;
}

/**
 * A knob for one spec field by its dotted path below `spec` (`"units.min"`,
 * `"anticipation.mode"`): it applies to a spec that has the field's parent object, and tries
 * `values` (or the values a function of the spec gives).
 */
export function fieldKnob<V extends KnobValue>(
  path: string,
  values: readonly V[] | ((spec: CapacityPolicySpec) => readonly V[]),
): SweepKnob<V> {
  const keys = path.split(".");
  const last = keys[keys.length - 1] as string;
  return {
    name: path,
    values: (spec) => (parentOf(spec, keys) ? (typeof values === "function" ? values(spec) : values) : []),
    apply(spec, value) {
      const parent = parentOf(spec, keys);
      if (parent) parent[last] = value;
    },
    read(spec) {
      const value = parentOf(spec, keys)?.[last];
      return typeof value === "number" || typeof value === "string" ? value : undefined;
    },
  };
}

/**
 * `metrics.*.targetPercent`: one target, %, set on every signal the policy configures (server
 * load, connections, traffic); the policy's own targets read as `70/80/80` in that order when they
 * differ.
 */
export function signalTargetKnob(values: readonly number[]): SweepKnob<number> {
  const targets = (spec: CapacityPolicySpec) =>
    SIGNAL_NAMES.flatMap((s) => {
      const signal = spec.metrics[s];
      return signal ? [signal] : [];
    });
  return {
    name: "metrics.*.targetPercent",
    values: (spec) => (targets(spec).length > 0 ? values : []),
    apply(spec, value) {
      for (const signal of targets(spec)) signal.targetPercent = value;
    },
    read(spec) {
      const own = targets(spec).map((s) => s.targetPercent);
      if (own.length === 0) return undefined;
      return new Set(own).size === 1 ? (own[0] as number) : own.join("/");
    },
  };
}

/** The 1-2-5 series of unit counts: 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000. */
const ROUND_UNITS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

/**
 * Floors to try: the policy's own `units.min` and the next two counts of the 1-2-5 series above it
 * (2 → 5, 10; 5 → 10, 20), at most `units.max`. A higher floor buys a head start on a burst.
 */
export function unitsMinValues(spec: CapacityPolicySpec): number[] {
  const { min, max } = spec.units;
  return [min, ...ROUND_UNITS.filter((u) => u > min && u <= max).slice(0, 2)];
}

/** `anticipation.mode`: Off and Enabled (ForecastOnly acts like Off, so it is never a variant). */
function anticipationModes(): string[] {
  return ["Off", "Enabled"];
}

/**
 * The knobs `simulate --sweep` varies, in table order:
 * - every signal's target, 50 to 90 % by 10 (where a reactive policy trades units for headroom);
 * - `units.min`, see {@link unitsMinValues};
 * - `anticipation.mode` Off and the policy's own, for policies with `spec.anticipation`;
 * - `anticipation.headroom.peakPercent` 0 and 100 (no headroom, the whole recent peak kept).
 * That is 15 variants for a policy without anticipation, 60 with it (capped by `--max-trials`).
 */
export const SWEEP_KNOBS: readonly SweepKnob[] = [
  signalTargetKnob([50, 60, 70, 80, 90]),
  fieldKnob("units.min", unitsMinValues),
  fieldKnob("anticipation.mode", anticipationModes),
  fieldKnob("anticipation.headroom.peakPercent", [0, 100]),
];
