/**
 * Finds a Go-built tool to run (Prometheus, Helm), building it with its scripts/build-*.sh when
 * there is none. The order matches the scripts':
 *   1. $SIGNALR_AUTOSCALER_<TOOL>, when set (it must report the minimum major version or later);
 *   2. the cached build for the tool's versions.env;
 *   3. the first `<tool>` on $PATH, when it reports the minimum major version or later;
 *   4. a build into the cache.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { type EnsureBinariesOptions, runBuildScript } from "./build.js";
import { isExecutable } from "./paths.js";

const execFileAsync = promisify(execFile);

/** One tool: how to find, name and check it. */
export interface ToolSpec {
  /** Its command name on $PATH and in messages, e.g. "prometheus". */
  readonly command: string;
  /** Its name in error messages, e.g. "Prometheus". */
  readonly title: string;
  /** The environment variable naming a binary to use instead, e.g. SIGNALR_AUTOSCALER_PROMETHEUS. */
  readonly envVar: string;
  /** The oldest major version accepted from the environment or $PATH. */
  readonly minMajor: number;
  /** The release a binary reports, e.g. "3.16.0". Throws when it reports none. */
  readonly versionOf: (binary: string) => Promise<string>;
  /** Where the build script puts the binary (present or not). */
  readonly cached: string;
  /** The release the cached build is. */
  readonly release: string;
  readonly script: string;
}

export interface ToolBinary {
  readonly binary: string;
  /** The release it reports, e.g. "3.16.0". */
  readonly version: string;
  /** Where it was found: its environment variable, the cache, $PATH, or built just now. */
  readonly source: "environment" | "cache" | "path" | "built";
}

/**
 * The first line matching `pattern` (its first group) that `binary args…` prints within 10 s.
 * Throws when it cannot be run or prints no such line.
 */
export async function reportedVersion(
  binary: string,
  args: readonly string[],
  pattern: RegExp,
): Promise<string> {
  const command = `${binary} ${args.join(" ")}`;
  let output: string;
  try {
    const { stdout, stderr } = await execFileAsync(binary, args, { timeout: 10_000 });
    output = `${stdout}\n${stderr}`;
  } catch (err) {
    throw new Error(`${command} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const m = pattern.exec(output);
  if (m?.[1] === undefined) {
    throw new Error(`${command} reports no version: '${output.trim().split("\n")[0] ?? ""}'`);
  }
  return m[1];
}

function majorOf(version: string): number {
  return Number(version.split(".")[0]);
}

async function onPath(tool: ToolSpec, env: NodeJS.ProcessEnv): Promise<ToolBinary | undefined> {
  for (const dir of (env["PATH"] ?? "").split(":")) {
    if (dir === "") continue;
    const candidate = join(dir, tool.command);
    if (!isExecutable(candidate)) continue;
    // Like the script's `command -v`: the first one on PATH decides.
    const version = await tool.versionOf(candidate).catch(() => "");
    return version !== "" && majorOf(version) >= tool.minMajor
      ? { binary: candidate, version, source: "path" }
      : undefined;
  }
  return undefined;
}

/**
 * The binary of `tool` to run (see the order above), building it into the cache when none is
 * found. `onProgress` gets one line saying which binary is used when it is not the cached one, and
 * the build's lines when it builds. Throws when the environment variable names no usable binary,
 * or when the build fails (with its last lines).
 */
export async function ensureToolBinary(
  tool: ToolSpec,
  options: EnsureBinariesOptions = {},
): Promise<ToolBinary> {
  const env = options.env ?? process.env;
  const say = options.onProgress ?? (() => {});

  const named = env[tool.envVar] ?? "";
  if (named !== "") {
    if (!isExecutable(named)) throw new Error(`${tool.envVar}=${named} is not an executable file`);
    const version = await tool.versionOf(named);
    if (majorOf(version) < tool.minMajor) {
      throw new Error(
        `${tool.envVar}=${named} is ${tool.title} ${version}; version ${tool.minMajor} or later is needed`,
      );
    }
    say(`using ${named} (${tool.command} ${version}) from ${tool.envVar}; not building`);
    return { binary: named, version, source: "environment" };
  }

  if (isExecutable(tool.cached)) return { binary: tool.cached, version: tool.release, source: "cache" };

  const fromPath = await onPath(tool, env);
  if (fromPath !== undefined) {
    say(`using ${fromPath.binary} (${tool.command} ${fromPath.version}) from PATH; not building`);
    return fromPath;
  }

  await runBuildScript(tool.script, `${tool.title} ${tool.release}`, { ...options, env });
  if (!isExecutable(tool.cached)) throw new Error(`${tool.script} succeeded but ${tool.cached} is missing`);
  return { binary: tool.cached, version: tool.release, source: "built" };
}
