/**
 * The shipped chat example on a traffic shape it was not written for: `traces/elb_request_count_8c0756.csv`
 * (an AWS load balancer's requests, 14 days, spikes an hour or two apart), `simulate` with the
 * settings docs/simulate.md ("Other traffic shapes") measures every shape on. The example keeps a
 * crowd's peak 45 minutes; with the 10-minute scale-down window it had before, each spike found
 * the instance scaled in after the last one. The example before the disruption weighing (70 % /
 * 80 %, a 30-minute window) refused in 23 minutes there, at 28,964.3 unit-hours.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCaptured } from "../../src/cli/test-io.js";

const ROOT = resolve(import.meta.dirname, "../..");
const SETTINGS = [
  "--trace",
  "traces/elb_request_count_8c0756.csv",
  "--peak-connections",
  "120000",
  "--scale-duration",
  "5m",
  "--ingestion-delay",
  "3m",
  "--seed",
  "simulate",
  "--noise",
  "0.05",
  "--native-sku",
  "Premium_P1",
  "--no-reference",
  "--output",
  "json",
];

interface Figures {
  minutesRefused: number;
  totalUnitHours: number;
  clientsDisconnected: number;
}

/**
 * The policy's figures from `simulate --output json` of `policyFile`, with every strategy's figures
 * as a line of text (the message of a failed assertion).
 */
async function policyFigures(policyFile: string): Promise<Figures & { all: string }> {
  const run = await runCaptured(["simulate", "--policy", policyFile, ...SETTINGS], ROOT);
  expect(run.code, run.err).toBe(0);
  const out = JSON.parse(run.out) as { strategies: (Figures & { name: string })[] };
  const policy = out.strategies.find((s) => s.name === "policy");
  if (!policy) throw new Error("no policy strategy in the output");
  const all = out.strategies
    .map((s) => `${s.name} ${s.minutesRefused} / ${s.totalUnitHours} / ${s.clientsDisconnected}`)
    .join("; ");
  return { ...policy, all: `${policyFile}: ${all}` };
}

describe("the chat example on spikes an hour apart", { timeout: 120_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "shapes-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("its 45-minute scale-down window keeps the capacity the next spike needs; 10 minutes does not", async () => {
    const example = await readFile(join(ROOT, "examples/signalr-chat.yaml"), "utf8");
    expect(example).toMatch(/stabilizationWindowSeconds: 2700\b/);
    const tenMinutes = join(dir, "ten-minutes.yaml");
    await writeFile(
      tenMinutes,
      example.replace(/stabilizationWindowSeconds: 2700\b/, "stabilizationWindowSeconds: 600"),
    );
    const shipped = await policyFigures("examples/signalr-chat.yaml");
    const before = await policyFigures(tenMinutes);
    // Fewer refusing minutes than the example before the disruption weighing (23), at 1.05 × its
    // unit-hours; the 10-minute window refuses in 250 at 0.77 ×.
    expect(shipped.minutesRefused, shipped.all).toBe(18);
    expect(shipped.totalUnitHours, shipped.all).toBeCloseTo(30_345.5, 0);
    expect(before.minutesRefused, before.all).toBe(250);
    expect(before.totalUnitHours, before.all).toBeCloseTo(22_388.9, 0);
    // And it disconnects fewer clients: the peaks it keeps are not scaled in and out again.
    expect(shipped.clientsDisconnected).toBeLessThan(before.clientsDisconnected * 0.5);
  });
});
