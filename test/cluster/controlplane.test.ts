import { execFile } from "node:child_process";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { controlPlaneBinaries, OPERATOR_USER, startControlPlane } from "../../src/localcluster/index.js";

const execFileAsync = promisify(execFile);

const cp = inject("controlPlane");
let cacheDir = "";

beforeAll(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), "kubectl-cache-"));
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function kubectl(kubeconfig: string, ...args: string[]): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileAsync(
      cp.kubectl,
      [`--kubeconfig=${kubeconfig}`, `--cache-dir=${cacheDir}`, ...args],
      { env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: cacheDir } },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

async function ok(kubeconfig: string, ...args: string[]): Promise<string> {
  const run = await kubectl(kubeconfig, ...args);
  if (run.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}

const deployment = (name: string): string =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default" },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "registry.invalid/app:1" }] },
      },
    },
  });

async function apply(kubeconfig: string, manifest: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "manifest-"));
  try {
    const file = join(dir, "m.json");
    await writeFile(file, manifest);
    await ok(kubeconfig, "apply", "-f", file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("local control plane", () => {
  it("serves kubectl version with matching client and server versions", async () => {
    const out = JSON.parse(await ok(cp.kubeconfigAdmin, "version", "--output=json")) as {
      clientVersion: { gitVersion: string };
      serverVersion: { gitVersion: string };
    };
    const { versions } = controlPlaneBinaries();
    expect(out.clientVersion.gitVersion).toBe(versions.kubernetes);
    expect(out.serverVersion.gitVersion).toBe(versions.kubernetes);
  });

  it("lists the built-in namespaces", async () => {
    const names = (
      await ok(cp.kubeconfigAdmin, "get", "ns", "-o", "jsonpath={.items[*].metadata.name}")
    ).split(" ");
    expect(names).toEqual(expect.arrayContaining(["default", "kube-system", "kube-public"]));
  });

  it("scales a Deployment through the scale subresource", async () => {
    await apply(cp.kubeconfigAdmin, deployment("scale-me"));
    await ok(cp.kubeconfigAdmin, "scale", "deployment/scale-me", "--replicas=3");
    const replicas = await ok(
      cp.kubeconfigAdmin,
      "get",
      "deployment",
      "scale-me",
      "-o",
      "jsonpath={.spec.replicas}",
    );
    expect(replicas).toBe("3");
    const scale = JSON.parse(
      await ok(
        cp.kubeconfigAdmin,
        "get",
        "--raw",
        "/apis/apps/v1/namespaces/default/deployments/scale-me/scale",
      ),
    ) as { kind: string; spec: { replicas: number } };
    expect(scale).toMatchObject({ kind: "Scale", spec: { replicas: 3 } });
    await ok(cp.kubeconfigAdmin, "delete", "deployment", "scale-me", "--wait=false");
  });

  it("authenticates the operator token as its service account, without privileges by default", async () => {
    const who = JSON.parse(await ok(cp.kubeconfigOperator, "auth", "whoami", "-o", "json")) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    expect(who.status.userInfo.username).toBe(OPERATOR_USER);
    expect(who.status.userInfo.groups).toEqual(
      expect.arrayContaining(["system:serviceaccounts", "system:serviceaccounts:signalr-autoscaler-system"]),
    );

    const secrets = await kubectl(cp.kubeconfigOperator, "auth", "can-i", "list", "secrets");
    expect(secrets.code).not.toBe(0);
    expect(secrets.stdout.trim()).toBe("no");
    const denied = await kubectl(cp.kubeconfigOperator, "get", "secrets", "-n", "kube-system");
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/forbidden/i);

    const admin = await kubectl(cp.kubeconfigAdmin, "auth", "can-i", "list", "secrets", "--all-namespaces");
    expect(admin.stdout.trim()).toBe("yes");
  });

  it("honours RBAC granted to the operator", async () => {
    await ok(cp.kubeconfigAdmin, "create", "namespace", "rbac-check");
    await ok(
      cp.kubeconfigAdmin,
      "create",
      "role",
      "read-cm",
      "-n",
      "rbac-check",
      "--verb=get,list",
      "--resource=configmaps",
    );
    await ok(
      cp.kubeconfigAdmin,
      "create",
      "rolebinding",
      "read-cm",
      "-n",
      "rbac-check",
      "--role=read-cm",
      `--user=${OPERATOR_USER}`,
    );
    const allowed = await kubectl(
      cp.kubeconfigOperator,
      "auth",
      "can-i",
      "list",
      "configmaps",
      "-n",
      "rbac-check",
    );
    expect(allowed.stdout.trim()).toBe("yes");
    const elsewhere = await kubectl(
      cp.kubeconfigOperator,
      "auth",
      "can-i",
      "list",
      "configmaps",
      "-n",
      "default",
    );
    expect(elsewhere.stdout.trim()).toBe("no");
  });
});

describe("a dedicated control plane", () => {
  it("keeps its data across restartApiServer() on the same address", async () => {
    const started = Date.now();
    const own = await startControlPlane();
    try {
      console.log(`dedicated control plane started in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      await apply(own.kubeconfigAdmin, deployment("survivor"));
      await ok(own.kubeconfigAdmin, "scale", "deployment/survivor", "--replicas=2");

      const before = own.server;
      const restarted = Date.now();
      await own.restartApiServer();
      console.log(`kube-apiserver restarted in ${((Date.now() - restarted) / 1000).toFixed(1)}s`);
      expect(own.server).toBe(before);

      const replicas = await ok(
        own.kubeconfigAdmin,
        "get",
        "deployment",
        "survivor",
        "-o",
        "jsonpath={.spec.replicas}",
      );
      expect(replicas).toBe("2");
      await ok(own.kubeconfigAdmin, "scale", "deployment/survivor", "--replicas=4");
      expect(
        await ok(own.kubeconfigAdmin, "get", "deployment", "survivor", "-o", "jsonpath={.spec.replicas}"),
      ).toBe("4");
    } finally {
      await own.stop();
    }
    // stop() is idempotent and removes everything.
    await own.stop();
    await expect(access(own.dir)).rejects.toThrow();
  });
});
