import { describe, expect, it } from "vitest";
import { AppServerHistory } from "./app-servers.js";

const START = Date.parse("2025-06-02T00:00:00Z");
const MIN = 60_000;

describe("the app servers' negotiate metrics as Prometheus serves them", () => {
  it("a burst of reconnects reads × 60 ÷ (60 − scrape interval) in the rate, as it was in the counter", () => {
    // 1,000 arrivals a minute; 3,000 reconnects in minute 2. Scraped every 15 s, rate(…[1m])
    // extrapolates the increase between samples 45 s apart to 60 s: the burst between them reads
    // 4,000, the steady arrivals as they were.
    const h = new AppServerHistory(START, new Float64Array(4).fill(1000), 15_000);
    h.push(900);
    h.push(900);
    h.addNegotiations(2, 3000);
    h.push(900);
    h.push(900);
    expect(h.reading("NewConnectionsPerSecond", START + 2 * MIN)?.value).toBeCloseTo(1000 / 60, 9);
    expect(h.reading("NewConnectionsPerSecond", START + 3 * MIN)?.value).toBeCloseTo((1000 + 4000) / 60, 9);
    expect(h.reading("NewConnectionsPerSecond", START + 4 * MIN)?.value).toBeCloseTo(1000 / 60, 9);
    expect(h.reading("NewConnectionsTotal", START + 3 * MIN)?.value).toBe(6000);
    expect(h.reading("NewConnectionsPerSecond", START + 3 * MIN)?.timeMs).toBe(START + 3 * MIN - 15_000);
  });
});
