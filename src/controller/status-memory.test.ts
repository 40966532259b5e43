import { describe, expect, it } from "vitest";
import type { CapacityPolicyStatus } from "../api/index.js";
import { StatusMemory } from "./status-memory.js";
import { T0 } from "./testing.js";

type Status = Partial<CapacityPolicyStatus>;

/** Status before a pass (an unapplied update tried once) and after it (tried twice). */
const before: Status = {
  unappliedUpdates: { count: 1, lastTime: "2026-01-01T00:00:00Z" },
} as unknown as Status;
const after: Status = {
  unappliedUpdates: { count: 2, lastTime: "2026-01-01T00:01:00Z" },
} as unknown as Status;
const carried: Status = { ...after, lastSample: { time: "2026-01-01T00:01:00Z" } } as unknown as Status;

describe("StatusMemory", () => {
  it("without a remembered pass, the pass starts from the stored status", () => {
    expect(new StatusMemory().start("ns/chat", before, "7")).toEqual({ status: before });
  });

  it("the stored status as last written: the carried one, with when it was written", () => {
    const m = new StatusMemory();
    m.remember("ns/chat", after, carried, T0, ["7", "8"]);
    expect(m.start("ns/chat", after, "8")).toEqual({ status: carried, lastWrittenMs: T0 });
  });

  it("a watch cache one write behind (the version the write was sent over): the carried one, not the older status", () => {
    const m = new StatusMemory();
    m.remember("ns/chat", after, carried, T0, ["7", "8"]);
    expect(m.start("ns/chat", before, "7")).toEqual({ status: carried, lastWrittenMs: T0 });
    expect(m.size).toBe(1);
  });

  it("a spec change (new version, the same status): the carried one", () => {
    const m = new StatusMemory();
    m.remember("ns/chat", after, carried, T0, ["7", "8"]);
    expect(m.start("ns/chat", after, "9").status).toBe(carried);
  });

  it("a status someone else wrote (new version, another status): the stored one, and the memory is dropped", () => {
    const m = new StatusMemory();
    m.remember("ns/chat", after, carried, T0, ["7", "8"]);
    expect(m.start("ns/chat", before, "9")).toEqual({ status: before });
    expect(m.size).toBe(0);
  });

  it("without a version read, only the deep-equal rule holds", () => {
    const m = new StatusMemory();
    m.remember("ns/chat", after, carried, T0, ["7", "8"]);
    expect(m.start("ns/chat", before)).toEqual({ status: before });
  });
});
