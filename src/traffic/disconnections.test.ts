import { describe, expect, it } from "vitest";
import { changeReconnects, clientsDisconnected, reconnects } from "./disconnections.js";

describe("clientsDisconnected", () => {
  it("disconnects the clients on the removed units at a scale-in", () => {
    // 20,000 clients on 30 units, 10 removed: a third of them.
    expect(clientsDisconnected({ connections: 20_000, fromUnits: 30, toUnits: 20 })).toBeCloseTo(6_666.67, 2);
    expect(clientsDisconnected({ connections: 9_000, fromUnits: 10, toUnits: 1 })).toBe(8_100);
    expect(
      clientsDisconnected({ connections: 150_000, fromUnits: 200, toUnits: 100, skuChanges: true }),
    ).toBe(75_000);
  });

  it("disconnects none at a scale-out or a tier change at the same units", () => {
    expect(clientsDisconnected({ connections: 20_000, fromUnits: 20, toUnits: 30 })).toBe(0);
    expect(clientsDisconnected({ connections: 20_000, fromUnits: 20, toUnits: 20, skuChanges: true })).toBe(
      0,
    );
  });

  it("disconnects everyone at every change in the pessimistic model", () => {
    expect(clientsDisconnected({ connections: 50_000, fromUnits: 2, toUnits: 5 }, "Everyone")).toBe(50_000);
    expect(clientsDisconnected({ connections: 50_000, fromUnits: 5, toUnits: 2 }, "Everyone")).toBe(50_000);
    expect(
      clientsDisconnected(
        { connections: 50_000, fromUnits: 100, toUnits: 100, skuChanges: true },
        "Everyone",
      ),
    ).toBe(50_000);
    expect(clientsDisconnected({ connections: 50_000, fromUnits: 5, toUnits: 5 }, "Everyone")).toBe(0);
  });

  it("refuses impossible inputs", () => {
    expect(() => clientsDisconnected({ connections: -1, fromUnits: 2, toUnits: 1 })).toThrow(RangeError);
    expect(() => clientsDisconnected({ connections: 1, fromUnits: 0, toUnits: 1 })).toThrow(RangeError);
  });
});

describe("reconnects", () => {
  it("reconnects everyone at the first attempt when the new capacity has room", () => {
    const r = reconnects(6_000, 10_000);
    expect(r).toMatchObject({ disconnected: 6_000, reconnected: 6_000, refused: 0, negotiations: 6_000 });
    expect(r.attempts.map((a) => a.delaySeconds)).toEqual([0, 2, 10, 30]);
  });

  it("refuses those that find no free connection, who try at every delay", () => {
    const r = reconnects(6_000, 1_000);
    expect(r).toMatchObject({ reconnected: 1_000, refused: 5_000, negotiations: 6_000 + 3 * 5_000 });
    expect(r.attempts.map((a) => a.negotiations)).toEqual([6_000, 5_000, 5_000, 5_000]);
  });

  it("meets the new quota less the clients that stayed", () => {
    // 9,000 on 10 units → 5 units (quota 5,000): 4,500 stay, 4,500 disconnected, 500 free.
    const r = changeReconnects({ connections: 9_000, fromUnits: 10, toUnits: 5 }, 5_000);
    expect(r).toMatchObject({ disconnected: 4_500, reconnected: 500, refused: 4_000 });
  });
});
