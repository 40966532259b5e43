/**
 * The monitoring files of deploy/ as the tests read them: the PrometheusRule's groups, every PromQL
 * expression of the rules and of the Grafana dashboard, and the metric names they select, read
 * with Prometheus' own PromQL grammar (@prometheus-io/lezer-promql); and the tools built by
 * scripts/build-monitoring-tools.sh, run with a time limit.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parser } from "@prometheus-io/lezer-promql";
import { parse } from "yaml";
import { repoRoot } from "../../src/localcluster/index.js";

export const MONITORING_DIR = join(repoRoot(), "deploy", "monitoring");
export const RULES_FILE = join(MONITORING_DIR, "prometheusrule.yaml");
export const RULES_TEST_FILE = join(MONITORING_DIR, "prometheusrule.test.yaml");
export const DASHBOARD_FILE = join(MONITORING_DIR, "grafana-dashboard.json");
export const HEALTH_LUA = join(repoRoot(), "deploy", "gitops", "argocd-health.lua");
export const RUNBOOK = join(repoRoot(), "docs", "runbook.md");

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The PrometheusRule of deploy/monitoring. */
export function prometheusRule(): {
  apiVersion: string;
  kind: string;
  spec: { groups: { name: string; rules: AlertRule[] }[] };
} {
  return parse(readFileSync(RULES_FILE, "utf8"));
}

interface Panel {
  title?: string;
  type: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** The Grafana dashboard of deploy/monitoring. */
export function dashboard(): {
  templating: { list: { name: string; type: string; query?: unknown; definition?: string }[] };
  panels: Panel[];
} {
  return JSON.parse(readFileSync(DASHBOARD_FILE, "utf8"));
}

/**
 * Every query of the dashboard as PromQL, labelled by panel: Grafana's interval variables are given
 * a value (`$__rate_interval` → 5m) as Grafana would; the `label_values(selector, label)` of a
 * template variable contributes its selector.
 */
export function dashboardQueries(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const walk = (panels: readonly Panel[]) => {
    for (const p of panels) {
      for (const t of p.targets ?? []) {
        if (t.expr !== undefined) out.push({ where: `panel "${p.title}"`, expr: interpolate(t.expr) });
      }
      walk(p.panels ?? []);
    }
  };
  const d = dashboard();
  walk(d.panels);
  for (const v of d.templating.list) {
    if (v.type !== "query" || v.definition === undefined) continue;
    const m = /^label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\)$/s.exec(v.definition);
    if (m?.[1] === undefined) throw new Error(`variable ${v.name}: not label_values(selector, label)`);
    out.push({ where: `variable ${v.name}`, expr: interpolate(m[1]) });
  }
  return out;
}

function interpolate(expr: string): string {
  return expr.replaceAll("$__rate_interval", "5m").replaceAll("$__interval", "1m");
}

/** Every alert expression of the PrometheusRule. */
export function ruleQueries(): { where: string; expr: string }[] {
  return prometheusRule().spec.groups.flatMap((g) =>
    g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
  );
}

/**
 * The metric names a PromQL expression selects (the name of each vector selector). Throws when
 * the expression does not parse.
 */
export function selectedMetrics(expr: string): string[] {
  const tree = parser.parse(expr);
  const names: string[] = [];
  let error: number | undefined;
  tree.iterate({
    enter(node) {
      if (node.type.isError && error === undefined) error = node.from;
      if (node.name === "VectorSelector") {
        const id = node.node.getChild("Identifier");
        if (id) names.push(expr.slice(id.from, id.to));
      }
    },
  });
  if (error !== undefined) throw new Error(`PromQL does not parse at ${error}: ${expr}`);
  return names;
}

/** The metric families of a `/metrics` body (`# TYPE` lines), with histograms' series names. */
export function exportedMetrics(body: string): Set<string> {
  const names = new Set<string>();
  for (const m of body.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name = "", type] = m;
    names.add(name);
    if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(`${name}${s}`);
  }
  return names;
}

/** Runs `file args…` with `input` on stdin, within 30 s: exit code and output. */
export function run(
  file: string,
  args: readonly string[],
  options: { cwd?: string; input?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { cwd: options.cwd, timeout: 30_000, maxBuffer: 8 << 20 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") return reject(err);
        resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(options.input ?? "");
  });
}
