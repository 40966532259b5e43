/**
 * Faults of the reliability matrix that no other test file injects, each on the real operator
 * against the local control plane and the HTTPS emulator (60× real time): an update refused with
 * 503, an update that ends Failed, ARM reads failing, empty series, metrics 401/403, a policy
 * deleted while its update runs, the managed Deployment deleted, and an HPA added later. Each
 * asserts the safe outcome and records its figures (docs/reliability.md).
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../src/autoscale/decide.js";
import { NOW, policy, samples, spec } from "../../src/autoscale/testing.js";
import type { FaultSpec, RequestRecord } from "../../src/emulator/index.js";
import { CHAT_HUB } from "../kube/support.js";
import { type ChatOperator, operatorPerTest } from "../operator/harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  eventsFor,
  getPolicy,
  policyManifest,
} from "../operator/helpers.js";
import { recordFault } from "./record.js";

const ops = operatorPerTest({ stepped: true });
const FILE = "test/reliability/faults.test.ts";

/** Accepted (2xx) and refused ARM writes to `id`. */
function writes(all: readonly RequestRecord[], id: string) {
  const w = armWritesFor(all, id);
  return {
    accepted: w.filter((r) => r.status >= 200 && r.status < 300),
    refused: w.filter((r) => r.status < 200 || r.status >= 300),
  };
}

/**
 * A fault the policy must ride out without acting: adds `fault`, creates the policy `chat`
 * (units 1..50; the instance's 2,000 connections on 10 units would be a scale-in with data), waits
 * until condition `type` is False and `passes` more passes ran, then removes the fault. Returns the
 * policy as the fault showed it, the ARM updates accepted meanwhile (`during`) and the virtual
 * time (ms) the fault ended.
 */
async function heldThroughFault(
  { kube, ns, id, requests, harness }: ChatOperator,
  fault: FaultSpec,
  type: string,
  passes: number,
) {
  const rule = harness.emulator.control.addFault(fault);
  await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 1, max: 50 } }));
  const faulted = await harness.eventually(
    async () => {
      const p = await getPolicy(kube, ns, "chat");
      expect(condition(p, type)?.status).toBe("False");
      return p;
    },
    60_000,
    200,
  );
  const seen = harness.reports.length;
  await harness.eventually(
    () => expect(harness.reports.length).toBeGreaterThanOrEqual(seen + passes),
    60_000,
    200,
  );
  const during = writes(requests.all, id).accepted.length;
  const removedAt = harness.emulator.clock.nowMs();
  harness.emulator.control.removeFault(rule.id);
  return { faulted, during, removedAt };
}

/** Virtual seconds between two request records. */
const secondsBetween = (a: RequestRecord, b: RequestRecord) => (Date.parse(b.at) - Date.parse(a.at)) / 1000;

describe("reliability matrix: ARM", () => {
  it("503 on the update: retried on a later pass, one accepted update, no reversal", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("f-503w");
    harness.emulator.control.addFault({
      method: "PATCH",
      path: "**/SignalR/chat",
      times: 1,
      action: { kind: "status", status: 503 },
    });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(20),
      90_000,
      300,
    );
    const w = writes(requests.all, id);
    expect(w.refused).toHaveLength(1);
    expect(w.refused[0]?.status).toBe(503);
    expect(w.accepted).toHaveLength(1);
    const retrySeconds = secondsBetween(w.refused[0] as RequestRecord, w.accepted[0] as RequestRecord);
    expect(retrySeconds).toBeGreaterThan(0);
    recordFault({
      id: "arm-503-write",
      endpoint: "ARM",
      fault: "503 on the update PATCH (once)",
      outcome: "retried on a later pass; one accepted update, no reversal",
      test: `${FILE} › 503 on the update`,
      figures: { armWritesAccepted: w.accepted.length, armWritesRefused: w.refused.length, retrySeconds },
    });
  });

  it("an update that ends Failed: reported, retried, and the capacity reached with no extra update", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("f-failed");
    harness.emulator.control.addFault({
      method: "PATCH",
      path: "**/SignalR/chat",
      times: 1,
      action: { kind: "failUpdate" },
    });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(20),
      120_000,
      300,
    );
    const w = writes(requests.all, id);
    // The failed update, then the one that applied.
    expect(w.accepted).toHaveLength(2);
    const events = await eventsFor(kube, ns, "chat");
    const failed = events.filter((e) => e.type === "Warning" && e.reason === "ScaleFailed");
    expect(failed.length).toBeGreaterThanOrEqual(1);
    const recoverySeconds = secondsBetween(w.accepted[0] as RequestRecord, w.accepted[1] as RequestRecord);
    recordFault({
      id: "arm-update-failed",
      endpoint: "ARM",
      fault: "the update runs, then ends Failed (provisioningState Failed, capacity unchanged)",
      outcome:
        "Warning Event ScaleFailed; one retry, no sooner than 1 minute after the failure (UpdateFailed backoff); the capacity reached",
      test: `${FILE} › an update that ends Failed`,
      figures: { armWritesAccepted: w.accepted.length, scaleFailedEvents: failed.length, recoverySeconds },
    });
  });

  it("409 AnotherOperationInProgress on the update: waited out, one accepted update", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("f-409w");
    harness.emulator.control.addFault({
      method: "PATCH",
      path: "**/SignalR/chat",
      times: 2,
      action: {
        kind: "status",
        status: 409,
        code: "AnotherOperationInProgress",
        message: "Another operation is in progress on the resource.",
      },
    });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(20),
      120_000,
      300,
    );
    const w = writes(requests.all, id);
    expect(w.refused.map((r) => r.status)).toEqual([409, 409]);
    expect(w.accepted).toHaveLength(1);
    recordFault({
      id: "arm-409-write",
      endpoint: "ARM",
      fault: "409 AnotherOperationInProgress on the update PATCH (twice)",
      outcome:
        "read as an operation in progress, not a failure: retried on later passes; one accepted update",
      test: `${FILE} › 409 AnotherOperationInProgress on the update`,
      figures: {
        armWritesRefused: w.refused.length,
        armWritesAccepted: w.accepted.length,
        secondsToAccepted: secondsBetween(w.refused[0] as RequestRecord, w.accepted[0] as RequestRecord),
      },
    });
  });

  it("an update PATCH that never answers: ends at the request deadline, retried, one applied update", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("f-hangw", {}, { requestTimeoutMs: 1_000 });
    harness.emulator.control.addFault({
      method: "PATCH",
      path: "**/SignalR/chat",
      times: 1,
      action: { kind: "hang" },
    });
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    const started = performance.now();
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(20),
      120_000,
      300,
    );
    const all = armWritesFor(requests.all, id);
    // The hanging PATCH is logged with status 0; the emulator never applied it.
    expect(all.filter((r) => r.status === 0)).toHaveLength(1);
    expect(writes(requests.all, id).accepted).toHaveLength(1);
    const failing = harness.reports.filter((r) => r.error !== undefined);
    recordFault({
      id: "arm-hang-write",
      endpoint: "ARM",
      fault: "the update PATCH is accepted on the socket and never answered (request deadline 1 s here)",
      outcome:
        "the call ends at its deadline as a transient failure; the next pass sends it again; one applied update",
      test: `${FILE} › an update PATCH that never answers`,
      figures: {
        armWritesHung: 1,
        armWritesAccepted: 1,
        realSecondsToCapacity: Math.round((performance.now() - started) / 100) / 10,
        failingPasses: failing.length,
      },
    });
  });

  it("500 on ARM reads: no update while the instance is unknown; reconciled once reads answer", async () => {
    const op = await ops.start("f-500r");
    const { kube, ns, harness } = op;
    const { faulted, during, removedAt } = await heldThroughFault(
      op,
      { method: "GET", path: "/subscriptions/*/**", action: { kind: "status", status: 500 } },
      "Ready",
      3,
    );
    expect(during).toBe(0);
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    const recoverySeconds = (harness.emulator.clock.nowMs() - removedAt) / 1000;
    const readyReason = condition(faulted, "Ready")?.reason ?? "";
    recordFault({
      id: "arm-500-read",
      endpoint: "ARM",
      fault: "500 on every ARM read (instance list and GET)",
      outcome: "Ready=False, no update while the instance is unknown; Ready again once reads answer",
      test: `${FILE} › 500 on ARM reads`,
      figures: { armWritesDuringFault: during, readyReason, recoverySeconds },
    });
  });
});

describe("reliability matrix: Azure Monitor", () => {
  for (const [label, action, id] of [
    ["empty series", { kind: "emptyTimeseries" }, "metrics-empty-series"],
    ["401", { kind: "status", status: 401 }, "metrics-401"],
    ["403", { kind: "status", status: 403 }, "metrics-403"],
  ] as const) {
    it(`${label}: no scale-in on unknown data, MetricsAvailable=False, recovery when it ends`, async () => {
      const op = await ops.start(`f-${id}`);
      const { kube, ns, harness } = op;
      const { faulted, during, removedAt } = await heldThroughFault(
        op,
        { path: "**/metrics:getBatch", action },
        "MetricsAvailable",
        4,
      );
      expect(during).toBe(0);
      await harness.eventually(
        async () => {
          const p = await getPolicy(kube, ns, "chat");
          expect(condition(p, "MetricsAvailable")?.status).toBe("True");
          expect(p.status?.current?.units).toBeLessThan(10);
        },
        120_000,
        300,
      );
      recordFault({
        id,
        endpoint: "Azure Monitor",
        fault: `getBatch answers ${label}`,
        outcome:
          "MetricsAvailable=False, units held (no scale-in on unknown data); scale-in once data returns",
        test: `${FILE} › ${label}`,
        figures: {
          scaleInsOnUnknownData: during,
          metricsReason: condition(faulted, "MetricsAvailable")?.reason ?? "",
          secondsToScaleInAfterRecovery: (harness.emulator.clock.nowMs() - removedAt) / 1000,
        },
      });
    });
  }
});

describe("reliability matrix: Kubernetes objects changing under the operator", () => {
  it("a policy deleted while its update runs: no further update, no failing passes", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("f-delete");
    await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(() => expect(writes(requests.all, id).accepted).toHaveLength(1), 60_000, 100);
    expect(harness.emulator.control.instance(id)?.provisioningState).toBe("Updating");
    await kube.customObjects.deleteNamespacedCustomObject({
      group: "autoscaling.signalr.dev",
      version: "v1alpha1",
      namespace: ns,
      plural: "capacitypolicies",
      name: "chat",
    });
    const reportsAtDelete = harness.reports.length;
    // Five virtual minutes (5 s): the update completes; nothing else is sent for the deleted policy.
    await harness.sleep(5_000);
    expect(harness.emulator.control.instance(id)?.units).toBe(20);
    expect(writes(requests.all, id).accepted).toHaveLength(1);
    const after = harness.reports.slice(reportsAtDelete);
    expect(after.filter((r) => r.error !== undefined)).toEqual([]);
    recordFault({
      id: "policy-deleted-mid-update",
      endpoint: "kube-apiserver",
      fault: "the policy is deleted while its ARM update runs",
      outcome: "the update completes in Azure; no further update, no failing pass",
      test: `${FILE} › a policy deleted while its update runs`,
      figures: { armWritesAccepted: 1, passesAfterDelete: after.length, failingPasses: 0 },
    });
  });

  it("the managed Deployment deleted: reported, and the instance still sized", async () => {
    const { kube, ns, id, requests, harness } = await ops.start("f-deploy");
    await createPolicy(
      kube,
      policyManifest(ns, "chat", id, { units: { min: 10, max: 50 }, appServer: CHAT_HUB }),
    );
    await harness.eventually(
      async () => expect(condition(await getPolicy(kube, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      200,
    );
    await kube.apps.deleteNamespacedDeployment({ namespace: ns, name: "chat-hub" });
    const gone = await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        const problem = [p.status?.conditions ?? []]
          .flat()
          .find((c) => /chat-hub/.test(c.message ?? "") && (c.status === "False" || c.type === "Conflict"));
        expect(problem).toBeDefined();
        return problem;
      },
      60_000,
      200,
    );
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(20),
      90_000,
      300,
    );
    expect(writes(requests.all, id).accepted).toHaveLength(1);
    const errors = harness.reports.filter((r) => r.error !== undefined);
    expect(errors).toEqual([]);
    recordFault({
      id: "deployment-deleted",
      endpoint: "kube-apiserver",
      fault: "the app-server Deployment is deleted while the policy manages it",
      outcome: "a condition names the Deployment; the instance is still sized; no failing pass",
      test: `${FILE} › the managed Deployment deleted`,
      figures: {
        condition: `${gone?.type}=${gone?.status} ${gone?.reason}`,
        armWritesAccepted: 1,
        failingPasses: 0,
      },
    });
  });

  it("an HPA added later on the Deployment: Conflict, and the replicas are left to it", async () => {
    const { kube, ns, id, harness } = await ops.start("f-hpa");
    await createPolicy(
      kube,
      policyManifest(ns, "chat", id, { units: { min: 10, max: 50 }, appServer: CHAT_HUB }),
    );
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")?.status).toBe("True");
        expect(p.status?.desired?.replicas).toBeDefined();
      },
      60_000,
      200,
    );
    const addedAt = harness.emulator.clock.nowMs();
    await kube.autoscaling.createNamespacedHorizontalPodAutoscaler({
      namespace: ns,
      body: {
        metadata: { name: "chat-hub-cpu", namespace: ns },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "chat-hub" },
          minReplicas: 2,
          maxReplicas: 30,
          metrics: [
            {
              type: "Resource",
              resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } },
            },
          ],
        },
      },
    });
    await harness.eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Conflict")).toMatchObject({ status: "True", reason: "HpaOwnsReplicas" });
      },
      60_000,
      200,
    );
    const detectSeconds = (harness.emulator.clock.nowMs() - addedAt) / 1000;
    const replicas = async () =>
      (await kube.apps.readNamespacedDeploymentScale({ namespace: ns, name: "chat-hub" })).spec?.replicas;
    const before = await replicas();
    harness.emulator.control.setDemand(id, { connections: 9000 });
    await harness.eventually(
      async () => expect((await getPolicy(kube, ns, "chat")).status?.current?.units).toBe(20),
      90_000,
      300,
    );
    expect(await replicas()).toBe(before);
    recordFault({
      id: "hpa-added-later",
      endpoint: "kube-apiserver",
      fault: "an HPA the policy does not name starts scaling its Deployment",
      outcome: "Conflict=True HpaOwnsReplicas; replicas left to the HPA; the instance still sized",
      test: `${FILE} › an HPA added later`,
      figures: { secondsToConflict: detectSeconds, replicasChangedAfterConflict: 0 },
    });
  });
});

describe("reliability matrix: impossible values (the decision, pure)", () => {
  it("partial series: a signal known in some buckets only is incomplete, and blocks scale-in", () => {
    const current = { sku: "Premium_P1" as const, units: 20 };
    // 6,000 connections on 20 units: known everywhere, the decision would scale in.
    const base = samples({ serverLoadPercent: 30, connections: 6000, connectionQuotaUtilizationPercent: 30 });
    const known = decide({ policy: policy(spec()), samples: base, current, now: NOW });
    // The same window with server load missing in two of its buckets.
    const partial = base.map((x, i) => (i === 9 || i === 10 ? { ...x, serverLoadPercent: null } : x));
    const d = decide({ policy: policy(spec()), samples: partial as typeof base, current, now: NOW });
    expect(known.recommendation?.units ?? 20).toBeLessThan(20);
    expect(d.reasons.some((r) => r.code === "SignalIncomplete")).toBe(true);
    expect(d.scaleIn.blockedBy).toContain("MetricsIncomplete");
    recordFault({
      id: "metrics-partial-series",
      endpoint: "Azure Monitor",
      fault:
        "a series with values missing in some buckets of the window (server load, 2 of the window's buckets)",
      outcome: "SignalIncomplete; no scale-in until the window is complete",
      test: `${FILE} › partial series`,
      figures: {
        unitsWithCompleteData: known.recommendation?.units ?? 0,
        scaleInBlockedBy: d.scaleIn.blockedBy.join(","),
        scaleInsOnUnknownData: 0,
      },
    });
  });

  it("ServerLoad 4,000 %, NaN, ±Infinity and negatives are unknown for their bucket: no scale-in, no runaway", () => {
    const current = { sku: "Premium_P1" as const, units: 20 };
    const base = samples({ serverLoadPercent: 30, connections: 6000, connectionQuotaUtilizationPercent: 30 });
    const reference = decide({ policy: policy(spec()), samples: base, current, now: NOW });
    const outcomes = [4000, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, 1e12].map(
      (v) => {
        const bad = base.map((x, i) => (i === 10 ? { ...x, serverLoadPercent: v, connections: v } : x));
        const d = decide({ policy: policy(spec()), samples: bad, current, now: NOW });
        expect(
          d.reasons.some((r) => r.code === "SampleInvalid"),
          String(v),
        ).toBe(true);
        expect(d.scaleIn.blockedBy, String(v)).toContain("MetricsIncomplete");
        expect(d.recommendation?.units ?? 0, String(v)).toBeLessThanOrEqual(
          reference.recommendation?.units ?? 0,
        );
        return d;
      },
    );
    recordFault({
      id: "metrics-impossible-values",
      endpoint: "Azure Monitor",
      fault: "impossible values in one bucket: ServerLoad and connections 4,000 %, NaN, ±Infinity, −1, 10¹²",
      outcome: "unknown for its bucket (SampleInvalid), never demand: scale-in blocked, no runaway scale-out",
      test: `${FILE} › impossible values`,
      figures: {
        cases: outcomes.length,
        scaleInsOnUnknownData: 0,
        maxRecommendedUnits: Math.max(...outcomes.map((d) => d.recommendation?.units ?? 0)),
        unitsWithoutTheBadBucket: reference.recommendation?.units ?? 0,
      },
    });
  });
});
