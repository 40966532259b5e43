/**
 * Values Azure Monitor cannot have measured: what a bucket's raw values may be, given the capacity
 * that may have served it. A value outside these bounds is not demand; it is left out of the
 * decision (unknown for that bucket, so it also blocks scale-in) and reported.
 *
 * Pinned semantics, per field of a one-minute bucket (`maxUnits` = the largest unit count that may
 * have served it, see capacity-timeline.ts):
 * - any field: not a finite number ≥ 0 (NaN, ±Infinity, negative) → invalid;
 * - ServerLoad and ConnectionQuotaUtilization, %: above 100 % but within
 *   {@link OVER_CEILING_TOLERANCE} (5 %) of it → read as 100 % (saturated, a rounding of the
 *   ceiling); further above → invalid (not a percentage the service can report);
 * - connections: above `maxUnits × 1,000` (the connection quota: the service refuses clients
 *   beyond it) but within 10 % of it (the app servers' own connections count too) → read as the
 *   quota (saturated); further above → invalid;
 * - traffic (MessageCount, InboundTraffic, OutboundTraffic): only the first rule here; what the
 *   served size can carry is checked by the traffic signal against the tier tables.
 * A saturated value asks for what saturation asks (signals.ts: at least double the units), never
 * more — so no single value can move a recommendation beyond the saturation bound.
 */
import { CONNECTIONS_PER_UNIT } from "../capacity/skus.js";

/** How far above 100 % a percentage may be and still be read as the ceiling (5 %). */
const OVER_CEILING_TOLERANCE = 0.05;
/** How far above the connection quota a count may be and still be read as the quota (10 %). */
const OVER_QUOTA_TOLERANCE = 0.1;

/** One value that was not used as measured. */
export interface SampleFinding {
  /** The sample field (`serverLoadPercent`, `connections`, …). */
  field: string;
  /** Bucket start, ms. */
  startMs: number;
  /** The raw value. */
  value: number;
  /** invalid: left out; saturated: read as its ceiling. */
  kind: "invalid" | "saturated";
  /** The ceiling it was read as (saturated only). */
  ceiling?: number;
  why: string;
}

const PERCENT_FIELDS: readonly string[] = ["serverLoadPercent", "connectionQuotaUtilizationPercent"];

/**
 * Checks one value of a bucket (see the module comment): the value to use (`null` when left
 * out, `undefined` when absent) and what was found.
 */
function plausibleValue(
  field: string,
  value: number | null | undefined,
  startMs: number,
  maxUnits: number,
): { value: number | null | undefined; finding?: SampleFinding } {
  if (value === null || value === undefined) return { value };
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    return invalidValue(field, value, startMs, "not a finite number ≥ 0");
  }
  const ceiling = ceilingOf(field, maxUnits);
  if (ceiling === undefined || value <= ceiling) return { value };
  const percent = ceiling === 100 && PERCENT_FIELDS.includes(field);
  const tolerance = percent ? OVER_CEILING_TOLERANCE : OVER_QUOTA_TOLERANCE;
  const unit = percent ? " %" : ` connections (${maxUnits} units × 1,000)`;
  if (value > ceiling * (1 + tolerance)) {
    return invalidValue(
      field,
      value,
      startMs,
      `above ${ceiling}${unit} by more than ${tolerance * 100} %: the service cannot report it`,
    );
  }
  return {
    value: ceiling,
    finding: {
      field,
      startMs,
      value,
      kind: "saturated",
      ceiling,
      why: `read as the ceiling ${ceiling}${unit}`,
    },
  };
}

/** The ceiling of a field (100 % for percentages, the quota for connections), or none. */
function ceilingOf(field: string, maxUnits: number): number | undefined {
  if (PERCENT_FIELDS.includes(field)) return 100;
  if (field === "connections" && maxUnits > 0) return maxUnits * CONNECTIONS_PER_UNIT;
  return undefined;
}

function invalidValue(
  field: string,
  value: number,
  startMs: number,
  why: string,
): { value: null; finding: SampleFinding } {
  return { value: null, finding: { field, startMs, value, kind: "invalid", why } };
}

/** The value as measured is usable: known, finite, not above its ceiling. */
function plain(field: string, value: unknown, maxUnits: number): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return false;
  const ceiling = ceilingOf(field, maxUnits);
  return ceiling === undefined || value <= ceiling;
}

/** A bucket's sample with every value checked (see {@link plausibleValue}). */
export function plausibleSample<T extends { [K in F]: number | null }, F extends string>(
  sample: T,
  startMs: number,
  maxUnits: number,
  fields: readonly F[],
  findings: SampleFinding[],
): T {
  let plainSample = true;
  for (const f of fields) plainSample &&= plain(f, sample[f], maxUnits);
  if (plainSample) return sample;
  const out: T = { ...sample };
  for (const f of fields) {
    const checked = plausibleValue(f, sample[f], startMs, maxUnits);
    if (checked.finding) {
      findings.push(checked.finding);
      (out as Record<F, number | null>)[f] = checked.value ?? null;
    }
  }
  return out;
}

/** Azure Monitor's names of the sample fields, and their units, for people. */
const METRIC_NAMES: Readonly<Record<string, [string, string]>> = {
  serverLoadPercent: ["ServerLoad", " %"],
  connectionQuotaUtilizationPercent: ["ConnectionQuotaUtilization", " %"],
  connections: ["connection count", ""],
  messagesPerSecond: ["MessageCount", " messages/s"],
  inboundBytesPerSecond: ["InboundTraffic", " B/s"],
  outboundBytesPerSecond: ["OutboundTraffic", " B/s"],
};

/** One line for a reason: the findings of a kind, the first three in full (times UTC). */
export function describeFindings(findings: readonly SampleFinding[]): string {
  const shown = findings.slice(0, 3).map((f) => {
    const at = new Date(f.startMs).toISOString().slice(11, 16);
    const [name, unit] = METRIC_NAMES[f.field] ?? [f.field, ""];
    return `${name} ${formatValue(f.value)}${unit} at ${at} UTC (${f.why})`;
  });
  const more = findings.length > 3 ? `, and ${findings.length - 3} more` : "";
  return `${shown.join("; ")}${more}`;
}

const NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

function formatValue(v: number): string {
  return Number.isFinite(v) ? NUMBER.format(v) : String(v);
}
