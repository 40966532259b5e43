import { describe, expect, it } from "vitest";
import { decide } from "./decide.js";
import { counterIdleZeroReason } from "./idle-counters.js";
import { type MetricSample, windowSamples } from "./samples.js";
import { input, NOW, samples, spec } from "./testing.js";

/** Server load 2 %, 30 connections, traffic counters answered empty: read as 0 by the Azure adapter. */
const idle = (): MetricSample[] =>
  samples({
    serverLoadPercent: 2,
    connections: 30,
    messagesPerSecond: 0,
    inboundBytesPerSecond: 0,
    outboundBytesPerSecond: 0,
    zeroFilled: ["messagesPerSecond", "inboundBytesPerSecond", "outboundBytesPerSecond"],
  });

const trafficSpec = spec({
  metrics: {
    connections: { targetPercent: 80 },
    traffic: { workload: [{ scenario: "echo", share: 1 }], messageSizeBytes: 2048, targetPercent: 80 },
  },
});

const windowOf = (s: readonly MetricSample[]) =>
  windowSamples(s, { nowMs: NOW, windowSeconds: 300, ingestionDelaySeconds: 180, maxSampleAgeSeconds: 600 });

describe("CounterIdleZero", () => {
  it("a decision on idle counters says they were read as 0, and may scale in", () => {
    const d = decide(input({ spec: trafficSpec, samples: idle() }));
    const r = d.reasons.find((x) => x.code === "CounterIdleZero");
    // window 11:52–11:56 (5 minutes before the 3-minute ingestion delay)
    expect(r?.message).toBe(
      "MessageCount, InboundTraffic, OutboundTraffic at 11:52–11:56 UTC: answered with no data while server load or connections were reported — read as 0 (idle), not unknown",
    );
    expect(d.signals.find((s) => s.signal === "traffic")).toMatchObject({ status: "Ok", value: 0 });
    expect(d.scaleIn).toEqual({ allowed: true, blockedBy: [] });
    expect(d.action).toBe("Scale");
    expect(d.desired?.units).toBeLessThan(10);
  });

  it("groups counters by their minutes", () => {
    const s = idle().map((x, i) =>
      i === 11 ? { ...x, outboundBytesPerSecond: 0, zeroFilled: ["outboundBytesPerSecond" as const] } : x,
    );
    // the bucket of index 11 (11:56) has only OutboundTraffic zero-filled
    const r = counterIdleZeroReason(s, windowOf(s));
    expect(r?.message).toMatch(
      /^MessageCount, InboundTraffic at 11:52–11:55; OutboundTraffic at 11:52–11:56 UTC: /,
    );
  });

  it("says nothing when no counter of the window was zero-filled", () => {
    const measured = samples({ serverLoadPercent: 2, connections: 30, inboundBytesPerSecond: 0 });
    expect(counterIdleZeroReason(measured, windowOf(measured))).toBeUndefined();
    // zero-filled, but only in buckets newer than the ingestion delay
    const tooNew = idle().slice(-2);
    expect(counterIdleZeroReason(tooNew, windowOf(tooNew))).toBeUndefined();
  });

  it("a bucket where another sample measured the counter is not reported", () => {
    const s = idle();
    const other = s.map(({ zeroFilled: _, ...x }) => ({ ...x, inboundBytesPerSecond: 500 }));
    const r = counterIdleZeroReason([...s, ...other], windowOf([...s, ...other]));
    expect(r?.message).toMatch(/^MessageCount, OutboundTraffic at 11:52–11:56 UTC: /);
  });

  it("a failed pass says nothing about the samples", () => {
    const d = decide(
      input({ spec: trafficSpec, samples: idle(), failure: { kind: "Throttled", message: "429" } }),
    );
    expect(d.reasons.map((x) => x.code)).not.toContain("CounterIdleZero");
  });
});
