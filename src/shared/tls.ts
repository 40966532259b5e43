/**
 * TLS material for the loopback servers this project starts (the Azure emulator, the local
 * kube-apiserver), made fresh with `selfsigned`: a CA, and a server certificate it signs for the
 * given names. Clients trust the CA, so certificate verification stays on. Keys are EC P-256.
 */
import { X509Certificate } from "node:crypto";
import { generate } from "selfsigned";

export interface TlsMaterial {
  /** CA certificate, PEM: what clients trust. */
  caPem: string;
  /** Server certificate, PEM. */
  certPem: string;
  /** Server private key, PEM (PKCS #8). */
  keyPem: string;
}

export interface ServerCertificateOptions {
  /** Common name of the CA. */
  caName: string;
  /** Common name of the server certificate. */
  serverName: string;
  /** DNS names the server certificate is valid for. */
  dnsNames: readonly string[];
  /** IP addresses the server certificate is valid for. */
  ipAddresses: readonly string[];
  /** Validity from now, days (default 1). */
  days?: number;
  /** Creation time (default: now). */
  now?: Date;
}

/** Generates a CA and a server certificate it signs. */
export async function generateServerCertificate(options: ServerCertificateOptions): Promise<TlsMaterial> {
  const notBeforeDate = new Date((options.now ?? new Date()).getTime() - 60_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + (options.days ?? 1) * 86_400_000);
  const common = { keyType: "ec", algorithm: "sha256", notBeforeDate, notAfterDate } as const;
  const ca = await generate([{ name: "commonName", value: options.caName }], {
    ...common,
    extensions: [
      { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const server = await generate([{ name: "commonName", value: options.serverName }], {
    ...common,
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false, critical: true },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          ...options.dnsNames.map((value) => ({ type: 2 as const, value })),
          ...options.ipAddresses.map((ip) => ({ type: 7 as const, ip })),
        ],
      },
    ],
  });
  if (!new X509Certificate(server.cert).verify(new X509Certificate(ca.cert).publicKey)) {
    throw new Error("the generated server certificate is not signed by the generated CA");
  }
  return { caPem: ca.cert, certPem: server.cert, keyPem: server.private };
}
