import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  cachedPrometheusBinary,
  cacheRoot,
  controlPlaneBinaries,
  parsePrometheusVersionsEnv,
  parseVersionsEnv,
  readPrometheusVersion,
  readVersions,
  repoRoot,
} from "./paths.js";

describe("cacheRoot", () => {
  const cases: Array<[string, Record<string, string | undefined>, string]> = [
    ["explicit cache wins", { SIGNALR_AUTOSCALER_CACHE: "/c", XDG_CACHE_HOME: "/x", HOME: "/h" }, "/c"],
    ["XDG_CACHE_HOME next", { XDG_CACHE_HOME: "/x", HOME: "/h" }, "/x/signalr-autoscaler"],
    ["then HOME/.cache", { HOME: "/h" }, "/h/.cache/signalr-autoscaler"],
    [
      "empty counts as unset",
      { SIGNALR_AUTOSCALER_CACHE: "", XDG_CACHE_HOME: "", HOME: "/h" },
      "/h/.cache/signalr-autoscaler",
    ],
  ];
  it.each(cases)("%s", (_name, env, expected) => {
    expect(cacheRoot(env)).toBe(expected);
  });
});

describe("controlPlaneBinaries", () => {
  it("keys the directory by both versions", () => {
    const b = controlPlaneBinaries({
      env: { HOME: "/h" },
      versions: { kubernetes: "v1.36.3", etcd: "v3.6.8" },
    });
    expect(b.binDir).toBe("/h/.cache/signalr-autoscaler/controlplane/v1.36.3-v3.6.8/bin");
    expect(b.kubeApiserver).toBe(`${b.binDir}/kube-apiserver`);
    expect(b.etcd).toBe(`${b.binDir}/etcd`);
    expect(b.kubectl).toBe(`${b.binDir}/kubectl`);
  });
});

describe("versions", () => {
  it("parses versions.env and ignores comments", () => {
    expect(parseVersionsEnv("# c\nKUBERNETES_VERSION=v1.2.3\n\nETCD_VERSION=v3.4.5\n")).toEqual({
      kubernetes: "v1.2.3",
      etcd: "v3.4.5",
    });
  });

  it("rejects missing or malformed versions", () => {
    expect(() => parseVersionsEnv("ETCD_VERSION=v3.4.5\n")).toThrow(/KUBERNETES_VERSION/);
    expect(() => parseVersionsEnv("KUBERNETES_VERSION=v1.2.3\nETCD_VERSION=3.4\n")).toThrow(/ETCD_VERSION/);
  });

  it("matches what controlplane/go.mod pins", () => {
    const versions = readVersions();
    const goMod = readFileSync(join(repoRoot(), "controlplane", "go.mod"), "utf8");
    expect(goMod).toMatch(
      new RegExp(`^\\s*k8s\\.io/kubernetes ${versions.kubernetes.replaceAll(".", "\\.")}$`, "m"),
    );
    expect(goMod).toMatch(
      new RegExp(`^\\s*go\\.etcd\\.io/etcd/server/v3 ${versions.etcd.replaceAll(".", "\\.")}$`, "m"),
    );
    const staging = versions.kubernetes.replace(/^v1\./, "v0.");
    const replaced = [...goMod.matchAll(/^\s*(k8s\.io\/[\w-]+) => \1 (v[\d.]+)$/gm)];
    expect(replaced.length).toBeGreaterThan(20);
    for (const [, module, version] of replaced) expect(`${module} ${version}`).toBe(`${module} ${staging}`);
  });
});

describe("Prometheus version and cache path", () => {
  it.each([
    ["v0.316.0", "3.16.0"],
    ["v0.300.1", "3.0.1"],
    ["v0.405.12", "4.5.12"],
  ])("reads module version %s as release %s", (module, release) => {
    expect(parsePrometheusVersionsEnv(`# c\nPROMETHEUS_VERSION=${module}\n`)).toEqual({ module, release });
  });

  it("rejects missing or malformed versions", () => {
    expect(() => parsePrometheusVersionsEnv("")).toThrow(/PROMETHEUS_VERSION/);
    expect(() => parsePrometheusVersionsEnv("PROMETHEUS_VERSION=v3.16.0\n")).toThrow(/v0\.3YY\.Z/);
    expect(() => parsePrometheusVersionsEnv("PROMETHEUS_VERSION=v0.56.0\n")).toThrow(/PROMETHEUS_VERSION/);
  });

  it("keys the cached binary by the module version", () => {
    expect(
      cachedPrometheusBinary({ env: { HOME: "/h" }, version: { module: "v0.316.0", release: "3.16.0" } }),
    ).toBe("/h/.cache/signalr-autoscaler/prometheus/v0.316.0/bin/prometheus");
  });

  it("matches what prometheus/go.mod pins", () => {
    const { module } = readPrometheusVersion();
    const goMod = readFileSync(join(repoRoot(), "prometheus", "go.mod"), "utf8");
    expect(goMod).toMatch(
      new RegExp(`^(require )?\\s*github\\.com/prometheus/prometheus ${module.replaceAll(".", "\\.")}$`, "m"),
    );
  });
});
