import { describe, expect, it } from "vitest";
import { scenarioAppServers, scenarioCapacity } from "./model.js";
import type { ScalableSku } from "./skus.js";
import {
  BENCHMARK_MESSAGE_BYTES,
  type ScenarioTable,
  SIGNALR_TABLES,
  WEBPUBSUB_TABLES,
} from "./tier-tables.js";

/**
 * Reads a bandwidth figure as the seeds print it ("2 MBps", "400 Kbps", "3,6 MBit/s",
 * "1.200 MBit/s", "3.000 MB") with the seeds' convention KB = 1,024 B and MB = 1,000 KB.
 */
function printedBytesPerSecond(text: string): number {
  const match = /^([\d.,]+)\s*([KM])/i.exec(text.trim());
  if (!match) throw new Error(`cannot read ${text}`);
  const raw = match[1] as string;
  // German: "3,6" is a decimal comma, "1.200" a thousands dot.
  const value = Number(raw.includes(",") ? raw.replace(",", ".") : raw.replace(/\.(?=\d{3}\b)/g, ""));
  return value * ((match[2] as string).toUpperCase() === "K" ? 1024 : 1024 * 1000);
}

const skuFor = (units: number): ScalableSku => (units > 100 ? "Premium_P2" : "Premium_P1");

const cases = (tables: readonly ScenarioTable[]) =>
  tables.flatMap((t) =>
    t.units.map((units, i) => ({ t, units, i, name: `${t.service} ${t.scenario} @${units}` })),
  );

describe("every figure of every seed tier table", () => {
  it.each(cases([...SIGNALR_TABLES, ...WEBPUBSUB_TABLES]))("$name", ({ t, units, i }) => {
    const cap = scenarioCapacity(t.service, t.scenario, skuFor(units), units);
    expect(cap.connections).toBe(t.connections[i]);
    expect(cap.inboundMessagesPerSecond).toBe(t.inboundMessagesPerSecond[i]);
    expect(cap.outboundMessagesPerSecond).toBe(t.outboundMessagesPerSecond[i]);
    expect(cap.inboundBytesPerSecond).toBe(printedBytesPerSecond(t.printedBandwidth.inbound[i] as string));
    expect(cap.outboundBytesPerSecond).toBe(printedBytesPerSecond(t.printedBandwidth.outbound[i] as string));
    expect(cap.outboundBytesPerSecond).toBe(
      (t.outboundMessagesPerSecond[i] as number) * BENCHMARK_MESSAGE_BYTES,
    );
  });

  const appServerCases = SIGNALR_TABLES.filter((t) => t.appServers).flatMap((t) =>
    (t.appServerUnits ?? []).map((units, i) => ({ t, units, expected: t.appServers?.[i] as number })),
  );
  it.each(appServerCases)("app servers: $t.scenario @$units → $expected", ({ t, units, expected }) => {
    expect(scenarioAppServers("SignalR", t.scenario, units)).toBe(expected);
  });

  it("has no app servers for serverless scenarios and Web PubSub", () => {
    expect(scenarioAppServers("SignalR", "restBroadcast", 50)).toBe(0);
    expect(scenarioAppServers("SignalR", "restSendToUser", 50)).toBe(0);
    expect(scenarioAppServers("WebPubSub", "cloudEventsEcho", 50)).toBe(0);
  });

  it("interpolates app servers between measured points, rounding up (echo: 1 per 10 units)", () => {
    expect(scenarioAppServers("SignalR", "echo", 20)).toBe(2);
    expect(scenarioAppServers("SignalR", "echo", 30)).toBe(3);
    expect(scenarioAppServers("SignalR", "echo", 11)).toBe(2);
    expect(scenarioAppServers("SignalR", "broadcast", 30)).toBe(2);
    expect(scenarioAppServers("SignalR", "largeGroup", 5)).toBe(2);
  });
});

describe("routing caps that only Premium_P2 lifts", () => {
  it("small group inbound stops at 10,000 msg/s from unit 50 on S1/P1", () => {
    for (const sku of ["Standard_S1", "Premium_P1"] as const) {
      expect(scenarioCapacity("SignalR", "smallGroup", sku, 40).inboundMessagesPerSecond).toBe(8000);
      expect(scenarioCapacity("SignalR", "smallGroup", sku, 50).inboundMessagesPerSecond).toBe(10000);
      expect(scenarioCapacity("SignalR", "smallGroup", sku, 60).inboundMessagesPerSecond).toBe(10000);
      expect(scenarioCapacity("SignalR", "smallGroup", sku, 100).outboundMessagesPerSecond).toBe(100000);
      expect(scenarioCapacity("WebPubSub", "smallGroup", sku, 90).inboundMessagesPerSecond).toBe(10000);
    }
    expect(scenarioCapacity("SignalR", "smallGroup", "Premium_P2", 300).inboundMessagesPerSecond).toBe(30000);
  });

  it("send to connection stops at 20,000 msg/s from unit 20 until Premium_P2 (200 per unit)", () => {
    const cases = [
      ["Standard_S1", 10, "inboundMessagesPerSecond", 10000],
      ["Standard_S1", 20, "inboundMessagesPerSecond", 20000],
      ["Premium_P1", 30, "inboundMessagesPerSecond", 20000],
      ["Premium_P1", 100, "outboundMessagesPerSecond", 20000],
      ["Premium_P2", 100, "inboundMessagesPerSecond", 20000],
      ["Premium_P2", 200, "inboundMessagesPerSecond", 40000],
      ["Premium_P2", 700, "outboundMessagesPerSecond", 140000],
    ] as const;
    for (const [sku, units, rate, expected] of cases) {
      expect(scenarioCapacity("SignalR", "sendToConnection", sku, units)[rate], `${sku} × ${units}`).toBe(
        expected,
      );
    }
  });

  it("rejects non-positive units and unknown scenarios", () => {
    expect(() => scenarioCapacity("SignalR", "echo", "Premium_P1", 0)).toThrow(RangeError);
    expect(() => scenarioCapacity("WebPubSub", "echo", "Premium_P1", 1)).toThrow(/no scenario "echo"/);
  });
});
