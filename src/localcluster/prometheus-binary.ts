/**
 * Finds the Prometheus server to run, building it with scripts/build-prometheus.sh when there is
 * none. The order matches the script's:
 *   1. $SIGNALR_AUTOSCALER_PROMETHEUS, when set (it must report version 2 or later);
 *   2. the cached build for prometheus/versions.env (see cachedPrometheusBinary);
 *   3. a `prometheus` on $PATH that reports version 2 or later;
 *   4. a build into the cache (about 4 minutes on 2 cores with cold Go caches, 5 s warm).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type EnsureBinariesOptions, runBuildScript } from "./build.js";
import {
  cachedPrometheusBinary,
  isExecutable,
  prometheusBuildScript,
  readPrometheusVersion,
} from "./paths.js";

const execFileAsync = promisify(execFile);

/** The oldest Prometheus major version used when found on PATH or named by the environment. */
const MIN_MAJOR = 2;

export interface PrometheusBinary {
  readonly binary: string;
  /** The release it reports, e.g. "3.16.0". */
  readonly version: string;
  /** Where it was found: $SIGNALR_AUTOSCALER_PROMETHEUS, the cache, $PATH, or built just now. */
  readonly source: "environment" | "cache" | "path" | "built";
}

/**
 * The release a prometheus binary reports on `--version` ("prometheus, version 3.16.0 (branch: …")
 * e.g. "3.16.0". Throws when it cannot be run within 10 s or reports no version.
 */
export async function prometheusVersionOf(binary: string): Promise<string> {
  let output: string;
  try {
    const { stdout, stderr } = await execFileAsync(binary, ["--version"], { timeout: 10_000 });
    output = `${stdout}\n${stderr}`;
  } catch (err) {
    throw new Error(`${binary} --version failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const m = /version (\d+\.\d+\.\d+)/.exec(output);
  if (m?.[1] === undefined) {
    throw new Error(`${binary} --version reports no version: '${output.trim().split("\n")[0] ?? ""}'`);
  }
  return m[1];
}

function majorOf(version: string): number {
  return Number(version.split(".")[0]);
}

async function onPath(env: NodeJS.ProcessEnv): Promise<PrometheusBinary | undefined> {
  for (const dir of (env["PATH"] ?? "").split(":")) {
    if (dir === "") continue;
    const candidate = join(dir, "prometheus");
    if (!isExecutable(candidate)) continue;
    // Like the script's `command -v`: the first one on PATH decides.
    const version = await prometheusVersionOf(candidate).catch(() => "");
    return version !== "" && majorOf(version) >= MIN_MAJOR
      ? { binary: candidate, version, source: "path" }
      : undefined;
  }
  return undefined;
}

/**
 * The Prometheus server to run (see the order above), building it into the cache when none is
 * found. `onProgress` gets one line saying which binary is used when it is not the cached one, and
 * the build's lines when it builds. Throws when $SIGNALR_AUTOSCALER_PROMETHEUS names no usable
 * binary, or when the build fails (with its last lines).
 */
export async function ensurePrometheusBinary(options: EnsureBinariesOptions = {}): Promise<PrometheusBinary> {
  const env = options.env ?? process.env;
  const say = options.onProgress ?? (() => {});

  const named = env["SIGNALR_AUTOSCALER_PROMETHEUS"] ?? "";
  if (named !== "") {
    if (!isExecutable(named)) {
      throw new Error(`SIGNALR_AUTOSCALER_PROMETHEUS=${named} is not an executable file`);
    }
    const version = await prometheusVersionOf(named);
    if (majorOf(version) < MIN_MAJOR) {
      throw new Error(
        `SIGNALR_AUTOSCALER_PROMETHEUS=${named} is Prometheus ${version}; version ${MIN_MAJOR} or later is needed`,
      );
    }
    say(`using ${named} (prometheus ${version}) from SIGNALR_AUTOSCALER_PROMETHEUS; not building`);
    return { binary: named, version, source: "environment" };
  }

  const pinned = readPrometheusVersion();
  const cached = cachedPrometheusBinary({ env, version: pinned });
  if (isExecutable(cached)) return { binary: cached, version: pinned.release, source: "cache" };

  const fromPath = await onPath(env);
  if (fromPath !== undefined) {
    say(`using ${fromPath.binary} (prometheus ${fromPath.version}) from PATH; not building`);
    return fromPath;
  }

  const script = prometheusBuildScript();
  await runBuildScript(script, `Prometheus ${pinned.release}`, { ...options, env });
  if (!isExecutable(cached)) throw new Error(`${script} succeeded but ${cached} is missing`);
  return { binary: cached, version: pinned.release, source: "built" };
}
