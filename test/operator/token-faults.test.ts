/**
 * The operator's credential fails, end to end: the real operator with a real `@azure/identity`
 * ClientSecretCredential whose authority host is a loopback Microsoft Entra stand-in, against the
 * HTTPS emulator on the local control plane.
 *
 * - Hang: the identity endpoint accepts the connection and never answers. Every token request
 *   ends at its deadline (1 s here), the poll cycle ends and the next ones run; the policy reports
 *   `CredentialUnavailable` with the deadline in the message; `/metrics` counts the token
 *   timeouts; `/readyz` says Azure does not answer. Nothing reaches ARM. When the endpoint answers
 *   again, the policy reconciles on the next cycle and `/readyz` passes.
 * - Refusal: the identity endpoint answers 401 invalid_client. The policy reports
 *   `CredentialUnavailable` with Entra's message, and nothing is scaled.
 *
 * The virtual clock runs 60 times faster than real time: the 15 s poll interval is 250 ms here.
 */
import { ClientSecretCredential } from "@azure/identity";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ProbeServer, startProbeServer } from "../../src/controller/http.js";
import type { PassReport } from "../../src/controller/operator.js";
import type { KubeClients } from "../../src/kube/client.js";
import {
  type IdentityEndpoint,
  type IdentityMode,
  startIdentityEndpoint,
} from "../azure/identity-endpoint.js";
import { adminClients, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import { type Harness, signalrId, startHarness } from "./harness.js";
import {
  armWritesFor,
  condition,
  createPolicy,
  getPolicy,
  policyManifest,
  requestCollector,
} from "./helpers.js";

const TOKEN_TIMEOUT_MS = 1000;
const CYCLE_TIMEOUT_MS = 4000;
/** Scheduling, the pass and its status write on a busy 2-core machine, ms. */
const MARGIN_MS = 2000;
const FILE = "test/operator/token-faults.test.ts";

let kube: KubeClients;
let harness: Harness | undefined;
let identity: IdentityEndpoint | undefined;
let probes: ProbeServer | undefined;

beforeAll(async () => {
  await ensureCrd();
  kube = adminClients();
});
afterEach(async () => {
  await probes?.close();
  await harness?.stop();
  await identity?.close();
  probes = undefined;
  harness = undefined;
  identity = undefined;
});

/** An operator whose credential asks `identity` for its tokens, its probes, a policy on `chat`. */
async function start(prefix: string, mode: IdentityMode) {
  identity = await startIdentityEndpoint(mode);
  const credential = new ClientSecretCredential("tenant-1", `client-${prefix}`, "not-a-secret", {
    authorityHost: identity.url,
    disableInstanceDiscovery: true,
    tlsOptions: { ca: identity.caPem },
  });
  const ns = await createNamespace(kube, prefix);
  const requests = requestCollector();
  harness = await startHarness(kube, {
    emulator: { speed: 60, onRequest: requests.onRequest },
    azure: { credential, tokenTimeoutMs: TOKEN_TIMEOUT_MS },
    operator: { namespaces: [ns], pollCycleTimeoutMs: CYCLE_TIMEOUT_MS, readinessMarginMs: MARGIN_MS },
  });
  const h = harness;
  probes = await startProbeServer({
    address: "127.0.0.1:0",
    metrics: () => h.metrics.expose(),
    readiness: h.operator.readiness(),
  });
  const id = signalrId("chat");
  h.emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 2000 });
  await createPolicy(kube, policyManifest(ns, "chat", id, { units: { min: 1, max: 50 } }));
  return { ns, id, requests, h, url: probes.url };
}

async function readyz(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: await res.text() };
}

async function metricValue(url: string, series: string): Promise<number> {
  const body = await (await fetch(`${url}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe("the operator's credential", () => {
  it("a token request that never answers ends at its deadline; cycles go on; the policy recovers with the endpoint", async () => {
    const { ns, id, requests, h, url } = await start("tokhang", "hang");
    const passes: number[] = [];
    const failed: PassReport[] = [];
    h.operator.onPass((r) => {
      if (r.error) failed.push(r);
      passes.push(performance.now());
    });

    const p = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "CredentialUnavailable" });
        return p;
      },
      30_000,
      100,
    );
    expect(condition(p, "Ready")?.message).toContain(
      `no token within ${TOKEN_TIMEOUT_MS / 1000} s: the identity endpoint did not answer in time`,
    );
    // Later cycles keep running: three more passes, each cycle within its deadline plus a margin.
    const from = passes.length;
    await eventually(
      () => expect(passes.length).toBeGreaterThanOrEqual(from + 3),
      4 * (CYCLE_TIMEOUT_MS + MARGIN_MS),
      100,
    );
    const window = passes.slice(Math.max(0, from - 1));
    const gaps = window.slice(1).map((t, i) => t - (window[i] as number));
    expect(gaps.length).toBeGreaterThanOrEqual(2);
    console.log(
      `[token-faults] pass gaps while the identity endpoint hangs (ms): ${gaps.map(Math.round).join(" ")}`,
    );
    expect(Math.max(...gaps)).toBeLessThan(CYCLE_TIMEOUT_MS + MARGIN_MS);
    expect(failed).toEqual([]);
    expect(identity?.hungConnections).toBeGreaterThanOrEqual(1);

    // /readyz tells the truth; /metrics counts the token timeouts.
    const notReady = await readyz(url);
    expect(notReady.status).toBe(503);
    expect(notReady.body).toContain("azure: last Azure poll failed: instances.listBySubscription");
    expect(notReady.body).toContain("could not get a token: no token within 1 s");
    const timeouts = await metricValue(url, 'signalr_autoscaler_azure_request_timeouts_total{api="token"}');
    expect(timeouts).toBeGreaterThanOrEqual(3);
    // No token, no request: nothing reached ARM or Azure Monitor.
    expect(requests.all.filter((r) => r.kind !== "other")).toEqual([]);

    const recovering = performance.now();
    if (identity) identity.mode = "answer";
    const recovered = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "Reconciled" });
        expect(condition(p, "MetricsAvailable")?.status).toBe("True");
        return p;
      },
      30_000,
      100,
    );
    const recoverySeconds = (performance.now() - recovering) / 1000;
    expect(recovered.status?.current).toMatchObject({ sku: "Premium_P1", units: 10 });
    await eventually(async () => expect((await readyz(url)).status).toBe(200), 10_000, 100);
    expect(identity?.tokenRequests).toBeGreaterThanOrEqual(1);
    expect(armWritesFor(requests.all, id)).toEqual([]);
    recordFault({
      id: "token-hang",
      endpoint: "token",
      fault: "identity endpoint accepts the connection and never answers",
      outcome:
        "each token request ends at its deadline; cycles go on; Ready=False CredentialUnavailable; /readyz fails; recovers when the endpoint answers",
      test: `${FILE} > a token request that never answers ends at its deadline`,
      figures: {
        tokenTimeoutSeconds: TOKEN_TIMEOUT_MS / 1000,
        maxPassGapSeconds: Math.round(Math.max(...gaps)) / 1000,
        tokenTimeoutsCounted: timeouts,
        armWrites: armWritesFor(requests.all, id).length,
        scaleInsOnUnknownData: 0,
        recoverySeconds: Math.round(recoverySeconds * 10) / 10,
        conditions: "Ready=False CredentialUnavailable",
      },
    });
  });

  it("a token request refused with 401 reports CredentialUnavailable and scales nothing", async () => {
    const { ns, id, requests, h, url } = await start("tokrefuse", "refuse");
    const p = await eventually(
      async () => {
        const p = await getPolicy(kube, ns, "chat");
        expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "CredentialUnavailable" });
        return p;
      },
      30_000,
      100,
    );
    expect(condition(p, "Ready")?.message).toContain("AADSTS7000215: Invalid client secret provided.");
    // Several cycles later: still no request to Azure, the instance as it was.
    const passes = h.reports.length;
    await eventually(() => expect(h.reports.length).toBeGreaterThanOrEqual(passes + 3), 20_000, 100);
    expect(requests.all.filter((r) => r.kind !== "other")).toEqual([]);
    expect(h.emulator.control.instance(id)).toMatchObject({ sku: "Premium_P1", units: 10 });
    expect(identity?.tokenRequests).toBeGreaterThanOrEqual(2);
    const notReady = await readyz(url);
    expect(notReady.status).toBe(503);
    expect(notReady.body).toContain("could not get a token");
    recordFault({
      id: "token-refused",
      endpoint: "token",
      fault: "identity endpoint answers 401 invalid_client",
      outcome: "Ready=False CredentialUnavailable with Entra's message; no request to Azure; nothing scaled",
      test: `${FILE} > a token request refused with 401 reports CredentialUnavailable and scales nothing`,
      figures: {
        tokenRequests: identity?.tokenRequests ?? 0,
        armWrites: armWritesFor(requests.all, id).length,
        scaleInsOnUnknownData: 0,
        conditions: "Ready=False CredentialUnavailable",
      },
    });
  });
});
