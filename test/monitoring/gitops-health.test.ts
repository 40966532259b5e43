/**
 * A CapacityPolicy's health as GitOps tools read it, on policies a real operator (the operator
 * tests' harness: local API server, HTTPS Azure emulator) brought to each state — Ready, an ARM
 * update in flight, InvalidSpec, Fallback, an instance that does not exist, paused — and on two
 * derived from the Ready one: a new
 * generation not yet observed, and no status yet. Each object is read by deploy/gitops/
 * argocd-health.lua in Argo CD's Lua runtime and by Flux's kstatus (`gitops-health`, built from
 * gitops/). Where the two differ is documented in docs/install.md ("GitOps health").
 *
 * The same operator's /metrics body then carries every metric the Grafana dashboard and the
 * PrometheusRule use (names read with Prometheus' PromQL grammar), with the policies' values.
 */
import { describe, expect, inject, it } from "vitest";
import { PAUSE_ANNOTATION } from "../../src/api/constants.js";
import type { CapacityPolicy } from "../../src/api/index.js";
import { eventually } from "../kube/support.js";
import { operatorSuite, signalrId } from "../operator/harness.js";
import { condition, createPolicy, getPolicy, policyManifest } from "../operator/helpers.js";
import {
  dashboardQueries,
  exportedMetrics,
  HEALTH_LUA,
  ruleQueries,
  run,
  selectedMetrics,
} from "./support.js";

// A scale takes 30 virtual minutes, 30 s at speed 60: long enough to read the update in flight.
const suite = operatorSuite("gitops", { emulator: { speed: 60, scaleDurationMs: 1_800_000 } });

interface Health {
  status: string;
  message: string;
}

async function health(tool: "argocd" | "kstatus", policy: CapacityPolicy): Promise<Health> {
  const args = tool === "argocd" ? ["argocd", HEALTH_LUA] : ["kstatus"];
  const r = await run(inject("monitoringTools").gitopsHealth, args, { input: JSON.stringify(policy) });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Health;
}

/** Waits until `check` passes on the policy, and returns it. */
function policyWhen(name: string, check: (p: CapacityPolicy) => void): Promise<CapacityPolicy> {
  return eventually(
    async () => {
      const p = await getPolicy(suite.kube, suite.ns, name);
      check(p);
      return p;
    },
    60_000,
    200,
  );
}

describe("CapacityPolicy health in Argo CD and Flux", () => {
  it("reads each state the operator writes, and the metrics the dashboard and alerts use are exported", async () => {
    const { kube, ns, h } = suite;
    const add = async (name: string, connections: number) => {
      const id = signalrId(`gitops-${name}`);
      h.emulator.control.addInstance({ resourceId: id, sku: "Premium_P1", units: 10, connections });
      return id;
    };
    // Ready: 2,000 connections on 10 units, held at 10 by units.min.
    const readyId = await add("ready", 2000);
    await createPolicy(kube, policyManifest(ns, "ready", readyId, { units: { min: 10, max: 50 } }));
    // An update in flight: 9,000 connections on 10 units scale out to 20.
    const scalingId = await add("scaling", 9000);
    await createPolicy(kube, policyManifest(ns, "scaling", scalingId, { units: { min: 1, max: 50 } }));
    // InvalidSpec: a time zone the API server accepts and the operator refuses.
    const invalidId = await add("invalid", 2000);
    await createPolicy(
      kube,
      policyManifest(ns, "invalid", invalidId, {
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
    // Fallback: Azure Monitor answers without values.
    // In a region of its own: the fault empties every series of the getBatch request it matches.
    const fallbackId = signalrId("gitops-fallback");
    h.emulator.control.addInstance({
      resourceId: fallbackId,
      location: "eastus",
      sku: "Premium_P1",
      units: 10,
      connections: 2000,
    });
    h.emulator.control.addFault({
      path: "**/metrics:getBatch",
      resourceIds: [fallbackId],
      action: { kind: "nullSeries" },
    });
    await createPolicy(
      kube,
      policyManifest(ns, "fallback", fallbackId, {
        units: { min: 10, max: 50 },
        fallback: { failureThreshold: 2, action: "Hold" },
      }),
    );
    // A resource ID that names nothing: the emulator answers 404 ResourceNotFound.
    await createPolicy(
      kube,
      policyManifest(ns, "missing", signalrId("gitops-missing", "rg-gone"), { units: { min: 10, max: 50 } }),
    );
    // Paused by the annotation.
    const pausedId = await add("paused", 2000);
    const paused = policyManifest(ns, "paused", pausedId, { units: { min: 10, max: 50 } });
    await createPolicy(kube, {
      ...paused,
      metadata: { ...(paused["metadata"] as object), annotations: { [PAUSE_ANNOTATION]: "true" } },
    });

    const scaling = await policyWhen("scaling", (p) => expect(p.status?.operation?.to.units).toBe(20));
    const ready = await policyWhen("ready", (p) =>
      expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "Reconciled" }),
    );
    const invalid = await policyWhen("invalid", (p) =>
      expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "InvalidSpec" }),
    );
    const fallback = await policyWhen("fallback", (p) =>
      expect(condition(p, "Fallback")).toMatchObject({ status: "True", reason: "FallbackHold" }),
    );
    const missing = await policyWhen("missing", (p) =>
      expect(condition(p, "Ready")).toMatchObject({ status: "False", reason: "InstanceNotFound" }),
    );
    const pausedPolicy = await policyWhen("paused", (p) =>
      expect(condition(p, "Ready")).toMatchObject({ status: "True", reason: "Paused" }),
    );
    for (const p of [ready, scaling, invalid, fallback, pausedPolicy]) {
      expect(p.status?.observedGeneration, p.metadata.name).toBe(p.metadata.generation);
    }
    // As a `kubectl apply` of a new spec leaves it until the operator's next pass, and before its first.
    const generation = ready.metadata.generation ?? 1;
    const unobserved = { ...ready, metadata: { ...ready.metadata, generation: generation + 1 } };
    const { status: _status, ...fresh } = ready;

    const cases: [string, CapacityPolicy, Health, Health][] = [
      [
        "ready",
        ready,
        {
          status: "Healthy",
          message: `10 units of Premium_P1; Ready=True (Reconciled): ${condition(ready, "Ready")?.message}`,
        },
        { status: "Current", message: "Resource is Ready" },
      ],
      [
        "update in flight",
        scaling,
        {
          status: "Progressing",
          message: `Scaling to 20 units of Premium_P1 since ${scaling.status?.operation?.startedAt}`,
        },
        { status: "InProgress", message: "an ARM update of the instance runs" },
      ],
      [
        "InvalidSpec",
        invalid,
        {
          status: "Degraded",
          message:
            'Ready=False (InvalidSpec): spec.schedules[0].timeZone: unknown time zone "Mars/Olympus_Mons"',
        },
        {
          status: "Failed",
          message: 'spec.schedules[0].timeZone: unknown time zone "Mars/Olympus_Mons"',
        },
      ],
      [
        "Fallback",
        fallback,
        { status: "Degraded", message: `Ready=False (Fallback): ${condition(fallback, "Ready")?.message}` },
        { status: "Failed", message: `${condition(fallback, "Ready")?.message}` },
      ],
      [
        "InstanceNotFound",
        missing,
        {
          status: "Degraded",
          message: `Ready=False (InstanceNotFound): ${condition(missing, "Ready")?.message}`,
        },
        { status: "Failed", message: `${condition(missing, "Ready")?.message}` },
      ],
      [
        "paused",
        pausedPolicy,
        {
          status: "Suspended",
          message: `10 units of Premium_P1; Ready=True (Paused): ${condition(pausedPolicy, "Ready")?.message}`,
        },
        { status: "Current", message: "Resource is Ready" },
      ],
      [
        "generation not yet observed",
        unobserved,
        {
          status: "Progressing",
          message: `Waiting for the operator to observe generation ${generation + 1}`,
        },
        {
          status: "InProgress",
          message: `CapacityPolicy generation is ${generation + 1}, but latest observed generation is ${generation}`,
        },
      ],
      [
        "no status yet",
        fresh,
        { status: "Progressing", message: "Waiting for the operator to reconcile the policy" },
        { status: "Current", message: "Resource is current" },
      ],
    ];
    for (const [state, policy, argo, kstatus] of cases) {
      expect(await health("argocd", policy), `Argo CD, ${state}`).toEqual(argo);
      expect(await health("kstatus", policy), `kstatus, ${state}`).toEqual(kstatus);
    }

    // /metrics of the same operator: every metric the dashboard and the alerts use is exported.
    const body = (await h.metrics.expose()).body;
    const exported = exportedMetrics(body);
    const used = new Set<string>();
    for (const q of [...dashboardQueries(), ...ruleQueries()]) {
      for (const name of selectedMetrics(q.expr)) {
        used.add(name);
        expect(exported.has(name), `${q.where} uses ${name}, which /metrics does not export`).toBe(true);
      }
    }
    expect(used.size).toBeGreaterThan(15);
    // …with the policies' values.
    const line = (name: string, labels: string) => `signalr_autoscaler_${name}{namespace="${ns}",${labels}}`;
    expect(body).toContain(
      `${line("status_condition", 'policy="fallback",type="Fallback",status="True"')} 1`,
    );
    expect(body).toContain(`${line("status_condition", 'policy="invalid",type="Ready",status="False"')} 1`);
    expect(body).toContain(`${line("status_condition", 'policy="ready",type="Ready",status="True"')} 1`);
    expect(body).toContain(`${line("current_sku_info", 'policy="ready",sku="Premium_P1"')} 1`);
    expect(body).toContain(`${line("spec_max_units", 'policy="ready"')} 50`);
    expect(body).toContain(`${line("spec_poll_interval_seconds", 'policy="ready"')} 15`);
    expect(body).toContain(`${line("desired_units", 'policy="scaling"')} 20`);
    expect(body).toMatch(new RegExp(`${line("update_age_seconds", 'policy="scaling"')} \\d+`));
    expect(body).toContain(`${line("update_deadline_seconds", 'policy="scaling"')} 1800`);
    expect(body).toMatch(new RegExp(`${line("last_reconcile_timestamp_seconds", 'policy="ready"')} \\d+`));
  });
});
