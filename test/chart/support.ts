/**
 * Shared pieces of the Helm chart's tests (not a test file): the real Helm CLI with a private
 * home, the chart's paths, and the rendered manifests as objects.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { parseAllDocuments } from "yaml";
import { type Exec, exec, ROOT } from "../production/support.js";

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, checked field by field by the tests
export type Doc = Record<string, any>;

export const CHART = join(ROOT, "charts", "signalr-autoscaler");
/** The values that render the objects of deploy/ and of deploy/tenancy/. */
export const DEPLOY_VALUES = join(CHART, "ci", "deploy-values.yaml");
export const TENANCY_VALUES = join(CHART, "ci", "tenancy-values.yaml");

/**
 * Runs the real helm with `args` and a throw-away HELM_CACHE_HOME, HELM_CONFIG_HOME and
 * HELM_DATA_HOME (nothing read from or written to the user's); never throws for a non-zero exit.
 */
export async function helm(args: readonly string[], timeoutMs = 60_000): Promise<Exec> {
  const home = await mkdtemp(join(tmpdir(), "helm-home-"));
  try {
    return await exec(inject("helmBinary"), args, {
      cwd: ROOT,
      env: {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        HOME: home,
        HELM_CACHE_HOME: join(home, "cache"),
        HELM_CONFIG_HOME: join(home, "config"),
        HELM_DATA_HOME: join(home, "data"),
      },
      timeoutMs,
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** The objects of a multi-document YAML stream, without empty documents. */
export function documents(text: string): Doc[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);
}

/** `helm template` of the chart as release `release` in `namespace`; throws with stderr on failure. */
export async function template(
  args: readonly string[] = [],
  release = "signalr-autoscaler",
  namespace = "signalr-autoscaler-system",
): Promise<Doc[]> {
  const r = await helm(["template", release, CHART, "--namespace", namespace, ...args]);
  if (r.code !== 0) throw new Error(`helm template ${args.join(" ")} failed:\n${r.stderr}`);
  return documents(r.stdout);
}

/** "Kind/namespace/name" of an object. */
export function key(doc: Doc): string {
  return `${doc["kind"]}/${doc["metadata"]?.namespace ?? ""}/${doc["metadata"]?.name}`;
}
