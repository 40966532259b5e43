export { type EnsureBinariesOptions, ensureControlPlaneBinaries, runBuildScript } from "./build.js";
export {
  type ControlPlane,
  OPERATOR_USER,
  type StartControlPlaneOptions,
  startControlPlane,
} from "./controlplane.js";
export { ensureHelmBinary, type HelmBinary, helmVersionOf } from "./helm-binary.js";
export { ensureMonitoringTools, type MonitoringTools, monitoringTools } from "./monitoring-tools.js";
export {
  binariesPresent,
  buildScript,
  type ControlPlaneBinaries,
  type ControlPlaneVersions,
  cachedHelmBinary,
  cachedPrometheusBinary,
  cacheRoot,
  controlPlaneBinaries,
  helmBuildScript,
  isExecutable,
  type PrometheusVersion,
  parseHelmVersionsEnv,
  parsePrometheusVersionsEnv,
  parseVersionsEnv,
  prometheusBuildScript,
  readHelmVersion,
  readPrometheusVersion,
  readVersions,
  repoRoot,
} from "./paths.js";
export { type LocalPrometheus, type StartPrometheusOptions, startPrometheus } from "./prometheus.js";
export { ensurePrometheusBinary, type PrometheusBinary, prometheusVersionOf } from "./prometheus-binary.js";
export { type PrometheusConfig, type PrometheusTarget, prometheusConfig } from "./prometheus-config.js";
export { ensureToolBinary, reportedVersion, type ToolBinary, type ToolSpec } from "./tool-binary.js";
