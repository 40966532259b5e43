import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type CapacityPolicy, parsePolicyYaml } from "../../api/index.js";
import { DEFAULT_TRACE, traceWindow } from "../../demo/index.js";
import { parseTrace } from "../../traffic/index.js";
import { UsageError } from "../errors.js";
import { parseFailoverCause, readDemoGroup } from "./demo-replicas.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const POLICY: CapacityPolicy = parsePolicyYaml(readFileSync(resolve(ROOT, "examples/demo.yaml"), "utf8"));
const TRACE = parseTrace(readFileSync(resolve(ROOT, DEFAULT_TRACE), "utf8"), DEFAULT_TRACE);
// Four hours around the flash crowd of 14 April 2015, whose top minute is 23:22.
const WINDOW = traceWindow(TRACE, Date.UTC(2015, 3, 14, 21, 30), 4 * 3_600_000);
const flags = (f: Partial<Parameters<typeof readDemoGroup>[0]>) => ({
  failoverDuration: "60m",
  failoverCause: "stopped",
  ...f,
});

describe("demo --replicas and --failover", () => {
  it("is the demo of one instance without --replicas", () => {
    expect(readDemoGroup(flags({}), POLICY, WINDOW, 200_000)).toBeUndefined();
  });

  it("reads the members (simulate's syntax) and a failover at the window's peak minute, stopped by default", () => {
    const group = readDemoGroup(
      flags({
        replicas: "eastus=0.5,westus=0.3,westeurope=0.2",
        failover: "westus@peak",
        failoverDuration: "45m",
      }),
      POLICY,
      WINDOW,
      200_000,
    );
    expect(group?.members).toEqual([
      { name: "eastus", share: 0.5 },
      { name: "westus", share: 0.3 },
      { name: "westeurope", share: 0.2 },
    ]);
    expect(group?.failover).toEqual({
      member: "westus",
      startMs: Date.UTC(2015, 3, 14, 23, 22),
      durationMs: 45 * 60_000,
      cause: "stopped",
    });
  });

  it("takes a failover at a time and another cause", () => {
    const group = readDemoGroup(
      flags({
        replicas: "eastus=1,westus=1",
        failover: "eastus@2015-04-14 22:05:30",
        failoverCause: "outage",
      }),
      POLICY,
      WINDOW,
      200_000,
    );
    expect(group?.failover).toMatchObject({
      member: "eastus",
      startMs: Date.UTC(2015, 3, 14, 22, 5),
      cause: "outage",
    });
  });

  it("--no-failover-rule: the group's policies without the Failover rule", () => {
    const group = readDemoGroup(
      flags({ replicas: "eastus=1,westus=1", failoverRule: false }),
      POLICY,
      WINDOW,
      200_000,
    );
    expect(group).toEqual({
      members: [
        { name: "eastus", share: 0.5 },
        { name: "westus", share: 0.5 },
      ],
      failoverRule: false,
    });
    expect(() => readDemoGroup(flags({ failoverRule: false }), POLICY, WINDOW, 200_000)).toThrow(
      /goes with --replicas/,
    );
  });

  it.each([
    [{ failover: "westus@peak" }, /--failover goes with --replicas/],
    [{ replicas: "eastus=1" }, /2 to 9 members/],
    [{ replicas: Array.from({ length: 10 }, (_, i) => `region${i}=1`).join(",") }, /2 to 9 members/],
    [{ replicas: "eastus=1,westus=1", failover: "northeurope@peak" }, /northeurope is not a member/],
    [{ replicas: "eastus=1,westus=1", failover: "westus@2015-04-15 03:00" }, /outside the simulated slice/],
    [
      { replicas: "eastus=1,westus=1", failover: "westus@peak", failoverCause: "gone" },
      /--failover-cause must be one of stopped, outage, endpointDisabled/,
    ],
  ])("refuses %j", (f, message) => {
    expect(() => readDemoGroup(flags(f), POLICY, WINDOW, 200_000)).toThrow(UsageError);
    expect(() => readDemoGroup(flags(f), POLICY, WINDOW, 200_000)).toThrow(message);
  });

  it("refuses a policy that cannot have replicas", () => {
    const onReplica = {
      ...POLICY,
      spec: {
        ...POLICY.spec,
        target: { ...POLICY.spec.target, resourceId: `${POLICY.spec.target.resourceId}/replicas/r-westus` },
      },
    };
    expect(() => readDemoGroup(flags({ replicas: "eastus=1,westus=1" }), onReplica, WINDOW, 200_000)).toThrow(
      /--replicas: the policy's target is a replica/,
    );
    const standard = { ...POLICY, spec: { ...POLICY.spec, skus: ["Standard_S1"] } } as CapacityPolicy;
    expect(() => readDemoGroup(flags({ replicas: "eastus=1,westus=1" }), standard, WINDOW, 200_000)).toThrow(
      /Premium feature/,
    );
    expect(parseFailoverCause("endpointDisabled")).toBe("endpointDisabled");
  });
});
