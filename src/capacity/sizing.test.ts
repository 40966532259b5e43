import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluate, size } from "./sizing.js";
import { DEFAULT_LADDERS, SCALABLE_SKUS, type ScalableSku } from "./skus.js";
import { type ScenarioName, SIGNALR_SCENARIOS, WEBPUBSUB_SCENARIOS } from "./tier-tables.js";
import {
  type ScenarioLoad,
  scenarioDemand,
  type Workload,
  WorkloadError,
  workloadDemand,
} from "./workload.js";

const sized = (w: Workload, allowedSkus?: ScalableSku[]) =>
  size(w.service, workloadDemand(w), {
    ...(allowedSkus ? { allowedSkus } : {}),
    ...(w.connections !== undefined ? { totalConnections: w.connections } : {}),
  });

describe("the seeds' worked examples (broadcast at unit 100)", () => {
  it("20 KB messages every 5 s → 100,000 connections fit unit 100", () => {
    const demand = scenarioDemand("SignalR", {
      scenario: "broadcast",
      connections: 100_000,
      senders: 1,
      messageSizeBytes: 20 * 1024,
      sendIntervalSeconds: 5,
    });
    const out = evaluate("SignalR", [demand], "Premium_P1", 100).find((d) => d.name === "outboundBandwidth");
    expect(out?.required).toBe(out?.capacity);
    expect(out?.capacity).toBe(409_600_000); // "400 MBps"
    const r = sized({
      service: "SignalR",
      scenarios: [
        {
          scenario: "broadcast",
          connections: 100_000,
          senders: 1,
          messageSizeBytes: 20480,
          sendIntervalSeconds: 5,
        },
      ],
    });
    expect(r.units).toBe(100);
  });

  it("256 KB messages every 5 s → about 8,000 connections", () => {
    const capacity = 409_600_000;
    const maxConnections = (capacity * 5) / (256 * 1024);
    expect(maxConnections).toBeGreaterThan(7_600);
    expect(maxConnections).toBeLessThan(8_400);
    const fits = sized({
      service: "SignalR",
      scenarios: [
        { scenario: "broadcast", connections: 7_800, messageSizeBytes: 262_144, sendIntervalSeconds: 5 },
      ],
    });
    expect(fits.units).toBe(100);
    expect(fits.limitedBy).toBe("outboundBandwidth");
    const over = sized({
      service: "SignalR",
      scenarios: [
        { scenario: "broadcast", connections: 8_000, messageSizeBytes: 262_144, sendIntervalSeconds: 5 },
      ],
    });
    expect(over).toMatchObject({ sku: "Premium_P2", units: 200 });
  });
});

describe("size", () => {
  it("snaps a need of 13 units up to 20", () => {
    const r = sized({
      service: "SignalR",
      scenarios: [{ scenario: "echo", connections: 13_000, senders: 0 }],
    });
    expect(r).toMatchObject({ sku: "Standard_S1", units: 20, limitedBy: "connections", fits: true });
  });

  it("prefers the lowest allowed tier and steps to Premium_P2 above 100 units", () => {
    const w: Workload = { service: "SignalR", scenarios: [{ scenario: "broadcast", connections: 150_000 }] };
    expect(sized(w, ["Premium_P1", "Premium_P2"])).toMatchObject({
      sku: "Premium_P2",
      units: 200,
      fits: true,
    });
    expect(
      sized({ service: "SignalR", scenarios: [{ scenario: "broadcast", connections: 60_000 }] }, [
        "Premium_P1",
        "Premium_P2",
      ]),
    ).toMatchObject({ sku: "Premium_P1", units: 60 });
  });

  it("reports the shortfall instead of clamping when P2 is not allowed", () => {
    const r = sized({ service: "SignalR", scenarios: [{ scenario: "broadcast", connections: 150_000 }] }, [
      "Premium_P1",
    ]);
    expect(r.fits).toBe(false);
    expect(r).toMatchObject({ sku: "Premium_P1", units: 100 });
    expect(r.shortfall).toContainEqual({ name: "connections", unit: "connections", missing: 50_000 });
  });

  it("reports the shortfall above 1,000 units", () => {
    const r = sized({
      service: "WebPubSub",
      scenarios: [{ scenario: "largeGroup", connections: 1_200_000 }],
    });
    expect(r.fits).toBe(false);
    expect(r.units).toBe(1000);
    expect(r.shortfall[0]?.name).toBe("connections");
  });

  it("needs Premium_P2 to lift the send-to-connection routing cap", () => {
    // 30,000 msg/s one-to-one: S1/P1 stop at 20,000 msg/s from unit 20 on.
    const w: Workload = {
      service: "SignalR",
      scenarios: [{ scenario: "sendToConnection", connections: 30_000 }],
    };
    const r = sized(w);
    expect(r).toMatchObject({ sku: "Premium_P2", units: 200, limitedBy: "sendToConnection.inbound" });
    expect(sized(w, ["Standard_S1", "Premium_P1"]).fits).toBe(false);
  });

  it("caps small groups at unit 50 without P2", () => {
    const w: Workload = {
      service: "WebPubSub",
      scenarios: [{ scenario: "smallGroup", connections: 60_000, inboundMessagesPerSecond: 12_000 }],
    };
    expect(sized(w, ["Premium_P1"]).fits).toBe(false);
    expect(sized(w, ["Premium_P1", "Premium_P2"])).toMatchObject({ sku: "Premium_P2", units: 200 });
  });

  it("counts a message below 1 KB as 1 KB", () => {
    const small = scenarioDemand("SignalR", { scenario: "echo", connections: 10, messageSizeBytes: 100 });
    expect(small.inboundBytesPerSecond).toBe(10 * 1024);
    const large = scenarioDemand("SignalR", { scenario: "echo", connections: 10, messageSizeBytes: 4096 });
    expect(large.inboundBytesPerSecond).toBe(10 * 4096);
  });

  it("adds up a mix and gives the app servers of the most demanding scenario", () => {
    const r = sized({
      service: "SignalR",
      scenarios: [
        { scenario: "echo", connections: 20_000, senders: 10_000 },
        { scenario: "broadcast", connections: 30_000, senders: 2 },
      ],
    });
    expect(r.units).toBe(50);
    expect(r.appServers).toBe(5);
    const inbound = r.dimensions.find((d) => d.name === "inboundBandwidth");
    expect(inbound?.required).toBe((10_000 + 2) * 2048);
    for (const d of r.dimensions) expect(d.headroom).toBeCloseTo(d.capacity - d.required);
  });

  it("counts shared connections once when the workload gives a total", () => {
    const scenarios: ScenarioLoad[] = [
      { scenario: "smallGroup", connections: 40_000, senders: 100 },
      { scenario: "broadcast", connections: 40_000 },
    ];
    expect(sized({ service: "SignalR", scenarios }).units).toBe(80);
    expect(sized({ service: "SignalR", scenarios, connections: 40_000 }).units).toBe(40);
    expect(() => workloadDemand({ service: "SignalR", scenarios, connections: 10 })).toThrow(
      /below the largest/,
    );
  });

  it("honours a utilization ceiling", () => {
    const w: Workload = {
      service: "SignalR",
      scenarios: [{ scenario: "echo", connections: 9_000, senders: 0 }],
    };
    expect(size("SignalR", workloadDemand(w)).units).toBe(9);
    expect(size("SignalR", workloadDemand(w), { maxUtilization: 0.7 }).units).toBe(20);
  });
});

describe("workload validation", () => {
  it.each<[string, Workload, RegExp]>([
    [
      "unknown scenario",
      { service: "WebPubSub", scenarios: [{ scenario: "echo", connections: 1 }] },
      /no scenario "echo"/,
    ],
    [
      "negative connections",
      { service: "SignalR", scenarios: [{ scenario: "echo", connections: -1 }] },
      /connections/,
    ],
    [
      "message size 0",
      { service: "SignalR", scenarios: [{ scenario: "echo", connections: 1, messageSizeBytes: 0 }] },
      /messageSizeBytes/,
    ],
    [
      "both senders and rate",
      {
        service: "SignalR",
        scenarios: [{ scenario: "echo", connections: 5, senders: 1, inboundMessagesPerSecond: 3 }],
      },
      /not both/,
    ],
    ["no scenarios", { service: "SignalR", scenarios: [] }, /at least one/],
  ])("%s", (_name, w, message) => {
    expect(() => workloadDemand(w)).toThrow(WorkloadError);
    expect(() => workloadDemand(w)).toThrow(message);
  });
});

describe("properties", () => {
  const service = fc.constantFrom<"SignalR" | "WebPubSub">("SignalR", "WebPubSub");
  const load = (scenarios: readonly ScenarioName[]) =>
    fc.record<ScenarioLoad>({
      scenario: fc.constantFrom(...scenarios),
      connections: fc.integer({ min: 0, max: 1_200_000 }),
      inboundMessagesPerSecond: fc.double({ min: 0, max: 300_000, noNaN: true }),
      messageSizeBytes: fc.integer({ min: 1, max: 64 * 1024 }),
    });
  const workload = service.chain((s) =>
    fc.record({
      service: fc.constant(s),
      scenarios: fc.array(load(s === "SignalR" ? SIGNALR_SCENARIOS : WEBPUBSUB_SCENARIOS), {
        minLength: 1,
        maxLength: 4,
      }),
    }),
  );
  const allowed = fc.subarray([...SCALABLE_SKUS], { minLength: 1 });

  it("always answers a size on an allowed ladder, never below the need", () => {
    fc.assert(
      fc.property(workload, allowed, (w, skus) => {
        const r = size(w.service, workloadDemand(w), { allowedSkus: skus });
        expect(skus).toContain(r.sku);
        expect(DEFAULT_LADDERS[r.sku]).toContain(r.units);
        if (r.fits) for (const d of r.dimensions) expect(d.utilization).toBeLessThanOrEqual(1 + 1e-9);
        else expect(r.shortfall.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it("is monotone in demand", () => {
    fc.assert(
      fc.property(workload, allowed, fc.double({ min: 1, max: 5, noNaN: true }), (w, skus, factor) => {
        const grown: Workload = {
          service: w.service,
          scenarios: w.scenarios.map((s) => ({
            ...s,
            connections: Math.round(s.connections * factor),
            inboundMessagesPerSecond: (s.inboundMessagesPerSecond ?? 0) * factor,
          })),
        };
        const a = size(w.service, workloadDemand(w), { allowedSkus: skus });
        const b = size(w.service, workloadDemand(grown), { allowedSkus: skus });
        expect(b.units).toBeGreaterThanOrEqual(a.units);
        if (!a.fits) expect(b.fits).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
