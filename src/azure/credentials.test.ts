import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DefaultAzureCredential, WorkloadIdentityCredential } from "@azure/identity";
import { describe, expect, it } from "vitest";
import { createAzureCredential } from "./credentials.js";

describe("createAzureCredential", () => {
  it("uses workload identity when the webhook's variables are set", () => {
    const dir = mkdtempSync(join(tmpdir(), "sa-cred-"));
    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, "federated-token-content");
    const c = createAzureCredential({
      AZURE_CLIENT_ID: "11111111-2222-3333-4444-555555555555",
      AZURE_TENANT_ID: "66666666-7777-8888-9999-000000000000",
      AZURE_FEDERATED_TOKEN_FILE: tokenFile,
    });
    expect(c.source).toBe("workloadIdentity");
    expect(c.credential).toBeInstanceOf(WorkloadIdentityCredential);
    expect(c.description).toBe(
      "workload identity (client 11111111-2222-3333-4444-555555555555, tenant 66666666-7777-8888-9999-000000000000)",
    );
    expect(c.description).not.toContain("federated-token-content");
  });

  it("falls back to the default chain and never describes a secret", () => {
    const c = createAzureCredential({
      AZURE_CLIENT_ID: "abc",
      AZURE_TENANT_ID: "t",
      AZURE_CLIENT_SECRET: "s3cr3t-value",
    });
    expect(c.source).toBe("defaultChain");
    expect(c.credential).toBeInstanceOf(DefaultAzureCredential);
    expect(c.description).toContain("environment client secret first");
    expect(c.description).not.toContain("s3cr3t-value");
    expect(createAzureCredential({}).description).toBe(
      "default credential chain (managed identity, Azure CLI and the other developer tools)",
    );
  });
});
