/**
 * The CRD installs on a real API server, and `kubectl apply` of an invalid policy is refused by the
 * API server with the CEL rule's message.
 */

import { beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { CRD_NAME, GROUP, PLURAL, VERSION } from "../../src/api/index.js";
import { parseResourceId } from "../../src/api/resource-id.js";
import { RESOURCE_ID_CASES } from "../../src/api/resource-id-cases.js";
import type { KubeClients } from "../../src/kube/client.js";
import { adminClients, controlPlane, createNamespace, ensureCrd, kubectl } from "../kube/support.js";
import { SUB, signalrId } from "./harness.js";
import { getPolicy, kubectlWithInput, policyManifest } from "./helpers.js";

let kube: KubeClients;
let ns: string;

const PROM = {
  serverAddress: "http://prometheus-operated.monitoring.svc:9090",
  query: 'sum(rate(http_server_request_duration_seconds_count{http_route="/chat/negotiate"}[1m]))',
};

const webPubSubId = (name: string) =>
  `/subscriptions/${SUB}/resourceGroups/rg-chat/providers/Microsoft.SignalRService/WebPubSub/${name}`;

function apply(manifest: Record<string, unknown>) {
  const cp = controlPlane();
  return kubectlWithInput(cp.kubectl, cp.kubeconfigAdmin, ["apply", "-f", "-"], stringify(manifest));
}

/** A policy with `spec` fields replaced (shallowly) on top of the test default. */
function policy(name: string, spec: Record<string, unknown>) {
  return policyManifest(ns, name, signalrId(name), spec);
}

beforeAll(async () => {
  await ensureCrd();
  kube = adminClients();
  ns = await createNamespace(kube, "crd");
});

describe("the CapacityPolicy CRD", () => {
  it("installs, is Established and answers to its short name", async () => {
    const established = await kubectl([
      "get",
      "crd",
      CRD_NAME,
      "-o",
      'jsonpath={.status.conditions[?(@.type=="Established")].status}',
    ]);
    expect(established).toBe("True");
    const resources = await kubectl(["api-resources", "--api-group=autoscaling.signalr.dev", "--no-headers"]);
    expect(resources).toMatch(
      /capacitypolicies\s+capol\s+autoscaling\.signalr\.dev\/v1alpha1\s+true\s+CapacityPolicy/,
    );

    const ok = await apply(policy("valid", {}));
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/capacitypolicy\.autoscaling\.signalr\.dev\/valid created/);
    // Defaults are applied by the API server.
    const stored = await getPolicy(kube, ns, "valid");
    expect(stored.spec.mode).toBe("Auto");
    expect(stored.spec.fallback).toEqual({ failureThreshold: 3, action: "Hold" });
  });

  const cases: { name: string; spec: Record<string, unknown>; message: RegExp }[] = [
    {
      name: "min-above-max",
      spec: { units: { min: 20, max: 10 } },
      message: /spec\.units\.min: Invalid value: .*units\.min must be less than or equal to units\.max/,
    },
    {
      name: "p2-small-max",
      spec: { skus: ["Premium_P1", "Premium_P2"], units: { min: 1, max: 50 } },
      message: /spec\.skus: Invalid value: .*Premium_P2 may only be listed in skus when units\.max >= 100/,
    },
    {
      name: "p2-only-small-min",
      spec: { skus: ["Premium_P2"], units: { min: 10, max: 300 } },
      message: /units\.min must be >= 100 when Premium_P2 is the only SKU/,
    },
    {
      name: "max-needs-p2",
      spec: { units: { min: 1, max: 200 } },
      message: /spec\.units\.max: Invalid value: .*units\.max above 100 needs Premium_P2 in skus/,
    },
    {
      name: "webpubsub-id-on-signalr",
      spec: { target: { service: "SignalR", resourceId: webPubSubId("pubsub") } },
      message: /spec\.target\.resourceId: Invalid value: .*target\.resourceId must be an ARM ID/,
    },
    {
      name: "scenario-of-other-service",
      spec: {
        target: { service: "WebPubSub", resourceId: webPubSubId("pubsub") },
        metrics: { traffic: { workload: [{ scenario: "echo", share: 1 }] } },
      },
      message: /metrics\.traffic\.workload names a scenario the target service does not have/,
    },
    {
      name: "shares-not-one",
      spec: {
        metrics: {
          traffic: {
            workload: [
              { scenario: "echo", share: 0.5 },
              { scenario: "broadcast", share: 0.2 },
            ],
          },
        },
      },
      message: /workload shares must sum to 1/,
    },
    {
      name: "no-signal",
      spec: { metrics: { window: "5m" } },
      message: /at least one of serverLoad, connections or traffic must be set/,
    },
    {
      name: "sample-age-below-delay",
      spec: { metrics: { serverLoad: { targetPercent: 70 }, ingestionDelay: "10m", maxSampleAge: "5m" } },
      message:
        /spec\.metrics\.maxSampleAge: Invalid value: .*maxSampleAge must be longer than ingestionDelay/,
    },
    {
      name: "fixed-without-units",
      spec: { fallback: { action: "Fixed" } },
      message: /spec\.fallback\.units: .*units is required when action is Fixed/,
    },
    {
      name: "fixed-outside-range",
      spec: { fallback: { action: "Fixed", units: 80 } },
      message: /fallback\.units must be within units\.min\.\.units\.max/,
    },
    {
      name: "replicas-min-above-max",
      spec: { appServer: { deploymentName: "hub", replicas: { min: 5, max: 2 } } },
      message: /appServer\.replicas\.min must be less than or equal to appServer\.replicas\.max/,
    },
    {
      name: "schedule-above-max",
      spec: { schedules: [{ name: "peak", cron: "0 8 * * 1-5", durationMinutes: 60, minUnits: 60 }] },
      message: /schedules\[\]\.minUnits must be less than or equal to units\.max/,
    },
    {
      name: "headroom-horizon-too-long",
      spec: { anticipation: { headroom: { peakPercent: 50, horizon: "25h" } } },
      message: /spec\.anticipation\.headroom\.horizon: Invalid value: .*horizon must be between 1m and 24h/,
    },
    {
      name: "scale-duration-too-long",
      spec: { anticipation: { scaleDuration: "3h" } },
      message: /spec\.anticipation\.scaleDuration: Invalid value: .*scaleDuration must be at most 2h/,
    },
    {
      name: "leading-two-tokens",
      spec: {
        anticipation: {
          leadingSignal: {
            prometheus: { ...PROM, bearerTokenFile: "/var/run/token", useAzureCredential: true },
          },
        },
      },
      message: /set at most one of bearerTokenFile, bearerTokenSecretRef and useAzureCredential/,
    },
    {
      name: "leading-two-cas",
      spec: {
        anticipation: {
          leadingSignal: {
            prometheus: { ...PROM, caFile: "/etc/ca.pem", caSecretRef: { name: "prom-ca", key: "ca.crt" } },
          },
        },
      },
      message: /set at most one of caFile and caSecretRef/,
    },
    {
      name: "leading-slow-timeout",
      spec: { anticipation: { leadingSignal: { prometheus: { ...PROM, timeout: "2m" } } } },
      message:
        /spec\.anticipation\.leadingSignal\.prometheus\.timeout: Invalid value: .*timeout must be between 1s and 30s/,
    },
    {
      name: "leading-short-lifetime",
      spec: { anticipation: { leadingSignal: { prometheus: PROM, connectionLifetime: "10s" } } },
      message: /connectionLifetime must be between 1m and 24h/,
    },
    {
      name: "leading-no-lifetime-source",
      spec: {
        metrics: { serverLoad: { targetPercent: 70 } },
        anticipation: { leadingSignal: { prometheus: PROM } },
      },
      message: /needs connectionLifetime, or metrics\.connections to measure it from/,
    },
  ];

  it.each(cases)("refuses $name with the CEL message", async ({ name, spec, message }) => {
    const result = await apply(policy(name, spec));
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(new RegExp(`The CapacityPolicy "${name}" is invalid`));
    expect(result.stderr).toMatch(message);
    // Nothing was stored.
    await expect(getPolicy(kube, ns, name)).rejects.toThrow();
  });

  it("refuses schema violations with the schema's own message (enum, range, pattern)", async () => {
    const free = await apply(policy("free-sku", { skus: ["Free_F1"] }));
    expect(free.code).not.toBe(0);
    expect(free.stderr).toMatch(/spec\.skus\[0\]: Unsupported value: "Free_F1"/);

    const zero = await apply(policy("zero-units", { units: { min: 0, max: 10 } }));
    expect(zero.code).not.toBe(0);
    expect(zero.stderr).toMatch(
      /spec\.units\.min: Invalid value: 0: spec\.units\.min in body should be greater than or equal to 1/,
    );

    const grain = await apply(
      policy("odd-window", { metrics: { serverLoad: { targetPercent: 70 }, window: "7m" } }),
    );
    expect(grain.code).not.toBe(0);
    expect(grain.stderr).toMatch(/spec\.metrics\.window: Unsupported value: "7m"/);

    const mode = await apply(policy("odd-anticipation", { anticipation: { mode: "Predictive" } }));
    expect(mode.code).not.toBe(0);
    expect(mode.stderr).toMatch(/spec\.anticipation\.mode: Unsupported value: "Predictive"/);

    const days = await apply(policy("short-history", { anticipation: { seasonal: { historyDays: 3 } } }));
    expect(days.code).not.toBe(0);
    expect(days.stderr).toMatch(/spec\.anticipation\.seasonal\.historyDays: Invalid value: 3/);

    const keep = await apply(
      policy("too-much-headroom", { anticipation: { headroom: { peakPercent: 150 } } }),
    );
    expect(keep.code).not.toBe(0);
    expect(keep.stderr).toMatch(/spec\.anticipation\.headroom\.peakPercent: Invalid value: 150/);

    const userinfo = await apply(
      policy("prom-userinfo", {
        anticipation: {
          leadingSignal: { prometheus: { ...PROM, serverAddress: "http://user:pw@prom:9090" } },
        },
      }),
    );
    expect(userinfo.code).not.toBe(0);
    expect(userinfo.stderr).toMatch(
      /spec\.anticipation\.leadingSignal\.prometheus\.serverAddress: Invalid value/,
    );

    const measures = await apply(
      policy("odd-measure", { anticipation: { leadingSignal: { prometheus: PROM, measures: "Requests" } } }),
    );
    expect(measures.code).not.toBe(0);
    expect(measures.stderr).toMatch(
      /spec\.anticipation\.leadingSignal\.measures: Unsupported value: "Requests"/,
    );
  });

  it("stores behavior.scaleDown.disruption with its defaults and refuses values out of range", async () => {
    const ok = await apply(policy("disruption-default", { behavior: { scaleDown: {} } }));
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const stored = (await getPolicy(kube, ns, "disruption-default")) as {
      spec: { behavior: { scaleDown: { disruption: unknown } } };
    };
    expect(stored.spec.behavior.scaleDown.disruption).toEqual({
      policy: "Weigh",
      maxDisconnectionsPerUnitHour: 1000,
    });
    const strict = await apply(
      policy("disruption-strict", {
        behavior: { scaleDown: { disruption: { maxDisconnectionsPerUnitHour: 250 } } },
      }),
    );
    expect(strict.code).toBe(0);

    const negative = await apply(
      policy("disruption-negative", {
        behavior: { scaleDown: { disruption: { maxDisconnectionsPerUnitHour: -1 } } },
      }),
    );
    expect(negative.code).not.toBe(0);
    expect(negative.stderr).toMatch(
      /spec\.behavior\.scaleDown\.disruption\.maxDisconnectionsPerUnitHour: Invalid value: -1/,
    );
    const odd = await apply(
      policy("disruption-odd", { behavior: { scaleDown: { disruption: { policy: "Sometimes" } } } }),
    );
    expect(odd.code).not.toBe(0);
    expect(odd.stderr).toMatch(
      /spec\.behavior\.scaleDown\.disruption\.policy: Unsupported value: "Sometimes"/,
    );
    await expect(getPolicy(kube, ns, "disruption-negative")).rejects.toThrow();
  });

  it("stores a leading signal with its defaults", async () => {
    const ok = await apply(policy("leading-ok", { anticipation: { leadingSignal: { prometheus: PROM } } }));
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const stored = (await getPolicy(kube, ns, "leading-ok")) as {
      spec: {
        anticipation: { mode: string; leadingSignal: { measures: string; prometheus: { timeout: string } } };
      };
    };
    expect(stored.spec.anticipation.mode).toBe("Enabled");
    expect(stored.spec.anticipation.leadingSignal.measures).toBe("NewConnectionsPerSecond");
    expect(stored.spec.anticipation.leadingSignal.prometheus.timeout).toBe("5s");
  });

  it("admits exactly the resource IDs the operator's parser parses (Azure's naming rules)", async () => {
    const rows: { what: string; admitted: boolean; parsed: boolean; valid: boolean }[] = [];
    for (const [i, c] of RESOURCE_ID_CASES.entries()) {
      let admitted = true;
      try {
        // Server-side dry run: the API server validates (schema and CEL) without storing.
        await kube.customObjects.createNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: ns,
          plural: PLURAL,
          body: policyManifest(ns, `id-${i}`, c.resourceId),
          dryRun: "All",
        });
      } catch (err) {
        const code = (err as { code?: number }).code;
        expect(code, c.what).toBe(422);
        expect(String((err as { body?: unknown }).body), c.what).toMatch(/spec\.target\.resourceId/);
        admitted = false;
      }
      let parsed: boolean;
      try {
        parsed = parseResourceId(c.resourceId).service === "SignalR";
      } catch {
        parsed = false;
      }
      rows.push({ what: c.what, admitted, parsed, valid: c.valid });
    }
    expect(rows.filter((r) => r.admitted !== r.parsed || r.parsed !== r.valid)).toEqual([]);
    expect(rows.filter((r) => r.admitted).length).toBeGreaterThan(5);
    expect(rows.filter((r) => !r.admitted).length).toBeGreaterThan(15);
  });

  it("refuses every unit bound without a unit count of an allowed SKU, and admits the nearest valid ones", async () => {
    const admit = async (name: string, spec: Record<string, unknown>): Promise<string | undefined> => {
      try {
        await kube.customObjects.createNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: ns,
          plural: PLURAL,
          body: policy(name, spec),
          dryRun: "All",
        });
        return undefined;
      } catch (err) {
        expect((err as { code?: number }).code).toBe(422);
        return String((err as { body?: unknown }).body);
      }
    };
    const P1 = { skus: ["Premium_P1"] };
    expect(await admit("range-15", { ...P1, units: { min: 15, max: 15 } })).toMatch(
      /spec\.units: Invalid value: units\.min\.\.units\.max must hold a unit count an allowed SKU offers/,
    );
    expect(await admit("range-p2", { skus: ["Premium_P2"], units: { min: 150, max: 180 } })).toMatch(
      /units\.min\.\.units\.max must hold a unit count/,
    );
    expect(
      await admit("sched-12", {
        ...P1,
        units: { min: 1, max: 15 },
        schedules: [{ name: "peak", cron: "0 8 * * *", durationMinutes: 60, minUnits: 12 }],
      }),
    ).toMatch(/spec\.schedules: Invalid value: schedules\[\]\.minUnits: a unit count an allowed SKU offers/);
    expect(
      await admit("fallback-11", {
        ...P1,
        units: { min: 1, max: 15 },
        fallback: { action: "Fixed", units: 11 },
      }),
    ).toMatch(/spec\.fallback\.units: Invalid value: fallback\.units: a unit count an allowed SKU offers/);
    // The nearest valid bounds are admitted.
    expect(await admit("range-10", { ...P1, units: { min: 10, max: 10 } })).toBeUndefined();
    expect(await admit("range-20", { ...P1, units: { min: 15, max: 20 } })).toBeUndefined();
    expect(
      await admit("range-p1p2", { skus: ["Premium_P1", "Premium_P2"], units: { min: 150, max: 200 } }),
    ).toBeUndefined();
    expect(
      await admit("sched-10", {
        ...P1,
        units: { min: 1, max: 15 },
        schedules: [{ name: "peak", cron: "0 8 * * *", durationMinutes: 60, minUnits: 10 }],
        fallback: { action: "Fixed", units: 10 },
      }),
    ).toBeUndefined();
  });
});
