/**
 * One input, both sides: the steady case (src/simulate/testing.ts — the README-shaped policy,
 * 6,000 connections all the time, the instance found at Premium_P1 × 20) run by the real operator
 * against the emulator, and by `simulate`'s engine through the same planner. Both must make the
 * same scale operations — one, Premium_P1 × 20 → Premium_P1 × 10, about 34 minutes in — and no
 * reversal in the hour after it.
 *
 * The two start the same way: the instance has no metrics before the start (the emulator's
 * `createdAt`, a whole minute, is the engine's minute 0) and the policy exists already when the
 * instance appears (creating it takes a few hundred real milliseconds: minutes of virtual time);
 * the same scale duration and ingestion delay, no noise. Start times may still differ by a minute or two: the engine polls once a
 * minute on whole minutes, the operator every 30 s (15 s while an update runs) plus the real time
 * of its passes, which the virtual clock stretches `SPEED` times; the scale-down stabilization
 * window opens at the first pass with metrics, so either side can be up to a poll earlier.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import type { SkuUnits } from "../../src/capacity/index.js";
import { compare } from "../../src/simulate/compare.js";
import { MINUTE_MS, type ScaleOperation } from "../../src/simulate/engine.js";
import { countReversals } from "../../src/simulate/metrics.js";
import { STEADY, steadyCase } from "../../src/simulate/testing.js";
import { operatorSuite, signalrId } from "./harness.js";
import { armWritesFor, createPolicy, getPolicy, requestCollector, sleep } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
/** Virtual seconds per real second. */
const SPEED = 240;
const SCALE_MS = 5 * MINUTE_MS;
const DELAY_MS = 3 * MINUTE_MS;
/** Virtual time to watch after the first scale started. */
const AFTER_MS = 65 * MINUTE_MS;
/** Most virtual time to wait for the first scale. */
const FIRST_BY_MS = 60 * MINUTE_MS;

const requests = requestCollector();
const suite = operatorSuite("replay", {
  emulator: {
    speed: SPEED,
    scaleDurationMs: SCALE_MS,
    ingestionDelayMs: DELAY_MS,
    noiseAmplitude: 0,
    onRequest: requests.onRequest,
  },
});

/** `Premium_P1 × 20 → Premium_P1 × 10 at +34.0 min`, as the failure messages show an operation. */
function shown(ops: readonly ScaleOperation[], startMs: number): string[] {
  const size = (s: SkuUnits) => `${s.sku} × ${s.units}`;
  return ops.map(
    (o) => `${size(o.from)} → ${size(o.to)} at +${((o.startedMs - startMs) / MINUTE_MS).toFixed(1)} min`,
  );
}

describe("replay parity", () => {
  it("the operator and simulate make the same scale operations on constant demand", {
    timeout: 300_000,
  }, async ({ annotate }) => {
    const { kube, ns, h } = suite;
    const id = signalrId("steady");
    // The policy first: its passes find no instance until there is one. Then the instance, from a
    // whole minute — the engine's minute 0 — without metrics before it.
    const manifest = parseYaml(await readFile(resolve(ROOT, STEADY.policyFile), "utf8"));
    manifest.metadata.namespace = ns;
    manifest.spec.target.resourceId = id;
    await createPolicy(kube, manifest);
    const startMs = Math.floor(h.emulator.clock.nowMs() / MINUTE_MS) * MINUTE_MS;
    h.emulator.control.addInstance({
      resourceId: id,
      sku: STEADY.initial.sku,
      units: STEADY.initial.units,
      connections: STEADY.peakConnections,
      createdAt: new Date(startMs),
    });
    // Watch the operator: until the hour after its first scale has passed on the virtual clock.
    let endMs = startMs + FIRST_BY_MS;
    for (;;) {
      const first = armWritesFor(requests.all, id)[0];
      if (first) endMs = Math.max(endMs, Date.parse(first.at) + AFTER_MS);
      if (h.emulator.clock.nowMs() >= endMs) break;
      await sleep(250);
    }

    // The operator's scale operations: each ARM write, with the pass that sent it.
    const writes = armWritesFor(requests.all, id);
    const scaled = h.reports.flatMap((r) =>
      r.result?.outcome === "scaled" && r.result.decision?.desired ? [r.result.decision] : [],
    );
    expect(scaled).toHaveLength(writes.length);
    const operator: ScaleOperation[] = writes.map((w, i) => {
      const d = scaled[i];
      const startedMs = Date.parse(w.at);
      return {
        startedMs,
        completedMs: startedMs + SCALE_MS,
        from: { sku: d?.current.sku, units: d?.current.units } as SkuUnits,
        to: { sku: d?.desired?.sku, units: d?.desired?.units } as SkuUnits,
      };
    });

    // simulate: the same policy, start, demand and timings, through the engine.
    const minutes = Math.ceil((h.emulator.clock.nowMs() - startMs) / MINUTE_MS);
    const c = compare({
      ...steadyCase(ROOT, { startMs, minutes }),
      scaleDurationMs: SCALE_MS,
      metricDelayMs: DELAY_MS,
      seed: "replay",
      noiseAmplitude: 0,
      initial: STEADY.initial,
    });
    const simulated = c.runs[0]?.operations ?? [];

    const report = { operator: shown(operator, startMs), simulate: shown(simulated, startMs) };
    // The two lists go with the result (and with any assertion that fails).
    await annotate(JSON.stringify(report));
    expect(writes, JSON.stringify(report)).toHaveLength(1);
    const sizes = (ops: readonly ScaleOperation[]) => ops.map((o) => ({ from: o.from, to: o.to }));
    expect(sizes(operator), JSON.stringify(report)).toEqual([{ from: STEADY.initial, to: STEADY.right }]);
    expect(sizes(simulated), JSON.stringify(report)).toEqual(sizes(operator));
    const skew = Math.abs((operator[0]?.startedMs ?? 0) - (simulated[0]?.startedMs ?? 0));
    expect(skew, JSON.stringify(report)).toBeLessThanOrEqual(3 * MINUTE_MS);
    expect(countReversals(operator)).toBe(0);
    expect(c.metrics[0]?.reversals).toBe(0);

    // The operator's instance and status end at the right size, nothing in flight.
    expect(h.emulator.control.instance(id)).toMatchObject({
      sku: STEADY.right.sku,
      units: STEADY.right.units,
      provisioningState: "Succeeded",
    });
    const p = await getPolicy(kube, ns, "steady");
    expect(p.status?.current).toMatchObject(STEADY.right);
    expect(p.status?.operation).toBeUndefined();
  });
});
