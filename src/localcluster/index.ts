export { type EnsureBinariesOptions, ensureControlPlaneBinaries, runBuildScript } from "./build.js";
export {
  type ControlPlane,
  OPERATOR_USER,
  type StartControlPlaneOptions,
  startControlPlane,
} from "./controlplane.js";
export { ensureMonitoringTools, type MonitoringTools, monitoringTools } from "./monitoring-tools.js";
export {
  binariesPresent,
  buildScript,
  type ControlPlaneBinaries,
  type ControlPlaneVersions,
  cachedPrometheusBinary,
  cacheRoot,
  controlPlaneBinaries,
  isExecutable,
  type PrometheusVersion,
  parsePrometheusVersionsEnv,
  parseVersionsEnv,
  prometheusBuildScript,
  readPrometheusVersion,
  readVersions,
  repoRoot,
} from "./paths.js";
export { type LocalPrometheus, type StartPrometheusOptions, startPrometheus } from "./prometheus.js";
export { ensurePrometheusBinary, type PrometheusBinary, prometheusVersionOf } from "./prometheus-binary.js";
export { type PrometheusConfig, type PrometheusTarget, prometheusConfig } from "./prometheus-config.js";
