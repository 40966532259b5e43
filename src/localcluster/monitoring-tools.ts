/**
 * Finds the tools the monitoring and GitOps checks run, building them with
 * scripts/build-monitoring-tools.sh when they are not cached:
 *   - `promtool`, from the Prometheus Go module of prometheus/ (`check rules`, `test rules`);
 *   - `gitops-health`, from the Go module of gitops/: a CapacityPolicy's health as Argo CD's Lua
 *     runtime and Flux's kstatus read it.
 * The cache folder is keyed like the script's: the Prometheus version and the first 12 hex digits
 * of the SHA-256 of gitops/go.mod, go.sum and main.go, in that order.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type EnsureBinariesOptions, runBuildScript } from "./build.js";
import { cacheRoot, isExecutable, readPrometheusVersion, repoRoot } from "./paths.js";

export interface MonitoringTools {
  /** The cached bin/ directory. */
  readonly binDir: string;
  readonly promtool: string;
  readonly gitopsHealth: string;
}

/** Where scripts/build-monitoring-tools.sh puts the tools (present or not). */
export function monitoringTools(
  options: { env?: Readonly<Record<string, string | undefined>>; root?: string } = {},
): MonitoringTools {
  const root = options.root ?? repoRoot();
  const hash = createHash("sha256");
  for (const file of ["go.mod", "go.sum", "main.go"]) hash.update(readFileSync(join(root, "gitops", file)));
  const key = `${readPrometheusVersion(root).module}-${hash.digest("hex").slice(0, 12)}`;
  const binDir = join(cacheRoot(options.env), "monitoring-tools", key, "bin");
  return { binDir, promtool: join(binDir, "promtool"), gitopsHealth: join(binDir, "gitops-health") };
}

/**
 * The cached tools, building them first when one is missing (about 3 minutes on 2 cores once the
 * Prometheus server is built; 1 s warm). Throws when the build fails (with its last lines).
 */
export async function ensureMonitoringTools(options: EnsureBinariesOptions = {}): Promise<MonitoringTools> {
  const env = options.env ?? process.env;
  const tools = monitoringTools({ env });
  const present = () => isExecutable(tools.promtool) && isExecutable(tools.gitopsHealth);
  if (present()) return tools;
  const script = join(repoRoot(), "scripts", "build-monitoring-tools.sh");
  await runBuildScript(script, "promtool and gitops-health", { ...options, env });
  if (!present()) throw new Error(`${script} succeeded but ${tools.binDir} is incomplete`);
  return tools;
}
