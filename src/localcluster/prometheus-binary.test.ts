/**
 * Which prometheus binary is used, by ensurePrometheusBinary() and by scripts/build-prometheus.sh
 * alike, with stand-in binaries that only answer --version. No case here builds.
 */
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cachedPrometheusBinary, prometheusBuildScript, readPrometheusVersion } from "./paths.js";
import { ensurePrometheusBinary, prometheusVersionOf } from "./prometheus-binary.js";

const execFileAsync = promisify(execFile);

let dir = "";
let cache = "";
let pathDir = "";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "prometheus-binary-"));
  cache = join(dir, "cache");
  pathDir = join(dir, "path");
  await mkdir(pathDir, { recursive: true });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** An executable at `path` that prints `line` on --version, as prometheus does. */
async function fake(path: string, line: string): Promise<string> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, `#!/bin/sh\necho '${line}'\n`);
  await chmod(path, 0o755);
  return path;
}

const v = (version: string) => `prometheus, version ${version} (branch: HEAD, revision: 0123abc)`;

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: `${pathDir}:/usr/bin:/bin`, HOME: dir, SIGNALR_AUTOSCALER_CACHE: cache, ...extra };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function script(args: string[], environment: NodeJS.ProcessEnv): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync("bash", [prometheusBuildScript(), ...args], {
      env: environment,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe("prometheusVersionOf", () => {
  it("reads the release from --version", async () => {
    expect(await prometheusVersionOf(await fake(join(dir, "p"), v("2.53.1")))).toBe("2.53.1");
  });

  it("throws when there is no version to read", async () => {
    await expect(prometheusVersionOf(await fake(join(dir, "p"), "hello"))).rejects.toThrow(
      /reports no version/,
    );
  });
});

describe("ensurePrometheusBinary and build-prometheus.sh", () => {
  it("take $SIGNALR_AUTOSCALER_PROMETHEUS first and say so", async () => {
    const named = await fake(join(dir, "named", "prometheus"), v("2.53.1"));
    await fake(cachedPrometheusBinary({ env: env() }), v("3.16.0"));
    const lines: string[] = [];
    const found = await ensurePrometheusBinary({
      env: env({ SIGNALR_AUTOSCALER_PROMETHEUS: named }),
      onProgress: (l) => lines.push(l),
    });
    expect(found).toEqual({ binary: named, version: "2.53.1", source: "environment" });
    expect(lines).toEqual([
      `using ${named} (prometheus 2.53.1) from SIGNALR_AUTOSCALER_PROMETHEUS; not building`,
    ]);

    const run = await script([], env({ SIGNALR_AUTOSCALER_PROMETHEUS: named }));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      `using ${named} (prometheus 2.53.1) from SIGNALR_AUTOSCALER_PROMETHEUS; not building`,
    );
    expect((await script(["--print-binary"], env({ SIGNALR_AUTOSCALER_PROMETHEUS: named }))).stdout).toBe(
      `${named}\n`,
    );
  });

  it("refuse a $SIGNALR_AUTOSCALER_PROMETHEUS older than 2 or missing", async () => {
    const old = await fake(join(dir, "old", "prometheus"), v("1.8.2"));
    await expect(
      ensurePrometheusBinary({ env: env({ SIGNALR_AUTOSCALER_PROMETHEUS: old }) }),
    ).rejects.toThrow(/is Prometheus 1\.8\.2; version 2 or later/);
    const run = await script(["--print-binary"], env({ SIGNALR_AUTOSCALER_PROMETHEUS: old }));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("does not report a Prometheus version 2 or later");

    const missing = join(dir, "missing");
    await expect(
      ensurePrometheusBinary({ env: env({ SIGNALR_AUTOSCALER_PROMETHEUS: missing }) }),
    ).rejects.toThrow(/not an executable file/);
    expect((await script([], env({ SIGNALR_AUTOSCALER_PROMETHEUS: missing }))).stderr).toContain(
      "is not an executable file",
    );
  });

  it("prefer the cached build to one on PATH", async () => {
    const cached = await fake(cachedPrometheusBinary({ env: env() }), v("3.16.0"));
    await fake(join(pathDir, "prometheus"), v("3.1.0"));
    const lines: string[] = [];
    expect(await ensurePrometheusBinary({ env: env(), onProgress: (l) => lines.push(l) })).toEqual({
      binary: cached,
      version: readPrometheusVersion().release,
      source: "cache",
    });
    expect(lines).toEqual([]);
    expect((await script(["--print-binary"], env())).stdout).toBe(`${cached}\n`);
    expect((await script([], env())).stdout).toContain(`up to date: ${cached}`);
  });

  it("use a prometheus 2 or later on PATH when nothing is cached, and say so", async () => {
    const onPath = await fake(join(pathDir, "prometheus"), v("3.1.0"));
    const lines: string[] = [];
    expect(await ensurePrometheusBinary({ env: env(), onProgress: (l) => lines.push(l) })).toEqual({
      binary: onPath,
      version: "3.1.0",
      source: "path",
    });
    expect(lines).toEqual([`using ${onPath} (prometheus 3.1.0) from PATH; not building`]);
    expect((await script([], env())).stdout).toContain(
      `using ${onPath} (prometheus 3.1.0) from PATH; not building`,
    );
  });

  it("pass over a prometheus 1.x on PATH (the script then has none to use without building)", async () => {
    await fake(join(pathDir, "prometheus"), v("1.8.2"));
    const run = await script(["--print-binary"], env());
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
  });

  it("print the cache directory keyed by the pinned version", async () => {
    expect((await script(["--print-dir"], env())).stdout).toBe(
      `${join(cache, "prometheus", readPrometheusVersion().module, "bin")}\n`,
    );
  });
});
