import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createAzureCredential } from "../azure/index.js";
import { createLogger } from "../controller/logging.js";
import { azureConnection, logCredential } from "./azure-flags.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return { lines, log: createLogger({ level: "info", destination }) };
}

describe("logCredential: the log says which credential the operator uses", () => {
  it("names the emulator's static token", async () => {
    const { credential } = await azureConnection(
      { azureCredential: "static", armEndpoint: "https://127.0.0.1:1" },
      {},
      process.cwd(),
    );
    const { lines, log } = capture();
    logCredential(log, credential);
    expect(lines[0]).toMatchObject({ msg: "Azure credential", credentialSource: "static token (emulator)" });
  });

  it("names the workload identity's client and tenant, and never the federated token", () => {
    const tokenFile = join(mkdtempSync(join(tmpdir(), "sa-flags-")), "token");
    writeFileSync(tokenFile, "federated-token-content");
    const { description } = createAzureCredential({
      AZURE_CLIENT_ID: "11111111-2222-3333-4444-555555555555",
      AZURE_TENANT_ID: "66666666-7777-8888-9999-000000000000",
      AZURE_FEDERATED_TOKEN_FILE: tokenFile,
    });
    const { lines, log } = capture();
    logCredential(log, description);
    expect(lines[0]?.["credentialSource"]).toBe(
      "workload identity (client 11111111-2222-3333-4444-555555555555, tenant 66666666-7777-8888-9999-000000000000)",
    );
    expect(JSON.stringify(lines[0])).not.toContain("federated-token-content");
  });
});
