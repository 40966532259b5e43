/**
 * A policy whose resource ID the parser refuses — stored before the CRD admitted only valid IDs
 * (an upgrade does not re-validate stored objects) — gets Ready=False, InvalidSpec with the
 * parser's reason as a condition and an Event; the pass does not throw and reads nothing from
 * Azure. The pass runs against the real API server (status subresource, Events).
 */
import { pino } from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import type { CapacityPolicy } from "../../src/api/index.js";
import type { AzureInstances } from "../../src/azure/index.js";
import { OperatorMetrics } from "../../src/controller/metrics.js";
import { type PassDeps, reconcile } from "../../src/controller/reconcile.js";
import type { KubeClients } from "../../src/kube/client.js";
import { EventRecorder } from "../../src/kube/events.js";
import { PolicyClient } from "../../src/kube/policies.js";
import { WorkloadClient } from "../../src/kube/workloads.js";
import { adminClients, createNamespace, ensureCrd } from "../kube/support.js";
import { recordFault } from "../reliability/record.js";
import { SUB, signalrId } from "./harness.js";
import { condition, createPolicy, eventsOnce, getPolicy, policyManifest } from "./helpers.js";

let kube: KubeClients;
let ns: string;

beforeAll(async () => {
  await ensureCrd();
  kube = adminClients();
  ns = await createNamespace(kube, "rid");
});

describe("a stored resource ID the parser refuses", () => {
  it.each([
    [
      "name-underscore",
      `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat_prod`,
      /name "chat_prod" is not valid/,
    ],
    [
      "subscription",
      "/subscriptions/sub-a/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat",
      /subscription "sub-a" is not a GUID/,
    ],
    [
      "group-dots",
      `/subscriptions/${SUB}/resourceGroups/../providers/Microsoft.SignalRService/SignalR/chat`,
      /resource group "\.\." is not valid/,
    ],
  ])("%s: Ready=False InvalidSpec, a condition and an Event, no Azure call", async (name, refusedId, why) => {
    await createPolicy(kube, policyManifest(ns, name, signalrId(name)));
    const stored = await getPolicy(kube, ns, name);
    const policy: CapacityPolicy = {
      ...stored,
      spec: { ...stored.spec, target: { ...stored.spec.target, resourceId: refusedId } },
    };
    const azureCalls: string[] = [];
    const refuse = (what: string) => () => {
      azureCalls.push(what);
      throw new Error(`${what} must not be called`);
    };
    const deps: PassDeps = {
      policies: new PolicyClient(kube),
      workloads: new WorkloadClient(kube),
      events: new EventRecorder(kube, { instance: "resource-id-test" }),
      instances: new Proxy({}, { get: (_, prop) => refuse(`instances.${String(prop)}`) }) as AzureInstances,
      log: pino({ level: "silent" }),
      metrics: new OperatorMetrics({ now: Date.now, processMetrics: false }),
      now: Date.now,
      canWrite: () => true,
      signal: new AbortController().signal,
    };

    const result = await reconcile(policy, undefined, deps);
    expect(result.outcome).toBe("invalid");
    expect(azureCalls).toEqual([]);

    const after = await getPolicy(kube, ns, name);
    const ready = condition(after, "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "InvalidSpec" });
    expect(ready?.message).toMatch(/^spec\.target\.resourceId: malformed resource ID/);
    expect(ready?.message).toMatch(why);
    const events = await eventsOnce(kube, ns, name, (es) =>
      es.some((e) => e.type === "Warning" && e.reason === "InvalidSpec"),
    );
    const invalid = events.filter((e) => e.type === "Warning" && e.reason === "InvalidSpec");
    expect(invalid).toHaveLength(1);
    expect(invalid[0]?.message).toMatch(why);

    recordFault({
      id: `spec-resource-id-${name}`,
      endpoint: "spec",
      fault: `stored resource ID the parser refuses (${name})`,
      outcome:
        "Ready=False InvalidSpec with the reason, a Warning Event, the pass does not throw, no Azure call",
      test: `test/operator/resource-id.test.ts > a stored resource ID the parser refuses > ${name}`,
      figures: {
        azureCalls: azureCalls.length,
        ready: `${ready?.status}/${ready?.reason}`,
        invalidSpecEvents: invalid.length,
        armWrites: 0,
        scaleIns: 0,
      },
    });
  });
});
