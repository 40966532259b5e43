/**
 * A token in an Azure error never leaves the operator: the emulator answers an ARM update and then
 * the subscription's list with a 401 whose message carries `Authorization: Bearer <JWT>`, a client
 * secret and a connection string's AccessKey (as a misbehaving gateway might echo them). None of
 * them appears on /readyz, /healthz, /metrics, in the policy's status, its Events or the log
 * lines — while the failure itself is reported on each.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningEmulator } from "../../src/emulator/index.js";
import type { KubeClients } from "../../src/kube/client.js";
import { SAMPLE_JWT } from "../../src/shared/redact-samples.js";
import { adminClients, createNamespace, ensureCrd, eventually } from "../kube/support.js";
import { eventsFor } from "../operator/helpers.js";
import { recordFault } from "../reliability/record.js";
import {
  condition,
  createPolicy,
  getPolicy,
  httpGet,
  policyManifest,
  SUB,
  signalrId,
  startFastEmulator,
  startOperator,
  type TestOperator,
} from "./support.js";

const CLIENT_SECRET = "Cl1ent~S3cret.Value_x";
const ACCESS_KEY = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=";
const SECRETS = [SAMPLE_JWT, CLIENT_SECRET, ACCESS_KEY];
const MESSAGE = `The access token is invalid. Authorization: Bearer ${SAMPLE_JWT}; client_secret=${CLIENT_SECRET}; Endpoint=https://chat.service.signalr.net;AccessKey=${ACCESS_KEY};`;

let admin: KubeClients;
let emulator: RunningEmulator;
let op: TestOperator | undefined;

beforeAll(async () => {
  await ensureCrd();
  admin = adminClients();
  emulator = await startFastEmulator();
});

afterAll(async () => {
  await op?.stop();
  await emulator?.stop();
});

const leaks = (text: string) => SECRETS.filter((s) => text.includes(s));

describe("a 401 that echoes a token", { timeout: 120_000 }, () => {
  it("is reported on every surface without the token", async () => {
    const ns = await createNamespace(admin, "redact");
    const id = signalrId("redact-chat");
    emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections: 1200 });
    await createPolicy(admin, policyManifest(ns, "chat", id, { units: { min: 10, max: 50 } }));
    op = await startOperator({
      kube: adminClients(),
      emulator,
      probes: true,
      settings: { namespaces: [ns] },
    });
    await eventually(
      async () => expect(condition(await getPolicy(admin, ns, "chat"), "Ready")?.status).toBe("True"),
      60_000,
      250,
    );
    const unauthorized = {
      kind: "status",
      status: 401,
      code: "InvalidAuthenticationToken",
      message: MESSAGE,
    } as const;

    // An update refused with the token in its message: a Warning Event.
    emulator.control.addFault({ method: "PATCH", path: "**/SignalR/redact-chat", action: unauthorized });
    emulator.control.setDemand(id, { connections: 9000 });
    const warnings = await eventually(
      async () => {
        const events = (await eventsFor(admin, ns, "chat")).filter((e) => e.type === "Warning");
        expect(events.some((e) => e.message.includes("InvalidAuthenticationToken"))).toBe(true);
        return events;
      },
      60_000,
      250,
    );

    // Reads refused too: the condition and /readyz report the failure.
    emulator.control.addFault({ method: "GET", path: `/subscriptions/${SUB}/**`, action: unauthorized });
    const failed = await eventually(
      async () => {
        const p = await getPolicy(admin, ns, "chat");
        expect(condition(p, "MetricsAvailable")?.message).toMatch(
          /not authorized \(401 InvalidAuthenticationToken/,
        );
        const ready = await httpGet(`${op?.probesUrl}/readyz`);
        expect(ready.status).toBe(503);
        expect(ready.body).toMatch(/azure: last Azure poll failed: .*401/);
        return { policy: p, ready };
      },
      60_000,
      250,
    );
    const healthz = await httpGet(`${op.probesUrl}/healthz`);
    const metrics = await httpGet(`${op.probesUrl}/metrics`);
    const events = await eventsFor(admin, ns, "chat");
    const status = JSON.stringify(failed.policy.status);
    const surfaces: Record<string, string> = {
      readyz: failed.ready.body,
      healthz: healthz.body,
      metrics: metrics.body,
      status,
      events: JSON.stringify(events),
      logs: op.logs.text,
    };
    // The failure reached each surface that reports it, the token none.
    expect(failed.ready.body).toContain("Authorization: Bearer [redacted]");
    expect(status).toContain("Authorization: Bearer [redacted]");
    expect(JSON.stringify(warnings)).toContain("[redacted]");
    expect(op.logs.text).toContain("InvalidAuthenticationToken");
    expect(metrics.body).toContain('status="401"');
    expect(healthz.status).toBe(200);
    for (const [surface, text] of Object.entries(surfaces)) {
      expect({ surface, leaks: leaks(text) }).toEqual({ surface, leaks: [] });
    }
    const armUnauthorized = emulator.control.requests().filter((r) => r.status === 401).length;
    recordFault({
      id: "arm-401-token-in-message",
      endpoint: "ARM",
      fault: "401 whose error message echoes Authorization: Bearer <JWT>, a client_secret and an AccessKey",
      outcome:
        "the failure is reported on /readyz, status, Events and logs with the credentials redacted; none on any surface",
      test: "test/production/redaction.test.ts › a 401 that echoes a token is reported on every surface without the token",
      figures: {
        armUnauthorizedAnswers: armUnauthorized,
        surfacesChecked: Object.keys(surfaces).length,
        surfacesLeaking: Object.values(surfaces).filter((t) => leaks(t).length > 0).length,
        readyz: failed.ready.status,
      },
    });
  });
});
