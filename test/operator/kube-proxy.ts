/**
 * A loopback HTTPS proxy in front of the test kube-apiserver that can fail requests: every request
 * is forwarded as it came (watches stream through); `failNext` makes the next request that matches
 * answer an HTTP error with a Kubernetes `Status` body instead, without reaching the API server;
 * `hang` holds every matching request unanswered (not forwarded) until `release`. Clients reach it through a kubeconfig of its own (its CA, the admin token). Not a test file.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { generateServerCertificate } from "../../src/shared/tls.js";

/** Which request to fail, and how. */
export interface ProxyFault {
  method: string;
  /** Matched against the URL path (no query). */
  path: RegExp;
  status: number;
  /** Called when the fault fires. */
  onFire?: () => void;
}

/** Which requests to hold unanswered. */
export interface ProxyHang {
  method: string;
  /** Matched against the URL path (no query). */
  path: RegExp;
}

/** A request the proxy held: when it came and, once the client gave up, how long it waited. */
export interface HeldRequest {
  method: string;
  path: string;
  /** `performance.now()` when it arrived, ms. */
  at: number;
  /** How long the client waited before closing it, ms (undefined while it waits). */
  waitedMs?: number;
}

export interface KubeProxy {
  /** A kubeconfig file that talks to the API server through the proxy. */
  kubeconfig: string;
  /** Fails the next matching request (one at a time; replaces an armed one). */
  failNext(fault: ProxyFault): void;
  /** Requests failed so far: method and path. */
  readonly failed: { method: string; path: string }[];
  /** Holds every matching request, never answering nor forwarding it, until `release`. */
  hang(rule: ProxyHang): void;
  /** Forwards requests again (those held so far stay unanswered until their clients give up). */
  release(): void;
  /** Requests held so far, in order. */
  readonly held: HeldRequest[];
  close(): Promise<void>;
}

/** Starts a proxy to `upstream` (https://127.0.0.1:port, trusted through `upstreamCa`). */
export async function startKubeProxy(options: {
  upstream: string;
  upstreamCa: string;
  token: string;
  dir: string;
}): Promise<KubeProxy> {
  const tls = await generateServerCertificate({
    caName: "kube-proxy-test-ca",
    serverName: "kube-proxy",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
  });
  const upstream = new URL(options.upstream);
  const agent = new https.Agent({ ca: options.upstreamCa, keepAlive: true });
  let armed: ProxyFault | undefined;
  const failed: { method: string; path: string }[] = [];
  let hanging: ProxyHang | undefined;
  const held: HeldRequest[] = [];
  const server = https.createServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const path = (req.url ?? "/").split("?")[0] as string;
    if (hanging && req.method === hanging.method && hanging.path.test(path)) {
      const entry: HeldRequest = { method: req.method, path, at: performance.now() };
      held.push(entry);
      req.resume();
      res.on("close", () => {
        entry.waitedMs = performance.now() - entry.at;
      });
      return;
    }
    const fault = armed;
    if (fault && req.method === fault.method && fault.path.test(path)) {
      armed = undefined;
      failed.push({ method: req.method, path });
      req.resume();
      const body = JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: "the server is currently unable to handle the request",
        reason: "ServiceUnavailable",
        code: fault.status,
      });
      res.writeHead(fault.status, { "content-type": "application/json" }).end(body);
      fault.onFire?.();
      return;
    }
    const out = https.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        agent,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    res.on("close", () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = join(options.dir, `proxy-${randomBytes(3).toString("hex")}.kubeconfig`);
  const ca = Buffer.from(tls.caPem).toString("base64");
  await writeFile(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster: { server: "https://127.0.0.1:${port}", certificate-authority-data: ${ca} }
users:
- name: admin
  user: { token: "${options.token}" }
contexts:
- name: proxy
  context: { cluster: proxy, user: admin }
current-context: proxy
`,
  );
  return {
    kubeconfig,
    failed,
    failNext(fault) {
      armed = fault;
    },
    held,
    hang(rule) {
      hanging = rule;
    },
    release() {
      hanging = undefined;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
