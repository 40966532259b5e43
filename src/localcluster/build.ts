/**
 * Makes sure the control plane binaries exist, building them with
 * scripts/build-control-plane.sh when they do not; and runs such build scripts.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import {
  binariesPresent,
  buildScript,
  type ControlPlaneBinaries,
  controlPlaneBinaries,
  repoRoot,
} from "./paths.js";

export interface EnsureBinariesOptions {
  /** Called with each line the build prints (stdout and stderr). */
  onProgress?: (line: string) => void;
  /** Environment for path resolution and the build; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Aborts a running build. */
  signal?: AbortSignal;
}

const TAIL_LINES = 40;

/**
 * Runs `bash script` from the repository root, passing each line it prints to `onProgress`.
 * Throws, with its last 40 lines, when it exits non-zero; `what` names the build in that message.
 */
export async function runBuildScript(
  script: string,
  what: string,
  options: EnsureBinariesOptions = {},
): Promise<void> {
  const onProgress = options.onProgress ?? (() => {});
  const tail: string[] = [];
  const record = (line: string): void => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    onProgress(line);
  };

  const code = await new Promise<number | string>((resolvePromise, reject) => {
    const child = spawn("bash", [script], {
      cwd: repoRoot(),
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
    createInterface({ input: child.stdout }).on("line", record);
    createInterface({ input: child.stderr }).on("line", record);
    child.on("error", reject);
    child.on("close", (exitCode, signal) => resolvePromise(exitCode ?? signal ?? "unknown"));
  });

  if (code !== 0) {
    throw new Error(`building ${what} failed (${script} exited with ${code}):\n${tail.join("\n")}`);
  }
}

export async function ensureControlPlaneBinaries(
  options: EnsureBinariesOptions = {},
): Promise<ControlPlaneBinaries> {
  const env = options.env ?? process.env;
  const binaries = controlPlaneBinaries({ env });
  if (binariesPresent(binaries)) return binaries;

  const script = buildScript();
  await runBuildScript(script, "the control plane", { ...options, env });
  if (!binariesPresent(binaries)) {
    throw new Error(`${script} succeeded but ${binaries.binDir} is incomplete`);
  }
  return binaries;
}
