import { describe, expect, it } from "vitest";
import { QuotaRecorder } from "../azure/quota.js";
import { ThrottleGate } from "../azure/throttle.js";
import { OperatorMetrics } from "./metrics.js";

describe("OperatorMetrics", () => {
  it("exports Azure calls by API and status, with latency", async () => {
    const m = new OperatorMetrics({ processMetrics: false });
    m.observeAzureCall("GET SignalR", 200, 0.03);
    m.observeAzureCall("GET SignalR", 429, 0.01);
    m.observeAzureCall("POST metrics:getBatch", 0, 5);
    const { body } = await m.expose();
    expect(body).toContain('signalr_autoscaler_azure_requests_total{api="GET SignalR",status="200"} 1');
    expect(body).toContain('signalr_autoscaler_azure_requests_total{api="GET SignalR",status="429"} 1');
    expect(body).toContain(
      'signalr_autoscaler_azure_requests_total{api="POST metrics:getBatch",status="0"} 1',
    );
    expect(body).toContain('signalr_autoscaler_azure_request_duration_seconds_count{api="GET SignalR"} 2');
  });

  it("exports ARM's remaining quota from the recorder at every scrape", async () => {
    const m = new OperatorMetrics({ processMetrics: false });
    const quota = new QuotaRecorder();
    m.trackArmQuota(() => quota.snapshot());
    const scope = { subscriptionId: "sub-1", region: "westeurope" };
    quota.record(scope, { remaining: { "subscription-reads": 249 }, resource: {} }, new Date());
    expect((await m.expose()).body).toContain(
      'signalr_autoscaler_arm_remaining_requests{scope="sub-1/westeurope",kind="subscription-reads"} 249',
    );
    quota.record(
      scope,
      {
        remaining: { "subscription-reads": 120, "subscription-writes": 199 },
        resource: { "Microsoft.X/y": 7 },
      },
      new Date(),
    );
    const { body } = await m.expose();
    expect(body).toContain('kind="subscription-reads"} 120');
    expect(body).toContain('kind="subscription-writes"} 199');
    expect(body).toContain('kind="resource:Microsoft.X/y"} 7');
  });

  it("exports the end of each throttled scope, in Unix seconds, while it lasts", async () => {
    const m = new OperatorMetrics({ processMetrics: false });
    let now = new Date("2025-03-01T12:00:00Z");
    const arm = new ThrottleGate(() => now);
    const metrics = new ThrottleGate(() => now);
    m.trackThrottles(() => [
      ...arm.snapshot().map((g) => ({ ...g, endpoint: "arm" as const })),
      ...metrics.snapshot().map((g) => ({ ...g, endpoint: "metrics" as const })),
    ]);
    arm.block({ subscriptionId: "sub-1", region: "westeurope" }, new Date("2025-03-01T12:20:00Z"));
    metrics.block({ subscriptionId: "sub-1", region: "eastus" }, new Date("2025-03-01T12:05:00Z"));
    const body = (await m.expose()).body;
    expect(body).toContain(
      'signalr_autoscaler_azure_throttle_end_timestamp_seconds{endpoint="arm",scope="sub-1/westeurope"} 1740831600',
    );
    expect(body).toContain(
      'signalr_autoscaler_azure_throttle_end_timestamp_seconds{endpoint="metrics",scope="sub-1/eastus"} 1740830700',
    );
    now = new Date("2025-03-01T12:10:00Z");
    const later = (await m.expose()).body;
    expect(later).toContain('endpoint="arm",scope="sub-1/westeurope"}');
    expect(later).not.toContain('endpoint="metrics"');
  });

  it("forgets only the deleted policy's series", async () => {
    const m = new OperatorMetrics({ processMetrics: false, now: () => Date.parse("2025-01-01T00:10:00Z") });
    m.currentUnits.set({ namespace: "a", policy: "p" }, 10);
    m.currentUnits.set({ namespace: "b", policy: "q" }, 20);
    m.observeSample("a", "p", "2025-01-01T00:05:00Z", { connections: 100 });
    m.observeSample("b", "q", "2025-01-01T00:09:00Z", { connections: 200 });
    m.forgetPolicy("a", "p");
    const { body } = await m.expose();
    expect(body).not.toContain('policy="p"');
    expect(body).toContain('signalr_autoscaler_current_units{namespace="b",policy="q"} 20');
    expect(body).toContain(
      'signalr_autoscaler_last_sample{namespace="b",policy="q",metric="connections"} 200',
    );
    expect(body).toContain('signalr_autoscaler_last_sample_age_seconds{namespace="b",policy="q"} 60');
  });

  it("exports the field managers that own an app-server field, one series each, only while they do", async () => {
    const m = new OperatorMetrics({ processMetrics: false });
    const object = "Deployment chat-hub";
    m.observeFieldConflict("chat", "p", {
      object,
      field: "spec.replicas",
      managers: ["argocd-controller", "kubectl"],
    });
    let body = (await m.expose()).body;
    const series = (manager: string) =>
      `signalr_autoscaler_field_owned_by_other{namespace="chat",policy="p",object="${object}",field="spec.replicas",manager="${manager}"} 1`;
    expect(body).toContain(series("argocd-controller"));
    expect(body).toContain(series("kubectl"));
    m.observeFieldConflict("chat", "p", { object, field: "spec.replicas", managers: ["kubectl"] });
    body = (await m.expose()).body;
    expect(body).not.toContain('manager="argocd-controller"');
    expect(body).toContain(series("kubectl"));
    m.observeFieldConflict("chat", "p", undefined);
    expect((await m.expose()).body).not.toContain("signalr_autoscaler_field_owned_by_other{");
    m.observeFieldConflict("chat", "q", { object, field: "spec.replicas", managers: ["flux"] });
    m.forgetPolicy("chat", "q");
    expect((await m.expose()).body).not.toContain('policy="q"');
  });

  it("exports a refusal by what refused it, and an update's age and deadline, only while they hold", async () => {
    const m = new OperatorMetrics({ processMetrics: false });
    m.observeRefusal("chat", "p", "Lock");
    m.observeUpdateAge("chat", "p", { ageSeconds: 1900.4, deadlineSeconds: 1800 });
    let body = (await m.expose()).body;
    expect(body).toContain(
      'signalr_autoscaler_update_refused{namespace="chat",policy="p",refused_by="Lock"} 1',
    );
    expect(body).toContain('signalr_autoscaler_update_age_seconds{namespace="chat",policy="p"} 1900');
    expect(body).toContain('signalr_autoscaler_update_deadline_seconds{namespace="chat",policy="p"} 1800');
    // Another cause replaces the series; clearing removes it.
    m.observeRefusal("chat", "p", "Quota");
    body = (await m.expose()).body;
    expect(body).not.toContain('refused_by="Lock"');
    expect(body).toContain('refused_by="Quota"} 1');
    m.observeRefusal("chat", "p", undefined);
    m.observeUpdateAge("chat", "p", undefined);
    body = (await m.expose()).body;
    expect(body).not.toContain("signalr_autoscaler_update_refused{");
    expect(body).not.toContain("signalr_autoscaler_update_age_seconds{");
    m.observeRefusal("chat", "q", "Policy");
    m.forgetPolicy("chat", "q");
    expect((await m.expose()).body).not.toContain('policy="q"');
  });

  it("exports history reads by kind and result, the requests they took and the histories held", async () => {
    const m = new OperatorMetrics({ processMetrics: false });
    const read = (kind: "full" | "incremental", result: "success" | "failure") => ({
      resourceId: "/x",
      grain: "5m" as const,
      kind,
      result,
      points: 0,
    });
    m.observeHistoryRefresh(
      { calls: 3, failedCalls: 1, reads: [read("full", "success"), read("full", "failure")] },
      2,
    );
    m.observeHistoryRefresh({ calls: 1, failedCalls: 0, reads: [read("incremental", "success")] }, 2);
    const { body } = await m.expose();
    expect(body).toContain('signalr_autoscaler_history_reads_total{kind="full",result="success"} 1');
    expect(body).toContain('signalr_autoscaler_history_reads_total{kind="full",result="failure"} 1');
    expect(body).toContain('signalr_autoscaler_history_reads_total{kind="incremental",result="success"} 1');
    expect(body).toContain("signalr_autoscaler_history_requests_total 4");
    expect(body).toContain("signalr_autoscaler_history_cached_instances 2");
  });

  it("exports a policy's conditions, SKUs, spec bounds and last pass, and forgets them with it", async () => {
    const m = new OperatorMetrics({ processMetrics: false, now: () => 1_700_000_000_000 });
    const view = {
      minUnits: 2,
      maxUnits: 100,
      pollIntervalSeconds: 30,
      targetPercent: { serverLoadPercent: 70, connectionQuotaUtilizationPercent: undefined },
      currentSku: "Premium_P1",
      desiredSku: "Premium_P1",
      conditions: [
        { type: "Ready" as const, status: "False" as const },
        { type: "Fallback" as const, status: "True" as const },
      ],
    };
    m.observePolicy("a", "p", view);
    m.observePolicy("a", "p", { desiredSku: "Premium_P2", maxUnits: Number.NaN });
    m.observePolicy("b", "q", { ...view, conditions: [{ type: "Ready", status: "True" }] });
    let body = (await m.expose()).body;
    const at = (name: string, labels: string) =>
      `signalr_autoscaler_${name}{namespace="a",policy="p"${labels}}`;
    expect(body).toContain(`${at("status_condition", ',type="Ready",status="False"')} 1`);
    expect(body).toContain(`${at("status_condition", ',type="Ready",status="True"')} 0`);
    expect(body).toContain(`${at("status_condition", ',type="Fallback",status="True"')} 1`);
    expect(body).toContain(`${at("current_sku_info", ',sku="Premium_P1"')} 1`);
    expect(body).toContain(`${at("desired_sku_info", ',sku="Premium_P2"')} 1`);
    expect(body).not.toContain(at("desired_sku_info", ',sku="Premium_P1"'));
    expect(body).toContain(`${at("spec_min_units", "")} 2`);
    expect(body).toContain(`${at("spec_max_units", "")} 100`);
    expect(body).toContain(`${at("spec_poll_interval_seconds", "")} 30`);
    expect(body).toContain(`${at("spec_target_percent", ',metric="serverLoadPercent"')} 70`);
    expect(body).not.toContain(at("spec_target_percent", ',metric="connectionQuotaUtilizationPercent"'));
    expect(body).toContain(`${at("last_reconcile_timestamp_seconds", "")} 1700000000`);
    m.forgetPolicy("a", "p");
    body = (await m.expose()).body;
    expect(body).not.toContain('policy="p"');
    expect(body).toContain(
      'signalr_autoscaler_status_condition{namespace="b",policy="q",type="Ready",status="True"} 1',
    );
  });
});
