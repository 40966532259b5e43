/**
 * The Prometheus text exposition format, version 0.0.4 ("Exposition formats", text format
 * details), written from metric families: what the emulator's app servers serve on `/metrics`.
 *
 * prom-client (the operator's own `/metrics`) cannot write sample timestamps, which the app
 * servers need (their samples carry the virtual clock's time), so this is a small serializer of its
 * own. Per the format:
 *
 * - `# HELP <name> <text>` with `\` and line feeds escaped (`\\`, `\n`), then `# TYPE <name> <type>`,
 *   then the family's samples, together;
 * - `<name>{<label>="<value>",…} <value> [<timestamp>]`, label values with `\`, `"` and line feeds
 *   escaped (`\\`, `\"`, `\n`); values as Go's ParseFloat reads them (`NaN`, `+Inf`, `-Inf`);
 *   timestamps in integer milliseconds since the epoch;
 * - metric names `[a-zA-Z_:][a-zA-Z0-9_:]*`, label names `[a-zA-Z_][a-zA-Z0-9_]*` (not `__…`,
 *   reserved); a histogram's samples are `<name>_bucket` (with `le`, cumulative, ending with
 *   `le="+Inf"` equal to the count), `<name>_sum` and `<name>_count`;
 * - every line ends with a line feed.
 */

/** The `Content-Type` of the text format. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

/** Label names to values. */
export type Labels = Readonly<Record<string, string>>;

/** One sample line. */
export interface Sample {
  /** The family's name, or it with the suffix its type allows (`_bucket`, `_sum`, `_count`). */
  name: string;
  labels?: Labels;
  value: number;
  /** Integer ms since the epoch; none = the scraper's time. */
  timestampMs?: number;
}

/** A metric family: its metadata and samples. */
export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: readonly Sample[];
}

/** One bucket of a histogram: observations ≤ `le`, cumulative. */
export interface HistogramBucket {
  le: number;
  count: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

const SUFFIXES: Readonly<Record<MetricType, readonly string[]>> = {
  counter: [""],
  gauge: [""],
  untyped: [""],
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["", "_sum", "_count"],
};

/** A label value escaped for the text format: `\` → `\\`, `"` → `\"`, line feed → `\n`. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`));
}

/** A `# HELP` text escaped for the text format: `\` → `\\`, line feed → `\n`. */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === "\n" ? "\\n" : "\\\\"));
}

/** A sample value as the format writes it: `NaN`, `+Inf`, `-Inf`, or the shortest decimal. */
export function formatSampleValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

function formatLabels(labels: Labels | undefined): string {
  if (!labels) return "";
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  const parts = entries.map(([name, value]) => {
    if (!LABEL_NAME.test(name) || name.startsWith("__")) {
      throw new RangeError(`"${name}" is not a valid label name`);
    }
    return `${name}="${escapeLabelValue(value)}"`;
  });
  return `{${parts.join(",")}}`;
}

function formatSample(sample: Sample): string {
  let line = `${sample.name}${formatLabels(sample.labels)} ${formatSampleValue(sample.value)}`;
  if (sample.timestampMs !== undefined) {
    if (!Number.isSafeInteger(sample.timestampMs)) {
      throw new RangeError(`a sample timestamp must be whole milliseconds, got ${sample.timestampMs}`);
    }
    line += ` ${sample.timestampMs}`;
  }
  return line;
}

/**
 * The text of `families`, in order.
 * @throws RangeError for an invalid metric or label name, a family named twice, a sample whose
 *   name does not belong to its family's type, or a timestamp that is not whole milliseconds.
 */
export function formatExposition(families: readonly MetricFamily[]): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const family of families) {
    if (!METRIC_NAME.test(family.name)) throw new RangeError(`"${family.name}" is not a valid metric name`);
    if (seen.has(family.name)) throw new RangeError(`metric family "${family.name}" appears twice`);
    seen.add(family.name);
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    const allowed = SUFFIXES[family.type].map((s) => family.name + s);
    for (const sample of family.samples) {
      if (!allowed.includes(sample.name)) {
        throw new RangeError(
          `sample "${sample.name}" does not belong to ${family.type} "${family.name}" (expected ${allowed.join(", ")})`,
        );
      }
      lines.push(formatSample(sample));
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/**
 * The samples of one histogram series: `<name>_bucket` per bucket and `le="+Inf"` (= `count`),
 * `<name>_sum`, `<name>_count`, all with `labels` and `timestampMs`.
 * @throws RangeError when bucket bounds are not finite or do not increase, counts decrease, or `count` is below the
 *   last bucket's.
 */
export function histogramSamples(
  name: string,
  labels: Labels,
  buckets: readonly HistogramBucket[],
  sum: number,
  count: number,
  timestampMs?: number,
): Sample[] {
  const at = timestampMs === undefined ? {} : { timestampMs };
  const samples: Sample[] = [];
  let previous: HistogramBucket | undefined;
  for (const b of buckets) {
    if (!Number.isFinite(b.le)) throw new RangeError(`bucket bounds are finite (+Inf is added), got ${b.le}`);
    if (previous && !(b.le > previous.le))
      throw new RangeError(`bucket bounds must increase: ${b.le} after ${previous.le}`);
    if (previous && b.count < previous.count) {
      throw new RangeError(`bucket counts are cumulative: ${b.count} at le=${b.le} after ${previous.count}`);
    }
    samples.push({
      name: `${name}_bucket`,
      labels: { ...labels, le: formatSampleValue(b.le) },
      value: b.count,
      ...at,
    });
    previous = b;
  }
  if (previous && count < previous.count) {
    throw new RangeError(`the count ${count} is below the last bucket's ${previous.count}`);
  }
  samples.push(
    { name: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: count, ...at },
    { name: `${name}_sum`, labels, value: sum, ...at },
    { name: `${name}_count`, labels, value: count, ...at },
  );
  return samples;
}
