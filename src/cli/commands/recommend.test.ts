import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DECISION_CONDITION_TYPES } from "../../api/constants.js";
import { UsageError } from "../errors.js";
import { runCaptured } from "../test-io.js";
import { parseCurrent } from "./recommend.js";

const FIXTURES = resolve(import.meta.dirname, "../../../test/fixtures/recommend");

/** `recommend` with `argv`, in the fixtures' folder. */
const run = (...argv: string[]) => runCaptured(["recommend", ...argv], FIXTURES);

/** The flags naming a policy, a metrics body and, when given, a status file. */
const files = (policy: string, metrics: string, status?: string) => [
  "--policy",
  policy,
  "--metrics",
  metrics,
  ...(status === undefined ? [] : ["--status", status]),
];

/** `recommend -o json` with `argv`, which must succeed: the JSON it printed. */
async function json(...argv: string[]) {
  const r = await run(...argv, "-o", "json");
  expect(r.code).toBe(0);
  return JSON.parse(r.out);
}

const CHAT = files("chat-policy.yaml", "getbatch-signalr-rising.json");

describe("signalr-autoscaler recommend", () => {
  it("explains a scale-out from a metrics:getBatch body (JSON)", async () => {
    const r = await run(...CHAT, "--current", "Premium_P1/10/3", "-o", "json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out);
    expect(body.now).toBe("2025-06-02T12:00:00.000Z");
    expect(body.nowSource).toBe("response");
    expect(body.action).toBe("Scale");
    // peak server load 86 % at 10 units → 13 units → Premium_P1 20; 8,290 connections → 4 replicas
    expect(body.desired).toEqual({ sku: "Premium_P1", units: 20, replicas: 4 });
    expect(body.drivenBy).toBe("serverLoad");
    expect(body.limitedBy).toBeNull();
    expect(body.newestSampleTime).toBe("2025-06-02T11:56:00.000Z");
    expect(body.reasons.map((x: { code: string }) => x.code)).toEqual(
      expect.arrayContaining([
        "SignalDesired",
        "WithinTolerance",
        "SamplesIgnored",
        "LadderSnapped",
        "ScaleOut",
        "ReplicasFromConnections",
      ]),
    );
    expect(body.conditions).toHaveLength(DECISION_CONDITION_TYPES.length);
    expect(body.signals.map((s: { signal: string; status: string }) => `${s.signal}:${s.status}`)).toEqual([
      "serverLoad:Ok",
      "connections:Ok",
    ]);
    expect(body.lastSample).toMatchObject({
      time: "2025-06-02T11:56:00.000Z",
      serverLoadPercent: 83,
      connections: 8290,
    });
    expect(body.lastSample.messagesPerSecond).toBeCloseTo((8290 * 150) / 60, 6);
  });

  it("prints the decision and its reasons for people", async () => {
    const r = await run(...CHAT, "--current", "Premium_P1/10/3");
    expect(r.code).toBe(0);
    expect(r.out).toContain("decision: SCALE  Premium_P1 10 → Premium_P1 20 units, replicas 3 → 4");
    expect(r.out).toContain("driven by serverLoad");
    expect(r.out).toMatch(/serverLoad\s+Ok\s+86 %\s+70 %\s+1\.23\s+13\s+5\/5/);
    expect(r.out).toMatch(/LadderSnapped\s+need of 13 units → Premium_P1 20/);
    expect(r.out).toMatch(/ScalingLimited\s+False\s+DesiredWithinRange/);
  });

  it("says how many clients a scale-in disconnects: the removed units' share of the connections", async () => {
    const IDLE = files("idle-policy.yaml", "getbatch-signalr-idle.json");
    const r = await run(...IDLE, "--current", "Premium_P1/50/3");
    expect(r.code).toBe(0);
    expect(r.out).toContain("decision: SCALE  Premium_P1 50 → Premium_P1 30 units");
    // 30 connections on 50 units, 20 removed: 12.
    expect(r.out).toContain(
      "disruption: the scale-in disconnects about 12 clients (the removed units' share of 30)",
    );
    expect((await json(...IDLE, "--current", "Premium_P1/50/3")).clientsDisconnected).toBeCloseTo(12, 6);
    expect((await json(...CHAT, "--current", "Premium_P1/10/3")).clientsDisconnected).toBe(0);
  });

  it("says when a scale-in is held for the clients it would disconnect, and about how many", async () => {
    const STRICT = files("idle-policy-no-disruption.yaml", "getbatch-signalr-idle.json");
    const r = await run(...STRICT, "--current", "Premium_P1/50/3");
    expect(r.code).toBe(0);
    expect(r.out).toContain("decision: NO ACTION  Premium_P1 50 → Premium_P1 50 units");
    expect(r.out).toContain(
      "disruption: the scale-in to Premium_P1 30 is held (DisruptionHeld): it would disconnect about 12 clients (the removed units' share of 30)",
    );
    expect(r.out).toMatch(/ScalingLimited\s+True\s+DisruptionHeld/);
    expect(r.out).toMatch(/AbleToScale\s+True\s+ScaleInHeldForDisruption/);
    const body = await json(...STRICT, "--current", "Premium_P1/50/3");
    expect(body.limitedBy).toBe("DisruptionHeld");
    expect(body.clientsDisconnected).toBe(0);
    expect(body.disruption).toMatchObject({
      held: true,
      to: { sku: "Premium_P1", units: 30 },
      connections: 30,
    });
    expect(body.disruption.clients).toBeCloseTo(12, 6);
    const held = body.reasons.find((x: { code: string }) => x.code === "DisruptionHeld");
    expect(held.clients).toBeCloseTo(12, 6);
    expect(held.message).toContain("maxDisconnectionsPerUnitHour is 0");
  });

  it("--now moves the window (here onto the steady minutes: no change)", async () => {
    const r = await run(
      ...CHAT,
      "--current",
      "Premium_P1/10/3",
      "--now",
      "2025-06-02T11:52:00Z",
      "-o",
      "json",
    );
    const body = JSON.parse(r.out);
    expect(body.nowSource).toBe("flag");
    expect(body.desired.units).toBe(10);
    expect(body.newestSampleTime).toBe("2025-06-02T11:48:00.000Z");
  });

  it("explains a blocked scale-in from a single-resource Web PubSub body with a status", async () => {
    const body = await json(
      ...files("notify-policy.yaml", "metrics-webpubsub-single.json", "notify-status.yaml"),
    );
    // current from the status; server load (peak 21 %) asks for 6 units and connections (peak
    // 5,750) for 8, but one connection bucket of the window is missing: no scale-in.
    expect(body.current).toEqual({ sku: "Premium_P1", units: 20 });
    expect(body.recommendation).toEqual({ sku: "Premium_P1", units: 8 });
    expect(body.desired).toEqual({ sku: "Premium_P1", units: 20 });
    expect(body.limitedBy).toBe("MetricsIncomplete");
    expect(body.scaleIn).toEqual({ allowed: false, blockedBy: ["MetricsIncomplete"] });
    expect(body.notes).toContain(
      'OutboundTraffic came back with errorCode Throttled ("Metric data is temporarily unavailable."): read as unknown',
    );
    const metrics = body.conditions.find((c: { type: string }) => c.type === "MetricsAvailable");
    expect(metrics).toMatchObject({ status: "True", reason: "SomeMetricsMissing" });
  });

  it("says that it does not read a leading signal, and decides on Azure Monitor alone", async () => {
    const dir = await mkdtemp(join(tmpdir(), "recommend-"));
    const chat = await readFile(join(FIXTURES, "chat-policy.yaml"), "utf8");
    /** The chat policy with anticipation in `mode`, with or without a leading signal. */
    const withAnticipation = async (name: string, mode: string, leading: boolean) => {
      const file = join(dir, `${name}.yaml`);
      const signal = [
        "    leadingSignal:",
        "      prometheus:",
        "        serverAddress: https://prom.example/prometheus/",
        "        query: sum(rate(negotiate_total[1m]))",
        "      connectionLifetime: 20m",
      ];
      await writeFile(
        file,
        [chat.trimEnd(), "  anticipation:", `    mode: ${mode}`, ...(leading ? signal : [])].join("\n"),
      );
      return [...files(file, "getbatch-signalr-rising.json"), "--current", "Premium_P1/10/3"];
    };
    const NOTE =
      "the leading signal (Prometheus https://prom.example/prometheus) is not read by recommend: the decision is what Azure Monitor alone gives (the operator, reading it, may scale out further)";

    const leading = await withAnticipation("leading", "Enabled", true);
    const body = await json(...leading);
    expect(body.notes).toContain(NOTE);
    const text = await run(...leading);
    expect(text.code).toBe(0);
    expect(text.out.split("\n").filter((l) => l.includes("leading signal (Prometheus"))).toEqual([
      `note: ${NOTE}`,
    ]);
    // The same decision as the same anticipation without a leading signal.
    const without = await json(...(await withAnticipation("without", "Enabled", false)));
    expect(without.notes.join("\n")).not.toContain("leading signal");
    expect(body.desired).toEqual(without.desired);
    expect(body.desired).toEqual({ sku: "Premium_P1", units: 20, replicas: 4 });
    expect(body.anticipation.rules ?? []).toEqual(without.anticipation.rules ?? []);
    // With anticipation Off the signal is not used at all: nothing to say.
    const off = await json(...(await withAnticipation("off", "Off", true)));
    expect(off.notes.join("\n")).not.toContain("leading signal");
  });

  describe("reads Azure Monitor answers truthfully", () => {
    const reasonOf = (body: { reasons: { code: string; message: string }[] }, code: string) =>
      body.reasons.find((x) => x.code === code);
    /** The flags of the chat policy at Premium_P1 10 / 3 replicas on a metrics fixture. */
    const onChat = (metrics: string) => [
      ...files("chat-policy.yaml", metrics),
      "--current",
      "Premium_P1/10/3",
    ];

    it("server load split into two series at 60 % each is 60 %, not 120 %", async () => {
      const body = await json(...onChat("getbatch-signalr-two-series.json"));
      // percentages take the highest series; connections add up over Endpoint (7,000 client + 200 server)
      expect(body.lastSample).toMatchObject({
        serverLoadPercent: 60,
        connectionQuotaUtilizationPercent: 72,
        connections: 7200,
      });
      expect(body.signals[0]).toMatchObject({ signal: "serverLoad", status: "Ok", value: 60 });
      expect(body.desired).toEqual({ sku: "Premium_P1", units: 10, replicas: 3 });
    });

    it("reads traffic counters answered empty on an idle instance as 0, says so, and scales in", async () => {
      const argv = files("idle-policy.yaml", "getbatch-signalr-idle.json");
      const body = await json(...argv, "--current", "Premium_P1/10");
      expect(body.lastSample).toMatchObject({
        time: "2025-06-02T11:57:00.000Z",
        serverLoadPercent: 2,
        connections: 30,
        messagesPerSecond: 0,
        inboundBytesPerSecond: 0,
        outboundBytesPerSecond: 0,
      });
      expect(body.signals.find((x: { signal: string }) => x.signal === "traffic")).toMatchObject({
        status: "Ok",
        value: 0,
        knownBuckets: 5,
      });
      expect(reasonOf(body, "CounterIdleZero")?.message).toMatch(
        /^MessageCount, InboundTraffic, OutboundTraffic at 11:53–11:57 UTC: answered with no data/,
      );
      expect(body.scaleIn).toEqual({ allowed: true, blockedBy: [] });
      expect(body.action).toBe("Scale");
      expect(body.desired.units).toBeLessThan(10);
      expect(reasonOf(body, "ScaleIn")).toBeDefined();

      const text = await run(...argv, "--current", "Premium_P1/10");
      expect(text.out).toMatch(
        /CounterIdleZero\s+MessageCount, InboundTraffic, OutboundTraffic at 11:53–11:57 UTC/,
      );
      expect(text.out).toMatch(/traffic\s+Ok\s+0 %/);
    });

    it("leaves out a server load of 4000 % and says so; the other buckets decide", async () => {
      const body = await json(...onChat("getbatch-signalr-impossible.json"));
      expect(reasonOf(body, "SampleInvalid")?.message).toBe(
        "left out, not demand: ServerLoad 4,000 % at 11:54 UTC (above 100 % by more than 5 %: the service cannot report it)",
      );
      // 86 % at 10 units (the highest possible bucket) asks for 13 units → 20 on the ladder, not units.max.
      expect(body.signals[0]).toMatchObject({ signal: "serverLoad", status: "Incomplete", desiredUnits: 13 });
      expect(body.desired.units).toBe(20);
      expect(body.scaleIn.blockedBy).toContain("MetricsIncomplete");
    });

    it("names server load as suspect when it did not respond to the last scale-out", async () => {
      const body = await json(
        ...files("chat-policy.yaml", "getbatch-signalr-stuck-load.json", "stuck-status.yaml"),
      );
      expect(reasonOf(body, "SignalSuspect")?.message).toMatch(
        /^server load 95 % did not respond to the scale-out 10 → 20 units at 2025-06-02T11:40:10Z \(it was 95 %; about 47.5 % was expected\)/,
      );
      expect(body.limitedBy).toBe("SignalSuspect");
      expect(body.desired.units).toBe(20);
      expect(body.conditions.find((c: { type: string }) => c.type === "ScalingLimited")).toMatchObject({
        status: "True",
        reason: "SignalSuspect",
      });
    });

    it("takes five-minute buckets from the timestamps of a body without interval: rates per second over 300 s", async () => {
      const body = await json(...onChat("metrics-signalr-5min-no-interval.json"));
      // Totals per five minutes: 90,000 messages, 3,000,000 B in, 300,000,000 B out.
      expect(body.lastSample).toEqual({
        time: "2025-06-02T11:55:00.000Z",
        serverLoadPercent: 45,
        connectionQuotaUtilizationPercent: 40,
        connections: 4000,
        messagesPerSecond: 300,
        inboundBytesPerSecond: 10_000,
        outboundBytesPerSecond: 1_000_000,
      });
      expect(body.notes).toContain(
        "the body has no interval: its timestamps are 5 minutes apart, read as PT5M buckets",
      );
      // one known minute in five: no scale-in on it
      expect(body.scaleIn.blockedBy).toContain("MetricsIncomplete");
    });

    it("refuses a body whose timestamps are irregular, with one line and exit 2", async () => {
      const r = await run(...onChat("metrics-signalr-irregular.json"));
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err).toBe(
        "error: metrics metrics-signalr-irregular.json: timestamps are irregular (gaps of 2 minutes, 3 minutes, 5 minutes) and no interval says which is one bucket\n",
      );
    });
  });

  it.each<[string, string[], RegExp]>([
    [
      "a malformed policy",
      [
        "--policy",
        "bad-policy.yaml",
        "--metrics",
        "getbatch-signalr-rising.json",
        "--current",
        "Premium_P1/10",
      ],
      /^error: policy bad-policy\.yaml: spec\.units: min \(20\) must be <= max \(10\)\n$/,
    ],
    [
      "a malformed metrics file",
      ["--policy", "chat-policy.yaml", "--metrics", "bad-metrics.json", "--current", "Premium_P1/10"],
      /^error: metrics bad-metrics\.json: values\[0\]\.value\[0\]\.timeseries\[0\]\.data\[0\]\.timeStamp must be an RFC 3339 time/,
    ],
    [
      "a missing file",
      ["--policy", "nope.yaml", "--metrics", "getbatch-signalr-rising.json", "--current", "Premium_P1/10"],
      /^error: cannot read --policy nope\.yaml: ENOENT/,
    ],
    [
      "a bad --current",
      [...CHAT, "--current", "P1/10"],
      /^error: --current must be SKU\/units\[\/replicas\]/,
    ],
    ["no --current and no status", CHAT, /^error: --current SKU\/units\[\/replicas\] is required/],
    [
      "a bad --now",
      [...CHAT, "--current", "Premium_P1/10", "--now", "noon"],
      /^error: --now must be an RFC 3339 time/,
    ],
    [
      "a --now without a UTC offset (a local time of no known zone)",
      [...CHAT, "--current", "Premium_P1/10", "--now", "2025-06-02T12:00:00"],
      /^error: --now must be an RFC 3339 time with Z or a UTC offset/,
    ],
  ])("exits 2 with one clear line for %s", async (_n, argv, message) => {
    const r = await run(...argv);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(message);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });

  it.each<[string, string, RegExp]>([
    ["not JSON", "{", /not JSON/],
    ["neither shape", '{"foo": 1}', /has neither "values" \(metrics:getBatch\) nor "value"/],
    [
      "no metric of the service",
      '{"value": [{"name": {"value": "CpuPercentage"}, "timeseries": []}]}',
      /no SignalR metric in it/,
    ],
    [
      "an interval its timestamps disagree with",
      '{"interval": "PT5M", "value": [{"name": {"value": "ServerLoad"}, "timeseries": [{"data": [{"timeStamp": "2025-06-02T11:50:00Z", "maximum": 5}, {"timeStamp": "2025-06-02T11:51:00Z", "maximum": 5}]}]}]}',
      /^error: metrics .*m\.json: interval PT5M but the timestamps are 1 minute apart\n$/,
    ],
    [
      "several resources, none the target",
      '{"values": [{"resourceid": "/a", "value": []}, {"resourceid": "/b", "value": []}]}',
      /none of its 2 resources is the policy's target/,
    ],
  ])("rejects a metrics file: %s", async (_n, text, message) => {
    const dir = await mkdtemp(join(tmpdir(), "recommend-"));
    const file = join(dir, "m.json");
    await writeFile(file, text);
    const r = await run(...files(join(FIXTURES, "chat-policy.yaml"), file), "--current", "Premium_P1/10");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });

  it("parseCurrent reads SKU/units[/replicas]", () => {
    expect(parseCurrent("Premium_P2/200/12")).toEqual({ sku: "Premium_P2", units: 200, replicas: 12 });
    expect(parseCurrent("Standard_S1/3")).toEqual({ sku: "Standard_S1", units: 3 });
    expect(() => parseCurrent("Premium_P1/0")).toThrow(UsageError);
  });
});
