import { describe, expect, it } from "vitest";
import { MINUTE_MS } from "../../simulate/engine.js";
import type { MemberFigures, ReplicaComparison } from "../../simulate/replicas.js";
import { UsageError } from "../errors.js";
import {
  failoverRatio,
  parseFailover,
  parseReplicas,
  renderReplicas,
  replicasJson,
} from "./simulate-replicas.js";

const START = Date.parse("2015-03-01T00:00:00Z");

describe("--replicas", () => {
  it("reads name=share members, the primary first, shares normalized", () => {
    expect(parseReplicas("eastus=0.5,westus=0.3,westeurope=0.2")).toEqual([
      { name: "eastus", share: 0.5 },
      { name: "westus", share: 0.3 },
      { name: "westeurope", share: 0.2 },
    ]);
    expect(parseReplicas(" primary = 3 , replica-1 = 1 ").map((m) => m.share)).toEqual([0.75, 0.25]);
  });

  it.each([
    ["eastus=1", /2 to 9 members/],
    ["eastus=0.5,eastus=0.5", /listed twice/],
    ["eastus=0.5,westus", /not name=share/],
    ["eastus=0.5,westus=0", /share of westus must be a number > 0/],
    ["eastus=0.5,westus=abc", /share of westus/],
    ["eastus=0.5,1westus=0.5", /not a replica name/],
    ["eastus=0.5,w-=0.5", /not a replica name/],
  ])("refuses %s", (text, message) => {
    expect(() => parseReplicas(text)).toThrow(UsageError);
    expect(() => parseReplicas(text)).toThrow(message);
  });
});

describe("--failover", () => {
  const members = parseReplicas("eastus=0.5,westus=0.5");
  const demand = Float64Array.from([10, 30, 90, 20, 90]);
  const slice = { startMs: START, demand };

  it("takes the demand's first peak minute for @peak, with the duration", () => {
    expect(parseFailover("westus@peak", "2m", members, slice)).toEqual({
      member: "westus",
      startMs: START + 2 * MINUTE_MS,
      durationMs: 2 * MINUTE_MS,
    });
  });

  it("ends a failover longer than the rest of the slice at its end", () => {
    // The slice's 5 minutes end 3 minutes after its peak.
    expect(parseFailover("westus@peak", "60m", members, slice).durationMs).toBe(3 * MINUTE_MS);
  });

  it("takes a time in the slice, rounded down to its minute", () => {
    expect(parseFailover("eastus@2015-03-01T00:03:30Z", "90s", members, slice)).toEqual({
      member: "eastus",
      startMs: START + 3 * MINUTE_MS,
      durationMs: 90_000,
    });
  });

  it.each([
    ["westus", "60m", /member@peak or member@<time>/],
    ["centralus@peak", "60m", /not a member of --replicas \(eastus, westus\)/],
    ["westus@2015-03-02T00:00Z", "60m", /outside the simulated slice/],
    ["westus@yesterday", "60m", /not a time/],
    ["westus@peak", "30s", /at least 1m/],
    ["westus@peak", "soon", /--failover-duration/],
  ])("refuses %s for %s", (text, duration, message) => {
    expect(() => parseFailover(text, duration, members, slice)).toThrow(UsageError);
    expect(() => parseFailover(text, duration, members, slice)).toThrow(message);
  });
});

describe("the failover's ratio", () => {
  const figures = (minutes: number, connectionMinutes: number): MemberFigures[] => [
    {
      name: "total",
      minutesRefused: minutes,
      refusedConnectionMinutes: connectionMinutes,
      unitHours: 10,
      clientsDisconnected: 0,
      failoverMinutesRefused: minutes,
      failoverRefusedConnectionMinutes: connectionMinutes,
    },
  ];
  const comparison = (on: number, off: number): ReplicaComparison => ({
    members: [
      { name: "eastus", share: 0.5 },
      { name: "westus", share: 0.5 },
    ],
    failover: { member: "westus", startMs: START, durationMs: 60 * MINUTE_MS },
    pollMinutes: 1,
    initial: [],
    runs: [
      { failoverRule: true, members: [], figures: figures(on, on * 1000) },
      { failoverRule: false, members: [], figures: figures(off, off * 1000) },
    ],
  });

  it("prints on ÷ off and says plainly whether it is at most half", () => {
    expect(renderReplicas(comparison(4, 9), [])).toContain(
      "refused minutes during the failover, rule on ÷ off: 4 ÷ 9 = 0.44, within the target (at most 0.5 of the minutes refused with failover awareness off): met",
    );
    expect(renderReplicas(comparison(5, 9), [])).toContain("5 ÷ 9 = 0.56, above the target");
    expect(renderReplicas(comparison(5, 9), [])).toContain(": not met");
    expect(renderReplicas(comparison(0, 0), [])).toContain(
      "0 ÷ 0 — nothing refused without the rule nor with it",
    );
  });

  it("gives the same in the JSON", () => {
    expect(failoverRatio(comparison(12, 12))).toEqual({
      minutes: 1,
      connectionMinutes: 1,
      target: 0.5,
      met: false,
    });
    expect(replicasJson(comparison(1, 9))["failoverRatio"]).toMatchObject({ target: 0.5, met: true });
  });
});
