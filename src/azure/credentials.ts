/**
 * The Azure credential of the operator (`@azure/identity`):
 *
 * - in a cluster with Microsoft Entra Workload ID (the webhook sets `AZURE_CLIENT_ID`,
 *   `AZURE_TENANT_ID` and `AZURE_FEDERATED_TOKEN_FILE` on the pod): `WorkloadIdentityCredential`
 *   with exactly those values;
 * - anywhere else: `DefaultAzureCredential` (environment, workload identity, managed identity,
 *   Azure CLI, …, in the library's order).
 *
 * The description returned for logs names the source and the client ID, never a secret, a token
 * or the token file's content. Adapters accept any `TokenCredential`, so tests and the emulator
 * pass a static one instead.
 */
import { DefaultAzureCredential, type TokenCredential, WorkloadIdentityCredential } from "@azure/identity";

export type CredentialSource = "workloadIdentity" | "defaultChain";

/** A credential and a log-safe description of where its tokens come from. */
export interface CreatedCredential {
  credential: TokenCredential;
  source: CredentialSource;
  /** Safe to log: no secret, no token. */
  description: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== "" ? v.trim() : undefined;
}

/** Creates the credential for `env` (pass `process.env` from the CLI; tests pass their own). */
export function createAzureCredential(env: Env): CreatedCredential {
  const clientId = nonEmpty(env["AZURE_CLIENT_ID"]);
  const tenantId = nonEmpty(env["AZURE_TENANT_ID"]);
  const tokenFilePath = nonEmpty(env["AZURE_FEDERATED_TOKEN_FILE"]);
  const authorityHost = nonEmpty(env["AZURE_AUTHORITY_HOST"]);
  if (clientId && tenantId && tokenFilePath) {
    return {
      credential: new WorkloadIdentityCredential({
        clientId,
        tenantId,
        tokenFilePath,
        ...(authorityHost ? { authorityHost } : {}),
      }),
      source: "workloadIdentity",
      description: `workload identity (client ${clientId}, tenant ${tenantId})`,
    };
  }
  const hasSecret = nonEmpty(env["AZURE_CLIENT_SECRET"]) !== undefined;
  const hasCertificate = nonEmpty(env["AZURE_CLIENT_CERTIFICATE_PATH"]) !== undefined;
  const via = hasSecret
    ? "environment client secret first"
    : hasCertificate
      ? "environment client certificate first"
      : "managed identity, Azure CLI and the other developer tools";
  return {
    credential: new DefaultAzureCredential(clientId ? { managedIdentityClientId: clientId } : {}),
    source: "defaultChain",
    description: `default credential chain (${via}${clientId ? `, client ${clientId}` : ""})`,
  };
}
