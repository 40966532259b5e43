/**
 * `signalr-autoscaler simulate` end to end on short slices of the real traces: the comparison
 * table, JSON, the timeline and chart files, and one-line usage errors (exit 2).
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Command, CommanderError } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commands } from "../../src/cli/commands/index.js";
import { simulateCommand } from "../../src/cli/commands/simulate.js";
import { ExitCode, UsageError } from "../../src/cli/errors.js";
import { runCli } from "../../src/cli/program.js";
import { captureIo } from "../../src/cli/test-io.js";
import { STEADY } from "../../src/simulate/testing.js";

const ROOT = resolve(import.meta.dirname, "../..");
const POLICY = "examples/signalr-chat.yaml";

/** Runs the CLI; registers `simulate` on its own when the command list does not have it yet. */
async function cli(argv: string[], cwd = ROOT) {
  const io = captureIo(cwd);
  if (commands.includes(simulateCommand)) {
    const code = await runCli(argv, io);
    return { code, out: io.out(), err: io.err() };
  }
  const program = new Command("signalr-autoscaler")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  simulateCommand.register(program, io);
  for (const sub of program.commands)
    sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  let code: number = ExitCode.ok;
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) code = err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    else {
      io.stderr(`error: ${(err as Error).message.split("\n")[0]}\n`);
      code = err instanceof UsageError ? ExitCode.usage : ExitCode.failure;
    }
  }
  return { code, out: io.out(), err: io.err() };
}

interface Row {
  strategy: string;
  cells: number[];
  /** Column name (as in the header) → value. */
  column: Record<string, number>;
}

function tableRows(out: string): Row[] {
  const lines = out.split("\n");
  const head = lines.findIndex((l) => l.startsWith("STRATEGY"));
  // Header names may hold one space ("MIN > 70%"); columns are two or more apart.
  const names = (lines[head] ?? "")
    .trim()
    .split(/\s{2,}/)
    .slice(1);
  return lines.slice(head + 1, head + 5).map((l) => {
    const [strategy, ...text] = l.trim().split(/\s+/);
    const cells = text.map((c) => Number(c.replaceAll(",", "")));
    return {
      strategy: strategy ?? "",
      cells,
      column: Object.fromEntries(names.map((n, i) => [n, cells[i] ?? NaN])),
    };
  });
}

describe.each([
  ["traces/twitter_volume_aapl.csv", "2015-03-02"],
  ["traces/nyc_taxi.csv", "2014-07-07"],
])("simulate on %s (2 days)", (trace, start) => {
  it("prints the comparison of the four strategies with sane numbers", async () => {
    const r = await cli([
      "simulate",
      "--policy",
      POLICY,
      "--trace",
      trace,
      "--start",
      start,
      "--days",
      "2",
      "--no-progress",
    ]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`on ${trace}`);
    const rows = tableRows(r.out);
    expect(rows.map((x) => x.strategy)).toEqual(["policy", "native", "static", "oracle"]);
    // columns: >target, refused, throttled, unit-hours, cost, scale ops, reversals, P2 hours, mean units, peak units
    const by = Object.fromEntries(rows.map((x) => [x.strategy, x.cells]));
    for (const cells of Object.values(by)) {
      expect(cells).toHaveLength(10);
      for (const c of cells) expect(Number.isFinite(c) && c >= 0).toBe(true);
      expect(cells[2]).toBeLessThanOrEqual(2880); // minutes are minutes of the slice
      expect(cells[3]).toBeGreaterThan(0);
    }
    expect(by["oracle"]?.[0]).toBe(0);
    expect(by["oracle"]?.[1]).toBe(0);
    expect(by["static"]?.[0]).toBe(0);
    expect(by["static"]?.[1]).toBe(0);
    expect(by["static"]?.[5]).toBe(0);
    expect(by["static"]?.[6]).toBe(0);
    // Nobody spends less than the oracle; static costs the most of the two hindsight strategies.
    for (const s of ["policy", "native", "static"])
      expect(by[s]?.[3]).toBeGreaterThanOrEqual(by["oracle"]?.[3] ?? 0);
    expect(by["static"]?.[3]).toBeGreaterThan(by["oracle"]?.[3] ?? 0);
    expect(r.out).toMatch(/simulated 4 strategies × 2,880 minutes in \d+\.\d s/);
  });
});

describe("simulate on constant demand from the instance's size", () => {
  // The steady case (src/simulate/testing.ts): 6,000 connections all day, found at Premium_P1 × 20.
  const steadyFrom = (sku: string, units: number, ...more: string[]) =>
    cli([
      "simulate",
      "--policy",
      STEADY.policyFile,
      "--trace",
      STEADY.traceFile,
      "--peak-connections",
      String(STEADY.peakConnections),
      "--initial-sku",
      sku,
      "--initial-units",
      String(units),
      ...more,
    ]);
  const steady = (scaleMinutes: number, noise: string) =>
    steadyFrom(
      STEADY.initial.sku,
      STEADY.initial.units,
      "--scale-duration",
      `${scaleMinutes}m`,
      "--ingestion-delay",
      "3m",
      "--noise",
      noise,
      "--no-progress",
    );

  it.each(["0", "0.05"])(
    "scales once, and never back, for scales of 1 to 10 minutes (noise %s)",
    async (noise) => {
      for (let minutes = 1; minutes <= 10; minutes++) {
        const r = await steady(minutes, noise);
        expect(r.err).toBe("");
        expect(r.code).toBe(0);
        expect(r.out).toContain(
          "start: policy at Premium_P1 × 20, native at Premium_P1 × 20, from the instance's size (--initial-sku, --initial-units)",
        );
        const policy = tableRows(r.out).find((x) => x.strategy === "policy");
        expect({ minutes, ops: policy?.column["SCALE OPS"], reversals: policy?.column["REVERSALS"] }).toEqual(
          {
            minutes,
            ops: 1,
            reversals: 0,
          },
        );
        expect(policy?.column["PEAK UNITS"]).toBe(20);
      }
    },
  );

  it("says when the instance's SKU is not one the policy allows", async () => {
    const r = await steadyFrom("Standard_S1", 20, "--output", "json");
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.initial.policy).toEqual({ sku: "Standard_S1", units: 20 });
    expect(json.start.from).toBe("instance");
    expect(json.start.notes[0]).toMatch(/^Standard_S1 is not among the policy's SKUs/);
    const table = await steadyFrom("Standard_S1", 20);
    expect(table.out).toContain(
      "note: Standard_S1 is not among the policy's SKUs (Premium_P1, Premium_P2): its first decision moves the instance",
    );
  });
});

describe("simulate output", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "simulate-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("--output json has every strategy's figures", async () => {
    const r = await cli([
      "simulate",
      "--policy",
      POLICY,
      "--days",
      "1",
      "--output",
      "json",
      "--price",
      "Premium_P1=3",
    ]);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out);
    expect(json.strategies.map((s: { name: string }) => s.name)).toEqual([
      "policy",
      "native",
      "static",
      "oracle",
    ]);
    expect(json.trace.minutes).toBe(1440);
    expect(json.pricesUsdPerUnitDay.Premium_P1).toBe(3);
    const oracle = json.strategies[3];
    expect(oracle.cost).toBeCloseTo((oracle.unitHours.Premium_P1 / 24) * 3, 6);
    expect(json.native.sku).toMatch(/^Premium_P[12]$/);
  });

  it("--out writes the timeline CSV and the SVG chart and prints their paths", async () => {
    const r = await cli(["simulate", "--policy", POLICY, "--days", "0.5", "--out", dir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`timeline: ${join(dir, "timeline.csv")}`);
    expect(r.out).toContain(`chart: ${join(dir, "chart.svg")}`);
    const csv = (await readFile(join(dir, "timeline.csv"), "utf8")).trimEnd().split("\n");
    expect(csv[0]).toBe(
      "time,strategy,demand_connections,sku,units,load_percent,refused_connections,throttled",
    );
    expect(csv).toHaveLength(1 + 720 * 4);
    const svg = await readFile(join(dir, "chart.svg"), "utf8");
    expect(svg.startsWith("<svg")).toBe(true);
  });
});

describe("simulate usage errors: one line, exit 2", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "simulate-bad-"));
    await writeFile(join(dir, "bad.csv"), "time,count\n2015-01-01 00:00:00,1\n");
    await writeFile(
      join(dir, "bad.yaml"),
      "apiVersion: autoscaling.signalr.dev/v1alpha1\nkind: CapacityPolicy\nmetadata: { name: x }\nspec: { units: { min: 5, max: 2 } }\n",
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [["simulate"], /--policy FILE is required/],
    [["simulate", "--policy", "nope.yaml"], /cannot read --policy nope\.yaml: ENOENT/],
    [["simulate", "--policy", POLICY, "--trace", "nope.csv"], /cannot read --trace nope\.csv: ENOENT/],
    [["simulate", "--policy", POLICY, "--trace", "BAD_CSV"], /expected the header "timestamp,value"/],
    [["simulate", "--policy", "BAD_YAML"], /--policy .*bad\.yaml: /],
    [["simulate", "--policy", POLICY, "--days", "0"], /--days must be greater than 0/],
    [["simulate", "--policy", POLICY, "--scale-duration", "5 minutes"], /--scale-duration: invalid duration/],
    [["simulate", "--policy", POLICY, "--price", "Free_F1=1"], /--price: /],
    [["simulate", "--policy", POLICY, "--mix", "nosuch=1"], /--mix: SignalR has no scenario "nosuch"/],
    [["simulate", "--policy", POLICY, "--start", "yesterday"], /--start "yesterday" is not a time/],
    [
      ["simulate", "--policy", POLICY, "--initial-units", "20"],
      /--initial-sku and --initial-units go together/,
    ],
    [
      ["simulate", "--policy", POLICY, "--initial-sku", "Premium_P3", "--initial-units", "20"],
      /'--initial-sku <sku>' argument 'Premium_P3' is invalid. Allowed choices are Standard_S1, Premium_P1, Premium_P2/,
    ],
    [
      ["simulate", "--policy", POLICY, "--initial-sku", "Free_F1", "--initial-units", "1"],
      /'--initial-sku <sku>' argument 'Free_F1' is invalid/,
    ],
    [
      ["simulate", "--policy", POLICY, "--initial-sku", "Premium_P1", "--initial-units", "15"],
      /--initial-units 15 is not a unit count of Premium_P1 \(1–10, 20, 30 … 100\)/,
    ],
    [
      ["simulate", "--policy", POLICY, "--initial-sku", "Premium_P2", "--initial-units", "20"],
      /--initial-units 20 is not a unit count of Premium_P2 \(100, 200 … 1000\)/,
    ],
    [
      ["simulate", "--policy", POLICY, "--initial-sku", "Premium_P1", "--initial-units", "0"],
      /--initial-units must be at least 1, got "0"/,
    ],
  ])("%j", async (argv, message) => {
    const args = argv.map((a) =>
      a === "BAD_CSV" ? join(dir, "bad.csv") : a === "BAD_YAML" ? join(dir, "bad.yaml") : a,
    );
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(message);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });
});
