import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WorkloadError } from "../capacity/index.js";
import { defaultMix, parseMix, trafficAt, type WorkloadMix } from "./traffic.js";

const echo: WorkloadMix = defaultMix("SignalR");

describe("trafficAt", () => {
  it("SignalR echo: load follows connections and messages against the tier tables", () => {
    const m = trafficAt({ mix: echo, offeredConnections: 500, sku: "Premium_P1", units: 1, noise: 0 });
    expect(m).toMatchObject({
      offeredConnections: 500,
      clientConnections: 500,
      refusedConnections: 0,
      serverConnections: 5, // one app server, 5 server connections
      connectionQuota: 1000,
      inboundMessagesPerSecond: 500,
      outboundMessagesPerSecond: 500,
      messageCountPerSecond: 1000,
      inboundBytesPerSecond: 500 * 2048,
      connectionQuotaUtilizationPercent: 50.5,
    });
    expect(m.serverLoadPercent).toBeCloseTo(50.5, 9);
    expect(m.limitedBy).toBe("connections");
  });

  it("refuses connections above units × 1,000 (server connections count too)", () => {
    const m = trafficAt({ mix: echo, offeredConnections: 1500, sku: "Premium_P1", units: 1, noise: 0 });
    expect(m.clientConnections).toBe(995);
    expect(m.refusedConnections).toBe(505);
    expect(m.connectionQuotaUtilizationPercent).toBe(100);
    expect(m.serverLoadPercent).toBe(100);
  });

  it("is limited by bandwidth when messages dominate, and delivers no more than capacity", () => {
    const broadcast = parseMix("SignalR", "broadcast");
    // 1 sender/s to 900 clients on 1 unit: 900 outbound msg/s of 2,000 → connections bind (90 %).
    const light = trafficAt({
      mix: broadcast,
      offeredConnections: 900,
      sku: "Premium_P1",
      units: 1,
      noise: 0,
    });
    expect(light.limitedBy).toBe("connections");
    // Sending every 0.25 s quadruples the fan-out: 3,600 msg/s asked, 2,000 delivered.
    const heavy = trafficAt({
      mix: { ...broadcast, entries: [{ scenario: "broadcast", share: 1, sendIntervalSeconds: 0.25 }] },
      offeredConnections: 900,
      sku: "Premium_P1",
      units: 1,
      noise: 0,
    });
    expect(heavy.limitedBy).toBe("outboundBandwidth");
    expect(heavy.utilization).toBeCloseTo(1.8, 9);
    expect(heavy.outboundMessagesPerSecond).toBeCloseTo(2000, 6);
    expect(heavy.serverLoadPercent).toBe(100);
  });

  it("Premium_P2 lifts the send-to-connection routing cap", () => {
    const mix = parseMix("SignalR", "sendToConnection");
    const p1 = trafficAt({ mix, offeredConnections: 60_000, sku: "Premium_P1", units: 100, noise: 0 });
    const p2 = trafficAt({ mix, offeredConnections: 60_000, sku: "Premium_P2", units: 200, noise: 0 });
    expect(p1.limitedBy).toBe("sendToConnection.inbound");
    expect(p1.utilization).toBeCloseTo(3, 9); // 60,000 msg/s against 20,000 on P1 (capped from unit 20)
    expect(p2.utilization).toBeCloseTo(1.5, 9); // P2: 200 msg/s per unit, 40,000 at 200 units
  });

  it("Web PubSub has no app-server connections", () => {
    const m = trafficAt({
      mix: defaultMix("WebPubSub"),
      offeredConnections: 400,
      sku: "Standard_S1",
      units: 1,
      noise: 0,
    });
    expect(m.serverConnections).toBe(0);
    expect(m.inboundMessagesPerSecond).toBe(200);
  });

  it("Free_F1 holds 20 connections", () => {
    const m = trafficAt({ mix: echo, offeredConnections: 100, sku: "Free_F1", units: 1, noise: 0 });
    expect(m.connectionQuota).toBe(20);
    expect(m.clientConnections + m.serverConnections).toBe(20);
  });

  it("keeps its invariants for any demand, size and noise", () => {
    const skus = ["Standard_S1", "Premium_P1"] as const;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300_000 }),
        fc.constantFrom(...skus),
        fc.constantFrom(1, 2, 5, 10, 20, 50, 100),
        fc.double({ min: -1, max: 1, noNaN: true }),
        (offered, sku, units, noise) => {
          const m = trafficAt({
            mix: echo,
            offeredConnections: offered,
            sku,
            units,
            noise,
            noiseAmplitude: 0.05,
          });
          expect(m.clientConnections + m.refusedConnections).toBe(offered);
          expect(m.clientConnections + m.serverConnections).toBeLessThanOrEqual(units * 1000);
          expect(m.serverLoadPercent).toBeGreaterThanOrEqual(0);
          expect(m.serverLoadPercent).toBeLessThanOrEqual(100);
          const exact = Math.min(100, m.utilization * 100);
          expect(Math.abs(m.serverLoadPercent - exact)).toBeLessThanOrEqual(exact * 0.05 + 1e-9);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("rejects nonsense", () => {
    expect(() =>
      trafficAt({ mix: echo, offeredConnections: -1, sku: "Premium_P1", units: 1, noise: 0 }),
    ).toThrow(RangeError);
    expect(() =>
      trafficAt({ mix: echo, offeredConnections: 1, sku: "Premium_P1", units: 0, noise: 0 }),
    ).toThrow(RangeError);
  });
});

describe("parseMix", () => {
  it("reads scenario=share lists", () => {
    expect(parseMix("SignalR", "broadcast=0.2, echo=0.8").entries).toEqual([
      { scenario: "broadcast", share: 0.2 },
      { scenario: "echo", share: 0.8 },
    ]);
  });

  it.each([
    ["echo=0.5", "add up to 1"],
    ["echo=0.5,teleport=0.5", 'no scenario "teleport"'],
    ["echo,broadcast", "malformed mix entry"],
    ["", "at least one scenario"],
  ])("rejects %j", (text, message) => {
    expect(() => parseMix("SignalR", text)).toThrow(WorkloadError);
    expect(() => parseMix("SignalR", text)).toThrow(message);
  });
});
