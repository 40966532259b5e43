export { type EnsureBinariesOptions, ensureControlPlaneBinaries } from "./build.js";
export {
  ADMIN_GROUPS,
  ADMIN_USER,
  CLUSTER_NAME,
  type ControlPlane,
  OPERATOR_GROUPS,
  OPERATOR_NAMESPACE,
  OPERATOR_SERVICE_ACCOUNT,
  OPERATOR_USER,
  type StartControlPlaneOptions,
  startControlPlane,
} from "./controlplane.js";
export {
  binariesPresent,
  buildScript,
  type ControlPlaneBinaries,
  type ControlPlaneVersions,
  cacheRoot,
  controlPlaneBinaries,
  parseVersionsEnv,
  readVersions,
  repoRoot,
} from "./paths.js";
