/**
 * A local Kubernetes control plane: a real etcd and kube-apiserver on
 * 127.0.0.1, on free ports, with RBAC, static-token users and a kubeconfig
 * per user. No controllers, scheduler or nodes run: objects are stored and
 * served, but nothing acts on them (no Pods are created for a Deployment,
 * namespaces stay Terminating on delete).
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { generateServerCertificate } from "../shared/tls.js";
import { binariesPresent, type ControlPlaneBinaries, controlPlaneBinaries } from "./paths.js";
import { freePorts, get, ManagedProcess, type Tracked, trackForCleanup, waitFor } from "./process.js";

/** The operator's identity, as it would be in-cluster. */
const OPERATOR_NAMESPACE = "signalr-autoscaler-system";
const OPERATOR_SERVICE_ACCOUNT = "signalr-autoscaler";
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_SERVICE_ACCOUNT}`;
const OPERATOR_GROUPS: readonly string[] = [
  "system:serviceaccounts",
  `system:serviceaccounts:${OPERATOR_NAMESPACE}`,
  "system:authenticated",
];
const ADMIN_USER = "admin";
const ADMIN_GROUPS: readonly string[] = ["system:masters", "system:authenticated"];
const CLUSTER_NAME = "signalr-autoscaler-local";

export interface StartControlPlaneOptions {
  /** Binaries to run; default: the cached ones for controlplane/versions.env (see ensureControlPlaneBinaries). */
  binaries?: ControlPlaneBinaries;
  /** How long to wait for etcd and kube-apiserver to become ready. Default 120 s. */
  startTimeoutMs?: number;
  /** Extra kube-apiserver flags, appended last (later flags win). */
  apiServerArgs?: readonly string[];
  /** Parent of the temporary directory; default os.tmpdir(). */
  baseDir?: string;
  /** Keep the temporary directory (logs, etcd data) after stop(). Default: $SIGNALR_AUTOSCALER_KEEP_CONTROLPLANE_DIR is set. */
  keepDir?: boolean;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  readonly server: string;
  readonly kubeconfigAdmin: string;
  readonly kubeconfigOperator: string;
  readonly adminToken: string;
  readonly operatorToken: string;
  /** PEM of the CA that signs the serving certificate. */
  readonly caData: string;
  readonly caFile: string;
  /** http://127.0.0.1:<port> */
  readonly etcdEndpoint: string;
  /** Temporary directory with data, certificates, kubeconfigs and logs. */
  readonly dir: string;
  readonly logs: { readonly etcd: string; readonly kubeApiserver: string };
  readonly binaries: ControlPlaneBinaries;
  /** Stops both processes and removes the temporary directory. Idempotent. */
  stop(): Promise<void>;
  /** Stops kube-apiserver and starts it again on the same port with the same data. */
  restartApiServer(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Helpers

/** A kubeconfig with one cluster, one token user and the context joining them, as text. */
function kubeconfig(server: string, caPem: string, user: string, token: string): string {
  const context = `${user}@${CLUSTER_NAME}`;
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      { name: CLUSTER_NAME, server, caData: Buffer.from(caPem).toString("base64"), skipTLSVerify: false },
    ],
    users: [{ name: user, token }],
    contexts: [{ name: context, cluster: CLUSTER_NAME, user }],
    currentContext: context,
  });
  return config.exportConfig();
}

function csvQuote(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}

// ---------------------------------------------------------------------------

/**
 * Starts etcd and kube-apiserver on free loopback ports and waits until the
 * API server is ready. Ports are picked before the processes bind them, so a
 * start that loses a port to another process is retried.
 */
export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const attempts = 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (attempt >= attempts || !/address already in use/i.test(message)) throw err;
    }
  }
}

/** The files and secrets kube-apiserver is started with, all under the `pki` directory. */
interface ApiServerCredentials {
  adminToken: string;
  operatorToken: string;
  /** Static-token file (CSV: token, user, uid, groups). */
  tokenFile: string;
  /** Service-account signing key (PKCS#8 PEM) and its public key (SPKI PEM). */
  saKey: string;
  saPub: string;
  /** PEM of the CA that signs the serving certificate, and its file. */
  caData: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * Writes kube-apiserver's credentials to `pki`: new admin and operator tokens, a service-account
 * key pair (RSA 2048) and a serving certificate signed by a CA of its own, for the names clients use.
 */
async function writeCredentials(pki: string): Promise<ApiServerCredentials> {
  const adminToken = randomBytes(24).toString("hex");
  const operatorToken = randomBytes(24).toString("hex");
  const tokenFile = join(pki, "tokens.csv");
  await writeFile(
    tokenFile,
    [
      `${adminToken},${ADMIN_USER},${ADMIN_USER},${csvQuote(ADMIN_GROUPS.join(","))}`,
      `${operatorToken},${OPERATOR_USER},${OPERATOR_USER},${csvQuote(OPERATOR_GROUPS.join(","))}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const saKey = join(pki, "sa.key");
  const saPub = join(pki, "sa.pub");
  await writeFile(saKey, privateKey, { mode: 0o600 });
  await writeFile(saPub, publicKey);

  const tls = await generateServerCertificate({
    caName: `${CLUSTER_NAME}-ca`,
    serverName: "kube-apiserver",
    dnsNames: ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
    ipAddresses: ["127.0.0.1"],
    days: 365,
  });
  const caData = tls.caPem;
  const caFile = join(pki, "ca.crt");
  const certFile = join(pki, "apiserver.crt");
  const keyFile = join(pki, "apiserver.key");
  await writeFile(caFile, caData);
  await writeFile(certFile, tls.certPem);
  await writeFile(keyFile, tls.keyPem, { mode: 0o600 });
  return { adminToken, operatorToken, tokenFile, saKey, saPub, caData, caFile, certFile, keyFile };
}

/** Starts etcd with its data in `dir/etcd`, serving clients on `etcdEndpoint` (not yet waited for). */
function spawnEtcd(
  binaries: ControlPlaneBinaries,
  dir: string,
  etcdEndpoint: string,
  peerPort: number,
  logFile: string,
): ManagedProcess {
  const peer = `http://127.0.0.1:${peerPort}`;
  return new ManagedProcess(
    "etcd",
    binaries.etcd,
    [
      "--name=local",
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=${etcdEndpoint}`,
      `--advertise-client-urls=${etcdEndpoint}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=local=${peer}`,
      "--initial-cluster-state=new",
      "--unsafe-no-fsync",
      "--log-level=warn",
    ],
    logFile,
  );
}

/** kube-apiserver's flags: etcd, loopback on `securePort`, static tokens, RBAC, then `extra` (later win). */
function apiServerFlags(
  etcdEndpoint: string,
  securePort: number,
  creds: ApiServerCredentials,
  extra: readonly string[],
): string[] {
  return [
    `--etcd-servers=${etcdEndpoint}`,
    "--bind-address=127.0.0.1",
    "--advertise-address=127.0.0.1",
    `--secure-port=${securePort}`,
    `--tls-cert-file=${creds.certFile}`,
    `--tls-private-key-file=${creds.keyFile}`,
    `--token-auth-file=${creds.tokenFile}`,
    "--authorization-mode=RBAC",
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${creds.saPub}`,
    `--service-account-signing-key-file=${creds.saKey}`,
    "--service-cluster-ip-range=10.0.0.0/24",
    // No controller-manager runs: no token controller for ServiceAccount admission.
    "--disable-admission-plugins=ServiceAccount",
    // Loopback addresses are not valid Endpoints for the kubernetes Service.
    "--endpoint-reconciler-type=none",
    "--profiling=false",
    ...extra,
  ];
}

/** How to start kube-apiserver (again): binary, flags, log, where it serves and the admin's credentials. */
interface ApiServerLaunch {
  binaries: ControlPlaneBinaries;
  args: readonly string[];
  logFile: string;
  /** `https://127.0.0.1:<port>`. */
  server: string;
  creds: ApiServerCredentials;
  /** Told the process as soon as it is spawned (before it is ready), so a stop can end it. */
  spawned: (proc: ManagedProcess) => void;
}

/** Starts kube-apiserver and waits, until `until` (epoch ms), for `/readyz` and the default namespace. */
async function startApiServer(launch: ApiServerLaunch, until: number): Promise<void> {
  const { server, creds } = launch;
  const auth = { ca: creds.caData, token: creds.adminToken };
  const proc = new ManagedProcess(
    "kube-apiserver",
    launch.binaries.kubeApiserver,
    launch.args,
    launch.logFile,
  );
  launch.spawned(proc);
  await waitFor("kube-apiserver did not become ready", proc, until, async () => {
    const res = await get(`${server}/readyz`, auth);
    return res.status === 200 && res.body.trim() === "ok";
  });
  // The bootstrap controller creates the default namespaces shortly after readyz.
  await waitFor("kube-apiserver did not create the default namespace", proc, until, async () => {
    const res = await get(`${server}/api/v1/namespaces/default`, auth);
    return res.status === 200;
  });
}

/** Writes the admin's and the operator's kubeconfigs (mode 0600) to `dir`; returns their paths. */
async function writeKubeconfigs(
  dir: string,
  server: string,
  creds: ApiServerCredentials,
): Promise<{ kubeconfigAdmin: string; kubeconfigOperator: string }> {
  const kubeconfigAdmin = join(dir, "admin.kubeconfig");
  const kubeconfigOperator = join(dir, "operator.kubeconfig");
  await writeFile(kubeconfigAdmin, kubeconfig(server, creds.caData, ADMIN_USER, creds.adminToken), {
    mode: 0o600,
  });
  await writeFile(
    kubeconfigOperator,
    kubeconfig(server, creds.caData, OPERATOR_SERVICE_ACCOUNT, creds.operatorToken),
    { mode: 0o600 },
  );
  return { kubeconfigAdmin, kubeconfigOperator };
}

/** The binaries to run: `options.binaries`, else the cached ones. @throws Error when they are missing */
function presentBinaries(options: StartControlPlaneOptions): ControlPlaneBinaries {
  const binaries = options.binaries ?? controlPlaneBinaries();
  if (!binariesPresent(binaries)) {
    throw new Error(
      `control plane binaries missing in ${binaries.binDir}; run scripts/build-control-plane.sh ` +
        "or call ensureControlPlaneBinaries() first",
    );
  }
  return binaries;
}

async function startOnce(options: StartControlPlaneOptions): Promise<ControlPlane> {
  const binaries = presentBinaries(options);
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const keepDir = options.keepDir ?? (process.env["SIGNALR_AUTOSCALER_KEEP_CONTROLPLANE_DIR"] ?? "") !== "";

  const dir = await mkdtemp(join(options.baseDir ?? tmpdir(), "signalr-autoscaler-controlplane-"));
  const pki = join(dir, "pki");
  await mkdir(pki, { mode: 0o700 });
  const logs = { etcd: join(dir, "etcd.log"), kubeApiserver: join(dir, "kube-apiserver.log") };

  const procs: { etcd?: ManagedProcess; apiserver?: ManagedProcess } = {};
  const tracked: Tracked = trackForCleanup(dir, keepDir, () =>
    [procs.apiserver, procs.etcd].filter((p): p is ManagedProcess => p !== undefined),
  );

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await procs.apiserver?.stop();
    await procs.etcd?.stop();
    tracked.release();
    if (!keepDir) await rm(dir, { recursive: true, force: true });
  };

  try {
    const [etcdClientPort, etcdPeerPort, securePort] = (await freePorts(3)) as [number, number, number];
    const deadline = Date.now() + timeoutMs;
    const etcdEndpoint = `http://127.0.0.1:${etcdClientPort}`;
    const etcd = spawnEtcd(binaries, dir, etcdEndpoint, etcdPeerPort, logs.etcd);
    procs.etcd = etcd;
    tracked.recordPgids();
    const creds = await writeCredentials(pki); // meanwhile etcd starts
    await waitFor("etcd did not become healthy", etcd, deadline, async () => {
      const res = await get(`${etcdEndpoint}/health`);
      return res.status === 200 && /"health"\s*:\s*"true"/.test(res.body);
    });

    const server = `https://127.0.0.1:${securePort}`;
    const launch: ApiServerLaunch = {
      binaries,
      args: apiServerFlags(etcdEndpoint, securePort, creds, options.apiServerArgs ?? []),
      logFile: logs.kubeApiserver,
      server,
      creds,
      spawned: (proc) => {
        procs.apiserver = proc;
        tracked.recordPgids();
      },
    };
    await startApiServer(launch, deadline);
    const { kubeconfigAdmin, kubeconfigOperator } = await writeKubeconfigs(dir, server, creds);

    return {
      server,
      kubeconfigAdmin,
      kubeconfigOperator,
      adminToken: creds.adminToken,
      operatorToken: creds.operatorToken,
      caData: creds.caData,
      caFile: creds.caFile,
      etcdEndpoint,
      dir,
      logs,
      binaries,
      stop,
      async restartApiServer(): Promise<void> {
        if (stopped) throw new Error("control plane is stopped");
        await procs.apiserver?.stop();
        await startApiServer(launch, Date.now() + timeoutMs);
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
