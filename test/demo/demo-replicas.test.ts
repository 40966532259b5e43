/**
 * `signalr-autoscaler demo --replicas … --failover …` end to end against the shared local control
 * plane (`--kubeconfig`): a primary and one geo-replica, a policy each, the replica stopped at the
 * demand's peak; the survivor scales out for its clients, the files and the summary show each
 * member. Usage errors of the flags.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type CapacityPolicy, GROUP, PLURAL, VERSION } from "../../src/api/index.js";
import { ExitCode } from "../../src/cli/errors.js";
import type { CliIo } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/program.js";
import type { DemoSummary } from "../../src/demo/index.js";
import { GROUP_TIMELINE_HEADER } from "../../src/demo/timeline.js";
import { createKubeClients, loadKubeConfig } from "../../src/kube/index.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PRIMARY =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/demo/providers/Microsoft.SignalRService/SignalR/chat-signalr";

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
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
    signal: new AbortController().signal,
  };
  return { code: await runCli(argv, io), out, err };
}

interface MemberJson {
  name: string;
  role: string;
  resourceId: string;
  policy: string;
  share: number;
  summary: DemoSummary;
  minutesNotServing: number;
  firstScaleOutMinutes?: number;
  atFailover?: { sku: string; units: number; maxUnits: number };
}

let dir: string;
const kubeconfig = () => inject("controlPlane").kubeconfigAdmin;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "demo-replicas-test-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("demo with geo-replicas", () => {
  it("creates the primary and its replica, a policy each, and the survivor scales out when the replica fails at the peak", async () => {
    const out = join(dir, "failover");
    const namespace = `demo-geo-${process.pid}`;
    const run = await cli([
      "demo",
      "--kubeconfig",
      kubeconfig(),
      "--namespace",
      namespace,
      "--start",
      "2015-04-14 22:30",
      "--duration",
      "2h",
      "--peak-connections",
      "100000",
      "--replicas",
      "eastus=0.5,westus=0.5",
      "--failover",
      "westus@peak",
      "--failover-duration",
      "30m",
      "--no-prometheus",
      "--out",
      out,
      "--output",
      "json",
    ]);
    expect(run.err).not.toMatch(/^error:/m);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.out) as {
      interrupted: boolean;
      summary: DemoSummary;
      operator: { passes: number; failedPasses: number };
      group: {
        members: MemberJson[];
        total: { unitHours: number; minutesRefused: number };
        failover: {
          member: string;
          cause: string;
          start: string;
          restored?: string;
          minutes: number;
          minutesRefused: number;
        };
      };
      files: { timeline: string; chart: string };
    };
    expect(result.interrupted).toBe(false);
    expect(result.operator.failedPasses).toBe(0);
    const [east, west] = result.group.members as [MemberJson, MemberJson];

    // The set-up: the policy's instance as the primary, its replica, one policy each.
    expect(east).toMatchObject({
      name: "eastus",
      role: "Primary",
      resourceId: PRIMARY,
      policy: "chat-eastus",
      share: 0.5,
    });
    expect(west).toMatchObject({
      name: "westus",
      role: "Replica",
      resourceId: `${PRIMARY}/replicas/chat-signalr-westus`,
      policy: "chat-westus",
    });
    const kube = createKubeClients(loadKubeConfig({ kind: "file", path: kubeconfig() }));
    const list = (await kube.customObjects.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: PLURAL,
    })) as { items: CapacityPolicy[] };
    const targets = Object.fromEntries(list.items.map((p) => [p.metadata.name, p.spec.target.resourceId]));
    expect(targets).toEqual({ "chat-eastus": east.resourceId, "chat-westus": west.resourceId });
    const apps = await kube.apps.listNamespacedDeployment({ namespace });
    expect(apps.items.map((d) => d.metadata?.name).sort()).toEqual(["chat-hub-eastus", "chat-hub-westus"]);

    // The failover: at the peak (23:22), stopped (ARM's resourceStopped), for 30 minutes.
    expect(result.group.failover).toMatchObject({ member: "westus", cause: "stopped", minutes: 30 });
    expect(result.group.failover.start).toMatch(/^2015-04-14T23:22:/);
    expect(result.group.failover.restored).toMatch(/^2015-04-14T23:52:/);
    expect(west.minutesNotServing).toBeGreaterThanOrEqual(29);
    expect(west.minutesNotServing).toBeLessThanOrEqual(31);
    // Both served the crowd before; the survivor scaled out for the clients it received.
    expect(east.summary.peakConnections).toBeGreaterThan(60_000);
    // A scale-out while westus was down is counted in whole minutes after the failover. There
    // may be none: the standing failover reserve can have raised eastus past Premium_P1 × 100
    // just before the peak, and the failover's own ask may then need no more (it reads the
    // survivor's need before the arrivals only when a pass sees the loss before Azure Monitor
    // shows them). Either way eastus ran on Premium_P2 while westus was down, refusing little.
    if (east.firstScaleOutMinutes !== undefined) {
      expect(Number.isInteger(east.firstScaleOutMinutes)).toBe(true);
      expect(east.firstScaleOutMinutes).toBeLessThan(30);
    }
    expect(west.firstScaleOutMinutes).toBeUndefined();
    expect(east.summary.peakUnits).toBeGreaterThan(100);
    expect(result.group.failover.minutesRefused).toBeLessThanOrEqual(5);
    expect(result.group.total.unitHours).toBeCloseTo(
      east.summary.totalUnitHours + west.summary.totalUnitHours,
      0,
    );

    // The live view names the members and the failover.
    expect(run.err).toMatch(/^\d\d:\d\d {2}eastus {2}load +\d+ %/m);
    expect(run.err).toMatch(/^23:2\d {2}westus {2}load +\? .* NotServing \(stopped\)/m);
    expect(run.err).toMatch(
      /^23:22 {2}failover {2}westus stops serving \(stopped: ARM shows resourceStopped "true"\)/m,
    );
    expect(run.err).toMatch(/^23:5\d {2}restore {3}westus serves again/m);
    expect(run.err).toMatch(/^\d\d:\d\d {2}eastus {2}event {2}Normal {2}ScalingOut /m);

    const csv = (await readFile(result.files.timeline, "utf8")).trimEnd().split("\n");
    expect(csv[0]).toBe(GROUP_TIMELINE_HEADER);
    expect(csv).toHaveLength(1 + 120 * 2);
    const down = csv.filter((l) => l.includes(",westus,") && l.endsWith(",0"));
    expect(down.length).toBe(west.minutesNotServing);
    // The survivor's units (column 8) while westus was down: Premium_P2 sizes within 8 minutes (a poll, then a scale).
    const downTimes = new Set(down.map((l) => l.split(",")[0]));
    const eastDown = csv.filter((l) => l.includes(",eastus,") && downTimes.has(l.split(",")[0]));
    expect(eastDown).toHaveLength(down.length);
    const eastUnits = eastDown.map((l) => Number(l.split(",")[8]));
    expect(eastUnits.slice(8).every((u) => u >= 200)).toBe(true);
    // A scale-out started while westus was down — units rising after a row with no update in
    // flight (column 10) — is counted, whenever its pass was reported; with none, the summary says
    // the size eastus had in the failure's minute.
    const idle = eastDown.findIndex((l) => l.split(",")[10] === "0");
    const raisedWhileDown = idle >= 0 && eastUnits.slice(idle).some((u) => u > (eastUnits[idle] as number));
    if (raisedWhileDown) expect(east.firstScaleOutMinutes).toBeDefined();
    if (east.firstScaleOutMinutes === undefined) expect(east.atFailover?.units).toBe(eastUnits[0]);
    // Its app servers' replicas while it did not serve, as the live view shows them.
    for (const l of down) expect(l.split(",")[9]).toMatch(/^\d+$/);
    // The live view prints its lines in virtual-time order (each time after its date line).
    let date = "";
    const times: string[] = [];
    for (const l of run.err.split("\n")) {
      date = /^── (\d{4}-\d\d-\d\d) \(UTC\)/.exec(l)?.[1] ?? date;
      const hhmm = /^(\d\d:\d\d) /.exec(l)?.[1];
      if (hhmm) times.push(`${date}T${hhmm}`);
    }
    expect(times.length).toBeGreaterThan(20);
    expect(times.filter((t, i) => i > 0 && t < (times[i - 1] as string))).toEqual([]);
    const svg = await readFile(result.files.chart, "utf8");
    for (const text of ["eastus", "westus", "westus down", "refused connections"])
      expect(svg).toContain(text);
  });

  it.each([
    [["--failover", "westus@peak"], /--failover goes with --replicas/],
    [["--replicas", "eastus=1"], /--replicas needs 2 to 9 members/],
    [["--replicas", "eastus=1,westus=1", "--failover", "northeurope@peak"], /northeurope is not a member/],
    [
      ["--replicas", "eastus=1,westus=1", "--failover", "westus@peak", "--failover-cause", "gone"],
      /--failover-cause must be one of/,
    ],
    [
      ["--replicas", "eastus=1,westus=1", "--policy", "examples/signalr-replica.yaml"],
      /--replicas: the policy's target is a replica/,
    ],
  ])("refuses %j with one line and exit 2", async (flags, message) => {
    const run = await cli(["demo", "--kubeconfig", kubeconfig(), ...flags]);
    expect(run.code).toBe(ExitCode.usage);
    expect(run.err).toMatch(message);
    expect(run.out).toBe("");
  });
});
