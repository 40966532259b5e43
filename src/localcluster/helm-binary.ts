/**
 * Finds the Helm CLI the chart's tests run, building it with scripts/build-helm.sh when there is
 * none. The order matches the script's:
 *   1. $SIGNALR_AUTOSCALER_HELM, when set (it must report version 3 or later);
 *   2. the cached build for helm/versions.env (see cachedHelmBinary);
 *   3. a `helm` on $PATH that reports version 3 or later;
 *   4. a build into the cache (several minutes on 2 cores with cold Go caches, seconds warm).
 */
import type { EnsureBinariesOptions } from "./build.js";
import { cachedHelmBinary, helmBuildScript, readHelmVersion } from "./paths.js";
import { ensureToolBinary, reportedVersion, type ToolBinary } from "./tool-binary.js";

export type HelmBinary = ToolBinary;

/**
 * The release a helm binary reports on `version --short` ("v3.22.0+g1a2b3c4"), e.g. "3.22.0".
 * Throws when it cannot be run within 10 s or reports no version.
 */
export function helmVersionOf(binary: string): Promise<string> {
  return reportedVersion(binary, ["version", "--short"], /^v(\d+\.\d+\.\d+)/m);
}

/**
 * The Helm CLI to run (see the order above), building it into the cache when none is found.
 * `onProgress` gets one line saying which binary is used when it is not the cached one, and the
 * build's lines when it builds. Throws when $SIGNALR_AUTOSCALER_HELM names no usable binary, or
 * when the build fails (with its last lines).
 */
export function ensureHelmBinary(options: EnsureBinariesOptions = {}): Promise<HelmBinary> {
  const env = options.env ?? process.env;
  const version = readHelmVersion();
  return ensureToolBinary(
    {
      command: "helm",
      title: "Helm",
      envVar: "SIGNALR_AUTOSCALER_HELM",
      minMajor: 3,
      versionOf: helmVersionOf,
      cached: cachedHelmBinary({ env, version }),
      release: version.slice(1),
      script: helmBuildScript(),
    },
    { ...options, env },
  );
}
