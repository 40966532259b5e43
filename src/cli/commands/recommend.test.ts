import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Command, CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { ExitCode, UsageError } from "../errors.js";
import { captureIo } from "../test-io.js";
import { parseCurrent, recommendCommand } from "./recommend.js";

const FIXTURES = resolve(import.meta.dirname, "../../../test/fixtures/recommend");

/** Runs `recommend` the way runCli does (exit codes, one-line errors) on a program of its own. */
async function run(...argv: string[]) {
  const io = captureIo(FIXTURES);
  const program = new Command("signalr-autoscaler")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  recommendCommand.register(program, io);
  for (const sub of program.commands)
    sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  let code: number = ExitCode.ok;
  try {
    await program.parseAsync(["recommend", ...argv], { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) code = err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    else {
      io.stderr(`error: ${(err as Error).message.split("\n")[0]}\n`);
      code = err instanceof UsageError ? ExitCode.usage : ExitCode.failure;
    }
  }
  return { code, out: io.out(), err: io.err() };
}

const CHAT = ["--policy", "chat-policy.yaml", "--metrics", "getbatch-signalr-rising.json"];

describe("signalr-autoscaler recommend", () => {
  it("explains a scale-out from a metrics:getBatch body (JSON)", async () => {
    const r = await run(...CHAT, "--current", "Premium_P1/10/3", "-o", "json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out);
    expect(body.now).toBe("2025-06-02T12:00:00.000Z");
    expect(body.nowSource).toBe("response");
    expect(body.action).toBe("Scale");
    // peak server load 86 % at 10 units → 13 units → Premium_P1 20; 8,290 connections → 4 replicas
    expect(body.desired).toEqual({ sku: "Premium_P1", units: 20, replicas: 4 });
    expect(body.drivenBy).toBe("serverLoad");
    expect(body.limitedBy).toBeNull();
    expect(body.newestSampleTime).toBe("2025-06-02T11:56:00.000Z");
    expect(body.reasons.map((x: { code: string }) => x.code)).toEqual(
      expect.arrayContaining([
        "SignalDesired",
        "WithinTolerance",
        "SamplesIgnored",
        "LadderSnapped",
        "ScaleOut",
        "ReplicasFromConnections",
      ]),
    );
    expect(body.conditions).toHaveLength(7);
    expect(body.signals.map((s: { signal: string; status: string }) => `${s.signal}:${s.status}`)).toEqual([
      "serverLoad:Ok",
      "connections:Ok",
    ]);
    expect(body.lastSample).toMatchObject({
      time: "2025-06-02T11:56:00.000Z",
      serverLoadPercent: 83,
      connections: 8290,
    });
    expect(body.lastSample.messagesPerSecond).toBeCloseTo((8290 * 150) / 60, 6);
  });

  it("prints the decision and its reasons for people", async () => {
    const r = await run(...CHAT, "--current", "Premium_P1/10/3");
    expect(r.code).toBe(0);
    expect(r.out).toContain("decision: SCALE  Premium_P1 10 → Premium_P1 20 units, replicas 3 → 4");
    expect(r.out).toContain("driven by serverLoad");
    expect(r.out).toMatch(/serverLoad\s+Ok\s+86 %\s+70 %\s+1\.23\s+13\s+5\/5/);
    expect(r.out).toMatch(/LadderSnapped\s+need of 13 units → Premium_P1 20/);
    expect(r.out).toMatch(/ScalingLimited\s+False\s+DesiredWithinRange/);
  });

  it("--now moves the window (here onto the steady minutes: no change)", async () => {
    const r = await run(
      ...CHAT,
      "--current",
      "Premium_P1/10/3",
      "--now",
      "2025-06-02T11:52:00Z",
      "-o",
      "json",
    );
    const body = JSON.parse(r.out);
    expect(body.nowSource).toBe("flag");
    expect(body.desired.units).toBe(10);
    expect(body.newestSampleTime).toBe("2025-06-02T11:48:00.000Z");
  });

  it("explains a blocked scale-in from a single-resource Web PubSub body with a status", async () => {
    const r = await run(
      "--policy",
      "notify-policy.yaml",
      "--metrics",
      "metrics-webpubsub-single.json",
      "--status",
      "notify-status.yaml",
      "-o",
      "json",
    );
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out);
    // current from the status; server load (peak 21 %) asks for 6 units and connections (peak
    // 5,750) for 8, but one connection bucket of the window is missing: no scale-in.
    expect(body.current).toEqual({ sku: "Premium_P1", units: 20 });
    expect(body.recommendation).toEqual({ sku: "Premium_P1", units: 8 });
    expect(body.desired).toEqual({ sku: "Premium_P1", units: 20 });
    expect(body.limitedBy).toBe("MetricsIncomplete");
    expect(body.scaleIn).toEqual({ allowed: false, blockedBy: ["MetricsIncomplete"] });
    expect(body.notes.join("\n")).toContain("OutboundTraffic returned errorCode Throttled");
    const metrics = body.conditions.find((c: { type: string }) => c.type === "MetricsAvailable");
    expect(metrics).toMatchObject({ status: "True", reason: "SomeMetricsMissing" });
  });

  it.each<[string, string[], RegExp]>([
    [
      "a malformed policy",
      [
        "--policy",
        "bad-policy.yaml",
        "--metrics",
        "getbatch-signalr-rising.json",
        "--current",
        "Premium_P1/10",
      ],
      /^error: policy bad-policy\.yaml: spec\.units: min \(20\) must be <= max \(10\)\n$/,
    ],
    [
      "a malformed metrics file",
      ["--policy", "chat-policy.yaml", "--metrics", "bad-metrics.json", "--current", "Premium_P1/10"],
      /^error: metrics bad-metrics\.json: values\[0\]\.value\[0\]\.timeseries\[0\]\.data\[0\]\.timeStamp must be an RFC 3339 time/,
    ],
    [
      "a missing file",
      ["--policy", "nope.yaml", "--metrics", "getbatch-signalr-rising.json", "--current", "Premium_P1/10"],
      /^error: cannot read --policy nope\.yaml: ENOENT/,
    ],
    [
      "a bad --current",
      [...CHAT, "--current", "P1/10"],
      /^error: --current must be SKU\/units\[\/replicas\]/,
    ],
    ["no --current and no status", CHAT, /^error: --current SKU\/units\[\/replicas\] is required/],
    [
      "a bad --now",
      [...CHAT, "--current", "Premium_P1/10", "--now", "noon"],
      /^error: --now must be an RFC 3339 time/,
    ],
  ])("exits 2 with one clear line for %s", async (_n, argv, message) => {
    const r = await run(...argv);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(message);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });

  it.each<[string, string, RegExp]>([
    ["not JSON", "{", /not JSON/],
    ["neither shape", '{"foo": 1}', /has neither "values" \(metrics:getBatch\) nor "value"/],
    [
      "no metric of the service",
      '{"value": [{"name": {"value": "CpuPercentage"}, "timeseries": []}]}',
      /no SignalR metric in it/,
    ],
    [
      "an interval its timestamps disagree with",
      '{"interval": "PT5M", "value": [{"name": {"value": "ServerLoad"}, "timeseries": [{"data": [{"timeStamp": "2025-06-02T11:50:00Z", "maximum": 5}, {"timeStamp": "2025-06-02T11:51:00Z", "maximum": 5}]}]}]}',
      /^error: metrics .*m\.json: interval PT5M but the timestamps are 1 minute apart\n$/,
    ],
    [
      "several resources, none the target",
      '{"values": [{"resourceid": "/a", "value": []}, {"resourceid": "/b", "value": []}]}',
      /none of its 2 resources is the policy's target/,
    ],
  ])("rejects a metrics file: %s", async (_n, text, message) => {
    const dir = await mkdtemp(join(tmpdir(), "recommend-"));
    const file = join(dir, "m.json");
    await writeFile(file, text);
    const r = await run(
      "--policy",
      join(FIXTURES, "chat-policy.yaml"),
      "--metrics",
      file,
      "--current",
      "Premium_P1/10",
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });

  it("parseCurrent reads SKU/units[/replicas]", () => {
    expect(parseCurrent("Premium_P2/200/12")).toEqual({ sku: "Premium_P2", units: 200, replicas: 12 });
    expect(parseCurrent("Standard_S1/3")).toEqual({ sku: "Standard_S1", units: 3 });
    expect(() => parseCurrent("Premium_P1/0")).toThrow(UsageError);
  });
});
