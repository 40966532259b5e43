/**
 * planTick, table-driven: which policies a tick starts a poll cycle for, and why every other one
 * waits — its poll time, its backoff, a cycle, its leading signal, the queue or a pass holding it,
 * or the loop holding everything back.
 */
import { describe, expect, it } from "vitest";
import { type LoopRecord, planTick, type SkipReason } from "./loop-plan.js";

const NOW = Date.parse("2025-03-03T09:00:00Z");

const record = (over: Partial<LoopRecord> & Pick<LoopRecord, "phase">): LoopRecord => ({
  key: "ns/p",
  dueAt: NOW,
  repoll: false,
  ...over,
});

describe("planTick: one policy", () => {
  const cases: { name: string; r: LoopRecord; skip: SkipReason | undefined }[] = [
    { name: "waiting, due now", r: record({ phase: "waiting" }), skip: undefined },
    { name: "waiting, overdue", r: record({ phase: "waiting", dueAt: NOW - 60_000 }), skip: undefined },
    {
      name: "waiting, due 1 ms later",
      r: record({ phase: "waiting", dueAt: NOW + 1 }),
      skip: { reason: "notDue", dueAt: NOW + 1 },
    },
    {
      name: "backing off",
      r: record({ phase: "backingOff", dueAt: NOW + 5_000 }),
      skip: { reason: "backingOff", dueAt: NOW + 5_000 },
    },
    { name: "backoff over", r: record({ phase: "backingOff", dueAt: NOW }), skip: undefined },
    {
      name: "in a cycle, though due",
      r: record({ phase: "reading", dueAt: NOW - 1 }),
      skip: { reason: "reading" },
    },
    { name: "waiting for its leading signal", r: record({ phase: "leading" }), skip: { reason: "leading" } },
    { name: "passing", r: record({ phase: "passing", dueAt: NOW - 1 }), skip: { reason: "passing" } },
    {
      name: "queued with its reading",
      r: record({ phase: "queued", reading: { fetchedAt: NOW } }),
      skip: { reason: "queued" },
    },
    { name: "queued without a reading, due", r: record({ phase: "queued" }), skip: undefined },
    {
      name: "queued without a reading, not due",
      r: record({ phase: "queued", dueAt: NOW + 30_000 }),
      skip: { reason: "notDue", dueAt: NOW + 30_000 },
    },
  ];
  it.each(cases)("$name", ({ r, skip }) => {
    const plan = planTick([r], NOW);
    if (skip === undefined) {
      expect(plan).toEqual({ due: ["ns/p"], skipped: [] });
    } else {
      expect(plan).toEqual({ due: [], skipped: [{ key: "ns/p", skip }] });
    }
  });
});

describe("planTick: the loop's hold", () => {
  const records = [
    record({ key: "ns/a", phase: "waiting" }),
    record({ key: "ns/b", phase: "passing" }),
    record({ key: "ns/c", phase: "waiting", dueAt: NOW + 1 }),
  ];
  it.each(["notLeading", "gathering"] as const)("%s: nothing is due, every policy held by it", (hold) => {
    const plan = planTick(records, NOW, hold);
    expect(plan.due).toEqual([]);
    expect(plan.skipped).toEqual(records.map((r) => ({ key: r.key, skip: { reason: "held", by: hold } })));
  });
});

describe("planTick: many policies", () => {
  it("keeps the records' order and accounts for every record once", () => {
    const records = [
      record({ key: "ns/c", phase: "waiting" }),
      record({ key: "ns/a", phase: "reading" }),
      record({ key: "ns/b", phase: "backingOff", dueAt: NOW - 1 }),
      record({ key: "ns/d", phase: "waiting", dueAt: NOW + 10 }),
      record({ key: "ns/e", phase: "queued" }),
    ];
    const plan = planTick(records, NOW);
    expect(plan.due).toEqual(["ns/c", "ns/b", "ns/e"]);
    expect(plan.skipped).toEqual([
      { key: "ns/a", skip: { reason: "reading" } },
      { key: "ns/d", skip: { reason: "notDue", dueAt: NOW + 10 } },
    ]);
  });

  it("is pure: the records are not changed", () => {
    const records = [record({ phase: "waiting" }), record({ key: "ns/q", phase: "passing" })];
    const before = structuredClone(records);
    planTick(records, NOW);
    planTick(records, NOW, "gathering");
    expect(records).toEqual(before);
  });

  it("an empty loop plans nothing", () => {
    expect(planTick([], NOW)).toEqual({ due: [], skipped: [] });
  });
});
