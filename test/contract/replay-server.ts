/**
 * A small HTTPS server on loopback that answers with given responses (an official example's status,
 * headers and body), for reading them with the project's real adapters and the real Azure SDK
 * clients. Its CA comes from `shared/tls.ts`, as the emulator's does; clients trust it through
 * `tlsOptions.ca`.
 *
 * The examples' absolute URLs (`nextLink`, `Location`, `Azure-AsyncOperation`) name
 * `https://management.azure.com`: the server rewrites that origin to its own in what it sends, so
 * a client following them stays on loopback. A request no answer was given for gets a 404 ARM error.
 */
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { generateServerCertificate } from "../../src/shared/tls.js";

/** A request the server received. */
export interface ReplayRequest {
  method: string;
  /** The absolute URL (`https://127.0.0.1:<port>/…`). */
  url: string;
  headers: Record<string, string>;
  /** Parsed JSON body, `undefined` when empty. */
  body: unknown;
}

/** An answer to send. */
export interface ReplayAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface ReplayServer {
  /** `https://127.0.0.1:<port>`. */
  url: string;
  /** The CA to trust, PEM. */
  ca: string;
  /** Every request received, in order. */
  requests: ReplayRequest[];
  /** Sets how requests are answered (`undefined`: 404). */
  answer(fn: (req: ReplayRequest) => ReplayAnswer | undefined): void;
  close(): Promise<void>;
}

const AZURE_ARM = "https://management.azure.com";

/** Starts the server on 127.0.0.1 (any free port). */
export async function startReplayServer(): Promise<ReplayServer> {
  const tls = await generateServerCertificate({
    caName: "signalr-autoscaler contract replay CA",
    serverName: "localhost",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
  });
  const requests: ReplayRequest[] = [];
  let answerFn: (req: ReplayRequest) => ReplayAnswer | undefined = () => undefined;
  let url = "";
  const rewrite = (text: string) => text.replaceAll(AZURE_ARM, url);
  const server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
      const received: ReplayRequest = {
        method: (req.method ?? "GET").toUpperCase(),
        url: `${url}${req.url ?? "/"}`,
        headers,
        body: raw.trim() === "" ? undefined : JSON.parse(raw),
      };
      requests.push(received);
      const answer = answerFn(received) ?? {
        status: 404,
        body: { error: { code: "NotFound", message: `no answer for ${received.method} ${req.url}` } },
      };
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(answer.headers ?? {})) out[k] = rewrite(v);
      let text = "";
      if (answer.body !== undefined) {
        text = rewrite(JSON.stringify(answer.body));
        out["content-type"] ??= "application/json; charset=utf-8";
      }
      out["content-length"] = String(Buffer.byteLength(text));
      res.writeHead(answer.status, out);
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    ca: tls.caPem,
    requests,
    answer(fn) {
      answerFn = fn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
