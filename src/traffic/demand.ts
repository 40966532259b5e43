/**
 * Demand over time: how many client connections want the service at a given time. From a trace
 * (`trace.ts`) or a built-in pattern, scaled to a peak. Pure.
 *
 * Patterns:
 * - `constant`: always the peak;
 * - `daily`: a smooth day (cosine) between `troughFraction` × peak and the peak at `peakHourUtc`;
 * - `ramp`: from 0 to the peak over `minutes`, then the peak.
 */
import { type Trace, traceDemand } from "./trace.js";

export type DemandPattern =
  | { kind: "constant" }
  | { kind: "daily"; peakHourUtc?: number; troughFraction?: number }
  | { kind: "ramp"; minutes: number };

/** Where an instance's demand comes from. */
export type DemandSpec =
  | { kind: "trace"; trace: Trace; peakConnections: number; startAt?: Date }
  | { kind: "pattern"; pattern: DemandPattern; peakConnections: number; startAt?: Date };

/** Connections wanted at a time. */
export type DemandFunction = (time: Date) => number;

const DAY_MS = 86_400_000;

/** Names accepted for {@link parsePattern}. */
const PATTERN_NAMES = ["constant", "daily", "ramp"] as const;

/** `constant`, `daily` or `ramp` (`ramp` over 60 minutes). @throws RangeError for other names. */
export function parsePattern(name: string): DemandPattern {
  switch (name.trim().toLowerCase()) {
    case "constant":
      return { kind: "constant" };
    case "daily":
      return { kind: "daily" };
    case "ramp":
      return { kind: "ramp", minutes: 60 };
    default:
      throw new RangeError(`unknown demand pattern "${name}" (known: ${PATTERN_NAMES.join(", ")})`);
  }
}

/**
 * The `daily` pattern with its peak hour (UTC, 0 ≤ h < 24, default 14) and its trough as a
 * fraction of the peak (0–1, default 0.2): a cosine day, the same every day — past days included,
 * so a history shows the cycle.
 * @throws RangeError for an hour or a fraction out of range.
 */
export function dailyPattern(peakHourUtc?: number, troughFraction?: number): DemandPattern {
  if (peakHourUtc !== undefined && !(peakHourUtc >= 0 && peakHourUtc < 24))
    throw new RangeError(`the daily peak hour must be in [0, 24) UTC, got ${peakHourUtc}`);
  if (troughFraction !== undefined && !(troughFraction >= 0 && troughFraction <= 1))
    throw new RangeError(`the daily trough must be a fraction of the peak in [0, 1], got ${troughFraction}`);
  return {
    kind: "daily",
    ...(peakHourUtc !== undefined ? { peakHourUtc } : {}),
    ...(troughFraction !== undefined ? { troughFraction } : {}),
  };
}

/** Fraction of the peak (0–1) a pattern asks for at `time`, replayed from `startAt`. */
export function patternFraction(pattern: DemandPattern, startAt: Date, time: Date): number {
  switch (pattern.kind) {
    case "constant":
      return 1;
    case "daily": {
      const peakHour = pattern.peakHourUtc ?? 14;
      const trough = Math.min(1, Math.max(0, pattern.troughFraction ?? 0.2));
      const sinceMidnight = ((time.getTime() % DAY_MS) + DAY_MS) % DAY_MS;
      const phase = ((sinceMidnight - peakHour * 3_600_000) / DAY_MS) * 2 * Math.PI;
      return trough + ((1 - trough) * (1 + Math.cos(phase))) / 2;
    }
    case "ramp": {
      const minutes = Math.max(pattern.minutes, 1e-9);
      const f = (time.getTime() - startAt.getTime()) / (minutes * 60_000);
      return Math.min(1, Math.max(0, f));
    }
  }
}

/**
 * The demand function of a spec; `defaultStart` is the replay start when the spec has none.
 * @throws RangeError for a negative or non-finite peak.
 */
export function demandFunction(spec: DemandSpec, defaultStart: Date): DemandFunction {
  if (!Number.isFinite(spec.peakConnections) || spec.peakConnections < 0) {
    throw new RangeError(`peak connections must be a non-negative number, got ${spec.peakConnections}`);
  }
  const start = spec.startAt ?? defaultStart;
  if (spec.kind === "trace") return traceDemand(spec.trace, start, spec.peakConnections);
  const { pattern, peakConnections } = spec;
  return (time) => patternFraction(pattern, start, time) * peakConnections;
}

/** A short description for `GET /_emulator/state` and the CLI. */
export function describeDemand(spec: DemandSpec): string {
  const peak = spec.peakConnections.toLocaleString("en-US");
  if (spec.kind === "trace") return `trace ${spec.trace.source}, peak ${peak}`;
  const p = spec.pattern;
  if (p.kind === "daily" && (p.peakHourUtc !== undefined || p.troughFraction !== undefined)) {
    const trough = Math.round((p.troughFraction ?? 0.2) * 100);
    return `daily (peak at ${p.peakHourUtc ?? 14}:00 UTC, trough ${trough} %), peak ${peak}`;
  }
  return `${p.kind}, peak ${peak}`;
}
