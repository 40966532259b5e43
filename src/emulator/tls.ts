/**
 * TLS material of the emulator, made fresh at each start (with `selfsigned`): a CA, and a server
 * certificate it signs for `localhost`, `127.0.0.1` and `::1`. Clients trust the CA through the
 * Azure SDK pipeline option `tlsOptions.ca` (the SDKs refuse bearer tokens over plain HTTP), so
 * certificate verification stays on. Keys are EC P-256; certificates last one day by default.
 */
import { X509Certificate } from "node:crypto";
import { generate } from "selfsigned";

export interface TlsMaterial {
  /** CA certificate, PEM: what clients trust. */
  caPem: string;
  /** Server certificate, PEM. */
  certPem: string;
  /** Server private key, PEM (never written to disk). */
  keyPem: string;
}

export interface TlsOptions {
  /** Validity from now, days (default 1). */
  days?: number;
  /** Creation time (default: now). */
  now?: Date;
}

/** Generates a CA and a server certificate for the loopback names. */
export async function generateTlsMaterial(options: TlsOptions = {}): Promise<TlsMaterial> {
  const notBeforeDate = new Date((options.now ?? new Date()).getTime() - 60_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + (options.days ?? 1) * 86_400_000);
  const ca = await generate([{ name: "commonName", value: "signalr-autoscaler emulator CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const leaf = await generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate,
    notAfterDate,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
        ],
      },
    ],
  });
  const caCert = new X509Certificate(ca.cert);
  if (!new X509Certificate(leaf.cert).verify(caCert.publicKey)) {
    throw new Error("the generated server certificate is not signed by the generated CA");
  }
  return { caPem: ca.cert, certPem: leaf.cert, keyPem: leaf.private };
}
