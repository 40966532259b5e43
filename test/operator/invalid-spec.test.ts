/**
 * What CEL cannot catch: a policy the API server accepts (kubectl apply succeeds) but the operator's
 * own validation refuses — an unknown time zone, a cron expression with five fields that does not
 * parse — is reported as Ready=False, reason InvalidSpec, and nothing is acted on. Fixing the spec
 * makes it Ready.
 */

import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { controlPlane } from "../kube/support.js";
import { operatorSuite, signalrId } from "./harness.js";
import {
  armWritesFor,
  condition,
  eventsOnce,
  getPolicy,
  kubectlWithInput,
  patchPolicy,
  policyManifest,
  requestCollector,
} from "./helpers.js";

const requests = requestCollector();

const suite = operatorSuite("invalid", {
  stepped: true,
  emulator: { speed: 60, onRequest: requests.onRequest },
});

async function apply(manifest: Record<string, unknown>): Promise<void> {
  const cp = controlPlane();
  const result = await kubectlWithInput(
    cp.kubectl,
    cp.kubeconfigAdmin,
    ["apply", "-f", "-"],
    stringify(manifest),
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
}

describe("a spec the API server accepts but the operator refuses", () => {
  it("is Ready=False InvalidSpec with the problem in the message, and Ready once fixed", async () => {
    const { kube, ns, h } = suite;
    const zoneId = signalrId("zone");
    const cronId = signalrId("cron");
    // 10 units for 2,000 connections: a valid policy would scale in.
    h.emulator.control.addInstance({ resourceId: zoneId, sku: "Premium_P1", units: 10, connections: 2000 });
    h.emulator.control.addInstance({ resourceId: cronId, sku: "Premium_P1", units: 10, connections: 2000 });
    const noWindow = {
      behavior: {
        scaleUp: { stabilizationWindowSeconds: 0 },
        scaleDown: {
          stabilizationWindowSeconds: 0,
          policies: [{ type: "Percent", value: 100, periodSeconds: 60 }],
        },
      },
    };
    await apply(
      policyManifest(ns, "zone", zoneId, {
        ...noWindow,
        schedules: [
          {
            name: "peak",
            cron: "0 8 * * 1-5",
            timeZone: "Mars/Olympus_Mons",
            durationMinutes: 60,
            minUnits: 5,
          },
        ],
      }),
    );
    await apply(
      policyManifest(ns, "cron", cronId, {
        ...noWindow,
        scaleInWindows: [{ name: "nightly", cron: "61 25 * * *", durationMinutes: 60 }],
      }),
    );

    const zone = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "zone");
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "InvalidSpec" });
        return p;
      },
      60_000,
      200,
    );
    expect(condition(zone, "Ready")?.message).toBe(
      'spec.schedules[0].timeZone: unknown time zone "Mars/Olympus_Mons"',
    );
    expect(zone.status?.observedGeneration).toBe(zone.metadata.generation);
    expect(condition(zone, "Ready")?.observedGeneration).toBe(zone.metadata.generation);

    const cron = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "cron");
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "InvalidSpec" });
        return p;
      },
      60_000,
      200,
    );
    expect(condition(cron, "Ready")?.message).toMatch(
      /^spec\.scaleInWindows\[0\]\.cron: invalid cron expression "61 25 \* \* \*"/,
    );

    // kubectl shows it; an Event says it; nothing is acted on.
    const events = await eventsOnce(kube, ns, "zone", (es) => es.some((e) => e.reason === "InvalidSpec"));
    expect(events).toContainEqual({
      type: "Warning",
      reason: "InvalidSpec",
      message: 'Ready=False: spec.schedules[0].timeZone: unknown time zone "Mars/Olympus_Mons"',
    });
    const seen = h.reports.length;
    await suite.h.eventually(() => expect(h.reports.length).toBeGreaterThanOrEqual(seen + 2), 30_000, 200);
    expect(
      h.reports.filter((r) => r.key === `${ns}/zone`).every((r) => r.result?.outcome === "invalid"),
    ).toBe(true);
    expect(armWritesFor(requests.all, zoneId)).toEqual([]);
    expect(armWritesFor(requests.all, cronId)).toEqual([]);
    expect(h.emulator.control.instance(zoneId)?.units).toBe(10);

    // Fixed: a real zone. The new generation is picked up at once and the policy acts.
    await patchPolicy(kube, ns, "zone", {
      spec: {
        schedules: [
          { name: "peak", cron: "0 8 * * 1-5", timeZone: "Europe/Madrid", durationMinutes: 60, minUnits: 5 },
        ],
      },
    });
    const fixed = await suite.h.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "zone");
        expect(condition(p, "Ready")?.status).toBe("True");
        return p;
      },
      60_000,
      200,
    );
    expect(fixed.status?.observedGeneration).toBe(fixed.metadata.generation);
    expect(fixed.metadata.generation).toBeGreaterThan(zone.metadata.generation ?? 0);
    await suite.h.eventually(() => expect(armWritesFor(requests.all, zoneId)).toHaveLength(1), 60_000, 200);
    // The other one stays refused.
    expect(condition(await getPolicy(kube, ns, "cron"), "Ready")?.reason).toBe("InvalidSpec");
    expect(armWritesFor(requests.all, cronId)).toEqual([]);
  });
});
