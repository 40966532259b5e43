import { describe, expect, it } from "vitest";
import { UsageError } from "./errors.js";
import { MAX_MEMBERS, parseFailover, parseFailoverCause, parseReplicas } from "./replica-flags.js";

const T0 = Date.UTC(2015, 3, 14, 21, 30);
const WINDOW = { startMs: T0, endMs: T0 + 4 * 3_600_000, peakMs: Date.UTC(2015, 3, 14, 23, 22, 30) };

describe("--replicas", () => {
  it("reads the members in order, the first the primary, shares normalized to 1", () => {
    expect(parseReplicas("eastus=0.5,westus=0.3,westeurope=0.2")).toEqual([
      { name: "eastus", share: 0.5 },
      { name: "westus", share: 0.3 },
      { name: "westeurope", share: 0.2 },
    ]);
    const [a, b] = parseReplicas(" eastus = 3 , westus=1 ,");
    expect(a).toEqual({ name: "eastus", share: 0.75 });
    expect(b).toEqual({ name: "westus", share: 0.25 });
  });

  it.each([
    ["eastus", /"eastus" is not name=share/],
    ["eastus=1", /needs 2 to 9 members/],
    ["eastus=1,westus", /"westus" is not name=share/],
    ["eastus=1,westus=1=2", /"westus=1=2" is not name=share/],
    ["eastus=1,1west=1", /"1west" is not a replica name/],
    ["eastus=1,west_us=1", /"west_us" is not a replica name/],
    ["eastus=1,westus=0", /the share of westus must be a number > 0, got "0"/],
    ["eastus=1,westus=-1", /the share of westus must be a number > 0/],
    ["eastus=1,westus=lots", /the share of westus must be a number > 0, got "lots"/],
    ["eastus=1,EastUS=1", /EastUS is listed twice/],
  ])("refuses %j", (text, message) => {
    expect(() => parseReplicas(text)).toThrow(UsageError);
    expect(() => parseReplicas(text)).toThrow(message);
  });

  it("takes the primary and up to 8 replicas (Azure's limit per primary resource)", () => {
    const names = (k: number) => Array.from({ length: k }, (_, i) => `region${i}=1`).join(",");
    expect(parseReplicas(names(MAX_MEMBERS))).toHaveLength(9);
    expect(() => parseReplicas(names(MAX_MEMBERS + 1))).toThrow(/needs 2 to 9 members/);
  });
});

describe("--failover", () => {
  const members = parseReplicas("eastus=0.5,westus=0.5");

  it("at the peak: the window's peak minute, for --failover-duration", () => {
    expect(parseFailover("westus@peak", "45m", members, WINDOW)).toEqual({
      member: "westus",
      startMs: Date.UTC(2015, 3, 14, 23, 22),
      durationMs: 45 * 60_000,
    });
  });

  it("at a time within the window, rounded down to its minute", () => {
    expect(parseFailover("eastus@2015-04-14T22:10:40Z", "1h", members, WINDOW)).toEqual({
      member: "eastus",
      startMs: Date.UTC(2015, 3, 14, 22, 10),
      durationMs: 3_600_000,
    });
  });

  it.each([
    ["westus", "60m", /must be member@peak or member@<time>/],
    ["@peak", "60m", /must be member@peak or member@<time>/],
    ["northeurope@peak", "60m", /northeurope is not a member of --replicas \(eastus, westus\)/],
    ["westus@peak", "30s", /--failover-duration must be at least 1m/],
    ["westus@peak", "soon", /--failover-duration/],
    ["westus@yesterday", "60m", /--failover "yesterday" is not a time/],
    ["westus@2015-04-15T02:00Z", "60m", /is outside the window/],
    ["westus@2015-04-14T21:00Z", "60m", /is outside the window/],
  ])("refuses %j for %j", (text, duration, message) => {
    expect(() => parseFailover(text, duration, members, WINDOW)).toThrow(UsageError);
    expect(() => parseFailover(text, duration, members, WINDOW)).toThrow(message);
  });

  it("--failover-cause: stopped, outage or endpointDisabled", () => {
    expect(parseFailoverCause("stopped")).toBe("stopped");
    expect(parseFailoverCause("endpointDisabled")).toBe("endpointDisabled");
    expect(() => parseFailoverCause("Stopped")).toThrow(/must be one of stopped, outage, endpointDisabled/);
  });
});
