import { describe, expect, it } from "vitest";
import { createVirtualClock } from "./clock.js";
import type { EmulatorRequest, EmulatorResponse } from "./http.js";
import { handleGetBatch } from "./monitor.js";
import { EmulatorState } from "./state.js";

const SUB = "11111111-1111-1111-1111-111111111111";
const PRIMARY = `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.SignalRService/SignalR/chat`;
const EAST = `${PRIMARY}/replicas/chat-eastus`;
const T0 = new Date("2025-03-03T12:00:30Z");
const REPLICAS = "Microsoft.SignalRService/SignalR/replicas";

function setup() {
  const clock = createVirtualClock({ start: T0, speed: 0 });
  const state = new EmulatorState({ clock, ingestionDelayMs: 0, noiseAmplitude: 0 });
  state.addInstance({ resourceId: PRIMARY, location: "westeurope", units: 10, connections: 6_000 });
  state.addInstance({ resourceId: EAST, location: "eastus", units: 5, connections: 2_000 });
  const batch = (region: string, namespace: string, ids: string[]): EmulatorResponse => {
    const now = clock.nowMs();
    const req: EmulatorRequest = {
      method: "POST",
      path: `/metrics/${region}/subscriptions/${SUB}/metrics:getBatch`,
      query: new URLSearchParams({
        "api-version": "2024-02-01",
        metricnamespace: namespace,
        metricnames: "ConnectionCount",
        aggregation: "Maximum",
        starttime: new Date(now - 5 * 60_000).toISOString(),
        endtime: new Date(Math.floor(now / 60_000) * 60_000).toISOString(),
        interval: "PT1M",
      }),
      headers: {},
      body: { resourceids: ids },
      baseUrl: "https://127.0.0.1:1",
    };
    return handleGetBatch(req, state) as EmulatorResponse;
  };
  return { clock, state, batch };
}

type Answer = {
  values: {
    namespace: string;
    resourceregion: string;
    value: { timeseries: { data: { timeStamp: string; maximum?: number }[] }[] }[];
  }[];
};
const points = (res: EmulatorResponse) =>
  (res.body as Answer).values[0]?.value[0]?.timeseries[0]?.data.map((p) => p.maximum) ?? [];

describe("metrics:getBatch for replicas", () => {
  it("answers the replica namespace in the replica's region with its own buckets", () => {
    const { batch } = setup();
    const res = batch("eastus", REPLICAS, [EAST]);
    expect(res.status).toBe(200);
    expect((res.body as Answer).values[0]).toMatchObject({ namespace: REPLICAS, resourceregion: "eastus" });
    // ConnectionCount unfiltered: clients plus the app servers' connections of the replica.
    const values = points(res);
    expect(values).toHaveLength(5);
    expect(values.every((v) => v !== undefined && v >= 2_000 && v < 3_000)).toBe(true);
    // In the primary's region the replica has no series, as any resource of another region.
    const elsewhere = batch("westeurope", REPLICAS, [EAST]);
    expect((elsewhere.body as Answer).values[0]?.value[0]?.timeseries).toEqual([]);
  });

  it("refuses a batch mixing instances and replicas, or a replica under the instances' namespace", () => {
    const { batch } = setup();
    const mixed = batch("eastus", REPLICAS, [EAST, PRIMARY]);
    expect(mixed.status).toBe(400);
    expect((mixed.body as { error: { message: string } }).error.message).toContain(
      `must be of type '${REPLICAS}'`,
    );
    expect(batch("eastus", "Microsoft.SignalRService/SignalR", [EAST]).status).toBe(400);
    expect(batch("eastus", "Microsoft.SignalRService/SignalR/other", [EAST]).status).toBe(400);
  });

  it("a failed-over replica's minutes have no data from that minute on; the primary's rise", () => {
    const { clock, state, batch } = setup();
    clock.advance(5 * 60_000);
    state.failover(EAST);
    clock.advance(3 * 60_000);
    const east = points(batch("eastus", REPLICAS, [EAST]));
    expect(east.slice(-3)).toEqual([undefined, undefined, undefined]);
    expect(east[0]).toBeGreaterThan(2_000);
    const primary = points(batch("westeurope", "Microsoft.SignalRService/SignalR", [PRIMARY]));
    expect((primary[4] ?? 0) - (primary[1] ?? 0)).toBeGreaterThanOrEqual(2_000);
  });
});
