/**
 * The Helm chart, rendered by the real Helm: it lints strictly; its version is the package's; its
 * CRD is crds/ byte for byte; with the values in ci/ it renders exactly the objects of deploy/ and
 * deploy/tenancy/ (as `kubectl kustomize` renders them), less the Namespace and Helm's own labels;
 * its opt-ins render what they say; and a wrong value fails with the schema's message.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CHART_CRD_FILE, CRD_FILE } from "../../src/api/crd.js";
import { controlPlane } from "../kube/support.js";
import { kubectlAs, ROOT } from "../production/support.js";
import { CHART, DEPLOY_VALUES, type Doc, documents, helm, key, TENANCY_VALUES, template } from "./support.js";

/** The labels Helm adds of its own (release, chart and app version, manager). */
const HELM_LABELS = [
  "helm.sh/chart",
  "app.kubernetes.io/managed-by",
  "app.kubernetes.io/instance",
  "app.kubernetes.io/version",
];
/** kustomize's configMapGenerator appends a hash of the content to the name. */
const GENERATED_SUFFIX = /-[a-z0-9]{10}$/;

async function kustomize(dir: string): Promise<Doc[]> {
  const r = await kubectlAs(controlPlane().kubeconfigAdmin, ["kustomize", dir]);
  expect(r.code, r.stderr).toBe(0);
  return documents(r.stdout);
}

/** A deep copy of `value` without Helm's own labels, wherever a label map or selector holds them. */
function withoutHelmLabels(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutHelmLabels);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !HELM_LABELS.includes(k))
      .map(([k, v]) => [k, withoutHelmLabels(v)]),
  );
}

/**
 * Makes the two renderings comparable: Helm's labels dropped; the tenancy ConfigMap named without
 * kustomize's hash (the chart rolls the pods with a checksum annotation instead, dropped too) and
 * its file compared as data, not text.
 */
function normalise(docs: Doc[]): Doc[] {
  return docs
    .map((d) => withoutHelmLabels(d) as Doc)
    .map((d) => {
      if (d["kind"] === "ConfigMap") {
        d["metadata"].name = String(d["metadata"].name).replace(GENERATED_SUFFIX, "");
        d["data"]["tenancy.yaml"] = parse(d["data"]["tenancy.yaml"]);
      }
      if (d["kind"] === "Deployment") {
        const pod = d["spec"].template;
        delete pod.metadata.annotations?.["checksum/tenancy"];
        if (pod.metadata.annotations && Object.keys(pod.metadata.annotations).length === 0) {
          delete pod.metadata.annotations;
        }
        for (const v of pod.spec.volumes as Doc[]) {
          if (v["configMap"]) v["configMap"].name = String(v["configMap"].name).replace(GENERATED_SUFFIX, "");
        }
      }
      return d;
    })
    .sort((a, b) => key(a).localeCompare(key(b)));
}

describe("the chart", () => {
  it("has the package's version as version and appVersion, and crds/ byte for byte", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    const chart = parse(readFileSync(join(CHART, "Chart.yaml"), "utf8")) as Doc;
    expect(chart["version"]).toBe(pkg.version);
    expect(chart["appVersion"]).toBe(pkg.version);
    expect(readFileSync(join(ROOT, CHART_CRD_FILE))).toEqual(readFileSync(join(ROOT, CRD_FILE)));
  });

  it("passes helm lint --strict with the defaults and with each ci/ values file", async () => {
    for (const values of [[], ["-f", DEPLOY_VALUES], ["-f", TENANCY_VALUES]]) {
      const r = await helm(["lint", "--strict", CHART, ...values]);
      expect(r.code, `${values.join(" ")}\n${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout).toContain("1 chart(s) linted, 0 chart(s) failed");
      expect(r.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
    }
  });

  it("renders the objects of deploy/ with ci/deploy-values.yaml, and of deploy/tenancy/ with ci/tenancy-values.yaml", async () => {
    for (const [dir, values] of [
      ["deploy/", DEPLOY_VALUES],
      ["deploy/tenancy/", TENANCY_VALUES],
    ] as const) {
      const kustomized = normalise(await kustomize(dir));
      const chart = await template(["-f", values]);
      // The CRD is in crds/, not in deploy/; the chart does not create its own namespace.
      const crd = chart.filter((d) => d["kind"] === "CustomResourceDefinition");
      expect(crd).toHaveLength(1);
      const objects = normalise(chart.filter((d) => d["kind"] !== "CustomResourceDefinition"));
      expect(kustomized.filter((d) => d["kind"] === "Namespace").map(key)).toEqual([
        "Namespace//signalr-autoscaler-system",
      ]);
      expect(objects, dir).toEqual(kustomized.filter((d) => d["kind"] !== "Namespace"));
    }
  });

  it("installs the CRD of crds/, kept on uninstall, unless crds.install is false", async () => {
    const [crd] = (await template()).filter((d) => d["kind"] === "CustomResourceDefinition");
    const fromFile = parse(readFileSync(join(ROOT, CRD_FILE), "utf8")) as Doc;
    expect(crd?.["metadata"].annotations).toEqual({ "helm.sh/resource-policy": "keep" });
    expect(crd?.["metadata"].labels).toMatchObject({
      ...fromFile["metadata"].labels,
      "app.kubernetes.io/managed-by": "Helm",
    });
    expect(crd?.["spec"]).toEqual(fromFile["spec"]);
    const without = await template(["--set", "crds.install=false"]);
    expect(without.map((d) => d["kind"])).not.toContain("CustomResourceDefinition");
  });

  it("renders the opt-ins: client ID, image by digest, watched namespaces, monitors, labels, scheduling", async () => {
    const digest = `sha256:${"ab".repeat(32)}`;
    const docs = await template(
      [
        "--set",
        "azure.clientId=12345678-1234-1234-1234-123456789abc",
        "--set",
        `image.repository=registry.example/signalr-autoscaler,image.digest=${digest},image.pullPolicy=Always`,
        "--set",
        "imagePullSecrets[0].name=regcred",
        "--set",
        "watchNamespaces={chat,notifications}",
        "--set",
        "monitoring.serviceMonitor.enabled=true,monitoring.serviceMonitor.labels.release=kps",
        "--set",
        "monitoring.podMonitor.enabled=true",
        "--set",
        "commonLabels.team=platform,podLabels.tier=control,podAnnotations.note=x",
        "--set",
        "nodeSelector.pool=system,tolerations[0].key=CriticalAddonsOnly,tolerations[0].operator=Exists",
        "--set",
        "leaderElection.leaseDurationSeconds=20,logFormat=pretty,replicas=3",
      ],
      "ops",
      "operators",
    );
    const kinds = docs.map(key).sort();
    expect(kinds).toEqual([
      "ClusterRole//ops-signalr-autoscaler",
      "CustomResourceDefinition//capacitypolicies.autoscaling.signalr.dev",
      "Deployment/operators/ops-signalr-autoscaler",
      "PodDisruptionBudget/operators/ops-signalr-autoscaler",
      "PodMonitor/operators/ops-signalr-autoscaler",
      "Role/operators/ops-signalr-autoscaler-leader-election",
      "RoleBinding/chat/ops-signalr-autoscaler",
      "RoleBinding/notifications/ops-signalr-autoscaler",
      "RoleBinding/operators/ops-signalr-autoscaler-leader-election",
      "Service/operators/ops-signalr-autoscaler-metrics",
      "ServiceAccount/operators/ops-signalr-autoscaler",
      "ServiceMonitor/operators/ops-signalr-autoscaler",
    ]);
    for (const d of docs) expect(d["metadata"].labels, key(d)).toMatchObject({ team: "platform" });
    const byKind = (kind: string) => docs.find((d) => d["kind"] === kind) as Doc;
    expect(byKind("ServiceAccount")["metadata"].annotations).toEqual({
      "azure.workload.identity/client-id": "12345678-1234-1234-1234-123456789abc",
    });
    const binding = byKind("RoleBinding");
    expect(binding["roleRef"]).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "ClusterRole",
      name: "ops-signalr-autoscaler",
    });
    expect(binding["subjects"]).toEqual([
      { kind: "ServiceAccount", name: "ops-signalr-autoscaler", namespace: "operators" },
    ]);
    expect(docs.find((d) => d["kind"] === "Role")?.["rules"][1].resourceNames).toEqual([
      "ops-signalr-autoscaler",
    ]);

    const deployment = byKind("Deployment");
    expect(deployment["spec"].replicas).toBe(3);
    const pod = deployment["spec"].template;
    expect(pod.metadata.labels).toMatchObject({ tier: "control", "azure.workload.identity/use": "true" });
    expect(pod.metadata.annotations).toEqual({ note: "x" });
    expect(pod.spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(pod.spec.nodeSelector).toEqual({ pool: "system" });
    expect(pod.spec.tolerations).toEqual([{ key: "CriticalAddonsOnly", operator: "Exists" }]);
    const container = pod.spec.containers[0];
    expect(container.image).toBe(`registry.example/signalr-autoscaler@${digest}`);
    expect(container.imagePullPolicy).toBe("Always");
    const env = Object.fromEntries((container.env as Doc[]).map((e) => [e["name"], e["value"]]));
    expect(env).toMatchObject({
      WATCH_NAMESPACES: "chat,notifications",
      LEASE_NAME: "ops-signalr-autoscaler",
      LEASE_DURATION: "20",
      LOG_FORMAT: "pretty",
    });

    const selector = deployment["spec"].selector.matchLabels;
    const serviceMonitor = byKind("ServiceMonitor");
    expect(serviceMonitor["apiVersion"]).toBe("monitoring.coreos.com/v1");
    expect(serviceMonitor["metadata"].labels).toMatchObject({ release: "kps" });
    expect(serviceMonitor["spec"].selector.matchLabels).toEqual(selector);
    expect(byKind("Service")["metadata"].labels).toMatchObject(selector);
    expect(serviceMonitor["spec"].endpoints).toEqual([
      { port: "metrics", path: "/metrics", interval: "30s" },
    ]);
    const podMonitor = byKind("PodMonitor");
    expect(podMonitor["spec"].selector.matchLabels).toEqual(selector);
    expect(pod.metadata.labels).toMatchObject(selector);
    expect(podMonitor["spec"].podMetricsEndpoints).toEqual([
      { port: "metrics", path: "/metrics", interval: "30s" },
    ]);
  });

  it("without leader election runs one replica, without the Lease's Role or a PodDisruptionBudget", async () => {
    const docs = await template(["--set", "leaderElection.enabled=false,replicas=1"]);
    const kinds = docs.map((d) => d["kind"]);
    expect(kinds).not.toContain("Role");
    expect(kinds).not.toContain("PodDisruptionBudget");
    const container = (docs.find((d) => d["kind"] === "Deployment") as Doc)["spec"].template.spec
      .containers[0];
    expect(container.args).toEqual(["run"]);
    expect((container.env as Doc[]).map((e) => e["name"])).not.toContain("LEASE_NAME");

    const two = await helm(["template", "x", CHART, "--set", "leaderElection.enabled=false"]);
    expect(two.code).not.toBe(0);
    expect(two.stderr).toContain("replicas > 1 needs leaderElection.enabled: true");
  });

  it("fails helm template and helm install with the schema's message for a wrong value", async () => {
    const cases: [string[], string][] = [
      [["--set-string", "replicas=two"], "at '/replicas': got string, want integer"],
      [["--set", "replica=2"], "at '': additional properties 'replica' not allowed"],
      [
        ["--set", "image.pullPolicy=Sometimes"],
        "at '/image/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'",
      ],
      [["--set", "image.tags=1.0"], "at '/image': additional properties 'tags' not allowed"],
      [["--set", "azure.clientId=my-identity"], "at '/azure/clientId': 'anyOf' failed"],
      [["--set", "watchNamespaces={Chat_App}"], "at '/watchNamespaces/0'"],
      [["--set", "tenancy.namespaces.chat[0].resourceGroup=rg"], "missing property 'subscriptionId'"],
      [["--set", "logLevel=verbose"], "at '/logLevel': value must be one of"],
      [["--set", "monitoring.serviceMonitor.interval=often"], "at '/monitoring/serviceMonitor/interval'"],
    ];
    for (const [args, message] of cases) {
      const r = await helm(["template", "x", CHART, ...args]);
      expect(r.code, args.join(" ")).not.toBe(0);
      expect(r.stderr, args.join(" ")).toContain("values don't meet the specifications of the schema(s)");
      expect(r.stderr, args.join(" ")).toContain(message);
    }
    // install validates the same way before it creates anything.
    const install = await helm([
      "install",
      "x",
      CHART,
      `--kubeconfig=${controlPlane().kubeconfigAdmin}`,
      "--dry-run=client",
      "--set-string",
      "replicas=two",
    ]);
    expect(install.code).not.toBe(0);
    expect(install.stderr).toContain("at '/replicas': got string, want integer");
  });
});
