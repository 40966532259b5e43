/**
 * A Microsoft Entra ID stand-in on loopback for token tests (not a test file): HTTPS with a CA of
 * its own, answering the OpenID discovery document and the token endpoint of any tenant, the way
 * `@azure/identity`'s ClientSecretCredential asks them. Its mode decides the answer:
 *
 * - `answer`: a bearer token (expires in an hour);
 * - `refuse`: 401 `invalid_client` (a wrong secret);
 * - `hang`: the TCP connection is accepted and nothing is ever sent (no TLS handshake either).
 *
 * Connections held by `hang` are destroyed by `close()`.
 */
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { createServer as createNetServer, type Socket } from "node:net";
import { generateServerCertificate } from "../../src/shared/tls.js";

export type IdentityMode = "answer" | "refuse" | "hang";

export interface IdentityEndpoint {
  /** `https://127.0.0.1:<port>`: the credential's `authorityHost`. */
  url: string;
  /** The CA to trust (`tlsOptions.ca` of the credential). */
  caPem: string;
  mode: IdentityMode;
  /** Token requests answered or refused (POSTs to the token endpoint). */
  tokenRequests: number;
  /** Connections accepted while hanging. */
  hungConnections: number;
  close(): Promise<void>;
}

export async function startIdentityEndpoint(mode: IdentityMode = "answer"): Promise<IdentityEndpoint> {
  const tls = await generateServerCertificate({
    caName: "identity-test-ca",
    serverName: "127.0.0.1",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
  });
  const held = new Set<Socket>();
  const https = createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, (req, res) => {
    const url = new URL(req.url ?? "/", endpoint.url);
    const tenant = url.pathname.split("/")[1] ?? "common";
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    req.resume();
    if (url.pathname.endsWith("/.well-known/openid-configuration")) {
      const base = `${endpoint.url}/${tenant}`;
      json(200, {
        token_endpoint: `${base}/oauth2/v2.0/token`,
        authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
        end_session_endpoint: `${base}/oauth2/v2.0/logout`,
        issuer: `${base}/v2.0`,
        jwks_uri: `${base}/discovery/v2.0/keys`,
      });
      return;
    }
    if (req.method === "POST" && url.pathname.endsWith("/oauth2/v2.0/token")) {
      endpoint.tokenRequests++;
      if (endpoint.mode === "refuse") {
        json(401, {
          error: "invalid_client",
          error_description: "AADSTS7000215: Invalid client secret provided.",
          error_codes: [7000215],
        });
        return;
      }
      json(200, { token_type: "Bearer", expires_in: 3600, ext_expires_in: 3600, access_token: "test-token" });
      return;
    }
    json(404, { error: "not_found" });
  });
  const tcp = createNetServer((socket) => {
    if (endpoint.mode === "hang") {
      endpoint.hungConnections++;
      held.add(socket);
      socket.on("close", () => held.delete(socket));
      socket.on("error", () => {});
      return;
    }
    https.emit("connection", socket);
  });
  await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
  const port = (tcp.address() as AddressInfo).port;
  const endpoint: IdentityEndpoint = {
    url: `https://127.0.0.1:${port}`,
    caPem: tls.caPem,
    mode,
    tokenRequests: 0,
    hungConnections: 0,
    async close() {
      for (const s of held) s.destroy();
      https.closeAllConnections();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
  return endpoint;
}
