/**
 * Finds the Prometheus server to run, building it with scripts/build-prometheus.sh when there is
 * none. The order matches the script's:
 *   1. $SIGNALR_AUTOSCALER_PROMETHEUS, when set (it must report version 2 or later);
 *   2. the cached build for prometheus/versions.env (see cachedPrometheusBinary);
 *   3. a `prometheus` on $PATH that reports version 2 or later;
 *   4. a build into the cache (about 4 minutes on 2 cores with cold Go caches, 5 s warm).
 */
import type { EnsureBinariesOptions } from "./build.js";
import { cachedPrometheusBinary, prometheusBuildScript, readPrometheusVersion } from "./paths.js";
import { ensureToolBinary, reportedVersion, type ToolBinary } from "./tool-binary.js";

export type PrometheusBinary = ToolBinary;

/**
 * The release a prometheus binary reports on `--version` ("prometheus, version 3.16.0 (branch: …")
 * e.g. "3.16.0". Throws when it cannot be run within 10 s or reports no version.
 */
export function prometheusVersionOf(binary: string): Promise<string> {
  return reportedVersion(binary, ["--version"], /version (\d+\.\d+\.\d+)/);
}

/**
 * The Prometheus server to run (see the order above), building it into the cache when none is
 * found. `onProgress` gets one line saying which binary is used when it is not the cached one, and
 * the build's lines when it builds. Throws when $SIGNALR_AUTOSCALER_PROMETHEUS names no usable
 * binary, or when the build fails (with its last lines).
 */
export function ensurePrometheusBinary(options: EnsureBinariesOptions = {}): Promise<PrometheusBinary> {
  const env = options.env ?? process.env;
  const pinned = readPrometheusVersion();
  return ensureToolBinary(
    {
      command: "prometheus",
      title: "Prometheus",
      envVar: "SIGNALR_AUTOSCALER_PROMETHEUS",
      minMajor: 2,
      versionOf: prometheusVersionOf,
      cached: cachedPrometheusBinary({ env, version: pinned }),
      release: pinned.release,
      script: prometheusBuildScript(),
    },
    { ...options, env },
  );
}
