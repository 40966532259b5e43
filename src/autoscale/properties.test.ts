/**
 * Property tests over random policies, samples and histories.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DECISION_CONDITION_TYPES } from "../api/constants.js";
import type { CapacityPolicySpec } from "../api/index.js";
import { DEFAULT_LADDERS, type ScalableSku } from "../capacity/skus.js";
import { SIGNALR_SCENARIOS, WEBPUBSUB_SCENARIOS } from "../capacity/tier-tables.js";
import { type DecisionInput, decide } from "./decide.js";
import type { MetricSample } from "./samples.js";
import { compareSizes, SizeList } from "./sizes.js";
import { baseSpec, NOW } from "./testing.js";

const SKUS: ScalableSku[] = ["Standard_S1", "Premium_P1", "Premium_P2"];

const skusArb = fc.subarray(SKUS, { minLength: 1 });

/** `arb` about `percent` % of the time, else null. */
const maybe = <T>(arb: fc.Arbitrary<T>, percent: number): fc.Arbitrary<T | null> =>
  fc.oneof({ arbitrary: arb, weight: percent }, { arbitrary: fc.constant(null), weight: 100 - percent });

const policyArb: fc.Arbitrary<CapacityPolicySpec> = skusArb.chain((skus) => {
  const hasP2 = skus.includes("Premium_P2");
  const onlyP2 = hasP2 && skus.length === 1;
  const range = onlyP2
    ? fc
        .integer({ min: 100, max: 1000 })
        .chain((min) => fc.record({ min: fc.constant(min), max: fc.integer({ min, max: 1000 }) }))
    : hasP2
      ? fc
          .integer({ min: 100, max: 1000 })
          .chain((max) => fc.record({ min: fc.integer({ min: 1, max }), max: fc.constant(max) }))
      : fc
          .integer({ min: 1, max: 100 })
          .chain((max) => fc.record({ min: fc.integer({ min: 1, max }), max: fc.constant(max) }));
  const service = fc.constantFrom("SignalR" as const, "WebPubSub" as const);
  return fc.tuple(range, service).chain(([units, svc]) => {
    const scenarios = svc === "SignalR" ? SIGNALR_SCENARIOS : WEBPUBSUB_SCENARIOS;
    const policyEntry = fc.record({
      type: fc.constantFrom("Units" as const, "Percent" as const, "Steps" as const),
      value: fc.integer({ min: 1, max: 200 }),
      periodSeconds: fc.integer({ min: 15, max: 1800 }),
    });
    const rules = fc.record({
      stabilizationWindowSeconds: fc.integer({ min: 0, max: 1800 }),
      selectPolicy: fc.constantFrom("Max" as const, "Min" as const, "Disabled" as const),
      policies: fc.array(policyEntry, { minLength: 1, maxLength: 3 }),
    });
    const signals = fc
      .record(
        {
          serverLoad: fc.record({ targetPercent: fc.integer({ min: 10, max: 100 }) }),
          connections: fc.record({ targetPercent: fc.integer({ min: 10, max: 100 }) }),
          traffic: fc.record({
            workload: fc.constantFrom(...scenarios).map((scenario) => [{ scenario, share: 1 }]),
            messageSizeBytes: fc.integer({ min: 100, max: 65_536 }),
            targetPercent: fc.integer({ min: 10, max: 100 }),
          }),
        },
        { requiredKeys: [] },
      )
      .filter((m) => Object.keys(m).length > 0);
    return fc
      .record({
        signals,
        window: fc.constantFrom("1m" as const, "5m" as const, "15m" as const),
        ingestionDelay: fc.constantFrom("0s", "1m", "3m"),
        maxSampleAge: fc.constantFrom("10m", "30m"),
        scaleUp: rules,
        scaleDown: fc.record({
          stabilizationWindowSeconds: fc.integer({ min: 0, max: 1800 }),
          selectPolicy: fc.constantFrom("Max" as const, "Min" as const, "Disabled" as const),
          policies: fc.array(policyEntry, { minLength: 1, maxLength: 3 }),
          disruption: fc.record({
            policy: fc.constantFrom("Weigh" as const, "Ignore" as const),
            maxDisconnectionsPerUnitHour: fc.integer({ min: 0, max: 100_000 }),
          }),
        }),
        tolerance: fc.double({ min: 0, max: 0.5, noNaN: true }),
        settleSeconds: fc.integer({ min: 0, max: 900 }),
        schedule: maybe(
          fc.record({
            cron: fc.constantFrom("0 * * * *", "30 11 * * *", "0 8 * * 1-5"),
            durationMinutes: fc.integer({ min: 1, max: 600 }),
            minUnits: fc.integer({ min: units.min, max: units.max }),
          }),
          25,
        ),
        window2: maybe(fc.constantFrom("0 * * * *", "0 1 * * *"), 20),
        fallback: fc.record({
          failureThreshold: fc.integer({ min: 1, max: 4 }),
          action: fc.constantFrom("Hold" as const, "Fixed" as const),
          units: fc.integer({ min: units.min, max: units.max }),
        }),
        mode: fc.constantFrom("Auto" as const, "Recommend" as const, "Paused" as const),
        replicas: maybe(fc.integer({ min: 1, max: 20 }), 50),
      })
      .map((r): CapacityPolicySpec => {
        const b = baseSpec();
        const spec: CapacityPolicySpec = {
          ...b,
          target: { ...b.target, service: svc },
          units,
          skus,
          metrics: {
            ...r.signals,
            window: r.window,
            ingestionDelay: r.ingestionDelay,
            maxSampleAge: r.maxSampleAge,
          },
          behavior: {
            scaleUp: r.scaleUp,
            scaleDown: r.scaleDown,
            tolerance: r.tolerance,
            settleSeconds: r.settleSeconds,
          },
          fallback: r.fallback,
          mode: r.mode,
        };
        if (r.schedule) spec.schedules = [{ name: "s", timeZone: "Europe/Madrid", ...r.schedule }];
        if (r.window2)
          spec.scaleInWindows = [{ name: "w", cron: r.window2, timeZone: "UTC", durationMinutes: 30 }];
        if (r.replicas !== null)
          spec.appServer = { deploymentName: "hub", replicas: { min: 1, max: r.replicas + 5 } };
        return spec;
      });
  });
});

const FIELDS = [
  ["serverLoadPercent", 200],
  ["connectionQuotaUtilizationPercent", 150],
  ["connections", 2_000_000],
  ["messagesPerSecond", 1e6],
  ["inboundBytesPerSecond", 1e9],
  ["outboundBytesPerSecond", 5e9],
] as const;

/**
 * One sample a minute over the last 40 minutes around random levels. With `nulls`, values and whole
 * samples go missing at random.
 */
const samplesArb = (nulls: boolean): fc.Arbitrary<MetricSample[]> =>
  fc
    .record({
      levels: fc.tuple(...FIELDS.map(([, max]) => fc.double({ min: 0, max, noNaN: true }))),
      minutes: fc.array(
        fc.record({
          jitter: fc.tuple(...FIELDS.map(() => fc.double({ min: 0.5, max: 1.5, noNaN: true }))),
          missing: nulls ? fc.tuple(...FIELDS.map(() => fc.boolean())) : fc.constant(FIELDS.map(() => false)),
          dropped: nulls ? fc.integer({ min: 0, max: 9 }).map((x) => x === 0) : fc.constant(false),
        }),
        { minLength: 41, maxLength: 41 },
      ),
      sparse: nulls ? fc.boolean() : fc.constant(false),
    })
    .map(({ levels, minutes, sparse }) =>
      minutes.flatMap((m, i): MetricSample[] => {
        if (m.dropped) return [];
        const sample: MetricSample = {
          time: new Date(NOW - i * 60_000).toISOString(),
          serverLoadPercent: null,
          connectionQuotaUtilizationPercent: null,
          connections: null,
          messagesPerSecond: null,
          inboundBytesPerSecond: null,
          outboundBytesPerSecond: null,
        };
        FIELDS.forEach(([field], k) => {
          // With `sparse`, a value goes missing only now and then.
          const gone = (m.missing[k] ?? false) && (!sparse || i % 7 === k);
          sample[field] = gone ? null : (levels[k] ?? 0) * (m.jitter[k] ?? 1);
        });
        return [sample];
      }),
    );

/** A full input: a current size within the policy's bounds where one exists. */
const inputArb = (nulls: boolean): fc.Arbitrary<DecisionInput> =>
  policyArb.chain((spec) => {
    const rungs: { sku: ScalableSku; units: number }[] = [];
    for (const sku of spec.skus) for (const units of DEFAULT_LADDERS[sku]) rungs.push({ sku, units });
    const inRange = rungs.filter((r) => r.units >= spec.units.min && r.units <= spec.units.max);
    const pool = inRange.length > 0 ? inRange : rungs;
    const recArb = fc.record({
      secondsAgo: fc.integer({ min: 0, max: 3600 }),
      size: fc.constantFrom(...pool),
    });
    return fc
      .record({
        // Mostly an instance within the policy's bounds; sometimes anywhere on the allowed ladders.
        current: fc.oneof({ arbitrary: fc.constantFrom(...pool), weight: 3 }, fc.constantFrom(...rungs)),
        replicas: maybe(fc.integer({ min: 0, max: 30 }), 50),
        samples: samplesArb(nulls),
        recs: fc.array(recArb, { maxLength: 70 }),
        events: fc.array(fc.tuple(recArb, fc.constantFrom(...pool)), { maxLength: 5 }),
        failures: fc.integer({ min: 0, max: 5 }),
        failure: maybe(fc.constant({ kind: "Throttled", message: "429" }), 10),
      })
      .map((r): DecisionInput => {
        const now = NOW;
        const input: DecisionInput = {
          policy: { spec },
          samples: r.samples,
          current: { ...r.current, ...(r.replicas === null ? {} : { replicas: r.replicas }) },
          now,
          history: {
            recommendations: r.recs.map((x) => ({
              time: new Date(now - x.secondsAgo * 1000).toISOString(),
              ...x.size,
            })),
            scaleEvents: r.events.map(([x, from]) => ({
              time: new Date(now - x.secondsAgo * 1000).toISOString(),
              fromSku: from.sku,
              fromUnits: from.units,
              toSku: x.size.sku,
              toUnits: x.size.units,
            })),
            consecutiveFailures: r.failures,
          },
        };
        if (r.failure !== null) input.failure = r.failure;
        return input;
      });
  });

const RUNS = { numRuns: 400 };

describe("decide: properties", () => {
  it("no decision leaves units.min..units.max: without a reachable size in it there is none (Ready=False)", () => {
    fc.assert(
      fc.property(fc.oneof(inputArb(true), inputArb(false)), (input) => {
        const d = decide(input);
        const spec = input.policy.spec;
        const sizes = new SizeList(
          spec.skus,
          { sku: input.current.sku as ScalableSku, units: input.current.units },
          DEFAULT_LADDERS,
        );
        const anyInRange = sizes.rungs.some((u) => u >= spec.units.min && u <= spec.units.max);
        const desired = d.desired;
        if (!anyInRange) {
          expect(desired).toBeUndefined();
          expect(d.action).toBe("None");
          expect(d.conditions.find((c) => c.type === "Ready")?.status).toBe("False");
          return;
        }
        expect(desired).toBeDefined();
        if (!desired) return;
        expect(spec.skus).toContain(desired.sku);
        expect(DEFAULT_LADDERS[desired.sku]).toContain(desired.units);
        expect(desired.units).toBeGreaterThanOrEqual(spec.units.min);
        expect(desired.units).toBeLessThanOrEqual(spec.units.max);
        if (desired.replicas !== undefined && spec.appServer) {
          expect(desired.replicas).toBeGreaterThanOrEqual(spec.appServer.replicas.min);
          expect(desired.replicas).toBeLessThanOrEqual(spec.appServer.replicas.max);
        }
        expect(d.history.recommendations.length).toBeLessThanOrEqual(60);
        expect(d.history.scaleEvents.length).toBeLessThanOrEqual(30);
      }),
      RUNS,
    );
  });

  it("unknown data never lowers the capacity", () => {
    fc.assert(
      fc.property(inputArb(true), (input) => {
        const d = decide(input);
        const blind = input.failure !== undefined || d.signals.some((s) => s.status !== "Ok");
        if (!blind || !d.desired) return;
        const spec = input.policy.spec;
        const current = { sku: input.current.sku as ScalableSku, units: input.current.units };
        if (current.units < spec.units.min || current.units > spec.units.max) return;
        expect(compareSizes(d.desired, current)).toBeGreaterThanOrEqual(0);
        expect(d.scaleIn.allowed).toBe(false);
      }),
      RUNS,
    );
  });

  it("is deterministic: the same inputs (even after a JSON round trip) give the same decision", () => {
    fc.assert(
      fc.property(fc.oneof(inputArb(true), inputArb(false)), (input) => {
        const a = decide(input);
        const b = decide(structuredClone(input));
        const c = decide(JSON.parse(JSON.stringify(input)) as DecisionInput);
        expect(b).toEqual(a);
        expect(c).toEqual(a);
      }),
      { numRuns: 200 },
    );
  });

  it("never throws and always states every condition type once", () => {
    fc.assert(
      fc.property(fc.oneof(inputArb(true), inputArb(false)), (input) => {
        const d = decide(input);
        expect(new Set(d.conditions.map((c) => c.type)).size).toBe(DECISION_CONDITION_TYPES.length);
        expect(d.reasons.length).toBeGreaterThan(0);
      }),
      { numRuns: 200 },
    );
  });
  it("anticipation never wants less capacity than without it, nor more than units.max", () => {
    const anticipationArb = fc.record({
      peakPercent: fc.integer({ min: 0, max: 100 }),
      horizonMinutes: fc.integer({ min: 1, max: 240 }),
      peaks: fc.array(
        fc.record({
          minutesAgo: fc.integer({ min: 0, max: 300 }),
          units: fc.double({ min: 0, max: 2000, noNaN: true }),
        }),
        { maxLength: 30 },
      ),
      growth: maybe(
        fc.record({
          minutesAgo: fc.integer({ min: 0, max: 60 }),
          units: fc.double({ min: 0, max: 2000, noNaN: true }),
          perMinute: fc.double({ min: -100, max: 100, noNaN: true }),
        }),
        50,
      ),
    });
    fc.assert(
      fc.property(fc.oneof(inputArb(true), inputArb(false)), anticipationArb, (base, a) => {
        const off = decide(base);
        const on: DecisionInput = structuredClone(base);
        on.policy.spec.anticipation = {
          mode: "Enabled",
          scaleDuration: "5m",
          headroom: { peakPercent: a.peakPercent, horizon: `${a.horizonMinutes}m` },
        };
        const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000).toISOString();
        const anticipation: NonNullable<DecisionInput["history"]>["anticipation"] = {
          mode: "Enabled",
          leadTimeSeconds: 480,
          scaleDurationSeconds: 300,
          scaleDurationSource: "Default",
          applied: false,
          peaks: a.peaks.map((p) => ({ time: at(p.minutesAgo), units: p.units })),
          message: "",
        };
        if (a.growth) anticipation.growth = { ...a.growth, time: at(a.growth.minutesAgo) };
        on.history = {
          ...(on.history ?? { recommendations: [], scaleEvents: [], consecutiveFailures: 0 }),
          anticipation,
        };
        const d = decide(on);
        if (!off.desired || !d.desired) return;
        expect(d.desired.units).toBeGreaterThanOrEqual(off.desired.units);
        const spec = base.policy.spec;
        const current = base.current.units;
        if (d.desired.units > off.desired.units) {
          expect(d.desired.units).toBeLessThanOrEqual(Math.max(spec.units.max, current));
        }
        expect(d.anticipation?.peaks?.length ?? 0).toBeLessThanOrEqual(24);
        expect(JSON.stringify(d.anticipation ?? {}).length).toBeLessThan(8192);
      }),
      RUNS,
    );
  });
});
