import { describe, expect, it } from "vitest";
import { formatSummary } from "./report.js";
import { firstScaleOutWhileDown, sizeAtFailover } from "./results.js";
import type { DemoResult, GroupResult, MemberResult } from "./settings.js";
import type { StagedMember } from "./setup.js";
import type { MemberTimelineRow } from "./timeline.js";
import { summarize } from "./timeline.js";

const T = Date.UTC(2015, 3, 14, 23, 22);
const MIN = 60_000;

const member = (
  name: string,
  role: MemberResult["role"],
  extra: Partial<MemberResult> = {},
): MemberResult => ({
  name,
  role,
  resourceId: `/subscriptions/s/resourceGroups/g/providers/Microsoft.SignalRService/SignalR/chat/${name}`,
  location: name,
  share: 0.5,
  policy: `chat-${name}`,
  summary: summarize([], { loadTargetPercent: 70 }),
  minutesNotServing: 0,
  ...extra,
});

function groupResult(group: Partial<GroupResult> & Pick<GroupResult, "members">): DemoResult {
  return {
    started: true,
    interrupted: false,
    summary: summarize([], { loadTargetPercent: 70 }),
    rows: [],
    files: undefined,
    replaySeconds: 20,
    wallSeconds: 30,
    operator: { passes: 10, failedPasses: 0, meanPassMs: 80, meanPassIntervalSeconds: 100 },
    anticipation: { mode: "Enabled", scaleOuts: [] },
    azureCalls: { armReads: 1, armWrites: 1, getBatch: 1 },
    cluster: { local: true, kubeconfig: "k", namespace: "ns" },
    group: {
      failoverRule: true,
      total: {
        unitHours: 0,
        minutesRefused: 0,
        refusedConnectionMinutes: 0,
        peakRefused: 0,
        minutesAboveTarget: 0,
        peakDemand: 0,
        scaleOperations: { total: 0, out: 0, in: 0 },
      },
      ...group,
    },
  };
}

const failover = (cause: string): NonNullable<GroupResult["failover"]> => ({
  member: "westus",
  cause,
  startMs: T,
  restoredMs: T + 60 * MIN,
  durationMs: 60 * MIN,
  connections: 59_714,
  minutes: 60,
  minutesRefused: 4,
  refusedConnectionMinutes: 1_234,
});

const line = (text: string, key: string) => text.split("\n").find((l) => l.trimStart().startsWith(key)) ?? "";

describe("group summary", () => {
  const members = [
    member("eastus", "Primary", { firstScaleOutMinutes: 6 }),
    member("westus", "Replica", { minutesNotServing: 60 }),
    member("westeurope", "Replica", { atFailover: { sku: "Premium_P1", units: 30, maxUnits: 300 } }),
  ];

  it("gives each survivor's first scale-out while the member was down in whole minutes, or none", () => {
    const text = formatSummary(groupResult({ members, failover: failover("stopped") }));
    expect(line(text, "eastus")).toMatch(/, first scale-out while westus was down: \+6 min$/);
    expect(line(text, "westeurope")).toMatch(
      /, first scale-out while westus was down: none \(Premium_P1 30 at the failure\)$/,
    );
    expect(line(text, "westus")).not.toContain("first scale-out");
    expect(line(text, "failover")).toContain(
      "westus stopped serving at 23:22 (stopped), restored at 00:22; its 59,714 clients reconnected to the others; during its 60 min the group refused in 4 of 60 minutes",
    );
  });

  it("says a survivor without a scale-out was already at its units.max", () => {
    const capped = [
      members[0] as MemberResult,
      members[1] as MemberResult,
      member("westeurope", "Replica", { atFailover: { sku: "Premium_P2", units: 300, maxUnits: 300 } }),
    ];
    const text = formatSummary(groupResult({ members: capped, failover: failover("stopped") }));
    expect(line(text, "westeurope")).toMatch(/: none \(Premium_P2 300 at the failure, its units\.max\)$/);
  });

  it("words a drain as one: no one disconnected, new connections elsewhere, clients move as theirs end", () => {
    const text = formatSummary(groupResult({ members, failover: failover("endpointDisabled") }));
    const f = line(text, "failover");
    expect(f).toContain(
      "westus drained from 23:22 (endpointDisabled), restored at 00:22: new connections went to the others, its 59,714 clients moved as their connections ended",
    );
    expect(f).not.toMatch(/stopped serving|reconnected/);
  });

  it("says when the Failover rule is off, in the title and on the anticipation line", () => {
    const on = formatSummary(groupResult({ members, failover: failover("stopped") }));
    expect(on).not.toContain("Failover rule off");
    const off = formatSummary(groupResult({ members, failover: failover("stopped"), failoverRule: false }));
    expect(off.split("\n")[0]).toMatch(/, 3 members, Failover rule off$/);
    expect(line(off, "anticipation")).toMatch(/; the Failover rule off \(--no-failover-rule\)$/);
  });
});

describe("first scale-out while the member is down", () => {
  const plan = { startMs: T, restoredMs: T + 60 * MIN, durationMs: 60 * MIN };
  const sent = (member: string, atMin: number) => ({
    member,
    time: T + atMin * 60_000,
    fromUnits: 1,
    toUnits: 2,
  });

  it("counts only scale-outs from the failover to the restore, in whole minutes", () => {
    const replay = {
      scaleOuts: [sent("eastus", -3), sent("eastus", 5.4), sent("eastus", 2.6), sent("westeurope", 195)],
    };
    expect(firstScaleOutWhileDown(replay, "eastus", plan)).toBe(3);
    expect(firstScaleOutWhileDown(replay, "westeurope", plan)).toBeUndefined();
  });

  it("ends at the planned duration when the run ended before the restore", () => {
    const replay = { scaleOuts: [sent("eastus", 61)] };
    expect(firstScaleOutWhileDown(replay, "eastus", { startMs: T, durationMs: 60 * MIN })).toBeUndefined();
    expect(firstScaleOutWhileDown(replay, "eastus", { startMs: T, durationMs: 90 * MIN })).toBe(61);
  });
});

describe("a survivor's size at the failure", () => {
  const row = (atMin: number, units: number) =>
    ({ time: T + atMin * MIN, sku: "Premium_P1", units }) as unknown as MemberTimelineRow;
  const staged = { policy: { spec: { units: { max: 100 } } } } as unknown as Pick<StagedMember, "policy">;

  it("is the row of the failure's minute, with the policy's units.max", () => {
    const rows = [row(-2, 10), row(-1, 20), row(0, 30), row(1, 40)];
    expect(sizeAtFailover(staged, rows, T + 20_000)).toEqual({
      atFailover: { sku: "Premium_P1", units: 30, maxUnits: 100 },
    });
  });

  it("is the last row before it when the failure's minute has none, and nothing before the first", () => {
    expect(sizeAtFailover(staged, [row(-3, 10), row(-2, 20)], T)).toEqual({
      atFailover: { sku: "Premium_P1", units: 20, maxUnits: 100 },
    });
    expect(sizeAtFailover(staged, [row(1, 10)], T)).toEqual({});
  });
});
