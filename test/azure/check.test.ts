/**
 * `signalr-autoscaler check` as a user runs it, against the emulator over HTTPS with the real SDK
 * clients: in its normal mode every read answers (exit 0), and in its refusing modes — the
 * emulator's fault rules: 404 on the instance, 403 AuthorizationFailed on the metrics, 429 with
 * Retry-After, one metric answered with an error code — the rows and the exit code say so. In
 * every mode nothing is written: the emulator's request log has GETs and getBatch POSTs only.
 *
 * The emulator's clock runs at real time from now: `check` reads the wall clock, as on a real
 * subscription.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runCaptured } from "../../src/cli/test-io.js";
import {
  createVirtualClock,
  type FaultSpec,
  FaultSpecError,
  type RunningEmulator,
  startEmulator,
} from "../../src/emulator/index.js";
import { emulatorCliFlags, signalrId } from "./helpers.js";

const CHAT = signalrId("chat-prod-we");
const MISSING = signalrId("chat-prod-ne");
const REPO = new URL("../..", import.meta.url).pathname;

interface Row {
  check: string;
  result: "OK" | "WARN" | "FAIL" | "SKIP";
  detail: string[];
  action?: string;
  error?: Record<string, unknown>;
}

describe("signalr-autoscaler check against the emulator", { timeout: 60_000 }, () => {
  let emu: RunningEmulator;
  let dir: string;

  beforeAll(async () => {
    emu = await startEmulator({
      clock: createVirtualClock({ start: new Date(), speed: 1 }),
      scaleDurationMs: 120_000,
      ingestionDelayMs: 180_000,
      instances: [
        {
          resourceId: CHAT,
          location: "westeurope",
          sku: "Premium_P1",
          units: 10,
          connections: 4000,
        },
      ],
    });
    dir = await mkdtemp(join(tmpdir(), "check-"));
  });
  afterAll(async () => {
    await emu?.stop();
  });
  beforeEach(() => {
    emu.control.clearFaults();
    emu.control.resetRequests();
  });

  /** The Azure flags of `run`, pointed at the emulator. */
  const azureFlags = () => [...emulatorCliFlags(emu), "--azure-request-timeout", "10"];

  /** `check` of `what` (`--resource-id ID` or `--policy FILE`) with `more` flags. */
  const check = (what: string[], ...more: string[]) =>
    runCaptured(["check", ...what, ...azureFlags(), ...more], REPO);

  async function json(what: string[], ...more: string[]) {
    const r = await check(what, "-o", "json", ...more);
    expect(r.err).toBe("");
    const body = JSON.parse(r.out) as { rows: Row[]; exitCode: number; summary: Record<string, number> };
    expect(body.exitCode).toBe(r.code);
    return { ...body, code: r.code };
  }

  const byCheck = (rows: readonly Row[]) => Object.fromEntries(rows.map((r) => [r.check, r]));

  /** Asserts that nothing was written: every request a GET, or a getBatch POST (a query). */
  function assertReadOnly(): void {
    const requests = emu.control.requests();
    expect(requests.length).toBeGreaterThan(0);
    const writes = requests.filter(
      (r) => !(r.method === "GET" || (r.method === "POST" && r.kind === "getBatch")),
    );
    expect(writes).toEqual([]);
    expect(emu.control.calls().armWrites).toBe(0);
  }

  /** The getBatch requests the emulator served. */
  const getBatches = () => emu.control.requests().filter((r) => r.kind === "getBatch");

  it("normal mode: every read answers as the operator needs; exit 0; one row per getBatch the emulator served", async () => {
    const r = await json(["--resource-id", CHAT]);
    expect(r.code).toBe(0);
    const rows = byCheck(r.rows);
    const metricsRows = r.rows.filter((x) => x.check.startsWith("metrics query "));
    expect(metricsRows.length).toBeGreaterThan(0);
    expect(metricsRows.length).toBe(getBatches().length);
    for (const x of r.rows) {
      expect(`${x.check}: ${x.result}`).toBe(
        `${x.check}: ${x.check === "permission Microsoft.SignalRService/SignalR/write" ? "SKIP" : "OK"}`,
      );
    }
    expect(rows["instance (GET)"]?.detail).toEqual([
      "Premium_P1 × 10 units, provisioning state Succeeded, location westeurope",
    ]);
    expect(rows["unit ladders (listSkus)"]?.detail).toEqual([
      "Standard_S1: 1–10, 20–100 by 10 (as the built-in ladder)",
      "Premium_P1: 1–10, 20–100 by 10 (as the built-in ladder)",
      "Premium_P2: 100–1,000 by 100 (as the built-in ladder)",
    ]);
    // Every metric of SignalR is asked for, each with values up to the ingestion delay.
    const asked = metricsRows.flatMap((x) => x.detail.slice(1).map((line) => line.split(":")[0]));
    expect(asked.sort()).toEqual(
      [
        "ConnectionCount",
        "ConnectionQuotaUtilization",
        "InboundTraffic",
        "MessageCount",
        "OutboundTraffic",
        "ServerLoad",
      ].sort(),
    );
    for (const x of metricsRows) {
      expect(x.detail[0]).toMatch(
        /^POST metrics:getBatch \(westeurope\): .*; aggregation \w+(,\w+)*, interval PT1M, /,
      );
      for (const line of x.detail.slice(1))
        expect(line).toMatch(/: ([7-9]|1\d) of 1[12] points with a value, newest /);
    }
    expect(rows["unit quota (usages)"]?.detail).toEqual([
      "SignalRTotalUnits in westeurope: 10 units in use, no quota set",
    ]);
    expect(rows["native autoscale settings"]?.detail).toEqual([
      "none of the subscription's autoscale settings targets the instance",
    ]);
    expect(rows["ARM request budget"]?.detail[0]).toMatch(/^\d+ reads left in the subscription's bucket/);
    assertReadOnly();
  });

  it("normal mode from a policy with a seasonal forecast: the history reads are the operator's too", async () => {
    const example = await readFile(join(REPO, "examples/signalr-chat.yaml"), "utf8");
    const policy = join(dir, "chat.yaml");
    await writeFile(policy, example.replace(/resourceId: \S+/, `resourceId: ${CHAT}`));
    const r = await json(["--policy", policy]);
    expect(r.code).toBe(0);
    const metricsRows = r.rows.filter((x) => x.check.startsWith("metrics query "));
    expect(metricsRows.length).toBe(getBatches().length);
    const history = metricsRows.filter((x) => x.detail[0]?.includes("(the seasonal forecast's history)"));
    // 14 days at PT5M in calls of at most 2,016 points per series (7 days): the served getBatch
    // requests of a span longer than a day, one row each.
    const days = getBatches().filter(
      (b) => b.span && Date.parse(b.span.end) - Date.parse(b.span.start) > 86_400_000,
    );
    expect(history.length).toBeGreaterThanOrEqual(2);
    expect(history).toHaveLength(days.length);
    for (const x of history) {
      expect(x.result).toBe("OK");
      expect(x.detail[0]).toContain("interval PT5M");
      expect(x.detail[0]).toMatch(/, \d{4}-\d\d-\d\d \d\d:\d\d UTC – \d{4}-\d\d-\d\d \d\d:\d\d UTC \(/);
    }
    assertReadOnly();
  });

  it("refusing mode, a unit quota below the policy's units.max: WARN naming the size Azure refuses above; exit 0, 1 with --strict", async () => {
    const policy = join(dir, "quota-policy.yaml");
    await writeFile(
      policy,
      [
        "apiVersion: autoscaling.signalr.dev/v1alpha1",
        "kind: CapacityPolicy",
        "metadata: { name: chat, namespace: chat }",
        "spec:",
        `  target: { service: SignalR, resourceId: ${CHAT} }`,
        "  units: { min: 2, max: 50 }",
        "  metrics: { serverLoad: { targetPercent: 70 } }",
        "  mode: Auto",
      ].join("\n"),
    );
    emu.control.setQuota({ units: 30 });
    try {
      const r = await json(["--policy", policy]);
      expect(r.code).toBe(0);
      expect(byCheck(r.rows)["unit quota (usages)"]).toMatchObject({
        result: "WARN",
        detail: [
          "SignalRTotalUnits in westeurope: 10 units in use of a quota of 30",
          "room for 20 more: the instance can grow to 30 units, below the policy's units.max 50: Azure refuses a scale-out above 30 units (409 OperationNotAllowed) and the operator holds its size until the spec changes",
          "raise the quota (Azure portal: Quotas, or a support request) or lower units.max",
        ],
      });
      expect((await json(["--policy", policy], "--strict")).code).toBe(1);
      assertReadOnly();
    } finally {
      emu.control.clearQuotas();
    }
  });

  it("refusing mode, 404 on the instance: FAIL naming the resource ID; exit 1; nothing written", async () => {
    emu.control.addFault({
      method: "GET",
      path: "**/SignalR/chat-prod-we",
      action: {
        kind: "status",
        status: 404,
        code: "ResourceNotFound",
        message:
          "The Resource 'Microsoft.SignalRService/SignalR/chat-prod-we' under resource group 'rg-chat' was not found.",
      },
    });
    const r = await json(["--resource-id", CHAT]);
    expect(r.code).toBe(1);
    expect(byCheck(r.rows)["instance (GET)"]).toMatchObject({
      result: "FAIL",
      detail: [
        `404 ResourceNotFound: no instance ${CHAT}: check its subscription, resource group, name and type (SignalR or WebPubSub)`,
        "Azure: 404 ResourceNotFound: The Resource 'Microsoft.SignalRService/SignalR/chat-prod-we' under resource group 'rg-chat' was not found.",
      ],
      error: { kind: "NotFound", status: 404, code: "ResourceNotFound" },
    });
    expect(r.summary["FAIL"]).toBe(1);
    assertReadOnly();
  });

  it("a resource ID of no instance: the GET fails, the list lacks it, the metrics are not read (their endpoint is regional)", async () => {
    const r = await json(["--resource-id", MISSING]);
    expect(r.code).toBe(1);
    const rows = byCheck(r.rows);
    expect(rows["instance (GET)"]?.result).toBe("FAIL");
    expect(rows["instance (GET)"]?.detail[0]).toBe(
      `404 ResourceNotFound: no instance ${MISSING}: check its subscription, resource group, name and type (SignalR or WebPubSub)`,
    );
    expect(rows["instances (list)"]).toMatchObject({
      result: "WARN",
      detail: [expect.stringMatching(/, not the target: it is not in the subscription either$/)],
    });
    // listSkus of a missing instance is a consequence, not a refusal of its own.
    expect(rows["unit ladders (listSkus)"]?.result).toBe("WARN");
    expect(rows["metrics"]).toEqual({
      check: "metrics",
      result: "SKIP",
      detail: ["the instance's region is unknown (its read failed): the metrics endpoint is regional"],
    });
    expect(getBatches()).toHaveLength(0);
    assertReadOnly();
  });

  it("refusing mode, 403 AuthorizationFailed on the metrics: each query and the permission FAIL, naming the action; exit 1", async () => {
    emu.control.addFault({
      method: "POST",
      path: "**/metrics:getBatch",
      action: {
        kind: "status",
        status: 403,
        code: "AuthorizationFailed",
        message:
          "The client 'f3a1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b' with object id 'f3a1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b' does not have authorization to perform action 'Microsoft.Insights/metrics/read' over scope '/subscriptions/11111111-1111-1111-1111-111111111111' or the scope is invalid.",
      },
    });
    const r = await json(["--resource-id", CHAT]);
    expect(r.code).toBe(1);
    const metricsRows = r.rows.filter((x) => x.check.startsWith("metrics query "));
    expect(metricsRows.length).toBe(getBatches().length);
    for (const x of metricsRows) {
      expect(x.result).toBe("FAIL");
      expect(x.action).toBe("Microsoft.Insights/metrics/read");
      expect(x.detail.slice(1)).toEqual([
        "403 AuthorizationFailed: the principal lacks Microsoft.Insights/metrics/read on the instance — assign Monitoring Reader",
        "Azure: 403 AuthorizationFailed: The client 'f3a1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b' with object id 'f3a1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b' does not have authorization to perform action 'Microsoft.Insights/metrics/read' over scope '/subscriptions/11111111-1111-1111-1111-111111111111' or the scope is invalid.",
      ]);
    }
    expect(byCheck(r.rows)["permission Microsoft.Insights/metrics/read"]?.result).toBe("FAIL");
    // The ARM reads are untouched.
    expect(byCheck(r.rows)["instance (GET)"]?.result).toBe("OK");
    assertReadOnly();
  });

  it("refusing mode, 429 with Retry-After on the metrics: WARN with the wait, not checked; exit 0, and 1 with --strict", async () => {
    const throttle: FaultSpec = {
      method: "POST",
      path: "**/metrics:getBatch",
      action: {
        kind: "status",
        status: 429,
        code: "TooManyRequests",
        message: "Rate limit exceeded.",
        retryAfterSeconds: 20,
      },
    };
    emu.control.addFault(throttle);
    const r = await json(["--resource-id", CHAT]);
    expect(r.code).toBe(0);
    const metricsRows = r.rows.filter((x) => x.check.startsWith("metrics query "));
    expect(metricsRows[0]).toMatchObject({ result: "WARN" });
    expect(metricsRows[0]?.detail[1]).toMatch(
      /^429 TooManyRequests: throttled, Azure asks to wait 20 s \(until \d\d:\d\d:\d\d UTC\): not checked — run check again after it$/,
    );
    // A second query of the same scope is not sent: the wait Azure asked for holds.
    for (const x of metricsRows.slice(1)) {
      expect(x.detail[1]).toMatch(/^not sent: an earlier answer of this scope asked to wait until /);
    }
    expect(getBatches()).toHaveLength(1);
    expect(byCheck(r.rows)["permission Microsoft.Insights/metrics/read"]?.result).toBe("SKIP");

    emu.control.resetRequests();
    const strict = await json(["--resource-id", CHAT], "--strict");
    expect(strict.code).toBe(1);
    assertReadOnly();
  });

  it("refusing mode, one metric answered with an error code: FAIL with Azure's code and message; the others stand", async (ctx) => {
    try {
      emu.control.addFault({
        method: "POST",
        path: "**/metrics:getBatch",
        action: {
          kind: "metricError",
          metrics: ["ServerLoad"],
          code: "InternalError",
          message: "The metric could not be read.",
        },
      } as unknown as FaultSpec);
    } catch (err) {
      // An emulator without per-metric errors cannot run this mode.
      if (err instanceof FaultSpecError) ctx.skip();
      throw err;
    }
    const r = await json(["--resource-id", CHAT]);
    expect(r.code).toBe(1);
    const line = r.rows
      .filter((x) => x.check.startsWith("metrics query "))
      .flatMap((x) => x.detail.map((d) => ({ d, result: x.result })))
      .find((x) => x.d.startsWith("ServerLoad:"));
    expect(line).toEqual({
      d: 'ServerLoad: errorCode InternalError ("The metric could not be read."): the operator never gets it',
      result: "FAIL",
    });
    assertReadOnly();
  });

  it("a geo-replica target: its own GET, its instance's list of replicas, its SKU list, quota and metrics in its region; nothing written", async (ctx) => {
    // Needs the emulator's replica routes: an emulator without them refuses a replica's ID.
    const replica = `${CHAT}/replicas/chat-prod-ne-replica`;
    try {
      emu.control.addInstance({
        resourceId: replica,
        location: "northeurope",
        sku: "Premium_P1",
        units: 3,
        connections: 1000,
      });
    } catch {
      ctx.skip();
    }
    try {
      const r = await json(["--resource-id", replica]);
      const rows = byCheck(r.rows);
      expect(r.rows.filter((x) => x.result !== "OK").map((x) => `${x.check}: ${x.result}`)).toEqual([
        "permission Microsoft.SignalRService/SignalR/replicas/write: SKIP",
      ]);
      expect(r.code).toBe(0);
      expect(rows["replica (GET)"]?.detail[0]).toBe(
        "Premium_P1 × 3 units, provisioning state Succeeded, location northeurope",
      );
      expect(rows["replicas of the instance (list)"]?.detail[0]).toBe(
        `1 replica of ${CHAT}, the target among them (the poll cycle reads the replica group from this list)`,
      );
      expect(rows["unit quota (usages)"]?.detail[0]).toMatch(/ in northeurope: /);
      const batches = getBatches();
      expect(batches.length).toBeGreaterThan(0);
      expect(batches.every((b) => b.region === "northeurope" && b.resourceIds?.[0] === replica)).toBe(true);
      // The instance lists it as a replica of its own.
      const primary = byCheck((await json(["--resource-id", CHAT])).rows);
      expect(primary["replicas (list)"]?.detail).toEqual([
        "1 geo-replica, each scaled only by a policy of its own:",
        "chat-prod-ne-replica in northeurope, Premium_P1 × 3, serving",
      ]);
      assertReadOnly();
    } finally {
      emu.control.removeInstance(replica);
    }
  });

  it("prints the table for people: one line per check and its detail, the summary and the verdict", async () => {
    emu.control.addFault({
      method: "GET",
      path: "**/SignalR/chat-prod-we",
      action: { kind: "status", status: 404, code: "ResourceNotFound", message: "not found." },
    });
    const r = await check(["--resource-id", CHAT]);
    expect(r.code).toBe(1);
    expect(r.err).toBe("");
    const lines = r.out.split("\n");
    expect(lines[0]).toMatch(new RegExp(`^check of ${CHAT} \\(SignalR\\) at \\d{4}-`));
    expect(lines[2]).toMatch(/^CHECK\s+RESULT\s+WHAT AZURE RETURNED \/ WHY$/);
    expect(r.out).toMatch(/\ninstance \(GET\)\s+FAIL\s+404 ResourceNotFound: no instance /);
    expect(r.out).toMatch(/\n\s+Azure: 404 ResourceNotFound: not found\.\n/);
    expect(r.out).toMatch(
      /\n\d+ OK, 0 WARN, 1 FAIL, 1 SKIP: fix the FAIL rows before mode: Auto \(exit 1\)\n$/,
    );
  });
});
