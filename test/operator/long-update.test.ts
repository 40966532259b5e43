/**
 * An update that takes 50 minutes (the emulator's scale duration, `/_emulator/timing`), through
 * the running operator at 120×: Ready while it is younger than its deadline (30 minutes: nothing
 * was measured on this instance yet), then Ready=False ProgressDeadlineExceeded and Stalled=True
 * with the update's age, one Warning Event, `update_age_seconds` above `update_deadline_seconds`
 * in /metrics; one ARM write all along (no second update stacked); when it ends, all clears.
 */
import { describe, expect, it } from "vitest";
import { recordFault } from "../reliability/record.js";
import { operatorPerTest } from "./harness.js";
import { armWritesFor, condition, createPolicy, eventsOnce, getPolicy, policyManifest } from "./helpers.js";

const MIN = 60_000;
const suite = operatorPerTest({ stepped: true });

describe("an update that runs for 50 minutes", () => {
  it("is waited for; past 30 minutes the policy is Stalled with its age; when it ends, all clears", async () => {
    const { kube, ns, id, requests, harness } = await suite.start("long-update", {
      speed: 120,
      scaleDurationMs: 50 * MIN,
      ingestionDelayMs: 120_000,
      noiseAmplitude: 0,
      armRateLimit: false,
    });
    const emulator = harness.emulator;
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 100 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(() => expect(armWritesFor(requests.all, id)).toHaveLength(1), 60_000, 100);
    const sentMs = Date.parse(armWritesFor(requests.all, id)[0]?.at ?? "");

    const seen: { minutes: number; ready: string; stalled: string }[] = [];
    const watch = async () => {
      const p = await getPolicy(kube, ns, "chat");
      const minutes = (emulator.clock.nowMs() - sentMs) / MIN;
      seen.push({
        minutes,
        ready: `${condition(p, "Ready")?.status}/${condition(p, "Ready")?.reason}`,
        stalled: condition(p, "Stalled")?.status ?? "",
      });
      return p;
    };
    // Past the deadline: stalled, with the age, while the update still runs.
    const stuck = await harness.eventually(
      async () => {
        const p = await watch();
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "ProgressDeadlineExceeded" });
        return p;
      },
      60_000,
      200,
    );
    const stuckAt = (emulator.clock.nowMs() - sentMs) / MIN;
    expect(stuckAt).toBeGreaterThan(30);
    expect(stuckAt).toBeLessThan(35);
    expect(emulator.control.instance(id)).toMatchObject({ units: 10, provisioningState: "Updating" });
    expect(condition(stuck, "Stalled")).toMatchObject({ status: "True", reason: "ProgressDeadlineExceeded" });
    expect(condition(stuck, "Ready")?.message).toMatch(/has run for 3\d min, past its deadline of 30 min/);
    expect(condition(stuck, "Ready")?.message).toContain("ARM reports Updating");
    expect(condition(stuck, "AbleToScale")).toMatchObject({ status: "False", reason: "ScaleInProgress" });
    // What the metrics ask for is the update's target: nothing else limits it.
    expect(condition(stuck, "ScalingLimited")).toMatchObject({
      status: "False",
      reason: "DesiredWithinRange",
    });
    expect(stuck.status?.operation?.to).toEqual({ sku: "Premium_P1", units: 20 });
    // /metrics follows the pass's status write.
    await harness.eventually(
      async () => {
        const scrape = (await harness.metrics.expose()).body;
        const gauge = (name: string) =>
          Number(
            new RegExp(`signalr_autoscaler_${name}\\{namespace="${ns}",policy="chat"\\} (\\d+)`).exec(
              scrape,
            )?.[1],
          );
        expect(gauge("update_deadline_seconds")).toBe(1800);
        expect(gauge("update_age_seconds")).toBeGreaterThan(1800);
      },
      10_000,
      50,
    );

    // It ends at 50 minutes: Ready again, not stalled, the size recorded.
    const done = await harness.eventually(
      async () => {
        const p = await watch();
        expect(p.status?.current?.units).toBe(20);
        expect(condition(p, "Ready")?.status).toBe("True");
        return p;
      },
      60_000,
      200,
    );
    expect(condition(done, "Stalled")?.status).toBe("False");
    expect(done.status?.operation).toBeUndefined();
    expect(armWritesFor(requests.all, id)).toHaveLength(1);
    // Ready until the deadline, stalled from it until the end.
    for (const s of seen) {
      if (s.minutes < 30) expect(s.ready, `${s.minutes} min`).toBe("True/Reconciled");
      if (s.minutes > 31 && s.minutes < 49) expect(s.stalled, `${s.minutes} min`).toBe("True");
    }
    const events = await eventsOnce(kube, ns, "chat", (es) =>
      es.some((e) => e.type === "Warning" && e.reason === "ProgressDeadlineExceeded"),
    );
    expect(
      events.filter((e) => e.type === "Warning" && e.reason === "ProgressDeadlineExceeded"),
    ).toHaveLength(1);
    // /metrics follows the status write of the same pass.
    await harness.eventually(
      async () =>
        expect((await harness.metrics.expose()).body).not.toContain(
          `signalr_autoscaler_update_age_seconds{namespace="${ns}",policy="chat"}`,
        ),
      10_000,
      50,
    );

    recordFault({
      id: "arm-update-runs-50-minutes",
      endpoint: "ARM",
      fault: "an update that stays Updating for 50 minutes",
      outcome:
        "waited for, no second update; Ready=False ProgressDeadlineExceeded (Stalled) with its age past 30 minutes, one Warning Event; clears when it ends",
      test: "test/operator/long-update.test.ts › an update that runs for 50 minutes",
      figures: {
        armWrites: armWritesFor(requests.all, id).length,
        stalledAfterMinutes: Number(stuckAt.toFixed(1)),
        deadlineSeconds: 1800,
      },
    });
  });
});
