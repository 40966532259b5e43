export { type EnsureBinariesOptions, ensureControlPlaneBinaries } from "./build.js";
export {
  type ControlPlane,
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
