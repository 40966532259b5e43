/**
 * vitest globalSetup: builds the control plane binaries if needed, starts one
 * etcd + kube-apiserver for the whole run and hands the connection details to
 * the tests via `inject("controlPlane")`. Also makes sure a Prometheus binary
 * exists (building it on first use) and hands its path to the tests via
 * `inject("prometheusBinary")`; tests start their own Prometheus with it. Likewise `promtool` and
 * `gitops-health` (scripts/build-monitoring-tools.sh) via `inject("monitoringTools")`.
 * `inject("prometheusBinary")`; tests start their own Prometheus with it. Likewise the Helm CLI
 * the chart's tests run, via `inject("helmBinary")`.
 */
import type { TestProject } from "vitest/node";
import {
  type ControlPlane,
  ensureControlPlaneBinaries,
  ensureHelmBinary,
  ensureMonitoringTools,
  ensurePrometheusBinary,
  startControlPlane,
} from "../../src/localcluster/index.js";

export interface ProvidedControlPlane {
  readonly server: string;
  readonly kubeconfigAdmin: string;
  readonly kubeconfigOperator: string;
  readonly adminToken: string;
  readonly operatorToken: string;
  readonly caFile: string;
  /** The cached bin/ directory with kube-apiserver, etcd and kubectl. */
  readonly binDir: string;
  readonly kubectl: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    controlPlane: ProvidedControlPlane;
    /** Path of the prometheus binary (cached build, $SIGNALR_AUTOSCALER_PROMETHEUS or PATH). */
    prometheusBinary: string;
    /** Paths of promtool and gitops-health (cached builds). */
    monitoringTools: { promtool: string; gitopsHealth: string };
    /** Path of the helm binary (cached build, $SIGNALR_AUTOSCALER_HELM or PATH). */
    helmBinary: string;
  }
}

let controlPlane: ControlPlane | undefined;

export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  const binaries = await ensureControlPlaneBinaries({
    onProgress: (line) => console.log(`[control plane] ${line}`),
  });
  // Both builds before anything starts, so a failed build leaves nothing running.
  const prometheusStarted = Date.now();
  const prometheus = await ensurePrometheusBinary({
    onProgress: (line) => console.log(`[prometheus] ${line}`),
  });
  console.log(
    `[prometheus] ${prometheus.version} (${prometheus.source}) at ${prometheus.binary} in ` +
      `${((Date.now() - prometheusStarted) / 1000).toFixed(1)}s`,
  );
  project.provide("prometheusBinary", prometheus.binary);
  const toolsStarted = Date.now();
  const tools = await ensureMonitoringTools({
    onProgress: (line) => console.log(`[monitoring tools] ${line}`),
  });
  console.log(
    `[monitoring tools] promtool and gitops-health at ${tools.binDir} in ` +
      `${((Date.now() - toolsStarted) / 1000).toFixed(1)}s`,
  );
  project.provide("monitoringTools", { promtool: tools.promtool, gitopsHealth: tools.gitopsHealth });
  const helmStarted = Date.now();
  const helm = await ensureHelmBinary({ onProgress: (line) => console.log(`[helm] ${line}`) });
  console.log(
    `[helm] ${helm.version} (${helm.source}) at ${helm.binary} in ` +
      `${((Date.now() - helmStarted) / 1000).toFixed(1)}s`,
  );
  project.provide("helmBinary", helm.binary);

  controlPlane = await startControlPlane({ binaries });
  console.log(
    `[control plane] ${binaries.versions.kubernetes} / etcd ${binaries.versions.etcd} ready at ` +
      `${controlPlane.server} in ${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
  project.provide("controlPlane", {
    server: controlPlane.server,
    kubeconfigAdmin: controlPlane.kubeconfigAdmin,
    kubeconfigOperator: controlPlane.kubeconfigOperator,
    adminToken: controlPlane.adminToken,
    operatorToken: controlPlane.operatorToken,
    caFile: controlPlane.caFile,
    binDir: binaries.binDir,
    kubectl: binaries.kubectl,
  });
}

export async function teardown(): Promise<void> {
  await controlPlane?.stop();
  controlPlane = undefined;
}
