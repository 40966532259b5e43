/**
 * Where the local control plane's and Prometheus's binaries live.
 *
 * The rules match scripts/build-control-plane.sh and scripts/build-prometheus.sh:
 *   ${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}/controlplane/<k8s>-<etcd>/bin/
 *   ${SIGNALR_AUTOSCALER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/signalr-autoscaler}/prometheus/<version>/bin/prometheus
 * and the versions come from controlplane/versions.env and prometheus/versions.env, the one place
 * each is written.
 */
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export interface ControlPlaneVersions {
  /** e.g. "v1.36.3" */
  readonly kubernetes: string;
  /** e.g. "v3.6.8" */
  readonly etcd: string;
}

export interface ControlPlaneBinaries {
  readonly versions: ControlPlaneVersions;
  /** The version-keyed directory, parent of `bin/`. */
  readonly dir: string;
  readonly binDir: string;
  readonly kubeApiserver: string;
  readonly etcd: string;
  readonly kubectl: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The repository root (this file is src/localcluster/paths.ts, or dist/localcluster/paths.js). */
export function repoRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
}

function versionsFile(root: string = repoRoot()): string {
  return join(root, "controlplane", "versions.env");
}

export function buildScript(root: string = repoRoot()): string {
  return join(root, "scripts", "build-control-plane.sh");
}

/** The KEY=VALUE lines of a versions.env file. */
function keyValues(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) values.set(m[1], m[2].trim());
  }
  return values;
}

/** Parses controlplane/versions.env. */
export function parseVersionsEnv(text: string): ControlPlaneVersions {
  const values = keyValues(text);
  const kubernetes = values.get("KUBERNETES_VERSION") ?? "";
  const etcd = values.get("ETCD_VERSION") ?? "";
  if (!/^v1\.\d+\.\d+$/.test(kubernetes)) {
    throw new Error(`versions.env: bad or missing KUBERNETES_VERSION '${kubernetes}'`);
  }
  if (!/^v3\.\d+\.\d+$/.test(etcd)) {
    throw new Error(`versions.env: bad or missing ETCD_VERSION '${etcd}'`);
  }
  return { kubernetes, etcd };
}

export function readVersions(root: string = repoRoot()): ControlPlaneVersions {
  return parseVersionsEnv(readFileSync(versionsFile(root), "utf8"));
}

/** Like the shell's `${VAR:-default}`: empty counts as unset. */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** The project's cache root, outside the checkout. */
export function cacheRoot(env: Env = process.env): string {
  const explicit = nonEmpty(env["SIGNALR_AUTOSCALER_CACHE"]);
  if (explicit !== undefined) return resolve(explicit);
  const xdg = nonEmpty(env["XDG_CACHE_HOME"]) ?? join(nonEmpty(env["HOME"]) ?? homedir(), ".cache");
  return resolve(xdg, "signalr-autoscaler");
}

export function controlPlaneBinaries(
  options: { env?: Env; versions?: ControlPlaneVersions; root?: string } = {},
): ControlPlaneBinaries {
  const versions = options.versions ?? readVersions(options.root);
  const dir = join(cacheRoot(options.env), "controlplane", `${versions.kubernetes}-${versions.etcd}`);
  const binDir = join(dir, "bin");
  return {
    versions,
    dir,
    binDir,
    kubeApiserver: join(binDir, "kube-apiserver"),
    etcd: join(binDir, "etcd"),
    kubectl: join(binDir, "kubectl"),
  };
}

/** True when `path` is a file this process may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** True when all three binaries are in place. */
export function binariesPresent(binaries: ControlPlaneBinaries): boolean {
  return [binaries.kubeApiserver, binaries.etcd, binaries.kubectl].every(isExecutable);
}

// ---------------------------------------------------------------------------
// Prometheus

export interface PrometheusVersion {
  /** The Go module version of github.com/prometheus/prometheus, e.g. "v0.316.0": the cache key. */
  readonly module: string;
  /** The Prometheus release it is, e.g. "3.16.0" (what `prometheus --version` reports). */
  readonly release: string;
}

export function prometheusBuildScript(root: string = repoRoot()): string {
  return join(root, "scripts", "build-prometheus.sh");
}

/**
 * Parses prometheus/versions.env. Prometheus 3.Y.Z is tagged v0.3YY.Z in Go (v0.316.0 is
 * 3.16.0); throws when PROMETHEUS_VERSION is missing or not of that form.
 */
export function parsePrometheusVersionsEnv(text: string): PrometheusVersion {
  const module = keyValues(text).get("PROMETHEUS_VERSION") ?? "";
  const m = /^v0\.([1-9])(\d\d)\.(\d+)$/.exec(module);
  if (m?.[1] === undefined || m[2] === undefined || m[3] === undefined) {
    throw new Error(
      `prometheus/versions.env: bad or missing PROMETHEUS_VERSION '${module}' (expected v0.3YY.Z)`,
    );
  }
  return { module, release: `${m[1]}.${Number(m[2])}.${m[3]}` };
}

export function readPrometheusVersion(root: string = repoRoot()): PrometheusVersion {
  return parsePrometheusVersionsEnv(readFileSync(join(root, "prometheus", "versions.env"), "utf8"));
}

/** Where scripts/build-prometheus.sh puts the binary it builds (present or not). */
export function cachedPrometheusBinary(
  options: { env?: Env; version?: PrometheusVersion; root?: string } = {},
): string {
  const version = options.version ?? readPrometheusVersion(options.root);
  return join(cacheRoot(options.env), "prometheus", version.module, "bin", "prometheus");
}

// ---------------------------------------------------------------------------
// Helm

export function helmBuildScript(root: string = repoRoot()): string {
  return join(root, "scripts", "build-helm.sh");
}

/**
 * Parses helm/versions.env: HELM_VERSION, the Go module version of helm.sh/helm/v3, which is the
 * Helm release (e.g. "v3.22.0"). Throws when it is missing or not v3.Y.Z.
 */
export function parseHelmVersionsEnv(text: string): string {
  const version = keyValues(text).get("HELM_VERSION") ?? "";
  if (!/^v3\.\d+\.\d+$/.test(version)) {
    throw new Error(`helm/versions.env: bad or missing HELM_VERSION '${version}' (expected v3.Y.Z)`);
  }
  return version;
}

export function readHelmVersion(root: string = repoRoot()): string {
  return parseHelmVersionsEnv(readFileSync(join(root, "helm", "versions.env"), "utf8"));
}

/** Where scripts/build-helm.sh puts the binary it builds (present or not). */
export function cachedHelmBinary(options: { env?: Env; version?: string; root?: string } = {}): string {
  const version = options.version ?? readHelmVersion(options.root);
  return join(cacheRoot(options.env), "helm", version, "bin", "helm");
}
