/**
 * The release version, from the `version` of the project's package.json — its single source (the
 * CLI's `--version`, the Azure User-Agent, the image's label and the Helm chart all take it from
 * there). The file is found by walking up from this module: `src/shared/` under tsx, `dist/shared/`
 * when compiled, the folder of `signalr-autoscaler.mjs` (or its parent) in the bundle and the image.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "signalr-autoscaler";

/**
 * The version of the nearest package.json named `signalr-autoscaler` at or above `fromDir`, e.g.
 * `"0.1.0"`. Throws when there is none (a bundle copied without its package.json).
 */
export function readPackageVersion(fromDir: string): string {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    let text: string | undefined;
    try {
      text = readFileSync(join(dir, "package.json"), "utf8");
    } catch {
      // Not in this folder: look in the parent.
    }
    if (text !== undefined) {
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === "string") return pkg.version;
    }
    if (dirname(dir) === dir) throw new Error(`no package.json of ${PACKAGE_NAME} at or above ${fromDir}`);
  }
}

/** This release's version, e.g. `"0.1.0"`. */
export const VERSION: string = readPackageVersion(dirname(fileURLToPath(import.meta.url)));
