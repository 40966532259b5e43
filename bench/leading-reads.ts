/**
 * `npx tsx bench/leading-reads.ts`: one poll cycle's leading-signal reads alone, without the
 * control plane or Azure — the operator's own LeadingReader and PrometheusClient (default bound:
 * 4 queries at a time per server) against the bench's Prometheus stand-ins on loopback. For the
 * question the full bench answers only slowly: how long do N policies' queries hold a cycle when
 * they share S servers answering in L ms, and how many miss their 5 s timeout (queue time counts)?
 *
 * Flags: --policies 1000  --servers 1  --latency-ms 10  --rounds 3  (one line of JSON per round:
 * the read's wall time, queries received, most in flight on one server, failures by reason).
 */
import { parseArgs } from "node:util";
import { LeadingReader, type LeadingTarget } from "../src/controller/leading.js";
import { PrometheusClient } from "../src/prometheus/index.js";
import { startPrometheusStandIns } from "./prometheus-standin.js";

const { values: flags } = parseArgs({
  options: {
    policies: { type: "string", default: "1000" },
    servers: { type: "string", default: "1" },
    "latency-ms": { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
  },
});
const POLICIES = Number(flags.policies);
const SERVERS = Number(flags.servers);
const ROUNDS = Number(flags.rounds);

const standIns = await startPrometheusStandIns({
  servers: SERVERS,
  latencyMs: Number(flags["latency-ms"]),
  value: 1000 / 600,
});
const client = new PrometheusClient();
const reader = new LeadingReader({ client, now: Date.now });
const targets: LeadingTarget[] = Array.from({ length: POLICIES }, (_, i) => ({
  key: `bench/p-${i}`,
  namespace: "bench",
  spec: {
    prometheus: {
      serverAddress: standIns.urls[i % SERVERS] as string,
      query: `sum(rate(http_server_request_duration_seconds_count{service="p-${i}"}[1m]))`,
      timeout: "5s",
    },
    measures: "NewConnectionsPerSecond",
  },
}));
try {
  for (let round = 1; round <= ROUNDS; round++) {
    standIns.reset();
    const started = performance.now();
    const read = await reader.read(targets);
    const seconds = (performance.now() - started) / 1000;
    const failures: Record<string, number> = {};
    for (const o of read.values())
      if (o.error) failures[o.error.reason] = (failures[o.error.reason] ?? 0) + 1;
    const counts = standIns.counts();
    process.stdout.write(
      `${JSON.stringify({
        round,
        policies: POLICIES,
        servers: SERVERS,
        latencyMs: Number(flags["latency-ms"]),
        seconds: Number(seconds.toFixed(3)),
        received: counts.queries.reduce((a, b) => a + b, 0),
        maxInFlight: counts.maxInFlight,
        failures,
      })}\n`,
    );
  }
} finally {
  await client.close();
  await standIns.close();
}
