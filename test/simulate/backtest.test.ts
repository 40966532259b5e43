/**
 * `simulate --resource-id` end to end: the CLI reads an instance from the HTTPS emulator with the
 * real Azure SDK clients (ARM for its region, metrics:getBatch at PT5M / PT1H for its history)
 * and backtests the policy on the measured connections, as on a trace; wrong flag combinations
 * are one line and exit 2, an instance Azure does not know is exit 1.
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCaptured } from "../../src/cli/test-io.js";
import { createVirtualClock, type RunningEmulator, startEmulator } from "../../src/emulator/index.js";
import { dailyPattern } from "../../src/traffic/index.js";
import { emulatorCliFlags, signalrId, webPubSubId } from "../azure/helpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const POLICY = "examples/signalr-chat.yaml";
/** The emulator's clock: 2025-03-05 18:00 UTC, stopped. */
const NOW = new Date("2025-03-05T18:00:00Z");
const CHAT = signalrId("chat-signalr");

describe("simulate --resource-id against the emulator", { timeout: 120_000 }, () => {
  let emu: RunningEmulator;

  beforeAll(async () => {
    emu = await startEmulator({
      clock: createVirtualClock({ start: NOW, speed: 0 }),
      noiseAmplitude: 0,
      instances: [
        {
          resourceId: CHAT,
          location: "westeurope",
          sku: "Premium_P1",
          units: 20,
          demand: { kind: "pattern", pattern: dailyPattern(14, 0.25), peakConnections: 12_000 },
        },
      ],
    });
  });
  afterAll(async () => {
    await emu?.stop();
  });

  const azureFlags = () => emulatorCliFlags(emu);

  /** `simulate` of the example policy on `CHAT` up to the emulator's now, with `args`. */
  const backtest = (...args: string[]) =>
    runCaptured(
      [
        "simulate",
        "--policy",
        POLICY,
        "--resource-id",
        CHAT,
        "--end",
        NOW.toISOString(),
        ...azureFlags(),
        ...args,
      ],
      ROOT,
    );

  it("backtests the policy on the instance's last two days of measured connections", async () => {
    const { code, out, err } = await backtest("--days", "2", "--output", "json");
    expect(err).toBe("");
    expect(code).toBe(0);
    const result = JSON.parse(out);
    expect(result.trace).toBeUndefined();
    // 18:00 less the 10 minutes a bucket needs to settle: 5-minute buckets up to 17:50, two days back.
    expect(result.instance).toMatchObject({
      resourceId: CHAT,
      region: "westeurope",
      grain: "5m",
      days: 2,
      start: "2025-03-03T17:50Z",
      end: "2025-03-05T17:50Z",
      buckets: 2 * 288,
    });
    // The daily cycle, as measured: a peak of about 12,000 at 14:00 on each day (no scaling).
    expect(result.instance.peakConnections).toBeGreaterThan(11_900);
    expect(result.instance.peakConnections).toBeLessThan(12_300);
    expect(result.demand.peakConnections).toBe(result.instance.peakConnections);
    expect(result.instance.peakBytesPerSecond).toBeGreaterThan(0);
    expect(result.strategies.map((s: { name: string }) => s.name)).toEqual([
      "policy",
      "native-p1",
      "native-p2",
      "static",
      "oracle",
    ]);
    const oracle = result.strategies.find((s: { name: string }) => s.name === "oracle");
    // 12,000 connections at the 70 % load target need 20 units on Premium_P1's ladder.
    expect(oracle.peakUnits).toBe(20);
    expect(oracle.minutes).toBe(result.instance.minutes);
  });

  it("reads hourly buckets with --grain 1h, and prints the table with the instance as the source", async () => {
    const { code, out } = await backtest("--days", "3", "--grain", "1h");
    expect(code).toBe(0);
    expect(out).toMatch(/^simulate: policy chat on chat-signalr, 2025-03-02T17:00Z → /);
    expect(out).toMatch(/demand: chat-signalr's connections from Azure Monitor \(1h peaks, 72 buckets\)/);
    expect(out).toMatch(/^oracle /m);
  });

  it("refuses flags that do not go with it in one line (exit 2), and fails on an unknown instance (exit 1)", async () => {
    const base = ["simulate", "--policy", POLICY, ...azureFlags()];
    const cases: [string[], RegExp][] = [
      [["--resource-id", CHAT, "--trace", "traces/nyc_taxi.csv"], /give --trace or --resource-id, not both/],
      [["--resource-id", CHAT, "--peak-connections", "5000"], /--peak-connections scales a trace/],
      [["--resource-id", "/subscriptions/x/nope"], /--resource-id: malformed resource ID/],
      [["--resource-id", webPubSubId("wps-chat")], /is a WebPubSub instance but the policy targets SignalR/],
      [["--resource-id", CHAT, "--days", "100"], /--days/],
    ];
    for (const [args, message] of cases) {
      const { code, err } = await runCaptured([...base, ...args], ROOT);
      expect(code).toBe(2);
      expect(err).toMatch(message);
      expect(err.trim().split("\n")).toHaveLength(1);
    }
    const unknown = await runCaptured(
      [...base, "--resource-id", signalrId("missing-one"), "--end", NOW.toISOString()],
      ROOT,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/cannot read instance .*missing-one/);
  });
});
