/**
 * How long one burst of negotiations stays in the leading signal's reading, and how much larger it
 * can read there than it was: the window of a Prometheus rate. Pure.
 *
 * A query such as `sum(rate(negotiate_count[1m]))` counts every negotiation of the last minute:
 * a burst (the reconnects of the clients a unit change disconnected) is in every reading taken
 * while its time lies within the range, and leaves it once the range has passed it. `rate()`
 * extrapolates the increase it measured between the first and the last sample within the range to
 * the range's ends (Prometheus `promql/functions.go`, `extrapolatedRate`: by the distance to each
 * end, when it is within 1.1 average sample intervals, else half an interval), so a burst that
 * lies between those samples reads larger than it was: × 60 ÷ 45 in a 1-minute range scraped every
 * 15 s, and at most × (1 + 2.2 ÷ (n − 1)) with n samples in the range — 1.73 with the four a range
 * of at least 4 scrape intervals holds (docs/leading-signal.md asks for that). A burst of `D`
 * negotiations thus adds at most `RATE_EXTRAPOLATION · D ÷ range` per second to a reading.
 *
 * The range is read from the query with Prometheus' own PromQL grammar (`@prometheus-io/lezer-promql`):
 * the longest time a sample stays in the result — a range selector's range, a subquery's range
 * plus what its inner query looks back. A query without one (a recording rule's series) is taken
 * as the 1-minute range the documentation asks for.
 */
import { parser } from "@prometheus-io/lezer-promql";
import { parseDuration } from "../api/duration.js";

/**
 * The most `rate()`'s extrapolation enlarges a burst within its range: 2 (≥ 1.73, the bound with
 * four samples in the range; see the module comment).
 */
export const RATE_EXTRAPOLATION = 2;

/** The range assumed when the query shows none, seconds: 1 minute. */
export const DEFAULT_RATE_RANGE_SECONDS = 60;

type SyntaxNode = ReturnType<typeof parser.parse>["topNode"];

/** Seconds of a PromQL duration literal ("1m30s", "5m", "90" — seconds), or undefined (other units, expressions). */
function durationSeconds(text: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

/** The first duration of `node` (a range selector's range, a subquery's range), seconds. */
function rangeOf(node: SyntaxNode, query: string): number | undefined {
  const duration = node.getChild("DurationExpr");
  return duration ? durationSeconds(query.slice(duration.from, duration.to)) : undefined;
}

/** How long a sample stays in what `node` returns, seconds (0: no range within it). */
function lookback(node: SyntaxNode, query: string): number {
  let inner = 0;
  for (let child = node.firstChild; child; child = child.nextSibling) {
    inner = Math.max(inner, lookback(child, query));
  }
  if (node.name === "MatrixSelector") return Math.max(inner, rangeOf(node, query) ?? Number.NaN);
  if (node.name === "SubqueryExpr") return inner + (rangeOf(node, query) ?? Number.NaN);
  return inner;
}

const cache = new Map<string, number>();
const CACHE_SIZE = 256;

/**
 * The rate window of a leading-signal query, seconds: how long a sample stays in its result (see
 * the module comment); {@link DEFAULT_RATE_RANGE_SECONDS} when the query has no range, a range
 * that is not a plain duration, or does not parse. Never throws.
 */
export function rateWindowSeconds(query: string): number {
  const known = cache.get(query);
  if (known !== undefined) return known;
  let seconds = DEFAULT_RATE_RANGE_SECONDS;
  try {
    const found = lookback(parser.parse(query).topNode, query);
    if (Number.isFinite(found) && found > 0) seconds = found;
  } catch {
    // unparsable: the default
  }
  if (cache.size >= CACHE_SIZE) cache.clear();
  cache.set(query, seconds);
  return seconds;
}
