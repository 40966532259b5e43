import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import { StatusMemory } from "./status-memory.js";
import {
  messageWords,
  needsStatusWrite,
  recommendationSizes,
  refreshPhase,
  type StatusWriteSettings,
} from "./status-need.js";

type Status = Partial<CapacityPolicyStatus>;

const T0 = Date.parse("2025-06-02T12:00:00Z");
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A steady policy's status after a pass at `t` (figures that move with every pass included). */
function steady(t: number): Status {
  return {
    observedGeneration: 3,
    current: { sku: "Premium_P1", units: 20, replicas: 4 },
    desired: { sku: "Premium_P1", units: 20, replicas: 4 },
    lastSample: { time: iso(t - 4 * MIN), serverLoadPercent: 55.2 + (t % 7), connections: 14_000 + (t % 11) },
    lastScaleTime: "2025-06-02T10:00:00.000Z",
    recommendations: [
      { time: iso(t - MIN), sku: "Premium_P1", units: 20 },
      { time: iso(t - 30_000), sku: "Premium_P1", units: 20 },
      { time: iso(t), sku: "Premium_P1", units: 20 },
    ],
    scaleEvents: [
      {
        time: "2025-06-02T10:00:00.000Z",
        fromSku: "Premium_P1",
        fromUnits: 10,
        toSku: "Premium_P1",
        toUnits: 20,
      },
    ],
    consecutiveFailures: 0,
    lastReasons: ["WithinTolerance"],
    geoReplicas: {
      role: "Primary",
      primary: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat",
      members: [
        {
          resourceId:
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat/replicas/west",
          role: "Replica",
          location: "westus",
          sku: "Premium_P1",
          units: 10,
          serving: true,
          policy: "chat/west",
        },
      ],
      unmanaged: 0,
      readAt: iso(t),
    },
    ingestion: {
      observedDelaySeconds: 180,
      observedAt: iso(t - 2 * MIN),
      seenAt: iso(t),
      buckets: [{ time: iso(t - 5 * MIN), total: 1000 + (t % 13) }],
    },
    anticipation: {
      mode: "Enabled",
      leadTimeSeconds: 570,
      scaleDurationSeconds: 360,
      scaleDurationSource: "Measured",
      applied: false,
      units: 18,
      drivenBy: "Headroom",
      rules: [{ rule: "Headroom", units: 18, message: `peak ${(t % 17) + 15.5} units in the last 1h` }],
      peaks: [{ time: iso(t - 5 * MIN), units: 15 + (t % 3) }],
      growth: { time: iso(t - 4 * MIN), units: 17.1, perMinute: (t % 5) / 10 },
      leading: {
        state: "Ok",
        value: 12.5 + (t % 3),
        readAt: iso(t),
        newConnectionsPerSecond: 12.5,
        lifetimeSeconds: 1100,
        lifetimeSource: "Measured",
        connections: 13_750,
        message: `${12.5 + (t % 3)} new connections/s × 1100 s`,
      },
      message: `reactive need 17.2 units is higher than anticipation's ${t % 19} units`,
    },
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "Reconciled",
        message: `server load ${55 + (t % 7)}% of 70% at ${iso(t - 4 * MIN)}`,
        lastTransitionTime: "2025-06-02T09:00:00.000Z",
        observedGeneration: 3,
      },
      {
        type: "ScalingActive",
        status: "True",
        reason: "ValidMetric",
        message: "scaling on server load",
        lastTransitionTime: "2025-06-02T09:00:00.000Z",
        observedGeneration: 3,
      },
    ],
  };
}

const SETTINGS: StatusWriteSettings = { refreshIntervalMs: 5 * MIN, lastWrittenMs: T0 };
const before = steady(T0);
const later = (t = T0 + 30_000) => steady(t);
const need = (next: Status, now = T0 + 30_000, settings = SETTINGS) =>
  needsStatusWrite(before, next, now, settings);
/** `steady` after 30 s with `change` applied. */
const changed = (change: (s: Status) => void): Status => {
  const s = structuredClone(later());
  change(s);
  return s;
};

describe("needsStatusWrite at steady state", () => {
  it("skips a pass where only figures, times and bookkeeping moved, within the refresh interval", () => {
    expect(need(later())).toEqual({ write: false, reason: "refresh not due" });
  });

  it("writes it once the refresh interval has passed since the last write", () => {
    expect(need(later(T0 + 5 * MIN), T0 + 5 * MIN)).toEqual({ write: true, reason: "refresh" });
    expect(need(later(T0 + 5 * MIN - 1), T0 + 5 * MIN - 1).write).toBe(false);
  });

  it("refreshes on the policy's own grid: the first pass of each period of the refresh interval", () => {
    const phased = { ...SETTINGS, phaseMs: 2 * MIN };
    // Last written at T0, inside the period [T0 − 3 min, T0 + 2 min): the next period begins at T0 + 2 min.
    expect(need(later(T0 + 2 * MIN - 1), T0 + 2 * MIN - 1, phased).write).toBe(false);
    expect(need(later(T0 + 2 * MIN), T0 + 2 * MIN, phased)).toEqual({ write: true, reason: "refresh" });
    const again = { ...phased, lastWrittenMs: T0 + 2 * MIN };
    expect(need(later(T0 + 7 * MIN - 1), T0 + 7 * MIN - 1, again).write).toBe(false);
    expect(need(later(T0 + 7 * MIN), T0 + 7 * MIN, again).write).toBe(true);
  });

  it("spreads policies' phases over the interval, the same for a key every time", () => {
    const phases = Array.from({ length: 1000 }, (_, i) => refreshPhase(`ns/policy-${i}`, 5 * MIN));
    expect(phases.every((p) => Number.isInteger(p) && p >= 0 && p < 5 * MIN)).toBe(true);
    expect(refreshPhase("ns/policy-7", 5 * MIN)).toBe(phases[7]);
    // Over 10 poll intervals of 30 s, each gets about a tenth of the refreshes.
    const perSlot = new Array<number>(10).fill(0);
    for (const p of phases) perSlot[Math.floor(p / 30_000)] = (perSlot[Math.floor(p / 30_000)] ?? 0) + 1;
    expect(Math.max(...perSlot)).toBeLessThan(150);
    expect(Math.min(...perSlot)).toBeGreaterThan(50);
  });

  it("writes any difference when this replica has not written the policy yet (restart, new term)", () => {
    expect(need(later(), T0 + 30_000, { refreshIntervalMs: 5 * MIN, lastWrittenMs: undefined })).toEqual({
      write: true,
      reason: "refresh",
    });
  });

  it("skips an identical status even when the refresh is due", () => {
    expect(needsStatusWrite(before, structuredClone(before), T0 + 60 * MIN, SETTINGS)).toEqual({
      write: false,
      reason: "unchanged",
    });
  });

  it("writes a new policy's first status", () => {
    expect(needsStatusWrite(undefined, before, T0, SETTINGS)).toEqual({
      write: true,
      reason: "observedGeneration",
    });
  });
});

describe("needsStatusWrite: each relied-upon field is written at once", () => {
  const cases: [string, string, (s: Status) => void][] = [
    ["observedGeneration", "observedGeneration", (s) => (s.observedGeneration = 4)],
    [
      "a condition's status",
      "conditions",
      (s) => ((s.conditions?.[1] as { status: string }).status = "False"),
    ],
    [
      "a condition's reason",
      "conditions",
      (s) => ((s.conditions?.[1] as { reason: string }).reason = "Other"),
    ],
    [
      "a condition's words",
      "conditions",
      (s) => ((s.conditions?.[1] as { message: string }).message = "scaling on connections"),
    ],
    [
      "a condition's observedGeneration",
      "conditions",
      (s) => ((s.conditions?.[0] as { observedGeneration: number }).observedGeneration = 4),
    ],
    ["a condition added", "conditions", (s) => s.conditions?.pop()],
    [
      "a geo-replica stopped serving",
      "geoReplicas",
      (s) => ((s.geoReplicas?.members[0] as { serving: boolean }).serving = false),
    ],
    [
      "a geo-replica's policy deleted",
      "geoReplicas",
      (s) => {
        const member = s.geoReplicas?.members[0];
        if (member) delete member.policy;
      },
    ],
    [
      "the instance stopped serving",
      "notServing",
      (s) => (s.notServing = { since: iso(T0), reason: 'resourceStopped is "true"' }),
    ],
    [
      "a member of its group lost",
      "anticipation",
      (s) => {
        (s.anticipation as NonNullable<Status["anticipation"]>).failover = {
          lost: [
            {
              resourceId:
                "/subscriptions/s/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat/replicas/west",
              cause: "NotServing",
              reason: 'resourceStopped is "true"',
              since: iso(T0),
              connections: 3000,
            },
          ],
          ownConnections: 5000,
          share: 0.7,
          expectedConnections: 7100,
        };
      },
    ],
    ["current units", "current", (s) => ((s.current as { units: number }).units = 30)],
    ["current replicas", "current", (s) => ((s.current as { replicas: number }).replicas = 5)],
    ["desired SKU", "desired", (s) => ((s.desired as { sku: string }).sku = "Premium_P2")],
    ["desired units", "desired", (s) => ((s.desired as { units: number }).units = 30)],
    ["desired replicas", "desired", (s) => ((s.desired as { replicas: number }).replicas = 6)],
    [
      "an operation started",
      "operation",
      (s) =>
        (s.operation = {
          startedAt: iso(T0),
          from: { sku: "Premium_P1", units: 20 },
          to: { sku: "Premium_P1", units: 30 },
        }),
    ],
    [
      "an update that did not apply",
      "unappliedUpdates",
      (s) =>
        (s.unappliedUpdates = {
          count: 1,
          lastTime: iso(T0),
          to: { sku: "Premium_P1", units: 30 },
          instance: { sku: "Premium_P1", units: 20 },
        }),
    ],
    ["lastScaleTime", "lastScaleTime", (s) => (s.lastScaleTime = iso(T0))],
    ["a scale event", "scaleEvents", (s) => (s.scaleEvents = [])],
    ["consecutiveFailures", "consecutiveFailures", (s) => (s.consecutiveFailures = 1)],
    ["lastReasons", "lastReasons", (s) => (s.lastReasons = ["Stabilized"])],
    [
      "a recommendation of another size",
      "recommendations",
      (s) => s.recommendations?.push({ time: iso(T0 + 31_000), sku: "Premium_P1", units: 30 }),
    ],
    [
      "the observed ingestion delay",
      "ingestion",
      (s) => ((s.ingestion as { observedDelaySeconds: number }).observedDelaySeconds = 240),
    ],
    ["anticipation's units", "anticipation", (s) => ((s.anticipation as { units: number }).units = 19)],
    [
      "anticipation applied",
      "anticipation",
      (s) => ((s.anticipation as { applied: boolean }).applied = true),
    ],
    ["a rule's units", "anticipation", (s) => ((s.anticipation?.rules?.[0] as { units: number }).units = 25)],
    [
      "the leading signal's state",
      "anticipation",
      (s) => ((s.anticipation?.leading as { state: string }).state = "Unavailable"),
    ],
    [
      "the scale duration",
      "anticipation",
      (s) => ((s.anticipation as { scaleDurationSeconds: number }).scaleDurationSeconds = 400),
    ],
    ["anticipation removed", "anticipation", (s) => delete s.anticipation],
  ];
  it.each(cases)("%s → %s", (_, field, change) => {
    expect(need(changed(change))).toEqual({ write: true, reason: field });
  });
});

describe("needsStatusWrite: refreshed fields alone do not force a write", () => {
  const cases: [string, (s: Status) => void][] = [
    ["the last sample", (s) => (s.lastSample = { time: iso(T0), serverLoadPercent: 90, connections: 1 })],
    [
      "when the replica group was listed",
      (s) => ((s.geoReplicas as { readAt: string }).readAt = iso(T0 + 7 * MIN)),
    ],
    [
      "a condition's figures",
      (s) => ((s.conditions?.[0] as { message: string }).message = `server load 61% of 70% at ${iso(T0)}`),
    ],
    [
      "a condition's time in its message",
      (s) =>
        ((s.conditions?.[0] as { message: string }).message =
          `server load 55% of 70% at ${iso(T0 + 7 * MIN)}`),
    ],
    [
      "the newest recommendation's time",
      (s) => s.recommendations?.push({ time: iso(T0 + 31_000), sku: "Premium_P1", units: 20 }),
    ],
    ["the oldest recommendation dropped", (s) => s.recommendations?.shift()],
    [
      "ingestion bucket totals",
      (s) => (s.ingestion = { ...s.ingestion, buckets: [{ time: iso(T0), total: 5 }] }),
    ],
    ["ingestion observedAt", (s) => ((s.ingestion as { observedAt: string }).observedAt = iso(T0))],
    [
      "the observed ingestion delay within its minute",
      (s) => ((s.ingestion as { observedDelaySeconds: number }).observedDelaySeconds = 239),
    ],
    [
      "headroom peaks",
      (s) => ((s.anticipation as { peaks: unknown[] }).peaks = [{ time: iso(T0), units: 19.5 }]),
    ],
    ["censored-demand growth", (s) => delete s.anticipation?.growth],
    ["the leading signal's reading", (s) => ((s.anticipation?.leading as { value: number }).value = 99)],
    [
      "the measured connection lifetime",
      (s) => ((s.anticipation?.leading as { lifetimeSeconds: number }).lifetimeSeconds = 1200),
    ],
  ];
  it.each(cases)("%s", (_, change) => {
    const next = changed(change);
    expect(need(next)).toEqual({ write: false, reason: "refresh not due" });
    expect(need(next, T0 + 5 * MIN)).toEqual({ write: true, reason: "refresh" });
  });
});

describe("messageWords and recommendationSizes", () => {
  it("keeps the words of a message and drops its figures and times", () => {
    expect(messageWords("server load 61.5% of 70% at 2025-06-02T12:00:00.000Z (1,200 connections)")).toBe(
      "server load #% of #% at ###T#Z (# connections)",
    );
    expect(messageWords(undefined)).toBeUndefined();
  });

  it("lists each size's newest recommendation, newest first", () => {
    const r = (m: number, units: number) => ({ time: iso(T0 + m * MIN), sku: "Premium_P1" as const, units });
    expect(recommendationSizes([r(0, 20), r(1, 30), r(2, 20), r(3, 20)])).toEqual([
      "Premium_P1/20",
      "Premium_P1/30",
    ]);
    expect(recommendationSizes(undefined)).toEqual([]);
  });
});

describe("StatusMemory", () => {
  it("carries the computed status while the stored one is what this replica last wrote or read", () => {
    const memory = new StatusMemory();
    expect(memory.start("ns/chat", before)).toEqual({ status: before });
    const carried = later();
    memory.remember("ns/chat", structuredClone(before), carried, T0);
    expect(memory.start("ns/chat", before)).toEqual({ status: carried, lastWrittenMs: T0 });
    // Someone else wrote the status: the stored one is read, and the memory forgotten.
    const other = changed((s) => (s.consecutiveFailures = 7));
    expect(memory.start("ns/chat", other)).toEqual({ status: other });
    expect(memory.size).toBe(0);
    memory.remember("ns/chat", before, carried, undefined);
    memory.clear();
    expect(memory.start("ns/chat", before)).toEqual({ status: before });
  });
});
