/**
 * Traffic traces (`traces/*.csv`) as demand shapes. Pure.
 *
 * Format: CSV with the header `timestamp,value`, then one row per sample: a timestamp
 * `YYYY-MM-DD HH:MM:SS` (read as UTC; ISO 8601 with `T` and an optional zone also accepted) and a
 * finite, non-negative number. Timestamps strictly increase. Blank lines are ignored; anything else
 * is an error naming the line.
 *
 * Replay: a trace is played from its first row at the replay start and loops when it ends. Between
 * two rows the value is **interpolated linearly** (a 30-minute trace does not jump in steps).
 * Scaled to a peak: the trace's largest value maps to the peak.
 */

/** One row of a trace. */
export interface TracePoint {
  /** ms since the epoch. */
  t: number;
  value: number;
}

/** A parsed trace. */
export interface Trace {
  /** Where it came from (file path), for messages. */
  source: string;
  points: readonly TracePoint[];
  /** Largest value. */
  max: number;
  /** Time from the first row to the last, ms, plus one median step (the last row's span). */
  durationMs: number;
  /** Median time between rows, ms. */
  stepMs: number;
}

/** A file that is not `timestamp,value` CSV; the message names the file, the line and the problem. */
export class TraceFormatError extends Error {
  override readonly name = "TraceFormatError";
  constructor(
    message: string,
    readonly source: string,
    readonly line: number,
  ) {
    super(`${source}${line > 0 ? ` line ${line}` : ""}: ${message}`);
  }
}

const PLAIN = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/;
const ISO_ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** Parses a trace timestamp; `undefined` when it is not one. */
export function parseTraceTimestamp(text: string): number | undefined {
  const plain = PLAIN.exec(text);
  if (plain) {
    const [, y, mo, d, h, mi, s, frac] = plain;
    const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0));
    const check = new Date(ms);
    // Rejects 2014-02-30 and 25:00, which Date.UTC would roll over.
    if (check.getUTCDate() !== Number(d) || check.getUTCHours() !== Number(h)) return undefined;
    return ms + (frac ? Math.round(Number(frac) * 1000) : 0);
  }
  if (ISO_ZONED.test(text)) {
    const ms = Date.parse(text);
    return Number.isFinite(ms) ? ms : undefined;
  }
  return undefined;
}

/**
 * Parses `timestamp,value` CSV text.
 * @throws TraceFormatError for a missing or different header, a row without exactly two fields, a
 *   bad timestamp or value, timestamps that do not increase, or fewer than two rows.
 */
export function parseTrace(text: string, source = "trace"): Trace {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  let headerLine = 0;
  while (headerLine < lines.length && (lines[headerLine] ?? "").trim() === "") headerLine++;
  const header = (lines[headerLine] ?? "").trim();
  if (header === "")
    throw new TraceFormatError('the file is empty; expected a "timestamp,value" CSV', source, 0);
  const cols = header.split(",").map((c) => c.trim().replace(/^"|"$/g, "").toLowerCase());
  if (cols.length !== 2 || cols[0] !== "timestamp" || cols[1] !== "value") {
    throw new TraceFormatError(
      `expected the header "timestamp,value", got "${header.slice(0, 80)}"`,
      source,
      headerLine + 1,
    );
  }
  const points: TracePoint[] = [];
  for (let i = headerLine + 1; i < lines.length; i++) {
    const raw = (lines[i] ?? "").trim();
    if (raw === "") continue;
    const lineNo = i + 1;
    const fields = raw.split(",").map((f) => f.trim().replace(/^"|"$/g, ""));
    if (fields.length !== 2) {
      throw new TraceFormatError(
        `expected 2 fields "timestamp,value", got ${fields.length}: "${raw.slice(0, 80)}"`,
        source,
        lineNo,
      );
    }
    const [ts, val] = fields as [string, string];
    const t = parseTraceTimestamp(ts);
    if (t === undefined) {
      throw new TraceFormatError(
        `"${ts}" is not a timestamp (expected YYYY-MM-DD HH:MM:SS, UTC)`,
        source,
        lineNo,
      );
    }
    const value = val === "" ? Number.NaN : Number(val);
    if (!Number.isFinite(value) || value < 0) {
      throw new TraceFormatError(`"${val}" is not a finite, non-negative number`, source, lineNo);
    }
    const prev = points[points.length - 1];
    if (prev && t <= prev.t) {
      throw new TraceFormatError(`timestamp ${ts} does not come after the previous row`, source, lineNo);
    }
    points.push({ t, value });
  }
  if (points.length < 2)
    throw new TraceFormatError(`a trace needs at least 2 rows, got ${points.length}`, source, 0);
  const steps = points
    .slice(1)
    .map((p, i) => p.t - (points[i] as TracePoint).t)
    .sort((a, b) => a - b);
  const stepMs = steps[Math.floor(steps.length / 2)] as number;
  const first = points[0] as TracePoint;
  const last = points[points.length - 1] as TracePoint;
  const max = Math.max(...points.map((p) => p.value));
  return { source, points, max, stepMs, durationMs: last.t - first.t + stepMs };
}

/**
 * The trace's value at `offsetMs` after its first row, looping: linear between rows, and from the
 * last row back to the first over one median step.
 */
export function traceValueAt(trace: Trace, offsetMs: number): number {
  const pts = trace.points;
  const first = pts[0] as TracePoint;
  const d = ((offsetMs % trace.durationMs) + trace.durationMs) % trace.durationMs;
  const t = first.t + d;
  // Binary search for the last point at or before t.
  let lo = 0;
  let hi = pts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((pts[mid] as TracePoint).t <= t) lo = mid;
    else hi = mid - 1;
  }
  const a = pts[lo] as TracePoint;
  const b = lo + 1 < pts.length ? (pts[lo + 1] as TracePoint) : { t: a.t + trace.stepMs, value: first.value };
  if (b.t === a.t) return a.value;
  return a.value + ((b.value - a.value) * (t - a.t)) / (b.t - a.t);
}

/**
 * A demand function: connections at a time, the trace replayed from `startAt` and scaled so that
 * its largest value is `peak`.
 * @throws RangeError for a negative or non-finite peak.
 */
export function traceDemand(trace: Trace, startAt: Date, peak: number): (time: Date) => number {
  if (!Number.isFinite(peak) || peak < 0)
    throw new RangeError(`peak must be a non-negative number, got ${peak}`);
  const scale = trace.max > 0 ? peak / trace.max : 0;
  const start = startAt.getTime();
  return (time) => traceValueAt(trace, time.getTime() - start) * scale;
}
