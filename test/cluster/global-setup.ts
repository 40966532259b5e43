/**
 * vitest globalSetup: builds the control plane binaries if needed, starts one
 * etcd + kube-apiserver for the whole run and hands the connection details to
 * the tests via `inject("controlPlane")`. Also makes sure a Prometheus binary
 * exists (building it on first use) and hands its path to the tests via
 * `inject("prometheusBinary")`; tests start their own Prometheus with it. Likewise `promtool` and
 * `gitops-health` (scripts/build-monitoring-tools.sh) via `inject("monitoringTools")`.
 * `inject("prometheusBinary")`; tests start their own Prometheus with it. Likewise the Helm CLI
 * the chart's tests run, via `inject("helmBinary")`. The projects that name this file (the
 * parallel and the serial integration tiers) share one set-up: the first starts it, the last to
 * finish stops it.
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

/** What {@link setup} hands every project that names this file. */
interface Provided {
  controlPlane: ProvidedControlPlane;
  prometheusBinary: string;
  monitoringTools: { promtool: string; gitopsHealth: string };
  helmBinary: string;
}

/** The one set-up of the run, shared by the projects that name this file (each loads it apart). */
interface Shared {
  users: number;
  ready: Promise<{ provided: Provided; controlPlane: ControlPlane }>;
}

const SHARED = Symbol.for("signalr-autoscaler/test/cluster/global-setup");

function sharedState(): { [SHARED]?: Shared } {
  return globalThis as { [SHARED]?: Shared };
}

export async function setup(project: TestProject): Promise<void> {
  const state = sharedState();
  state[SHARED] ??= { users: 0, ready: start() };
  const shared = state[SHARED];
  shared.users++;
  const { provided } = await shared.ready;
  project.provide("prometheusBinary", provided.prometheusBinary);
  project.provide("monitoringTools", provided.monitoringTools);
  project.provide("helmBinary", provided.helmBinary);
  project.provide("controlPlane", provided.controlPlane);
}

export async function teardown(): Promise<void> {
  const state = sharedState();
  const shared = state[SHARED];
  if (!shared || --shared.users > 0) return;
  delete state[SHARED];
  await (await shared.ready).controlPlane.stop();
}

async function start(): Promise<{ provided: Provided; controlPlane: ControlPlane }> {
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
  const toolsStarted = Date.now();
  const tools = await ensureMonitoringTools({
    onProgress: (line) => console.log(`[monitoring tools] ${line}`),
  });
  console.log(
    `[monitoring tools] promtool and gitops-health at ${tools.binDir} in ` +
      `${((Date.now() - toolsStarted) / 1000).toFixed(1)}s`,
  );
  const helmStarted = Date.now();
  const helm = await ensureHelmBinary({ onProgress: (line) => console.log(`[helm] ${line}`) });
  console.log(
    `[helm] ${helm.version} (${helm.source}) at ${helm.binary} in ` +
      `${((Date.now() - helmStarted) / 1000).toFixed(1)}s`,
  );

  const controlPlane = await startControlPlane({ binaries });
  console.log(
    `[control plane] ${binaries.versions.kubernetes} / etcd ${binaries.versions.etcd} ready at ` +
      `${controlPlane.server} in ${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
  return {
    controlPlane,
    provided: {
      prometheusBinary: prometheus.binary,
      monitoringTools: { promtool: tools.promtool, gitopsHealth: tools.gitopsHealth },
      helmBinary: helm.binary,
      controlPlane: {
        server: controlPlane.server,
        kubeconfigAdmin: controlPlane.kubeconfigAdmin,
        kubeconfigOperator: controlPlane.kubeconfigOperator,
        adminToken: controlPlane.adminToken,
        operatorToken: controlPlane.operatorToken,
        caFile: controlPlane.caFile,
        binDir: binaries.binDir,
        kubectl: binaries.kubectl,
      },
    },
  };
}
