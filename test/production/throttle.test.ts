/**
 * Long Azure throttles through the running operator: ARM answers a subscription's list with a 429
 * asking for 1,200 s (Retry-After in seconds) and Azure Monitor answers another subscription's
 * getBatch with a 429 asking for 1,200 s (Retry-After as an HTTP date). The operator calls neither
 * again before the asked time — counted from the emulator's request log — reports the throttle's
 * end as an absolute time in the policy's condition and in `/metrics`, and reads again after it.
 * The emulator runs at 120× (1,200 virtual seconds are 10 real seconds).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CapacityPolicy } from "../../src/api/index.js";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { adminClients, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import {
  condition,
  createPolicy,
  getPolicy,
  httpGet,
  OTHER_SUB,
  policyManifest,
  SUB,
  sampleValue,
  signalrId,
  startFastEmulator,
  startOperator,
  type TestOperator,
} from "./support.js";

const GAUGE = "signalr_autoscaler_azure_throttle_end_timestamp_seconds";
const RETRY_AFTER_S = 1_200;
const TEST_FILE = "test/production/throttle.test.ts";

let admin: KubeClients;
let emulator: RunningEmulator;
let op: TestOperator | undefined;

beforeAll(async () => {
  await ensureCrd();
  admin = adminClients();
  emulator = await startFastEmulator({ speed: 120 });
});

afterAll(async () => {
  await op?.stop();
  await emulator?.stop();
});

/** The ISO time the condition message names as the throttle's end. */
function endIn(message: string | undefined): number | undefined {
  const match = /(?:before|at) (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)/.exec(message ?? "");
  return match?.[1] === undefined ? undefined : Date.parse(match[1]);
}

describe("a long Azure throttle", { timeout: 120_000 }, () => {
  it("is honoured whole: no call before the asked time, its end in the condition and in /metrics, reads again after it", async () => {
    const ns = await createNamespace(admin, "throttle");
    const armId = signalrId("throttled-arm");
    const metricsId = signalrId("throttled-metrics", "rg-chat", OTHER_SUB);
    for (const resourceId of [armId, metricsId]) {
      emulator.control.addInstance({ resourceId, sku: "Premium_P1", units: 10, connections: 1200 });
    }
    await createPolicy(admin, policyManifest(ns, "arm", armId, { units: { min: 10, max: 50 } }));
    await createPolicy(admin, policyManifest(ns, "metrics", metricsId, { units: { min: 10, max: 50 } }));
    op = await startOperator({
      kube: adminClients(),
      emulator,
      probes: true,
      settings: { namespaces: [ns] },
    });
    const ready = async (name: string) =>
      expect(condition(await getPolicy(admin, ns, name), "Ready")?.status).toBe("True");
    await eventually(() => Promise.all([ready("arm"), ready("metrics")]), 60_000, 250);

    const armFault = emulator.control.addFault({
      method: "GET",
      path: `/subscriptions/${SUB}/**`,
      times: 1,
      action: {
        kind: "status",
        status: 429,
        code: "SubscriptionRequestsThrottled",
        message: "Number of read requests for subscription exceeded the limit",
        retryAfterSeconds: RETRY_AFTER_S,
      },
    });
    const metricsFault = emulator.control.addFault({
      path: "/metrics/**",
      resourceIds: [metricsId],
      times: 1,
      action: {
        kind: "status",
        status: 429,
        code: "TooManyRequests",
        retryAfterSeconds: RETRY_AFTER_S,
        retryAfterFormat: "date",
      },
    });
    const faulted = (id: string) => {
      const r = emulator.control.requests().find((x) => x.fault === id);
      expect(r).toBeDefined();
      return Date.parse(r?.at ?? "");
    };

    // The end is named in the condition, as an absolute time, and in /metrics.
    const seen = await eventually(
      async () => {
        const arm = await getPolicy(admin, ns, "arm");
        const metrics = await getPolicy(admin, ns, "metrics");
        const armAt = faulted(armFault.id);
        const metricsAt = faulted(metricsFault.id);
        const armCondition = condition(arm, "MetricsAvailable");
        const metricsCondition = condition(metrics, "MetricsAvailable");
        expect(armCondition?.status).toBe("False");
        expect(metricsCondition?.status).toBe("False");
        expect(armCondition?.message).toMatch(/Throttled/);
        expect(metricsCondition?.message).toMatch(/Throttled/);
        // The operator counts from when the answer reached it (the 429's time on the emulator plus
        // the answer's way back, 120 virtual ms per real ms); the date form has whole seconds.
        const armEnd = endIn(armCondition?.message) ?? Number.NaN;
        const metricsEnd = endIn(metricsCondition?.message) ?? Number.NaN;
        expect(armEnd - (armAt + RETRY_AFTER_S * 1000)).toBeGreaterThanOrEqual(0);
        expect(armEnd - (armAt + RETRY_AFTER_S * 1000)).toBeLessThan(10_000);
        expect(metricsEnd - (metricsAt + RETRY_AFTER_S * 1000)).toBeGreaterThanOrEqual(-1_000);
        expect(metricsEnd - (metricsAt + RETRY_AFTER_S * 1000)).toBeLessThan(10_000);
        return { arm, metrics, armAt, metricsAt, armEnd, metricsEnd };
      },
      20_000,
      100,
    );
    const scrape = (await httpGet(`${op.probesUrl}/metrics`)).body;
    expect(sampleValue(scrape, GAUGE, { endpoint: "arm", scope: `${SUB}/*` })).toBe(seen.armEnd / 1000);
    const metricsGauge = sampleValue(scrape, GAUGE, {
      endpoint: "metrics",
      scope: `${OTHER_SUB}/westeurope`,
    });
    expect(metricsGauge).toBe(seen.metricsEnd / 1000);

    // After the end, the operator reads again: both policies have metrics once more.
    await eventually(
      async () => {
        for (const name of ["arm", "metrics"]) {
          expect(condition(await getPolicy(admin, ns, name), "MetricsAvailable")?.status).toBe("True");
        }
      },
      60_000,
      250,
    );
    const log = emulator.control.requests();
    const armCalls = log.filter((r) => r.subscriptionId === SUB && r.kind === "armRead");
    const armDuring = armCalls.filter((r) => {
      const at = Date.parse(r.at);
      return at > seen.armAt && at < seen.armEnd;
    });
    const armAfter = armCalls.find((r) => Date.parse(r.at) >= seen.armEnd);
    const batches = log.filter((r) => r.kind === "getBatch" && r.resourceIds?.includes(metricsId));
    const batchesDuring = batches.filter((r) => {
      const at = Date.parse(r.at);
      return at > seen.metricsAt && at < seen.metricsEnd;
    });
    const batchAfter = batches.find((r) => Date.parse(r.at) >= seen.metricsEnd);
    expect(armDuring).toEqual([]);
    expect(batchesDuring).toEqual([]);
    expect(armAfter).toBeDefined();
    expect(batchAfter).toBeDefined();
    // The gauges are gone once the throttles ended.
    const after = (await httpGet(`${op.probesUrl}/metrics`)).body;
    expect(sampleValue(after, GAUGE, { endpoint: "arm" })).toBeUndefined();
    expect(sampleValue(after, GAUGE, { endpoint: "metrics" })).toBeUndefined();

    const message = (p: CapacityPolicy) => condition(p, "MetricsAvailable")?.message ?? "";
    const figures = (callsDuring: number, end: number, next: string | undefined) => ({
      retryAfterSeconds: RETRY_AFTER_S,
      callsBeforeEnd: callsDuring,
      firstCallAfterEndSeconds: Number(((Date.parse(next ?? "") - end) / 1000).toFixed(1)),
    });
    recordFault({
      id: "arm-429-retry-after-1200s-operator",
      endpoint: "ARM",
      fault: "the subscription's list answered 429, Retry-After: 1200 (seconds)",
      outcome:
        "no ARM call to the subscription before the asked time; its end in the condition and in /metrics",
      test: `${TEST_FILE} › a long Azure throttle is honoured whole`,
      figures: { ...figures(armDuring.length, seen.armEnd, armAfter?.at), condition: message(seen.arm) },
    });
    recordFault({
      id: "metrics-429-retry-after-date-1200s-operator",
      endpoint: "Azure Monitor",
      fault: "getBatch answered 429, Retry-After an HTTP date 1,200 s ahead",
      outcome:
        "no getBatch call for the region before the asked time; its end in the condition and in /metrics",
      test: `${TEST_FILE} › a long Azure throttle is honoured whole`,
      figures: {
        ...figures(batchesDuring.length, seen.metricsEnd, batchAfter?.at),
        condition: message(seen.metrics),
      },
    });
  });
});
