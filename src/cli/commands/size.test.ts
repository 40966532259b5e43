import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCaptured } from "../test-io.js";

const run = (...argv: string[]) => runCaptured(argv);

describe("signalr-autoscaler size", () => {
  it("sizes a single scenario as JSON", async () => {
    const r = await run(
      "size",
      "--scenario",
      "broadcast",
      "--connections",
      "100000",
      "--message-size",
      "20480",
      "--send-interval",
      "5",
      "--output",
      "json",
    );
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out);
    expect(body).toMatchObject({
      service: "SignalR",
      sku: "Standard_S1",
      units: 100,
      appServers: 2,
      fits: true,
    });
    expect(["connections", "outboundBandwidth"]).toContain(body.limitedBy);
    const out = body.dimensions.find((d: { name: string }) => d.name === "outboundBandwidth");
    expect(out).toMatchObject({ unit: "bytes/s", required: 409_600_000, capacity: 409_600_000 });
    expect(out.requiredMessagesPerSecond).toBe(20_000);
  });

  it("prints a table for people", async () => {
    const r = await run("size", "--scenario", "echo", "--connections", "13000", "--allow-sku", "Standard_S1");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Standard_S1 × 20 units");
    expect(r.out).toMatch(/connections\s+connections\s+13,000\s+20,000/);
  });

  it("reads a workload mix from YAML", async () => {
    const dir = await mkdtemp(join(tmpdir(), "size-"));
    const file = join(dir, "w.yaml");
    await writeFile(
      file,
      "service: WebPubSub\nallowSkus: [Premium_P1]\nscenarios:\n  - scenario: smallGroup\n    connections: 60000\n    inboundMessagesPerSecond: 12000\n",
    );
    const r = await run("size", "--workload", file, "-o", "json");
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out);
    expect(body.fits).toBe(false);
    expect(body.shortfall[0].name).toBe("smallGroup.inbound");
  });

  it.each([
    [["size", "--scenario", "echo", "--connections", "-5"], /--connections must be at least 0/],
    [["size", "--scenario", "teleport", "--connections", "5"], /not a SignalR scenario/],
    [
      ["size", "--scenario", "echo", "--connections", "5", "--message-size", "0"],
      /--message-size must be greater than 0/,
    ],
    [["size", "--scenario", "echo", "--connections", "five"], /must be a number/],
    [
      ["size", "--service", "WebPubSub", "--scenario", "echo", "--connections", "5"],
      /not a WebPubSub scenario/,
    ],
    [["size", "--scenario", "echo", "--connections", "5", "--allow-sku", "Free_F1"], /never Free_F1/],
    [["size", "--bogus"], /unknown option/],
    [["size"], /give --scenario/],
  ])("bad usage %j → exit 2 with one line", async (argv, message) => {
    const r = await run(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it("rejects a YAML file that is not a workload", async () => {
    const dir = await mkdtemp(join(tmpdir(), "size-"));
    const file = join(dir, "bad.yaml");
    await writeFile(file, "apiVersion: v1\nkind: ConfigMap\n");
    const r = await run("size", "--workload", file);
    expect(r.code).toBe(2);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(/not a workload file/);
    const missing = await run("size", "--workload", join(dir, "nope.yaml"));
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read --workload .*ENOENT/);
  });

  it("has --help on the command", async () => {
    const r = await run("size", "--help");
    expect(r.code).toBe(0);
    expect(r.out).toContain("--workload <file>");
    expect(r.out).toContain("--output <format>");
  });
});
