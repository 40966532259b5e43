/**
 * Observability of a running operator: /metrics carries every family with values that follow the
 * emulator's load (Azure calls by API and status including 429s, ARM remaining quota, decisions,
 * scale operations, samples, replicas, queue, pass duration, leader); logs are JSON with a child
 * logger per pass; /healthz stays up while /readyz fails when the API server cannot be reached or,
 * for the leader, when Azure cannot.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import {
  adminClients,
  CHAT_HUB,
  clientsFor,
  controlPlane,
  createDeployment,
  createNamespace,
  ensureCrd,
  eventually,
} from "../kube/support.js";
import {
  condition,
  createPolicy,
  getPolicy,
  httpGet,
  policyManifest,
  sampleSum,
  sampleValue,
  signalrId,
  startFastEmulator,
  startOperator,
  startRelay,
  type TestOperator,
} from "./support.js";

const P = "signalr_autoscaler_";
const FAST_LEASE = { leaseDurationSeconds: 4, renewDeadlineSeconds: 3, retryPeriodSeconds: 0.5 };

let admin: KubeClients;
let emulator: RunningEmulator;
const running: TestOperator[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  await ensureCrd();
  admin = adminClients();
  emulator = await startFastEmulator({ armRateLimit: true });
});

afterAll(async () => {
  for (const op of running) await op.stop();
  for (const c of cleanups) await c();
  await emulator?.stop();
});

async function scrape(op: TestOperator): Promise<string> {
  const r = await httpGet(`${op.probesUrl}/metrics`);
  expect(r.status).toBe(200);
  return r.body;
}

describe("/metrics and logs", () => {
  it("exposes every family, with values that follow the emulator's load", async () => {
    const ns = await createNamespace(admin, "obs");
    const id = signalrId("obs-chat");
    emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 1200 });
    await createDeployment(admin, ns, "chat-hub", 1);
    await createPolicy(
      admin,
      policyManifest(ns, "chat", id, {
        units: { min: 10, max: 50 },
        appServer: CHAT_HUB,
      }),
    );
    const op = await startOperator({
      kube: adminClients(),
      emulator,
      probes: true,
      settings: {
        namespaces: [ns],
        identity: "obs-0",
        leaderElection: {
          leaseName: "signalr-autoscaler",
          leaseNamespace: ns,
          identity: "obs-0",
          ...FAST_LEASE,
        },
      },
    });
    running.push(op);
    await eventually(
      async () => expect(condition(await getPolicy(admin, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      250,
    );
    const policy = { namespace: ns, policy: "chat" };
    const before = await eventually(
      async () => {
        const body = await scrape(op);
        expect(sampleValue(body, `${P}current_replicas`, policy)).toBe(2);
        return body;
      },
      30_000,
      250,
    );

    for (const family of [
      "current_units",
      "desired_units",
      "current_replicas",
      "desired_replicas",
      "last_sample",
      "last_sample_age_seconds",
      "decisions_total",
      "scale_operations_total",
      "azure_requests_total",
      "azure_request_duration_seconds",
      "arm_remaining_requests",
      "queue_depth",
      "reconcile_duration_seconds",
      "leader",
      "process_cpu_seconds_total",
    ]) {
      expect(before, family).toContain(`# TYPE ${P}${family} `);
    }
    expect(sampleValue(before, `${P}current_units`, policy)).toBe(10);
    expect(sampleValue(before, `${P}desired_units`, policy)).toBe(10);
    expect(sampleValue(before, `${P}desired_replicas`, policy)).toBe(2);
    // Client connections plus the app servers' own.
    const connections = (body: string) =>
      sampleValue(body, `${P}last_sample`, { ...policy, metric: "connections" });
    expect(connections(before)).toBeGreaterThanOrEqual(1200);
    expect(connections(before)).toBeLessThan(1300);
    expect(sampleValue(before, `${P}last_sample_age_seconds`, policy)).toBeGreaterThan(0);
    expect(sampleSum(before, `${P}decisions_total`, policy)).toBeGreaterThan(0);
    expect(
      sampleValue(before, `${P}azure_requests_total`, { api: "GET SignalR", status: "200" }),
    ).toBeGreaterThan(0);
    expect(
      sampleValue(before, `${P}azure_requests_total`, { api: "POST metrics:getBatch", status: "200" }),
    ).toBeGreaterThan(0);
    expect(
      sampleValue(before, `${P}azure_request_duration_seconds_count`, { api: "POST metrics:getBatch" }),
    ).toBeGreaterThan(0);
    expect(sampleValue(before, `${P}arm_remaining_requests`, { kind: "subscription-reads" })).toBeGreaterThan(
      0,
    );
    expect(sampleValue(before, `${P}queue_depth`)).toBeGreaterThanOrEqual(0);
    expect(sampleValue(before, `${P}reconcile_duration_seconds_count`)).toBeGreaterThan(0);
    expect(sampleValue(before, `${P}leader`)).toBe(1);

    // ARM throttles a list once: the 429 is counted.
    emulator.control.addFault({
      method: "GET",
      path: "/subscriptions/*/providers/Microsoft.SignalRService/signalR",
      times: 1,
      action: { kind: "status", status: 429, code: "SubscriptionRequestsThrottled", retryAfterSeconds: 1 },
    });
    await eventually(
      async () =>
        expect(
          sampleValue(await scrape(op), `${P}azure_requests_total`, { api: "GET SignalR", status: "429" }),
        ).toBe(1),
      30_000,
      250,
    );

    // The load rises: samples, decision, scale operation and replicas follow.
    emulator.control.setDemand(id, { connections: 9000 });
    const during = await eventually(
      async () => {
        const body = await scrape(op);
        expect(connections(body)).toBeGreaterThanOrEqual(9000);
        expect(sampleValue(body, `${P}desired_units`, policy)).toBe(20);
        expect(
          sampleValue(body, `${P}scale_operations_total`, {
            ...policy,
            target: "instance",
            result: "started",
          }),
        ).toBe(1);
        return body;
      },
      60_000,
      250,
    );
    expect(sampleValue(during, `${P}decisions_total`, { ...policy, reason: "ScaleOut" })).toBeGreaterThan(0);
    expect(sampleValue(during, `${P}azure_requests_total`, { api: "PATCH SignalR", status: "202" })).toBe(1);
    expect(
      sampleValue(during, `${P}arm_remaining_requests`, { kind: "subscription-writes" }),
    ).toBeGreaterThan(0);
    const replicas = sampleValue(during, `${P}desired_replicas`, policy) ?? 0;
    expect(replicas).toBeGreaterThanOrEqual(9);
    const after = await eventually(
      async () => {
        const body = await scrape(op);
        expect(sampleValue(body, `${P}current_units`, policy)).toBe(20);
        expect(
          sampleValue(body, `${P}scale_operations_total`, {
            ...policy,
            target: "instance",
            result: "succeeded",
          }),
        ).toBe(1);
        return body;
      },
      60_000,
      250,
    );
    expect(sampleValue(after, `${P}current_replicas`, policy)).toBe(replicas);
    expect(
      sampleValue(after, `${P}azure_requests_total`, { api: "GET operationStatuses", status: "200" }),
    ).toBeGreaterThan(0);

    // Logs: one JSON object per line; each pass logs through a child carrying the policy.
    const passes = op.logs.lines.filter((l) => l["msg"] === "pass done");
    expect(passes.length).toBeGreaterThan(0);
    for (const line of passes) {
      expect(line).toMatchObject({ namespace: ns, policy: "chat", component: "signalr-autoscaler" });
      expect(typeof line["time"]).toBe("string");
    }
    expect(op.logs.lines.some((l) => l["msg"] === "became leader")).toBe(true);
  });
});

describe("/healthz and /readyz", () => {
  it("stays live but not ready while the API server cannot be reached, and ready again when it can", async () => {
    const ns = await createNamespace(admin, "readyz");
    const server = new URL(controlPlane().server);
    const relay = await startRelay({ host: server.hostname, port: Number(server.port) });
    cleanups.push(() => relay.close());
    const dir = await mkdtemp(join(tmpdir(), "relay-kubeconfig-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const kubeconfig = join(dir, "kubeconfig");
    const text = await readFile(controlPlane().kubeconfigAdmin, "utf8");
    await writeFile(kubeconfig, text.replace(server.origin, `https://127.0.0.1:${relay.port}`), {
      mode: 0o600,
    });

    const op = await startOperator({
      kube: clientsFor(kubeconfig),
      emulator,
      probes: true,
      settings: {
        namespaces: [ns],
        identity: "readyz-0",
        leaderElection: {
          leaseName: "signalr-autoscaler",
          leaseNamespace: ns,
          identity: "readyz-0",
          ...FAST_LEASE,
        },
      },
    });
    running.push(op);
    const url = op.probesUrl as string;
    await eventually(
      async () => expect(await httpGet(`${url}/readyz`)).toEqual({ status: 200, body: "ok\n" }),
      20_000,
    );
    await eventually(() => expect(op.operator.isLeader).toBe(true), 20_000, 100);

    await relay.cut();
    const notReady = await eventually(
      async () => {
        const r = await httpGet(`${url}/readyz`);
        expect(r.status).toBe(503);
        return r.body;
      },
      20_000,
      100,
    );
    expect(notReady).toMatch(/^watch: policy watch not healthy: /);
    expect(await httpGet(`${url}/healthz`)).toEqual({ status: 200, body: "ok\n" });
    // Without the API server it cannot renew: past the renew deadline it no longer leads.
    await eventually(() => expect(op.operator.isLeader).toBe(false), 10_000, 100);
    expect((await httpGet(`${url}/readyz`)).status).toBe(503);

    await relay.restore();
    await eventually(async () => expect((await httpGet(`${url}/readyz`)).status).toBe(200), 60_000, 250);
    await eventually(() => expect(op.operator.isLeader).toBe(true), 20_000, 100);

    // Leading, with Azure failing every call: not ready, and ready again once it answers.
    const id = signalrId("readyz-chat", "rg-readyz", "33333333-3333-3333-3333-333333333333");
    emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 2, connections: 500 });
    const fault = emulator.control.addFault({
      path: "/subscriptions/33333333-3333-3333-3333-333333333333/**",
      action: { kind: "status", status: 503, code: "ServiceUnavailable" },
    });
    await createPolicy(admin, policyManifest(ns, "chat", id));
    const azureDown = await eventually(
      async () => {
        const r = await httpGet(`${url}/readyz`);
        expect(r.status).toBe(503);
        return r.body;
      },
      30_000,
      100,
    );
    expect(azureDown).toMatch(/^azure: last Azure poll failed: /);
    emulator.control.removeFault(fault.id);
    await eventually(async () => expect((await httpGet(`${url}/readyz`)).status).toBe(200), 30_000, 100);
    expect(await httpGet(`${url}/nope`)).toMatchObject({ status: 404 });
  });
});
