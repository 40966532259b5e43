import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { CRD_FILE, capacityPolicyCrd, capacityPolicyCrdYaml, PRINTER_COLUMNS } from "./crd.js";
import { capacityPolicyReferenceMarkdown, DOCS_FILE } from "./docs.js";
import {
  API_VERSION,
  type CapacityPolicy,
  CapacityPolicySpecSchema,
  formatDuration,
  KIND,
  PolicyError,
  parseCron,
  parseDuration,
  parsePolicyYaml,
  SPEC_CEL_RULES,
  validatePolicy,
} from "./index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const SIGNALR_ID =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat";
const WEBPUBSUB_ID =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.SignalRService/WebPubSub/chat";

type Spec = Record<string, unknown>;

function policy(spec: Spec = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: "chat", namespace: "chat" },
    spec: {
      target: { service: "SignalR", resourceId: SIGNALR_ID },
      units: { min: 1, max: 10 },
      ...spec,
    },
    ...extra,
  };
}

function errorsOf(obj: unknown): string[] {
  const result = validatePolicy(obj);
  return result.ok ? [] : result.errors;
}

describe("parseDuration", () => {
  it.each([
    ["30s", 30],
    ["5m", 300],
    ["1h", 3600],
    ["1h30m", 5400],
    ["1.5h", 5400],
    ["250ms", 0.25],
    ["1d", 86_400],
    ["0s", 0],
    ["2m30s", 150],
  ])("%s → %d s", (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(["", "5", "m", "-5m", "5 m", "5min", "1w", " 5m", "5m ", "1..5h", "5M"])("rejects %j", (text) => {
    expect(() => parseDuration(text)).toThrow(RangeError);
  });

  it("formats seconds back", () => {
    expect(formatDuration(5400)).toBe("1h30m");
    expect(formatDuration(0)).toBe("0s");
    expect(parseDuration(formatDuration(3723.5))).toBe(3723.5);
  });
});

describe("validatePolicy: valid policies", () => {
  it("applies every default", () => {
    const result = validatePolicy(policy());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { spec } = result.policy;
    expect(spec.skus).toEqual(["Premium_P1"]);
    expect(spec.metrics).toEqual({
      serverLoad: { targetPercent: 70 },
      connections: { targetPercent: 80 },
      window: "5m",
      ingestionDelay: "3m",
      maxSampleAge: "10m",
    });
    expect(spec.behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: "Max",
        policies: [{ type: "Steps", value: 2, periodSeconds: 60 }],
      },
      scaleDown: {
        stabilizationWindowSeconds: 1800,
        selectPolicy: "Max",
        policies: [{ type: "Percent", value: 50, periodSeconds: 600 }],
        disruption: { policy: "Weigh", maxDisconnectionsPerUnitHour: 1000 },
      },
      tolerance: 0.1,
      settleSeconds: 300,
    });
    expect(spec.fallback).toEqual({ failureThreshold: 3, action: "Hold" });
    expect(spec.mode).toBe("Auto");
    expect(spec.pollIntervalSeconds).toBe(30);
  });

  it("applies nested defaults inside given objects and does not modify its input", () => {
    const input = policy({
      metrics: { traffic: { workload: [{ scenario: "broadcast", share: 1 }] } },
      schedules: [{ name: "weekday", cron: "0 8 * * 1-5", durationMinutes: 60, minUnits: 5 }],
      behavior: { scaleUp: { stabilizationWindowSeconds: 60 } },
    });
    const before = structuredClone(input);
    const result = validatePolicy(input);
    expect(input).toEqual(before);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const { spec } = result.policy;
    expect(spec.metrics.serverLoad).toBeUndefined();
    expect(spec.metrics.traffic).toEqual({
      workload: [{ scenario: "broadcast", share: 1 }],
      messageSizeBytes: 2048,
      targetPercent: 80,
    });
    expect(spec.metrics.window).toBe("5m");
    expect(spec.schedules?.[0]?.timeZone).toBe("UTC");
    expect(spec.behavior.scaleUp.selectPolicy).toBe("Max");
    expect(spec.behavior.scaleUp.policies).toHaveLength(1);
    expect(spec.behavior.scaleDown.stabilizationWindowSeconds).toBe(1800);
  });

  it("defaults metadata.namespace to default", () => {
    const obj = policy();
    obj["metadata"] = { name: "chat" };
    const result = validatePolicy(obj);
    expect(result.ok && result.policy.metadata.namespace).toBe("default");
  });

  it.each<[string, Spec, Record<string, unknown>?]>([
    ["P2 with max 100", { skus: ["Premium_P1", "Premium_P2"], units: { min: 2, max: 100 } }],
    ["P2 only from 100", { skus: ["Premium_P2"], units: { min: 100, max: 1000 } }],
    ["WebPubSub", { target: { service: "WebPubSub", resourceId: WEBPUBSUB_ID } }],
    [
      "resource ID in other case",
      {
        target: {
          service: "SignalR",
          resourceId: SIGNALR_ID.toLowerCase().replace("signalr/chat", "SIGNALR/chat"),
        },
      },
    ],
    ["fixed fallback", { units: { min: 2, max: 10 }, fallback: { action: "Fixed", units: 5 } }],
    ["shares within tolerance", { metrics: { traffic: { workload: [{ scenario: "echo", share: 0.995 }] } } }],
    [
      "schedules and windows",
      {
        schedules: [
          {
            name: "a",
            cron: "*/15 8-18 * * MON-FRI",
            timeZone: "Asia/Kolkata",
            durationMinutes: 1,
            minUnits: 10,
          },
        ],
        scaleInWindows: [
          { name: "night", cron: "0 22 * * *", timeZone: "America/New_York", durationMinutes: 420 },
        ],
      },
    ],
    ["app servers scale to zero", { appServer: { deploymentName: "hub", replicas: { min: 0, max: 3 } } }],
    [
      "the stricter disruption setting",
      { behavior: { scaleDown: { disruption: { maxDisconnectionsPerUnitHour: 250 } } } },
    ],
    [
      "no disruption accepted",
      { behavior: { scaleDown: { disruption: { maxDisconnectionsPerUnitHour: 0 } } } },
    ],
    ["scale-ins not weighed", { behavior: { scaleDown: { disruption: { policy: "Ignore" } } } }],
    [
      "past scale-ins in status",
      {},
      {
        status: {
          scaleIns: [
            {
              time: "2026-01-01T00:00:00Z",
              fromUnits: 10,
              toUnits: 8,
              endedAt: "2026-01-01T01:00:00Z",
              reversed: true,
            },
            { time: "2026-01-01T02:00:00Z", fromUnits: 10, toUnits: 8 },
          ],
        },
      },
    ],
    [
      "status",
      {},
      {
        status: {
          observedGeneration: 3,
          current: { sku: "Free_F1", units: 1 },
          desired: { sku: "Premium_P1", units: 2, replicas: 2 },
          lastSample: { time: "2026-01-01T00:00:00Z", serverLoadPercent: 81.5, connections: 1765 },
          operation: {
            startedAt: "2026-01-01T00:00:00Z",
            from: { sku: "Premium_P1", units: 1 },
            to: { sku: "Premium_P1", units: 2 },
          },
          recommendations: [{ time: "2026-01-01T00:00:00Z", units: 2, sku: "Premium_P1" }],
          scaleEvents: [
            {
              time: "2026-01-01T00:00:00Z",
              fromSku: "Premium_P1",
              fromUnits: 1,
              toSku: "Premium_P1",
              toUnits: 2,
            },
          ],
          consecutiveFailures: 0,
          lastReasons: ["ServerLoadAboveTarget"],
          conditions: [
            {
              type: "Ready",
              status: "True",
              lastTransitionTime: "2026-01-01T00:00:00Z",
              reason: "Reconciled",
              message: "",
            },
          ],
        },
      },
    ],
  ])("accepts %s", (_name, spec, extra) => {
    expect(errorsOf(policy(spec, extra))).toEqual([]);
  });
});

describe("validatePolicy: invalid policies", () => {
  it.each<[string, Spec, RegExp]>([
    ["min > max", { units: { min: 5, max: 3 } }, /^spec\.units: min \(5\) must be <= max \(3\)$/],
    [
      "negative disconnections per unit-hour",
      { behavior: { scaleDown: { disruption: { maxDisconnectionsPerUnitHour: -1 } } } },
      /^spec\.behavior\.scaleDown\.disruption\.maxDisconnectionsPerUnitHour: .*>= 0/,
    ],
    [
      "fractional disconnections per unit-hour",
      { behavior: { scaleDown: { disruption: { maxDisconnectionsPerUnitHour: 2.5 } } } },
      /^spec\.behavior\.scaleDown\.disruption\.maxDisconnectionsPerUnitHour: .*integer/,
    ],
    [
      "an unknown disruption policy",
      { behavior: { scaleDown: { disruption: { policy: "Sometimes" } } } },
      /^spec\.behavior\.scaleDown\.disruption\.policy: /,
    ],
    [
      "disruption under scaleUp",
      { behavior: { scaleUp: { disruption: { policy: "Weigh" } } } },
      /^spec\.behavior\.scaleUp/,
    ],
    [
      "a max sample age above 24h",
      { metrics: { serverLoad: { targetPercent: 70 }, maxSampleAge: "200h" } },
      /^spec\.metrics\.maxSampleAge: 200h must be at most 24h$/,
    ],
    [
      "an ingestion delay above 1h",
      { metrics: { serverLoad: { targetPercent: 70 }, ingestionDelay: "2h", maxSampleAge: "3h" } },
      /^spec\.metrics\.ingestionDelay: 2h must be at most 1h$/,
    ],
    [
      "a unit range without a unit count of the SKU",
      { units: { min: 15, max: 15 }, skus: ["Premium_P1"] },
      /^spec\.units: 15 holds no unit count Premium_P1 offers \(1–10, 20, 30 … 100\); the nearest are 10 and 20$/,
    ],
    [
      "a P2-only range between two rungs",
      { units: { min: 150, max: 180 }, skus: ["Premium_P2"] },
      /^spec\.units: 150\.\.180 holds no unit count Premium_P2 offers \(100, 200 … 1000\); the nearest are 100 and 200$/,
    ],
    [
      "a schedule floor with no unit count up to units.max",
      {
        units: { min: 1, max: 15 },
        schedules: [{ name: "peak", cron: "0 8 * * *", durationMinutes: 60, minUnits: 12 }],
      },
      /^spec\.schedules\[0\]\.minUnits: 12\.\.15 holds no unit count Premium_P1 offers .*; the nearest are 10 and 20 \(minUnits 12 is rounded up; units\.max is 15\)$/,
    ],
    [
      "a fixed fallback size rounded up above units.max",
      { units: { min: 1, max: 15 }, fallback: { action: "Fixed", units: 11 } },
      /^spec\.fallback\.units: 11\.\.15 holds no unit count Premium_P1 offers .*; the nearest are 10 and 20 \(the fixed size is rounded up; units\.max is 15\)$/,
    ],
    ["units out of range", { units: { min: 0, max: 1001 } }, /^spec\.units\.min: 0 must be >= 1$/],
    [
      "P2 with max 50",
      { skus: ["Premium_P1", "Premium_P2"], units: { min: 1, max: 50 } },
      /^spec\.skus: Premium_P2 .*units\.max >= 100 \(is 50\)$/,
    ],
    [
      "max above 100 without P2",
      { units: { min: 1, max: 200 } },
      /^spec\.units\.max: 200 units need Premium_P2/,
    ],
    [
      "P2 only with min below 100",
      { skus: ["Premium_P2"], units: { min: 10, max: 500 } },
      /^spec\.units\.min: must be >= 100/,
    ],
    ["unknown SKU", { skus: ["Free_F1"] }, /^spec\.skus\[0\]: "Free_F1" is not one of/],
    [
      "headroom horizon above 24h",
      { anticipation: { headroom: { peakPercent: 50, horizon: "25h" } } },
      /^spec\.anticipation\.headroom\.horizon: 25h must be between 1m and 24h$/,
    ],
    [
      "scale duration above 2h",
      { anticipation: { scaleDuration: "3h" } },
      /^spec\.anticipation\.scaleDuration: 3h must be at most 2h$/,
    ],
    [
      "unknown anticipation mode",
      { anticipation: { mode: "Predictive" } },
      /^spec\.anticipation\.mode: "Predictive" is not one of/,
    ],
    [
      "seasonal history of 3 days",
      { anticipation: { seasonal: { historyDays: 3 } } },
      /^spec\.anticipation\.seasonal\.historyDays: 3 must be >= 7$/,
    ],
    ["duplicate SKU", { skus: ["Premium_P1", "Premium_P1"] }, /^spec\.skus: items 1 and 0 are duplicates$/],
    [
      "WebPubSub ID on a SignalR policy",
      { target: { service: "SignalR", resourceId: WEBPUBSUB_ID } },
      /^spec\.target\.resourceId: names a WebPubSub instance, but target\.service is SignalR$/,
    ],
    [
      "not an ARM ID",
      { target: { service: "SignalR", resourceId: "chat-signalr" } },
      /^spec\.target\.resourceId: malformed resource ID "chat-signalr": it must start with \/subscriptions\//,
    ],
    [
      "bad duration",
      { metrics: { serverLoad: { targetPercent: 70 }, ingestionDelay: "3 minutes" } },
      /^spec\.metrics\.ingestionDelay: "3 minutes" is not a duration/,
    ],
    [
      "window not a time grain",
      { metrics: { serverLoad: { targetPercent: 70 }, window: "10m" } },
      /^spec\.metrics\.window: "10m" is not one of "1m", "5m"/,
    ],
    [
      "maxSampleAge not beyond ingestionDelay",
      { metrics: { serverLoad: { targetPercent: 70 }, ingestionDelay: "10m", maxSampleAge: "5m" } },
      /^spec\.metrics\.maxSampleAge: 5m must be longer than ingestionDelay \(10m\)$/,
    ],
    [
      "no signal",
      { metrics: { window: "5m" } },
      /^spec\.metrics: set at least one of serverLoad, connections or traffic$/,
    ],
    [
      "bad cron (value)",
      { schedules: [{ name: "a", cron: "0 25 * * *", durationMinutes: 10, minUnits: 2 }] },
      /^spec\.schedules\[0\]\.cron: invalid cron expression "0 25 \* \* \*": .*hour/,
    ],
    [
      "bad cron (fields)",
      { schedules: [{ name: "a", cron: "0 0 8 * * *", durationMinutes: 10, minUnits: 2 }] },
      /^spec\.schedules\[0\]\.cron: "0 0 8 \* \* \*" is not a five-field cron expression/,
    ],
    [
      "unknown time zone",
      {
        scaleInWindows: [{ name: "a", cron: "0 2 * * *", timeZone: "Europe/Atlantis", durationMinutes: 10 }],
      },
      /^spec\.scaleInWindows\[0\]\.timeZone: unknown time zone "Europe\/Atlantis"$/,
    ],
    [
      "duplicate schedule names",
      {
        schedules: [
          { name: "a", cron: "0 8 * * *", durationMinutes: 1, minUnits: 2 },
          { name: "a", cron: "0 9 * * *", durationMinutes: 1, minUnits: 2 },
        ],
      },
      /^spec\.schedules\[1\]: duplicate "a"$/,
    ],
    [
      "schedule minUnits above max",
      { schedules: [{ name: "a", cron: "0 8 * * *", durationMinutes: 1, minUnits: 20 }] },
      /^spec\.schedules\[0\]\.minUnits: 20 must be <= units\.max \(10\)$/,
    ],
    [
      "unknown scenario",
      { metrics: { traffic: { workload: [{ scenario: "chat", share: 1 }] } } },
      /^spec\.metrics\.traffic\.workload\[0\]\.scenario: "chat" is not one of/,
    ],
    [
      "scenario of the other service",
      { metrics: { traffic: { workload: [{ scenario: "cloudEventsEcho", share: 1 }] } } },
      /^spec\.metrics\.traffic\.workload\[0\]\.scenario: "cloudEventsEcho" is not a SignalR scenario/,
    ],
    [
      "shares not summing to 1",
      {
        metrics: {
          traffic: {
            workload: [
              { scenario: "echo", share: 0.5 },
              { scenario: "broadcast", share: 0.3 },
            ],
          },
        },
      },
      /^spec\.metrics\.traffic\.workload: shares must sum to 1 \(± 0\.01\), they sum to 0\.8$/,
    ],
    [
      "Fixed fallback without units",
      { fallback: { action: "Fixed" } },
      /^spec\.fallback\.units: is required when action is Fixed$/,
    ],
    [
      "Fixed fallback outside units",
      { fallback: { action: "Fixed", units: 20 } },
      /^spec\.fallback\.units: 20 must be within units 1\.\.10$/,
    ],
    [
      "replicas min > max",
      { appServer: { deploymentName: "hub", replicas: { min: 5, max: 2 } } },
      /^spec\.appServer\.replicas: min \(5\) must be <= max \(2\)$/,
    ],
    [
      "bad deployment name",
      { appServer: { deploymentName: "Hub_1", replicas: { min: 1, max: 2 } } },
      /^spec\.appServer\.deploymentName: "Hub_1" is not a lowercase DNS-1123 subdomain/,
    ],
    [
      "events per replica zero",
      { appServer: { deploymentName: "hub", replicas: { min: 1, max: 2 }, eventsPerSecondPerReplica: 0 } },
      /^spec\.appServer\.eventsPerSecondPerReplica: 0 must be > 0$/,
    ],
    ["unknown field", { unitz: { min: 1 } }, /^spec\.unitz: unknown field$/],
    ["missing target", { target: undefined }, /^spec\.target: is required$/],
    ["bad mode", { mode: "Manual" }, /^spec\.mode: "Manual" is not one of "Auto", "Recommend", "Paused"$/],
    ["poll interval too short", { pollIntervalSeconds: 5 }, /^spec\.pollIntervalSeconds: 5 must be >= 10$/],
    [
      "policy type",
      { behavior: { scaleUp: { policies: [{ type: "Pods", value: 1, periodSeconds: 60 }] } } },
      /^spec\.behavior\.scaleUp\.policies\[0\]\.type: "Pods" is not one of/,
    ],
  ])("rejects %s", (_name, spec, expected) => {
    const obj = policy(spec);
    const s = obj["spec"] as Spec;
    for (const k of Object.keys(s)) if (s[k] === undefined) delete s[k];
    const errors = errorsOf(obj);
    expect(
      errors.some((e) => expected.test(e)),
      `errors: ${JSON.stringify(errors)}`,
    ).toBe(true);
    for (const e of errors) expect(e).not.toContain("\n");
  });

  it("reports every problem at once", () => {
    const errors = errorsOf(
      policy({
        units: { min: 5, max: 3 },
        fallback: { action: "Fixed" },
        target: { service: "WebPubSub", resourceId: SIGNALR_ID },
      }),
    );
    expect(errors).toHaveLength(3);
  });

  it.each([null, 42, "x", [], undefined])("rejects non-objects (%j)", (value) => {
    expect(errorsOf(value)).toEqual([expect.stringMatching(/^\(root\): expected a CapacityPolicy object/)]);
  });

  it("rejects a wrong apiVersion", () => {
    expect(errorsOf(policy({}, { apiVersion: "autoscaling.signalr.dev/v1" }))).toEqual([
      expect.stringMatching(/^apiVersion: "autoscaling.signalr.dev\/v1" is not one of/),
    ]);
  });

  it("rejects a malformed status", () => {
    const errors = errorsOf(
      policy(
        {},
        {
          status: {
            conditions: [
              { type: "Ready", status: "Yes", lastTransitionTime: "now", reason: "x y", message: "" },
            ],
          },
        },
      ),
    );
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^status\.conditions\[0\]\.status: "Yes" is not one of/),
        expect.stringMatching(/^status\.conditions\[0\]\.lastTransitionTime: "now" is not a date-time/),
        expect.stringMatching(/^status\.conditions\[0\]\.reason: "x y" is not a CamelCase reason/),
      ]),
    );
  });
});

describe("parsePolicyYaml", () => {
  const yaml = `apiVersion: ${API_VERSION}\nkind: ${KIND}\nmetadata: { name: chat, namespace: chat }\nspec:\n  target: { service: SignalR, resourceId: ${SIGNALR_ID} }\n  units: { min: 1, max: 10 }\n`;

  it("returns the policy with defaults", () => {
    const p: CapacityPolicy = parsePolicyYaml(yaml);
    expect(p.spec.mode).toBe("Auto");
    expect(p.metadata.name).toBe("chat");
  });

  it.each<[string, string, RegExp]>([
    ["broken YAML", "spec: [", /^not a CapacityPolicy: /],
    ["empty text", "", /^not a CapacityPolicy: the document is empty$/],
    ["a scalar", "hello", /^not a CapacityPolicy: the document is a string$/],
    ["a list", "- a\n- b\n", /^not a CapacityPolicy: the document is a list$/],
    [
      "several documents",
      `${yaml}---\n${yaml}`,
      /^not a CapacityPolicy: expected one YAML document, found several$/,
    ],
    [
      "another kind",
      "apiVersion: v1\nkind: Pod\n",
      /^not a CapacityPolicy: expected apiVersion .* got apiVersion "v1" and kind "Pod"$/,
    ],
    ["duplicate keys", `${yaml}mode: Auto\nmode: Paused\n`, /^not a CapacityPolicy: /],
    [
      "an invalid spec",
      yaml.replace("max: 10", "max: 0"),
      /^invalid CapacityPolicy chat\/chat:\n {2}spec\.units\.max: 0 must be >= 1/,
    ],
  ])("throws PolicyError for %s", (_name, text, expected) => {
    const parse = () => parsePolicyYaml(text);
    expect(parse).toThrow(PolicyError);
    expect(parse).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(expected),
        errors: expect.arrayContaining([expect.anything()]),
      }),
    );
  });
});

describe("parseCron", () => {
  it("reads five-field expressions in a time zone", () => {
    const next = parseCron("0 8 * * 1-5", "Europe/Madrid").nextRun(new Date("2026-01-02T12:00:00Z"));
    // Friday 2 January 2026 12:00 UTC → Monday 5 January 08:00 CET (07:00 UTC)
    expect(next?.toISOString()).toBe("2026-01-05T07:00:00.000Z");
  });
  it("rejects six-field expressions and unknown zones", () => {
    expect(() => parseCron("0 0 8 * * *")).toThrow(RangeError);
    expect(() => parseCron("0 8 * * *", "Nowhere/Land")).toThrow(RangeError);
  });
});

describe("examples", () => {
  const dir = join(root, "examples");
  const files = readdirSync(dir).filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"));
  const policies = files.filter(
    (f) => (parseYaml(readFileSync(join(dir, f), "utf8")) as { kind?: unknown })?.kind === KIND,
  );

  it("include the documented ones", () => {
    expect(policies).toEqual(
      expect.arrayContaining([
        "signalr-chat.yaml",
        "webpubsub-serverless.yaml",
        "schedules.yaml",
        "recommend-only.yaml",
        "signalr-replica.yaml",
      ]),
    );
  });

  it.each(policies)("%s validates", (file) => {
    const p = parsePolicyYaml(readFileSync(join(dir, file), "utf8"));
    expect(p.kind).toBe(KIND);
  });
});

describe("CRD", () => {
  const crd = capacityPolicyCrd() as {
    spec: {
      names: Record<string, unknown>;
      scope: string;
      versions: {
        name: string;
        subresources: unknown;
        additionalPrinterColumns: { name: string; jsonPath: string }[];
        schema: { openAPIV3Schema: Record<string, unknown> };
      }[];
    };
  };
  const version = crd.spec.versions[0]!;
  const specSchema = (
    version.schema.openAPIV3Schema["properties"] as Record<string, Record<string, unknown>>
  )["spec"]!;
  const text = capacityPolicyCrdYaml();

  it("names the resource", () => {
    expect(crd.spec.names).toMatchObject({
      kind: "CapacityPolicy",
      plural: "capacitypolicies",
      shortNames: ["capol"],
    });
    expect(crd.spec.scope).toBe("Namespaced");
    expect(version.name).toBe("v1alpha1");
    expect(version.subresources).toEqual({ status: {} });
  });

  it("has the printer columns", () => {
    expect(version.additionalPrinterColumns.map((c) => c.name)).toEqual([
      "Service",
      "SKU",
      "Units",
      "Desired",
      "Load",
      "Connections",
      "Replicas",
      "Mode",
      "Ready",
      "Age",
    ]);
    expect(PRINTER_COLUMNS.find((c) => c.name === "Ready")?.jsonPath).toBe(
      '.status.conditions[?(@.type=="Ready")].status',
    );
  });

  it("has the CEL rules", () => {
    const rules = (specSchema["x-kubernetes-validations"] as { rule: string; message: string }[]).map(
      (r) => r.rule,
    );
    expect(rules).toEqual(SPEC_CEL_RULES.map((r) => r.rule));
    expect(rules).toContain("self.units.min <= self.units.max");
    expect(rules).toContain(
      "!has(self.appServer) || self.appServer.replicas.min <= self.appServer.replicas.max",
    );
    expect(rules).toContain("!('Premium_P2' in self.skus) || self.units.max >= 100");
    expect(rules.some((r) => r.includes("(?i)^/subscriptions/") && r.includes("/WebPubSub/"))).toBe(true);
    expect(text).toContain("self.action != 'Fixed' || has(self.units)");
    expect(text).toContain("self.workload.map(w, w.share).sum()");
  });

  it("is structural: every node typed, no anyOf/oneOf/nullable/uniqueItems/additionalProperties/preserve-unknown-fields", () => {
    const walk = (node: Record<string, unknown>, path: string): void => {
      expect(typeof node["type"], path).toBe("string");
      for (const k of [
        "anyOf",
        "oneOf",
        "allOf",
        "nullable",
        "uniqueItems",
        "additionalProperties",
        "const",
      ]) {
        expect(node[k], `${path}.${k}`).toBeUndefined();
      }
      expect(node["x-kubernetes-preserve-unknown-fields"], path).toBeUndefined();
      for (const [name, child] of Object.entries(
        (node["properties"] as Record<string, Record<string, unknown>>) ?? {},
      )) {
        walk(child, `${path}.${name}`);
      }
      if (node["items"]) walk(node["items"] as Record<string, unknown>, `${path}[]`);
      if (
        node["type"] === "string" &&
        !node["enum"] &&
        path !== "(root).apiVersion" &&
        path !== "(root).kind"
      ) {
        expect(node["maxLength"], `${path} maxLength (CEL cost)`).toBeTypeOf("number");
      }
      if (node["type"] === "array")
        expect(node["maxItems"], `${path} maxItems (CEL cost)`).toBeTypeOf("number");
    };
    walk(version.schema.openAPIV3Schema, "(root)");
  });

  it("drops defaulted fields from required", () => {
    expect(specSchema["required"]).toEqual(["target", "units"]);
    expect((CapacityPolicySpecSchema as unknown as { required: string[] }).required).toContain("mode");
  });

  it("is deterministic", () => {
    expect(capacityPolicyCrdYaml()).toBe(text);
    expect(text.startsWith("# generated by npm run gen:crds from src/api — do not edit\n")).toBe(true);
  });

  it("reads the same as YAML 1.1 (kubectl, Helm) and 1.2: Off stays a string", () => {
    expect(parseYaml(text, { version: "1.1" })).toEqual(capacityPolicyCrd());
    expect(parseYaml(text)).toEqual(capacityPolicyCrd());
  });

  it("matches the committed crds/ file (run npm run gen:crds)", () => {
    expect(readFileSync(join(root, CRD_FILE), "utf8")).toBe(text);
  });

  it("matches the committed field reference (run npm run gen:crds)", () => {
    expect(readFileSync(join(root, DOCS_FILE), "utf8")).toBe(capacityPolicyReferenceMarkdown());
  });

  it("documents every spec field", () => {
    const walk = (node: Record<string, unknown>, path: string): void => {
      expect(node["description"], path).toBeTypeOf("string");
      for (const [name, child] of Object.entries(
        (node["properties"] as Record<string, Record<string, unknown>>) ?? {},
      )) {
        walk(child, `${path}.${name}`);
      }
      if (node["items"]) walk(node["items"] as Record<string, unknown>, `${path}[]`);
    };
    walk(specSchema, "spec");
  });
});
