import { describe, expect, it } from "vitest";
import { expectedDisconnects, startedOperation } from "./operation.js";

const accepted = { kind: "accepted", startedAt: "2025-01-01T00:00:00Z" } as const;

describe("startedOperation", () => {
  it("says how many clients a scale-in disconnects: the removed units' share of the connections", () => {
    const update = {
      from: { sku: "Premium_P1", units: 30 },
      to: { sku: "Premium_P1" as const, units: 20 },
      cause: "connections",
      before: { connections: 20_000 },
    };
    const started = startedOperation(update, accepted);
    expect(started.disconnects).toBeCloseTo(6_666.67, 2);
    expect(started.events[0]).toMatchObject({ reason: "ScalingIn" });
    expect(started.events[0]?.message).toBe(
      "Premium_P1 × 30 → Premium_P1 × 20 units (connections); disconnects about 6,667 clients (the removed units' share of 20,000), who reconnect at once",
    );
  });

  it("a scale-out disconnects none and says nothing of it; unknown connections give no estimate", () => {
    const out = startedOperation(
      {
        from: { sku: "Premium_P1", units: 20 },
        to: { sku: "Premium_P1", units: 30 },
        cause: "connections",
        before: { connections: 20_000 },
      },
      accepted,
    );
    expect(out.disconnects).toBeUndefined();
    expect(out.events[0]?.message).toBe("Premium_P1 × 20 → Premium_P1 × 30 units (connections)");
    expect(
      expectedDisconnects({ from: { sku: "Premium_P1", units: 30 }, to: { sku: "Premium_P1", units: 20 } }),
    ).toBeUndefined();
  });
});
