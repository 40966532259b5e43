/**
 * `recommend` on what users paste: `az monitor metrics list` output (Python time spans, `+00:00`
 * offsets, `null` aggregations, one file per aggregation), bodies that carry only `average`, and
 * Azure error answers instead of metrics. Fixtures in test/fixtures/recommend/ are in the real
 * layouts; the az ones carry the same minutes as getbatch-signalr-rising.json.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runCaptured } from "../test-io.js";

const FIXTURES = resolve(import.meta.dirname, "../../../test/fixtures/recommend");
const TARGET =
  "/subscriptions/4f6c2b1e-8d3a-4c5e-9b7f-2a1d0e3c5b6a/resourceGroups/chat-prod-rg/providers/Microsoft.SignalRService/SignalR/chat-prod-we";

/** `recommend` on the chat policy at Premium_P1 10 / 3 replicas with `metrics` files (fixtures' folder). */
const run = (metrics: readonly string[], ...more: string[]) =>
  runCaptured(
    [
      "recommend",
      "--policy",
      "chat-policy.yaml",
      "--current",
      "Premium_P1/10/3",
      "--metrics",
      ...metrics,
      ...more,
    ],
    FIXTURES,
  );

async function json(metrics: readonly string[]) {
  const r = await run(metrics, "-o", "json");
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.out);
}

/** What must not change between two layouts of the same minutes. */
const decisionOf = (body: Record<string, unknown>) => {
  const { desired, drivenBy, limitedBy, signals, lastSample, newestSampleTime, window, now, reasons } =
    body as Record<string, unknown>;
  return { desired, drivenBy, limitedBy, signals, lastSample, newestSampleTime, window, now, reasons };
};

/** Writes `text` to a fresh temporary file named `name`; its path. */
async function temp(name: string, text: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), "recommend-pasted-")), name);
  await writeFile(file, text);
  return file;
}

async function fixture(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(FIXTURES, name), "utf8"));
}

/** `doc` with every timeStamp (and the timespan) rewritten by `fn`. */
function mapTimes(doc: unknown, fn: (iso: string) => string): unknown {
  return JSON.parse(JSON.stringify(doc), (key, value) =>
    key === "timeStamp" && typeof value === "string"
      ? fn(value)
      : key === "timespan" && typeof value === "string"
        ? value
            .split("/")
            .map((t) => fn(t))
            .join("/")
        : value,
  );
}

/** `iso` (any offset) at the offset `±HH:MM`, the same instant. */
function atOffset(iso: string, offset: string): string {
  const sign = offset.startsWith("-") ? -1 : 1;
  const [h, m] = offset.slice(1).split(":").map(Number) as [number, number];
  const local = new Date(Date.parse(iso) + sign * (h * 60 + m) * 60_000).toISOString().slice(0, 19);
  return `${local}${offset}`;
}

describe("recommend reads what az monitor metrics list prints", () => {
  it("gauges and counters in two az files decide exactly as the same minutes in one getBatch body", async () => {
    const az = await json(["az-signalr-gauges.json", "az-signalr-counters.json"]);
    const getBatch = await json(["getbatch-signalr-rising.json"]);
    expect(decisionOf(az)).toEqual(decisionOf(getBatch));
    expect(az.desired).toEqual({ sku: "Premium_P1", units: 20, replicas: 4 });
    expect(az.nowSource).toBe("response");
    expect(az.now).toBe("2025-06-02T12:00:00.000Z");
    // The order of the files does not matter.
    expect(decisionOf(await json(["az-signalr-counters.json", "az-signalr-gauges.json"]))).toEqual(
      decisionOf(getBatch),
    );
  });

  it.each(["+00:00", "-00:00", "+05:30", "-08:00", "+14:00", "+02:00"])(
    "reads timestamps at offset %s as the same instants",
    async (offset) => {
      const gauges = await temp(
        "g.json",
        JSON.stringify(mapTimes(await fixture("az-signalr-gauges.json"), (t) => atOffset(t, offset))),
      );
      const counters = await temp(
        "c.json",
        JSON.stringify(mapTimes(await fixture("az-signalr-counters.json"), (t) => atOffset(t, offset))),
      );
      expect(decisionOf(await json([gauges, counters]))).toEqual(
        decisionOf(await json(["getbatch-signalr-rising.json"])),
      );
    },
  );

  it.each<[string, string]>([
    ["0:01:00", "Python timedelta"],
    ["00:01:00", ".NET TimeSpan"],
    ["PT1M", "ISO 8601"],
    ["pt1m", "ISO 8601, lower case"],
  ])("reads the interval %s (%s)", async (interval) => {
    const files = await Promise.all(
      ["az-signalr-gauges.json", "az-signalr-counters.json"].map(async (name) =>
        temp(name, JSON.stringify({ ...(await fixture(name)), interval })),
      ),
    );
    expect(decisionOf(await json(files))).toEqual(decisionOf(await json(["getbatch-signalr-rising.json"])));
  });

  it("reads five-minute buckets whose interval az printed as 0:05:00", async () => {
    const body = await fixture("metrics-signalr-5min-no-interval.json");
    const file = await temp("m.json", JSON.stringify({ ...body, interval: "0:05:00" }));
    const r = await json([file]);
    expect(r.lastSample).toMatchObject({ time: "2025-06-02T11:55:00.000Z", messagesPerSecond: 300 });
    expect(r.notes.join("\n")).not.toContain("has no interval");
    expect(r.notes.join("\n")).toContain(
      "5-minute buckets: rates are per second over each bucket (Total ÷ 300 s)",
    );
  });

  it.each<[string, string]>([
    ["1 day, 0:00:00", "interval P1D but the timestamps are 1 minute apart"],
    ["0:00:30.500000", 'interval "0:00:30.500000" (30.5 seconds) is not a whole number of minutes'],
    ["-1 day, 23:59:00", 'interval "-1 day, 23:59:00" is not a positive duration'],
    [
      "a minute",
      'interval must be an ISO 8601 duration (PT1M) or a time span as the Azure CLI prints it (0:01:00, 1 day, 0:00:00), got "a minute"',
    ],
  ])("refuses the interval %j with one line", async (interval, message) => {
    const file = await temp(
      "g.json",
      JSON.stringify({ ...(await fixture("az-signalr-gauges.json")), interval }),
    );
    const r = await run([file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.err.trimEnd().split("\n")).toHaveLength(1);
  });

  it("refuses a timestamp without an offset: it names no instant", async () => {
    const body = mapTimes(await fixture("az-signalr-gauges.json"), (t) => t.replace("+00:00", ""));
    const file = await temp("g.json", JSON.stringify(body));
    const r = await run([file]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `error: metrics ${file}: value[0].timeseries[0].data[0].timeStamp must be an RFC 3339 time with Z or a UTC offset (2025-06-02T11:40:00Z, …+00:00), got "2025-06-02T11:40:00"\n`,
    );
  });

  it("refuses two files with the same metric, and files of two intervals", async () => {
    const twice = await run(["az-signalr-gauges.json", "az-signalr-gauges.json"]);
    expect(twice.code).toBe(2);
    expect(twice.err).toBe(
      "error: metrics: ServerLoad with its Maximum is in az-signalr-gauges.json and az-signalr-gauges.json: give each metric once\n",
    );
    const five = await temp(
      "c.json",
      JSON.stringify({ ...(await fixture("az-signalr-counters.json")), interval: "0:05:00" }),
    );
    const mixed = await run(["az-signalr-gauges.json", five]);
    expect(mixed.code).toBe(2);
    expect(mixed.err).toBe(
      `error: metrics: az-signalr-gauges.json has interval 0:01:00 and ${five} 0:05:00: give answers of one interval\n`,
    );
  });
});

describe("recommend says what is missing", () => {
  const GAUGES = `az monitor metrics list --resource ${TARGET} --metrics ServerLoad ConnectionQuotaUtilization ConnectionCount --aggregation Maximum --interval PT1M --output json > gauges.json`;
  const COUNTERS = `az monitor metrics list --resource ${TARGET} --metrics MessageCount InboundTraffic OutboundTraffic --aggregation Total --interval PT1M --output json > counters.json`;

  it("refuses an average-only body (the portal's default aggregation), naming what the operator reads and the az lines that get it", async () => {
    const r = await run(["az-signalr-average.json"]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toBe(
      "error: metrics az-signalr-average.json: no metric the operator reads is usable: " +
        "ServerLoad, ConnectionQuotaUtilization and ConnectionCount carry only average and the operator reads their Maximum (gauges); " +
        "MessageCount, InboundTraffic and OutboundTraffic carry only average and the operator reads their Total (counters). " +
        `Get them as the operator reads them: ${GAUGES} ; ${COUNTERS} — then give each file: --metrics gauges.json --metrics counters.json\n`,
    );
  });

  it("decides on the gauges of one file and says that the average-only counters of another count as unknown", async () => {
    const body = await json(["az-signalr-gauges.json", "az-signalr-average.json"]);
    expect(body.notes).toEqual([
      "MessageCount, InboundTraffic and OutboundTraffic carry only average and the operator reads their Total (counters): read as unknown",
      `get what is missing with: ${COUNTERS} — and give each file as one more --metrics`,
      "no status given: no stored history, so the scale-down window starts now (as on a first sight)",
    ]);
    // The gauges' Maximum is read from the file that has it, not the averages of the other.
    expect(body.lastSample).toEqual({
      time: "2025-06-02T11:56:00.000Z",
      serverLoadPercent: 83,
      connectionQuotaUtilizationPercent: 82.9,
      connections: 8290,
    });
    expect(body.desired).toEqual({ sku: "Premium_P1", units: 20, replicas: 4 });
  });

  it("refuses usable counters when the policy's signals read none of them (average-only gauges): nothing decides", async () => {
    const r = await run(["az-signalr-average.json", "az-signalr-counters.json"]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toBe(
      "error: metrics az-signalr-average.json, az-signalr-counters.json: none of the metrics the policy's signals (serverLoad, connections) read has a value: " +
        "ServerLoad, ConnectionQuotaUtilization and ConnectionCount carry only average and the operator reads their Maximum (gauges): read as unknown; " +
        `get what is missing with: ${GAUGES} — and give each file as one more --metrics\n`,
    );
  });

  it("says an empty metrics file is empty (what a failed az leaves), not that it is bad JSON", async () => {
    const r = await run([await temp("gauges.json", "")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^error: metrics .*gauges\.json: the file is empty \(a command that failed, such as az printing its error on stderr, leaves it so\)\n$/,
    );
  });

  it("shows the code and message of a pasted Azure error body", async () => {
    const r = await run(["error-authorization-failed.json"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "error: metrics error-authorization-failed.json: is an Azure error answer, not metrics: AuthorizationFailed: " +
        "The client 'f3a1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b' with object id 'f3a1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b' does not have authorization to perform action 'Microsoft.Insights/metrics/read' over scope " +
        `'${TARGET}/providers/Microsoft.Insights' or the scope is invalid. If access was recently granted, please refresh your credentials.\n`,
    );
  });

  it("shows the code and message of an error body without the error wrapper (the single-resource API's ErrorResponse)", async () => {
    const file = await temp(
      "e.json",
      '{"code": "BadRequest", "message": "Invalid time grain duration: PT3M,\\nsupported ones are: 00:01:00,00:05:00"}',
    );
    const r = await run([file]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `error: metrics ${file}: is an Azure error answer, not metrics: BadRequest: Invalid time grain duration: PT3M, supported ones are: 00:01:00,00:05:00\n`,
    );
  });

  it("shows the code and message of the Azure CLI's error text", async () => {
    const r = await run(["az-error-resource-not-found.txt"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "error: metrics az-error-resource-not-found.txt: is an Azure CLI error, not a metrics answer: ResourceNotFound: " +
        "The Resource 'Microsoft.SignalRService/SignalR/chat-prod-we' under resource group 'chat-prod-rg' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix\n",
    );
  });

  it("shows each metric's errorCode and errorMessage of a getBatch answer in which every metric failed", async () => {
    const r = await run(["getbatch-signalr-metric-errors.json"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "error: metrics getbatch-signalr-metric-errors.json: no metric the operator reads is usable: " +
        'ServerLoad, ConnectionQuotaUtilization, MessageCount, InboundTraffic and OutboundTraffic came back with errorCode InternalServerError ("Metrics are temporarily unavailable for this resource. Retry the request later."); ' +
        'ConnectionCount came back with errorCode ResourceUnavailable ("The resource is being moved; its metrics cannot be read now.")\n',
    );
  });
});
