/**
 * The operator's leading-signal and status-write counters as its `/metrics` shows them: a scrape over HTTP and the
 * few sums the bench needs from the Prometheus text format (one sample a line,
 * `name{label="value",…} value [timestamp]`; `#` lines are comments). Only the families below are
 * read, so a line-wise reading is enough: their label values (a redacted base URL, an outcome
 * word) hold no newline.
 */
import { request } from "node:http";

/** `signalr_autoscaler_prometheus_queries_total` and `…_query_duration_seconds`, summed over servers. */
export interface PrometheusQueryCounters {
  /** Queries by outcome (`ok` or an error kind). */
  byOutcome: Record<string, number>;
  /** Every query, whatever its outcome. */
  total: number;
  /** Sum and count of the duration histogram, seconds (queue time behind the per-server bound included). */
  durationSumSeconds: number;
  durationCount: number;
  /** `signalr_autoscaler_status_writes_total`: the passes' status writes made and skipped. */
  statusWrites: { written: number; skipped: number };
}

const QUERIES = "signalr_autoscaler_prometheus_queries_total";
const DURATION = "signalr_autoscaler_prometheus_query_duration_seconds";
const STATUS_WRITES = "signalr_autoscaler_status_writes_total";

/** The samples of `name` (exactly that name, not its `_sum`/`_count` siblings): labels and value. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    let labelText = "";
    let valueText: string;
    if (rest.startsWith("{")) {
      const end = rest.lastIndexOf("}");
      labelText = rest.slice(1, end);
      valueText = rest.slice(end + 1);
    } else if (rest.startsWith(" ")) {
      valueText = rest;
    } else {
      continue;
    }
    const labels: Record<string, string> = {};
    for (const m of labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1] as string] = m[2] as string;
    out.push({ labels, value: Number(valueText.trim().split(" ")[0]) });
  }
  return out;
}

/** Reads the counters from a `/metrics` body. */
export function prometheusQueryCounters(text: string): PrometheusQueryCounters {
  const byOutcome: Record<string, number> = {};
  let total = 0;
  for (const s of samples(text, QUERIES)) {
    const outcome = s.labels["outcome"] ?? "";
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + s.value;
    total += s.value;
  }
  const sum = (name: string) => samples(text, name).reduce((a, s) => a + s.value, 0);
  const writes = (result: string) =>
    samples(text, STATUS_WRITES).find((s) => s.labels["result"] === result)?.value ?? 0;
  return {
    byOutcome,
    total,
    durationSumSeconds: sum(`${DURATION}_sum`),
    durationCount: sum(`${DURATION}_count`),
    statusWrites: { written: writes("written"), skipped: writes("skipped") },
  };
}

/** `after − before`, outcome by outcome (outcomes that did not move are left out). */
export function counterDelta(
  before: PrometheusQueryCounters,
  after: PrometheusQueryCounters,
): PrometheusQueryCounters {
  const byOutcome: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.byOutcome)) {
    const d = v - (before.byOutcome[k] ?? 0);
    if (d !== 0) byOutcome[k] = d;
  }
  return {
    byOutcome,
    total: after.total - before.total,
    durationSumSeconds: after.durationSumSeconds - before.durationSumSeconds,
    durationCount: after.durationCount - before.durationCount,
    statusWrites: {
      written: after.statusWrites.written - before.statusWrites.written,
      skipped: after.statusWrites.skipped - before.statusWrites.skipped,
    },
  };
}

/**
 * Scrapes `url` (the operator's `/metrics`) and reads the counters.
 * @throws Error for a status other than 200, a connection failure, or no answer within 10 s.
 */
export function scrapePrometheusQueryCounters(url: string): Promise<PrometheusQueryCounters> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`GET ${url} → ${res.statusCode}`));
        resolve(prometheusQueryCounters(Buffer.concat(chunks).toString("utf8")));
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: no answer in 10 s`)));
    req.on("error", reject);
    req.end();
  });
}
