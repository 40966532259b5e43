/**
 * No policy's spec changes another policy's requests or outcome: a policy with the longest
 * look-back the CRD allows (window 1d, ingestionDelay 1h, maxSampleAge 24h) in one namespace and
 * subscription, and a default policy in another. The default one stays Ready without Fallback,
 * and every getBatch request for its instance asks for its own span — as without the first —
 * never the first policy's; the CRD refuses a look-back past the bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { KubeClients } from "../../src/kube/client.js";
import { adminClients, controlPlane, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import { type Harness, signalrId, startHarness } from "./harness.js";
import {
  condition,
  createPolicy,
  getPolicy,
  kubectlWithInput,
  policyManifest,
  requestCollector,
} from "./helpers.js";

const requests = requestCollector();
const OTHER_SUB = "7b0c3e52-41d6-4f0a-9a8e-5d2c1b3a4f60";
let kube: KubeClients;
let ns = "";
let wideNs = "";
let h: Harness;

beforeAll(async () => {
  await ensureCrd();
  kube = adminClients();
  ns = await createNamespace(kube, "iso-narrow");
  wideNs = await createNamespace(kube, "iso-wide");
  h = await startHarness(kube, {
    emulator: { speed: 60, onRequest: requests.onRequest },
    operator: { namespaces: [ns, wideNs] },
  });
});
afterAll(async () => {
  await h?.stop();
});

const minutes = (span: { start: string; end: string }) =>
  (Date.parse(span.end) - Date.parse(span.start)) / 60_000;

describe("isolation between policies", () => {
  it("the longest allowed look-back of one policy leaves another's requests, points and conditions alone", async () => {
    const narrowId = signalrId("narrow");
    const wideId = signalrId("wide", "rg-wide", OTHER_SUB);
    h.emulator.control.addInstance({ resourceId: narrowId, sku: "Premium_P1", units: 5, connections: 2000 });
    h.emulator.control.addInstance({ resourceId: wideId, sku: "Premium_P1", units: 5, connections: 2000 });

    // Past the bounds: refused by the API server.
    const cp = controlPlane();
    const tooLong = await kubectlWithInput(
      cp.kubectl,
      cp.kubeconfigAdmin,
      ["apply", "-f", "-"],
      stringify(
        policyManifest(wideNs, "too-long", wideId, {
          metrics: { connections: { targetPercent: 80 }, maxSampleAge: "200h" },
        }),
      ),
    );
    expect(tooLong.code).not.toBe(0);
    expect(tooLong.stderr).toMatch(/maxSampleAge must be at most 24h/);

    await createPolicy(
      kube,
      policyManifest(wideNs, "wide", wideId, {
        metrics: {
          connections: { targetPercent: 80 },
          window: "1d",
          ingestionDelay: "1h",
          maxSampleAge: "24h",
        },
      }),
    );
    await createPolicy(kube, policyManifest(ns, "narrow", narrowId));

    const narrow = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "narrow");
        expect(condition(p, "Ready")?.status).toBe("True");
        return p;
      },
      60_000,
      200,
    );
    // Several cycles with both policies due.
    const batchesOf = (id: string) =>
      requests.all.filter(
        (r) => r.kind === "getBatch" && r.resourceIds?.some((x) => x.toLowerCase() === id.toLowerCase()),
      );
    await eventually(
      () => {
        expect(batchesOf(narrowId).length).toBeGreaterThanOrEqual(4);
        expect(batchesOf(wideId).length).toBeGreaterThanOrEqual(2);
      },
      60_000,
      200,
    );
    const narrowBatches = batchesOf(narrowId);
    const wideBatches = batchesOf(wideId);
    // The narrow policy's look-back: max(5m window + 3m delay, 10m max age) + the minute being read.
    const narrowMinutes = narrowBatches.map((r) => minutes(r.span ?? { start: "", end: "" }));
    expect(narrowMinutes.every((m) => m >= 10 && m <= 13)).toBe(true);
    expect(narrowBatches.every((r) => r.status === 200 && r.resourceIds?.length === 1)).toBe(true);
    const wideMinutes = wideBatches.map((r) => minutes(r.span ?? { start: "", end: "" }));
    expect(Math.min(...wideMinutes)).toBeGreaterThanOrEqual(1440 + 60);
    expect(wideBatches.every((r) => r.status === 200)).toBe(true);

    const after = await getPolicy(kube, ns, "narrow");
    expect(condition(after, "Ready")?.status).toBe("True");
    expect(condition(after, "Fallback")?.status).not.toBe("True");
    expect(condition(after, "MetricsAvailable")?.status).toBe("True");
    expect(after.status?.consecutiveFailures ?? 0).toBe(0);
    const wide = await getPolicy(kube, wideNs, "wide");
    expect(condition(wide, "MetricsAvailable")?.status).toBe("True");

    recordFault({
      id: "spec-longest-lookback-isolation",
      endpoint: "spec",
      fault:
        "one policy with the longest look-back allowed (window 1d, ingestionDelay 1h, maxSampleAge 24h); 200h refused by the CRD",
      outcome:
        "the other policy (other namespace and subscription) stays Ready, MetricsAvailable, no Fallback; its requests keep its own span",
      test: "test/operator/isolation.test.ts > isolation between policies",
      figures: {
        narrowGetBatch: narrowBatches.length,
        narrowMinutesPerSeriesMax: Math.max(...narrowMinutes),
        wideGetBatch: wideBatches.length,
        wideMinutesPerSeriesMin: Math.min(...wideMinutes),
        rejectedGetBatch: requests.all.filter((r) => r.kind === "getBatch" && r.status === 400).length,
        narrowReady: condition(after, "Ready")?.status ?? "",
        narrowObservedGeneration: narrow.status?.observedGeneration ?? -1,
        armWrites: requests.all.filter((r) => r.kind === "armWrite").length,
      },
    });
  });
});
