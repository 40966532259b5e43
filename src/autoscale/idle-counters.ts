/**
 * Says when a decision read idle traffic counters as 0. Azure Monitor gives a counter no value for
 * a minute in which it counted nothing (a point with only `timeStamp`, as the official getBatch
 * example writes it; or no point, no series, a `null` field); the Azure adapter then reads it as
 * 0 — but only when a gauge has a value for that minute (in the gauges' answer: the gauges and the
 * counters are separate queries) — and lists the field in the sample's `zeroFilled` (see
 * `readMetricsAnswer` in src/azure/metric-samples.ts). The window holds only minutes older than
 * the ingestion delay, so a minute still filling is never read as idle.
 * A decision built on such zeros, for instance a scale-in, names them in a `CounterIdleZero`
 * reason. Pure.
 */
import { type Reason, reason } from "./reasons.js";
import { type MetricSample, MINUTE_MS, type SampleField, type SampleWindow } from "./samples.js";
import { minuteRuns } from "./time.js";

/** The Azure Monitor metric behind each counter field. */
const COUNTER_METRICS: Partial<Record<SampleField, string>> = {
  messagesPerSecond: "MessageCount",
  inboundBytesPerSecond: "InboundTraffic",
  outboundBytesPerSecond: "OutboundTraffic",
};

/**
 * `CounterIdleZero` when a bucket of `window` has a counter read as 0 by the idle rule (a sample of
 * that bucket lists the field in `zeroFilled`, and the bucket's merged value is still 0), naming
 * the counters and their minutes (UTC); `undefined` when none has.
 */
export function counterIdleZeroReason(
  samples: readonly MetricSample[],
  window: SampleWindow,
): Reason | undefined {
  const filled = new Map<number, Set<SampleField>>();
  for (const s of samples) {
    if (!s.zeroFilled || s.zeroFilled.length === 0) continue;
    const start = Math.floor(new Date(s.time).getTime() / MINUTE_MS) * MINUTE_MS;
    const fields = filled.get(start) ?? new Set<SampleField>();
    for (const f of s.zeroFilled) fields.add(f);
    filled.set(start, fields);
  }
  const byCounter = new Map<string, number[]>();
  for (const b of window.buckets) {
    for (const f of filled.get(b.start) ?? []) {
      if (b.sample?.[f] !== 0) continue;
      const name = COUNTER_METRICS[f] ?? f;
      byCounter.set(name, [...(byCounter.get(name) ?? []), b.start]);
    }
  }
  if (byCounter.size === 0) return undefined;
  const byMinutes = new Map<string, string[]>();
  for (const [name, starts] of byCounter) {
    const runs = minuteRuns(starts);
    byMinutes.set(runs, [...(byMinutes.get(runs) ?? []), name]);
  }
  const parts = [...byMinutes].map(([runs, names]) => `${names.join(", ")} at ${runs}`);
  return reason(
    "CounterIdleZero",
    `${parts.join("; ")} UTC: answered with no data while server load or connections were reported — read as 0 (idle), not unknown`,
  );
}
