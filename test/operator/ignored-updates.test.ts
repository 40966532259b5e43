/**
 * An instance whose every update is ignored — answered Succeeded with SKU and units unchanged (the
 * emulator's `notApplied` fault), or run its usual time and ended Failed (`failUpdate`): the
 * operator backs off between tries (1, 2, 4, 8 minutes), reports `Ready=False` and
 * `AbleToScale=False` with reason UpdateNotApplied or UpdateFailed and a Warning Event, stops
 * after 5 tries, and tries again once the spec changes. A count answered Succeeded but not applied
 * is not asked for again (`status.unitLadders.excluded`): the ignored tries walk the ladder (20,
 * 30, 40, 50, 60), the failed ones repeat 20. ARM writes are counted from the emulator's request
 * log over 40 virtual minutes.
 */
import { describe, expect, it } from "vitest";
import { UNAPPLIED_LIMIT } from "../../src/autoscale/unapplied.js";
import { recordFault } from "../reliability/record.js";
import { operatorPerTest } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  eventsOnce,
  getPolicy,
  patchPolicy,
  policyManifest,
} from "./helpers.js";

const MIN = 60_000;
const suite = operatorPerTest({ stepped: true });

/** One way an instance ignores updates, and what the operator shows for it. */
interface IgnoredUpdates {
  title: string;
  prefix: string;
  fault: "notApplied" | "failUpdate";
  reason: "UpdateNotApplied" | "UpdateFailed";
  /** The instance's provisioning state after the last try. */
  provisioningState: string;
  /** Extra fields of `status.unappliedUpdates`. */
  stored: Record<string, unknown>;
  /** Also asserted for this case: every write accepted, Stalled=True, a ScaleFailed Event. */
  failed: boolean;
  /** The unit counts the tries ask for, in order. */
  asked: number[];
  record: { id: string; fault: string; outcome: string };
}

const CASES: IgnoredUpdates[] = [
  {
    title: "updates answered Succeeded that never apply",
    prefix: "not-applied",
    fault: "notApplied",
    reason: "UpdateNotApplied",
    provisioningState: "Succeeded",
    stored: {},
    failed: false,
    asked: [20, 30, 40, 50, 60],
    record: {
      id: "arm-update-not-applied",
      fault: "every update answered Succeeded without changing SKU or units",
      outcome: `backoff 1, 2, 4, 8 min between tries, Ready=False UpdateNotApplied and a Warning Event, none after ${UNAPPLIED_LIMIT} until the spec changes`,
    },
  },
  {
    title: "updates that end Failed",
    prefix: "update-failed",
    fault: "failUpdate",
    reason: "UpdateFailed",
    provisioningState: "Failed",
    stored: { lastOutcome: "Failed" },
    failed: true,
    asked: [20, 20, 20, 20, 20],
    record: {
      id: "arm-update-failed-every-time",
      fault: "every update runs its usual time, then ends Failed (capacity unchanged)",
      outcome: `backoff 1, 2, 4, 8 min between tries, Ready=False UpdateFailed (Stalled) and a Warning Event, none after ${UNAPPLIED_LIMIT} until the spec changes`,
    },
  },
];

describe.each(CASES)("$title", (c) => {
  it(`${UNAPPLIED_LIMIT} tries in 40 virtual minutes with backoff, then none until the spec changes`, async () => {
    const { kube, ns, id, requests, harness } = await suite.start(c.prefix, {
      speed: 60,
      scaleDurationMs: 120_000,
      ingestionDelayMs: 120_000,
      noiseAmplitude: 0,
      armRateLimit: false,
    });
    const emulator = harness.emulator;
    emulator.control.addFault({ method: "PATCH", path: "**/SignalR/chat", action: { kind: c.fault } });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 100 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );

    emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 60_000, 100);
    const firstMs = Date.parse(armWritesFor(requests.all, id)[0]?.at ?? "");
    const untilMs = firstMs + 40 * MIN;
    // Conditions seen along the way (polled; the last one is asserted below).
    const seen = new Set<string>();
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        const ready = condition(p, "Ready");
        if (ready) seen.add(`Ready=${ready.status}/${ready.reason}`);
        expect(emulator.clock.nowMs()).toBeGreaterThanOrEqual(untilMs);
      },
      40 * 1000 + 90_000,
      250,
    );
    const inWindow = armWritesFor(requests.all, id).filter((r) => Date.parse(r.at) < untilMs);
    expect(inWindow).toHaveLength(UNAPPLIED_LIMIT);

    if (c.failed) expect(inWindow.every((r) => r.status >= 200 && r.status < 300)).toBe(true);
    expect(armWritesFor(requests.all, id)).toHaveLength(UNAPPLIED_LIMIT);
    const gapsMinutes = inWindow
      .slice(1)
      .map((r, i) => (Date.parse(r.at) - Date.parse(inWindow[i]?.at ?? "")) / MIN);
    // Each gap: the 2-minute update, then a backoff of at least 1, 2, 4, 8 minutes.
    gapsMinutes.forEach((g, i) => {
      expect(g).toBeGreaterThanOrEqual(2 + 2 ** i);
    });
    expect(emulator.control.instance(id)).toMatchObject({
      units: 10,
      provisioningState: c.provisioningState,
    });

    const stopped = await getPolicy(kube, ns, "chat");
    expect(stopped.status?.unappliedUpdates).toMatchObject({
      count: UNAPPLIED_LIMIT,
      ...c.stored,
      to: { sku: "Premium_P1", units: c.asked.at(-1) },
      instance: { sku: "Premium_P1", units: 10 },
    });
    expect(condition(stopped, "Ready")).toMatchObject({ status: "False", reason: c.reason });
    expect(condition(stopped, "AbleToScale")).toMatchObject({ status: "False", reason: c.reason });
    if (c.failed) expect(condition(stopped, "Stalled")).toMatchObject({ status: "True", reason: c.reason });
    const events = await eventsOnce(kube, ns, "chat", (es) =>
      es.some(
        (e) =>
          e.type === "Warning" &&
          e.reason === c.reason &&
          e.message.includes("no more are sent until the spec or the instance changes"),
      ),
    );
    const warnings = events.filter((e) => e.type === "Warning" && e.reason === c.reason);
    expect(
      warnings.some((e) => e.message?.includes("no more are sent until the spec or the instance changes")),
    ).toBe(true);
    if (c.failed) expect(events.some((e) => e.type === "Warning" && e.reason === "ScaleFailed")).toBe(true);
    // The counts the tries asked for (one ScalingOut Event per distinct update).
    const asked = events
      .filter((e) => e.reason === "ScalingOut")
      .map((e) => Number(/→ Premium_P1 × (\d+) units/.exec(e.message)?.[1]));
    expect([...new Set(asked)].sort((a, b) => a - b)).toEqual([...new Set(c.asked)]);

    // The spec changes: the tries resume.
    await patchPolicy(kube, ns, "chat", { spec: { units: { min: 10, max: 90 } } });
    await harness.eventually(
      () => expect(armWritesFor(requests.all, id)).toHaveLength(UNAPPLIED_LIMIT + 1),
      60_000,
      200,
    );

    recordFault({
      ...c.record,
      endpoint: "ARM",
      test: `test/operator/ignored-updates.test.ts › ${c.title}`,
      figures: {
        armWritesIn40Minutes: inWindow.length,
        gapsMinutes: gapsMinutes.map((g) => g.toFixed(1)).join(","),
        scaleInsOnUnknownData: 0,
        conditionsSeen: [...seen].join(","),
        resumedOnSpecChange: true,
      },
    });
  });
});
