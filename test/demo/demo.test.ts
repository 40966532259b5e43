/**
 * `signalr-autoscaler demo` end to end against the shared local control plane (`--kubeconfig`, so
 * no second control plane starts): four hours around the default trace's flash crowd, the
 * Premium_P1 → Premium_P2 step and back, the files; Ctrl-C midway; usage errors.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Command, CommanderError } from "commander";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { demoCommand } from "../../src/cli/commands/demo.js";
import { commands } from "../../src/cli/commands/index.js";
import { ExitCode, UsageError } from "../../src/cli/errors.js";
import type { CliIo } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/program.js";
import type { DemoSummary } from "../../src/demo/index.js";
import { TIMELINE_HEADER } from "../../src/demo/timeline.js";

const ROOT = resolve(import.meta.dirname, "../..");

interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI; registers `demo` on its own when the command list does not have it yet. */
async function cli(argv: string[], options: { signal?: AbortSignal } = {}): Promise<Run> {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      err += t;
    },
    cwd: ROOT,
    env: {},
    signal: options.signal ?? new AbortController().signal,
  };
  if (commands.some((c) => c.name === "demo")) return { code: await runCli(argv, io), out, err };
  const program = new Command("signalr-autoscaler")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  demoCommand.register(program, io);
  for (const sub of program.commands)
    sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  let code: number = ExitCode.ok;
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) code = e.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    else {
      io.stderr(`error: ${(e as Error).message.split("\n")[0]}\n`);
      code = e instanceof UsageError ? ExitCode.usage : ExitCode.failure;
    }
  }
  return { code, out, err };
}

let dir: string;
let n = 0;
const kubeconfig = () => inject("controlPlane").kubeconfigAdmin;
const namespace = () => `demo-${process.pid}-${++n}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "demo-test-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("demo", () => {
  it("scales out through Premium_P1 to Premium_P2 during the flash crowd and back in after it", async () => {
    const out = join(dir, "crowd");
    const run = await cli([
      "demo",
      "--kubeconfig",
      kubeconfig(),
      "--namespace",
      namespace(),
      "--start",
      "2015-04-14 21:30",
      "--duration",
      "4h",
      "--speed",
      "720",
      "--out",
      out,
      "--output",
      "json",
    ]);
    expect(run.err).not.toMatch(/^error:/m);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.out) as {
      interrupted: boolean;
      trace: { start: string; end: string };
      summary: DemoSummary;
      files: { timeline: string; chart: string };
      operator: { passes: number; failedPasses: number };
      anticipation: { mode: string; scaleOuts: { time: string; rule: string; to: { units: number } }[] };
      leading?: {
        prometheus?: { url: string; version: string; scrapeIntervalMs: number };
        queries: { ok: number; failed: number };
      };
    };
    const s = result.summary;
    expect(result.interrupted).toBe(false);
    expect(result.trace).toMatchObject({ start: "2015-04-14T21:30:00Z", end: "2015-04-15T01:30:00Z" });
    expect(s.minutes).toBe(240);
    expect(s.peakDemand).toBeGreaterThan(190_000);
    expect(s.scaleOperations.out).toBeGreaterThanOrEqual(1);
    expect(s.scaleOperations.in).toBeGreaterThanOrEqual(1);
    expect(s.p1ToP2).toMatchObject({ from: { sku: "Premium_P1" }, to: { sku: "Premium_P2" } });
    expect(s.p2ToP1).toMatchObject({ from: { sku: "Premium_P2" }, to: { sku: "Premium_P1" } });
    expect(s.p2Minutes).toBeGreaterThan(0);
    expect(s.replicas?.max).toBeGreaterThan(s.replicas?.min ?? 0);
    expect(result.operator.passes).toBeGreaterThan(50);
    expect(result.operator.failedPasses).toBe(0);
    // examples/demo.yaml runs with anticipation: the crowd's rise is met ahead of the measured need.
    expect(result.anticipation.mode).toBe("Enabled");
    expect(result.anticipation.scaleOuts.length).toBeGreaterThanOrEqual(1);
    expect(["Trend", "CensoredDemand", "LeadingSignal"]).toContain(result.anticipation.scaleOuts[0]?.rule);
    // …and with its leading signal, read from the demo's own Prometheus scraping the app servers.
    expect(result.leading?.prometheus?.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(result.leading?.prometheus?.scrapeIntervalMs).toBe(21);
    expect(result.leading?.queries.ok).toBeGreaterThan(100);
    expect(result.leading?.queries.failed).toBeLessThan(result.leading?.queries.ok ?? 0);
    expect(result.anticipation.scaleOuts.map((x) => x.rule)).toContain("LeadingSignal");

    // The live view went to stderr: status lines and the API server's Events.
    expect(run.err).toMatch(/^\d\d:\d\d {2}load +\d+ % {2}conns/m);
    // The step into Premium_P2: to 200, or straight to 300 when the crowd asks for it (Units 100 a minute).
    expect(run.err).toMatch(/event {2}Normal {2}ScalingOut {2}Premium_P1 × \d+ → Premium_P2 × [23]00 /);
    expect(run.err).toMatch(/event {2}Normal {2}ScalingIn /);
    expect(run.err).toMatch(/event {2}Normal {2}AppServersScaled /);
    expect(run.err).toMatch(
      /event {2}Normal {2}AnticipatedScaleOut {2}Premium_P\d × \d+ → Premium_P\d × \d+ units ahead of the demand: /,
    );

    expect(result.files.timeline).toBe(join(out, "timeline.csv"));
    const csv = (await readFile(result.files.timeline, "utf8")).trimEnd().split("\n");
    expect(csv[0]).toBe(TIMELINE_HEADER);
    expect(csv).toHaveLength(241);
    expect(csv.some((l) => l.includes(",Premium_P2,"))).toBe(true);
    const svg = await readFile(result.files.chart, "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
    for (const text of ["units", "connections", "server load", "Premium_P2"]) expect(svg).toContain(text);
  });

  it("stops cleanly on Ctrl-C with a partial summary and the files so far", async () => {
    const out = join(dir, "interrupted");
    const stop = new AbortController();
    const running = cli(
      [
        "demo",
        "--kubeconfig",
        kubeconfig(),
        "--namespace",
        namespace(),
        "--speed",
        "720",
        "--out",
        out,
        "--no-prometheus",
      ],
      { signal: stop.signal },
    );
    // About 8 s of replay (the set-up takes a second or two), then Ctrl-C.
    await new Promise((r) => setTimeout(r, 10_000));
    stop.abort(new Error("SIGINT"));
    const run = await running;
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/Interrupted at \d\d:\d\d \(virtual\); stopping\./);
    expect(run.out).toMatch(/^Partial summary: 2015-04-14 12:00 – 2015-04-14 \d\d:\d\d UTC/m);
    expect(run.out).toContain(`timeline  ${join(out, "timeline.csv")}`);
    expect(run.out).toContain("stays in the cluster");
    // --no-prometheus: the policy's leading signal was left out, and said so.
    expect(run.out).toMatch(/leading signal +--no-prometheus: the leading signal is left out/);
    const csv = (await readFile(join(out, "timeline.csv"), "utf8")).trimEnd().split("\n");
    expect(csv.length).toBeGreaterThan(10);
    expect(csv.length).toBeLessThan(1441);
  });

  it.each([
    [["--speed", "0"], /--speed must be at least 1/],
    [["--duration", "5m"], /--duration must be at least 10m/],
    [["--duration", "soon"], /--duration/],
    [["--peak-connections", "-3"], /--peak-connections must be greater than 0/],
    [["--trace", "traces/nope.csv"], /cannot read --trace traces\/nope.csv: ENOENT/],
    [["--start", "2030-01-01"], /--start\/--duration: .*begins after the trace ends/],
    [["--start", "yesterday"], /--start "yesterday" is not a time/],
    [["--namespace", "Not_A_Name"], /--namespace "Not_A_Name" is not a valid namespace name/],
    [["--policy", "examples/recommend-only.yaml"], /the demo needs mode Auto/],
    [["--output", "yaml"], /argument 'yaml' is invalid/],
  ])("refuses %j with one line and exit 2", async (flags, message) => {
    const run = await cli(["demo", "--kubeconfig", kubeconfig(), ...flags]);
    expect(run.code).toBe(ExitCode.usage);
    expect(run.err).toMatch(message);
    expect(run.out).toBe("");
  });
});
