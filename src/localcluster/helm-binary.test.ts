/**
 * Which helm binary is used, by ensureHelmBinary() and by scripts/build-helm.sh alike, with
 * stand-in binaries that only answer `version --short`. No case here builds.
 */
import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ensureHelmBinary } from "./helm-binary.js";
import { cachedHelmBinary, helmBuildScript, readHelmVersion } from "./paths.js";

const run = promisify(execFile);
let dir = "";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "helm-binary-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** An executable at `path` that prints `line`, as `helm version --short` does. */
async function standIn(path: string, line: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `#!/bin/sh\necho '${line}'\n`);
  await chmod(path, 0o755);
  return path;
}

const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: `${join(dir, "path")}:/usr/bin:/bin`,
  HOME: dir,
  SIGNALR_AUTOSCALER_CACHE: join(dir, "cache"),
  ...extra,
});

it("takes $SIGNALR_AUTOSCALER_HELM first, then the cache, then PATH, as build-helm.sh does", async () => {
  const named = await standIn(join(dir, "named", "helm"), "v3.19.2+g1234567");
  const onPath = await standIn(join(dir, "path", "helm"), "v3.20.0");
  const lines: string[] = [];
  expect(
    await ensureHelmBinary({
      env: env({ SIGNALR_AUTOSCALER_HELM: named }),
      onProgress: (l) => lines.push(l),
    }),
  ).toEqual({ binary: named, version: "3.19.2", source: "environment" });
  expect(lines).toEqual([`using ${named} (helm 3.19.2) from SIGNALR_AUTOSCALER_HELM; not building`]);

  expect(await ensureHelmBinary({ env: env() })).toEqual({
    binary: onPath,
    version: "3.20.0",
    source: "path",
  });
  const script = await run("bash", [helmBuildScript()], { env: env() });
  expect(script.stdout).toContain(`using ${onPath} (helm v3.20.0) from PATH; not building`);

  const cached = await standIn(cachedHelmBinary({ env: env() }), readHelmVersion());
  expect(await ensureHelmBinary({ env: env() })).toEqual({
    binary: cached,
    version: readHelmVersion().slice(1),
    source: "cache",
  });
  expect((await run("bash", [helmBuildScript(), "--print-binary"], { env: env() })).stdout).toBe(
    `${cached}\n`,
  );
});

it("refuses a $SIGNALR_AUTOSCALER_HELM older than 3 or without a version", async () => {
  const old = await standIn(join(dir, "old", "helm"), "v2.17.0");
  await expect(ensureHelmBinary({ env: env({ SIGNALR_AUTOSCALER_HELM: old }) })).rejects.toThrow(
    /is Helm 2\.17\.0; version 3 or later is needed/,
  );
  const silent = await standIn(join(dir, "silent", "helm"), "");
  const refused = await run("bash", [helmBuildScript()], {
    env: env({ SIGNALR_AUTOSCALER_HELM: silent }),
  }).then(
    () => "",
    (err: { stderr: string }) => err.stderr,
  );
  expect(refused).toContain(`SIGNALR_AUTOSCALER_HELM=${silent} does not report a Helm version 3 or later`);
});
