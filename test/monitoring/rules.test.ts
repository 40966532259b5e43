/**
 * The PrometheusRule and the Grafana dashboard of deploy/monitoring: the rule groups pass
 * `promtool check rules`; prometheusrule.test.yaml shows each alert firing and not firing with
 * `promtool test rules`; every alert has a severity and a runbook_url whose anchor is a heading
 * of docs/runbook.md; every PromQL query parses, and the dashboard picks its data source, namespace
 * and policy from variables. (That every metric they use is exported: gitops-health.test.ts.)
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stringify } from "yaml";
import {
  dashboard,
  dashboardQueries,
  prometheusRule,
  RULES_TEST_FILE,
  RUNBOOK,
  ruleQueries,
  run,
  selectedMetrics,
} from "./support.js";

const RULES_NAME = "signalr-autoscaler.rules.yaml";
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "monitoring-rules-"));
  // promtool reads plain rule files: the PrometheusRule's spec.groups are one.
  await writeFile(join(dir, RULES_NAME), stringify({ groups: prometheusRule().spec.groups }));
  await copyFile(RULES_TEST_FILE, join(dir, "prometheusrule.test.yaml"));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("PrometheusRule", () => {
  it("is a monitoring.coreos.com/v1 PrometheusRule whose groups pass promtool check rules", async () => {
    const rule = prometheusRule();
    expect(rule.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(rule.kind).toBe("PrometheusRule");
    const r = await run(inject("monitoringTools").promtool, ["check", "rules", RULES_NAME], { cwd: dir });
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(`SUCCESS: ${ruleQueries().length} rules found`);
    expect(r.code).toBe(0);
  });

  it("fires each alert on the series of prometheusrule.test.yaml and only there (promtool test rules)", async () => {
    const r = await run(inject("monitoringTools").promtool, ["test", "rules", "prometheusrule.test.yaml"], {
      cwd: dir,
    });
    expect(r.stdout + r.stderr).toContain("SUCCESS");
    expect(r.code).toBe(0);
    // Every alert is tested, firing at least once and silent at least once.
    const tests = await readFile(RULES_TEST_FILE, "utf8");
    for (const { where } of ruleQueries()) {
      const name = where.replace(/^alert /, "");
      expect(tests, name).toMatch(new RegExp(`alertname: ${name}\\n\\s+exp_alerts: \\[\\]`));
      expect(tests, name).toMatch(new RegExp(`alertname: ${name}\\n\\s+exp_alerts:\\n`));
    }
  });

  it("fails promtool test rules when an alert's threshold changes", async () => {
    const groups = prometheusRule().spec.groups.map((g) => ({
      ...g,
      rules: g.rules.map((rule) =>
        rule.alert === "SignalRAutoscalerAzureThrottled"
          ? { ...rule, expr: rule.expr.replace("> 0.1", "> 0.5") }
          : rule,
      ),
    }));
    const broken = await mkdtemp(join(tmpdir(), "monitoring-rules-broken-"));
    try {
      await writeFile(join(broken, RULES_NAME), stringify({ groups }));
      await copyFile(RULES_TEST_FILE, join(broken, "prometheusrule.test.yaml"));
      const r = await run(inject("monitoringTools").promtool, ["test", "rules", "prometheusrule.test.yaml"], {
        cwd: broken,
      });
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toContain("SignalRAutoscalerAzureThrottled");
    } finally {
      await rm(broken, { recursive: true, force: true });
    }
  });

  it("gives every alert a severity and a runbook_url to a section of docs/runbook.md", async () => {
    const runbook = await readFile(RUNBOOK, "utf8");
    // GitHub's anchors: the heading lower-cased, spaces to dashes, punctuation dropped.
    const anchors = new Set(
      [...runbook.matchAll(/^#{2,3} (.+)$/gm)].map((m) =>
        (m[1] ?? "")
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, "")
          .replaceAll(" ", "-"),
      ),
    );
    const rules = prometheusRule().spec.groups.flatMap((g) => g.rules);
    expect(rules.length).toBe(8);
    for (const rule of rules) {
      expect(["warning", "critical"], rule.alert).toContain(rule.labels?.["severity"]);
      const url = rule.annotations?.["runbook_url"] ?? "";
      expect(url, rule.alert).toMatch(/\/docs\/runbook\.md#[a-z0-9-]+$/);
      const anchor = url.slice(url.indexOf("#") + 1);
      expect(anchor).toBe(rule.alert.toLowerCase());
      expect(anchors.has(anchor), `${rule.alert}: no heading for #${anchor} in docs/runbook.md`).toBe(true);
    }
  });
});

describe("Grafana dashboard", () => {
  it("takes its data source, namespace and policy from template variables", () => {
    const vars = new Map(dashboard().templating.list.map((v) => [v.name, v]));
    expect(vars.get("datasource")).toMatchObject({ type: "datasource", query: "prometheus" });
    expect(vars.get("namespace")?.definition).toBe(
      "label_values(signalr_autoscaler_current_units, namespace)",
    );
    expect(vars.get("policy")?.definition).toBe(
      'label_values(signalr_autoscaler_current_units{namespace=~"$namespace"}, policy)',
    );
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(20);
    // Every per-policy query is filtered by both variables.
    for (const q of queries) {
      if (!q.expr.includes("policy")) continue;
      if (q.where.startsWith("variable")) continue;
      expect(q.expr, q.where).toContain('namespace=~"$namespace", policy=~"$policy"');
    }
  });

  it("has queries that all parse as PromQL, and the parser refuses a broken one", () => {
    for (const q of [...dashboardQueries(), ...ruleQueries()]) {
      expect(selectedMetrics(q.expr).length, q.where).toBeGreaterThan(0);
    }
    expect(() => selectedMetrics("sum(rate(signalr_autoscaler_leader[5m])")).toThrow(/does not parse/);
  });
});
