/**
 * Each command's module is imported only when that command runs: the CLI started in a child
 * process, with a module hook that records every module resolved (ESM imports and CommonJS
 * requires alike), loads for `run` the operator's code and packages and none of the chart renderer,
 * the progress bars, the emulator's certificate maker or the other commands' code.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");

/** Records the URL of every module resolved in the process, written to $MODULES_OUT on exit. */
const HOOK = `
import { writeFileSync } from "node:fs";
import { registerHooks } from "node:module";
const urls = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    urls.add(result.url);
    return result;
  },
});
process.on("exit", () => writeFileSync(process.env.MODULES_OUT, [...urls].join("\\n")));
`;

/** Packages and source folders only the other commands use. */
const NOT_FOR_RUN = [
  /\/node_modules\/vega(-[a-z]+)?\//,
  /\/node_modules\/cli-progress\//,
  /\/node_modules\/selfsigned\//,
  /\/src\/(emulator|simulate|demo|chart|localcluster|preflight)\//,
  /\/src\/cli\/commands\/(size|recommend|check|simulate|demo|emulator)\.ts$/,
];

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "signalr-autoscaler-modules-"));
  await writeFile(join(dir, "hook.mjs"), HOOK);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI from source with `argv`: its exit code and the modules it resolved. */
async function modulesLoadedBy(
  name: string,
  argv: readonly string[],
): Promise<{ code: number; urls: string[] }> {
  const out = join(dir, `${name}.txt`);
  let code = 0;
  try {
    await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--import", join(dir, "hook.mjs"), "src/cli/main.ts", ...argv],
      { cwd: ROOT, env: { PATH: process.env["PATH"], MODULES_OUT: out }, timeout: 60_000 },
    );
  } catch (err) {
    code = (err as { code?: number }).code ?? -1;
  }
  return { code, urls: (await readFile(out, "utf8")).split("\n") };
}

describe("the CLI's commands are imported when they run", () => {
  it("run loads the operator and not the chart renderer, progress bars, certificate maker or other commands", async () => {
    // A usage error found after the imports, before contacting anything.
    const { code, urls } = await modulesLoadedBy("run", [
      "run",
      "--kubeconfig=/nonexistent/kubeconfig",
      "--arm-endpoint=https://127.0.0.1:1",
      "--azure-credential=static",
      "--lease-duration=0",
    ]);
    expect(code).toBe(2);
    expect(urls.some((u) => u.endsWith("/src/cli/commands/run.ts"))).toBe(true);
    expect(urls.some((u) => u.endsWith("/src/controller/operator.ts"))).toBe(true);
    expect(urls.some((u) => u.includes("/node_modules/@kubernetes/client-node/"))).toBe(true);
    expect(urls.filter((u) => NOT_FOR_RUN.some((re) => re.test(u)))).toEqual([]);
  }, 90_000);

  it("simulate loads the chart renderer and the progress bars, and not run", async () => {
    const { code, urls } = await modulesLoadedBy("simulate", ["simulate", "--help"]);
    expect(code).toBe(0);
    expect(urls.some((u) => u.includes("/node_modules/vega/"))).toBe(true);
    expect(urls.some((u) => u.includes("/node_modules/cli-progress/"))).toBe(true);
    expect(urls.some((u) => u.endsWith("/src/cli/commands/run.ts"))).toBe(false);
  }, 90_000);
});
