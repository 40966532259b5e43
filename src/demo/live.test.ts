import { describe, expect, it } from "vitest";
import { formatEvent, formatStatus, LiveView } from "./live.js";

const T = Date.UTC(2015, 3, 14, 23, 5);

describe("live view lines", () => {
  it("formats a status like kubectl get capol -w, with refused connections when there are any", () => {
    expect(
      formatStatus({
        time: T,
        loadPercent: 99.6,
        connections: 80_000,
        demand: 117_000,
        sku: "Premium_P1",
        units: 80,
        updatingTo: { sku: "Premium_P2", units: 200 },
        replicas: 16,
        reason: "ScalingOut (connections)",
      }),
    ).toBe(
      "23:05  load 100 %  conns  80,000  Premium_P1 ×  80 → Premium_P2 × 200  replicas 16  ScalingOut (connections)  refused 37,000",
    );
    expect(formatStatus({ time: T, sku: "Premium_P1", units: 5, reason: "WithinTarget" })).toBe(
      "23:05  load    ?  conns       ?  Premium_P1 ×   5  WithinTarget",
    );
  });

  it("formats an Event with its count", () => {
    expect(
      formatEvent({ time: T, type: "Normal", reason: "ScaleSucceeded", message: "done", count: 3 }),
    ).toBe("23:05  event  Normal  ScaleSucceeded  done (×3)");
  });
});

describe("LiveView", () => {
  const status = (time: number, units: number, reason = "WithinTarget") => ({
    time,
    sku: "Premium_P1" as const,
    units,
    reason,
  });

  it("prints changes and a periodic line, not every pass; a date line when the day changes", () => {
    let out = "";
    const view = new LiveView({ write: (t) => (out += t), tty: false }, { everyMs: 30 * 60_000 });
    view.status(status(T, 5));
    view.status(status(T + 60_000, 5, "StabilizedDown")); // only the reason changed: skipped
    view.status(status(T + 120_000, 10)); // size changed
    view.status(status(T + 64 * 60_000, 10)); // over half an hour later, the next day
    const lines = out.trimEnd().split("\n");
    expect(lines).toEqual([
      "── 2015-04-14 (UTC) ──",
      expect.stringMatching(/^23:05 .* × {3}5 /),
      expect.stringMatching(/^23:07 .* × {2}10 /),
      "── 2015-04-15 (UTC) ──",
      expect.stringMatching(/^00:09 /),
    ]);
    expect(out).not.toContain("\r");
  });

  it("on a terminal, redraws the newest status in place", () => {
    let out = "";
    const view = new LiveView({ write: (t) => (out += t), tty: true });
    view.status(status(T, 5));
    view.status(status(T + 60_000, 5));
    expect(out).toContain("\r\x1b[2K23:06");
    view.event({ time: T + 61_000, type: "Normal", reason: "ScalingOut", message: "5 → 10" });
    expect(out.endsWith("\r\x1b[2K23:06  event  Normal  ScalingOut  5 → 10\n")).toBe(true);
  });
});

describe("live view of a replica group", () => {
  it("names the member after the time, and keeps one line state per member", () => {
    expect(
      formatStatus({ time: T, sku: "Premium_P1", units: 5, reason: "WithinTarget", member: "westus" }),
    ).toBe("23:05  westus  load    ?  conns       ?  Premium_P1 ×   5  WithinTarget");
    expect(
      formatEvent({ time: T, type: "Normal", reason: "ScalingOut", message: "x", member: "eastus" }),
    ).toBe("23:05  eastus  event  Normal  ScalingOut  x");
    let out = "";
    const live = new LiveView({ write: (t) => (out += t), tty: false });
    const at = (m: number, member: string, units: number, reason = "WithinTarget") =>
      live.status({ time: T + m * 60_000, sku: "Premium_P1", units, reason, member });
    at(0, "eastus", 5);
    at(1, "westus", 5);
    at(2, "eastus", 5); // unchanged for eastus: not printed
    at(3, "westus", 5, "NotServing (stopped)"); // westus stops serving: printed
    at(4, "westus", 5, "NotServing (stopped)");
    const lines = out.trimEnd().split("\n").slice(1);
    expect(lines).toEqual([
      "23:05  eastus  load    ?  conns       ?  Premium_P1 ×   5  WithinTarget",
      "23:06  westus  load    ?  conns       ?  Premium_P1 ×   5  WithinTarget",
      "23:08  westus  load    ?  conns       ?  Premium_P1 ×   5  NotServing (stopped)",
    ]);
  });
});

describe("live view in virtual-time order", () => {
  const status = (time: number, units: number) => ({ time, sku: "Premium_P1" as const, units, reason: "X" });

  it("holds lines so that an Event delivered after a later status line still comes before it", () => {
    let out = "";
    const live = new LiveView({ write: (t) => (out += t), tty: false }, { holdMs: 2 * 60_000 });
    live.status(status(T + 60_000, 5)); // 23:06
    live.event({ time: T + 50_000, type: "Normal", reason: "ScalingOut", message: "late" }); // 23:05, delivered after
    live.status(status(T + 2 * 60_000, 6)); // 23:07
    expect(out).toBe(""); // nothing is 2 min older than the newest yet
    live.status(status(T + 4 * 60_000, 7)); // 23:09: releases 23:05 – 23:07
    const printed = out.trimEnd().split("\n").slice(1);
    expect(printed.map((l) => l.slice(0, 5))).toEqual(["23:05", "23:06", "23:07"]);
    expect(printed[0]).toContain("late");
    live.finish();
    expect(out.trimEnd().split("\n").at(-1)).toMatch(/^23:09 /);
  });

  it("prints what waits before a note", () => {
    let out = "";
    const live = new LiveView({ write: (t) => (out += t), tty: false }, { holdMs: 10 * 60_000 });
    live.line(T, "23:05  failover  x");
    live.note("Interrupted");
    expect(out).toBe("── 2015-04-14 (UTC) ──\n23:05  failover  x\nInterrupted\n");
  });
});
