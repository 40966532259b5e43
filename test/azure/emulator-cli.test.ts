/**
 * The emulator as a user runs it: `signalr-autoscaler emulator --trace … --peak-connections …`
 * prints its endpoints and CA path, serves the control API over HTTPS until stopped, and rejects
 * misuse with clear usage errors.
 */
import { existsSync, readFileSync } from "node:fs";
import { request } from "node:https";
import { Command, CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { createAzureAdapters } from "../../src/azure/index.js";
import { emulatorCommand } from "../../src/cli/commands/emulator.js";
import { UsageError } from "../../src/cli/errors.js";
import type { CliIo } from "../../src/cli/io.js";
import { staticCredential } from "./helpers.js";

const REPO = new URL("../..", import.meta.url).pathname;

function makeIo() {
  const out: string[] = [];
  const err: string[] = [];
  const abort = new AbortController();
  const io: CliIo = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    cwd: REPO,
    env: {},
    signal: abort.signal,
  };
  return { io, out, err, abort };
}

function run(args: string[], io: CliIo): Promise<void> {
  const program = new Command("signalr-autoscaler").exitOverride();
  emulatorCommand.register(program, io);
  for (const sub of program.commands)
    sub.exitOverride().configureOutput({ writeErr: io.stderr, writeOut: io.stdout });
  return program.parseAsync(["emulator", ...args], { from: "user" }).then(() => undefined);
}

function httpsJson(
  url: string,
  ca: string,
  method = "GET",
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, ca, headers: { "content-type": "application/json" }, timeout: 5_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function waitFor(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The endpoints and instances `emulator -o json` prints. */
interface EmulatorInfo {
  armEndpoint: string;
  metricsEndpoint: string;
  controlEndpoint: string;
  appServerMetrics: string;
  appServerHttpMetrics: string;
  caPath: string;
  instances: { resourceId: string; demand: string }[];
}

/** Starts `emulator <args> -o json`; resolves once it printed, with what it printed and its stop. */
async function startJson(args: string[]): Promise<{ info: EmulatorInfo; stop: () => Promise<void> }> {
  const { io, out, abort } = makeIo();
  const running = run([...args, "-o", "json"], io);
  await waitFor(() => out.length > 0);
  return {
    info: JSON.parse(out.join("")) as EmulatorInfo,
    stop: async () => {
      abort.abort();
      await running;
    },
  };
}

describe("signalr-autoscaler emulator", { timeout: 30_000 }, () => {
  it("runs with a trace scaled to a peak, prints endpoints and CA, serves until stopped", async () => {
    const { info, stop } = await startJson([
      "--trace",
      "traces/nyc_taxi.csv",
      "--peak-connections",
      "120000",
      "--instances",
      "3",
      "--speed",
      "60",
      "--app-server-http-port",
      "0",
      "--connection-lifetime",
      "10m",
    ]);
    expect(info.armEndpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(info.metricsEndpoint).toBe(`${info.armEndpoint}/metrics/{region}`);
    expect(info.appServerMetrics).toBe(`${info.armEndpoint}/appservers/{name}/metrics`);
    expect(info.appServerHttpMetrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/appservers\/\{name\}\/metrics$/);
    expect(info.instances).toHaveLength(3);
    expect(info.instances[0]?.demand).toBe("trace traces/nyc_taxi.csv, peak 120,000");
    const ca = readFileSync(info.caPath, "utf8");
    expect(ca).toContain("BEGIN CERTIFICATE");

    const state = await httpsJson(`${info.controlEndpoint}/state`, ca);
    expect(state.status).toBe(200);
    expect((state.json as { speed: number }).speed).toBe(60);

    // The app servers of the first instance, on plain HTTP: a negotiate count and a gauge.
    const scrape = await fetch(info.appServerHttpMetrics.replace("{name}", "signalr-001"));
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toMatch(
      /^signalr_server_active_connections\{signalr_transport="web_sockets"\} \d+ \d+$/m,
    );

    // Control API: a fault, then the SDK sees it through the adapters.
    const id = info.instances[0]?.resourceId as string;
    const added = await httpsJson(`${info.controlEndpoint}/faults`, ca, "POST", {
      method: "GET",
      path: "**/SignalR/signalr-001",
      times: 1,
      action: { kind: "status", status: 503 },
    });
    expect(added.status).toBe(201);
    const az = createAzureAdapters({ credential: staticCredential(), armEndpoint: info.armEndpoint, ca });
    await expect(az.instances.get(id)).rejects.toMatchObject({ kind: "Transient", status: 503 });
    await expect(az.instances.get(id)).resolves.toMatchObject({ sku: "Premium_P1", units: 1 });

    // Instances and demand through the control API.
    const created = await httpsJson(`${info.controlEndpoint}/instances`, ca, "POST", {
      resourceId:
        "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/emulator/providers/Microsoft.SignalRService/WebPubSub/extra-1",
      location: "eastus",
      sku: "Standard_S1",
      units: 2,
      pattern: "constant",
      peakConnections: 900,
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ service: "WebPubSub", units: 2, demand: "constant, peak 900" });
    const bad = await httpsJson(`${info.controlEndpoint}/instances`, ca, "POST", { resourceId: "/nope" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain("malformed resource ID");

    await stop();
    expect(existsSync(info.caPath)).toBe(false);
  });

  it("refuses as Azure does with --unit-quota, lags reads with --read-after-write-lag, and takes locks, policies and quotas over its control API", async () => {
    const { info, stop } = await startJson([
      "--pattern",
      "constant",
      "--units",
      "100",
      "--unit-quota",
      "150",
      "--read-after-write-lag",
      "30s",
    ]);
    const ca = readFileSync(info.caPath, "utf8");
    const id = info.instances[0]?.resourceId as string;
    const rg = id.slice(0, id.indexOf("/providers/"));
    const state = (await httpsJson(`${info.controlEndpoint}/state`, ca)).json as {
      quotas: unknown[];
      readAfterWriteLagSeconds: number;
    };
    expect(state.quotas).toEqual([{ units: 150 }]);
    expect(state.readAfterWriteLagSeconds).toBe(30);

    const az = createAzureAdapters({ credential: staticCredential(), armEndpoint: info.armEndpoint, ca });
    await expect(az.instances.beginScale(id, { sku: "Premium_P2", units: 200 })).rejects.toMatchObject({
      kind: "Refused",
      refusedBy: "Quota",
      code: "OperationNotAllowed",
    });

    const lock = await httpsJson(`${info.controlEndpoint}/locks`, ca, "POST", {
      scope: rg,
      level: "ReadOnly",
    });
    expect(lock).toEqual({ status: 201, json: { scope: rg, level: "ReadOnly", name: "emulator-ReadOnly" } });
    await expect(az.instances.beginScale(id, { sku: "Premium_P1", units: 90 })).rejects.toMatchObject({
      refusedBy: "Lock",
      code: "ScopeLocked",
    });
    const unlocked = await httpsJson(
      `${info.controlEndpoint}/locks?scope=${encodeURIComponent(rg)}`,
      ca,
      "DELETE",
    );
    expect(unlocked.status).toBe(204);

    const policy = await httpsJson(`${info.controlEndpoint}/policies`, ca, "POST", {
      name: "no-scale-in",
      deny: { skus: ["Standard_S1"] },
    });
    expect(policy.status).toBe(201);
    await expect(az.instances.beginScale(id, { sku: "Standard_S1", units: 90 })).rejects.toMatchObject({
      refusedBy: "Policy",
      status: 403,
    });
    expect((await httpsJson(`${info.controlEndpoint}/policies?name=no-scale-in`, ca, "DELETE")).status).toBe(
      204,
    );
    expect(
      (await httpsJson(`${info.controlEndpoint}/policies`, ca, "POST", { name: "x", deny: {} })).status,
    ).toBe(400);

    const quota = await httpsJson(`${info.controlEndpoint}/quotas`, ca, "POST", {
      subscriptionId: "00000000-0000-0000-0000-000000000000",
      region: "westeurope",
      units: 1000,
    });
    expect(quota.status).toBe(201);
    const op = await az.instances.beginScale(id, { sku: "Premium_P2", units: 200 });
    expect(op.acceptedWith).toBe(202);
    // Within the read-after-write lag, the instance still reads as before: Succeeded at 100 units.
    await expect(az.instances.get(id)).resolves.toMatchObject({ units: 100, provisioningState: "Succeeded" });
    expect((await httpsJson(`${info.controlEndpoint}/quotas`, ca, "DELETE")).status).toBe(204);
    expect((await httpsJson(`${info.controlEndpoint}/quotas`, ca)).json).toEqual([]);

    await stop();
  });

  it("prints a readable table by default", async () => {
    const { io, out, abort } = makeIo();
    const running = run(["--pattern", "constant", "--service", "WebPubSub", "--units", "2"], io);
    await waitFor(() => out.length > 0);
    const text = out.join("");
    expect(text).toMatch(/ARM\s+https:\/\/127\.0\.0\.1:\d+/);
    expect(text).toMatch(/CA certificate\s+\/.+ca\.pem/);
    expect(text).toContain("Microsoft.SignalRService/WebPubSub/webpubsub-001");
    abort.abort();
    await running;
    expect(out.join("")).toContain("Azure emulator stopped.");
  });

  it.each([
    [
      ["--trace", "traces/LICENSE-NAB.txt"],
      /--trace: traces\/LICENSE-NAB\.txt line 1: expected the header "timestamp,value"/,
    ],
    [["--trace", "traces/no-such.csv"], /cannot read trace file traces\/no-such\.csv: ENOENT/],
    [["--service", "Redis"], /--service: unknown service "Redis": expected SignalR or WebPubSub/],
    [
      ["--resource-id", "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Web/sites/app"],
      /--resource-id: malformed resource ID/,
    ],
    [["--sku", "Premium_P3"], /--sku must be one of/],
    [["--sku", "Premium_P2", "--units", "50"], /--units 50 is not allowed for Premium_P2/],
    [["--mix", "echo=0.5,teleport=0.5"], /--mix: SignalR has no scenario "teleport"/],
    [["--peak-connections", "lots"], /--peak-connections must be a number/],
    [["--host", "0.0.0.0"], /--host must be a loopback address/],
    [["--connection-lifetime", "0s"], /--connection-lifetime must be longer than 0/],
    [["--app-server-http-port", "70000"], /--app-server-http-port must be a port/],
    [["--unit-quota", "-5"], /--unit-quota must be a whole number of units ≥ 0/],
    [["--read-after-write-lag", "soon"], /--read-after-write-lag: invalid duration "soon"/],
  ])("rejects %j with a usage error", async (args, message) => {
    const { io } = makeIo();
    let error: unknown;
    try {
      await run(args, io);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
  });

  it("reports unknown flags through commander", async () => {
    const { io } = makeIo();
    await expect(run(["--frobnicate"], io)).rejects.toBeInstanceOf(CommanderError);
  });
});
